// CPU references of the batched Gauss–Huard and Gauss–Jordan kernels (the GPU test oracle).
// The formulas, storage layouts and pivot rule are documented in kernels/batched/batched_gh.hpp; these
// loops follow them literally, one block at a time, OpenMP over blocks.
#include "kernels/batched/batched_gh.hpp"
#include "kernels/parallel_cpu.hpp"

#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace blockres::kernels::cpu {

namespace {

constexpr int nmax = batched_gh_max_size;

void check_layout(const BatchLayout& L, const char* who, int max_allowed)
{
  const std::string w(who);
  if (L.count < 0) throw std::invalid_argument(w + ": negative batch count " + std::to_string(L.count));
  if (L.max_size < 1 || L.max_size > max_allowed)
    throw std::invalid_argument(w + ": max_size " + std::to_string(L.max_size) + " outside the supported range 1.." +
                                std::to_string(max_allowed));
  if (L.uniform > 0 && L.uniform != L.max_size)
    throw std::invalid_argument(w + ": uniform block size " + std::to_string(L.uniform) + " but max_size " +
                                std::to_string(L.max_size));
  if (L.uniform <= 0 && L.count > 0 && (L.row_off == nullptr || L.mat_off == nullptr))
    throw std::invalid_argument(w + ": variable-size layout without row_off / mat_off");
  for (index_t b = 0; b < L.count; ++b) {
    const int n = L.size(b);
    if (n < 0 || n > L.max_size)
      throw std::invalid_argument(w + ": block " + std::to_string(b) + " has size " + std::to_string(n) +
                                  ", larger than max_size " + std::to_string(L.max_size));
  }
}

// Pivot key: |v|, with NaN ranked above everything so a NaN pivot is detected.
double pivot_key(double v) { return std::isnan(v) ? std::numeric_limits<double>::infinity() : std::fabs(v); }

bool bad_pivot(double p, double tol) { return !std::isfinite(p) || !(std::fabs(p) > tol); }

double max_abs(int n, const double* a)
{
  double m = 0.0;
  for (int e = 0; e < n * n; ++e) m = std::fmax(m, std::fabs(a[e]));
  return m;
}

// Among the columns not yet chosen, the one with the largest key in row k (ties: lowest index).
int choose_pivot(int n, const double* a, int k, const bool* chosen)
{
  int best = -1;
  double best_key = -1.0;
  for (int c = 0; c < n; ++c)
    if (!chosen[c] && pivot_key(a[k * n + c]) > best_key) {
      best_key = pivot_key(a[k * n + c]);
      best = c;
    }
  return best;
}

// The working copy of one block and the pivot bookkeeping both eliminations share: columns chosen
// so far, the column of each step, the first bad pivot (1-based step, 0: none) and its threshold
// n eps max|A|.
struct PivotedBlock {
  int n;
  double w[nmax * nmax];
  bool chosen[nmax] = {};
  int piv[nmax];
  int info = 0;
  double tol;
  PivotedBlock(int n_, const double* a) : n(n_)
  {
    for (int e = 0; e < n * n; ++e) w[e] = a[e];
    tol = n * DBL_EPSILON * max_abs(n, w);
  }
  // Step k chooses its pivot column p = piv[k] in row k and returns 1 / w(k, p).
  double take_pivot(int k)
  {
    const int p = choose_pivot(n, w, k, chosen);
    piv[k] = p;
    chosen[p] = true;
    const double pv = w[k * n + p];
    if (info == 0 && bad_pivot(pv, tol)) info = k + 1;
    return 1.0 / pv;
  }
};

// One block: GH decomposition in physical column order (implicit pivoting), then the factors are
// written in pivoted order D(i, k) = A(i, p_k) as the requested storage.
int gh_factor_block(int n, double* a, index_t* perm, GhStorage storage)
{
  PivotedBlock B(n, a);
  double* const w = B.w;
  const bool* const chosen = B.chosen;
  const int* const piv = B.piv;
  for (int k = 0; k < n; ++k) {
    for (int c = 0; c < n; ++c) {  // row elimination with the rows above (already transformed)
      if (chosen[c]) continue;
      double s = w[k * n + c];
      for (int j = 0; j < k; ++j) s -= w[k * n + piv[j]] * w[j * n + c];
      w[k * n + c] = s;
    }
    const double r = B.take_pivot(k);
    const int p = piv[k];
    for (int c = 0; c < n; ++c)  // diagonalisation
      if (!chosen[c]) w[k * n + c] *= r;
    for (int i = 0; i < k; ++i) {  // column elimination of the rows above
      const double f = w[i * n + p];
      for (int c = 0; c < n; ++c)
        if (!chosen[c]) w[i * n + c] -= f * w[k * n + c];
    }
  }
  for (int k = 0; k < n; ++k) {
    perm[k] = piv[k];
    for (int i = 0; i < n; ++i) {
      const double d = w[i * n + piv[k]];  // D(i, k)
      if (storage == GhStorage::transposed && i < k)
        a[(n - 1 - k) * n + (n - 1 - i)] = d;
      else
        a[i * n + k] = d;
    }
  }
  return B.info;
}

// One block: in-place Gauss–Jordan inversion with implicit column pivoting. Column c is kept in
// its physical place; step k eliminates row k with the chosen column p_k. At the end, the working
// array W satisfies A^{-1}(p_k, i) = W(k, p_i), which is how the result is written back.
int gj_invert_block(int n, double* a)
{
  PivotedBlock B(n, a);
  double* const w = B.w;
  const int* const piv = B.piv;
  for (int k = 0; k < n; ++k) {
    const double d = B.take_pivot(k);
    const int p = piv[k];
    for (int i = 0; i < n; ++i) w[i * n + p] = (i == k) ? d : w[i * n + p] * d;
    for (int c = 0; c < n; ++c) {
      if (c == p) continue;
      const double f = w[k * n + c];
      for (int i = 0; i < n; ++i) w[i * n + c] = (i == k ? 0.0 : w[i * n + c]) - f * w[i * n + p];
    }
  }
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) a[piv[k] * n + i] = w[k * n + piv[i]];
  return B.info;
}

}  // namespace

