// KSPARSE-style BSR SpMV kernels y = alpha*A*x + beta*y for row-major bs x bs blocks
// (CUDA templates; instantiated per block size in bsrmv_cuda_*.cu, dispatched in bsrmv_cuda.cu).
//
// Storage: block k of A holds a[k*bs*bs + i*bs + c] (row i, column c). The blocks of one block
// row are contiguous, so a block row is one contiguous stream of values: every kernel reads it
// with consecutive lanes on consecutive addresses. Values are read once (streaming loads,
// evict-first); x and the column indices go through the read-only path (reused).
#pragma once

#include "kernels/spmv/bsrmv.hpp"
#include "kernels/spmv/bsrmv_space.hpp"
#include "kernels/cuda_check.hpp"

#include <cuda_pipeline.h>

#include <utility>
#include <vector>

namespace blockres::kernels::cuda_bsrmv {

// ---- wide / large: lane groups of W = min(32, pow2ceil(bs)) lanes, EPT rows per thread -----
template <int BS, int EPT, int U>
__global__ void __launch_bounds__(256)
    wide_kernel(BsrView<const double> A, double alpha, const double* __restrict__ x, double beta,
                  double* __restrict__ y, int row_split)
{
  constexpr int W = group_width(BS), CPL = (BS + W - 1) / W, GW = 32 / W, BB = BS * BS;
  const int lane = threadIdx.x & 31;
  const int grp = (threadIdx.x >> 5) * GW + lane / W;
  const int cl = lane % W;
  const int groups = (blockDim.x >> 5) * GW;
  const int rows = (BS + row_split - 1) / row_split;
  const int i_begin = blockIdx.y * rows;
  const int i_end = min(BS, i_begin + rows);

  int row_off[EPT];
  bool row_ok[EPT];
#pragma unroll
  for (int j = 0; j < EPT; ++j) {
    const int i = i_begin + grp + j * groups;
    row_ok[j] = i < i_end;
    row_off[j] = i * BS;
  }
  bool col_ok[CPL];
#pragma unroll
  for (int q = 0; q < CPL; ++q) col_ok[q] = cl + q * W < BS;

  for (index_t r = blockIdx.x; r < A.nrows; r += gridDim.x) {
    const index_t kb = __ldg(A.row_ptr + r), ke = __ldg(A.row_ptr + r + 1);
    double acc[EPT];
#pragma unroll
    for (int j = 0; j < EPT; ++j) acc[j] = 0.0;
    for (index_t k = kb; k < ke; k += U) {
      double xv[U][CPL], v[U][EPT][CPL];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const index_t kk = k + u;
        const bool ok = kk < ke;
        const index_t col = ok ? __ldg(A.col_ind + kk) : 0;
        const double* blk = A.values + size64_t(kk) * BB + cl;
#pragma unroll
        for (int q = 0; q < CPL; ++q)
          xv[u][q] = (ok && col_ok[q]) ? __ldg(x + size64_t(col) * BS + cl + q * W) : 0.0;
#pragma unroll
        for (int j = 0; j < EPT; ++j)
#pragma unroll
          for (int q = 0; q < CPL; ++q)
            v[u][j][q] = (ok && row_ok[j] && col_ok[q]) ? __ldcs(blk + row_off[j] + q * W) : 0.0;
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < EPT; ++j)
#pragma unroll
          for (int q = 0; q < CPL; ++q) acc[j] = fma(v[u][j][q], xv[u][q], acc[j]);
    }
#pragma unroll
    for (int j = 0; j < EPT; ++j) {
      double s = acc[j];
#pragma unroll
      for (int off = W / 2; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
      if (cl == 0 && row_ok[j]) {
        double* out = y + size64_t(r) * BS + i_begin + grp + j * groups;
        *out = beta == 0.0 ? alpha * s : alpha * s + beta * *out;
      }
    }
  }
}

// Where a thread of the medium and staged kernels works: `arrays` thread arrays of BS rows x NTG
// groups per thread block, its array ta, row i and group g, its slice [c0, c0 + len) of the
// block columns, and the shuffle mask of the NTG threads of its row.
struct SliceThread {
  int arrays, ta, i, g, len, c0;
  unsigned gmask;
};

template <int BS, int NTG>
__device__ __forceinline__ SliceThread slice_thread()
{
  constexpr int EPT = (BS + NTG - 1) / NTG, REM = BS % NTG, TA = BS * NTG;
  const int arrays = blockDim.x / TA;
  const int ta = threadIdx.x / TA;
  const int local = threadIdx.x - ta * TA;
  const int i = local / NTG, g = local % NTG;
  const int len = (REM == 0 || g < REM) ? EPT : EPT - 1;
  const int c0 = g * EPT - (REM == 0 ? 0 : max(0, g - REM));
  const unsigned lane = threadIdx.x & 31;
  const unsigned gmask = NTG >= 32 ? 0xffffffffu : ((1u << NTG) - 1u) << (lane & ~unsigned(NTG - 1));
  return {arrays, ta, i, g, len, c0, gmask};
}

// The two chains of dependent FMAs of a medium or staged thread: the even columns of its slice
// and the odd ones, summed at the end.
struct FmaChains {
  double even, odd;
};

// The FMA pass of the medium (CLAMP) and staged kernels over U loaded blocks: block u counts when
// u == 0 or k + u < end (past the end a clamped re-read), column e of the slice when e < len.
// The chains go in and come back by value, the caller keeping them in two scalars: with
// references, or with the struct held across the loop, the compiler numbers the two chains the
// other way round and the machine code changes (register names only); this way it is the same
// as the loop written out in each kernel.
template <int EPT, int U, int REM>
__device__ __forceinline__ FmaChains clamped_slice_fma(const double (&v)[U][EPT], const double (&xv)[U][EPT],
                                                       index_t k, index_t end, int len, double acc0, double acc1)
{
#pragma unroll
  for (int u = 0; u < U; ++u) {
    const bool ok = u == 0 || k + u < end;
#pragma unroll
    for (int e = 0; e < EPT; ++e) {
      // Both factors zeroed: a discarded re-read must not turn 0 * Inf into NaN.
      const bool m = ok && (REM == 0 || e < len);
      const double a = m ? v[u][e] : 0.0, b = m ? xv[u][e] : 0.0;
      if (e % 2 == 0)
        acc0 = fma(a, b, acc0);
      else
        acc1 = fma(a, b, acc1);
    }
  }
  return {acc0, acc1};
}

// ---- medium: thread array of bs rows x NTG thread groups (KSPARSE K2) ---------------------------
// Thread (i, g) of a thread array owns columns [c0, c0 + len) of row i of every block of its
// block row (uneven slices: the first bs % NTG groups take one column more). With NTG = 1 each
// thread computes a whole scalar row: every lane busy and no reduction. The NTG threads of a
// row are aligned consecutive lanes, reduced by shuffles restricted to their own mask.
template <int BS, int NTG, int U, bool CLAMP>
__global__ void __launch_bounds__(256)
    slice_kernel(BsrView<const double> A, double alpha, const double* __restrict__ x, double beta,
                 double* __restrict__ y)
{
  constexpr int EPT = (BS + NTG - 1) / NTG, REM = BS % NTG, BB = BS * BS;
  // 16-byte loads when every slice is an even number of columns starting at an even column.
  constexpr bool VEC = BS % 2 == 0 && REM == 0 && EPT % 2 == 0;
  const auto [arrays, ta, i, g, len, c0, gmask] = slice_thread<BS, NTG>();
  for (index_t r = index_t(blockIdx.x) * arrays + ta; r < A.nrows; r += index_t(gridDim.x) * arrays) {
    const index_t kb = __ldg(A.row_ptr + r), ke = __ldg(A.row_ptr + r + 1);
    double acc0 = 0.0, acc1 = 0.0;  // two chains of dependent FMAs
    if constexpr (!CLAMP) {
      // Loads predicated on the row end; the compiler is free to unroll further (it does, x4,
      // for U = 1).
      for (index_t k = kb; k < ke; k += U) {
        double v[U][EPT], xv[U][EPT];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const index_t kk = k + u;
          const bool ok = kk < ke;
          const index_t col = ok ? __ldg(A.col_ind + kk) : 0;
          const double* vp = A.values + size64_t(kk) * BB + i * BS + c0;
          const double* xp = x + size64_t(col) * BS + c0;
          if constexpr (VEC) {
#pragma unroll
            for (int e = 0; e < EPT / 2; ++e) {
              const double2 a = ok ? __ldcs(reinterpret_cast<const double2*>(vp) + e) : make_double2(0.0, 0.0);
              const double2 b = ok ? __ldg(reinterpret_cast<const double2*>(xp) + e) : make_double2(0.0, 0.0);
              v[u][2 * e] = a.x, v[u][2 * e + 1] = a.y;
              xv[u][2 * e] = b.x, xv[u][2 * e + 1] = b.y;
            }
          } else {
#pragma unroll
            for (int e = 0; e < EPT; ++e) {
              const bool m = ok && e < len;
              v[u][e] = m ? __ldcs(vp + e) : 0.0;
              xv[u][e] = m ? __ldg(xp + e) : 0.0;
            }
          }
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
          for (int e = 0; e < EPT; ++e) {
            if (e % 2 == 0)
              acc0 = fma(v[u][e], xv[u][e], acc0);
            else
              acc1 = fma(v[u][e], xv[u][e], acc1);
          }
      }
    } else {
      // U blocks per pass, all loads issued before any FMA. Past the row end the index is
      // clamped to the last block (a cached re-read) and its product discarded: the loads stay
      // unconditional, so there are no branches between them and no re-unrolling by the compiler.
#pragma unroll 1
      for (index_t k = kb; k < ke; k += U) {
        double v[U][EPT], xv[U][EPT];
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const index_t kk = min(k + u, ke - 1);
          const index_t col = __ldg(A.col_ind + kk);
          const double* vp = A.values + size64_t(kk) * BB + i * BS + c0;
          const double* xp = x + size64_t(col) * BS + c0;
          if constexpr (VEC) {
#pragma unroll
            for (int e = 0; e < EPT / 2; ++e) {
              const double2 a = __ldcs(reinterpret_cast<const double2*>(vp) + e);
              const double2 b = __ldg(reinterpret_cast<const double2*>(xp) + e);
              v[u][2 * e] = a.x, v[u][2 * e + 1] = a.y;
              xv[u][2 * e] = b.x, xv[u][2 * e + 1] = b.y;
            }
          } else {
#pragma unroll
            for (int e = 0; e < EPT; ++e) {
              const int ec = (REM == 0 || e < len) ? e : 0;  // short slices re-read their first column
              v[u][e] = __ldcs(vp + ec);
              xv[u][e] = __ldg(xp + ec);
            }
          }
        }
        const FmaChains chains = clamped_slice_fma<EPT, U, REM>(v, xv, k, ke, len, acc0, acc1);
        acc0 = chains.even, acc1 = chains.odd;
      }
    }
    double s = acc0 + acc1;
    if constexpr (NTG > 1) {
#pragma unroll
      for (int off = NTG / 2; off > 0; off /= 2) s += __shfl_xor_sync(gmask, s, off);
    }
    if (g == 0) {
      double* out = y + size64_t(r) * BS + i;
      *out = beta == 0.0 ? alpha * s : alpha * s + beta * *out;
    }
  }
}

