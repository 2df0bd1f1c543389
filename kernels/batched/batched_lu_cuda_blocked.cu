// Batched LU blocked kernels for blocks of 33..512 and the blocked solve (see batched_lu_cuda.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

#define BLOCKRES_LU_BLOCKED(T, NB, RPT) \
  template void launch_blocked_factor<T, NB, RPT>(stream_t, const BatchLayout&, int, int, double*, index_t*, int*);
BLOCKRES_LU_BLOCKED_FACTOR_CLASSES(BLOCKRES_LU_BLOCKED)

template void launch_blocked_solve<BLOCKRES_LU_BLOCKED_SOLVE_THREADS>(stream_t, const BatchLayout&, int, int,
                                                                      const double*, const index_t*,
                                                                      const double*, double*);

}  // namespace blockres::kernels::cuda::lu_detail
