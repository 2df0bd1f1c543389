// CUDA vector kernels: grid-stride elementwise updates, deterministic two-pass dot and fused multi-dot.
#include "kernels/blas1/blas1.hpp"

#include "kernels/cuda_check.hpp"
#include "kernels/launch.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace blockres::kernels::cuda {

namespace {

using cuda_detail::block_sum;
using cuda_detail::grid_for;

__global__ void fill_kernel(size64_t n, double value, double* __restrict__ x)
{
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x)
    x[i] = value;
}

template <bool ReadY>
__global__ void axpby_kernel(size64_t n, double a, const double* __restrict__ x, double b, double* __restrict__ y)
{
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x)
    y[i] = ReadY ? a * x[i] + b * y[i] : a * x[i];
}

template <bool ReadZ>
__global__ void axpbypcz_kernel(size64_t n, double a, const double* __restrict__ x, double b,
                                const double* __restrict__ y, double c, double* __restrict__ z)
{
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x)
    z[i] = ReadZ ? a * x[i] + b * y[i] + c * z[i] : a * x[i] + b * y[i];
}

// Pass 1: each block writes one partial sum; pass 2: one block sums the partials.
// The grid size depends only on n, so the result is bitwise reproducible.
__global__ void dot_partial_kernel(size64_t n, const double* __restrict__ x, const double* __restrict__ y,
                                   double* __restrict__ partial)
{
  double v = 0.0;
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x)
    v += x[i] * y[i];
  v = block_sum(v);
  if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

// Read-only stream: block b reads the tile of stream_sum_tile_pairs pairs of doubles starting at pair
// b * stream_sum_tile_pairs by 16-byte loads, all eight of a thread's loads in flight before the first use,
// and writes one partial; the odd tail element (n odd) by block 0. One tile per block, as many blocks as
// tiles: on an H100 (2 GiB) 3.17 TB/s against 3.06 for one resident wave striding over the whole array
// (measured 2026-11-27 with variants of this kernel). x must be 16-byte aligned (every Array is).
constexpr int stream_sum_loads = 8;
static_assert(cuda_detail::default_block * stream_sum_loads == stream_sum_tile_pairs);
__global__ void __launch_bounds__(256) stream_sum_kernel(size64_t n, const double* __restrict__ x,
                                                         double* __restrict__ partial)
{
  const double2* __restrict__ x2 = reinterpret_cast<const double2*>(x);
  const size64_t pairs = n / 2;
  const size64_t base = size64_t(blockIdx.x) * stream_sum_tile_pairs + threadIdx.x;
  double v[stream_sum_loads];
  if (base + (stream_sum_loads - 1) * size64_t(blockDim.x) < pairs) {  // a whole tile
    double2 a[stream_sum_loads];
#pragma unroll
    for (int j = 0; j < stream_sum_loads; ++j) a[j] = __ldg(x2 + base + j * size64_t(blockDim.x));
#pragma unroll
    for (int j = 0; j < stream_sum_loads; ++j) v[j] = a[j].x + a[j].y;
  } else {  // the last, partial tile
#pragma unroll
    for (int j = 0; j < stream_sum_loads; ++j) {
      const size64_t i = base + j * size64_t(blockDim.x);
      v[j] = 0.0;
      if (i < pairs) {
        const double2 a = __ldg(x2 + i);
        v[j] = a.x + a.y;
      }
    }
  }
  double t = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
  if (blockIdx.x == 0 && threadIdx.x == 0 && (n & 1)) t += x[n - 1];
  t = block_sum(t);
  if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

// cpu::fp64_peak, one lane per thread, each step one FMA per chain (the chains are independent, so the
// scheduler issues them back to back).
__global__ void __launch_bounds__(256) fp64_peak_kernel(size64_t lanes, int iterations, double* __restrict__ out)
{
  const size64_t k = blockIdx.x * size64_t(blockDim.x) + threadIdx.x;
  if (k >= lanes) return;
  constexpr double m = 1.0 - 1.0 / 1024.0, c = 1.0 / 4096.0;
  double a[cpu::fp64_peak_chains];
#pragma unroll
  for (int j = 0; j < cpu::fp64_peak_chains; ++j) a[j] = 1.0 + double(k % 97) / 1024.0 + double(j) / 4096.0;
#pragma unroll 4
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int j = 0; j < cpu::fp64_peak_chains; ++j) a[j] = fma(a[j], m, c);
  double sum = 0.0;
#pragma unroll
  for (int j = 0; j < cpu::fp64_peak_chains; ++j) sum += a[j];
  out[k] = sum;
}

