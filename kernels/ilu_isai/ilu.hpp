// Scalar ILU(0) of a sparse matrix in CSR form (the scalar view of a BSR Jacobian, every block
// entry one CSR entry), its level schedule, and the exact triangular solves with its factors:
// CPU references and CUDA versions (level-scheduled: one kernel launch per level).
//
// ILU(0) (IKJ variant, no pivoting, fill restricted to the pattern of A): for i = 0..n-1, for
// every k < i with (i, k) in the pattern, in increasing k:
//   a_ik /= a_kk;   a_ij -= a_ik * a_kj  for every j > k with (i, j) and (k, j) in the pattern.
// The result overwrites A: the strictly lower entries hold L (unit diagonal implied), the
// diagonal and upper entries hold U. On a BSR pattern (dense blocks) this equals block ILU(0)
// with the diagonal blocks factored by LU without pivoting.
// Row i depends on the rows k < i of its strictly lower entries, so the factorisation and the
// L solve run level by level: level(i) = 1 + max level(k) over those k (0 without any); the U
// solve by the mirrored levels over the strictly upper entries (from the last row up).
#pragma once

#include "kernels/common.hpp"

#include <vector>

namespace blockres::kernels {

// Scalar CSR matrix: n x n, column indices sorted within each row.
template <class T>
struct CsrView {
  index_t n = 0;
  const index_t* row_ptr = nullptr;  // n + 1
  const index_t* col = nullptr;      // row_ptr[n]
  T* val = nullptr;                  // row_ptr[n]
};

// Host analysis of a CSR pattern (host arrays). Throws std::invalid_argument naming the row
// when a row has no diagonal entry or its columns are not sorted/unique or out of range.
struct IluSchedule {
  index_t n = 0;
  std::vector<index_t> diag;             // position of (i, i) in row i
  std::vector<index_t> lower_level_ptr;  // levels of the factorisation and the L solve: rows
  std::vector<index_t> lower_rows;       //   lower_rows[lower_level_ptr[l] .. lower_level_ptr[l+1])
  std::vector<index_t> upper_level_ptr;  // levels of the U solve (level 0: rows without strictly
  std::vector<index_t> upper_rows;       //   upper entries)
  index_t lower_levels() const { return index_t(lower_level_ptr.size()) - 1; }
  index_t upper_levels() const { return index_t(upper_level_ptr.size()) - 1; }
};
IluSchedule ilu_schedule(index_t n, const index_t* row_ptr, const index_t* col);

namespace cpu {
// In place ILU(0) of A (pattern analysed by `s`). Returns 0, or i + 1 for the first row i whose
// pivot u_ii is zero or not finite (the factorisation still completes; the factors are then
// unusable).
int ilu0_factor(const IluSchedule& s, CsrView<double> A);
// x = L^{-1} b (unit lower part of LU) and x = U^{-1} b; x may alias b.
void ilu0_lower_solve(const IluSchedule& s, CsrView<const double> LU, const double* b, double* x);
void ilu0_upper_solve(const IluSchedule& s, CsrView<const double> LU, const double* b, double* x);
// The pivot check of ilu0_factor on factors computed elsewhere (cuSPARSE's csrilu02 / bsrilu02, which
// flag only exact zeros): 0, or i + 1 for the first row i < n whose pivot u_ii = val[pivot_pos[i]] is
// zero or not finite (pivot_pos: IluSchedule::diag for CSR factors, the diagonal entries of the
// diagonal blocks for BSR ones).
int ilu0_check_pivots(index_t n, const index_t* pivot_pos, const double* val);
}  // namespace cpu

namespace cuda {
// Device copies of a schedule's arrays; the level pointers stay on the host (one launch each).
struct IluDeviceSchedule {
  const IluSchedule* host = nullptr;  // level pointers, n
  const index_t* diag = nullptr;       // device, n
  const index_t* lower_rows = nullptr; // device, n
  const index_t* upper_rows = nullptr; // device, n
};
// Same operations on device memory, asynchronous on `s`. `info` (device, one int) receives 0 or
// the smallest i + 1 whose pivot is zero or not finite (cpu::ilu0_factor's value).
void ilu0_factor(stream_t s, const IluDeviceSchedule& sched, CsrView<double> A, int* info);
// cpu::ilu0_check_pivots on device memory: `info` (device, one int) receives its value.
void ilu0_check_pivots(stream_t s, index_t n, const index_t* pivot_pos, const double* val, int* info);
// x must not alias b.
void ilu0_lower_solve(stream_t s, const IluDeviceSchedule& sched, CsrView<const double> LU, const double* b,
                      double* x);
void ilu0_upper_solve(stream_t s, const IluDeviceSchedule& sched, CsrView<const double> LU, const double* b,
                      double* x);
}  // namespace cuda

}  // namespace blockres::kernels
