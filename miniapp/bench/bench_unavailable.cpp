// `blockres bench` in a build without CUDA: a clear error instead of a benchmark.
#include "miniapp/bench/bench.hpp"

#include "linalg/executor.hpp"

#include <stdexcept>

namespace blockres {

int run_bsrmv_bench(const BsrmvBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error(missing_gpu_message(
      "bench bsrmv", "bench bsrmv needs the CUDA backend, and this blockres was built without CUDA",
      MissingGpu::no_cuda_build));
}

int run_batched_bench(const BatchedBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error(missing_gpu_message(
      "bench batched", "bench batched needs the CUDA backend, and this blockres was built without CUDA",
      MissingGpu::no_cuda_build));
}

int run_isai_bench(const IsaiBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error(missing_gpu_message(
      "bench isai", "bench isai needs the CUDA backend, and this blockres was built without CUDA",
      MissingGpu::no_cuda_build));
}

int run_solver_bench(const SolverBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error(missing_gpu_message(
      "bench solver", "bench solver needs the CUDA backend, and this blockres was built without CUDA",
      MissingGpu::no_cuda_build));
}

int run_model_bench(const ModelBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error(missing_gpu_message(
      "bench model", "bench model needs the CUDA backend, and this blockres was built without CUDA",
      MissingGpu::no_cuda_build));
}

}  // namespace blockres
