// Test helpers for the batched Gauss–Huard / Gauss–Jordan kernels: batches of blocks of given
// sizes, block generators (well/ill-conditioned, graded, zero diagonal, singular) and error
// measures computed in long double so they measure the kernels, not the check.
#pragma once

#include "kernels/batched/batched_gh.hpp"
#include "kernels/test/test_rng.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace blockres::test_gh {

// One generator per test program (kernels/test/test_rng.hpp: printed, replayable seed).
inline std::mt19937_64& rng()
{
  static std::mt19937_64 gen = test_rng::seeded("batched_gh");
  return gen;
}

inline double uniform(double a = -1.0, double b = 1.0) { return std::uniform_real_distribution<double>(a, b)(rng()); }
inline int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng()); }

// A batch stored back to back as kernels/batched/batched.hpp describes (host memory).
struct Batch {
  std::vector<int> sizes;
  std::vector<index_t> row_off{0};
  std::vector<size64_t> mat_off{0};
  std::vector<double> values;
  bool uniform = false;

  index_t count() const { return static_cast<index_t>(sizes.size()); }
  int max_size() const { return sizes.empty() ? 1 : *std::max_element(sizes.begin(), sizes.end()); }
  size64_t rows() const { return row_off.back(); }
  double* block(index_t b) { return values.data() + mat_off[b]; }
  const double* block(index_t b) const { return values.data() + mat_off[b]; }

  // The layout over host memory; uniform batches leave the offset arrays out as the API allows.
  kernels::BatchLayout layout() const
  {
    kernels::BatchLayout L;
    L.count = count();
    L.max_size = max_size();
    if (uniform) {
      L.uniform = L.max_size;
    } else {
      L.row_off = row_off.data();
      L.mat_off = mat_off.data();
    }
    return L;
  }
};

inline Batch make_batch(const std::vector<int>& sizes, bool uniform)
{
  Batch B;
  B.sizes = sizes;
  B.uniform = uniform;
  for (int n : sizes) {
    B.row_off.push_back(B.row_off.back() + n);
    B.mat_off.push_back(B.mat_off.back() + size64_t(n) * n);
  }
  B.values.assign(static_cast<std::size_t>(B.mat_off.back()), 0.0);
  return B;
}

inline Batch uniform_batch(int n, index_t count) { return make_batch(std::vector<int>(count, n), true); }

// Every size 1..max_size at least `reps` times, shuffled, plus `extra` random sizes: neighbouring
// blocks (which share a warp on the GPU) have different sizes.
inline Batch variable_batch(int min_size, int max_size, int reps, int extra)
{
  std::vector<int> sizes;
  for (int r = 0; r < reps; ++r)
    for (int n = min_size; n <= max_size; ++n) sizes.push_back(n);
  for (int e = 0; e < extra; ++e) sizes.push_back(uniform_int(min_size, max_size));
  std::shuffle(sizes.begin(), sizes.end(), rng());
  return make_batch(sizes, false);
}

enum class Kind {
  random,             // entries uniform in (-1, 1)
  well_conditioned,   // U diag(sigma) V^T, sigma from 1 to 1e-2 (cond_2 = 100)
  ill_conditioned,    // U diag(sigma) V^T, sigma from 1 to 1e-10 (cond_2 = 1e10)
  graded_rows,        // well_conditioned, row i scaled by 10^(-10 i / (n-1))
  graded_cols,        // well_conditioned, column j scaled by 10^(-10 j / (n-1))
  zero_diagonal,      // random with a zero diagonal (n > 1)
  permuted_diagonal,  // a derangement times a diagonal in [1, 2]: zero diagonal, cond <= 2
};

inline const char* to_string(Kind k)
{
  switch (k) {
    case Kind::random: return "random";
    case Kind::well_conditioned: return "well_conditioned";
    case Kind::ill_conditioned: return "ill_conditioned";
    case Kind::graded_rows: return "graded_rows";
    case Kind::graded_cols: return "graded_cols";
    case Kind::zero_diagonal: return "zero_diagonal";
    case Kind::permuted_diagonal: return "permuted_diagonal";
  }
  return "?";
}

constexpr Kind all_kinds[] = {Kind::random,      Kind::well_conditioned, Kind::ill_conditioned,  Kind::graded_rows,
                              Kind::graded_cols, Kind::zero_diagonal,    Kind::permuted_diagonal};

