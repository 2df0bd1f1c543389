// Vector kernels (fill, scaled sums, dot products, fused multi-vector forms): CPU reference and CUDA versions.
#pragma once

#include "kernels/common.hpp"

#include <algorithm>
#include <functional>

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
//
// Fused Krylov updates: one pass over the vectors, the reductions returned to the host.
//   axpby_norm2:     y[i] = a*x[i] + b*y[i]; returns sum_i y[i]^2          (BiCGSTAB's s = r - alpha v)
//   cg_update:       x[i] += alpha*p[i]; r[i] -= alpha*q[i]; returns sum_i r[i]^2
//   bicgstab_update: x[i] += alpha*ph[i] + omega*sh[i]; r[i] = s[i] - omega*t[i];
//                    out[0] = sum_i r[i]^2, out[1] = sum_i rh[i]*r[i]
//                    (s may be r itself, sh may be s and ph may be any vector other than x, r:
//                    each element is read before it is written)
// Dense products with a column-major n x k block V (leading dimension n), for Gram–Schmidt:
//   gemv_t: h[j] = sum_i V[i + j n] * w[i], j < k     (h in the executor's memory)
//   gemv_n: y[i] = a * sum_j V[i + j n] * h[j] + b * y[i]   (h in the executor's memory; b == 0: y not read)
//   cgs2:   one step of classical Gram–Schmidt applied twice against V's first k columns (GMRES):
//           h1 = V^T w; w -= V h1; h2 = V^T w; w -= V h2; nrm2 = w.w    (h1, h2, nrm2 in the
//           executor's memory; w must not be one of the k columns)
constexpr int max_fused_vectors = 16;

