// Backend choice of the command line: cpu, cuda or auto, with the log line that says which.
#include "miniapp/run/backend.hpp"

#include <fmt/format.h>

namespace blockres {

std::string no_gpu_reason(std::string_view why)
{
  // Executor::cuda_device_count's text starts with the CUDA error's name (linalg/executor.cpp).
  if (why.starts_with("cudaErrorInsufficientDriver")) return "driver missing";
  if (why.starts_with("cudaErrorNoDevice") || why.starts_with("cudaGetDeviceCount reports 0"))
    return "no CUDA device found";
  if (why == "built without CUDA") return "this blockres was built without CUDA";
  return std::string(why.substr(0, why.find(':')));
}

ExecPtr choose_backend(const std::string& choice, const std::function<void(const std::string&)>& log, bool verbose)
{
  if (choice == "cpu") {
    auto e = Executor::create_cpu();
    log(fmt::format("backend: cpu ({})", e->device_name()));
    return e;
  }
  if (choice == "cuda") {
    if (!Executor::built_with_cuda())
      throw BackendError(missing_gpu_message("--backend cuda", "--backend cuda: this blockres was built without CUDA",
                                             MissingGpu::no_cuda_build));
    if (std::string why; Executor::cuda_device_count(&why) == 0)
      throw BackendError(missing_gpu_message(
          "--backend cuda", fmt::format("--backend cuda: no CUDA device is available ({})", why), MissingGpu::no_device));
    auto e = Executor::create_cuda(0);
    log(fmt::format("backend: cuda ({})", e->device_name()));
    return e;
  }
  if (choice != "auto") throw BackendError(fmt::format("--backend {}: expected auto, cpu or cuda", choice));
  std::string why;
  const int n = Executor::cuda_device_count(&why);
  if (n > 0) {
    auto e = Executor::create_cuda(0);
    log(fmt::format("backend: cuda (auto: {} CUDA device(s) found, using device 0: {})", n, e->device_name()));
    return e;
  }
  // Not an error: auto asked for the CPU when there is no GPU. CUDA's own words only for -v.
  auto e = Executor::create_cpu();
  log(fmt::format("backend: cpu (auto: no usable GPU ({}): running on the CPU; {})", no_gpu_reason(why),
                  e->device_name()));
  if (verbose && Executor::built_with_cuda()) log(fmt::format("backend: CUDA reports {}", why));
  return e;
}

}  // namespace blockres
