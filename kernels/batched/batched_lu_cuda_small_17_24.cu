// Batched LU register kernels: uniform sizes 17..24 (see batched_lu_cuda.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

#define BLOCKRES_LU_FACTOR(NP, U) \
  template void launch_small_factor<NP, U>(stream_t, const BatchLayout&, int, double*, index_t*, int*);
#define BLOCKRES_LU_SOLVE(G)                                                                          \
  template void launch_small_solve<G>(stream_t, const BatchLayout&, int, int, const double*, const index_t*, \
                                      const double*, double*);

BLOCKRES_LU_FACTOR(17, true)
BLOCKRES_LU_FACTOR(18, true)
BLOCKRES_LU_FACTOR(19, true)
BLOCKRES_LU_FACTOR(20, true)
BLOCKRES_LU_FACTOR(21, true)
BLOCKRES_LU_FACTOR(22, true)
BLOCKRES_LU_FACTOR(23, true)
BLOCKRES_LU_FACTOR(24, true)


}  // namespace blockres::kernels::cuda::lu_detail
