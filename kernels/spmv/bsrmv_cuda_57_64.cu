// BSRMV kernel instantiations for block sizes 57..64 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

void add_variants_57_64(std::vector<Variant>& out) { add_block_range<57, 64>(out); }

}  // namespace blockres::kernels::cuda_bsrmv
