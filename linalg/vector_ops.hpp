// Vector operations on Arrays, dispatched to the CPU or CUDA kernels by the array's executor.
#pragma once

#include "linalg/array.hpp"

namespace blockres {

using Vector = Array<double>;

void fill(Vector& x, double value);
void copy(const Vector& src, Vector& dst);
void axpby(double a, const Vector& x, double b, Vector& y);                            // y = a x + b y
void axpbypcz(double a, const Vector& x, double b, const Vector& y, double c, Vector& z); // z = a x + b y + c z
double dot(const Vector& x, const Vector& y);
double norm2(const Vector& x);
// Fused forms over k vectors (any k >= 0; one pass over the data per 16 vectors). xs points
// to k vectors of y's size and executor; the results and coefficients are host arrays.
void dots(const Vector* const* xs, int k, const Vector& y, double* out);                 // out[j] = xs[j] . y
void multi_axpby(const Vector* const* xs, const double* a, int k, double b, Vector& y);  // y = b y + sum_j a[j] xs[j]

}  // namespace blockres
