// Vector kernels (fill, scaled sums, dot products, fused multi-vector forms): CPU reference and CUDA versions.
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// Semantics shared by both backends:
//   fill:        x[i] = value
//   axpby:       y[i] = a*x[i] + b*y[i]             (b == 0: y is not read, so garbage in y never leaks)
//   axpbypcz:    z[i] = a*x[i] + b*y[i] + c*z[i]    (c == 0: z is not read)
//   dot:         sum_i x[i]*y[i]
//   dots:        out[j] = sum_i xs[j][i]*y[i], j < k (one pass over y; out is host memory)
//   multi_axpby: y[i] = b*y[i] + sum_j a[j]*xs[j][i] (b == 0: y is not read; y must not be one of xs)
// The fused forms take 0 <= k <= max_fused_vectors vectors; xs and a are host arrays (of
// device pointers on the CUDA side), passed to the kernels by value.
constexpr int max_fused_vectors = 16;

namespace cpu {
void fill(size64_t n, double value, double* x);
void axpby(size64_t n, double a, const double* x, double b, double* y);
void axpbypcz(size64_t n, double a, const double* x, double b, const double* y, double c, double* z);
double dot(size64_t n, const double* x, const double* y);
void dots(size64_t n, int k, const double* const* xs, const double* y, double* out);
void multi_axpby(size64_t n, int k, const double* a, const double* const* xs, double b, double* y);
}  // namespace cpu

namespace cuda {
// dot needs a device workspace of dot_workspace_doubles() doubles; the result is
// returned to the host (the call synchronises the stream).
constexpr int dot_max_blocks = 1024;
constexpr size64_t dot_workspace_doubles() { return dot_max_blocks + 1; }
// dots needs dots_workspace_doubles(k) doubles (k partial sums per block plus the k results)
// and synchronises the stream like dot.
constexpr int dots_max_blocks = 512;
constexpr size64_t dots_workspace_doubles(int k) { return size64_t(k) * (dots_max_blocks + 1); }

void fill(stream_t s, size64_t n, double value, double* x);
void axpby(stream_t s, size64_t n, double a, const double* x, double b, double* y);
void axpbypcz(stream_t s, size64_t n, double a, const double* x, double b, const double* y, double c, double* z);
double dot(stream_t s, size64_t n, const double* x, const double* y, double* workspace);
void dots(stream_t s, size64_t n, int k, const double* const* xs, const double* y, double* out, double* workspace);
void multi_axpby(stream_t s, size64_t n, int k, const double* a, const double* const* xs, double b, double* y);
}  // namespace cuda

}  // namespace blockres::kernels
