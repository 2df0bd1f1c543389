// Batched GH/GJE kernel instantiations for lane groups of 16 lanes (blocks of size 9..16).
#include "kernels/batched/batched_gh_cuda.cuh"

namespace blockres::kernels::cuda_gh {

BLOCKRES_GH_LAUNCHERS(16, )

BLOCKRES_GH_LANE_SOLVES_9_15(BLOCKRES_GH_LANE_SOLVE, )

}  // namespace blockres::kernels::cuda_gh
