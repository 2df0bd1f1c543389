// Test helpers for the ISAI kernels: ILU factor storages (one CSR matrix holding both triangles)
// with well-conditioned triangles on random, banded, hub, tridiagonal and block-diagonal
// patterns; dense references (boolean matrix powers, triangular inverses, T x); the residual
// (T M - I) on the pattern, computed from LU and M alone (independent of the generator).
#pragma once

#include "kernels/ilu_isai/isai.hpp"
#include "kernels/test/test_rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace blockres::test_isai {

using kernels::IsaiPattern;
using kernels::Triangle;

// One generator per test program (kernels/test/test_rng.hpp: printed, replayable seed).
inline std::mt19937_64& rng()
{
  static std::mt19937_64 gen = test_rng::seeded("ISAI");
  return gen;
}

inline double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng()); }
inline index_t uniform_index(index_t lo, index_t hi) { return std::uniform_int_distribution<index_t>(lo, hi)(rng()); }

constexpr Triangle both_triangles[] = {Triangle::unit_lower, Triangle::upper};
inline const char* to_string(Triangle t) { return t == Triangle::unit_lower ? "L" : "U"; }
inline bool in_triangle(Triangle t, index_t i, index_t c) { return t == Triangle::unit_lower ? c <= i : c >= i; }

// Scalar CSR matrix in host memory.
struct Csr {
  index_t n = 0;
  std::vector<index_t> row_ptr{0}, col;
  std::vector<double> val;
  kernels::CsrView<const double> view() const { return {n, row_ptr.data(), col.data(), val.data()}; }
};

// An LU storage on the given rows' columns (diagonal added, sorted, duplicates dropped), with
// values that make every principal submatrix of both triangles well conditioned:
//   strictly lower: uniform, |row sum| <= 0.5    -> ||L(J,J)^{-1}||_inf <= 2;
//   upper: diagonal +-[1, 2], off-diagonal row sum <= |u_ii| / 2  -> D^{-1} U(J,J) = I + N with
//   ||N||_inf <= 1/2.
// The diagonal holds U's values (never 1), so the unit diagonal of L must be implied.
inline Csr lu_from_rows(std::vector<std::vector<index_t>> rows)
{
  Csr A;
  A.n = static_cast<index_t>(rows.size());
  for (index_t i = 0; i < A.n; ++i) {
    auto& r = rows[static_cast<std::size_t>(i)];
    r.push_back(i);
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    const auto nlower = std::count_if(r.begin(), r.end(), [i](index_t c) { return c < i; });
    const auto nupper = std::count_if(r.begin(), r.end(), [i](index_t c) { return c > i; });
    const double d = (uniform(0, 1) < 0.5 ? -1.0 : 1.0) * uniform(1.0, 2.0);
    for (index_t c : r) {
      A.col.push_back(c);
      if (c < i) A.val.push_back(uniform(-0.5, 0.5) / double(nlower));
      else if (c > i) A.val.push_back(uniform(-0.5, 0.5) * std::abs(d) / double(nupper));
      else A.val.push_back(d);
    }
    A.row_ptr.push_back(static_cast<index_t>(A.col.size()));
  }
  return A;
}

// Fresh random values (same rules) on A's pattern.
inline Csr with_new_values(const Csr& A)
{
  std::vector<std::vector<index_t>> rows(static_cast<std::size_t>(A.n));
  for (index_t i = 0; i < A.n; ++i) rows[i].assign(A.col.begin() + A.row_ptr[i], A.col.begin() + A.row_ptr[i + 1]);
  return lu_from_rows(std::move(rows));
}

// Random rows: `per_side` random columns within `window` on each side of the diagonal, plus
// symmetric "hub" entries (i, h), (h, i) for |i - h| <= hub_len at every hub_every-th column h
// (hub_every = 0: none), which give L and U columns longer than a warp.
// The off-diagonal columns of each row (repeats possible; the scalar and the block test patterns
// both use this).
inline std::vector<std::vector<index_t>> random_band_with_hubs(index_t n, int per_side, index_t window,
                                                               index_t hub_every, index_t hub_len)
{
  std::vector<std::vector<index_t>> rows(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i)
    for (int e = 0; e < per_side; ++e) {
      if (i > 0) rows[i].push_back(uniform_index(std::max<index_t>(0, i - window), i - 1));
      if (i < n - 1) rows[i].push_back(uniform_index(i + 1, std::min<index_t>(n - 1, i + window)));
    }
  if (hub_every > 0)
    for (index_t h = hub_every / 2; h < n; h += hub_every)
      for (index_t i = std::max<index_t>(0, h - hub_len); i <= std::min<index_t>(n - 1, h + hub_len); ++i) {
        rows[i].push_back(h);
        rows[h].push_back(i);
      }
  return rows;
}

