// CUDA block-diagonal inversion (one thread per block, in place in the output) and
// application (one thread per scalar row). Issue 4 brings the batched register kernels.
#include "kernels/block_diag.hpp"
#include "kernels/cuda_check.cuh"
#include "kernels/launch.cuh"

#include <stdexcept>

namespace blockres::kernels::cuda {

namespace {

__global__ void invert_kernel(index_t nrows, int bs, const double* __restrict__ values,
                              const index_t* __restrict__ diag_pos, double* __restrict__ inv, int* __restrict__ info,
                              index_t* __restrict__ failed)
{
  const index_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  const size64_t bb = size64_t(bs) * bs;
  const double* src = values + size64_t(diag_pos[r]) * bb;
  double* dst = inv + size64_t(r) * bb;
  for (size64_t e = 0; e < bb; ++e) dst[e] = src[e];
  const int code = gauss_jordan_invert_inplace(bs, dst);
  info[r] = code;
  if (code != 0) atomicAdd(failed, 1);
}

template <int BS>
__global__ void apply_kernel(index_t nrows, int bs_rt, const double* __restrict__ inv, const double* __restrict__ x,
                             double* __restrict__ y)
{
  const int bs = BS > 0 ? BS : bs_rt;
  const size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x;
  if (t >= size64_t(nrows) * bs) return;
  const size64_t r = t / bs;
  const int i = static_cast<int>(t % bs);
  const double* row = inv + r * bs * bs + size64_t(i) * bs;
  const double* xr = x + r * bs;
  double sum = 0.0;
  for (int j = 0; j < bs; ++j) sum += row[j] * xr[j];
  y[t] = sum;
}

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

index_t invert_diagonal_blocks(stream_t s, const BsrView<const double>& A, const index_t* diag_pos, double* inv,
                               int* info, index_t* workspace)
{
  if (A.bs < 1 || A.bs > block_diag_max_bs) throw std::invalid_argument("invert_diagonal_blocks: unsupported block size");
  if (A.nrows <= 0) return 0;
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(workspace, 0, sizeof(index_t), s));
  const int block = 128;
  invert_kernel<<<(A.nrows + block - 1) / block, block, 0, s>>>(A.nrows, A.bs, A.values, diag_pos, inv, info,
                                                                workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  index_t failed = 0;
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(&failed, workspace, sizeof(index_t), cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  return failed;
}

void block_diag_apply(stream_t s, index_t nrows, int bs, const double* inv, const double* x, double* y)
{
  if (nrows <= 0) return;
  const size64_t n = size64_t(nrows) * bs;
  const unsigned grid = static_cast<unsigned>((n + cuda_detail::default_block - 1) / cuda_detail::default_block);
  if (bs == 2)
    apply_kernel<2><<<grid, cuda_detail::default_block, 0, s>>>(nrows, bs, inv, x, y);
  else
    apply_kernel<0><<<grid, cuda_detail::default_block, 0, s>>>(nrows, bs, inv, x, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::kernels::cuda