__global__ void sum_partials_kernel(int np, const double* __restrict__ partial, double* __restrict__ out)
{
  double v = 0.0;
  for (int i = threadIdx.x; i < np; i += blockDim.x) v += partial[i];
  v = block_sum(v);
  if (threadIdx.x == 0) *out = v;
}

// The fused forms take up to max_fused_vectors vectors by value. Loops over them run to the
// compile-time bound, guarded by the (block-uniform) runtime count, so the accumulators stay
// in registers.
struct FusedVectors {
  const double* x[max_fused_vectors];
  double a[max_fused_vectors];
};

// The columns of a fused multi-dot: k separate vectors (dots) or the first k columns of a
// column-major n x k matrix (gemv_t_own).
struct VectorList {
  FusedVectors v;  // by value: after unrolling, every x[j] is a constant-offset kernel-parameter load
  __device__ double operator()(int j, size64_t i) const { return v.x[j][i]; }
};
struct MatrixColumns {
  const double* V;
  size64_t n;
  __device__ double operator()(int j, size64_t i) const { return V[i + j * n]; }
};

// dots / gemv_t_own, pass 1: one read of y[i] serves all k <= MaxK products, kept in registers.
// partial[j * gridDim.x + b] holds block b's sum for column j, so pass 2 reads each column's
// partials contiguously.
template <int MaxK, class Columns>
__device__ void multi_dot_partial(size64_t n, int k, const Columns& col, const double* __restrict__ y,
                                  double* __restrict__ partial)
{
  double acc[MaxK];
#pragma unroll
  for (int j = 0; j < MaxK; ++j) acc[j] = 0.0;
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x) {
    const double yi = y[i];
#pragma unroll
    for (int j = 0; j < MaxK; ++j)
      if (j < k) acc[j] += col(j, i) * yi;
  }
#pragma unroll
  for (int j = 0; j < MaxK; ++j)
    if (j < k) {  // uniform over the block: every thread reaches block_sum's barriers
      const double sum = block_sum(acc[j]);
      if (threadIdx.x == 0) partial[j * size64_t(gridDim.x) + blockIdx.x] = sum;
    }
}

__global__ void dots_partial_kernel(size64_t n, int k, FusedVectors v, const double* __restrict__ y,
                                    double* __restrict__ partial)
{
  multi_dot_partial<max_fused_vectors>(n, k, VectorList{v}, y, partial);
}

// dots, pass 2: block j sums vector j's np partials in a fixed order.
__global__ void dots_sum_kernel(int np, const double* __restrict__ partial, double* __restrict__ out)
{
  const double* p = partial + size64_t(blockIdx.x) * np;
  double v = 0.0;
  for (int i = threadIdx.x; i < np; i += blockDim.x) v += p[i];
  v = block_sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

template <bool ReadY>
__global__ void multi_axpby_kernel(size64_t n, int k, FusedVectors v, double b, double* __restrict__ y)
{
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x) {
    double sum = ReadY ? b * y[i] : 0.0;
#pragma unroll
    for (int j = 0; j < max_fused_vectors; ++j)
      if (j < k) sum += v.a[j] * v.x[j][i];
    y[i] = sum;
  }
}

// Fused Krylov updates: Op::apply(i) updates element i and returns its K reduction terms;
// block b's partial sums go to partial[j * gridDim.x + b] as in dots, summed by dots_sum_kernel.
template <int K, class Op>
__global__ void fused_update_kernel(size64_t n, Op op, double* __restrict__ partial)
{
  double acc[K] = {};
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x) {
    double t[K];
    op.apply(i, t);
#pragma unroll
    for (int j = 0; j < K; ++j) acc[j] += t[j];
  }
#pragma unroll
  for (int j = 0; j < K; ++j) {
    const double sum = block_sum(acc[j]);
    if (threadIdx.x == 0) partial[j * size64_t(gridDim.x) + blockIdx.x] = sum;
  }
}

