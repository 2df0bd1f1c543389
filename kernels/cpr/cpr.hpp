// CPR (constrained pressure residual) kernels: quasi-IMPES decoupling weights, the scalar
// pressure matrix, restriction and prolongation. CPU reference and CUDA version of each.
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// Storage: A is BSR with block size bs (row-major blocks), cell r owns the scalar unknowns
// r*bs .. r*bs+bs-1 and unknown 0 of a cell is its pressure. w holds bs weights per cell
// (w[r*bs + a]), pressure vectors one entry per cell.
//
// cpr_quasi_impes_weights: for every cell r with diagonal block D = A_{r,r} (at block position
//   diag_pos[r]) solves D^T w_r = e_0 (so that w_r^T D = e_0^T) by Gauss elimination with partial
//   pivoting, then scales w_r by 1 / max_a |w_r[a]| (the largest weight has magnitude 1, as in
//   OPM's quasi-IMPES; a row scaling of the pressure system, so it changes neither the
//   restricted solve nor the exactness of CPR). info[r] = 0 on success, k + 1 when the pivot of
//   elimination step k is zero or not finite (then w_r is left undefined). `values` may be any
//   array of bs x bs blocks: true-IMPES passes the model's accumulation blocks with diag_pos[r] = r.
// cpr_pressure_values: ap[k] = sum_a w[r*bs + a] * A_k(a, 0) for every block k of block row r
//   (the bs = 1 pressure matrix W^T A P on A's block pattern, in A's block order), and col[k*bs + a] =
//   A_k(a, 0): column 0 of every block, contiguous, the only part of A that cpr_pressure_residual reads.
// cpr_restrict: rp[r] = sum_a w[r*bs + a] * x[r*bs + a].
// cpr_prolong_add: x[r*bs] += xp[r] (the other unknowns are left alone).
// cpr_pressure_residual: r2 = r - A P xp, P xp the pressure vector in unknown 0 of every cell (0
//   elsewhere): r2[r*bs + a] = r[r*bs + a] - sum over the blocks k of block row r (in storage order)
//   of A_k(a, 0) * xp[col_ind[k]], A_k(a, 0) read from col (cpr_pressure_values' copy of column 0).
//   Reading the column in place (entry a*bs of each block) cost a 32-byte sector for every 8 bytes
//   used on the GPU; the copy is read contiguously, bs doubles a block, every application. The CPU's
//   sum is, bit for bit, the one a full product with x = P xp would give (the other columns add zeros).
namespace cpu {
void cpr_quasi_impes_weights(index_t nrows, int bs, const index_t* diag_pos, const double* values, double* w,
                             int* info);
void cpr_pressure_values(index_t nrows, int bs, const index_t* row_ptr, const double* values, const double* w,
                         double* ap, double* col);
void cpr_restrict(index_t nrows, int bs, const double* w, const double* x, double* rp);
void cpr_prolong_add(index_t nrows, int bs, const double* xp, double* x);
void cpr_pressure_residual(index_t nrows, int bs, const index_t* row_ptr, const index_t* col_ind, const double* col,
                           const double* xp, const double* r, double* r2);
}  // namespace cpu
namespace cuda {
void cpr_quasi_impes_weights(stream_t s, index_t nrows, int bs, const index_t* diag_pos, const double* values,
                             double* w, int* info);
void cpr_pressure_values(stream_t s, index_t nrows, int bs, const index_t* row_ptr, const double* values,
                         const double* w, double* ap, double* col);
void cpr_restrict(stream_t s, index_t nrows, int bs, const double* w, const double* x, double* rp);
void cpr_prolong_add(stream_t s, index_t nrows, int bs, const double* xp, double* x);
void cpr_pressure_residual(stream_t s, index_t nrows, int bs, const index_t* row_ptr, const index_t* col_ind,
                           const double* col, const double* xp, const double* r, double* r2);
}  // namespace cuda

}  // namespace blockres::kernels
