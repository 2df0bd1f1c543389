// BSRMV kernel instantiations for block sizes 17..24 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

namespace {
template <int... I>
std::integer_sequence<int, (17 + I)...> shift(std::integer_sequence<int, I...>);
}

void add_variants_17_24(std::vector<Variant>& out)
{
  add_block_sizes(out, decltype(shift(std::make_integer_sequence<int, 24 - 17 + 1>{})){});
}

}  // namespace blockres::kernels::cuda_bsrmv