inline Csr random_lu(index_t n, int per_side, index_t window, index_t hub_every = 0, index_t hub_len = 0)
{
  return lu_from_rows(random_band_with_hubs(n, per_side, window, hub_every, hub_len));
}

// Every (i, c) with |i - c| <= w.
inline Csr band_lu(index_t n, index_t w)
{
  std::vector<std::vector<index_t>> rows(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i)
    for (index_t c = std::max<index_t>(0, i - w); c <= std::min<index_t>(n - 1, i + w); ++c) rows[i].push_back(c);
  return lu_from_rows(std::move(rows));
}

// Dense diagonal blocks of the given sizes.
inline Csr block_diag_lu(const std::vector<index_t>& sizes)
{
  std::vector<std::vector<index_t>> rows;
  index_t start = 0;
  for (index_t b : sizes) {
    for (index_t i = 0; i < b; ++i) {
      rows.emplace_back();
      for (index_t c = 0; c < b; ++c) rows.back().push_back(start + c);
    }
    start += b;
  }
  return lu_from_rows(std::move(rows));
}

// ---- Dense references (small n) ----------------------------------------------------------------

using BoolMatrix = std::vector<char>;  // n x n, row-major

// The pattern of T (the `tri` part of LU's pattern, diagonal included).
inline BoolMatrix dense_pattern(const Csr& A, Triangle tri)
{
  const std::size_t n = static_cast<std::size_t>(A.n);
  BoolMatrix P(n * n, 0);
  for (index_t i = 0; i < A.n; ++i) {
    P[i * n + i] = 1;
    for (index_t q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q)
      if (in_triangle(tri, i, A.col[q])) P[i * n + A.col[q]] = 1;
  }
  return P;
}

// P^k by repeated dense boolean products.
inline BoolMatrix bool_power(const BoolMatrix& P, index_t n, int k)
{
  const std::size_t N = static_cast<std::size_t>(n);
  BoolMatrix R = P;
  for (int step = 1; step < k; ++step) {
    BoolMatrix Q(N * N, 0);
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t l = 0; l < N; ++l)
        if (R[i * N + l])
          for (std::size_t j = 0; j < N; ++j) Q[i * N + j] |= P[l * N + j];
    R = std::move(Q);
  }
  return R;
}

// The pattern of an IsaiPattern's CSR view as a dense boolean matrix.
inline BoolMatrix dense_of(const IsaiPattern& p)
{
  const std::size_t n = static_cast<std::size_t>(p.n);
  BoolMatrix S(n * n, 0);
  for (index_t i = 0; i < p.n; ++i)
    for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e) S[i * n + p.col[e]] = 1;
  return S;
}

// T as a dense n x n matrix (unit diagonal for unit_lower).
inline std::vector<double> dense_triangle(const Csr& A, Triangle tri)
{
  const std::size_t n = static_cast<std::size_t>(A.n);
  std::vector<double> T(n * n, 0.0);
  for (index_t i = 0; i < A.n; ++i) {
    for (index_t q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q)
      if (in_triangle(tri, i, A.col[q])) T[i * n + A.col[q]] = A.val[q];
    if (tri == Triangle::unit_lower) T[i * n + i] = 1.0;
  }
  return T;
}

// T^{-1} (dense, row-major) by row-oriented substitution on each column of I.
inline std::vector<double> dense_triangle_inverse(const std::vector<double>& T, index_t n, Triangle tri)
{
  const std::size_t N = static_cast<std::size_t>(n);
  std::vector<double> X(N * N, 0.0);
  for (std::size_t j = 0; j < N; ++j) {
    if (tri == Triangle::unit_lower) {
      for (std::size_t i = 0; i < N; ++i) {
        double s = i == j ? 1.0 : 0.0;
        for (std::size_t l = 0; l < i; ++l) s -= T[i * N + l] * X[l * N + j];
        X[i * N + j] = s / T[i * N + i];
      }
    } else {
      for (std::size_t i = N; i-- > 0;) {
        double s = i == j ? 1.0 : 0.0;
        for (std::size_t l = i + 1; l < N; ++l) s -= T[i * N + l] * X[l * N + j];
        X[i * N + j] = s / T[i * N + i];
      }
    }
  }
  return X;
}

