// Executor: the backend (CPU or one CUDA device) that owns memory, a stream and scratch space.
#pragma once

#include "kernels/common.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace blockres {

enum class Backend { cpu, cuda };

std::string_view to_string(Backend b);

class Executor {
 public:
  // The CPU executor (OpenMP threads).
  static std::shared_ptr<const Executor> create_cpu();
  // A CUDA executor on `device`; throws when blockres was built without CUDA or the
  // device does not exist.
  static std::shared_ptr<const Executor> create_cuda(int device = 0);
  // Number of usable CUDA devices (0 when built without CUDA or when no driver/device).
  static int cuda_device_count();
  static bool built_with_cuda();

  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  Backend backend() const { return backend_; }
  bool is_cuda() const { return backend_ == Backend::cuda; }
  // "cpu (N OpenMP threads)" or the CUDA device's name.
  const std::string& device_name() const { return device_name_; }
  stream_t stream() const { return stream_; }
  // CUDA: the cuBLAS handle bound to stream() (host pointer mode); nullptr on the CPU.
  blas_handle_t blas_handle() const { return blas_; }

  void* allocate(std::size_t bytes) const;
  void deallocate(void* ptr) const noexcept;
  // Copies between this executor's memory and host memory, and within this executor's memory.
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) const;
  void copy_from_host(void* dst, const void* host_src, std::size_t bytes) const;
  void copy(void* dst, const void* src, std::size_t bytes) const;
  void synchronize() const;

  // Scratch for reductions (CUDA: device memory of reduction_workspace_doubles doubles).
  double* reduction_workspace() const { return workspace_; }
  static constexpr std::size_t reduction_workspace_doubles = 32 * 1024 + 64;

 private:
  explicit Executor(Backend b) : backend_(b) {}
  Backend backend_;
  int device_ = -1;
  std::string device_name_;
  stream_t stream_ = nullptr;
  blas_handle_t blas_ = nullptr;
  double* workspace_ = nullptr;
};

using ExecPtr = std::shared_ptr<const Executor>;

}  // namespace blockres