struct AxpbyNorm2 {
  double a, b;
  const double* __restrict__ x;
  double* __restrict__ y;
  __device__ void apply(size64_t i, double* t) const
  {
    const double v = a * x[i] + b * y[i];
    y[i] = v;
    t[0] = v * v;
  }
};

struct CgUpdate {
  double alpha;
  const double* __restrict__ p;
  const double* __restrict__ q;
  double* __restrict__ x;
  double* __restrict__ r;
  __device__ void apply(size64_t i, double* t) const
  {
    x[i] += alpha * p[i];
    const double v = r[i] - alpha * q[i];
    r[i] = v;
    t[0] = v * v;
  }
};

// s and sh may alias r (no __restrict__ on those three): each element is read before it is written.
struct BicgstabUpdate {
  double alpha, omega;
  const double* __restrict__ ph;
  const double* sh;
  const double* s;
  const double* __restrict__ t;
  const double* __restrict__ rh;
  double* __restrict__ x;
  double* r;
  __device__ void apply(size64_t i, double* out) const
  {
    const double si = s[i], shi = sh[i];
    x[i] += alpha * ph[i] + omega * shi;
    const double v = si - omega * t[i];
    r[i] = v;
    out[0] = v * v;
    out[1] = rh[i] * v;
  }
};