// ---- Checks -----------------------------------------------------------------------------------

// max over (i, j) in S of |(T M - I)(i, j)| / ((|T| |M|)(i, j) + delta_ij): the componentwise
// backward-error scale of a substitution, which the solves meet to a small multiple of m eps.
// T M is formed row by row from LU and M's CSR arrays (a sparse accumulator), nothing else.
inline double max_pattern_residual(const Csr& A, Triangle tri, const IsaiPattern& p, const std::vector<double>& m)
{
  const std::size_t n = static_cast<std::size_t>(A.n);
  std::vector<double> acc(n, 0.0), mag(n, 0.0);
  double worst = 0.0;
  for (index_t i = 0; i < A.n; ++i) {
    // Row i of T M = sum over T(i, c) of T(i, c) * row c of M (LU's diagonal entry stands for
    // L's unit diagonal when tri is unit_lower; every row of LU has one).
    for (index_t q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q) {
      const index_t c = A.col[q];
      if (!in_triangle(tri, i, c)) continue;
      const double t = (c == i && tri == Triangle::unit_lower) ? 1.0 : A.val[q];
      for (index_t e = p.row_ptr[c]; e < p.row_ptr[c + 1]; ++e) {
        acc[p.col[e]] += t * m[e];
        mag[p.col[e]] += std::abs(t * m[e]);
      }
    }
    for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e) {
      const index_t j = p.col[e];
      const double delta = i == j ? 1.0 : 0.0;
      const double num = std::abs(acc[j] - delta), den = mag[j] + delta;
      const double r = den > 0.0 ? num / den : (num == 0.0 ? 0.0 : std::numeric_limits<double>::infinity());
      worst = std::max(worst, std::isnan(r) ? std::numeric_limits<double>::infinity() : r);
    }
    // Clear what the rows of M touched.
    for (index_t q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q)
      if (in_triangle(tri, i, A.col[q]))
        for (index_t e = p.row_ptr[A.col[q]]; e < p.row_ptr[A.col[q] + 1]; ++e) acc[p.col[e]] = mag[p.col[e]] = 0.0;
  }
  return worst;
}

// Column-normwise relative difference of two value arrays of M (CSR order of p):
// max over columns j of max_i |x(i, j) - y(i, j)| / max_i |y(i, j)|; NaN anywhere gives infinity.
inline double max_column_rel_diff(const IsaiPattern& p, const std::vector<double>& x, const std::vector<double>& y)
{
  double worst = 0.0;
  for (index_t j = 0; j < p.n; ++j) {
    double diff = 0.0, scale = 0.0;
    for (index_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e) {
      const index_t k = p.csr_pos[e];
      const double d = std::abs(x[k] - y[k]);
      diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(diff, d);
      scale = std::max(scale, std::abs(y[k]));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

inline std::size_t count_non_finite(const std::vector<double>& v)
{
  return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](double e) { return !std::isfinite(e); }));
}

inline std::vector<double> random_vector(index_t n)
{
  std::vector<double> x(static_cast<std::size_t>(n));
  for (auto& e : x) e = uniform(-1.0, 1.0);
  return x;
}

// |T| |x| (the scale of the rounding error of y = T x), row by row from LU.
inline std::vector<double> abs_triangle_times(const Csr& A, Triangle tri, const std::vector<double>& x)
{
  std::vector<double> s(static_cast<std::size_t>(A.n), 0.0);
  for (index_t i = 0; i < A.n; ++i) {
    for (index_t q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q)
      if (A.col[q] != i && in_triangle(tri, i, A.col[q])) s[i] += std::abs(A.val[q] * x[A.col[q]]);
    if (tri == Triangle::unit_lower) s[i] += std::abs(x[i]);
    else
      for (index_t q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q)
        if (A.col[q] == i) s[i] += std::abs(A.val[q] * x[i]);
  }
  return s;
}

}  // namespace blockres::test_isai
