// Batched LU blocked kernels for blocks of 57..512, the blocked solve (129..512), the row solves (65..128), the
// panel solve (57..64) and the warp solves (17..56)
// (see batched_lu_cuda.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

BLOCKRES_LU_BLOCKED_FACTOR_CLASSES(BLOCKRES_LU_BLOCKED_FACTOR_INSTANCE)
BLOCKRES_LU_BLOCKED_SOLVE_INSTANCE
BLOCKRES_LU_WARP_SOLVE_INSTANCE(1)
BLOCKRES_LU_WARP_SOLVE_INSTANCE(2)
BLOCKRES_LU_PANEL_SOLVE_INSTANCE(2, 16, 2)
BLOCKRES_LU_ROW_SOLVE_INSTANCE(3)
BLOCKRES_LU_ROW_SOLVE_INSTANCE(4)

}  // namespace blockres::kernels::cuda::lu_detail
