// `blockres tune` in a build without CUDA: there is nothing to tune, and it says so (exit code 1).
#include "miniapp/tune/tune.hpp"

#include "linalg/executor.hpp"

#include <stdexcept>

namespace blockres {

int run_tune(const TuneOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error(missing_gpu_message(
      "tune", "blockres tune measures the CUDA kernels, and this blockres was built without CUDA (the CPU backend "
              "has nothing to tune)",
      MissingGpu::no_cuda_build));
}

}  // namespace blockres
