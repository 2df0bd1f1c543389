// Vector kernels (fill, scaled sums, dot products): CPU reference and CUDA versions.
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// Semantics shared by both backends:
//   fill:     x[i] = value
//   axpby:    y[i] = a*x[i] + b*y[i]            (b == 0: y is not read, so garbage in y never leaks)
//   axpbypcz: z[i] = a*x[i] + b*y[i] + c*z[i]   (c == 0: z is not read)
//   dot:      sum_i x[i]*y[i]
namespace cpu {
void fill(size64_t n, double value, double* x);
void axpby(size64_t n, double a, const double* x, double b, double* y);
void axpbypcz(size64_t n, double a, const double* x, double b, const double* y, double c, double* z);
double dot(size64_t n, const double* x, const double* y);
}  // namespace cpu

namespace cuda {
// dot needs a device workspace of dot_workspace_doubles() doubles; the result is
// returned to the host (the call synchronises the stream).
constexpr int dot_max_blocks = 1024;
constexpr size64_t dot_workspace_doubles() { return dot_max_blocks + 1; }

void fill(stream_t s, size64_t n, double value, double* x);
void axpby(stream_t s, size64_t n, double a, const double* x, double b, double* y);
void axpbypcz(stream_t s, size64_t n, double a, const double* x, double b, const double* y, double c, double* z);
double dot(stream_t s, size64_t n, const double* x, const double* y, double* workspace);
}  // namespace cuda

}  // namespace blockres::kernels
