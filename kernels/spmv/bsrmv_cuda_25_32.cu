// BSRMV kernel instantiations for block sizes 25..32 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

void add_variants_25_32(std::vector<Variant>& out) { add_block_range<25, 32>(out); }

}  // namespace blockres::kernels::cuda_bsrmv
