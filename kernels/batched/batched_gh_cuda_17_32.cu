// Batched GH/GJE kernel instantiations for full-warp groups (blocks of size 17..32).
#include "kernels/batched/batched_gh_cuda.cuh"

namespace blockres::kernels::cuda_gh {

BLOCKRES_GH_LAUNCHERS(32, )

}  // namespace blockres::kernels::cuda_gh
