// BSRMV kernel instantiations for block sizes 41..48 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

void add_variants_41_48(std::vector<Variant>& out) { add_block_range<41, 48>(out); }

}  // namespace blockres::kernels::cuda_bsrmv
