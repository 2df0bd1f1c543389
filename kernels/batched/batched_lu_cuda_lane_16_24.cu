// Batched LU lane solves of uniform batches of 16..24 rows (16 blocks a warp to 21 rows, 8 above: lane_stage.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

BLOCKRES_LU_LANE_SOLVES_16_24(BLOCKRES_LU_LANE_SOLVE_INSTANCE)

}  // namespace blockres::kernels::cuda::lu_detail