// Random orthogonal n x n matrix: a product of n random Householder reflections.
inline std::vector<double> random_orthogonal(int n)
{
  std::vector<double> Q(size_t(n) * n, 0.0), v(n);
  for (int i = 0; i < n; ++i) Q[i * n + i] = 1.0;
  for (int r = 0; r < n; ++r) {
    double nrm = 0.0;
    for (auto& e : v) {
      e = uniform();
      nrm += e * e;
    }
    nrm = std::sqrt(nrm);
    for (auto& e : v) e /= nrm;
    for (int i = 0; i < n; ++i) {  // Q <- Q (I - 2 v v^T)
      double s = 0.0;
      for (int j = 0; j < n; ++j) s += Q[i * n + j] * v[j];
      for (int j = 0; j < n; ++j) Q[i * n + j] -= 2.0 * s * v[j];
    }
  }
  return Q;
}

inline void fill_block(Kind kind, int n, double* a)
{
  switch (kind) {
    case Kind::well_conditioned:
    case Kind::ill_conditioned: {
      const double cond = kind == Kind::ill_conditioned ? 1e10 : 1e2;
      const auto U = random_orthogonal(n), V = random_orthogonal(n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          double s = 0.0;
          for (int k = 0; k < n; ++k) s += U[i * n + k] * (n == 1 ? 1.0 : std::pow(cond, -double(k) / (n - 1))) * V[j * n + k];
          a[i * n + j] = s;
        }
      return;
    }
    case Kind::permuted_diagonal: {
      std::vector<int> p(n);
      std::iota(p.begin(), p.end(), 0);
      if (n > 1) std::rotate(p.begin(), p.begin() + uniform_int(1, n - 1), p.end());  // no fixed point
      std::fill(a, a + size_t(n) * n, 0.0);
      for (int i = 0; i < n; ++i) a[i * n + p[i]] = (uniform() < 0 ? -1.0 : 1.0) * uniform(1.0, 2.0);
      return;
    }
    default: break;
  }
  // The graded kinds grade a well-conditioned block (cond 1e2), so their condition comes from
  // the grading (about 1e10) and not from an occasionally near-singular random start: a plain
  // random start put the last pivot of a column-graded 9x9 block below n eps max|A| (info 9)
  // about once in 30 runs.
  if (kind == Kind::graded_rows || kind == Kind::graded_cols)
    fill_block(Kind::well_conditioned, n, a);
  else
    for (int e = 0; e < n * n; ++e) a[e] = uniform();
  const double decades = 10.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (kind == Kind::graded_rows && n > 1) a[i * n + j] *= std::pow(10.0, -decades * i / (n - 1));
      if (kind == Kind::graded_cols && n > 1) a[i * n + j] *= std::pow(10.0, -decades * j / (n - 1));
      if (kind == Kind::zero_diagonal && i == j && n > 1) a[i * n + j] = 0.0;  // 1x1 would be singular
    }
}

inline void fill_batch(Batch& B, Kind kind)
{
  for (index_t b = 0; b < B.count(); ++b) fill_block(kind, B.sizes[b], B.block(b));
}

// Singular blocks whose failure does not depend on rounding, with the info they must produce.
enum class Singular { zero_column, zero_row, duplicate_rows_exact, duplicate_rows };

// Overwrites block b (a random well-conditioned block first) and returns the expected info.
inline int make_singular(Singular s, int n, double* a)
{
  fill_block(Kind::well_conditioned, n, a);
  switch (s) {
    case Singular::zero_column: {  // never chosen before the last step, stays exactly zero
      const int c = uniform_int(0, n - 1);
      for (int i = 0; i < n; ++i) a[i * n + c] = 0.0;
      return n;
    }
    case Singular::zero_row: {  // row r stays exactly zero until step r
      const int r = uniform_int(0, n - 1);
      for (int j = 0; j < n; ++j) a[r * n + j] = 0.0;
      return r + 1;
    }
    case Singular::duplicate_rows_exact: {
      // Rows 0 and 1 equal, with a unique largest entry 2.0 (a power of two): step 0 divides by it
      // exactly, so row 1 becomes exactly zero at step 1 whatever the operation order.
      if (n < 2) return 0;
      for (int j = 0; j < n; ++j) a[j] = 0.5 * uniform();
      a[uniform_int(0, n - 1)] = uniform() < 0 ? -2.0 : 2.0;
      for (int j = 0; j < n; ++j) a[n + j] = a[j];
      return 2;
    }
    case Singular::duplicate_rows: {
      // Rows i < j both equal to +-2 e_c, and column c zero in the rows above i: no earlier step
      // picks column c, step i picks it with an exact power-of-two pivot, and row j then
      // eliminates to exactly zero at step j, whatever the operation order (GH and GJE alike).
      if (n < 2) return 0;
      const int i = uniform_int(0, n - 2), j = uniform_int(i + 1, n - 1), c = uniform_int(0, n - 1);
      const double v = uniform() < 0 ? -2.0 : 2.0;
      for (int l = 0; l < i; ++l) a[l * n + c] = 0.0;
      for (int q = 0; q < n; ++q) a[i * n + q] = a[j * n + q] = q == c ? v : 0.0;
      return j + 1;
    }
  }
  return 0;
}

