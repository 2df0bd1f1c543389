// Test helpers for the batched LU: batches of blocks of given sizes and kinds (well and ill
// conditioned, pivot-forcing, singular), residual checks and an independent naive solve.
#pragma once

#include "kernels/batched/batched.hpp"
#include "kernels/test/test_rng.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace blockres::test_lu {

// One generator per test program (kernels/test/test_rng.hpp: printed, replayable seed).
inline std::mt19937_64& rng()
{
  static std::mt19937_64 gen = test_rng::seeded("batched LU");
  return gen;
}

inline double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng()); }

enum class Kind {
  random,            // entries uniform in [-1, 1]
  well_conditioned,  // rows of (R + diag(+-(2 sqrt(n) + 1))) shuffled: cond < 4, pivoting undoes the shuffle
  zero_diagonal,     // random with a zero diagonal (n > 1): step 0 must interchange
  ill_conditioned,   // H1 H2 diag(1 .. 1e-10) H3 H4 with random Householder reflectors: cond = 1e10
  row_graded,        // diag(10^(-10 i/(n-1))) (R + s I)
  col_graded,        // (R + s I) diag(10^(-10 j/(n-1)))
  ternary,           // entries in {-1, 0, 1}: many exact ties in the pivot search
  zero_column,       // random with column n/2 zero: info = n/2 + 1
  duplicate_row,     // random with row n-1 equal to row 0: exactly singular, info > 0
};

inline const char* name(Kind k)
{
  switch (k) {
    case Kind::random: return "random";
    case Kind::well_conditioned: return "well_conditioned";
    case Kind::zero_diagonal: return "zero_diagonal";
    case Kind::ill_conditioned: return "ill_conditioned";
    case Kind::row_graded: return "row_graded";
    case Kind::col_graded: return "col_graded";
    case Kind::ternary: return "ternary";
    case Kind::zero_column: return "zero_column";
    case Kind::duplicate_row: return "duplicate_row";
  }
  return "?";
}

// Kinds whose blocks factor (info 0) for every n >= 1; ternary blocks may be singular.
inline bool nonsingular(Kind k)
{
  return k != Kind::ternary && k != Kind::zero_column && k != Kind::duplicate_row;
}

// a <- (I - 2 v v^T / v^T v) a (left) or a (I - 2 v v^T / v^T v) (right), v random.
inline void householder(int n, double* a, bool left)
{
  std::vector<double> v(n);
  double vv = 0.0;
  for (auto& e : v) e = uniform(-1, 1), vv += e * e;
  if (vv == 0.0) return;
  for (int k = 0; k < n; ++k) {  // column k (left) or row k (right)
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += v[i] * (left ? a[i * n + k] : a[k * n + i]);
    s *= 2.0 / vv;
    for (int i = 0; i < n; ++i) (left ? a[i * n + k] : a[k * n + i]) -= s * v[i];
  }
}

inline void fill(Kind kind, int n, double* a)
{
  for (long e = 0; e < long(n) * n; ++e) a[e] = uniform(-1, 1);
  const auto grade = [n](int i) { return n > 1 ? std::pow(10.0, -10.0 * i / (n - 1)) : 1.0; };
  switch (kind) {
    case Kind::random: break;
    case Kind::well_conditioned: {
      const double s = 2.0 * std::sqrt(double(n)) + 1.0;
      for (int i = 0; i < n; ++i) a[i * n + i] += uniform(-1, 1) < 0 ? -s : s;
      std::vector<int> perm(n);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng());
      std::vector<double> c(a, a + long(n) * n);
      for (int i = 0; i < n; ++i) std::copy_n(&c[long(perm[i]) * n], n, a + long(i) * n);
      break;
    }
    case Kind::zero_diagonal:  // (a 1 x 1 block keeps its entry: it would be singular)
      for (int i = 0; i < n && n > 1; ++i) a[i * n + i] = 0.0;
      break;
    case Kind::ill_conditioned:
      std::fill(a, a + long(n) * n, 0.0);
      for (int i = 0; i < n; ++i) a[i * n + i] = grade(i);
      for (int r = 0; r < 2; ++r) householder(n, a, true), householder(n, a, false);
      break;
    // Graded kinds scale a well-conditioned base W = R + s I (s = 2 sqrt(n) + 1, sigma_min(W) ~
    // 0.85 sqrt(n)): grading a plain random R left the last pivot at 1e-10 |u_nn(R)|, and u_nn of a
    // random matrix is now and then small enough to fall under the factorisation's singularity
    // threshold n eps max|a| (the H200 run met it for col_graded blocks of n = 9, 15 and 24).
    case Kind::row_graded:
      for (int i = 0; i < n; ++i) a[i * n + i] += 2.0 * std::sqrt(double(n)) + 1.0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) a[i * n + j] *= grade(i);
      break;
    case Kind::col_graded:
      for (int i = 0; i < n; ++i) a[i * n + i] += 2.0 * std::sqrt(double(n)) + 1.0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) a[i * n + j] *= grade(j);
      break;
    case Kind::ternary:
      for (long e = 0; e < long(n) * n; ++e) a[e] = double(int(rng()() % 3) - 1);
      break;
    case Kind::zero_column:
      for (int i = 0; i < n; ++i) a[i * n + n / 2] = 0.0;
      break;
    case Kind::duplicate_row:
      if (n > 1) std::copy_n(a, n, a + long(n - 1) * n);
      break;
  }
}