// Launches the fused update and returns its K sums to `out` (host); synchronises the stream.
// The grid depends only on n, so the sums are bitwise reproducible.
template <int K, class Op>
void fused_update(stream_t s, size64_t n, const Op& op, double* out, double* workspace)
{
  if (n <= 0) {
    for (int j = 0; j < K; ++j) out[j] = 0.0;
    return;
  }
  const unsigned nb = grid_for(n, cuda_detail::default_block, dots_max_blocks);
  double* results = workspace + size64_t(K) * nb;
  fused_update_kernel<K><<<nb, cuda_detail::default_block, 0, s>>>(n, op, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  dots_sum_kernel<<<K, 512, 0, s>>>(static_cast<int>(nb), workspace, results);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(out, results, sizeof(double) * K, cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
}

// Own tall-skinny GEMVs (the alternative to cuBLAS, KrylovConfig::cublas_gemv = false): columns
// j < k <= gemv_max_cols of V, one pass over the rows. gemv_t: each thread accumulates its rows'
// k products in registers; the block partials go to partial[j * gridDim.x + b] for dots_sum_kernel.
constexpr int gemv_max_cols = 32;

__global__ void gemv_t_partial_kernel(size64_t n, int k, const double* __restrict__ V, const double* __restrict__ w,
                                      double* __restrict__ partial)
{
  multi_dot_partial<gemv_max_cols>(n, k, MatrixColumns{V, n}, w, partial);
}

template <bool ReadY>
__global__ void gemv_n_kernel(size64_t n, int k, double a, const double* __restrict__ V, const double* __restrict__ h,
                              double b, double* __restrict__ y)
{
  __shared__ double hs[gemv_max_cols];
  if (threadIdx.x < k) hs[threadIdx.x] = h[threadIdx.x];
  __syncthreads();
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x) {
    double v = 0.0;
#pragma unroll
    for (int j = 0; j < gemv_max_cols; ++j)
      if (j < k) v += V[i + j * n] * hs[j];
    y[i] = ReadY ? a * v + b * y[i] : a * v;
  }
}

// CGS2 in three fused passes (cgs2): pass p reads V's first k <= MaxK columns and w once, one
// thread per row (grid-stride):
//   Update: w_i -= sum_j V_ij c_j, c (k values) read from device memory, where the previous pass
//           left it;
//   Dots:   out[j] = sum_i V_ij w_i (w as updated), j < k;   Norm: out[R - 1] = sum_i w_i^2.
// Each block adds its rows' terms warp by warp into partial[r * gridDim.x + b]; the last block to
// finish (a ticket counter in device memory, put back to 0 by that block) adds the partials in a
// fixed order, so the results depend on n and the grid (gs_grid: fixed on a device), not on which
// block finished when.
constexpr int gs_max_blocks = 1024;
constexpr int gs_block = 256;
static_assert(size64_t(cgs2_max_cols + 1) * gs_max_blocks <= cgs2_workspace_doubles, "cgs2's partial sums");

template <int MaxK, bool Update, bool Dots, bool Norm>
__global__ void __launch_bounds__(gs_block, MaxK <= 16 ? 2 : 1)
    gs_pass_kernel(size64_t n, int k, const double* __restrict__ V, const double* __restrict__ c, double* __restrict__ w,
                   double* __restrict__ partial, double* __restrict__ out, unsigned* __restrict__ ticket)
{
  constexpr int MaxR = (Dots ? MaxK : 0) + (Norm ? 1 : 0);
  constexpr int warps = gs_block / 32;
  __shared__ double cs[MaxK];
  __shared__ double warp_part[warps][MaxR];
  __shared__ bool last;
  if constexpr (Update) {
    if (threadIdx.x < k) cs[threadIdx.x] = c[threadIdx.x];
    __syncthreads();
  }
  double acc[MaxK];  // Dots
#pragma unroll
  for (int j = 0; j < MaxK; ++j) acc[j] = 0.0;
  double sq = 0.0;  // Norm
  for (size64_t i = blockIdx.x * size64_t(gs_block) + threadIdx.x; i < n; i += size64_t(gridDim.x) * gs_block) {
    double v[MaxK];
#pragma unroll
    for (int j = 0; j < MaxK; ++j) v[j] = j < k ? V[i + j * n] : 0.0;
    double wi = w[i];
    if constexpr (Update) {
      double t = 0.0;
#pragma unroll
      for (int j = 0; j < MaxK; ++j)
        if (j < k) t += v[j] * cs[j];
      wi = -t + wi;  // gemv_n's a (V c) + b w with a = -1, b = 1
      w[i] = wi;
    }
    if constexpr (Dots) {
#pragma unroll
      for (int j = 0; j < MaxK; ++j)
        if (j < k) acc[j] += v[j] * wi;
    }
    if constexpr (Norm) sq += wi * wi;
  }
  // The values: Dots' k sums in slots 0..k-1, then Norm's in slot R - 1.
  const int R = (Dots ? k : 0) + (Norm ? 1 : 0);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if constexpr (Dots) {
#pragma unroll
    for (int j = 0; j < MaxK; ++j)
      if (j < k) {  // uniform over the block
        const double t = cuda_detail::warp_sum_down(acc[j]);
        if (lane == 0) warp_part[warp][j] = t;
      }
  }
  if constexpr (Norm) {
    const double t = cuda_detail::warp_sum_down(sq);
    if (lane == 0) warp_part[warp][R - 1] = t;
  }
  __syncthreads();
  const unsigned nb = gridDim.x;
  if (threadIdx.x < R) {
    double t = 0.0;
#pragma unroll
    for (int q = 0; q < warps; ++q) t += warp_part[q][threadIdx.x];
    partial[threadIdx.x * size64_t(nb) + blockIdx.x] = t;
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == nb - 1;
  __syncthreads();
  if (!last) return;
  // The last block: warp q adds up values q, q + warps, ...; lane l the partials l, l + 32, ... (eight
  // loads in flight a lane: this tail is on every pass's critical path).
  for (int r = warp; r < R; r += warps) {
    const double* p = partial + r * size64_t(nb);
    double t = 0.0;
#pragma unroll 8
    for (unsigned b = lane; b < nb; b += 32) t += __ldcg(p + b);
    t = cuda_detail::warp_sum_down(t);
    if (lane == 0) out[r] = t;
  }
  if (threadIdx.x == 0) *ticket = 0u;
}

// One pass's grid: a block per 256 rows up to the blocks the device holds at once (one wave; fewer
// partials for the last block to add). Taken from the device current at the first call and kept, so
// the sums repeat from call to call (a process that used devices of different models would give the
// later ones this grid too: the same results, another occupancy).
template <int MaxK, bool Update, bool Dots, bool Norm>
unsigned gs_grid(size64_t n)
{
  static const unsigned resident = [] {
    int device = 0, sms = 0, per_sm = 0;
    BLOCKRES_CUDA_CHECK(cudaGetDevice(&device));
    BLOCKRES_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    BLOCKRES_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gs_pass_kernel<MaxK, Update, Dots, Norm>, gs_block, 0));
    return static_cast<unsigned>(std::clamp(sms * std::max(per_sm, 1), 1, gs_max_blocks));
  }();
  return grid_for(n, gs_block, resident);
}

