// CUDA vector kernels: grid-stride elementwise updates and a deterministic two-pass dot.
#include "kernels/blas1.hpp"
#include "kernels/cuda_check.cuh"
#include "kernels/launch.cuh"

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

}  // namespace blockres::kernels::cuda
