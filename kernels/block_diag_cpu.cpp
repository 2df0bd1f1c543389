// CPU reference of the block-diagonal inversion and application.
#include "kernels/block_diag.hpp"

#include <stdexcept>

namespace blockres::kernels::cpu {

void scatter_blocks(index_t n, int bs, const index_t* src, const size64_t* dst_off, const int* ld, const double* values,
                    double* dst)
{
  const size64_t bb = size64_t(bs) * bs;
#pragma omp parallel for schedule(static) if (n > 4096)
  for (index_t e = 0; e < n; ++e)
    for (int i = 0; i < bs; ++i)
      for (int j = 0; j < bs; ++j) dst[dst_off[e] + size64_t(i) * ld[e] + j] = values[size64_t(src[e]) * bb + i * bs + j];
}

index_t count_nonzero(index_t n, const int* info)
{
  index_t c = 0;
  for (index_t e = 0; e < n; ++e) c += info[e] != 0;
  return c;
}

index_t invert_diagonal_blocks(const BsrView<const double>& A, const index_t* diag_pos, double* inv, int* info)
{
  const int bs = A.bs;
  if (bs < 1 || bs > block_diag_max_bs) throw std::invalid_argument("invert_diagonal_blocks: unsupported block size");
  const size64_t bb = size64_t(bs) * bs;
  index_t failed = 0;
#pragma omp parallel for schedule(static) reduction(+ : failed) if (A.nrows > 1024)
  for (index_t r = 0; r < A.nrows; ++r) {
    const double* src = A.values + size64_t(diag_pos[r]) * bb;
    double* dst = inv + size64_t(r) * bb;
    for (size64_t e = 0; e < bb; ++e) dst[e] = src[e];
    info[r] = gauss_jordan_invert_inplace(bs, dst);
    failed += (info[r] != 0);
  }
  return failed;
}

void block_diag_apply(index_t nrows, int bs, const double* inv, const double* x, double* y)
{
#pragma omp parallel for schedule(static) if (nrows > 2048)
  for (index_t r = 0; r < nrows; ++r) {
    const double* blk = inv + size64_t(r) * bs * bs;
    const double* xr = x + size64_t(r) * bs;
    for (int i = 0; i < bs; ++i) {
      double sum = 0.0;
      for (int j = 0; j < bs; ++j) sum += blk[i * bs + j] * xr[j];
      y[size64_t(r) * bs + i] = sum;
    }
  }
}

}  // namespace blockres::kernels::cpu
