// BSRMV kernel instantiations for block sizes 9..16 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

void add_variants_9_16(std::vector<Variant>& out) { add_block_range<9, 16>(out); }

}  // namespace blockres::kernels::cuda_bsrmv
