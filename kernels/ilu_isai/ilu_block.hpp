// Block ILU(0) of a square BSR matrix on its block pattern (bs x bs blocks, any bs >= 1) and the
// exact block triangular solves with its factors: CPU references and CUDA versions
// (level-scheduled: one kernel launch per level, the levels of kernels::ilu_schedule applied to
// the BLOCK pattern, rows = block rows).
//
// Block ILU(0) (IKJ variant, no fill outside the block pattern): for block rows i = 0..n-1, for
// every block k < i with (i, k) in the pattern, in increasing k:
//   L_ik = A_ik U_kk^{-1};   A_ij -= L_ik U_kj  for every j > k with (i, j) and (k, j) in the pattern;
// then U_ii = A_ii (as updated) and D_i = U_ii^{-1}. The result overwrites A's values in BSR order:
// the strictly lower blocks hold L_ik (L is unit block lower: its diagonal blocks are the identity,
// not stored), the diagonal and upper blocks hold U (dense diagonal blocks U_ii). The inverses D_i
// are stored beside, dinv[i*bs*bs + r*bs + c] (row-major, block row order), and are what the
// factorisation and the upper solve apply, so every operation is a small dense GEMM or GEMV.
// Accumulation order of the factorisation (both backends): (X Y)(r, c) = sum over m = 0..bs-1 in
// increasing m, and the update subtracts the finished sum, A_ij(r, c) -= (L_ik U_kj)(r, c). The
// CUDA solves add per-lane partial sums, so solves agree with the CPU's to rounding only.
//
// D_i by in-place Gauss–Jordan with partial row pivoting (the block-Jacobi inversion, for every
// bs): step s picks the first row p >= s holding the largest |W(p, s)| (a NaN never wins), swaps
// rows s and p, then row s <- row s / W(s, s) (with the identity column implied) and every other
// row r -= W(r, s) row s; the row swaps are undone as column swaps in reverse order at the end.
// A diagonal block is singular when a pivot is zero, not finite, or |pivot| <= bs * eps * max|U_ii|,
// or when U_ii holds a non-finite entry (the batched.hpp rule).
// Exact solves: x = L^{-1} b (x_i = b_i - sum_{k<i} L_ik x_k, forward by levels) and
// x = U^{-1} b (x_i = D_i (b_i - sum_{j>i} U_ij x_j), backward by the upper levels).
// Value offsets are 64-bit (block position * bs * bs may pass 2^31).
#pragma once

#include "kernels/common.hpp"
#include "kernels/ilu_isai/ilu.hpp"
#include "kernels/ilu_isai/isai.hpp"  // Triangle

#include <vector>

