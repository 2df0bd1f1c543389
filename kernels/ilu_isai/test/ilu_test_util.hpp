// Test helpers for ILU(0): host CSR matrices with stencil, dense, block and random BSR-expanded
// patterns, diagonally dominant random values, and checks that do not use the code under test
// (the L*U product on the pattern or in full, triangular products, relative differences).
#pragma once

#include "kernels/ilu_isai/ilu.hpp"
#include "kernels/test/test_rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace blockres::test_ilu {

// One generator per test program (kernels/test/test_rng.hpp: printed, replayable seed).
inline std::mt19937_64& rng()
{
  static std::mt19937_64 gen = test_rng::seeded("ILU");
  return gen;
}

inline double uniform(double a = -1.0, double b = 1.0) { return std::uniform_real_distribution<double>(a, b)(rng()); }
inline index_t uniform_index(index_t lo, index_t hi)  // in [lo, hi]
{
  return std::uniform_int_distribution<index_t>(lo, hi)(rng());
}

// Host CSR matrix, columns sorted within each row.
struct Csr {
  index_t n = 0;
  std::vector<index_t> row_ptr{0}, col;
  std::vector<double> val;

  index_t nnz() const { return row_ptr.back(); }
  kernels::CsrView<double> view() { return {n, row_ptr.data(), col.data(), val.data()}; }
  kernels::CsrView<const double> cview() const { return {n, row_ptr.data(), col.data(), val.data()}; }
  // Position of (i, j), or -1 when it is not in the pattern.
  index_t find(index_t i, index_t j) const
  {
    const auto first = col.begin() + row_ptr[i], last = col.begin() + row_ptr[i + 1];
    const auto it = std::lower_bound(first, last, j);
    return it != last && *it == j ? index_t(it - col.begin()) : -1;
  }
  double at(index_t i, index_t j) const
  {
    const index_t p = find(i, j);
    return p < 0 ? 0.0 : val[p];
  }
};

// CSR from per-row column sets (values zero).
inline Csr from_rows(const std::vector<std::set<index_t>>& rows)
{
  Csr A;
  A.n = static_cast<index_t>(rows.size());
  for (const auto& r : rows) {
    A.col.insert(A.col.end(), r.begin(), r.end());
    A.row_ptr.push_back(static_cast<index_t>(A.col.size()));
  }
  A.val.assign(A.col.size(), 0.0);
  return A;
}

// ---- Patterns (every row holds its diagonal) ---------------------------------------------------

inline Csr dense_pattern(index_t n)
{
  std::vector<std::set<index_t>> rows(n);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) rows[i].insert(j);
  return from_rows(rows);
}

inline Csr tridiagonal_pattern(index_t n)
{
  std::vector<std::set<index_t>> rows(n);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = std::max<index_t>(i - 1, 0); j <= std::min<index_t>(i + 1, n - 1); ++j) rows[i].insert(j);
  return from_rows(rows);
}

inline Csr diagonal_pattern(index_t n)
{
  std::vector<std::set<index_t>> rows(n);
  for (index_t i = 0; i < n; ++i) rows[i].insert(i);
  return from_rows(rows);
}

// Dense diagonal blocks of the given sizes.
inline Csr block_diagonal_pattern(const std::vector<index_t>& sizes)
{
  std::vector<std::set<index_t>> rows;
  index_t start = 0;
  for (index_t s : sizes) {
    for (index_t i = 0; i < s; ++i) {
      rows.emplace_back();
      for (index_t j = 0; j < s; ++j) rows.back().insert(start + j);
    }
    start += s;
  }
  return from_rows(rows);
}

// 5-point stencil on nx x ny (row x + nx y), 7-point on nx x ny x nz (row x + nx (y + ny z)).
inline Csr stencil_3d_pattern(index_t nx, index_t ny, index_t nz)
{
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(nx) * ny * nz);
  for (index_t z = 0; z < nz; ++z)
    for (index_t y = 0; y < ny; ++y)
      for (index_t x = 0; x < nx; ++x) {
        auto& r = rows[x + nx * (y + ny * z)];
        const auto id = [&](index_t a, index_t b, index_t c) { return a + nx * (b + ny * c); };
        r.insert(id(x, y, z));
        if (x > 0) r.insert(id(x - 1, y, z));
        if (x + 1 < nx) r.insert(id(x + 1, y, z));
        if (y > 0) r.insert(id(x, y - 1, z));
        if (y + 1 < ny) r.insert(id(x, y + 1, z));
        if (z > 0) r.insert(id(x, y, z - 1));
        if (z + 1 < nz) r.insert(id(x, y, z + 1));
      }
  return from_rows(rows);
}
inline Csr stencil_2d_pattern(index_t nx, index_t ny) { return stencil_3d_pattern(nx, ny, 1); }

