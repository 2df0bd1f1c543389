// Batched LU row kernels: the factorisation of blocks of 33..56 rows (see batched_lu_cuda.cuh).
#include "kernels/batched/batched_lu_cuda.cuh"

namespace blockres::kernels::cuda::lu_detail {

BLOCKRES_LU_ROW_FACTOR_CLASSES(BLOCKRES_LU_ROW_FACTOR_INSTANCE)

}  // namespace blockres::kernels::cuda::lu_detail