void gauss_huard_factor(const BatchLayout& L, double* a, index_t* perm, int* info, GhStorage storage)
{
  check_layout(L, "gauss_huard_factor", nmax);
#pragma omp parallel for schedule(dynamic, 64) if (parallel_worth(size64_t(L.count) * L.max_size * L.max_size * L.max_size))
  for (index_t b = 0; b < L.count; ++b) info[b] = gh_factor_block(L.size(b), a + L.mat(b), perm + L.row(b), storage);
}

void gauss_huard_solve(const BatchLayout& L, const double* factors, const index_t* perm, GhStorage storage,
                       const double* b, double* x)
{
  check_layout(L, "gauss_huard_solve", nmax);
  bool bad_perm = false;
#pragma omp parallel for schedule(dynamic, 64) if (parallel_worth(size64_t(L.count) * L.max_size * L.max_size)) reduction(|| : bad_perm)
  for (index_t blk = 0; blk < L.count; ++blk) {
    const int n = L.size(blk);
    const double* f = factors + L.mat(blk);
    const size64_t r0 = L.row(blk);
    auto U = [&](int i, int k) {  // U(i, k), i < k
      return storage == GhStorage::transposed ? f[(n - 1 - k) * n + (n - 1 - i)] : f[i * n + k];
    };
    double y[nmax];
    for (int i = 0; i < n; ++i) y[i] = b[r0 + i];
    for (int k = 0; k < n; ++k) {
      double s = y[k];
      for (int j = 0; j < k; ++j) s -= f[k * n + j] * y[j];
      y[k] = s * (1.0 / f[k * n + k]);
      for (int i = 0; i < k; ++i) y[i] -= U(i, k) * y[k];
    }
    for (int k = 0; k < n; ++k) {
      const index_t p = perm[r0 + k];
      if (p < 0 || p >= n) {
        bad_perm = true;
        continue;
      }
      x[r0 + p] = y[k];
    }
  }
  if (bad_perm) throw std::invalid_argument("gauss_huard_solve: perm entry outside its block (not from gauss_huard_factor?)");
}

void gauss_jordan_invert(const BatchLayout& L, double* a, int* info)
{
  check_layout(L, "gauss_jordan_invert", nmax);
#pragma omp parallel for schedule(dynamic, 64) if (parallel_worth(size64_t(L.count) * L.max_size * L.max_size * L.max_size))
  for (index_t b = 0; b < L.count; ++b) info[b] = gj_invert_block(L.size(b), a + L.mat(b));
}

namespace {
template <class T>
void block_diag_gemv_t(const BatchLayout& L, const T* inv, const double* x, double* y)
{
  check_layout(L, "block_diag_gemv", std::numeric_limits<int>::max());
#pragma omp parallel for schedule(dynamic, 64) if (parallel_worth(size64_t(L.count) * L.max_size * L.max_size))
  for (index_t b = 0; b < L.count; ++b) {
    const int n = L.size(b);
    const T* m = inv + L.mat(b);
    const size64_t r0 = L.row(b);
    for (int i = 0; i < n; ++i) {
      double s = 0.0;
      for (int j = 0; j < n; ++j) s += double(m[size64_t(i) * n + j]) * x[r0 + j];
      y[r0 + i] = s;
    }
  }
}
}  // namespace

void block_diag_gemv(const BatchLayout& L, const double* inv, const double* x, double* y)
{
  block_diag_gemv_t(L, inv, x, y);
}
void block_diag_gemv(const BatchLayout& L, const float* inv, const double* x, double* y)
{
  block_diag_gemv_t(L, inv, x, y);
}

}  // namespace blockres::kernels::cpu