namespace blockres::kernels {

// The schedule of a block ILU(0) is ilu_schedule(A.nrows, A.row_ptr, A.col_ind) (host arrays of
// the block pattern): diag[i] is the position of block (i, i), the levels are over block rows.

// Iterative block ILU(0): the fixed-point form of Chow and Patel (fine-grained parallel ILU,
// SIAM J. Sci. Comput. 37, 2015), in blocks and with Jacobi sweeps (every entry from the previous
// sweep's values, so the result does not depend on the order and both backends agree to rounding):
//   L_ij = (A_ij - sum_{k<j} L_ik U_kj) D_j   (i > j),    U_ij = A_ij - sum_{k<i} L_ik U_kj   (i <= j),
// the sums over the k with (i, k) and (k, j) in the pattern, in increasing k (each finished product
// subtracted, as block_ilu0_factor does), D_j = U_jj^{-1} of the previous sweep. The start is
// L = lower(A) D(A), U = upper(A); after every sweep the D_i are inverted anew (block_ilu0_invert's
// rule). Every sweep is one launch over all entries instead of one per level; the exact factors
// are the fixed point, reached after finitely many sweeps (the longest chain of entries depending
// on each other, across levels and along rows), and a few sweeps approximate them where the
// coupling decays (the preconditioner then differs slightly from exact ILU(0)). Same storage as
// block_ilu0_factor's result.
struct BlockIluSweepPlan {
  index_t nrows = 0;
  std::vector<size64_t> pair_ptr;          // nnzb + 1: pairs of entry e in [pair_ptr[e], pair_ptr[e+1])
  std::vector<index_t> pair_l, pair_u;     // positions of (i, k) and (k, j), increasing k per entry
  std::vector<index_t> row_of;             // block row of every entry (nnzb)
  std::vector<index_t> diag_next;          // diag[i] for i < n, nnzb at n (n + 1 entries)
};
BlockIluSweepPlan block_ilu_sweep_plan(const IluSchedule& s, index_t nrows, const index_t* row_ptr,
                                       const index_t* col);

namespace cpu {
// One sweep (or, with products = false, the start): out from the previous values `in` and their
// inverted diagonal blocks `dinv_in`; A gives the pattern and the matrix values.
void block_ilu_sweep(const BlockIluSweepPlan& p, BsrView<const double> A, const double* in, const double* dinv_in,
                     double* out, bool products);
// dinv_i = U_ii^{-1} from values' diagonal blocks; returns 0 or i + 1 for the first singular U_ii.
int block_ilu_invert_diagonal(const IluSchedule& s, BsrView<const double> LU, double* dinv);
// In place block ILU(0) of A (square; pattern analysed by `s`); dinv: nrows * bs * bs doubles
// (written). Returns 0, or i + 1 for the first block row i whose U_ii is singular (the
// factorisation still completes; the factors are then unusable).
int block_ilu0_factor(const IluSchedule& s, BsrView<double> A, double* dinv);
// x = L^{-1} b and x = U^{-1} b with the factors of block_ilu0_factor; x may alias b.
void block_ilu0_lower_solve(const IluSchedule& s, BsrView<const double> LU, const double* b, double* x);
void block_ilu0_upper_solve(const IluSchedule& s, BsrView<const double> LU, const double* dinv, const double* b,
                            double* x);
// In place inverse of one bs x bs row-major block by the Gauss–Jordan above; `work` holds 3 bs
// doubles. Returns false when the block is singular (the rule above); the block is then garbage.
bool block_ilu0_invert(int bs, double* w, double* work);
// The residual of one factor, w = b - T x, with T = L (tri = unit_lower: identity diagonal blocks
// and the strictly lower blocks of LU) or T = U (tri = upper: the diagonal and upper blocks of LU):
// the fixed-point sweeps x <- x + M (b - T x) that move an ISAI product M b toward the exact solve
// T^{-1} b. Scalar row (i, a): sum over the blocks p of row i in the triangle, in increasing p, of
// sum_c LU_p(a, c) x_{col p, c} (c increasing), then w = b - (x + sum) or b - sum. w may alias b
// but not x.
void block_triangle_residual(Triangle tri, BsrView<const double> LU, const double* b, const double* x, double* w);
// Mixed precision (issue 30: ILU/ISAI factors stored in fp32): the same residual with float values,
// each converted to double before its product (fp64 arithmetic, fp64 vectors).
void block_triangle_residual(Triangle tri, BsrView<const float> LU, const double* b, const double* x, double* w);
// y = M x + beta y for a BSR matrix with float values (the fp32 copy of an ISAI factor), in fp64
// arithmetic: scalar row (i, a) sums its blocks in increasing position, columns c increasing, as
// block_triangle_residual does; beta = 0 does not read y (which may hold anything). y must not alias x.
void bsr_gemv_fp32(BsrView<const float> M, const double* x, double beta, double* y);
}  // namespace cpu

namespace cuda {
// Doubles of device workspace block_ilu0_factor needs: 0 while a block row's working set (one
// block plus a few vectors) fits in 48 KB of shared memory, bs <= 75; above, one slice per thread
// block of a bounded grid. Allocate once per structure.
size64_t block_ilu0_workspace_doubles(const IluSchedule& s, int bs);
// Same operations on device memory, asynchronous on `s`. `info` (device, one int) receives 0 or
// cpu::block_ilu0_factor's value. x must not alias b in the solves.
void block_ilu0_factor(stream_t s, const IluDeviceSchedule& sched, BsrView<double> A, double* dinv, int* info,
                       double* workspace);
void block_ilu0_lower_solve(stream_t s, const IluDeviceSchedule& sched, BsrView<const double> LU, const double* b,
                            double* x);
void block_ilu0_upper_solve(stream_t s, const IluDeviceSchedule& sched, BsrView<const double> LU,
                            const double* dinv, const double* b, double* x);
// The iterative block ILU(0) on device memory: the plan's arrays on the device.
struct BlockIluSweepDevicePlan {
  const BlockIluSweepPlan* host = nullptr;
  const size64_t* pair_ptr = nullptr;
  const index_t *pair_l = nullptr, *pair_u = nullptr, *row_of = nullptr, *diag_next = nullptr;
};
void block_ilu_sweep(stream_t s, const BlockIluSweepDevicePlan& p, BsrView<const double> A, const double* in,
                     const double* dinv_in, double* out, bool products);
// info (device, one int): 0 or i + 1 as the CPU version; workspace as block_ilu0_factor's.
void block_ilu_invert_diagonal(stream_t s, const IluDeviceSchedule& sched, const BlockIluSweepDevicePlan& p,
                               BsrView<const double> LU, double* dinv, int* info, double* workspace);
// cpu::block_triangle_residual on device memory (a thread per scalar row, the CPU's order).
void block_triangle_residual(stream_t s, Triangle tri, BsrView<const double> LU, const double* b, const double* x,
                             double* w);
// The fp32-valued twins of cpu::block_triangle_residual and cpu::bsr_gemv_fp32 (a thread per scalar
// row, the CPU's order).
void block_triangle_residual(stream_t s, Triangle tri, BsrView<const float> LU, const double* b, const double* x,
                             double* w);
void bsr_gemv_fp32(stream_t s, BsrView<const float> M, const double* x, double beta, double* y);
}  // namespace cuda

}  // namespace blockres::kernels
