// BSRMV kernel instantiations for block sizes 57..64 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

namespace {
template <int... I>
std::integer_sequence<int, (57 + I)...> shift(std::integer_sequence<int, I...>);
}

void add_variants_57_64(std::vector<Variant>& out)
{
  add_block_sizes(out, decltype(shift(std::make_integer_sequence<int, 64 - 57 + 1>{})){});
}

}  // namespace blockres::kernels::cuda_bsrmv