// ---- staged: the medium thread layout, values staged through shared memory -------------------
// The blocks of a thread block's `arrays` consecutive block rows are one contiguous stretch
// of values. It is copied to shared memory in chunks with asynchronous, coalesced copies
// (cp.async) 16 bytes wide at every bs, together with its column indices; each thread then
// computes its row's columns from shared memory. This replaces the medium kernel's strided
// row-slice loads, which touch many cache lines per warp instruction when bs is small or odd.
//
// Shared-memory layout and thread mapping are chosen at compile time so that the threads of a
// half-warp read distinct banks (8-byte words: 16 per 128-byte wavefront): the scalar rows of the
// staged blocks lie `RS` doubles apart (RS = bs, or bs padded by an even amount for even bs, so
// that 16-byte copies still land aligned), and the NTG threads of a row take either contiguous
// slices of its columns (c0 + e) or every NTG-th column (g + e * NTG), whichever conflicts less.
// Odd bs: no padding (a 16-byte segment would straddle two rows); the stage is shifted to share
// the source's alignment instead, so the copies are still 16 bytes wide.
constexpr int staged_chunk_doubles = 4096;  // 32 KiB of values per chunk (with the row padding)

// Where thread t's e-th column of a thread array lies in a staged block: row i, column col, for
// the slice (interleave = false) or the interleaved mapping.
__host__ __device__ constexpr int staged_col(int bs, int ntg, bool interleave, int g, int e)
{
  const int ept = (bs + ntg - 1) / ntg, rem = bs % ntg;
  const int c0 = g * ept - (rem == 0 ? 0 : (g - rem > 0 ? g - rem : 0));
  return interleave ? g + e * ntg : c0 + e;
}
__host__ __device__ constexpr int staged_len(int bs, int ntg, int g)
{
  const int ept = (bs + ntg - 1) / ntg, rem = bs % ntg;
  return (rem == 0 || g < rem) ? ept : ept - 1;
}
// The worst bank conflict (distinct 8-byte words on one bank of a half-warp) among the threads of
// one thread array in the first 64 threads (the rows repeat the pattern; threads of different
// arrays read different block rows, whose offsets depend on the matrix), at the first and the
// last column e (between them every thread's address moves by the same amount): 1 is free.
__host__ __device__ constexpr int staged_conflict(int bs, int ntg, int rs, bool interleave)
{
  const int ta = bs * ntg, nt = 256 / ta * ta, ept = (bs + ntg - 1) / ntg;
  int worst = 1;
  for (int e : {0, ept - 1})
    for (int h = 0; h < 64 && h < nt; h += 16) {
      int word[16] = {}, bank[16] = {}, arr[16] = {};
      bool ok[16] = {};
      for (int q = 0; q < 16; ++q) {
        const int t = h + q, a = t / ta, l = t % ta, i = l / ntg, g = l % ntg;
        ok[q] = t < nt && e < staged_len(bs, ntg, g);
        arr[q] = a;
        word[q] = i * rs + staged_col(bs, ntg, interleave, g, e);
        bank[q] = (i * rs + staged_col(bs, ntg, interleave, g, e)) % 16;
      }
      for (int q = 0; q < 16; ++q) {
        if (!ok[q]) continue;
        int n = 0;  // distinct words on q's bank up to q
        for (int p = 0; p <= q; ++p) {
          bool first = ok[p] && arr[p] == arr[q] && bank[p] == bank[q];
          for (int o = 0; o < p && first; ++o) first = !(ok[o] && arr[o] == arr[p] && word[o] == word[p]);
          n += first ? 1 : 0;
        }
        worst = n > worst ? n : worst;
      }
    }
  return worst;
}
// The layout: row stride and mapping with the fewest conflicts (ties: the smaller stride, slices).
struct StagedLayout {
  int rs;
  bool interleave;
};
__host__ __device__ constexpr StagedLayout staged_layout(int bs, int ntg)
{
  StagedLayout best{bs, false};
  int best_c = staged_conflict(bs, ntg, bs, false);
  const int max_pad = bs % 2 != 0 ? 0 : (bs / 4 > 2 ? bs / 4 / 2 * 2 : 2);
  for (int rs = bs; rs <= bs + max_pad; rs += 2)
    for (int m = 0; m < 2; ++m) {
      const int c = staged_conflict(bs, ntg, rs, m == 1);
      if (c < best_c) best = {rs, m == 1}, best_c = c;
    }
  return best;
}

