// BSRMV kernel instantiations for block sizes 17..24 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

void add_variants_17_24(std::vector<Variant>& out) { add_block_range<17, 24>(out); }

}  // namespace blockres::kernels::cuda_bsrmv
