// CPU reference of the vector kernels (OpenMP where the loop is long enough to pay).
#include "kernels/blas1.hpp"

namespace blockres::kernels::cpu {

namespace {
constexpr size64_t omp_threshold = 1 << 14;
}

void fill(size64_t n, double value, double* x)
{
#pragma omp parallel for schedule(static) if (n > omp_threshold)
  for (size64_t i = 0; i < n; ++i) x[i] = value;
}

void axpby(size64_t n, double a, const double* x, double b, double* y)
{
  if (b == 0.0) {
#pragma omp parallel for schedule(static) if (n > omp_threshold)
    for (size64_t i = 0; i < n; ++i) y[i] = a * x[i];
  } else {
#pragma omp parallel for schedule(static) if (n > omp_threshold)
    for (size64_t i = 0; i < n; ++i) y[i] = a * x[i] + b * y[i];
  }
}

void axpbypcz(size64_t n, double a, const double* x, double b, const double* y, double c, double* z)
{
  if (c == 0.0) {
#pragma omp parallel for schedule(static) if (n > omp_threshold)
    for (size64_t i = 0; i < n; ++i) z[i] = a * x[i] + b * y[i];
  } else {
#pragma omp parallel for schedule(static) if (n > omp_threshold)
    for (size64_t i = 0; i < n; ++i) z[i] = a * x[i] + b * y[i] + c * z[i];
  }
}

double dot(size64_t n, const double* x, const double* y)
{
  double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum) if (n > omp_threshold)
  for (size64_t i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

void dots(size64_t n, int k, const double* const* xs, const double* y, double* out)
{
  double acc[max_fused_vectors] = {};
#pragma omp parallel for schedule(static) reduction(+ : acc[:k]) if (n > omp_threshold)
  for (size64_t i = 0; i < n; ++i) {
    const double yi = y[i];
    for (int j = 0; j < k; ++j) acc[j] += xs[j][i] * yi;
  }
  for (int j = 0; j < k; ++j) out[j] = acc[j];
}

void multi_axpby(size64_t n, int k, const double* a, const double* const* xs, double b, double* y)
{
#pragma omp parallel for schedule(static) if (n > omp_threshold)
  for (size64_t i = 0; i < n; ++i) {
    double v = b == 0.0 ? 0.0 : b * y[i];
    for (int j = 0; j < k; ++j) v += a[j] * xs[j][i];
    y[i] = v;
  }
}

}  // namespace blockres::kernels::cpu
