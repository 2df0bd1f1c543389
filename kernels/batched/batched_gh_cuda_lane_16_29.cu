// Gauss-Huard lane solves of uniform batches of 16..29 rows (16 blocks a warp to 21 rows, 8 above: lane_stage.cuh).
#include "kernels/batched/batched_gh_cuda.cuh"

namespace blockres::kernels::cuda_gh {

BLOCKRES_GH_LANE_SOLVES_16_29(BLOCKRES_GH_LANE_SOLVE, )

}  // namespace blockres::kernels::cuda_gh
