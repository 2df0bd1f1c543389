// Executor implementation: host memory for the CPU backend, CUDA runtime calls for the device.
#include "linalg/executor.hpp"

#include "linalg/allocation.hpp"

#include <atomic>
#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <omp.h>

#if BLOCKRES_HAVE_CUDA
#include "kernels/cuda_check.hpp"

#include <cublas_v2.h>
#endif

namespace blockres {

// ---- allocation labels, limit and messages (linalg/allocation.hpp) ------------------------------

namespace {
constexpr int max_labels = 32;
thread_local const char* t_labels[max_labels];
thread_local int t_depth = 0;
std::atomic<std::size_t> g_limit{0};
thread_local FailedAllocation t_failed;
}  // namespace

AllocationLabel::AllocationLabel(const char* what) noexcept
{
  if (t_depth < max_labels) t_labels[t_depth] = what;
  ++t_depth;
}
AllocationLabel::~AllocationLabel() { --t_depth; }
const char* allocation_label() noexcept
{
  return t_depth <= 0 ? nullptr : t_labels[std::min(t_depth, max_labels) - 1];
}

std::size_t allocation_limit() noexcept { return g_limit.load(std::memory_order_relaxed); }
void set_allocation_limit(std::size_t bytes) noexcept { g_limit.store(bytes, std::memory_order_relaxed); }
void set_allocation_limit_from_environment()
{
  const char* v = std::getenv("BLOCKRES_FAIL_ALLOC_ABOVE");
  if (!v || !*v) return;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != '\0' || errno != 0 || n == 0 || v[0] == '-')
    throw std::invalid_argument(
        fmt::format("BLOCKRES_FAIL_ALLOC_ABOVE='{}': expected a positive number of bytes", v));
  set_allocation_limit(static_cast<std::size_t>(n));
}
FailedAllocation& last_failed_host_allocation() noexcept { return t_failed; }

std::string describe_allocation(const char* label, std::size_t bytes)
{
  return fmt::format("allocating {}{:.3f} GB ({} bytes)", label ? fmt::format("{}: ", label) : std::string(),
                     double(bytes) / 1e9, bytes);
}

std::string_view to_string(Backend b) { return b == Backend::cuda ? "cuda" : "cpu"; }

bool Executor::built_with_cuda()
{
#if BLOCKRES_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int usable_cuda_devices(int status, int count, std::string_view error_name, std::string_view error_text,
                        std::string* why_none)
{
  if (status == cuda_status::success) {
    if (count <= 0 && why_none) *why_none = "cudaGetDeviceCount reports 0 devices";
    return count > 0 ? count : 0;
  }
  if (status == cuda_status::no_device || status == cuda_status::insufficient_driver) {
    if (why_none) *why_none = fmt::format("{}: {}", error_name, error_text);
    return 0;
  }
  throw std::runtime_error(fmt::format("cudaGetDeviceCount failed: {} ({}, code {})", error_text, error_name, status));
}

bool gpu_required_by(const char* value) { return value && *value && std::string_view(value) != "0"; }

bool gpu_required() { return gpu_required_by(std::getenv("BLOCKRES_REQUIRE_GPU")); }

std::string missing_gpu_message(std::string_view what, std::string_view usual, MissingGpu why, bool required)
{
  if (!required) return std::string(usual);
  return fmt::format("{}: BLOCKRES_REQUIRE_GPU is set, and {}", what,
                     why == MissingGpu::no_cuda_build ? "this blockres has no CUDA backend" : "no GPU is usable");
}

std::string missing_gpu_message(std::string_view what, std::string_view usual, MissingGpu why)
{
  return missing_gpu_message(what, usual, why, gpu_required());
}

int Executor::cuda_device_count([[maybe_unused]] std::string* why_none)
{
#if BLOCKRES_HAVE_CUDA
  static_assert(cuda_status::success == cudaSuccess && cuda_status::no_device == cudaErrorNoDevice &&
                cuda_status::insufficient_driver == cudaErrorInsufficientDriver);
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) (void)cudaGetLastError();  // clear the sticky error for later calls
  return usable_cuda_devices(err, n, cudaGetErrorName(err), cudaGetErrorString(err), why_none);
#else
  if (why_none) *why_none = "built without CUDA";
  return 0;
#endif
}

std::shared_ptr<const Executor> Executor::create_cpu()
{
  auto e = std::shared_ptr<Executor>(new Executor(Backend::cpu));
  e->device_name_ = fmt::format("cpu ({} OpenMP threads)", omp_get_max_threads());
  const AllocationLabel label("the executor's reduction workspace");
  e->workspace_ = static_cast<double*>(e->allocate(reduction_workspace_doubles * sizeof(double)));
  return e;
}

