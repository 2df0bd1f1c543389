// Launch-configuration helpers and block-level reductions shared by the CUDA kernels.
#pragma once

#include "kernels/common.hpp"

#include <algorithm>

namespace blockres::cuda_detail {

constexpr int default_block = 256;

inline unsigned grid_for(size64_t n, int block = default_block, size64_t max_grid = 65535LL * 32)
{
  const size64_t g = (n + block - 1) / block;
  return static_cast<unsigned>(std::clamp<size64_t>(g, 1, max_grid));
}

// Sum over a full warp, halving by shuffles down; result valid in lane 0.
__device__ inline double warp_sum_down(double v)
{
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

// Sum over a thread block whose size is a multiple of 32 (<= 1024); result valid in thread 0.
__device__ inline double block_sum(double v)
{
  __shared__ double warp_sums[32];
  v = warp_sum_down(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_sum_down((lane < static_cast<int>(blockDim.x >> 5)) ? warp_sums[lane] : 0.0);
  }
  __syncthreads();  // warp_sums may be reused by a following call
  return v;
}

// Max over a thread block (same rules as block_sum).
__device__ inline double block_max(double v)
{
  __shared__ double warp_max[32];
  for (int off = 16; off > 0; off >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, off));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_max[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = (lane < static_cast<int>(blockDim.x >> 5)) ? warp_max[lane] : -1.0e308;
    for (int off = 16; off > 0; off >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, off));
  }
  __syncthreads();
  return v;
}

}  // namespace blockres::cuda_detail
