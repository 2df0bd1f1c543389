// BSRMV kernel instantiations for block sizes 25..32 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

namespace {
template <int... I>
std::integer_sequence<int, (25 + I)...> shift(std::integer_sequence<int, I...>);
}

void add_variants_25_32(std::vector<Variant>& out)
{
  add_block_sizes(out, decltype(shift(std::make_integer_sequence<int, 32 - 25 + 1>{})){});
}

}  // namespace blockres::kernels::cuda_bsrmv