// A batch on the host; a variable layout may leave `gap` sentinel doubles between the blocks'
// values so that kernels must honour mat_off (row_off defines the sizes, so it stays dense).
struct Batch {
  std::vector<int> sizes;
  std::vector<Kind> kinds;
  std::vector<index_t> row_off{0};
  std::vector<size64_t> mat_off{0};
  std::vector<double> a;
  bool uniform = false;
  int max_size = 0;

  index_t count() const { return index_t(sizes.size()); }
  size64_t rows() const { return size64_t(row_off.back()); }
  kernels::BatchLayout layout() const
  {
    kernels::BatchLayout L;
    L.count = count();
    L.max_size = max_size;
    if (uniform) {
      L.uniform = max_size;
    } else {
      L.row_off = row_off.data();
      L.mat_off = mat_off.data();
    }
    return L;
  }
  const double* block(const std::vector<double>& v, index_t b) const { return v.data() + mat_off[b]; }
};

constexpr double sentinel = -12345.0;

inline Batch make_batch(const std::vector<int>& sizes, const std::vector<Kind>& kinds, bool uniform, int gap = 0)
{
  Batch B;
  B.sizes = sizes;
  B.uniform = uniform;
  for (std::size_t b = 0; b < sizes.size(); ++b) {
    const int n = sizes[b];
    B.kinds.push_back(kinds[b % kinds.size()]);
    B.max_size = std::max(B.max_size, n);
    const int g = uniform ? 0 : gap;
    B.row_off.push_back(B.row_off.back() + n);
    B.mat_off.push_back(B.mat_off.back() + size64_t(n) * n + g);
  }
  if (uniform) {  // uniform batches are dense: offsets b*n and b*n*n
    for (int n : sizes)
      if (n != B.max_size) std::abort();
  }
  B.a.assign(B.mat_off.back(), sentinel);
  for (index_t b = 0; b < B.count(); ++b) fill(B.kinds[b], sizes[b], B.a.data() + B.mat_off[b]);
  return B;
}

inline std::vector<double> random_rhs(const Batch& B)
{
  std::vector<double> r(B.rows(), sentinel);
  for (index_t b = 0; b < B.count(); ++b)
    for (int i = 0; i < B.sizes[b]; ++i) r[B.row_off[b] + i] = uniform(-1, 1);
  return r;
}

// ||A x - b||_inf / (||A||_inf ||x||_inf), in long double.
inline double backward_error(int n, const double* a, const double* x, const double* b)
{
  long double rmax = 0, amax = 0, xmax = 0;
  for (int i = 0; i < n; ++i) {
    long double r = -(long double)b[i], arow = 0;
    for (int j = 0; j < n; ++j) r += (long double)a[i * n + j] * x[j], arow += std::fabs((long double)a[i * n + j]);
    rmax = std::max(rmax, std::fabs(r));
    amax = std::max(amax, arow);
    xmax = std::max(xmax, std::fabs((long double)x[i]));
  }
  if (!(amax > 0 && xmax > 0)) return rmax == 0 ? 0.0 : INFINITY;
  return double(rmax / (amax * xmax));
}