CudaDeviceIdentity Executor::cuda_device_identity([[maybe_unused]] int device)
{
#if BLOCKRES_HAVE_CUDA
  std::string why;
  const int n = cuda_device_count(&why);
  if (device < 0 || device >= n)
    throw std::runtime_error(n == 0 ? missing_gpu_message("CUDA device query",
                                                          fmt::format("no CUDA device is available ({})", why),
                                                          MissingGpu::no_device)
                                    : fmt::format("CUDA device {} does not exist ({} found)", device, n));
  cudaDeviceProp prop{};
  BLOCKRES_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  CudaDeviceIdentity id;
  id.name = prop.name;
  id.multiprocessors = prop.multiProcessorCount;
  id.cc_major = prop.major;
  id.cc_minor = prop.minor;
  BLOCKRES_CUDA_CHECK(cudaDriverGetVersion(&id.driver_version));
  return id;
#else
  throw std::runtime_error(missing_gpu_message("CUDA device query",
                                               "this blockres was built without CUDA (backend 'cuda' is not available)",
                                               MissingGpu::no_cuda_build));
#endif
}

void Executor::record_bsrmv_plan(int bs, const kernels::BsrmvConfig& config) const
{
  const std::lock_guard lock(plans_mutex_);
  const auto [first, last] = bsrmv_plans_.equal_range(bs);
  if (std::none_of(first, last, [&](const auto& plan) { return plan.second == config; }))
    bsrmv_plans_.emplace(bs, config);  // after the block size's earlier ones: the order they were planned
}

std::multimap<int, kernels::BsrmvConfig> Executor::bsrmv_plans() const
{
  const std::lock_guard lock(plans_mutex_);
  return bsrmv_plans_;
}

std::shared_ptr<const Executor> Executor::create_cuda([[maybe_unused]] int device,
                                                      [[maybe_unused]] KernelTuning tuning)
{
#if BLOCKRES_HAVE_CUDA
  std::string why;
  const int n = cuda_device_count(&why);
  if (device < 0 || device >= n)
    throw std::runtime_error(n == 0 ? missing_gpu_message("CUDA executor", fmt::format("no CUDA device is available ({})", why),
                                                          MissingGpu::no_device)
                                    : fmt::format("CUDA device {} does not exist ({} found)", device, n));
  auto e = std::shared_ptr<Executor>(new Executor(Backend::cuda));
  e->device_ = device;
  e->tuning_ = std::move(tuning);
  auto t0 = std::chrono::steady_clock::now();
  auto part = [&](const char* what) {
    const auto now = std::chrono::steady_clock::now();
    e->creation_parts_.emplace_back(what, std::chrono::duration<double>(now - t0).count());
    t0 = now;
  };
  BLOCKRES_CUDA_CHECK(cudaSetDevice(device));
  BLOCKRES_CUDA_CHECK(cudaFree(nullptr));  // the context, now (not inside whatever CUDA call comes first)
  part("CUDA context");
  cudaDeviceProp prop{};
  BLOCKRES_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  e->device_name_ = prop.name;
  // cudaDeviceProp has no memory clock since CUDA 13: the attributes. A device that does not report
  // one gets 0, the rule's choices for an unknown bandwidth.
  auto attribute = [device](cudaDeviceAttr a) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return v;
  };
  e->dram_gbps_per_sm_ = kernels::dram_gbps_per_sm(attribute(cudaDevAttrMemoryClockRate),
                                                   attribute(cudaDevAttrGlobalMemoryBusWidth),
                                                   attribute(cudaDevAttrMultiProcessorCount));
  part("device query");
  cudaStream_t s = nullptr;
  BLOCKRES_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  e->stream_ = s;
  cublasHandle_t h = nullptr;
  if (const cublasStatus_t st = cublasCreate(&h); st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("cublasCreate failed: {}", cublasGetStatusString(st)));
  e->blas_ = h;
  if (const cublasStatus_t st = cublasSetStream(h, s); st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("cublasSetStream failed: {}", cublasGetStatusString(st)));
  part("stream and cuBLAS handle");
  const AllocationLabel label("the executor's reduction workspace");
  e->workspace_ = static_cast<double*>(e->allocate(reduction_workspace_doubles * sizeof(double)));
  const AllocationLabel ticket_label("the executor's reduction tickets");
  e->tickets_ = static_cast<unsigned*>(e->allocate(reduction_ticket_count * sizeof(unsigned)));
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(e->tickets_, 0, reduction_ticket_count * sizeof(unsigned), s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  part("workspaces");
  return e;
#else
  throw std::runtime_error(missing_gpu_message("CUDA executor",
                                               "this blockres was built without CUDA (backend 'cuda' is not available)",
                                               MissingGpu::no_cuda_build));
#endif
}