namespace cpu {
void fill(size64_t n, double value, double* x);
void axpby(size64_t n, double a, const double* x, double b, double* y);
void axpbypcz(size64_t n, double a, const double* x, double b, const double* y, double c, double* z);
double dot(size64_t n, const double* x, const double* y);
void dots(size64_t n, int k, const double* const* xs, const double* y, double* out);
void multi_axpby(size64_t n, int k, const double* a, const double* const* xs, double b, double* y);
double axpby_norm2(size64_t n, double a, const double* x, double b, double* y);
double cg_update(size64_t n, double alpha, const double* p, const double* q, double* x, double* r);
void bicgstab_update(size64_t n, double alpha, const double* ph, double omega, const double* sh, const double* s,
                     const double* t, const double* rh, double* x, double* r, double* out);
void gemv_t(size64_t n, int k, const double* V, const double* w, double* h);
void gemv_n(size64_t n, int k, double a, const double* V, const double* h, double b, double* y);
// gemv_t, gemv_n (a = -1, b = 1), gemv_t, gemv_n, dot: the reference of cuda::cgs2.
void cgs2(size64_t n, int k, const double* V, double* w, double* h1, double* h2, double* nrm2);
// The two-column forms of GMRES's delayed reorthogonalisation (Krylov dcgs2), V and X column-major
// with n rows: out (k x m, leading dimension k) = V(:, 0:k)^T X(:, 0:m), and
// Y(:, 0:m) = a V(:, 0:k) C + b Y(:, 0:m) with C k x m (leading dimension k). Y must not overlap
// V(:, 0:k).
void gemm_t(size64_t n, int k, const double* V, int m, const double* X, double* out);
void gemm_n(size64_t n, int k, int m, double a, const double* V, const double* C, double b, double* Y);
// sum_i x[i]: the read-only streaming ceiling of the bench reports (every byte of x read once).
double stream_sum(size64_t n, const double* x);
// out[k] = the fp32 value nearest to in[k] (round to nearest even); beyond the fp32 range +-inf, NaN
// stays NaN (the fp32 storage of preconditioners: AMG levels, block-Jacobi inverses).
void to_fp32(size64_t n, const double* in, float* out);
// The FP64 throughput ceiling of the bench suite: lane k runs fp64_peak_chains independent chains
// a <- a * m + c (a_j starts at 1 + (k mod 97) / 1024 + j / 4096, m = 1 - 2^-10, c = 2^-12) for
// `iterations` steps and writes the sum of its chains to out[k]; 2 flops per step and chain
// (fp64_peak_flops). The chains stay in [0.25, 2.1] for any length, so no step under- or overflows.
// The CUDA twin fuses each step into one FMA (the GPU's peak instruction), so the two agree to
// rounding (a few ulps per step), not bit for bit.
constexpr int fp64_peak_chains = 8;
constexpr double fp64_peak_flops(size64_t lanes, int iterations) { return 2.0 * fp64_peak_chains * double(lanes) * iterations; }
void fp64_peak(size64_t lanes, int iterations, double* out);
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
// The same sum written to `result` (device memory, outside the workspace), without synchronising.
void dot_to_device(stream_t s, size64_t n, const double* x, const double* y, double* result, double* workspace);
void dots(stream_t s, size64_t n, int k, const double* const* xs, const double* y, double* out, double* workspace);
void multi_axpby(stream_t s, size64_t n, int k, const double* a, const double* const* xs, double b, double* y);
// The fused Krylov updates use the dot workspace (dot_workspace_doubles(), or 2x that for
// bicgstab_update) and synchronise the stream to return their reductions.
double axpby_norm2(stream_t s, size64_t n, double a, const double* x, double b, double* y, double* workspace);
double cg_update(stream_t s, size64_t n, double alpha, const double* p, const double* q, double* x, double* r,
                 double* workspace);
void bicgstab_update(stream_t s, size64_t n, double alpha, const double* ph, double omega, const double* sh,
                     const double* s_, const double* t, const double* rh, double* x, double* r, double* out,
                     double* workspace);
// cuBLAS GEMV (cublasDgemv_64) on the handle's stream; asynchronous. k >= 1.
void gemv_t(blas_handle_t h, size64_t n, int k, const double* V, const double* w, double* out);
void gemv_n(blas_handle_t h, size64_t n, int k, double a, const double* V, const double* hv, double b, double* y);
// cpu::gemm_t and cpu::gemm_n with cuBLAS (C and out in device memory); V is read once for all m
// columns.
void gemm_t(blas_handle_t h, size64_t n, int k, const double* V, int m, const double* X, double* out);
void gemm_n(blas_handle_t h, size64_t n, int k, int m, double a, const double* V, const double* C, double b, double* Y);
// Own one-pass kernels for the same products with 1 <= k <= 32 columns (measured against cuBLAS by
// `blockres bench solver`); gemv_t_own needs dots_workspace_doubles(k) doubles of workspace and
// does not synchronise.
void gemv_t_own(stream_t s, size64_t n, int k, const double* V, const double* w, double* out, double* workspace);
void gemv_n_own(stream_t s, size64_t n, int k, double a, const double* V, const double* h, double b, double* y);
// cpu::cgs2 in three passes over V and w instead of five (the update of each pass fused with the
// next one's products, 3k + 5 vectors moved instead of 4k + 7), 1 <= k <= cgs2_max_cols; does not
// synchronise. Each pass sums its blocks' partials in its last block (a ticket in `ticket`, device
// memory that is 0 before the call and is 0 again after it), in a fixed order over a grid fixed by n
// and the device (one wave of blocks): the bits repeat from call to call on a device. The workspace holds cgs2_workspace_doubles doubles. The sums differ from cpu::cgs2's by
// rounding (another order).
constexpr int cgs2_max_cols = 32;
constexpr size64_t cgs2_workspace_doubles = size64_t(cgs2_max_cols + 1) * 1024;
void cgs2(stream_t s, size64_t n, int k, const double* V, double* w, double* h1, double* h2, double* nrm2,
          double* workspace, unsigned* ticket);
// The same with between(sums, count) called after each pass is queued (h1: k, h2: k, nrm2: 1), before the next
// pass reads them: a basis whose rows are split over ranks sums each pass's results over the ranks there, on the
// stream (dist::DeviceComm), keeping the three fused passes of one rank's rows.
void cgs2(stream_t s, size64_t n, int k, const double* V, double* w, double* h1, double* h2, double* nrm2,
          double* workspace, unsigned* ticket, const std::function<void(double*, int)>& between);
// cpu::stream_sum written to `result` (device memory) without synchronising: 16-byte loads, eight in
// flight per thread, one block per tile of stream_sum_tile_pairs pairs of doubles; the blocks' partials
// summed the same way once more and those by one block, in order, so the bits depend on n only. The
// workspace holds stream_sum_workspace(n) doubles. Meant as the fastest read-only pass over memory the
// bench reports divide by (a "read" ceiling beside the copy).
constexpr size64_t stream_sum_tile_pairs = 2048;
constexpr size64_t stream_sum_tiles(size64_t n)
{
  return std::max<size64_t>(1, (n / 2 + stream_sum_tile_pairs - 1) / stream_sum_tile_pairs);
}
constexpr size64_t stream_sum_workspace(size64_t n)
{
  return stream_sum_tiles(n) + stream_sum_tiles(stream_sum_tiles(n));
}
void stream_sum(stream_t s, size64_t n, const double* x, double* result, double* workspace);
void to_fp32(stream_t s, size64_t n, const double* in, float* out);  // cpu::to_fp32, the same bits
void fp64_peak(stream_t s, size64_t lanes, int iterations, double* out);  // cpu::fp64_peak with FMAs
}  // namespace cuda

}  // namespace blockres::kernels