// ---- error measures (infinity norms, long double accumulation) --------------------------------

inline long double norm_inf(int n, const double* a)
{
  long double m = 0;
  for (int i = 0; i < n; ++i) {
    long double s = 0;
    for (int j = 0; j < n; ++j) s += std::fabs(a[i * n + j]);
    m = std::max(m, s);
  }
  return m;
}

inline long double vec_norm_inf(int n, const double* x)
{
  long double m = 0;
  for (int i = 0; i < n; ++i) m = std::max<long double>(m, std::fabs(x[i]));
  return m;
}

// ||A x - b|| / (||A|| ||x||), or infinity for non-finite x.
inline double backward_error(int n, const double* A, const double* x, const double* b)
{
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return INFINITY;
  long double r = 0;
  for (int i = 0; i < n; ++i) {
    long double s = -static_cast<long double>(b[i]);
    for (int j = 0; j < n; ++j) s += static_cast<long double>(A[i * n + j]) * x[j];
    r = std::max(r, fabsl(s));
  }
  const long double den = norm_inf(n, A) * vec_norm_inf(n, x);
  return den > 0 ? static_cast<double>(r / den) : (r == 0 ? 0.0 : INFINITY);
}

// ||A X - I|| / (||A|| ||X||) for an approximate inverse X.
inline double inverse_residual(int n, const double* A, const double* X)
{
  for (int e = 0; e < n * n; ++e)
    if (!std::isfinite(X[e])) return INFINITY;
  long double m = 0;
  for (int i = 0; i < n; ++i) {
    long double row = 0;
    for (int j = 0; j < n; ++j) {
      long double s = (i == j) ? -1.0L : 0.0L;
      for (int k = 0; k < n; ++k) s += static_cast<long double>(A[i * n + k]) * X[k * n + j];
      row += fabsl(s);
    }
    m = std::max(m, row);
  }
  return static_cast<double>(m / (norm_inf(n, A) * norm_inf(n, X)));
}

// b = A x in long double (so x is the exact solution up to one rounding of b).
inline void matvec(int n, const double* A, const double* x, double* b)
{
  for (int i = 0; i < n; ++i) {
    long double s = 0;
    for (int j = 0; j < n; ++j) s += static_cast<long double>(A[i * n + j]) * x[j];
    b[i] = static_cast<double>(s);
  }
}

// max |x - y| / max |y| over one block (y the reference).
inline double rel_diff(int n, const double* x, const double* y)
{
  long double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return INFINITY;
    num = std::max<long double>(num, std::fabs(x[i] - y[i]));
    den = std::max<long double>(den, std::fabs(y[i]));
  }
  return static_cast<double>(den > 0 ? num / den : num);
}

// Largest |y - y_ref|_i / (n eps (|X| |x|)_i) over a batch: two evaluations of the same dot
// products in any order differ by at most n eps (|X| |x|)_i (each is within gamma_n of the exact
// value), so a GEMV is correct when this is <= 1.
inline double gemv_error_ratio(const Batch& B, const std::vector<double>& X, const std::vector<double>& x,
                               const std::vector<double>& y, const std::vector<double>& y_ref)
{
  double worst = 0.0;
  for (index_t k = 0; k < B.count(); ++k) {
    const int n = B.sizes[k];
    const double* m = X.data() + B.mat_off[k];
    for (int i = 0; i < n; ++i) {
      const size64_t r = B.row_off[k] + i;
      if (!std::isfinite(y[r])) return INFINITY;
      long double abs_sum = 0;
      for (int j = 0; j < n; ++j) abs_sum += std::fabs(m[i * n + j] * x[B.row_off[k] + j]);
      const long double diff = std::fabs(static_cast<long double>(y[r]) - y_ref[r]);
      const long double bound = n * DBL_EPSILON * abs_sum;
      if (diff > 0) worst = std::max(worst, static_cast<double>(bound > 0 ? diff / bound : INFINITY));
    }
  }
  return worst;
}

// The bound every backward-stable check uses: 100 n eps.
inline double stable_bound(int n) { return 100.0 * n * DBL_EPSILON; }

// True when perm[0..n) is a permutation of 0..n-1.
inline bool is_permutation(int n, const index_t* p)
{
  std::vector<char> seen(n, 0);
  for (int i = 0; i < n; ++i) {
    if (p[i] < 0 || p[i] >= n || seen[p[i]]) return false;
    seen[p[i]] = 1;
  }
  return true;
}

}  // namespace blockres::test_gh
