// Test helpers for block ILU(0): host BSR matrices (random, banded, block-tridiagonal patterns,
// row-diagonally-dominant values) and checks that do not use the code under test: the block
// product L U on the pattern, block triangular products, dense ISAI residuals.
#pragma once

#include "kernels/ilu_isai/ilu_block.hpp"
#include "kernels/ilu_isai/test/ilu_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

namespace blockres::test_ilu_block {

using test_ilu::rng;  // one printed, replayable seed per run (BLOCKRES_TEST_SEED)
using test_ilu::uniform;
using test_ilu::uniform_index;

// Host BSR matrix, square, sorted block columns, a diagonal block in every block row.
struct HostBsr {
  index_t n = 0;
  int bs = 1;
  std::vector<index_t> row_ptr{0}, col;
  std::vector<double> val;

  size64_t bs2() const { return size64_t(bs) * bs; }
  size64_t scalar_rows() const { return size64_t(n) * bs; }
  BsrView<double> view() { return {n, n, bs, row_ptr.data(), col.data(), val.data()}; }
  BsrView<const double> cview() const { return {n, n, bs, row_ptr.data(), col.data(), val.data()}; }
  index_t find(index_t i, index_t j) const
  {
    const auto first = col.begin() + row_ptr[i], last = col.begin() + row_ptr[i + 1];
    const auto it = std::lower_bound(first, last, j);
    return it != last && *it == j ? index_t(it - col.begin()) : -1;
  }
  const double* block(index_t p) const { return val.data() + size64_t(p) * bs2(); }
  double* block(index_t p) { return val.data() + size64_t(p) * bs2(); }
};

inline HostBsr from_block_rows(const std::vector<std::set<index_t>>& rows, int bs)
{
  HostBsr A;
  A.n = static_cast<index_t>(rows.size());
  A.bs = bs;
  for (index_t r = 0; r < A.n; ++r) {
    std::set<index_t> s = rows[r];
    s.insert(r);
    A.col.insert(A.col.end(), s.begin(), s.end());
    A.row_ptr.push_back(static_cast<index_t>(A.col.size()));
  }
  A.val.assign(A.col.size() * static_cast<std::size_t>(A.bs2()), 0.0);
  return A;
}

// Every block row holds its diagonal and `extra` random blocks within `band` of it (0: anywhere).
inline HostBsr random_pattern(index_t n, int bs, int extra, index_t band = 0)
{
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(n));
  for (index_t r = 0; r < n; ++r) {
    const index_t lo = band > 0 ? std::max<index_t>(0, r - band) : 0;
    const index_t hi = band > 0 ? std::min<index_t>(n - 1, r + band) : n - 1;
    for (int e = 0; e < extra; ++e) rows[r].insert(uniform_index(lo, hi));
  }
  return from_block_rows(rows, bs);
}

inline HostBsr block_tridiagonal_pattern(index_t n, int bs)
{
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(n));
  for (index_t r = 0; r < n; ++r) {
    if (r > 0) rows[r].insert(r - 1);
    if (r + 1 < n) rows[r].insert(r + 1);
  }
  return from_block_rows(rows, bs);
}

// A pattern with hub rows and columns (a well's completions coupled to each other and to their
// cells): block column j's J gets long (m well above 32 at every bs >= 2), as at the wells of the
// reservoir decks.
inline HostBsr hub_pattern(index_t n, int bs)
{
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(n));
  for (index_t r = 0; r < n; ++r) {
    for (index_t d : {1, 5})
      if (r >= d) rows[r].insert(r - d), rows[r - d].insert(r);
    if (r % 2 == 0 && r != n / 2) rows[n / 2].insert(r), rows[r].insert(n / 2);
  }
  return from_block_rows(rows, bs);
}

