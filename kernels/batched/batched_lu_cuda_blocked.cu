// Batched LU blocked kernels for blocks of 33..512 and the blocked solve (see batched_lu_cuda.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

BLOCKRES_LU_BLOCKED_FACTOR_CLASSES(BLOCKRES_LU_BLOCKED_FACTOR_INSTANCE)
BLOCKRES_LU_BLOCKED_SOLVE_INSTANCE

}  // namespace blockres::kernels::cuda::lu_detail
