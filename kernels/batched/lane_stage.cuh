// The warp stage of the lane-per-block solves of uniform batches (the LU solve's lane_solve, batched_lu_cuda.cuh,
// and the Gauss–Huard solve's gh_lane_solve_kernel, batched_gh_cuda.cuh): B = blocks_per_warp(N) consecutive
// blocks of N rows, lane l < B working on block b0 + l. Shared memory: the blocks' N x N entries at odd stride S
// per block, then their right-hand sides and an index vector (pivots or permutation) at odd stride SN, so that
// lane l reading entry e of its own block is conflict-free; the caller's own arrays may follow (after()).
// launch() starts such a kernel.
#pragma once

#include "kernels/batched/batched.hpp"
#include "kernels/cuda_check.hpp"

#include <cuda_pipeline.h>

#include <algorithm>
#include <cstddef>

namespace blockres::kernels::cuda::lu_detail {
// Shared memory one thread block may use on the current device (cudaDevAttrMaxSharedMemoryPerBlockOptin:
// 227 KB on sm_90, 163 KB on sm_80, 99 KB on sm_86 and sm_89), or the test hook's value when set
// (batched_lu_cuda.cu).
std::size_t shared_bytes_per_block_limit();
}  // namespace blockres::kernels::cuda::lu_detail

namespace blockres::kernels::cuda_lane {

// Blocks per warp of the lane solves of N rows. The stage holds B (N^2 + N) doubles: at 32 blocks of 16 rows 72 KB a
// warp, three warps an SM, too few to hide the loads, so larger blocks take fewer per warp (lanes B..31 idle). H200
// (issue 31, session 46, one call, % of copy, LU / Gauss-Huard solve): B 16 at 17..21 81.2-84.2 / 84.2-91.0 where B 8
// gave 79.5-83.7 / 83.6-88.7; B 8 at 22..24 71.2-72.6 / 77.6-83.0 where B 16 gave 50.7-70.3 / 55.8-78.4 (B 16 at 22+
// leaves one or two warps an SM). B 4 was below B 8 at 16..29 for Gauss-Huard; for LU it was above at 22 and 24
// (75.7 and 73.0) and below at 23 (58.1). Above 24 (LU) and 29 (Gauss-Huard) the solvers keep their other kernels.
constexpr int blocks_per_warp(int n) { return n <= 15 ? 32 : n <= 21 ? 16 : 8; }

template <int N>
struct LaneStage {
  static constexpr int B = blocks_per_warp(N);
  static constexpr int NN = N * N;
  static constexpr int S = NN | 1;
  static constexpr int SN = N | 1;
  static constexpr std::size_t bytes = B * (std::size_t(S) + SN) * sizeof(double) + B * SN * sizeof(index_t);

  // The factorisations' stage (uniform layouts, load_matrices / store_matrices): the matrices, then one byte per
  // column for each block (Q(), the Gauss–Huard lane factor's column order; N <= 255) and no vectors. 5..13 rows
  // then fit more warps an SM than with `bytes` (228 KB an SM, 1 KB reserved per thread block: 5 rows 24 -> 30,
  // 9 rows 9 -> 10, 12 rows 5 -> 6, 13 rows 4 -> 5). H200, session 48, one call, two rounds, % of copy, standard storage,
  // `bytes` -> factor_bytes: 4 89.9 -> 93.7, 9 69.3 -> 71.6, 11 61.9 -> 64.4, 12 56.6 -> 61.0 (transposed 55.2 ->
  // 60.1), 13 56.5 -> 55.4 (one more warp did not pay there), 14..16 unchanged.
  static constexpr std::size_t factor_bytes = B * std::size_t(S) * sizeof(double) + B * std::size_t(SN);
  static_assert(N <= 255, "the factor stage's column order is one byte per column");

  double* M;   // block k's entry (i, j) at M[k S + i N + j]
  double* Y;   // block k's vector entry i at Y[k SN + i]
  index_t* P;  // block k's index entry i at P[k SN + i]

  __device__ explicit LaneStage(unsigned char* smem)
      : M(reinterpret_cast<double*>(smem)), Y(M + B * S), P(reinterpret_cast<index_t*>(Y + B * SN))
  {
  }
  __device__ void* after() const { return P + B * SN; }
  // The factor stage's column order: block k's entry c at Q()[k SN + c].
  __device__ unsigned char* Q() const { return reinterpret_cast<unsigned char*>(M + B * S); }

