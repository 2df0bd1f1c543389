// BSRMV kernel instantiations for block sizes 49..56 (split across files to bound nvcc time).
#include "kernels/spmv/bsrmv_cuda.cuh"

namespace blockres::kernels::cuda_bsrmv {

void add_variants_49_56(std::vector<Variant>& out) { add_block_range<49, 56>(out); }

}  // namespace blockres::kernels::cuda_bsrmv
