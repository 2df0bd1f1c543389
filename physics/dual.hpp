// Forward-mode automatic differentiation with a fixed number of derivatives (host and device).
#pragma once

#include "kernels/common.hpp"

#include <cmath>

namespace blockres {

// Dual<N>: a value and its derivatives with respect to N independent variables.
template <int N>
struct Dual {
  double v = 0.0;
  double d[N] = {};

  BLOCKRES_HD Dual() = default;
  BLOCKRES_HD Dual(double value) : v(value) {}  // NOLINT: constants convert implicitly
  // The k-th independent variable with the given value.
  BLOCKRES_HD static Dual variable(double value, int k)
  {
    Dual r(value);
    r.d[k] = 1.0;
    return r;
  }

  BLOCKRES_HD Dual& operator+=(const Dual& o)
  {
    v += o.v;
    for (int k = 0; k < N; ++k) d[k] += o.d[k];
    return *this;
  }
  BLOCKRES_HD Dual& operator-=(const Dual& o)
  {
    v -= o.v;
    for (int k = 0; k < N; ++k) d[k] -= o.d[k];
    return *this;
  }
  BLOCKRES_HD Dual& operator*=(const Dual& o)
  {
    for (int k = 0; k < N; ++k) d[k] = d[k] * o.v + v * o.d[k];
    v *= o.v;
    return *this;
  }
  BLOCKRES_HD Dual& operator/=(const Dual& o)
  {
    const double inv = 1.0 / o.v;
    const double q = v * inv;
    for (int k = 0; k < N; ++k) d[k] = (d[k] - q * o.d[k]) * inv;
    v = q;
    return *this;
  }
};

template <int N> BLOCKRES_HD Dual<N> operator-(Dual<N> a)
{
  a.v = -a.v;
  for (int k = 0; k < N; ++k) a.d[k] = -a.d[k];
  return a;
}
template <int N> BLOCKRES_HD Dual<N> operator+(Dual<N> a, const Dual<N>& b) { return a += b; }
template <int N> BLOCKRES_HD Dual<N> operator-(Dual<N> a, const Dual<N>& b) { return a -= b; }
template <int N> BLOCKRES_HD Dual<N> operator*(Dual<N> a, const Dual<N>& b) { return a *= b; }
template <int N> BLOCKRES_HD Dual<N> operator/(Dual<N> a, const Dual<N>& b) { return a /= b; }
template <int N> BLOCKRES_HD Dual<N> operator+(Dual<N> a, double b) { a.v += b; return a; }
template <int N> BLOCKRES_HD Dual<N> operator+(double b, Dual<N> a) { a.v += b; return a; }
template <int N> BLOCKRES_HD Dual<N> operator-(Dual<N> a, double b) { a.v -= b; return a; }
template <int N> BLOCKRES_HD Dual<N> operator-(double b, const Dual<N>& a) { return -a + b; }
template <int N> BLOCKRES_HD Dual<N> operator*(Dual<N> a, double b)
{
  a.v *= b;
  for (int k = 0; k < N; ++k) a.d[k] *= b;
  return a;
}
template <int N> BLOCKRES_HD Dual<N> operator*(double b, Dual<N> a) { return a * b; }
template <int N> BLOCKRES_HD Dual<N> operator/(Dual<N> a, double b) { return a * (1.0 / b); }
template <int N> BLOCKRES_HD Dual<N> operator/(double a, const Dual<N>& b) { return Dual<N>(a) / b; }

// Value of a plain number or of a dual number (for branching on values).
BLOCKRES_HD double value_of(double x) { return x; }
template <int N> BLOCKRES_HD double value_of(const Dual<N>& x) { return x.v; }

// x^n for x >= 0 and n >= 1 (Corey exponents); derivative n x^(n-1), exact at x == 0.
BLOCKRES_HD double pow_nonneg(double x, double n) { return x <= 0.0 ? 0.0 : ::pow(x, n); }
template <int N> BLOCKRES_HD Dual<N> pow_nonneg(const Dual<N>& x, double n)
{
  Dual<N> r;
  if (x.v <= 0.0) {
    if (n == 1.0)
      for (int k = 0; k < N; ++k) r.d[k] = x.d[k];
    return r;
  }
  const double pm1 = ::pow(x.v, n - 1.0);
  r.v = pm1 * x.v;
  for (int k = 0; k < N; ++k) r.d[k] = n * pm1 * x.d[k];
  return r;
}

}  // namespace blockres
