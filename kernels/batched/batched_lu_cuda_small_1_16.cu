// Batched LU register kernels: uniform sizes 1..16; variable classes 1, 2, 4, 8, 16; solves for n <= 16, lane solves for uniform 4..15 (16..24: batched_lu_cuda_lane_16_24.cu; see batched_lu_cuda.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

BLOCKRES_LU_SMALL_1_16(BLOCKRES_LU_SMALL_FACTOR_INSTANCE, BLOCKRES_LU_SMALL_SOLVE_INSTANCE)
BLOCKRES_LU_LANE_SOLVES_4_15(BLOCKRES_LU_LANE_SOLVE_INSTANCE)

}  // namespace blockres::kernels::cuda::lu_detail