template <int MaxK, bool Update, bool Dots, bool Norm>
void gs_pass(stream_t s, size64_t n, int k, const double* V, const double* c, double* w, double* out,
             double* workspace, unsigned* ticket)
{
  gs_pass_kernel<MaxK, Update, Dots, Norm>
      <<<gs_grid<MaxK, Update, Dots, Norm>(n), gs_block, 0, s>>>(n, k, V, c, w, workspace, out, ticket);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int MaxK>
void gs_passes(stream_t s, size64_t n, int k, const double* V, double* w, double* h1, double* h2, double* nrm2,
               double* workspace, unsigned* ticket, const std::function<void(double*, int)>* between)
{
  gs_pass<MaxK, false, true, false>(s, n, k, V, nullptr, w, h1, workspace, ticket);
  if (between) (*between)(h1, k);
  gs_pass<MaxK, true, true, false>(s, n, k, V, h1, w, h2, workspace, ticket);
  if (between) (*between)(h2, k);
  gs_pass<MaxK, true, false, true>(s, n, k, V, h2, w, nrm2, workspace, ticket);
  if (between) (*between)(nrm2, 1);
}

void check_cublas(cublasStatus_t st, const char* what)
{
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + cublasGetStatusString(st));
}

FusedVectors fused(int k, const double* a, const double* const* xs)
{
  if (k < 0 || k > max_fused_vectors) throw std::invalid_argument("fused vector kernel: k must be in 0..16");
  FusedVectors v{};
  for (int j = 0; j < k; ++j) {
    v.x[j] = xs[j];
    v.a[j] = a ? a[j] : 0.0;
  }
  return v;
}

}  // namespace

