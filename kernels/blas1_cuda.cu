// CUDA vector kernels: grid-stride elementwise updates, deterministic two-pass dot and fused multi-dot.
#include "kernels/blas1.hpp"
#include "kernels/cuda_check.cuh"
#include "kernels/launch.cuh"

#include <stdexcept>

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

// dots, pass 1: one read of y[i] serves all k products. partial[j * gridDim.x + b] holds block
// b's sum for vector j, so pass 2 reads each vector's partials contiguously.
__global__ void dots_partial_kernel(size64_t n, int k, FusedVectors v, const double* __restrict__ y,
                                    double* __restrict__ partial)
{
  double acc[max_fused_vectors];
#pragma unroll
  for (int j = 0; j < max_fused_vectors; ++j) acc[j] = 0.0;
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x) {
    const double yi = y[i];
#pragma unroll
    for (int j = 0; j < max_fused_vectors; ++j)
      if (j < k) acc[j] += v.x[j][i] * yi;
  }
#pragma unroll
  for (int j = 0; j < max_fused_vectors; ++j)
    if (j < k) {  // uniform over the block: every thread reaches block_sum's barriers
      const double sum = block_sum(acc[j]);
      if (threadIdx.x == 0) partial[j * size64_t(gridDim.x) + blockIdx.x] = sum;
    }
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

}  // namespace blockres::kernels::cuda
