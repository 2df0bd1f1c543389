// Error checking for CUDA runtime calls and kernel launches (throws with call, file, line).
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace blockres::cuda_detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line)
{
  throw std::runtime_error(std::string("CUDA error '") + cudaGetErrorString(err) + "' in " + call +
                           " at " + file + ":" + std::to_string(line));
}

}  // namespace blockres::cuda_detail

#define BLOCKRES_CUDA_CHECK(call)                                                      \
  do {                                                                                 \
    cudaError_t blockres_err_ = (call);                                                \
    if (blockres_err_ != cudaSuccess)                                                  \
      ::blockres::cuda_detail::throw_cuda_error(blockres_err_, #call, __FILE__, __LINE__); \
  } while (0)

// Checks the launch itself (bad configuration); execution errors surface at the next sync.
#define BLOCKRES_CUDA_CHECK_LAUNCH() BLOCKRES_CUDA_CHECK(cudaGetLastError())
