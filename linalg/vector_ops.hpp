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

}  // namespace blockres
