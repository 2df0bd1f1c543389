// BSRMV kernel instantiations for block sizes 1..8 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

void add_variants_1_8(std::vector<Variant>& out) { add_block_range<1, 8>(out); }

}  // namespace blockres::kernels::cuda_bsrmv