// Scalar expansion of a random BSR pattern with nb block rows of size bs: every block row holds
// its diagonal block and `extra` random off-diagonal blocks, within `band` block columns of the
// diagonal (band <= 0: anywhere). Each block is dense, so row r bs + a holds the columns
// c bs + 0 .. bs-1 of each block column c of block row r.
inline Csr random_bsr_pattern(index_t nb, int bs, int extra, index_t band = 0)
{
  std::vector<std::set<index_t>> block_rows(nb);
  for (index_t r = 0; r < nb; ++r) {
    block_rows[r].insert(r);
    const index_t lo = band > 0 ? std::max<index_t>(0, r - band) : 0;
    const index_t hi = band > 0 ? std::min<index_t>(nb - 1, r + band) : nb - 1;
    for (int e = 0; e < extra; ++e) block_rows[r].insert(uniform_index(lo, hi));
  }
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(nb) * bs);
  for (index_t r = 0; r < nb; ++r)
    for (int a = 0; a < bs; ++a)
      for (index_t c : block_rows[r])
        for (int b = 0; b < bs; ++b) rows[r * bs + a].insert(c * bs + b);
  return from_rows(rows);
}

// Random scalar pattern: the diagonal and `extra` random columns per row.
inline Csr random_pattern(index_t n, int extra)
{
  std::vector<std::set<index_t>> rows(n);
  for (index_t i = 0; i < n; ++i) {
    rows[i].insert(i);
    for (int e = 0; e < extra; ++e) rows[i].insert(uniform_index(0, n - 1));
  }
  return from_rows(rows);
}

// Off-diagonal entries uniform in [-1, 1], diagonal +-(sum of the row's |off-diagonal| + [0.5, 1.5]):
// strictly row diagonally dominant, which every ILU(0) step preserves (the Schur complement of
// a dominant matrix is dominant and dropping fill only helps), so the pivots stay well away
// from zero.
inline void fill_dominant(Csr& A)
{
  for (index_t i = 0; i < A.n; ++i) {
    double off = 0.0;
    index_t d = -1;
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      if (A.col[p] == i) {
        d = p;
      } else {
        A.val[p] = uniform();
        off += std::abs(A.val[p]);
      }
    }
    A.val[d] = (uniform() < 0 ? -1.0 : 1.0) * (off + uniform(0.5, 1.5));
  }
}

template <class P>
Csr dominant(P pattern)
{
  Csr A = std::move(pattern);
  fill_dominant(A);
  return A;
}

// ---- Checks ------------------------------------------------------------------------------------

inline double max_abs(const std::vector<double>& v)
{
  double m = 0.0;
  for (double e : v) m = std::max(m, std::abs(e));
  return m;
}

// max |x - y| / max |y| (NaN anywhere in x gives +inf, never a pass).
inline double rel_diff(const std::vector<double>& x, const std::vector<double>& y)
{
  if (x.size() != y.size()) return INFINITY;
  double d = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double e = std::abs(x[k] - y[k]);
    if (!(e <= d)) d = std::isnan(e) ? INFINITY : e;
  }
  const double m = max_abs(y);
  return m > 0 ? d / m : d;
}

// (L U)(i, j) from factors stored in LU's pattern (L unit lower, U upper), looked up entry by
// entry: sum over the strictly lower entries (i, k), k <= j, of l_ik u_kj, plus u_ij when j >= i.
inline double lu_product_entry(const Csr& LU, index_t i, index_t j)
{
  double s = j >= i ? LU.at(i, j) : 0.0;
  for (index_t p = LU.row_ptr[i]; p < LU.row_ptr[i + 1]; ++p) {
    const index_t k = LU.col[p];
    if (k >= i || k > j) break;
    s += LU.val[p] * LU.at(k, j);
  }
  return s;
}

// The defining ILU(0) property: max over the pattern of |(L U)(i, j) - a_ij| / max |a|.
inline double pattern_residual(const Csr& A, const Csr& LU)
{
  double worst = 0.0;
  for (index_t i = 0; i < A.n; ++i)
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      const double e = std::abs(lu_product_entry(LU, i, A.col[p]) - A.val[p]);
      worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
  return A.n == 0 ? 0.0 : worst / max_abs(A.val);
}

// Every entry of L U against A (zero outside the pattern): max |L U - A| / max |A|.
inline double full_residual(const Csr& A, const Csr& LU)
{
  double worst = 0.0;
  for (index_t i = 0; i < A.n; ++i)
    for (index_t j = 0; j < A.n; ++j) {
      const double e = std::abs(lu_product_entry(LU, i, j) - A.at(i, j));
      worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
  return A.n == 0 ? 0.0 : worst / max_abs(A.val);
}

// y = L x (unit lower part of LU) and y = U x (diagonal and upper part).
inline std::vector<double> lower_times(const Csr& LU, const std::vector<double>& x)
{
  std::vector<double> y(x);
  for (index_t i = 0; i < LU.n; ++i)
    for (index_t p = LU.row_ptr[i]; p < LU.row_ptr[i + 1]; ++p)
      if (LU.col[p] < i) y[i] += LU.val[p] * x[LU.col[p]];
  return y;
}
inline std::vector<double> upper_times(const Csr& LU, const std::vector<double>& x)
{
  std::vector<double> y(x.size(), 0.0);
  for (index_t i = 0; i < LU.n; ++i)
    for (index_t p = LU.row_ptr[i]; p < LU.row_ptr[i + 1]; ++p)
      if (LU.col[p] >= i) y[i] += LU.val[p] * x[LU.col[p]];
  return y;
}

inline std::vector<double> random_vector(index_t n)
{
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = uniform();
  return v;
}

}  // namespace blockres::test_ilu
