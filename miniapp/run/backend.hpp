// Backend choice of the command line (`--backend auto|cpu|cuda`), shared by run and verify.
#pragma once

#include "linalg/executor.hpp"

#include <functional>
#include <stdexcept>
#include <string>

namespace blockres {

// The requested backend cannot be had (no device, or a build without CUDA).
struct BackendError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "cpu", "cuda" or "auto" (CUDA when a device is present, else CPU); logs one line saying which
// and why. Throws BackendError.
ExecPtr choose_backend(const std::string& choice, const std::function<void(const std::string&)>& log);

}  // namespace blockres
