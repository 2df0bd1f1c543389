// Batched LU register kernels: uniform sizes 25..32; variable class 32; solve for n <= 32 (see batched_lu_cuda.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

#define BLOCKRES_LU_FACTOR(NP, U) \
  template void launch_small_factor<NP, U>(stream_t, const BatchLayout&, int, double*, index_t*, int*);
#define BLOCKRES_LU_SOLVE(G)                                                                          \
  template void launch_small_solve<G>(stream_t, const BatchLayout&, int, int, const double*, const index_t*, \
                                      const double*, double*);

BLOCKRES_LU_FACTOR(25, true)
BLOCKRES_LU_FACTOR(26, true)
BLOCKRES_LU_FACTOR(27, true)
BLOCKRES_LU_FACTOR(28, true)
BLOCKRES_LU_FACTOR(29, true)
BLOCKRES_LU_FACTOR(30, true)
BLOCKRES_LU_FACTOR(31, true)
BLOCKRES_LU_FACTOR(32, true)
BLOCKRES_LU_FACTOR(32, false)
BLOCKRES_LU_SOLVE(32)

}  // namespace blockres::kernels::cuda::lu_detail