// Starts copying n elements from src into buf (16-byte aligned, with 16 / sizeof(T) - 1 elements
// of slack) and returns the shift of element 0 in buf: chosen so that destination and source share
// their alignment, which lets everything between a narrow head and tail go 16 bytes at a time.
template <class T>
__device__ __forceinline__ int copy_async_aligned(T* buf, const T* src, int n)
{
  constexpr int P = 16 / int(sizeof(T));
  const int mis = static_cast<int>((reinterpret_cast<size64_t>(src) / sizeof(T)) % P);
  const int head = min(n, (P - mis) % P);
  const int shift = (P - head) % P;  // buf + shift + head is 16-byte aligned
  T* dst = buf + shift;
  for (int t = threadIdx.x; t < head; t += blockDim.x) __pipeline_memcpy_async(dst + t, src + t, sizeof(T));
  const int nv = (n - head) / P;
  for (int t = threadIdx.x; t < nv; t += blockDim.x)
    __pipeline_memcpy_async(dst + head + P * t, src + head + P * t, 16);
  for (int t = head + nv * P + threadIdx.x; t < n; t += blockDim.x)
    __pipeline_memcpy_async(dst + t, src + t, sizeof(T));
  return shift;
}

template <int BS, int NTG, int U>
__global__ void __launch_bounds__(256)
    staged_kernel(BsrView<const double> A, double alpha, const double* __restrict__ x, double beta,
                  double* __restrict__ y)
{
  constexpr int EPT = (BS + NTG - 1) / NTG, REM = BS % NTG, BB = BS * BS;
  constexpr StagedLayout L = staged_layout(BS, NTG);
  constexpr int RS = L.rs, BR = BS * RS;  // row stride, block stride in shared memory
  // Blocks per chunk: at least one; 1024 at bs 1 (12 KiB with the indices: a chunk of 4064 took
  // 48 KiB, so 4 thread blocks of 128 threads filled an SM, too few loads in flight; 1024 holds the
  // 7-point rows of 128 block rows and lets 16 reside: 55% -> 90% of the read stream on an H200
  // with a chunk sized to the rows, A/B in one session). A chunk size chosen at run time (dynamic
  // shared memory) was tried and dropped: 3-11 points slower at bs 2, 33 and 35 on the H200 with
  // the very same chunk.
  constexpr int CH = BS == 1 ? 1024 : staged_chunk_doubles / BR < 1 ? 1 : staged_chunk_doubles / BR;
  __shared__ __align__(16) double sv[CH * BR + 2];
  __shared__ __align__(16) index_t sc[CH + 4];
  const auto [arrays, ta, i, g, len, c0, gmask] = slice_thread<BS, NTG>();
  // Column e of this thread: off0 + e * STEP (a short slice re-reads its first column).
  constexpr int STEP = L.interleave ? NTG : 1;
  const int off0 = L.interleave ? g : c0;
  const int tbase = i * RS + off0;

  const index_t r0 = index_t(blockIdx.x) * arrays;
  const index_t r = r0 + ta;
  const bool has_row = r < A.nrows;
  const index_t kb0 = __ldg(A.row_ptr + r0);
  const index_t ke0 = __ldg(A.row_ptr + min(A.nrows, r0 + arrays));
  const index_t kb = has_row ? __ldg(A.row_ptr + r) : 0;
  const index_t ke = has_row ? __ldg(A.row_ptr + r + 1) : 0;
  double acc0 = 0.0, acc1 = 0.0;

  for (index_t c = kb0; c < ke0; c += CH) {
    const int n = static_cast<int>(min(index_t(CH), ke0 - c));
    const double* src = A.values + size64_t(c) * BB;
    int vsh = 0;
    if constexpr (RS == BS) {
      vsh = copy_async_aligned(sv, src, n * BB);
    } else if (reinterpret_cast<size64_t>(src) % 16 == 0) {
      // Padded rows (even bs): 16-byte segments never straddle a row.
      for (int t = threadIdx.x; t < n * BB / 2; t += blockDim.x) {
        const int row = 2 * t / BS, cc = 2 * t - row * BS;
        __pipeline_memcpy_async(sv + row * RS + cc, src + 2 * t, 16);
      }
    } else {
      for (int t = threadIdx.x; t < n * BB; t += blockDim.x) {
        const int row = t / BS, cc = t - row * BS;
        __pipeline_memcpy_async(sv + row * RS + cc, src + t, 8);
      }
    }
    const int csh = copy_async_aligned(sc, A.col_ind + c, n);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    const index_t k0 = max(kb, c), k1 = min(ke, c + n);
    const double* vrow = sv + vsh + tbase;
    const index_t* cbk = sc + csh;
#pragma unroll 1
    for (index_t k = k0; k < k1; k += U) {
      double v[U][EPT], xv[U][EPT];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int kk = static_cast<int>(min(k + u, k1 - 1) - c);  // clamped re-read past the end
        const double* vp = vrow + kk * BR;
        const double* xp = x + size64_t(cbk[kk]) * BS + off0;
#pragma unroll
        for (int e = 0; e < EPT; ++e) {
          const int ec = (REM == 0 || e < len) ? e : 0;
          v[u][e] = vp[ec * STEP];
          xv[u][e] = __ldg(xp + ec * STEP);
        }
      }
      const FmaChains chains = clamped_slice_fma<EPT, U, REM>(v, xv, k, k1, len, acc0, acc1);
      acc0 = chains.even, acc1 = chains.odd;
    }
    __syncthreads();  // the next chunk overwrites sv and sc
  }
  double s = acc0 + acc1;
  if constexpr (NTG > 1) {
#pragma unroll
    for (int off = NTG / 2; off > 0; off /= 2) s += __shfl_xor_sync(gmask, s, off);
  }
  if (has_row && g == 0) {
    double* out = y + size64_t(r) * BS + i;
    *out = beta == 0.0 ? alpha * s : alpha * s + beta * *out;
  }
}

