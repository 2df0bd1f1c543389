// Host pattern analysis of ILU(0) (validation, diagonal positions, level sets) and the CPU
// references of the factorisation and the triangular solves: plain sequential row-order code,
// the baseline the CUDA versions are checked against.
#include "kernels/ilu_isai/ilu.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace blockres::kernels {

namespace {

[[noreturn]] void bad_row(index_t i, const std::string& what)
{
  throw std::invalid_argument("ILU(0): row " + std::to_string(i) + " " + what);
}

// Groups rows by level: ptr[l] .. ptr[l+1] indexes the rows of level l in `rows`, each level's
// rows ascending (a counting sort, stable in the row index).
void bucket_by_level(const std::vector<index_t>& level, std::vector<index_t>& ptr, std::vector<index_t>& rows)
{
  const index_t n = static_cast<index_t>(level.size());
  const index_t levels = n == 0 ? 0 : *std::max_element(level.begin(), level.end()) + 1;
  ptr.assign(static_cast<std::size_t>(levels) + 1, 0);
  for (index_t i = 0; i < n; ++i) ++ptr[level[i] + 1];
  for (index_t l = 0; l < levels; ++l) ptr[l + 1] += ptr[l];
  rows.assign(static_cast<std::size_t>(n), 0);
  std::vector<index_t> next(ptr.begin(), ptr.end() - 1);
  for (index_t i = 0; i < n; ++i) rows[next[level[i]]++] = i;
}

}  // namespace

IluSchedule ilu_schedule(index_t n, const index_t* row_ptr, const index_t* col)
{
  if (n < 0) throw std::invalid_argument("ILU(0): negative matrix size " + std::to_string(n));
  if (n > 0 && (row_ptr == nullptr || col == nullptr))
    throw std::invalid_argument("ILU(0): null row_ptr or col for a matrix of size " + std::to_string(n));
  IluSchedule s;
  s.n = n;
  s.diag.assign(static_cast<std::size_t>(n), -1);
  std::vector<index_t> lower_level(static_cast<std::size_t>(n), 0), upper_level(static_cast<std::size_t>(n), 0);

  // Validation and the lower levels in one pass: the strictly lower columns of row i are rows
  // already visited, so their levels are known.
  for (index_t i = 0; i < n; ++i) {
    const index_t rs = row_ptr[i], re = row_ptr[i + 1];
    if (re < rs) bad_row(i, "has a negative length (row_ptr decreases from " + std::to_string(rs) + " to " +
                               std::to_string(re) + ")");
    for (index_t p = rs; p < re; ++p) {
      const index_t c = col[p];
      if (c < 0 || c >= n)
        bad_row(i, "has column " + std::to_string(c) + " out of range [0, " + std::to_string(n) + ")");
      if (p > rs && c <= col[p - 1])
        bad_row(i, "has unsorted or duplicate columns (" + std::to_string(c) + " after " + std::to_string(col[p - 1]) +
                       ")");
      if (c == i) s.diag[i] = p;
    }
    if (s.diag[i] < 0) bad_row(i, "has no diagonal entry");
    index_t level = 0;
    for (index_t p = rs; p < s.diag[i]; ++p) level = std::max(level, lower_level[col[p]] + 1);
    lower_level[i] = level;
  }
  // Upper levels mirror the lower ones: row i waits for the rows j > i of its upper entries.
  for (index_t i = n - 1; i >= 0; --i) {
    index_t level = 0;
    for (index_t p = s.diag[i] + 1; p < row_ptr[i + 1]; ++p) level = std::max(level, upper_level[col[p]] + 1);
    upper_level[i] = level;
  }
  bucket_by_level(lower_level, s.lower_level_ptr, s.lower_rows);
  bucket_by_level(upper_level, s.upper_level_ptr, s.upper_rows);
  return s;
}

namespace cpu {

namespace {

template <class T>
void check_size(const IluSchedule& s, const CsrView<T>& A, const char* what)
{
  if (s.n != A.n)
    throw std::invalid_argument(std::string(what) + ": schedule for n = " + std::to_string(s.n) +
                                " but the matrix has n = " + std::to_string(A.n));
}

}  // namespace

int ilu0_factor(const IluSchedule& s, CsrView<double> A)
{
  check_size(s, A, "ilu0_factor");
  // pos[j] = position of (i, j) in the current row i, or -1: the classic dense marker of the
  // IKJ variant (the CUDA version searches row i instead, so the two are independent codes).
  std::vector<index_t> pos(static_cast<std::size_t>(A.n), -1);
  int info = 0;
  for (index_t i = 0; i < A.n; ++i) {
    const index_t rs = A.row_ptr[i], re = A.row_ptr[i + 1];
    for (index_t p = rs; p < re; ++p) pos[A.col[p]] = p;
    for (index_t p = rs; p < s.diag[i]; ++p) {  // strictly lower entries, increasing k
      const index_t k = A.col[p];
      const double l = A.val[p] / A.val[s.diag[k]];
      A.val[p] = l;
      for (index_t q = s.diag[k] + 1; q < A.row_ptr[k + 1]; ++q) {  // (k, j), j > k
        const index_t t = pos[A.col[q]];
        if (t >= 0) A.val[t] -= l * A.val[q];
      }
    }
    for (index_t p = rs; p < re; ++p) pos[A.col[p]] = -1;
    const double u = A.val[s.diag[i]];
    if (info == 0 && (u == 0.0 || !std::isfinite(u))) info = i + 1;
  }
  return info;
}

int ilu0_check_pivots(index_t n, const index_t* pivot_pos, const double* val)
{
  for (index_t i = 0; i < n; ++i) {
    const double u = val[pivot_pos[i]];
    if (u == 0.0 || !std::isfinite(u)) return i + 1;
  }
  return 0;
}

void ilu0_lower_solve(const IluSchedule& s, CsrView<const double> LU, const double* b, double* x)
{
  check_size(s, LU, "ilu0_lower_solve");
  // Row order: x_j (j < i) is final when row i reads it, and b_i is read before x_i is written,
  // so x may alias b.
  for (index_t i = 0; i < LU.n; ++i) {
    double sum = b[i];
    for (index_t p = LU.row_ptr[i]; p < s.diag[i]; ++p) sum -= LU.val[p] * x[LU.col[p]];
    x[i] = sum;
  }
}

void ilu0_upper_solve(const IluSchedule& s, CsrView<const double> LU, const double* b, double* x)
{
  check_size(s, LU, "ilu0_upper_solve");
  // Reverse row order (same aliasing argument as the L solve).
  for (index_t i = LU.n - 1; i >= 0; --i) {
    double sum = b[i];
    for (index_t p = s.diag[i] + 1; p < LU.row_ptr[i + 1]; ++p) sum -= LU.val[p] * x[LU.col[p]];
    x[i] = sum / LU.val[s.diag[i]];
  }
}

}  // namespace cpu

}  // namespace blockres::kernels
