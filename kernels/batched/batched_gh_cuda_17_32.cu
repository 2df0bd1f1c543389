// Batched GH/GJE kernel instantiations for full-warp groups (blocks of size 17..32).
#include "kernels/batched/batched_gh_cuda.cuh"

namespace blockres::kernels::cuda_gh {

BLOCKRES_GH_LAUNCHERS(32, )

template void launch_gemv_rows<double>(stream_t, const BatchLayout&, size64_t, const double*, const double*, double*);
template void launch_gemv_rows<float>(stream_t, const BatchLayout&, size64_t, const float*, const double*, double*);

}  // namespace blockres::kernels::cuda_gh
