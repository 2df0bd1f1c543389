// Executor: the backend (CPU or one CUDA device) that owns memory, a stream and scratch space.
#pragma once

#include "kernels/common.hpp"
#include "linalg/kernel_tuning.hpp"

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

namespace blockres {

enum class Backend { cpu, cuda };

std::string_view to_string(Backend b);

// What a tuning measured on a CUDA device is valid for (with the blockres version and the compiled
// configuration space, the key of the tuning cache: miniapp/io/tuning_cache.hpp).
struct CudaDeviceIdentity {
  std::string name;                // cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  int multiprocessors = 0;         // SM count
  int cc_major = 0, cc_minor = 0;  // compute capability
  int driver_version = 0;          // cudaDriverGetVersion, e.g. 12040
};

class Executor {
 public:
  // The CPU executor (OpenMP threads).
  static std::shared_ptr<const Executor> create_cpu();
  // A CUDA executor on `device`; throws when blockres was built without CUDA or the
  // device does not exist. `tuning`: the kernel configurations measured on this device (a tuning
  // cache; default: none, every kernel takes its built-in rule). It is fixed for the executor's life.
  static std::shared_ptr<const Executor> create_cuda(int device = 0, KernelTuning tuning = {});
  // Name, SM count, compute capability and driver version of `device`, without creating an executor
  // (the tuning cache is chosen by it before the executor exists). Throws like create_cuda.
  static CudaDeviceIdentity cuda_device_identity(int device = 0);
  // Number of usable CUDA devices: 0 when built without CUDA, when there is no device, or no
  // driver that can run this build (see usable_cuda_devices); throws std::runtime_error when the
  // device query fails otherwise. `why_none`, when given, receives why the count is 0.
  static int cuda_device_count(std::string* why_none = nullptr);
  static bool built_with_cuda();

  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  Backend backend() const { return backend_; }
  bool is_cuda() const { return backend_ == Backend::cuda; }
  // Where create_cuda's time went, in order (seconds): the runtime and context, the device query,
  // the stream and cuBLAS handle, the workspaces. Empty on the CPU.
  const std::vector<std::pair<std::string, double>>& creation_parts() const { return creation_parts_; }
  // "cpu (N OpenMP threads)" or the CUDA device's name.
  const std::string& device_name() const { return device_name_; }
  stream_t stream() const { return stream_; }
  // CUDA: the cuBLAS handle bound to stream() (host pointer mode); nullptr on the CPU.
  blas_handle_t blas_handle() const { return blas_; }

  // The kernel configurations this executor's matrices plan with (CPU: empty, unused).
  const KernelTuning& tuning() const { return tuning_; }
  // The device's theoretical DRAM bandwidth per SM in GB/s (kernels::dram_gbps_per_sm of its memory
  // clock, bus width and SM count): the key of the built-in BSRMV rule. 0 on the CPU, or when the
  // device does not report them.
  double dram_gbps_per_sm() const { return dram_gbps_per_sm_; }
  // What BsrMatrix planned from the tuning (not from an explicit SpmvOptions::config), block size ->
  // configuration, so a run can record which configurations it used (describe_bsrmv_plans). A block
  // size is listed once per distinct configuration: the built-in rule can plan matrices of one block
  // size differently by their row lengths (a bench's 7- and 27-point stencils on an H200).
  void record_bsrmv_plan(int bs, const kernels::BsrmvConfig& config) const;
  std::multimap<int, kernels::BsrmvConfig> bsrmv_plans() const;

  void* allocate(std::size_t bytes) const;
  void deallocate(void* ptr) const noexcept;
  // CUDA: device memory in use now (total - free: this process's, its libraries' and any other process's on the
  // device), and the most of it seen right after any of this executor's allocations (the run log's memory per
  // cell; a library's own workspace shows at the next allocation). 0 on the CPU.
  double device_memory_in_use_bytes() const;
  double device_memory_peak_bytes() const { return double(peak_in_use_.load(std::memory_order_relaxed)); }
  // The executor's own device allocations live when device_memory_peak_bytes() was seen, by the innermost
  // AllocationLabel they were made under ("" without one), largest first. What the peak holds beyond their sum is
  // the CUDA context and the libraries' own buffers (cuBLAS, cuSPARSE, NCCL). Empty on the CPU.
  std::vector<std::pair<std::string, double>> device_memory_at_peak() const;
  // The peak from now on: what is in use now, the live allocations now.
  void reset_device_memory_peak() const;
  // Copies between this executor's memory and host memory, and within this executor's memory.
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) const;
  void copy_from_host(void* dst, const void* host_src, std::size_t bytes) const;
  void copy(void* dst, const void* src, std::size_t bytes) const;
  void synchronize() const;

