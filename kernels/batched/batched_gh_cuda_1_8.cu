// Batched GH/GJE kernel instantiations for lane groups of 1, 2, 4 and 8 lanes (blocks of size 1..8).
#include "kernels/batched/batched_gh_cuda.cuh"

namespace blockres::kernels::cuda_gh {

BLOCKRES_GH_LAUNCHERS(1, )
BLOCKRES_GH_LAUNCHERS(2, )
BLOCKRES_GH_LAUNCHERS(4, )
BLOCKRES_GH_LAUNCHERS(8, )

BLOCKRES_GH_LANE_SOLVES_4_8(BLOCKRES_GH_LANE_SOLVE, )

}  // namespace blockres::kernels::cuda_gh