// ||P A - L U||_inf / ||A||_inf from getrf-style output (row-major, 0-based interchanges).
inline double factorization_error(int n, const double* a, const double* lu, const index_t* piv)
{
  std::vector<double> pa(a, a + long(n) * n);
  for (int k = 0; k < n; ++k)
    if (piv[k] != k) std::swap_ranges(&pa[long(k) * n], &pa[long(k) * n] + n, &pa[long(piv[k]) * n]);
  long double emax = 0, anorm = 0;
  for (int i = 0; i < n; ++i) {
    long double erow = 0, arow = 0;
    for (int j = 0; j < n; ++j) {
      long double s = 0;
      for (int k = 0; k <= std::min(i, j); ++k) s += (k == i ? 1.0L : (long double)lu[i * n + k]) * lu[k * n + j];
      erow += std::fabs(pa[i * n + j] - s);
      arow += std::fabs((long double)a[i * n + j]);
    }
    emax = std::max(emax, erow);
    anorm = std::max(anorm, arow);
  }
  return anorm > 0 ? double(emax / anorm) : double(emax);
}

// Independent naive solve: Gaussian elimination with partial pivoting on [A | b] in long double.
inline std::vector<double> naive_solve(int n, const double* a, const double* b)
{
  std::vector<long double> m(long(n) * (n + 1));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) m[i * (n + 1) + j] = a[i * n + j];
    m[i * (n + 1) + n] = b[i];
  }
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int i = k + 1; i < n; ++i)
      if (std::fabs(m[i * (n + 1) + k]) > std::fabs(m[p * (n + 1) + k])) p = i;
    for (int j = 0; j <= n; ++j) std::swap(m[k * (n + 1) + j], m[p * (n + 1) + j]);
    for (int i = k + 1; i < n; ++i) {
      const long double l = m[i * (n + 1) + k] / m[k * (n + 1) + k];
      for (int j = k; j <= n; ++j) m[i * (n + 1) + j] -= l * m[k * (n + 1) + j];
    }
  }
  std::vector<double> x(n);
  for (int i = n - 1; i >= 0; --i) {
    long double s = m[i * (n + 1) + n];
    for (int j = i + 1; j < n; ++j) s -= m[i * (n + 1) + j] * x[j];
    x[i] = double(s / m[i * (n + 1) + i]);
  }
  return x;
}

// max_i |x_i - y_i| / max_i |y_i| (infinite when x has a non-finite entry).
inline double rel_diff(int n, const double* x, const double* y)
{
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return INFINITY;
    num = std::max(num, std::abs(x[i] - y[i]));
    den = std::max(den, std::abs(y[i]));
  }
  return den > 0 ? num / den : num;
}

// First pivot step whose choice is ambiguous for a factorisation of the reference's precision:
// the best and second best candidates differ by less than 1e-10 relatively but are not exactly
// equal (an exact tie is decided by the first-index rule, which both backends must follow).
// Returns n when every step is clear-cut. Replays the reference algorithm.
inline int first_ambiguous_step(int n, const double* a0)
{
  std::vector<double> a(a0, a0 + long(n) * n);
  for (int k = 0; k < n; ++k) {
    const auto key = [&](int i) { return std::isnan(a[i * n + k]) ? -1.0 : std::abs(a[i * n + k]); };
    int p = k;
    for (int i = k + 1; i < n; ++i)
      if (key(i) > key(p)) p = i;
    for (int i = k; i < n; ++i)
      if (key(i) != key(p) && key(p) - key(i) < 1e-10 * key(p)) return k;
    if (p != k)
      for (int j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
    const double d = a[k * n + k];
    for (int i = k + 1; i < n; ++i) {
      const double l = a[i * n + k] / d;
      a[i * n + k] = l;
      for (int j = k + 1; j < n; ++j) a[i * n + j] = std::fma(-l, a[k * n + j], a[i * n + j]);
    }
  }
  return n;
}

}  // namespace blockres::test_lu