  // Scratch for reductions (CUDA: device memory of reduction_workspace_doubles doubles).
  double* reduction_workspace() const { return workspace_; }
  static constexpr std::size_t reduction_workspace_doubles = 34 * 1024;
  // The ticket counter of reductions that finish in their last block (kernels::cuda::cgs2; CUDA:
  // device memory, 0 at creation; a kernel that takes tickets puts it back to 0).
  unsigned* reduction_tickets() const { return tickets_; }
  static constexpr std::size_t reduction_ticket_count = 1;

 private:
  explicit Executor(Backend b) : backend_(b) {}
  Backend backend_;
  int device_ = -1;
  std::string device_name_;
  stream_t stream_ = nullptr;
  blas_handle_t blas_ = nullptr;
  double* workspace_ = nullptr;
  unsigned* tickets_ = nullptr;
  std::vector<std::pair<std::string, double>> creation_parts_;
  double dram_gbps_per_sm_ = 0;
  KernelTuning tuning_;
  // A record of what was done on the executor, not its state: kept behind the const interface.
  mutable std::mutex plans_mutex_;
  mutable std::multimap<int, kernels::BsrmvConfig> bsrmv_plans_;
  mutable std::atomic<std::size_t> peak_in_use_{0};
  // CUDA: every live allocation (its label, bytes), the bytes by label now and at the peak.
  mutable std::mutex live_mutex_;
  mutable std::map<const void*, std::pair<const char*, std::size_t>> live_;
  mutable std::map<std::string, std::size_t> by_label_, by_label_at_peak_;
};

using ExecPtr = std::shared_ptr<const Executor>;

// ---- Is there a usable CUDA device? ---------------------------------------------------------------
// The codes of cudaGetDeviceCount's result that usable_cuda_devices() knows (the CUDA build checks
// that they are CUDA's values; the CPU build and its tests need no CUDA header).
namespace cuda_status {
inline constexpr int success = 0;                // cudaSuccess
inline constexpr int insufficient_driver = 35;   // cudaErrorInsufficientDriver
inline constexpr int no_device = 100;            // cudaErrorNoDevice
}  // namespace cuda_status

// cudaGetDeviceCount's result as a number of usable devices: `count` on success; 0 for "no device"
// and for "insufficient driver", which is what the runtime reports on a machine without the NVIDIA
// driver (so `--backend auto` runs on the CPU there, and says why through `why_none`); any other
// status (a broken driver or installation, devices busy in exclusive mode, ...) is an error: throws
// std::runtime_error naming the call, the error's name and its text.
int usable_cuda_devices(int status, int count, std::string_view error_name, std::string_view error_text,
                        std::string* why_none = nullptr);

// BLOCKRES_REQUIRE_GPU in the environment, set (to anything but "" or "0") on machines that have a
// GPU: a GPU test or run that finds no usable device then fails instead of being reported skipped.
// gpu_required_by is the rule on the variable's value (nullptr: unset).
bool gpu_required_by(const char* value);
bool gpu_required();

// The one-line error of `what` ("--backend cuda", "bench bsrmv") when it needs a CUDA device and has
// none. Normally `usual`, a text CTest's GPU tests take as "skipped" (their SKIP_REGULAR_EXPRESSION);
// when the GPU is required (gpu_required()), a text that says so and that none of those patterns
// matches ("... BLOCKRES_REQUIRE_GPU is set, and ..."), so the test fails.
enum class MissingGpu { no_cuda_build, no_device };
std::string missing_gpu_message(std::string_view what, std::string_view usual, MissingGpu why, bool required);
std::string missing_gpu_message(std::string_view what, std::string_view usual, MissingGpu why);

}  // namespace blockres
