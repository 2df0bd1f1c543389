// `blockres bench` in a build without CUDA: a clear error instead of a benchmark.
#include "miniapp/bench.hpp"

#include <stdexcept>

namespace blockres {

int run_bsrmv_bench(const BsrmvBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error("bench bsrmv needs the CUDA backend, and this blockres was built without CUDA");
}

int run_batched_bench(const BatchedBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error("bench batched needs the CUDA backend, and this blockres was built without CUDA");
}

int run_isai_bench(const IsaiBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error("bench isai needs the CUDA backend, and this blockres was built without CUDA");
}

int run_solver_bench(const SolverBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error("bench solver needs the CUDA backend, and this blockres was built without CUDA");
}

int run_model_bench(const ModelBenchOptions&, const std::function<void(const std::string&)>&)
{
  throw std::runtime_error("bench model needs the CUDA backend, and this blockres was built without CUDA");
}

}  // namespace blockres
