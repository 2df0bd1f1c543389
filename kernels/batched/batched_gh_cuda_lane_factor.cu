// Gauss-Huard factorisations of uniform batches of 4..14 rows, a lane per block (gh_lane_factor_kernel).
#include "kernels/batched/batched_gh_cuda.cuh"

namespace blockres::kernels::cuda_gh {

BLOCKRES_GH_LANE_FACTORS(BLOCKRES_GH_LANE_FACTOR, )

}  // namespace blockres::kernels::cuda_gh
