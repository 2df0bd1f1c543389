// CUDA block-Jacobi helper kernels: block extraction (scatter) and the failure count.
#include "kernels/batched/block_diag.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/launch.cuh"


namespace blockres::kernels::cuda {

namespace {

// One thread per copied entry; consecutive threads copy consecutive entries of a block.
__global__ void scatter_kernel(index_t n, int bs, const index_t* __restrict__ src, const size64_t* __restrict__ dst_off,
                               const int* __restrict__ ld, const double* __restrict__ values, double* __restrict__ dst)
{
  const size64_t bb = size64_t(bs) * bs;
  for (size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; t < size64_t(n) * bb;
       t += size64_t(gridDim.x) * blockDim.x) {
    const size64_t e = t / bb;
    const int q = static_cast<int>(t - e * bb), i = q / bs, j = q - i * bs;
    dst[dst_off[e] + size64_t(i) * ld[e] + j] = values[size64_t(src[e]) * bb + q];
  }
}

__global__ void extract_diagonal_kernel(index_t nrows, int bs, const index_t* __restrict__ diag_pos,
                                        const double* __restrict__ values, double* __restrict__ d)
{
  const size64_t bb = size64_t(bs) * bs;
  for (size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; t < size64_t(nrows) * bs;
       t += size64_t(gridDim.x) * blockDim.x) {
    const size64_t r = t / bs;
    const int i = static_cast<int>(t - r * bs);
    d[t] = values[size64_t(diag_pos[r]) * bb + i * (bs + 1)];
  }
}

__global__ void count_nonzero_kernel(index_t n, const int* __restrict__ info, index_t* __restrict__ count)
{
  index_t c = 0;
  for (index_t e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += gridDim.x * blockDim.x) c += info[e] != 0;
  for (int off = 16; off > 0; off >>= 1) c += __shfl_down_sync(0xffffffffu, c, off);
  if ((threadIdx.x & 31) == 0 && c != 0) atomicAdd(count, c);
}

}  // namespace

void scatter_blocks(stream_t s, index_t n, int bs, const index_t* src, const size64_t* dst_off, const int* ld,
                    const double* values, double* dst)
{
  if (n <= 0) return;
  scatter_kernel<<<cuda_detail::grid_for(size64_t(n) * bs * bs), cuda_detail::default_block, 0, s>>>(
      n, bs, src, dst_off, ld, values, dst);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void extract_diagonal(stream_t s, index_t nrows, int bs, const index_t* diag_pos, const double* values, double* d)
{
  if (nrows <= 0) return;
  extract_diagonal_kernel<<<cuda_detail::grid_for(size64_t(nrows) * bs), cuda_detail::default_block, 0, s>>>(
      nrows, bs, diag_pos, values, d);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

index_t count_nonzero(stream_t s, index_t n, const int* info, index_t* workspace)
{
  if (n <= 0) return 0;
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(workspace, 0, sizeof(index_t), s));
  count_nonzero_kernel<<<cuda_detail::grid_for(n), cuda_detail::default_block, 0, s>>>(n, info, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  index_t c = 0;
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(&c, workspace, sizeof(index_t), cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  return c;
}

}  // namespace blockres::kernels::cuda
