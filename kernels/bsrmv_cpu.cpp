// CPU reference BSR SpMV (the oracle for the CUDA kernels), OpenMP over block rows.
#include "kernels/bsrmv.hpp"

namespace blockres::kernels::cpu {

void bsrmv(const BsrView<const double>& A, double alpha, const double* x, double beta, double* y)
{
  const int bs = A.bs;
#pragma omp parallel for schedule(static) if (A.nrows > 2048)
  for (index_t r = 0; r < A.nrows; ++r) {
    for (int i = 0; i < bs; ++i) {
      double sum = 0.0;
      for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
        const double* blk = A.values + size64_t(k) * bs * bs + size64_t(i) * bs;
        const double* xc = x + size64_t(A.col_ind[k]) * bs;
        for (int j = 0; j < bs; ++j) sum += blk[j] * xc[j];
      }
      double& out = y[size64_t(r) * bs + i];
      out = (beta == 0.0) ? alpha * sum : alpha * sum + beta * out;
    }
  }
}

}  // namespace blockres::kernels::cpu
