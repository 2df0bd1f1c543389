// CPU reference of the vector kernels (OpenMP where the loop is long enough to pay; reductions in
// a fixed order, independent of the thread count: ordered_sum_cpu.hpp).
#include "kernels/blas1/blas1.hpp"
#include "kernels/parallel_cpu.hpp"
#include "kernels/ordered_sum_cpu.hpp"

#include <algorithm>
#include <limits>

namespace blockres::kernels::cpu {

namespace {
// Elements above which a vector kernel runs in parallel (kernels/parallel_cpu.hpp; 16384 by
// default, as before the threshold was shared: a vector update is cheaper per element than a row).
size64_t omp_threshold() { return parallel_min_work(); }
}

void fill(size64_t n, double value, double* x)
{
#pragma omp parallel for schedule(static) if (n > omp_threshold())
  for (size64_t i = 0; i < n; ++i) x[i] = value;
}

void axpby(size64_t n, double a, const double* x, double b, double* y)
{
  if (b == 0.0) {
#pragma omp parallel for schedule(static) if (n > omp_threshold())
    for (size64_t i = 0; i < n; ++i) y[i] = a * x[i];
  } else {
#pragma omp parallel for schedule(static) if (n > omp_threshold())
    for (size64_t i = 0; i < n; ++i) y[i] = a * x[i] + b * y[i];
  }
}

void axpbypcz(size64_t n, double a, const double* x, double b, const double* y, double c, double* z)
{
  if (c == 0.0) {
#pragma omp parallel for schedule(static) if (n > omp_threshold())
    for (size64_t i = 0; i < n; ++i) z[i] = a * x[i] + b * y[i];
  } else {
#pragma omp parallel for schedule(static) if (n > omp_threshold())
    for (size64_t i = 0; i < n; ++i) z[i] = a * x[i] + b * y[i] + c * z[i];
  }
}

double dot(size64_t n, const double* x, const double* y)
{
  return ordered_sum<1>(n, omp_threshold(), [&](size64_t i, double* acc) { acc[0] += x[i] * y[i]; })[0];
}

void dots(size64_t n, int k, const double* const* xs, const double* y, double* out)
{
  // k + 1 entries read per element
  const auto acc = ordered_sum<max_fused_vectors>(n, 2 * omp_threshold() / (k + 1), [&](size64_t i, double* a) {
    const double yi = y[i];
    for (int j = 0; j < k; ++j) a[j] += xs[j][i] * yi;
  });
  for (int j = 0; j < k; ++j) out[j] = acc[j];
}

void multi_axpby(size64_t n, int k, const double* a, const double* const* xs, double b, double* y)
{
#pragma omp parallel for schedule(static) if (parallel_worth(n * (k + 2)))
  for (size64_t i = 0; i < n; ++i) {
    double v = b == 0.0 ? 0.0 : b * y[i];
    for (int j = 0; j < k; ++j) v += a[j] * xs[j][i];
    y[i] = v;
  }
}

double axpby_norm2(size64_t n, double a, const double* x, double b, double* y)
{
  return ordered_sum<1>(n, omp_threshold(), [&](size64_t i, double* acc) {
    const double v = a * x[i] + b * y[i];
    y[i] = v;
    acc[0] += v * v;
  })[0];
}

double cg_update(size64_t n, double alpha, const double* p, const double* q, double* x, double* r)
{
  return ordered_sum<1>(n, omp_threshold(), [&](size64_t i, double* acc) {
    x[i] += alpha * p[i];
    const double v = r[i] - alpha * q[i];
    r[i] = v;
    acc[0] += v * v;
  })[0];
}

void bicgstab_update(size64_t n, double alpha, const double* ph, double omega, const double* sh, const double* s,
                     const double* t, const double* rh, double* x, double* r, double* out)
{
  const auto acc = ordered_sum<2>(n, omp_threshold(), [&](size64_t i, double* a) {
    const double si = s[i], shi = sh[i];
    x[i] += alpha * ph[i] + omega * shi;
    const double v = si - omega * t[i];
    r[i] = v;
    a[0] += v * v;
    a[1] += rh[i] * v;
  });
  out[0] = acc[0];
  out[1] = acc[1];
}

void gemv_t(size64_t n, int k, const double* V, const double* w, double* h)
{
  for (int j0 = 0; j0 < k; j0 += max_fused_vectors) {
    const int m = std::min(k - j0, max_fused_vectors);
    const double* cols[max_fused_vectors];
    for (int j = 0; j < m; ++j) cols[j] = V + (j0 + j) * n;
    dots(n, m, cols, w, h + j0);
  }
}

void gemv_n(size64_t n, int k, double a, const double* V, const double* h, double b, double* y)
{
#pragma omp parallel for schedule(static) if (parallel_worth(n * (k + 2)))
  for (size64_t i = 0; i < n; ++i) {
    double v = 0.0;
    for (int j = 0; j < k; ++j) v += V[i + j * n] * h[j];
    y[i] = b == 0.0 ? a * v : a * v + b * y[i];
  }
}

void cgs2(size64_t n, int k, const double* V, double* w, double* h1, double* h2, double* nrm2)
{
  gemv_t(n, k, V, w, h1);
  gemv_n(n, k, -1.0, V, h1, 1.0, w);
  gemv_t(n, k, V, w, h2);
  gemv_n(n, k, -1.0, V, h2, 1.0, w);
  *nrm2 = dot(n, w, w);
}

void gemm_t(size64_t n, int k, const double* V, int m, const double* X, double* out)
{
  for (int c = 0; c < m; ++c) gemv_t(n, k, V, X + size64_t(c) * n, out + size64_t(c) * k);
}

void gemm_n(size64_t n, int k, int m, double a, const double* V, const double* C, double b, double* Y)
{
  for (int c = 0; c < m; ++c) gemv_n(n, k, a, V, C + size64_t(c) * k, b, Y + size64_t(c) * n);
}

double stream_sum(size64_t n, const double* x)
{
  return ordered_sum<1>(n, omp_threshold(), [&](size64_t i, double* acc) { acc[0] += x[i]; })[0];
}


void to_fp32(size64_t n, const double* in, float* out)
{
  constexpr double big = std::numeric_limits<float>::max();
  constexpr float inf = std::numeric_limits<float>::infinity();
#pragma omp parallel for schedule(static) if (parallel_worth(n))
  for (size64_t k = 0; k < n; ++k) {
    const double v = in[k];  // saturated explicitly: a conversion out of range is undefined in C++
    out[k] = v > big ? inf : v < -big ? -inf : static_cast<float>(v);
  }
}

void fp64_peak(size64_t lanes, int iterations, double* out)
{
  constexpr double m = 1.0 - 1.0 / 1024.0, c = 1.0 / 4096.0;
#pragma omp parallel for schedule(static)
  for (size64_t k = 0; k < lanes; ++k) {
    double a[fp64_peak_chains];
    for (int j = 0; j < fp64_peak_chains; ++j) a[j] = 1.0 + double(k % 97) / 1024.0 + double(j) / 4096.0;
    for (int it = 0; it < iterations; ++it)
      for (int j = 0; j < fp64_peak_chains; ++j) a[j] = a[j] * m + c;
    double sum = 0.0;
    for (int j = 0; j < fp64_peak_chains; ++j) sum += a[j];
    out[k] = sum;
  }
}

}  // namespace blockres::kernels::cpu
