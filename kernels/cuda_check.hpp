// Error checks for CUDA runtime calls and kernel launches, cuSPARSE and cuBLAS calls, from .cpp and .cu
// files alike: each throws std::runtime_error naming the library's error, the call, the file and the line.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace blockres::cuda_detail {

// "<library> error '<what>' in <call> at <file>:<line>"
[[noreturn]] inline void throw_call_error(const char* library, const char* what, const char* call, const char* file,
                                          int line)
{
  throw std::runtime_error(std::string(library) + " error '" + what + "' in " + call + " at " + file + ":" +
                           std::to_string(line));
}

}  // namespace blockres::cuda_detail

#define BLOCKRES_CUDA_CHECK(call)                                                                           \
  do {                                                                                                      \
    const cudaError_t blockres_err_ = (call);                                                               \
    if (blockres_err_ != cudaSuccess)                                                                       \
      ::blockres::cuda_detail::throw_call_error("CUDA", cudaGetErrorString(blockres_err_), #call, __FILE__, \
                                                __LINE__);                                                  \
  } while (0)

// Checks the launch itself (bad configuration); execution errors surface at the next sync.
#define BLOCKRES_CUDA_CHECK_LAUNCH() BLOCKRES_CUDA_CHECK(cudaGetLastError())

// The library checks need the library's header (<cusparse.h>, <cublas_v2.h>) where they are used: this
// header does not pull them in, as most kernels use neither.
#define BLOCKRES_CUSPARSE_CHECK(call)                                                                          \
  do {                                                                                                         \
    const cusparseStatus_t blockres_status_ = (call);                                                          \
    if (blockres_status_ != CUSPARSE_STATUS_SUCCESS)                                                           \
      ::blockres::cuda_detail::throw_call_error("cuSPARSE", cusparseGetErrorString(blockres_status_), #call,   \
                                                __FILE__, __LINE__);                                           \
  } while (0)

#define BLOCKRES_CUBLAS_CHECK(call)                                                                            \
  do {                                                                                                         \
    const cublasStatus_t blockres_status_ = (call);                                                            \
    if (blockres_status_ != CUBLAS_STATUS_SUCCESS)                                                             \
      ::blockres::cuda_detail::throw_call_error("cuBLAS", cublasGetStatusString(blockres_status_), #call,      \
                                                __FILE__, __LINE__);                                           \
  } while (0)