void fill(stream_t s, size64_t n, double value, double* x)
{
  if (n <= 0) return;
  fill_kernel<<<grid_for(n), cuda_detail::default_block, 0, s>>>(n, value, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void axpby(stream_t s, size64_t n, double a, const double* x, double b, double* y)
{
  if (n <= 0) return;
  if (b == 0.0)
    axpby_kernel<false><<<grid_for(n), cuda_detail::default_block, 0, s>>>(n, a, x, b, y);
  else
    axpby_kernel<true><<<grid_for(n), cuda_detail::default_block, 0, s>>>(n, a, x, b, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void axpbypcz(stream_t s, size64_t n, double a, const double* x, double b, const double* y, double c, double* z)
{
  if (n <= 0) return;
  if (c == 0.0)
    axpbypcz_kernel<false><<<grid_for(n), cuda_detail::default_block, 0, s>>>(n, a, x, b, y, c, z);
  else
    axpbypcz_kernel<true><<<grid_for(n), cuda_detail::default_block, 0, s>>>(n, a, x, b, y, c, z);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

double dot(stream_t s, size64_t n, const double* x, const double* y, double* workspace)
{
  if (n <= 0) return 0.0;
  const unsigned nb = grid_for(n, cuda_detail::default_block, dot_max_blocks);
  dot_partial_kernel<<<nb, cuda_detail::default_block, 0, s>>>(n, x, y, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  sum_partials_kernel<<<1, 1024, 0, s>>>(static_cast<int>(nb), workspace, workspace + dot_max_blocks);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  double result = 0.0;
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(&result, workspace + dot_max_blocks, sizeof(double), cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  return result;
}

namespace {
__global__ void to_fp32_kernel(size64_t n, const double* __restrict__ in, float* __restrict__ out)
{
  constexpr double big = 3.4028234663852886e38;  // FLT_MAX
  for (size64_t k = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; k < n; k += size64_t(gridDim.x) * blockDim.x) {
    const double v = in[k];
    out[k] = v > big ? __int_as_float(0x7f800000) : v < -big ? __int_as_float(0xff800000) : __double2float_rn(v);
  }
}
}  // namespace

void to_fp32(stream_t s, size64_t n, const double* in, float* out)
{
  if (n == 0) return;
  to_fp32_kernel<<<cuda_detail::grid_for(n, cuda_detail::default_block), cuda_detail::default_block, 0, s>>>(n, in,
                                                                                                            out);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void stream_sum(stream_t s, size64_t n, const double* x, double* result, double* workspace)
{
  // The partials (one per tile, 65536 for 2 GiB) summed by the same kernel once more, then by one block:
  // one block alone reading 65536 doubles would add microseconds to the pass it is meant to time.
  const size64_t blocks = stream_sum_tiles(n), blocks2 = stream_sum_tiles(blocks);
  if (blocks > size64_t(std::numeric_limits<int>::max()))
    throw std::invalid_argument("stream_sum: " + std::to_string(n) + " elements need more blocks than a grid holds");
  stream_sum_kernel<<<static_cast<unsigned>(blocks), cuda_detail::default_block, 0, s>>>(n, x, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  stream_sum_kernel<<<static_cast<unsigned>(blocks2), cuda_detail::default_block, 0, s>>>(blocks, workspace,
                                                                                         workspace + blocks);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  sum_partials_kernel<<<1, 1024, 0, s>>>(static_cast<int>(blocks2), workspace + blocks, result);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void fp64_peak(stream_t s, size64_t lanes, int iterations, double* out)
{
  if (lanes == 0) return;
  fp64_peak_kernel<<<static_cast<unsigned>((lanes + 255) / 256), 256, 0, s>>>(lanes, iterations, out);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void dot_to_device(stream_t s, size64_t n, const double* x, const double* y, double* result, double* workspace)
{
  if (n <= 0) {
    BLOCKRES_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double), s));
    return;
  }
  const unsigned nb = grid_for(n, cuda_detail::default_block, dot_max_blocks);
  dot_partial_kernel<<<nb, cuda_detail::default_block, 0, s>>>(n, x, y, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  sum_partials_kernel<<<1, 1024, 0, s>>>(static_cast<int>(nb), workspace, result);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void dots(stream_t s, size64_t n, int k, const double* const* xs, const double* y, double* out, double* workspace)
{
  const FusedVectors v = fused(k, nullptr, xs);
  if (k == 0) return;
  if (n <= 0) {
    for (int j = 0; j < k; ++j) out[j] = 0.0;
    return;
  }
  // The grid depends only on n, so every result is bitwise reproducible.
  const unsigned nb = grid_for(n, cuda_detail::default_block, dots_max_blocks);
  double* results = workspace + size64_t(k) * nb;
  dots_partial_kernel<<<nb, cuda_detail::default_block, 0, s>>>(n, k, v, y, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  dots_sum_kernel<<<k, 512, 0, s>>>(static_cast<int>(nb), workspace, results);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(out, results, sizeof(double) * k, cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
}

void multi_axpby(stream_t s, size64_t n, int k, const double* a, const double* const* xs, double b, double* y)
{
  const FusedVectors v = fused(k, a, xs);
  if (n <= 0) return;
  if (b == 0.0)
    multi_axpby_kernel<false><<<grid_for(n), cuda_detail::default_block, 0, s>>>(n, k, v, b, y);
  else
    multi_axpby_kernel<true><<<grid_for(n), cuda_detail::default_block, 0, s>>>(n, k, v, b, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

double axpby_norm2(stream_t s, size64_t n, double a, const double* x, double b, double* y, double* workspace)
{
  double out = 0.0;
  fused_update<1>(s, n, AxpbyNorm2{a, b, x, y}, &out, workspace);
  return out;
}

double cg_update(stream_t s, size64_t n, double alpha, const double* p, const double* q, double* x, double* r,
                 double* workspace)
{
  double out = 0.0;
  fused_update<1>(s, n, CgUpdate{alpha, p, q, x, r}, &out, workspace);
  return out;
}

void bicgstab_update(stream_t s, size64_t n, double alpha, const double* ph, double omega, const double* sh,
                     const double* s_, const double* t, const double* rh, double* x, double* r, double* out,
                     double* workspace)
{
  fused_update<2>(s, n, BicgstabUpdate{alpha, omega, ph, sh, s_, t, rh, x, r}, out, workspace);
}

void gemv_t(blas_handle_t h, size64_t n, int k, const double* V, const double* w, double* out)
{
  const double one = 1.0, zero = 0.0;
  check_cublas(cublasDgemv_64(h, CUBLAS_OP_T, n, k, &one, V, n, w, 1, &zero, out, 1), "cublasDgemv (V^T w)");
}

void gemv_n(blas_handle_t h, size64_t n, int k, double a, const double* V, const double* hv, double b, double* y)
{
  check_cublas(cublasDgemv_64(h, CUBLAS_OP_N, n, k, &a, V, n, hv, 1, &b, y, 1), "cublasDgemv (V h)");
}

void gemm_t(blas_handle_t h, size64_t n, int k, const double* V, int m, const double* X, double* out)
{
  const double one = 1.0, zero = 0.0;
  check_cublas(cublasDgemm_64(h, CUBLAS_OP_T, CUBLAS_OP_N, k, m, n, &one, V, n, X, n, &zero, out, k),
               "cublasDgemm (V^T X)");
}

void gemm_n(blas_handle_t h, size64_t n, int k, int m, double a, const double* V, const double* C, double b, double* Y)
{
  check_cublas(cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &a, V, n, C, k, &b, Y, n), "cublasDgemm (V C)");
}

void gemv_t_own(stream_t s, size64_t n, int k, const double* V, const double* w, double* out, double* workspace)
{
  if (k < 1 || k > gemv_max_cols) throw std::invalid_argument("gemv_t_own: k must be in 1..32");
  if (n <= 0) {
    BLOCKRES_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(double) * k, s));
    return;
  }
  const unsigned nb = grid_for(n, cuda_detail::default_block, dots_max_blocks);
  gemv_t_partial_kernel<<<nb, cuda_detail::default_block, 0, s>>>(n, k, V, w, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  dots_sum_kernel<<<k, 512, 0, s>>>(static_cast<int>(nb), workspace, out);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void gemv_n_own(stream_t s, size64_t n, int k, double a, const double* V, const double* h, double b, double* y)
{
  if (k < 1 || k > gemv_max_cols) throw std::invalid_argument("gemv_n_own: k must be in 1..32");
  if (n <= 0) return;
  if (b == 0.0)
    gemv_n_kernel<false><<<grid_for(n), cuda_detail::default_block, 0, s>>>(n, k, a, V, h, b, y);
  else
    gemv_n_kernel<true><<<grid_for(n), cuda_detail::default_block, 0, s>>>(n, k, a, V, h, b, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

namespace {
void cgs2_passes(stream_t s, size64_t n, int k, const double* V, double* w, double* h1, double* h2, double* nrm2,
                 double* workspace, unsigned* ticket, const std::function<void(double*, int)>* between)
{
  if (k < 1 || k > cgs2_max_cols) throw std::invalid_argument("cgs2: k must be in 1..32");
  if (n <= 0) {  // no rows here: zero sums (a rank's part of the sums may still come from the others)
    BLOCKRES_CUDA_CHECK(cudaMemsetAsync(h1, 0, sizeof(double) * k, s));
    if (between) (*between)(h1, k);
    BLOCKRES_CUDA_CHECK(cudaMemsetAsync(h2, 0, sizeof(double) * k, s));
    if (between) (*between)(h2, k);
    BLOCKRES_CUDA_CHECK(cudaMemsetAsync(nrm2, 0, sizeof(double), s));
    if (between) (*between)(nrm2, 1);
    return;
  }
  if (k <= 4)
    gs_passes<4>(s, n, k, V, w, h1, h2, nrm2, workspace, ticket, between);
  else if (k <= 8)
    gs_passes<8>(s, n, k, V, w, h1, h2, nrm2, workspace, ticket, between);
  else if (k <= 16)
    gs_passes<16>(s, n, k, V, w, h1, h2, nrm2, workspace, ticket, between);
  else
    gs_passes<32>(s, n, k, V, w, h1, h2, nrm2, workspace, ticket, between);
}
}  // namespace

void cgs2(stream_t s, size64_t n, int k, const double* V, double* w, double* h1, double* h2, double* nrm2,
          double* workspace, unsigned* ticket)
{
  cgs2_passes(s, n, k, V, w, h1, h2, nrm2, workspace, ticket, nullptr);
}

void cgs2(stream_t s, size64_t n, int k, const double* V, double* w, double* h1, double* h2, double* nrm2,
          double* workspace, unsigned* ticket, const std::function<void(double*, int)>& between)
{
  cgs2_passes(s, n, k, V, w, h1, h2, nrm2, workspace, ticket, &between);
}

}  // namespace blockres::kernels::cuda