  // The warp's groups of B blocks: b0 = first(), first() + step(), ... below the batch's count.
  __device__ static size64_t first() { return size64_t(blockIdx.x) * B; }
  __device__ static size64_t step() { return size64_t(gridDim.x) * B; }
  // Loads the group at b0 of a batch of count blocks (load(), after the warp's previous use of the stage is
  // over) and returns its number of blocks.
  __device__ __forceinline__ int next(int lane, size64_t b0, index_t count, const double* f, const double* b,
                                      const index_t* p) const
  {
    const int cnt = int(min(size64_t(B), size64_t(count) - b0));
    __syncwarp();  // the previous group's stage is no longer read
    load(lane, b0, cnt, f, b, p);
    return cnt;
  }

  // The factorisations' stage (uniform layouts): blocks b0 .. b0 + cnt - 1 of a (N^2 each, contiguous) into M,
  // coalesced (8-byte cp.async), waiting for them; and back. The warp's previous use of M must be over.
  __device__ __forceinline__ void load_matrices(int lane, size64_t b0, int cnt, const double* a) const
  {
    const double* const A = a + b0 * NN;
    for (int e = lane; e < cnt * NN; e += 32) {
      const int k = e / NN;
      __pipeline_memcpy_async(M + k * S + (e - k * NN), A + e, 8);
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncwarp();
  }
  __device__ __forceinline__ void store_matrices(int lane, size64_t b0, int cnt, double* a) const
  {
    double* const A = a + b0 * NN;
    for (int e = lane; e < cnt * NN; e += 32) {
      const int k = e / NN;
      A[e] = M[k * S + (e - k * NN)];
    }
  }

  // Copies blocks b0 .. b0 + cnt - 1 (cnt <= B) of the factors f (N^2 each, contiguous), their vector entries
  // of b and index entries of p (N each, from row b0 N) into the stage, coalesced (8-byte cp.async, the index
  // entries at their own size), and waits for them; the warp's previous use of the stage must be over.
  __device__ __forceinline__ void load(int lane, size64_t b0, int cnt, const double* f, const double* b,
                                       const index_t* p) const
  {
    const double* const A = f + b0 * NN;
    const size64_t r0 = b0 * N;
    for (int e = lane; e < cnt * NN; e += 32) {
      const int k = e / NN;
      __pipeline_memcpy_async(M + k * S + (e - k * NN), A + e, 8);
    }
    for (int e = lane; e < cnt * N; e += 32) {
      const int k = e / N;
      __pipeline_memcpy_async(Y + k * SN + (e - k * N), b + r0 + e, 8);
      __pipeline_memcpy_async(P + k * SN + (e - k * N), p + r0 + e, sizeof(index_t));
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncwarp();
  }
};

// Launches kernel(L, args...) on a warp per thread block over the uniform layout L, with the stage and `extra`
// bytes of the kernel's own as dynamic shared memory; false, launching nothing, when that does not fit the
// device's shared memory per thread block (the callers then run their group kernels).
// launch_bytes: the same with smem bytes of dynamic shared memory in all (the factorisations: factor_bytes).
template <int N, class... P, class... A>
bool launch_bytes(void (*kernel)(BatchLayout, P...), std::size_t smem, stream_t s, const BatchLayout& L, A... args)
{
  if (smem > cuda::lu_detail::shared_bytes_per_block_limit()) return false;
  if (smem > 48 * 1024)
    BLOCKRES_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  constexpr int B = LaneStage<N>::B;
  const auto grid = unsigned(std::min<size64_t>((size64_t(L.count) + B - 1) / B, size64_t(1) << 16));
  kernel<<<grid, 32, smem, s>>>(L, args...);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  return true;
}

template <int N, class... P, class... A>
bool launch(void (*kernel)(BatchLayout, P...), std::size_t extra, stream_t s, const BatchLayout& L, A... args)
{
  return launch_bytes<N>(kernel, LaneStage<N>::bytes + extra, s, L, args...);
}

}  // namespace blockres::kernels::cuda_lane
