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
// text on a second line. On CUDA the executor holds the device's tuning (create_tuned_cuda, with
// `tuning_cache` as --tuning-cache gives it) and its line follows. Throws BackendError.
ExecPtr choose_backend(const std::string& choice, const std::function<void(const std::string&)>& log,
                       bool verbose = false, const std::string& tuning_cache = "");

// A CUDA executor on `device` holding the kernel tuning that `tuning_cache` names ("" = the default
// cache of this device and binary, "none" = the built-in rule, else a file): reads the cache once and
// logs one line saying which tuning the kernels take, or why the built-in rule (a missing, stale or
// corrupt cache is never an error); with `verbose` also each cached block size. `log_backend`, when
// given, is called with the executor before that line (choose_backend's "backend: cuda ..." line).
ExecPtr create_tuned_cuda(int device, const std::string& tuning_cache,
                          const std::function<void(const std::string&)>& log, bool verbose = false,
                          const std::function<void(const ExecPtr&)>& log_backend = {});

// Why auto found no GPU, in a user's words, from Executor::cuda_device_count's text: "driver missing"
// (cudaErrorInsufficientDriver), "no CUDA device found", "this blockres was built without CUDA", or
// else the CUDA error's name.
std::string no_gpu_reason(std::string_view why);

}  // namespace blockres
