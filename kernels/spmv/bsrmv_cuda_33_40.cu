// BSRMV kernel instantiations for block sizes 33..40 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

void add_variants_33_40(std::vector<Variant>& out) { add_block_range<33, 40>(out); }

}  // namespace blockres::kernels::cuda_bsrmv