// ---- small: a truncated warp holds M = floor(32/bs^2) whole blocks ---------------------------
// Lane t = slot*bs^2 + i*bs + c keeps element (i, c) of block slot of every step, so it needs a
// single accumulator; the row sums come from shuffles over c and over the slots.
template <int BS>
__device__ __forceinline__ double small_reduce(double v)
{
  constexpr int BB = BS * BS, M = 32 / BB;
  if constexpr (is_pow2(BS)) {
#pragma unroll
    for (int off = BS / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  } else {
    double s = v;
#pragma unroll
    for (int d = 1; d < BS; ++d) s += __shfl_down_sync(0xffffffffu, v, d);
    v = s;  // valid at c == 0
  }
  if constexpr (is_pow2(M) && is_pow2(BB)) {
#pragma unroll
    for (int off = M / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off * BB);
  } else {
    double s = v;
#pragma unroll
    for (int d = 1; d < M; ++d) s += __shfl_down_sync(0xffffffffu, v, d * BB);
    v = s;  // valid at slot == 0
  }
  return v;
}

// U block rows in flight per warp; each warp owns rows_per_warp consecutive block rows.
template <int BS, int U>
__global__ void __launch_bounds__(256)
    small_kernel(BsrView<const double> A, double alpha, const double* __restrict__ x, double beta,
                 double* __restrict__ y, int rows_per_warp)
{
  constexpr int BB = BS * BS, M = 32 / BB, T = M * BB;
  static_assert(M >= 1, "small kernel needs bs*bs <= 32");
  const int lane = threadIdx.x & 31;
  const size64_t warp = (size64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const bool active = lane < T;
  const int slot = lane / BB, e = lane % BB, c = e % BS;
  const size64_t first = warp * rows_per_warp;
  if (first >= size64_t(A.nrows)) return;  // whole warp
  const index_t r_end = static_cast<index_t>(min(size64_t(A.nrows), first + rows_per_warp));
  for (index_t r = static_cast<index_t>(first); r < r_end; r += U) {
    index_t kb[U], ke[U];
    double acc[U];
    index_t nsteps = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool ok = r + u < r_end;
      kb[u] = ok ? __ldg(A.row_ptr + r + u) : 0;
      ke[u] = ok ? __ldg(A.row_ptr + r + u + 1) : 0;
      acc[u] = 0.0;
      nsteps = max(nsteps, (ke[u] - kb[u] + M - 1) / M);
    }
    for (index_t s = 0; s < nsteps; ++s) {
      double v[U], xv[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const index_t k = kb[u] + s * M + slot;
        const bool ok = active && k < ke[u];
        v[u] = ok ? __ldcs(A.values + size64_t(k) * BB + e) : 0.0;
        xv[u] = ok ? __ldg(x + size64_t(__ldg(A.col_ind + k)) * BS + c) : 0.0;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) acc[u] = fma(v[u], xv[u], acc[u]);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const double s = small_reduce<BS>(acc[u]);
      if (r + u < r_end && active && slot == 0 && c == 0) {
        double* out = y + size64_t(r + u) * BS + e / BS;
        *out = beta == 0.0 ? alpha * s : alpha * s + beta * *out;
      }
    }
  }
}

// ---- launchers and the variant registry ---------------------------------------------------------
using Launcher = void (*)(stream_t, const BsrView<const double>&, double, const double*, double, double*,
                          const BsrmvConfig&);

enum VariantKind : int { variant_small, variant_wide, variant_slice, variant_staged };

struct Variant {
  int bs;
  int kind;    // VariantKind
  int param;   // wide/large: rows per thread (ept); medium/staged: thread groups per row; small: 1
  int unroll;
  bool clamped;  // medium: clamped row tail (BsrmvConfig::clamped)
  Launcher launch;
};

template <int BS, int EPT, int U>
void launch_wide(stream_t s, const BsrView<const double>& A, double alpha, const double* x, double beta, double* y,
                 const BsrmvConfig& cfg)
{
  const int split = cfg.kernel == BsrmvKernel::large ? cfg.row_split : 1;
  const dim3 grid(static_cast<unsigned>(min(A.nrows, index_t(1) << 24)), static_cast<unsigned>(split));
  wide_kernel<BS, EPT, U><<<grid, cfg.warps * 32, 0, s>>>(A, alpha, x, beta, y, split);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int BS, int NTG, int U, bool CLAMP>
void launch_slice(stream_t s, const BsrView<const double>& A, double alpha, const double* x, double beta, double* y,
                  const BsrmvConfig& cfg)
{
  const index_t blocks = (A.nrows + cfg.arrays - 1) / cfg.arrays;
  const auto grid = static_cast<unsigned>(min(blocks, index_t(1) << 30));
  slice_kernel<BS, NTG, U, CLAMP><<<grid, cfg.arrays * BS * NTG, 0, s>>>(A, alpha, x, beta, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int BS, int NTG, int U>
void launch_staged(stream_t s, const BsrView<const double>& A, double alpha, const double* x, double beta, double* y,
                   const BsrmvConfig& cfg)
{
  const auto grid = static_cast<unsigned>((A.nrows + cfg.arrays - 1) / cfg.arrays);  // one row per thread array
  staged_kernel<BS, NTG, U><<<grid, cfg.arrays * BS * NTG, 0, s>>>(A, alpha, x, beta, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int BS, int U>
void launch_small(stream_t s, const BsrView<const double>& A, double alpha, const double* x, double beta, double* y,
                  const BsrmvConfig& cfg)
{
  const size64_t rows_per_block = size64_t(cfg.warps) * cfg.rows_per_warp;
  const auto grid = static_cast<unsigned>((A.nrows + rows_per_block - 1) / rows_per_block);
  small_kernel<BS, U><<<grid, cfg.warps * 32, 0, s>>>(A, alpha, x, beta, y, cfg.rows_per_warp);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int BS, int EPT>
void add_wide_ept(std::vector<Variant>& out)
{
  if constexpr (medium_ept_used(BS, EPT)) {
    out.push_back({BS, variant_wide, EPT, 1, false, &launch_wide<BS, EPT, 1>});
    out.push_back({BS, variant_wide, EPT, 2, false, &launch_wide<BS, EPT, 2>});
  }
}

template <int BS, int... E>
void add_wide(std::vector<Variant>& out, std::integer_sequence<int, E...>)
{
  (add_wide_ept<BS, E + 1>(out), ...);
}

template <int BS, int NTG, int U, bool CLAMP>
void add_slice(std::vector<Variant>& out)
{
  if constexpr (slice_used(BS, NTG, U))
    out.push_back({BS, variant_slice, NTG, U, CLAMP, &launch_slice<BS, NTG, U, CLAMP>});
}

template <int BS, int NTG, int U>
void add_staged(std::vector<Variant>& out)
{
  if constexpr (staged_used(BS, NTG, U)) out.push_back({BS, variant_staged, NTG, U, false, &launch_staged<BS, NTG, U>});
}

template <int BS, int NTG>
void add_slices(std::vector<Variant>& out)
{
  add_slice<BS, NTG, 1, false>(out);  // slice_unrolls, predicated tail
  add_slice<BS, NTG, 2, false>(out);
  add_slice<BS, NTG, 1, true>(out);  // slice_clamped_unrolls
  add_slice<BS, NTG, 2, true>(out);
  add_slice<BS, NTG, 4, true>(out);
  add_slice<BS, NTG, 8, true>(out);
}

template <int BS>
void add_block_size(std::vector<Variant>& out)
{
  if constexpr (BS * BS <= 32) {
    out.push_back({BS, variant_small, 1, 1, false, &launch_small<BS, 1>});
    out.push_back({BS, variant_small, 1, 2, false, &launch_small<BS, 2>});
    out.push_back({BS, variant_small, 1, 4, false, &launch_small<BS, 4>});
  }
  if constexpr (BS >= 3) add_wide<BS>(out, std::make_integer_sequence<int, 8>{});
  add_slices<BS, 1>(out);
  add_slices<BS, 2>(out);
  add_slices<BS, 4>(out);
  add_staged<BS, 1, 1>(out);  // the unrolls of staged_unrolls
  add_staged<BS, 1, 2>(out);
  add_staged<BS, 1, 4>(out);
  add_staged<BS, 2, 1>(out);
  add_staged<BS, 2, 2>(out);
  add_staged<BS, 2, 4>(out);
  add_staged<BS, 4, 1>(out);
  add_staged<BS, 4, 2>(out);
  add_staged<BS, 8, 1>(out);
  add_staged<BS, 8, 2>(out);
}

template <int... BS>
void add_block_sizes(std::vector<Variant>& out, std::integer_sequence<int, BS...>)
{
  (add_block_size<BS>(out), ...);
}

template <int LO, int... I>
std::integer_sequence<int, (LO + I)...> shifted(std::integer_sequence<int, I...>)
{
  return {};
}

// The variants of block sizes LO..HI.
template <int LO, int HI>
void add_block_range(std::vector<Variant>& out)
{
  add_block_sizes(out, shifted<LO>(std::make_integer_sequence<int, HI - LO + 1>{}));
}

// Each bsrmv_cuda_<range>.cu instantiates one range of block sizes (add_block_range).
void add_variants_1_8(std::vector<Variant>& out);
void add_variants_9_16(std::vector<Variant>& out);
void add_variants_17_24(std::vector<Variant>& out);
void add_variants_25_32(std::vector<Variant>& out);
void add_variants_33_40(std::vector<Variant>& out);
void add_variants_41_48(std::vector<Variant>& out);
void add_variants_49_56(std::vector<Variant>& out);
void add_variants_57_64(std::vector<Variant>& out);

}  // namespace blockres::kernels::cuda_bsrmv
