// Batched LU register kernels: uniform sizes 1..16; variable classes 1, 2, 4, 8, 16; solves for n <= 16 (see batched_lu_cuda.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

#define BLOCKRES_LU_FACTOR(NP, U) \
  template void launch_small_factor<NP, U>(stream_t, const BatchLayout&, int, double*, index_t*, int*);
#define BLOCKRES_LU_SOLVE(G)                                                                          \
  template void launch_small_solve<G>(stream_t, const BatchLayout&, int, int, const double*, const index_t*, \
                                      const double*, double*);

BLOCKRES_LU_FACTOR(1, true)
BLOCKRES_LU_FACTOR(2, true)
BLOCKRES_LU_FACTOR(3, true)
BLOCKRES_LU_FACTOR(4, true)
BLOCKRES_LU_FACTOR(5, true)
BLOCKRES_LU_FACTOR(6, true)
BLOCKRES_LU_FACTOR(7, true)
BLOCKRES_LU_FACTOR(8, true)
BLOCKRES_LU_FACTOR(9, true)
BLOCKRES_LU_FACTOR(10, true)
BLOCKRES_LU_FACTOR(11, true)
BLOCKRES_LU_FACTOR(12, true)
BLOCKRES_LU_FACTOR(13, true)
BLOCKRES_LU_FACTOR(14, true)
BLOCKRES_LU_FACTOR(15, true)
BLOCKRES_LU_FACTOR(16, true)
BLOCKRES_LU_FACTOR(1, false)
BLOCKRES_LU_FACTOR(2, false)
BLOCKRES_LU_FACTOR(4, false)
BLOCKRES_LU_FACTOR(8, false)
BLOCKRES_LU_FACTOR(16, false)
BLOCKRES_LU_SOLVE(1)
BLOCKRES_LU_SOLVE(2)
BLOCKRES_LU_SOLVE(4)
BLOCKRES_LU_SOLVE(8)
BLOCKRES_LU_SOLVE(16)

}  // namespace blockres::kernels::cuda::lu_detail
