// Block-diagonal kernels: invert the diagonal blocks of a BSR matrix, apply the inverse.
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// Largest block size the in-place Gauss–Jordan inversion accepts (pivot array in registers).
constexpr int block_diag_max_bs = 64;

// In-place Gauss–Jordan inversion of one n x n row-major block with partial (row) pivoting.
// Returns 0 on success, or k > 0 when the k-th pivot (1-based) is exactly zero or not finite,
// as LAPACK's info. Shared by the CPU and CUDA paths so both compute the same thing.
BLOCKRES_HD int gauss_jordan_invert_inplace(int n, double* a)
{
  int piv[block_diag_max_bs];
  for (int k = 0; k < n; ++k) {
    int p = k;
    double best = a[k * n + k] < 0 ? -a[k * n + k] : a[k * n + k];
    for (int i = k + 1; i < n; ++i) {
      const double v = a[i * n + k] < 0 ? -a[i * n + k] : a[i * n + k];
      if (v > best) { best = v; p = i; }
    }
    piv[k] = p;
    if (!(best > 0.0) || best > 1.0e308) return k + 1;  // zero, NaN or infinite pivot
    if (p != k)
      for (int j = 0; j < n; ++j) { const double t = a[k * n + j]; a[k * n + j] = a[p * n + j]; a[p * n + j] = t; }
    const double d = 1.0 / a[k * n + k];
    a[k * n + k] = 1.0;
    for (int j = 0; j < n; ++j) a[k * n + j] *= d;
    for (int i = 0; i < n; ++i) {
      if (i == k) continue;
      const double f = a[i * n + k];
      a[i * n + k] = 0.0;
      for (int j = 0; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
    }
  }
  // Row interchanges of A become column interchanges of A^{-1}, undone in reverse order.
  for (int k = n - 1; k >= 0; --k) {
    const int p = piv[k];
    if (p != k)
      for (int i = 0; i < n; ++i) { const double t = a[i * n + k]; a[i * n + k] = a[i * n + p]; a[i * n + p] = t; }
  }
  return 0;
}

// invert_diagonal_blocks: inv[r] = inverse of block (r, r) of A, located at diag_pos[r]
// (index into col_ind/values). info[r] as gauss_jordan_invert_inplace; the return value is
// the number of blocks that failed (their inv entries are undefined).
// block_diag_apply: y = D^{-1} x with D^{-1} stored as nrows row-major bs x bs blocks.
// scatter_blocks (block-Jacobi extraction): for listed blocks e = 0..n-1 and 0 <= i, j < bs,
//   dst[dst_off[e] + i*ld[e] + j] = values[src[e]*bs*bs + i*bs + j]
// (copies BSR blocks into dense matrices with leading dimension ld[e]; other entries of dst are
// left alone). count_nonzero: the number of entries of info that are not 0.
namespace cpu {
void scatter_blocks(index_t n, int bs, const index_t* src, const size64_t* dst_off, const int* ld, const double* values,
                    double* dst);
index_t count_nonzero(index_t n, const int* info);
}  // namespace cpu
namespace cuda {
void scatter_blocks(stream_t s, index_t n, int bs, const index_t* src, const size64_t* dst_off, const int* ld,
                    const double* values, double* dst);
// Needs a device workspace of one index_t; synchronises to return the count.
index_t count_nonzero(stream_t s, index_t n, const int* info, index_t* workspace);
}  // namespace cuda

namespace cpu {
index_t invert_diagonal_blocks(const BsrView<const double>& A, const index_t* diag_pos, double* inv, int* info);
void block_diag_apply(index_t nrows, int bs, const double* inv, const double* x, double* y);
}  // namespace cpu

namespace cuda {
// Needs a device workspace of one index_t (the failure count); synchronises to return it.
index_t invert_diagonal_blocks(stream_t s, const BsrView<const double>& A, const index_t* diag_pos, double* inv,
                               int* info, index_t* workspace);
void block_diag_apply(stream_t s, index_t nrows, int bs, const double* inv, const double* x, double* y);
}  // namespace cuda

}  // namespace blockres::kernels
