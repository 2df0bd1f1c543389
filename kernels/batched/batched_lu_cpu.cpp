// CPU reference of the batched LU with partial pivoting and its solve (the test oracle).
//
// Right-looking unblocked getrf on each row-major block (OpenMP over blocks). Every update is one
// fused multiply-add, a - l*u = fma(-l, u, a), in the same order as the CUDA kernels, so for well
// separated pivots both backends agree to the last bit on small blocks and to rounding on large.
#include "kernels/batched/batched_lu.hpp"
#include "kernels/parallel_cpu.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace blockres::kernels {

void batched_lu_check_layout(const BatchLayout& L, const char* what)
{
  const std::string w(what);
  if (L.count < 0) throw std::invalid_argument(w + ": negative block count " + std::to_string(L.count));
  if (L.max_size < 1 || L.max_size > batched_lu_max_size)
    throw std::invalid_argument(w + ": max_size " + std::to_string(L.max_size) + " is outside 1.." +
                                std::to_string(batched_lu_max_size));
  if (L.uniform > 0 && L.uniform != L.max_size)
    throw std::invalid_argument(w + ": uniform size " + std::to_string(L.uniform) + " differs from max_size " +
                                std::to_string(L.max_size));
  if (L.uniform < 0) throw std::invalid_argument(w + ": negative uniform size");
  if (L.uniform == 0 && L.count > 0 && (L.row_off == nullptr || L.mat_off == nullptr))
    throw std::invalid_argument(w + ": a variable-size layout needs row_off and mat_off");
}

namespace cpu {

namespace {

// Pivot-search key: |v|, with NaN below every number so it is chosen only when nothing else is left.
inline double pivot_key(double v) { return std::isnan(v) ? -1.0 : std::abs(v); }

int check_size(const BatchLayout& L, index_t b, const char* what)
{
  const int n = L.size(b);
  if (n < 0 || n > L.max_size)
    throw std::invalid_argument(std::string(what) + ": block " + std::to_string(b) + " has size " +
                                std::to_string(n) + ", outside 0..max_size " + std::to_string(L.max_size));
  return n;
}

int factor_block(int n, double* a, index_t* piv)
{
  double amax = 0.0;
  for (long e = 0; e < long(n) * n; ++e)
    if (std::abs(a[e]) > amax) amax = std::abs(a[e]);  // NaN compares false: ignored
  const double thr = double(n) * DBL_EPSILON * amax;
  int info = 0;
  for (int k = 0; k < n; ++k) {
    int p = k;
    double best = pivot_key(a[k * n + k]);
    for (int i = k + 1; i < n; ++i) {
      const double v = pivot_key(a[i * n + k]);
      if (v > best) best = v, p = i;
    }
    piv[k] = p;
    if (p != k)
      for (int j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
    const double d = a[k * n + k];
    if (info == 0 && !(std::abs(d) > thr && std::abs(d) <= DBL_MAX)) info = k + 1;
    for (int i = k + 1; i < n; ++i) {
      const double l = a[i * n + k] / d;
      a[i * n + k] = l;
      for (int j = k + 1; j < n; ++j) a[i * n + j] = std::fma(-l, a[k * n + j], a[i * n + j]);
    }
  }
  return info;
}

void solve_block(int n, const double* lu, const index_t* piv, const double* b, double* x)
{
  for (int i = 0; i < n; ++i) x[i] = b[i];
  for (int k = 0; k < n; ++k) {
    const int p = piv[k];
    if (p != k && p >= 0 && p < n) std::swap(x[k], x[p]);
  }
  for (int j = 0; j < n; ++j)  // L y = P b, L unit lower, column by column
    for (int i = j + 1; i < n; ++i) x[i] = std::fma(-lu[i * n + j], x[j], x[i]);
  for (int j = n - 1; j >= 0; --j) {  // U x = y
    x[j] = x[j] / lu[j * n + j];
    for (int i = 0; i < j; ++i) x[i] = std::fma(-lu[i * n + j], x[j], x[i]);
  }
}

}  // namespace

void lu_factor(const BatchLayout& L, double* a, index_t* piv, int* info)
{
  batched_lu_check_layout(L, "cpu::lu_factor");
  for (index_t b = 0; b < L.count; ++b) check_size(L, b, "cpu::lu_factor");
#pragma omp parallel for schedule(dynamic, 16) if (parallel_worth(size64_t(L.count) * L.max_size * L.max_size * L.max_size))
  for (index_t b = 0; b < L.count; ++b)
    info[b] = factor_block(L.size(b), a + L.mat(b), piv + L.row(b));
}

void lu_solve(const BatchLayout& L, const double* lu, const index_t* piv, const double* b, double* x)
{
  batched_lu_check_layout(L, "cpu::lu_solve");
  for (index_t k = 0; k < L.count; ++k) check_size(L, k, "cpu::lu_solve");
#pragma omp parallel for schedule(dynamic, 16) if (parallel_worth(size64_t(L.count) * L.max_size * L.max_size))
  for (index_t k = 0; k < L.count; ++k)
    solve_block(L.size(k), lu + L.mat(k), piv + L.row(k), b + L.row(k), x + L.row(k));
}

void lu_inverse(int n, const double* lu, const index_t* piv, double* inv)
{
  if (n < 1 || n > batched_lu_max_size)
    throw std::invalid_argument("cpu::lu_inverse: size " + std::to_string(n) + " is outside 1.." +
                                std::to_string(batched_lu_max_size));
  const auto un = static_cast<std::size_t>(n);
#pragma omp parallel if (parallel_worth(size64_t(n) * n * n))
  {
    std::vector<double> e(un), x(un);
#pragma omp for schedule(static)
    for (int j = 0; j < n; ++j) {
      std::fill(e.begin(), e.end(), 0.0);
      e[static_cast<std::size_t>(j)] = 1.0;
      solve_block(n, lu, piv, e.data(), x.data());
      for (int i = 0; i < n; ++i) inv[static_cast<std::size_t>(i) * un + static_cast<std::size_t>(j)] = x[i];
    }
  }
}

}  // namespace cpu
}  // namespace blockres::kernels