// Entries uniform in [-1, 1]; scalar diagonal +-(sum of its row's other |entries| + [0.5, 1.5]):
// strictly row diagonally dominant (ILU(0) keeps it so), but the diagonal blocks are not column
// dominant, so their Gauss–Jordan does interchange rows.
inline void fill_dominant(HostBsr& A)
{
  const int bs = A.bs;
  for (auto& v : A.val) v = uniform();
  for (index_t i = 0; i < A.n; ++i) {
    const index_t d = A.find(i, i);
    for (int a = 0; a < bs; ++a) {
      double off = 0.0;
      for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
        for (int c = 0; c < bs; ++c)
          if (!(p == d && c == a)) off += std::abs(A.block(p)[a * bs + c]);
      A.block(d)[a * bs + a] = (uniform() < 0 ? -1.0 : 1.0) * (off + uniform(0.5, 1.5));
    }
  }
}

inline HostBsr dominant(HostBsr A)
{
  fill_dominant(A);
  return A;
}

inline std::vector<double> random_vector(size64_t n)
{
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = uniform();
  return v;
}

// C += s * X Y for bs x bs row-major blocks; M += |X| |Y| when M is given.
inline void gemm_acc(int bs, double s, const double* X, const double* Y, double* C, double* M = nullptr)
{
  for (int r = 0; r < bs; ++r)
    for (int m = 0; m < bs; ++m)
      for (int c = 0; c < bs; ++c) {
        C[r * bs + c] += s * X[r * bs + m] * Y[m * bs + c];
        if (M) M[r * bs + c] += std::abs(X[r * bs + m] * Y[m * bs + c]);
      }
}

// The defining block ILU(0) property: over every block (i, j) of the pattern and its entries,
// max |(L U)(i, j) - A(i, j)| / (|A(i, j)| + (|L| |U|)(i, j)), L unit block lower (strictly lower
// blocks of F), U the diagonal and upper blocks of F.
inline double pattern_residual(const HostBsr& A, const HostBsr& F)
{
  const int bs = A.bs;
  const size64_t bs2 = A.bs2();
  std::vector<double> P(bs2), M(bs2);
  double worst = 0.0;
  for (index_t i = 0; i < A.n; ++i)
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      const index_t j = A.col[p];
      std::fill(P.begin(), P.end(), 0.0);
      std::fill(M.begin(), M.end(), 0.0);
      if (j >= i)  // L_ii = I times U_ij
        for (size64_t e = 0; e < bs2; ++e) P[e] = F.block(p)[e], M[e] = std::abs(P[e]);
      for (index_t q = F.row_ptr[i]; q < F.row_ptr[i + 1]; ++q) {  // L_ik U_kj, k < i, k <= j
        const index_t k = F.col[q];
        if (k >= i || k > j) break;
        const index_t u = F.find(k, j);
        if (u >= 0) gemm_acc(bs, 1.0, F.block(q), F.block(u), P.data(), M.data());
      }
      for (size64_t e = 0; e < bs2; ++e) {
        const double d = std::abs(P[e] - A.block(p)[e]);
        const double r = d / (std::abs(A.block(p)[e]) + M[e] + std::numeric_limits<double>::min());
        worst = std::isnan(d) ? INFINITY : std::max(worst, r);
      }
    }
  return worst;
}