Executor::~Executor()
{
  deallocate(workspace_);
  deallocate(tickets_);
#if BLOCKRES_HAVE_CUDA
  if (blas_) cublasDestroy(blas_);
  if (stream_) cudaStreamDestroy(stream_);
#endif
}

void* Executor::allocate(std::size_t bytes) const
{
  if (bytes == 0) return nullptr;
  const std::size_t limit = allocation_limit();
  const bool forced = limit > 0 && bytes > limit;  // the test hook: fail as if memory were exhausted
  const std::string hook = forced ? fmt::format(" [forced: BLOCKRES_FAIL_ALLOC_ABOVE = {}]", limit) : std::string();
#if BLOCKRES_HAVE_CUDA
  if (backend_ == Backend::cuda) {
    void* p = nullptr;
    const cudaError_t err = forced ? cudaErrorMemoryAllocation : cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      std::size_t free = 0, total = 0;
      const bool known = cudaMemGetInfo(&free, &total) == cudaSuccess;
      throw OutOfMemory(fmt::format("device memory: {} failed: {}{}{}", describe_allocation(allocation_label(), bytes),
                                    cudaGetErrorString(err),
                                    known ? fmt::format(" ({:.3f} GB = {} bytes free of {:.3f} GB)", free / 1e9, free,
                                                        total / 1e9)
                                          : std::string(" (free device memory unknown)"),
                                    hook));
    }
    const char* label = allocation_label();
    std::size_t free = 0, total = 0;
    const bool known = cudaMemGetInfo(&free, &total) == cudaSuccess;
    std::lock_guard<std::mutex> lock(live_mutex_);
    live_[p] = {label, bytes};
    by_label_[label ? label : ""] += bytes;
    if (known && total - free > peak_in_use_.load(std::memory_order_relaxed)) {
      peak_in_use_.store(total - free, std::memory_order_relaxed);
      by_label_at_peak_ = by_label_;
    }
    return p;
  }
#endif
  void* p = forced ? nullptr : std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p)
    throw OutOfMemory(fmt::format("host memory: {} failed{}", describe_allocation(allocation_label(), bytes), hook));
  return p;
}

std::vector<std::pair<std::string, double>> Executor::device_memory_at_peak() const
{
  std::vector<std::pair<std::string, double>> v;
  {
    std::lock_guard<std::mutex> lock(live_mutex_);
    for (const auto& [label, bytes] : by_label_at_peak_)
      if (bytes > 0) v.emplace_back(label, double(bytes));
  }
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

void Executor::reset_device_memory_peak() const
{
  const double now = device_memory_in_use_bytes();
  std::lock_guard<std::mutex> lock(live_mutex_);
  peak_in_use_.store(std::size_t(now), std::memory_order_relaxed);
  by_label_at_peak_ = by_label_;
}

double Executor::device_memory_in_use_bytes() const
{
#if BLOCKRES_HAVE_CUDA
  if (backend_ == Backend::cuda) {
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) return double(total - free);
  }
#endif
  return 0.0;
}

void Executor::deallocate(void* ptr) const noexcept
{
  if (!ptr) return;
#if BLOCKRES_HAVE_CUDA
  if (backend_ == Backend::cuda) {
    cudaFree(ptr);
    std::lock_guard<std::mutex> lock(live_mutex_);
    if (const auto it = live_.find(ptr); it != live_.end()) {
      if (const auto b = by_label_.find(it->second.first ? it->second.first : ""); b != by_label_.end())
        b->second -= it->second.second;
      live_.erase(it);
    }
    return;
  }
#endif
  std::free(ptr);
}

void Executor::copy_to_host(void* host_dst, const void* src, std::size_t bytes) const
{
  if (bytes == 0) return;
#if BLOCKRES_HAVE_CUDA
  if (backend_ == Backend::cuda) {
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
#endif
  std::memcpy(host_dst, src, bytes);
}

void Executor::copy_from_host(void* dst, const void* host_src, std::size_t bytes) const
{
  if (bytes == 0) return;
#if BLOCKRES_HAVE_CUDA
  if (backend_ == Backend::cuda) {
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_));
    BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host buffer may be temporary
    return;
  }
#endif
  std::memcpy(dst, host_src, bytes);
}

void Executor::copy(void* dst, const void* src, std::size_t bytes) const
{
  if (bytes == 0) return;
#if BLOCKRES_HAVE_CUDA
  if (backend_ == Backend::cuda) {
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
    return;
  }
#endif
  std::memcpy(dst, src, bytes);
}

void Executor::synchronize() const
{
#if BLOCKRES_HAVE_CUDA
  if (backend_ == Backend::cuda) BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(stream_));
#endif
}

}  // namespace blockres
