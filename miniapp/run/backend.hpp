// Backend choice of the command line (`--backend auto|cpu|cuda`), shared by run and verify.
#pragma once

#include "linalg/executor.hpp"

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace blockres {

// The requested backend cannot be had (no device, or a build without CUDA).
struct BackendError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "cpu", "cuda" or "auto" (CUDA when a device is present, else CPU); logs one line saying which
// and why ("no usable GPU (driver missing): running on the CPU"), and with `verbose` CUDA's error
// text on a second line. Throws BackendError.
ExecPtr choose_backend(const std::string& choice, const std::function<void(const std::string&)>& log,
                       bool verbose = false);

// Why auto found no GPU, in a user's words, from Executor::cuda_device_count's text: "driver missing"
// (cudaErrorInsufficientDriver), "no CUDA device found", "this blockres was built without CUDA", or
// else the CUDA error's name.
std::string no_gpu_reason(std::string_view why);

}  // namespace blockres