// y = L x (L unit block lower from F) and y = U x (diagonal and upper blocks of F).
inline std::vector<double> lower_times(const HostBsr& F, const std::vector<double>& x)
{
  std::vector<double> y(x);
  const int bs = F.bs;
  for (index_t i = 0; i < F.n; ++i)
    for (index_t p = F.row_ptr[i]; p < F.row_ptr[i + 1] && F.col[p] < i; ++p)
      for (int r = 0; r < bs; ++r)
        for (int c = 0; c < bs; ++c) y[size64_t(i) * bs + r] += F.block(p)[r * bs + c] * x[size64_t(F.col[p]) * bs + c];
  return y;
}
inline std::vector<double> upper_times(const HostBsr& F, const std::vector<double>& x)
{
  std::vector<double> y(x.size(), 0.0);
  const int bs = F.bs;
  for (index_t i = 0; i < F.n; ++i)
    for (index_t p = F.row_ptr[i]; p < F.row_ptr[i + 1]; ++p)
      if (F.col[p] >= i)
        for (int r = 0; r < bs; ++r)
          for (int c = 0; c < bs; ++c)
            y[size64_t(i) * bs + r] += F.block(p)[r * bs + c] * x[size64_t(F.col[p]) * bs + c];
  return y;
}
inline std::vector<double> times(const HostBsr& A, const std::vector<double>& x)
{
  std::vector<double> y(x.size(), 0.0);
  const int bs = A.bs;
  for (index_t i = 0; i < A.n; ++i)
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
      for (int r = 0; r < bs; ++r)
        for (int c = 0; c < bs; ++c) y[size64_t(i) * bs + r] += A.block(p)[r * bs + c] * x[size64_t(A.col[p]) * bs + c];
  return y;
}

// Dense (row-major, N = n bs) triangle of the block factors: L with identity diagonal blocks, or
// U with its dense diagonal blocks.
inline std::vector<double> dense_factor(const HostBsr& F, bool lower)
{
  const size64_t N = F.scalar_rows();
  const int bs = F.bs;
  std::vector<double> T(static_cast<std::size_t>(N * N), 0.0);
  for (index_t i = 0; i < F.n; ++i) {
    if (lower)
      for (int a = 0; a < bs; ++a) T[(size64_t(i) * bs + a) * N + size64_t(i) * bs + a] = 1.0;
    for (index_t p = F.row_ptr[i]; p < F.row_ptr[i + 1]; ++p) {
      const index_t j = F.col[p];
      if (lower ? j >= i : j < i) continue;
      for (int a = 0; a < bs; ++a)
        for (int c = 0; c < bs; ++c) T[(size64_t(i) * bs + a) * N + size64_t(j) * bs + c] = F.block(p)[a * bs + c];
    }
  }
  return T;
}

// ISAI residual of M (BSR arrays m_row_ptr / m_col / m_val, block size bs) against the dense T:
// max over the scalar entries of M's blocks of |(T M - I)(i, k)| / (1 + (|T| |M|)(i, k)).
inline double isai_residual(const std::vector<double>& T, size64_t N, int bs, const std::vector<index_t>& m_row_ptr,
                            const std::vector<index_t>& m_col, const std::vector<double>& m_val)
{
  std::vector<double> M(static_cast<std::size_t>(N * N), 0.0);
  const index_t nb = static_cast<index_t>(m_row_ptr.size()) - 1;
  const size64_t bs2 = size64_t(bs) * bs;
  for (index_t i = 0; i < nb; ++i)
    for (index_t p = m_row_ptr[i]; p < m_row_ptr[i + 1]; ++p)
      for (int a = 0; a < bs; ++a)
        for (int c = 0; c < bs; ++c)
          M[(size64_t(i) * bs + a) * N + size64_t(m_col[p]) * bs + c] = m_val[size64_t(p) * bs2 + a * bs + c];
  double worst = 0.0;
  for (index_t i = 0; i < nb; ++i)
    for (index_t p = m_row_ptr[i]; p < m_row_ptr[i + 1]; ++p)
      for (int a = 0; a < bs; ++a)
        for (int c = 0; c < bs; ++c) {
          const size64_t r = size64_t(i) * bs + a, k = size64_t(m_col[p]) * bs + c;
          double s = r == k ? -1.0 : 0.0, mag = 1.0;
          for (size64_t t = 0; t < N; ++t) s += T[r * N + t] * M[t * N + k], mag += std::abs(T[r * N + t] * M[t * N + k]);
          const double e = std::abs(s) / mag;
          worst = std::isnan(e) ? INFINITY : std::max(worst, e);
        }
  return worst;
}

}  // namespace blockres::test_ilu_block
