// Batched LU register kernels: uniform sizes 25..32 and the variable class 32 (see batched_lu_cuda.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

BLOCKRES_LU_SMALL_25_32(BLOCKRES_LU_SMALL_FACTOR_INSTANCE, BLOCKRES_LU_SMALL_SOLVE_INSTANCE)

}  // namespace blockres::kernels::cuda::lu_detail
