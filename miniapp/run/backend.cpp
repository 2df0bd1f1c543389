// Backend choice of the command line: cpu, cuda or auto, with the log line that says which; a CUDA
// executor with the device's tuning cache.
#include "miniapp/run/backend.hpp"

#include "linalg/distributed/communicator.hpp"
#include "miniapp/io/tuning_cache.hpp"

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

ExecPtr create_tuned_cuda(int device, const std::string& tuning_cache,
                          const std::function<void(const std::string&)>& log, bool verbose,
                          const std::function<void(const ExecPtr&)>& log_backend)
{
  const BsrmvSpace space = compiled_bsrmv_space();
  TuningLoad load = load_tuning_cache(tuning_cache, make_tuning_key(Executor::cuda_device_identity(device), space), space);
  auto e = Executor::create_cuda(device, std::move(load.tuning));
  if (log_backend) log_backend(e);
  log(with_rule_key(load.message, e->dram_gbps_per_sm()));
  if (verbose)
    for (const auto& line : load.details) log(line);
  return e;
}

namespace {
// One GPU per rank (issue 33): a rank started by an MPI launcher takes device (its rank on the node) modulo the
// node's devices; a process of its own, device 0.
int rank_device(int devices)
{
  const int local = dist::launcher_ranks() > 1 ? dist::local_rank() : -1;
  return local > 0 && devices > 0 ? local % devices : 0;
}
}  // namespace

ExecPtr choose_backend(const std::string& choice, const std::function<void(const std::string&)>& log, bool verbose,
                       const std::string& tuning_cache)
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
    const int device = rank_device(Executor::cuda_device_count());
    return create_tuned_cuda(device, tuning_cache, log, verbose, [&](const ExecPtr& e) {
      log(fmt::format("backend: cuda (device {}: {})", device, e->device_name()));
    });
  }
  if (choice != "auto") throw BackendError(fmt::format("--backend {}: expected auto, cpu or cuda", choice));
  std::string why;
  const int n = Executor::cuda_device_count(&why);
  if (n > 0) {
    const int device = rank_device(n);
    return create_tuned_cuda(device, tuning_cache, log, verbose, [&](const ExecPtr& e) {
      log(fmt::format("backend: cuda (auto: {} CUDA device(s) found, using device {}: {})", n, device,
                      e->device_name()));
    });
  }
  // Not an error: auto asked for the CPU when there is no GPU. CUDA's own words only for -v.
  auto e = Executor::create_cpu();
  log(fmt::format("backend: cpu (auto: no usable GPU ({}): running on the CPU; {})", no_gpu_reason(why),
                  e->device_name()));
  if (verbose && Executor::built_with_cuda()) log(fmt::format("backend: CUDA reports {}", why));
  return e;
}

}  // namespace blockres
