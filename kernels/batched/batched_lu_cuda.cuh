// Device code of the batched LU with partial pivoting and of its solve (MAGMA batched LU design),
// instantiated by the batched_lu_cuda_*.cu translation units and dispatched in batched_lu_cuda.cu.
//
// P A = L U per row-major block, LAPACK getrf semantics with 0-based pivots (batched_lu.hpp).
// Every update is a - l*u = fma(-l, u, a) applied to entry (i, j) in the order of the pivot steps
// k = 0, 1, ..., exactly as the unblocked right-looking CPU reference, so results agree with it
// bit for bit except in the blocked solve, whose dot products are reassociated.
//
// n <= 32, register kernel (small_factor<NP>): a lane group of G = pow2ceil(NP) lanes per block,
//   lane i holds row i in registers (NP doubles, statically indexed: the step loop is unrolled).
//   The block is staged through shared memory so global loads and stores are row-contiguous.
//   Step k: group argmax of |a_ik| over rows not yet pivoted (butterfly shuffles on (|a|, position);
//   ties go to the smaller current position, as idamax after the interchanges), the interchange is
//   implicit (each lane tracks the position of its row), the pivot row is broadcast through a
//   double-buffered shared-memory row, and each remaining row does its rank-1 update in registers.
//   Uniform batches use an instance with NP = n; variable batches the power-of-two classes NP = G.
// n in 33..56, row kernel (row_factor<NP, MB>): the register kernel's design on two warps, thread i
//   holding row i; the warps' argmax partials and the pivot row go through shared memory (two
//   __syncthreads per step). Classes NP = 40, 48, 56.
// n in 57..512, blocked kernel (blocked_factor): one thread block per matrix, the matrix in global
//   memory (L2), panels of NB columns:
//   1. the panel (rows k0..n-1) is loaded into shared memory, column-major;
//   2. it is factored column by column with the same implicit interchanges, one __syncthreads per
//      column (rows owned by threads, per-warp argmax partials double-buffered);
//   3. the panel is rewritten in its final row order and the interchanges are summarised as at most
//      2*NB (source row -> destination row) moves, the paper's two pivot vectors;
//   4. the moves are applied to all other columns in parallel, one thread per column (the new top
//      rows staged in shared memory, the displaced rows copied directly), fused for the columns
//      right of the panel with the triangular solve U12 = L11^{-1} A12 (in registers) and the
//      trailing update A22 -= L21 U12, a shared-memory tiled GEMM with 4x4 register tiles, over
//      chunks of T columns.
//   max|A| is gathered while the first panel step reads every original entry once; the pivot
//   checks (info) run at the end from the stored pivot values.
// Solves: a lane per block for uniform layouts of 4..24 rows (lane_solve: 32, 16 or 8 blocks per warp staged in
//   shared memory, the CPU reference's steps in registers; above 16 rows reciprocal pivots, as warp_solve);
//   otherwise a lane-group kernel for n <= 16 (rows staged in
//   shared memory, interchanges by shuffles, column-oriented substitutions); a warp per block for 17..56 (warp_solve: the block copied into
//   shared memory asynchronously, R = ceil(n / 32) rows per lane, reciprocal pivots) and for 57..64
//   (panel_solve: the same substitutions over a ring of two 16-column panels); a warp per block
//   for 65..128 that reads the factors row by row from global memory, coalesced, with a butterfly sum
//   per row (row_solve: no shared memory, many warps in flight); for n > 128 one thread block per block
//   with 32-row blocks: warp dot products for the off-diagonal part, one warp for the 32x32 diagonal
//   triangle.
#pragma once

#include "kernels/batched/batched.hpp"
#include "kernels/batched/lane_stage.cuh"

#include <cfloat>
#include <climits>
#include <cstddef>

#if !defined(BLOCKRES_LU_EMULATION)
#include <cuda_pipeline.h>
#define BLOCKRES_LU_DYNAMIC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#endif

namespace blockres::kernels::cuda::lu_detail {

constexpr unsigned full_mask = 0xffffffffu;

constexpr int pow2ceil(int n)
{
  int g = 1;
  while (g < n) g *= 2;
  return g;
}

// Upper bounds on the grids of the grid-stride kernels: enough to fill any current GPU many times
// over, few enough that the kernels of a variable batch skip foreign blocks cheaply.
constexpr size64_t max_grid = 1 << 16;
constexpr size64_t max_grid_blocked = 4096;

// Pivot search key: |v|, NaN below every number (chosen only when nothing else is left).
__device__ __forceinline__ double pivot_key(double v) { return isnan(v) ? -1.0 : fabs(v); }

// The batched.hpp info test: zero, not finite, or not above n * eps * max|A|.
__device__ __forceinline__ bool pivot_fails(double d, double thr)
{
  const double m = fabs(d);
  return !(m > thr && m <= DBL_MAX);
}

// Order of the pivot search: larger key first, then smaller id (ids start with the row position).
__device__ __forceinline__ bool better(double k1, int i1, double k0, int i0)
{
  return k1 > k0 || (k1 == k0 && i1 < i0);
}

// ------------------------------------------------------------------------------------------------
// The load, the step and the write-back shared by the row-per-thread kernels (small_factor, row_factor)
// ------------------------------------------------------------------------------------------------

// Step k once the pivot row (physical row pl, position ppos) is in buf: the pivot test (info), the implicit
// interchange, and this row's multiplier and rank-1 update fma(-l, u, a) in column order (the CPU reference's
// operations), r holding NPR doubles. Macros rather than inline functions: expanded in the unrolled step loop
// exactly as if written there, k a constant and r statically indexed (an inline function with k as an
// argument changed the n <= 32 kernels' register allocation: 72-128 registers and spills in two instances).
#define BLOCKRES_LU_ROW_STEP(NPR)                                          \
  do {                                                                     \
    const double d = buf[k];                                               \
    if (code == 0 && pivot_fails(d, thr)) code = k + 1;                    \
    if (li == k) mypiv = ppos;                                             \
    if (li == pl)                                                          \
      pos = k;                                                             \
    else if (pos == k)                                                     \
      pos = ppos;                                                          \
    if (mine && pos > k) {                                                 \
      const double l = r[k] / d;                                           \
      r[k] = l;                                                            \
      _Pragma("unroll") for (int j = (k + 1) & ~1; j < (NPR); j += 2) {    \
        const double2 u = *reinterpret_cast<const double2*>(buf + j);      \
        if (j >= k + 1) r[j] = fma(-l, u.x, r[j]);                         \
        r[j + 1] = fma(-l, u.y, r[j + 1]);                                 \
      }                                                                    \
    }                                                                      \
  } while (0)

// The block (n rows, row-major) through the stage (row stride S) into r[0..NPR): row li when mine, zeros
// past n, the global loads coalesced (thread li reads column li); amax = max |r_j| (fmax drops NaN).
#define BLOCKRES_LU_ROW_LOAD(NP, NPR, BARRIER)                             \
  do {                                                                     \
    _Pragma("unroll") for (int i = 0; i < (NP); ++i)                       \
      if (mine && i < n) stage[i * S + li] = ab[i * n + li];               \
    BARRIER;                                                               \
    _Pragma("unroll") for (int j = 0; j < (NPR); ++j) {                    \
      r[j] = (mine && j < n) ? stage[li * S + j] : 0.0;                    \
      amax = fmax(amax, fabs(r[j]));                                       \
    }                                                                      \
  } while (0)

// The rows back to the block in their final order (row li to position pos) through the stage, the global
// stores coalesced; BARRIER orders the stage's writes before its reads.
#define BLOCKRES_LU_ROW_STORE(NP, BARRIER)                                 \
  do {                                                                     \
    if (mine) {                                                            \
      _Pragma("unroll") for (int j = 0; j < (NP); ++j)                     \
        if (j < n) stage[pos * S + j] = r[j];                              \
    }                                                                      \
    BARRIER;                                                               \
    _Pragma("unroll") for (int i = 0; i < (NP); ++i)                       \
      if (mine && i < n) ab[i * n + li] = stage[i * S + li];               \
  } while (0)

// ------------------------------------------------------------------------------------------------
// Register kernel, n <= 32
// ------------------------------------------------------------------------------------------------

template <int NP>
struct SmallFactorShape {
  static constexpr int G = pow2ceil(NP);          // lanes per block
  static constexpr int groups = 32 / G;           // blocks per warp
  static constexpr int S = NP | 1;                // staging row stride: odd, conflict-free row reads
  static constexpr int NPR = NP + (NP & 1);       // register row, even for the double2 broadcast
  static constexpr int BS = NPR + 2;              // broadcast row stride (keeps groups off one bank)
  static constexpr int stage = (groups * NP * S + 1) & ~1;
  static constexpr int warp_doubles = stage + 2 * groups * BS;
  static constexpr int warps = 4;
  static constexpr int threads = 32 * warps;
  static constexpr std::size_t smem_bytes = std::size_t(warps) * warp_doubles * sizeof(double);
};

// Factors the blocks with lo <= n <= NP (Uniform: every block has n = NP).
template <int NP, bool Uniform>
__global__ void __launch_bounds__(SmallFactorShape<NP>::threads)
    small_factor(BatchLayout L, int lo, double* __restrict__ a, index_t* __restrict__ piv, int* __restrict__ info)
{
  using Sh = SmallFactorShape<NP>;
  constexpr int G = Sh::G, S = Sh::S, NPR = Sh::NPR;
  BLOCKRES_LU_DYNAMIC_SMEM(lu_smem);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int grp = lane / G, li = lane % G;
  double* const wsm = reinterpret_cast<double*>(lu_smem) + warp * Sh::warp_doubles;
  double* const stage = wsm + grp * NP * S;
  double* const bcast = wsm + Sh::stage + grp * 2 * Sh::BS;
  const size64_t stride = size64_t(gridDim.x) * Sh::warps * Sh::groups;

  for (size64_t first = (size64_t(blockIdx.x) * Sh::warps + warp) * Sh::groups; first < L.count;
       first += stride) {
    const size64_t k = first + grp;  // the launch's slot; its block (select[k] in a size class)
    const size64_t b = k < L.count ? size64_t(L.block(k)) : k;
    int nv = 0;
    bool active = false;
    if (k < L.count) {
      nv = Uniform ? NP : L.size(index_t(b));
      active = Uniform || (nv >= lo && nv <= NP);
    }
    if (!__any_sync(full_mask, active)) continue;
    const int n = Uniform ? NP : (active ? nv : 0);
    double* const ab = a + (active ? L.mat(index_t(b)) : 0);
    const bool mine = active && li < n;  // this lane holds row li of the block

    double r[NPR];
    double amax = 0.0;
    BLOCKRES_LU_ROW_LOAD(NP, NPR, __syncwarp());
#pragma unroll
    for (int off = G / 2; off > 0; off >>= 1) amax = fmax(amax, __shfl_xor_sync(full_mask, amax, off, G));
    const double thr = double(n) * DBL_EPSILON * amax;

    int pos = li;     // current position of this lane's row (implicit interchanges)
    int mypiv = li;   // pivot of step li
    int code = 0;     // info
#pragma unroll
    for (int k = 0; k < NP; ++k) {
      double key = (mine && pos >= k) ? pivot_key(r[k]) : -2.0;
      int id = (pos << 8) | li;
#pragma unroll
      for (int off = G / 2; off > 0; off >>= 1) {
        const double ok = __shfl_xor_sync(full_mask, key, off, G);
        const int oid = __shfl_xor_sync(full_mask, id, off, G);
        if (better(ok, oid, key, id)) key = ok, id = oid;
      }
      const bool valid = key > -1.5;  // false once k >= n (or the group is idle)
      const int pl = id & 0xff, ppos = id >> 8;
      double* const buf = bcast + (k & 1) * Sh::BS;
      if (valid && li == pl) {
#pragma unroll
        for (int j = k & ~1; j < NPR; j += 2) *reinterpret_cast<double2*>(buf + j) = make_double2(r[j], r[j + 1]);
      }
      __syncwarp();
      if (valid) BLOCKRES_LU_ROW_STEP(NPR);
    }

    BLOCKRES_LU_ROW_STORE(NP, __syncwarp());
    if (mine) piv[L.row(index_t(b)) + li] = mypiv;
    if (active && li == 0) info[b] = code;
    __syncwarp();  // the stage is reused by the next blocks
  }
}

template <int G>
struct SmallSolveShape {
  static constexpr int groups = 32 / G;
  static constexpr int S = G | 1;
  static constexpr int stage = (groups * G * S + 1) & ~1;
  static constexpr int warps = 4;
  static constexpr int threads = 32 * warps;
  static constexpr std::size_t smem_bytes = std::size_t(warps) * stage * sizeof(double);
};

// x = A^{-1} b for the blocks with lo <= n <= hi (hi <= G), a lane group of G lanes per block.
template <int G>
__global__ void __launch_bounds__(SmallSolveShape<G>::threads)
    small_solve(BatchLayout L, int lo, int hi, const double* __restrict__ lu, const index_t* __restrict__ piv,
                const double* __restrict__ bv, double* __restrict__ x)
{
  using Sh = SmallSolveShape<G>;
  constexpr int S = Sh::S;
  BLOCKRES_LU_DYNAMIC_SMEM(lu_smem);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int grp = lane / G, li = lane % G;
  double* const stage = reinterpret_cast<double*>(lu_smem) + warp * Sh::stage + grp * G * S;
  const size64_t stride = size64_t(gridDim.x) * Sh::warps * Sh::groups;

  for (size64_t first = (size64_t(blockIdx.x) * Sh::warps + warp) * Sh::groups; first < L.count;
       first += stride) {
    const size64_t k = first + grp;  // the launch's slot; its block (select[k] in a size class)
    const size64_t b = k < L.count ? size64_t(L.block(k)) : k;
    int n = 0;
    bool active = false;
    if (k < L.count) {
      n = L.size(index_t(b));
      active = n >= lo && n <= hi;
    }
    if (!__any_sync(full_mask, active)) continue;
    if (!active) n = 0;
    const bool mine = active && li < n;
    const double* const ab = lu + (active ? L.mat(index_t(b)) : 0);
    const size64_t r0 = active ? L.row(index_t(b)) : 0;
#pragma unroll
    for (int i = 0; i < G; ++i)
      if (mine && i < n) stage[i * S + li] = ab[i * n + li];
    double y = mine ? bv[r0 + li] : 0.0;
    const int p = mine ? piv[r0 + li] : li;
    __syncwarp();
    // Interchanges in order: at step k lanes k and p_k exchange their entries.
#pragma unroll
    for (int k = 0; k < G; ++k) {
      const int pk = __shfl_sync(full_mask, p, k, G);
      const int src = li == k ? pk : (li == pk ? k : li);
      y = __shfl_sync(full_mask, y, src, G);
    }
    // L y = P b (unit lower), column by column.
#pragma unroll
    for (int j = 0; j < G; ++j) {
      const double yj = __shfl_sync(full_mask, y, j, G);
      if (mine && li > j) y = fma(-stage[li * S + j], yj, y);
    }
    // U x = y.
#pragma unroll
    for (int j = G - 1; j >= 0; --j) {
      if (mine && li == j) y = y / stage[j * S + j];
      const double xj = __shfl_sync(full_mask, y, j, G);
      if (mine && li < j && j < n) y = fma(-stage[li * S + j], xj, y);
    }
    if (mine) x[r0 + li] = y;
    __syncwarp();
  }
}

// ------------------------------------------------------------------------------------------------
// Lane solve, uniform layouts of N = 4..24 rows: a lane per block
// ------------------------------------------------------------------------------------------------

// small_solve gives a block a group of G lanes and runs 3 n dependent shuffle steps for it: at n = 9 a warp
// carries two blocks (1.3 KB) through a chain of 27 shuffles, and G - n lanes idle (H200: 39.6% of copy at
// 9, 50.8% at 5). Here a warp takes B = cuda_lane::blocks_per_warp(N) consecutive blocks of a uniform layout
// (32 up to 15 rows, 16 to 21, 8 above), lane l block b0 + l: the blocks' factors (B N^2 contiguous doubles),
// right-hand sides and pivots are copied into the warp's shared memory, coalesced (8-byte cp.async; 4 bytes for
// the pivots), each block's factors at an odd stride S and its vectors at an odd stride SN (lane l reading entry
// e of its own block is conflict-free); each lane applies its block's interchanges to its vector in the stage
// (a swap per step; the register form's N^2 selects cost 10-20%: H200, 16 blocks a warp, 17 rows 75.4 -> 83.0,
// 21 rows 69.9 -> 83.7% of copy), then solves with
// the vector in registers, and the solution goes back through the stage, coalesced. The operations and their
// order are the CPU reference's, so up to 16 rows the bits are the CPU's and small_solve's; above 16 each
// diagonal division is a multiplication by its reciprocal, as in warp_solve (the variable layouts' solve at
// 17..64), so that a uniform and a variable layout of the same blocks give the same bits there too.
template <int N>
__global__ void __launch_bounds__(32)
    lane_solve(BatchLayout L, const double* __restrict__ lu, const index_t* __restrict__ piv,
               const double* __restrict__ bv, double* __restrict__ x)
{
  using St = cuda_lane::LaneStage<N>;
  constexpr int S = St::S, SN = St::SN;
  BLOCKRES_LU_DYNAMIC_SMEM(lu_smem);
  const St st(lu_smem);
  double* const Y = st.Y;
  const int lane = threadIdx.x;
  for (size64_t b0 = St::first(); b0 < size64_t(L.count); b0 += St::step()) {
    const int cnt = st.next(lane, b0, L.count, lu, bv, piv);
    const size64_t r0 = b0 * N;
    if (lane < cnt) {
      const double* const a = st.M + lane * S;
      double* const yl = Y + lane * SN;
#pragma unroll
      for (int k = 0; k < N; ++k) {  // the interchanges in order, on the lane's vector in the stage
        const unsigned p = static_cast<unsigned>(st.P[lane * SN + k]);
        if (p != unsigned(k) && p < unsigned(N)) {
          const double t = yl[k];
          yl[k] = yl[p];
          yl[p] = t;
        }
      }
      double y[N];
#pragma unroll
      for (int i = 0; i < N; ++i) y[i] = yl[i];
#pragma unroll
      for (int j = 0; j < N; ++j)  // L y = P b, L unit lower, column by column
#pragma unroll
        for (int i = j + 1; i < N; ++i) y[i] = fma(-a[i * N + j], y[j], y[i]);
#pragma unroll
      for (int j = N - 1; j >= 0; --j) {  // U x = y
        if constexpr (N <= 16)
          y[j] = y[j] / a[j * N + j];
        else
          y[j] = y[j] * (1.0 / a[j * N + j]);
#pragma unroll
        for (int i = 0; i < j; ++i) y[i] = fma(-a[i * N + j], y[j], y[i]);
      }
#pragma unroll
      for (int i = 0; i < N; ++i) Y[lane * SN + i] = y[i];
    }
    __syncwarp();
    for (int e = lane; e < cnt * N; e += 32) {
      const int k = e / N;
      x[r0 + e] = Y[k * SN + (e - k * N)];
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Row kernel, 33..56: two warps per block, a row per thread in registers
// ------------------------------------------------------------------------------------------------

// The register kernel's design one size range up: thread i of a 64-thread block holds row i (NP doubles,
// statically indexed: the step loop is unrolled), one block per thread block (grid-stride). The block is
// staged through shared memory so the global loads and stores are coalesced. Step k: a butterfly argmax in
// each warp, the two warps' partials through shared memory (double-buffered), the pivot row broadcast
// through a double-buffered shared row: two __syncthreads per step. Every update is the small kernel's
// fma(-l, u, a) in step order, so the factors equal the CPU reference's bit for bit. Classes NP = 40, 48,
// 56 hold the sizes (NP - 8, NP]; a block of n < NP leaves the loop after step n - 1. (At NP 64 it is
// slower than the blocked kernel on an H200: 10.5 ms uncapped, 9.3 ms at 6 blocks per SM, against 7.8 ms
// for 61035 blocks; a variant with a compact, not unrolled step loop that rotates the row through the
// registers took 12.3 and 8.9 ms, so the unrolled loop's instruction footprint is not the main limit.
// ncu at NP 56: latency-bound at the 4 blocks per SM its 254 registers allow, issue slots 20% busy;
// verification/results/issue31_s39_2026-11-27.txt.)
template <int NP>
struct RowFactorShape {
  static_assert(NP > 32 && NP <= 64 && NP % 8 == 0, "row LU shape");
  static constexpr int threads = 64;
  static constexpr int S = NP | 1;  // staging row stride: odd, conflict-free row reads
  static constexpr int BS = NP + 2;  // broadcast row stride
  static constexpr std::size_t smem_bytes = (std::size_t(NP) * S + 2 * BS) * sizeof(double);
};

// Factors the blocks with lo <= n <= hi (hi <= NP).
template <int NP, int MB>
__global__ void __launch_bounds__(64, MB)
    row_factor(BatchLayout L, int lo, int hi, double* __restrict__ a, index_t* __restrict__ piv,
               int* __restrict__ info)
{
  using Sh = RowFactorShape<NP>;
  constexpr int S = Sh::S;
  BLOCKRES_LU_DYNAMIC_SMEM(lu_smem);
  double* const stage = reinterpret_cast<double*>(lu_smem);
  double* const bcast = stage + NP * S;
  __shared__ double part_key[2][2];
  __shared__ int part_id[2][2];
  __shared__ double red_max[2];
  const int li = threadIdx.x, lane = li & 31, warp = li >> 5;

  for (size64_t bb = blockIdx.x; bb < L.count; bb += gridDim.x) {
    const index_t b = L.block(bb);
    const int n = L.size(b);
    if (n < lo || n > hi) continue;  // uniform over the thread block
    double* const ab = a + L.mat(b);
    const bool mine = li < n;  // this thread holds row li of the block

    __syncthreads();  // the previous block's last reads of the stage are done
    double r[NP];
    double amax = 0.0;
    BLOCKRES_LU_ROW_LOAD(NP, NP, __syncthreads());
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) amax = fmax(amax, __shfl_xor_sync(full_mask, amax, off));
    if (lane == 0) red_max[warp] = amax;
    __syncthreads();
    const double thr = double(n) * DBL_EPSILON * fmax(red_max[0], red_max[1]);

    int pos = li;    // current position of this thread's row (implicit interchanges)
    int mypiv = li;  // pivot of step li
    int code = 0;    // info
#pragma unroll
    for (int k = 0; k < NP; ++k) {
      if (k >= n) break;  // uniform over the thread block
      const int par = k & 1;
      double key = (mine && pos >= k) ? pivot_key(r[k]) : -2.0;
      int id = (pos << 8) | li;
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) {
        const double ok = __shfl_xor_sync(full_mask, key, off);
        const int oid = __shfl_xor_sync(full_mask, id, off);
        if (better(ok, oid, key, id)) key = ok, id = oid;
      }
      if (lane == 0) part_key[par][warp] = key, part_id[par][warp] = id;
      __syncthreads();
      key = part_key[par][0], id = part_id[par][0];
      if (better(part_key[par][1], part_id[par][1], key, id)) key = part_key[par][1], id = part_id[par][1];
      const int pl = id & 0xff, ppos = id >> 8;
      double* const buf = bcast + par * Sh::BS;
      if (li == pl) {
#pragma unroll
        for (int j = k & ~1; j < NP; j += 2) *reinterpret_cast<double2*>(buf + j) = make_double2(r[j], r[j + 1]);
      }
      __syncthreads();
      BLOCKRES_LU_ROW_STEP(NP);
    }

    BLOCKRES_LU_ROW_STORE(NP, __syncthreads());
    if (mine) piv[L.row(b) + li] = mypiv;
    if (li == 0) info[b] = code;
  }
}

// ------------------------------------------------------------------------------------------------
// Blocked kernel, 57..512
// ------------------------------------------------------------------------------------------------

// Warp-wide argmax of (key, id) by `better`; every lane ends with the result.
__device__ __forceinline__ void warp_argmax(double& key, int& id)
{
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const double ok = __shfl_xor_sync(full_mask, key, off);
    const int oid = __shfl_xor_sync(full_mask, id, off);
    if (better(ok, oid, key, id)) key = ok, id = oid;
  }
}

// T threads, panels of NB columns, RPT panel rows per thread (n <= T * RPT). Shared memory: the
// panel Ps (NB columns of ldp doubles), the U12 chunk Us (NB rows of T doubles), the pivot values.
template <int T, int NB, int RPT>
struct BlockedShape {
  static_assert(T % 64 == 0 && NB % 2 == 0 && NB <= 32, "blocked LU shape");
  static constexpr int threads = T;
  static constexpr int warps = T / 32;
  static constexpr int TR = T / 4;  // rows of a GEMM tile: T/16 x 16 threads, 4 x 4 entries each, 64 columns
  static constexpr int UW = T;      // columns per trailing-update chunk (one thread per column)
  static constexpr int max_n = T * RPT;
  static constexpr int min_blocks = 512 / T;  // at most 128 registers per thread
  // Leading dimension of Ps: GEMM tiles read up to TR rows past the end; == 2 (mod 16) spreads the
  // column-strided panel loads over the banks.
  static int ldp(int nmax) { return (nmax + TR + 15) / 16 * 16 + 2; }
  static std::size_t smem_bytes(int nmax)
  {
    return (std::size_t(NB) * ldp(nmax) + std::size_t(NB) * UW + std::size_t(nmax)) * sizeof(double);
  }
};

// v reduced by op over the thread block of NW warps (every thread gets it): a butterfly in each
// warp, then the warps' partials in order through red (NW entries).
template <int NW, class V, class Op>
__device__ __forceinline__ V block_reduce(V v, V* red, Op op)
{
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_xor_sync(full_mask, v, off));
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  v = red[0];
#pragma unroll
  for (int w = 1; w < NW; ++w) v = op(v, red[w]);
  __syncthreads();
  return v;
}

template <int NW>
__device__ __forceinline__ double block_max(double v, double* red)
{
  return block_reduce<NW>(v, red, [](double a, double b) { return fmax(a, b); });
}

template <int NW>
__device__ __forceinline__ int block_min(int v, int* red)
{
  return block_reduce<NW>(v, red, [](int a, int b) { return min(a, b); });
}

// Factors the blocks with lo <= n <= hi (hi <= T * RPT); ldp = BlockedShape::ldp(hi or less).
template <int T, int NB, int RPT>
__global__ void __launch_bounds__(T, BlockedShape<T, NB, RPT>::min_blocks)
    blocked_factor(BatchLayout L, int lo, int hi, int ldp, double* __restrict__ a, index_t* __restrict__ piv,
                   int* __restrict__ info)
{
  using Sh = BlockedShape<T, NB, RPT>;
  constexpr int NW = Sh::warps, TR = Sh::TR, UW = Sh::UW;
  BLOCKRES_LU_DYNAMIC_SMEM(lu_smem);
  double* const Ps = reinterpret_cast<double*>(lu_smem);  // panel, column-major: Ps[c * ldp + row]
  double* const Us = Ps + NB * ldp;                        // U12 chunk: Us[row * UW + column]
  double* const pv = Us + NB * UW;                         // pivot values, for info
  __shared__ double part_key[2][NW];
  __shared__ int part_id[2][NW];
  __shared__ int mv_src[2 * NB], mv_dst[2 * NB];  // row moves of the current panel (relative to k0)
  __shared__ double red_d[NW];
  __shared__ int red_i[NW];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int ty = t / 16, tx = t % 16;

  for (size64_t bb = blockIdx.x; bb < L.count; bb += gridDim.x) {
    const index_t b = L.block(bb);  // block bb, or select[bb] in a size class
    const int n = L.size(b);
    if (n < lo || n > hi) continue;
    double* const A = a + L.mat(b);
    index_t* const pb = piv + L.row(b);
    double amax = 0.0;  // of the original entries this thread read in the first panel step

    for (int k0 = 0; k0 < n; k0 += NB) {
      const int m = n - k0, w = min(NB, m);
      const bool first = k0 == 0;
      __syncthreads();  // earlier users of Ps, Us, mv_* are done
      if (t < 2 * NB) mv_src[t] = -1;

      // 1. Load the panel (rows k0.., columns k0..k0+w-1).
      for (int e = t; e < m * NB; e += T) {
        const int q = e / NB, c = e % NB;
        if (c < w) {
          const double v = A[(k0 + q) * n + k0 + c];
          Ps[c * ldp + q] = v;
          if (first) amax = fmax(amax, fabs(v));
        }
      }
      __syncthreads();

      // 2. Factor the panel. Thread t owns physical rows q = t + T*i; pos[i] is the row's position.
      int pos[RPT];
      {
        double bk = -2.0;
        int bi = INT_MAX;
#pragma unroll
        for (int i = 0; i < RPT; ++i) {
          const int q = t + T * i;
          pos[i] = q;
          if (q < m) {
            const double kq = pivot_key(Ps[q]);
            const int iq = (q << 16) | q;
            if (better(kq, iq, bk, bi)) bk = kq, bi = iq;
          }
        }
        warp_argmax(bk, bi);
        if (lane == 0) part_key[0][warp] = bk, part_id[0][warp] = bi;
      }
      __syncthreads();
      for (int c = 0; c < w; ++c) {
        const int par = c & 1;
        double bk = part_key[par][0];
        int bi = part_id[par][0];
#pragma unroll
        for (int v = 1; v < NW; ++v)
          if (better(part_key[par][v], part_id[par][v], bk, bi)) bk = part_key[par][v], bi = part_id[par][v];
        const int ppos = bi >> 16, pq = bi & 0xffff;
        const double* const prow = Ps + pq;  // pivot row, physical; not modified during this step
        const double d = prow[c * ldp];
        if (t == 0) pb[k0 + c] = k0 + ppos, pv[k0 + c] = d;
        double nk = -2.0;
        int ni = INT_MAX;
#pragma unroll
        for (int i = 0; i < RPT; ++i) {
          const int q = t + T * i;
          if (q < m) {
            if (q == pq)
              pos[i] = c;
            else if (pos[i] == c)
              pos[i] = ppos;
            if (pos[i] > c) {
              double* const row = Ps + q;
              const double l = row[c * ldp] / d;
              row[c * ldp] = l;
              for (int cc = c + 1; cc < w; ++cc) row[cc * ldp] = fma(-l, prow[cc * ldp], row[cc * ldp]);
              if (c + 1 < w) {
                const double kq = pivot_key(row[(c + 1) * ldp]);
                const int iq = (pos[i] << 16) | q;
                if (better(kq, iq, nk, ni)) nk = kq, ni = iq;
              }
            }
          }
        }
        warp_argmax(nk, ni);
        if (lane == 0) part_key[par ^ 1][warp] = nk, part_id[par ^ 1][warp] = ni;
        __syncthreads();
      }

      // 3. Moves of this panel's interchanges: slot q (< w) for the panel-top rows, slot w + f for
      //    the row from below that became row f (< w); at most 2*NB rows change place. Apply them to
      //    the panel itself so that Ps holds the panel in its final row order.
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        const int q = t + T * i;
        if (q < m) {
          const int f = pos[i];
          if (q < w)
            mv_src[q] = q, mv_dst[q] = f;
          else if (f < w)
            mv_src[w + f] = q, mv_dst[w + f] = f;
        }
      }
      __syncthreads();
      {
        constexpr int per_thread = (2 * NB * NB + T - 1) / T;
        double v[per_thread];
#pragma unroll
        for (int i = 0; i < per_thread; ++i) {
          const int e = t + T * i, sl = e / NB, c = e % NB;
          const int src = sl < 2 * NB ? mv_src[sl] : -1;
          v[i] = (src >= 0 && c < w) ? Ps[c * ldp + src] : 0.0;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < per_thread; ++i) {
          const int e = t + T * i, sl = e / NB, c = e % NB;
          const int src = sl < 2 * NB ? mv_src[sl] : -1;
          if (src >= 0 && c < w) Ps[c * ldp + mv_dst[sl]] = v[i];
        }
      }
      __syncthreads();

      // 4. Panel back to global memory; interchanges on the columns left of the panel.
      for (int e = t; e < m * NB; e += T) {
        const int q = e / NB, c = e % NB;
        if (c < w) A[(k0 + q) * n + k0 + c] = Ps[c * ldp + q];
      }
      // Column j is one thread's: the new panel-top rows go through Us column t, the rows that
      // end below the panel come from the old top rows, which are still intact at that point.
      for (int j = t; j < k0; j += T) {
#pragma unroll
        for (int sl = 0; sl < 2 * NB; ++sl) {
          const int src = mv_src[sl], dst = mv_dst[sl];
          if (src >= 0 && dst < w) Us[dst * UW + t] = A[(k0 + src) * n + j];
        }
#pragma unroll
        for (int sl = 0; sl < 2 * NB; ++sl) {
          const int src = mv_src[sl], dst = mv_dst[sl];
          if (src >= 0 && dst >= w) A[(k0 + dst) * n + j] = A[(k0 + src) * n + j];
        }
        for (int d = 0; d < w; ++d) A[(k0 + d) * n + j] = Us[d * UW + t];
      }

      // 5. Columns right of the panel, UW at a time (when there are any, w == NB).
      for (int c0 = k0 + w; c0 < n; c0 += UW) {
        const int j = c0 + t;
        {
          // Interchanges of column j as on the left, the new top rows staying in Us; then the
          // unit-lower solve with L11 in registers.
          if (j < n) {
#pragma unroll
            for (int sl = 0; sl < 2 * NB; ++sl) {
              const int src = mv_src[sl], dst = mv_dst[sl];
              if (src >= 0 && dst < w) {
                const double v = A[(k0 + src) * n + j];
                Us[dst * UW + t] = v;
                if (first) amax = fmax(amax, fabs(v));
              }
            }
#pragma unroll
            for (int sl = 0; sl < 2 * NB; ++sl) {
              const int src = mv_src[sl], dst = mv_dst[sl];
              if (src >= 0 && dst >= w) {
                const double v = A[(k0 + src) * n + j];
                A[(k0 + dst) * n + j] = v;
                if (first) amax = fmax(amax, fabs(v));
              }
            }
          }
          double xr[NB];
#pragma unroll
          for (int d = 0; d < NB; ++d) xr[d] = j < n ? Us[d * UW + t] : 0.0;
#pragma unroll
          for (int d = 1; d < NB; ++d)
#pragma unroll
            for (int e = 0; e < d; ++e) xr[d] = fma(-Ps[e * ldp + d], xr[e], xr[d]);
#pragma unroll
          for (int d = 0; d < NB; ++d) {
            Us[d * UW + t] = xr[d];
            if (j < n) A[(k0 + d) * n + j] = xr[d];
          }
        }
        __syncthreads();
        // Trailing update of rows w..m-1 (positions relative to k0), columns c0..c0+ncol-1.
        const int ncol = min(UW, n - c0);
        for (int rt = w; rt < m; rt += TR) {
          const int rb = rt + ty * 4;
          for (int ct = 0; ct < ncol; ct += 64) {
            double acc[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
              for (int jj = 0; jj < 4; ++jj) {
                const int col = ct + (jj >> 1) * 32 + 2 * tx + (jj & 1);
                const bool in = rb + i < m && col < ncol;
                acc[i][jj] = in ? A[(k0 + rb + i) * n + c0 + col] : 0.0;
                if (first) amax = fmax(amax, fabs(acc[i][jj]));
              }
#pragma unroll 4
            for (int kk = 0; kk < NB; ++kk) {
              const double2 l01 = *reinterpret_cast<const double2*>(Ps + kk * ldp + rb);
              const double2 l23 = *reinterpret_cast<const double2*>(Ps + kk * ldp + rb + 2);
              const double2 u01 = *reinterpret_cast<const double2*>(Us + kk * UW + ct + 2 * tx);
              const double2 u23 = *reinterpret_cast<const double2*>(Us + kk * UW + ct + 32 + 2 * tx);
              const double lv[4] = {l01.x, l01.y, l23.x, l23.y};
              const double uv[4] = {u01.x, u01.y, u23.x, u23.y};
#pragma unroll
              for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int jj = 0; jj < 4; ++jj) acc[i][jj] = fma(-lv[i], uv[jj], acc[i][jj]);
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
              for (int jj = 0; jj < 4; ++jj) {
                const int col = ct + (jj >> 1) * 32 + 2 * tx + (jj & 1);
                if (rb + i < m && col < ncol) A[(k0 + rb + i) * n + c0 + col] = acc[i][jj];
              }
          }
        }
        __syncthreads();  // Us is rewritten by the next chunk
      }
    }

    // 6. info: the first pivot that fails against n * eps * max|A|.
    amax = block_max<NW>(amax, red_d);
    const double thr = double(n) * DBL_EPSILON * amax;
    int code = INT_MAX;
    for (int k = t; k < n; k += T)
      if (pivot_fails(pv[k], thr)) code = min(code, k + 1);
    code = block_min<NW>(code, red_i);
    if (t == 0) info[b] = code == INT_MAX ? 0 : code;
  }
}

// LAPACK's laswp on one vector in shared memory, by the calling thread alone: the interchanges (k, p_k),
// k = 0 .. n - 1, in the order the factorisation made them (p_k = p[k]; one outside 0..n-1 is skipped).
__device__ __forceinline__ void interchange_serial(int n, const index_t* p, double* v)
{
  for (int k = 0; k < n; ++k) {
    const int pk = p[k];
    if (pk != k && pk >= 0 && pk < n) {
      const double t = v[k];
      v[k] = v[pk];
      v[pk] = t;
    }
  }
}

// x = A^{-1} b for blocks with lo <= n <= hi, one thread block per block; shared memory:
// solve_smem_bytes(hi).
constexpr std::size_t solve_smem_bytes(int hi) { return std::size_t(hi) * (sizeof(double) + sizeof(index_t)); }


// The dot product of row and ys over the columns [c - lane, end) by one warp, lane l starting at
// its column c and stepping by 32: four chains of FMAs 128 columns apart, the rest into the first,
// summed pairwise, then reduced over the warp (every lane gets the sum).
__device__ __forceinline__ double warp_dot(const double* row, const double* ys, int c, int end)
{
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (; c + 96 < end; c += 128) {
    s0 = fma(row[c], ys[c], s0);
    s1 = fma(row[c + 32], ys[c + 32], s1);
    s2 = fma(row[c + 64], ys[c + 64], s2);
    s3 = fma(row[c + 96], ys[c + 96], s3);
  }
  for (; c < end; c += 32) s0 = fma(row[c], ys[c], s0);
  double s = (s0 + s1) + (s2 + s3);
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(full_mask, s, off);
  return s;
}

template <int T>
__global__ void __launch_bounds__(T)
    blocked_solve(BatchLayout L, int lo, int hi, const double* __restrict__ lu, const index_t* __restrict__ piv,
                  const double* __restrict__ bv, double* __restrict__ x)
{
  constexpr int NW = T / 32;
  BLOCKRES_LU_DYNAMIC_SMEM(lu_smem);
  double* const ys = reinterpret_cast<double*>(lu_smem);  // y, then x
  index_t* const ps = reinterpret_cast<index_t*>(ys + hi);  // the pivots
  __shared__ double Ds[32 * 33];  // the current 32x32 diagonal block, row stride 33
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;

  for (size64_t bb = blockIdx.x; bb < L.count; bb += gridDim.x) {
    const index_t b = L.block(bb);  // block bb, or select[bb] in a size class
    const int n = L.size(b);
    if (n < lo || n > hi) continue;
    const double* const A = lu + L.mat(b);
    const index_t* const pb = piv + L.row(b);
    __syncthreads();  // ys, ps and Ds of the previous block are no longer read
    for (int i = t; i < n; i += T) ys[i] = bv[L.row(b) + i], ps[i] = pb[i];
    __syncthreads();
    if (t == 0) interchange_serial(n, ps, ys);  // sequential, as the interchanges were made, from shared memory
    __syncthreads();

    // Forward: rows r0..r0+rb-1 subtract L(rows, 0:r0) y(0:r0), then the unit-lower triangle.
    for (int r0 = 0; r0 < n; r0 += 32) {
      const int rb = min(32, n - r0);
      for (int i = warp; i < rb; i += NW) {
        const double* const row = A + (r0 + i) * n;
        const double s = warp_dot(row, ys, lane, r0);
        Ds[i * 33 + lane] = lane < rb ? row[r0 + lane] : 0.0;
        if (lane == 0) ys[r0 + i] -= s;
      }
      __syncthreads();
      if (warp == 0) {
        double y = lane < rb ? ys[r0 + lane] : 0.0;
#pragma unroll
        for (int j = 0; j < 32; ++j) {
          const double yj = __shfl_sync(full_mask, y, j);
          if (lane > j && lane < rb) y = fma(-Ds[lane * 33 + j], yj, y);
        }
        if (lane < rb) ys[r0 + lane] = y;
      }
      __syncthreads();
    }
    // Backward: rows r0..r0+rb-1 subtract U(rows, r0+rb:n) x(r0+rb:n), then the upper triangle.
    for (int r0 = (n - 1) / 32 * 32; r0 >= 0; r0 -= 32) {
      const int rb = min(32, n - r0), ce = r0 + rb;
      for (int i = warp; i < rb; i += NW) {
        const double* const row = A + (r0 + i) * n;
        const double s = warp_dot(row, ys, ce + lane, n);
        Ds[i * 33 + lane] = lane < rb ? row[r0 + lane] : 0.0;
        if (lane == 0) ys[r0 + i] -= s;
      }
      __syncthreads();
      if (warp == 0) {
        double y = lane < rb ? ys[r0 + lane] : 0.0;
#pragma unroll
        for (int j = 31; j >= 0; --j) {
          if (lane == j && lane < rb) y = y / Ds[lane * 33 + lane];
          const double xj = __shfl_sync(full_mask, y, j);
          if (lane < j && j < rb) y = fma(-Ds[lane * 33 + j], xj, y);
        }
        if (lane < rb) ys[r0 + lane] = y;
      }
      __syncthreads();
    }
    for (int i = t; i < n; i += T) x[L.row(b) + i] = ys[i];
  }
}

// ------------------------------------------------------------------------------------------------
// Warp solve, 17..64: a warp per block, R rows per lane
// ------------------------------------------------------------------------------------------------

// Shared memory of a warp solve for blocks up to nmax rows, per warp: the block with odd row stride
// nmax | 1 (a column read by the 32 lanes is conflict-free), y, and the pivots.
struct WarpSolveShape {
  __host__ __device__ static int stride(int nmax) { return nmax | 1; }
  __host__ __device__ static std::size_t warp_doubles(int nmax)
  {
    return std::size_t(nmax) * stride(nmax) + nmax + (std::size_t(nmax) * sizeof(index_t) + 7) / 8;
  }
  // Warps per thread block: four for R = 1 (the 32-blocks-per-SM limit would cap one-warp blocks at
  // half the SM's warps), one for R = 2 (shared memory allows about six per SM anyway).
  static constexpr int warps(int R) { return R == 1 ? 4 : 1; }
  static std::size_t smem_bytes(int R, int nmax) { return warps(R) * warp_doubles(nmax) * sizeof(double); }
};

// Where each entry of b that a lane owns (row lane + 32 r, starting at pos[r] = its row) ends up after the
// interchanges (k, p_k), k = 0 .. n - 1, in order (LAPACK's laswp), p_k = pk[k]: each lane follows its entries
// through the swaps, reading the pivots as broadcasts, so no lane runs the swaps serially.
template <int R>
__device__ __forceinline__ void interchanged_positions(int n, const index_t* pk, int (&pos)[R])
{
  for (int k = 0; k < n; ++k) {
    const int p = pk[k];
    if (p == k || p < 0 || p >= n) continue;
#pragma unroll
    for (int r = 0; r < R; ++r) pos[r] = pos[r] == k ? p : pos[r] == p ? k : pos[r];
  }
}

// The right-hand side after the interchanges, for the warp solves: lane l reads b's entries l, l + 32, ... and the
// pivots (to ps), follows where each entry ends up (interchanged_positions) and scatters it into ys; with Diag, also
// d[r] = 1 / U(i, i) of its rows i from the factors A (n x n, row-major). The caller synchronises the warp before
// reading ys.
template <int R, bool Diag>
__device__ __forceinline__ void permuted_rhs(int n, int lane, const double* A, const index_t* piv, const double* bv,
                                             index_t* ps, double* ys, double (&d)[R])
{
  double y[R];
  int pos[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int i = lane + 32 * r;
    y[r] = i < n ? bv[i] : 0.0;
    if constexpr (Diag) d[r] = i < n ? 1.0 / A[size64_t(i) * n + i] : 0.0;
    pos[r] = i;
    if (i < n) ps[i] = piv[i];
  }
  __syncwarp();
  interchanged_positions<R>(n, ps, pos);
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (lane + 32 * r < n) ys[pos[r]] = y[r];
}

// x = A^{-1} b for the blocks with lo <= n <= hi (hi <= 32 R), one warp per block, grid-striding.
// The block's rows are copied into the warp's shared memory with 8-byte cp.async (every warp
// instruction a coalesced run of a row). The interchanges: lane l follows where each of its
// entries b_i (i = l, l + 32, ...) ends up through the n swaps, reading the pivots as broadcasts,
// and scatters it there: no lane runs the swaps serially. Lane l owns rows l, l + 32, ...: the
// reciprocal of each owned U(i, i) is taken off the dependency chain, and the two substitutions are
// column-oriented with one broadcast per step: y_i -= L(i, k) y_k for i > k, then
// x_k = y_k (1 / U(k, k)) and y_i -= U(i, k) x_k for i < k (steps unrolled, guarded by k < n). The
// chain of 2n dependent steps bounds a block's time; other warps' copies overlap it. Results equal
// the CPU reference's to rounding (the reciprocal), not bit for bit.
template <int R>
__global__ void __launch_bounds__(32 * WarpSolveShape::warps(R))
    warp_solve(BatchLayout L, int lo, int hi, const double* __restrict__ lu, const index_t* __restrict__ piv,
               const double* __restrict__ bv, double* __restrict__ x)
{
  constexpr int WARPS = WarpSolveShape::warps(R);
  BLOCKRES_LU_DYNAMIC_SMEM(lu_smem);
  const int S = WarpSolveShape::stride(hi);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double* const M = reinterpret_cast<double*>(lu_smem) + warp * WarpSolveShape::warp_doubles(hi);
  double* const ys = M + size64_t(hi) * S;
  index_t* const ps = reinterpret_cast<index_t*>(ys + hi);
  for (size64_t bb = size64_t(blockIdx.x) * WARPS + warp; bb < L.count; bb += size64_t(gridDim.x) * WARPS) {
    const index_t b = L.block(bb);  // block bb, or select[bb] in a size class
    const int n = L.size(b);
    if (n < lo || n > hi) continue;
    const double* const A = lu + L.mat(b);
    const size64_t r0 = L.row(b);
    __syncwarp();  // the previous block's M, ys and ps are no longer read
    for (int i = 0; i < n; ++i) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int c = lane + 32 * r;
        if (c < n) __pipeline_memcpy_async(M + i * S + c, A + size64_t(i) * n + c, 8);
      }
    }
    __pipeline_commit();
    double y[R], d[R];
    permuted_rhs<R, false>(n, lane, A, piv + r0, bv + r0, ps, ys, d);
    __pipeline_wait_prior(0);
    __syncwarp();
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int i = lane + 32 * r;
      y[r] = i < n ? ys[i] : 0.0;
      d[r] = i < n ? 1.0 / M[i * S + i] : 0.0;
    }
    // L y = P b (unit lower).
#pragma unroll
    for (int kb = 0; kb < R; ++kb)
#pragma unroll
      for (int kk = 0; kk < 32; ++kk) {
        const int k = kb * 32 + kk;
        if (k < n) {
          const double yk = __shfl_sync(full_mask, y[kb], kk);
#pragma unroll
          for (int r = kb; r < R; ++r) {
            const int i = lane + 32 * r;
            if (i > k && i < n) y[r] = fma(-M[i * S + k], yk, y[r]);
          }
        }
      }
    // U x = y.
#pragma unroll
    for (int kb = R - 1; kb >= 0; --kb)
#pragma unroll
      for (int kk = 31; kk >= 0; --kk) {
        const int k = kb * 32 + kk;
        if (k < n) {
          if (lane == kk) y[kb] *= d[kb];
          const double xk = __shfl_sync(full_mask, y[kb], kk);
#pragma unroll
          for (int r = 0; r <= kb; ++r) {
            const int i = lane + 32 * r;
            if (i < k) y[r] = fma(-M[i * S + k], xk, y[r]);
          }
        }
      }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int i = lane + 32 * r;
      if (i < n) x[r0 + i] = y[r];
    }
  }
}

// Panel solve, 33..64 rows (dispatched for 57..64, where it wins on both cards: batched_lu_cuda.cu): warp_solve's
// substitutions with a ring of column panels in shared memory instead of the whole block. warp_solve stages all n x n entries per warp (34 KB at 64 rows), so an SM holds six such warps and
// each waits out its own copy and then its chain of 2n steps with little else to run (ncu, H200, n 64: 9.4%
// occupancy, 40.7% of DRAM's peak, 5.8 cycles between a warp's instructions). Here a warp holds SL panels of P
// columns (rows of P + 1 doubles, so a column read by the 32 lanes is conflict-free): the forward substitution
// reads panel p's rows below its first column (the entries L(i, k) it needs), the backward one panel p's rows
// above its last (U(i, k) and U's diagonal), panels in the order the steps use them, the next SL - 1 copied
// (8-byte cp.async, every warp instruction P-double runs of 32 / P rows) while the current one is used. The
// arithmetic is warp_solve's, in the same order (the same bits): y_i -= L(i, k) y_k for i > k, then
// x_k = y_k (1 / U(k, k)) and y_i -= U(i, k) x_k for i < k; the reciprocals are read from global memory at the
// block's start, off the chain.
template <int P, int SL>
struct PanelSolveShape {
  static constexpr int stride = P + 1;
  __host__ __device__ static std::size_t warp_doubles(int nmax)
  {
    return std::size_t(SL) * nmax * stride + nmax + (std::size_t(nmax) * sizeof(index_t) + 7) / 8;
  }
  static std::size_t smem_bytes(int nmax) { return warp_doubles(nmax) * sizeof(double); }  // one warp a block
};

// Copies stage st of a block's 2 np stages into slot M (rows of P + 1): forward panel st (st < np, rows
// below its first column) or backward panel 2 np - 1 - st (rows above its last column), then commits the
// group (an empty group past the last stage, so the waits count the same for every stage).
template <int P>
__device__ __forceinline__ void panel_copy(const double* A, int n, int np, int st, double* M, int lane)
{
  if (st < 2 * np) {
    const bool fwd = st < np;
    const int c0 = (fwd ? st : 2 * np - 1 - st) * P;
    const int w = min(P, n - c0);
    const int rlo = fwd ? c0 + 1 : 0, rhi = fwd ? n : min(n, c0 + P);
    for (int e = lane; e < (rhi - rlo) * P; e += 32) {
      const int i = rlo + e / P, c = e % P;
      if (c < w) __pipeline_memcpy_async(M + i * (P + 1) + c, A + size64_t(i) * n + c0 + c, 8);
    }
  }
  __pipeline_commit();
}

// One panel's steps: columns c0 .. c0 + P - 1 of L (forward) or, in reverse, of U (backward). P divides 32, so
// every column of a panel is held by entry KB = c0 / 32 of its lane's y (a static index: the caller branches
// on KB, and y stays in registers).
template <int R, int P, int KB>
__device__ __forceinline__ void panel_forward(const double* M, int n, int c0, int lane, double (&y)[R])
{
#pragma unroll
  for (int kk = 0; kk < P; ++kk) {
    const int k = c0 + kk;
    if (k >= n) break;
    const double yk = __shfl_sync(full_mask, y[KB], k & 31);
#pragma unroll
    for (int r = KB; r < R; ++r) {
      const int i = lane + 32 * r;
      if (i > k && i < n) y[r] = fma(-M[i * (P + 1) + kk], yk, y[r]);
    }
  }
}
template <int R, int P, int KB>
__device__ __forceinline__ void panel_backward(const double* M, int n, int c0, int lane, const double (&d)[R],
                                               double (&y)[R])
{
#pragma unroll
  for (int kk = P - 1; kk >= 0; --kk) {
    const int k = c0 + kk;
    if (k >= n) continue;
    if (lane == (k & 31)) y[KB] *= d[KB];
    const double xk = __shfl_sync(full_mask, y[KB], k & 31);
#pragma unroll
    for (int r = 0; r <= KB; ++r) {
      const int i = lane + 32 * r;
      if (i < k) y[r] = fma(-M[i * (P + 1) + kk], xk, y[r]);
    }
  }
}

// x = A^{-1} b for the blocks with lo <= n <= hi (hi <= 32 R), one warp per thread block, grid-striding.
template <int R, int P, int SL>
__global__ void __launch_bounds__(32)
    panel_solve(BatchLayout L, int lo, int hi, const double* __restrict__ lu, const index_t* __restrict__ piv,
                const double* __restrict__ bv, double* __restrict__ x)
{
  using Sh = PanelSolveShape<P, SL>;
  BLOCKRES_LU_DYNAMIC_SMEM(lu_smem);
  const int lane = threadIdx.x & 31;
  double* const ring = reinterpret_cast<double*>(lu_smem);
  double* const ys = ring + size64_t(SL) * hi * Sh::stride;
  index_t* const ps = reinterpret_cast<index_t*>(ys + hi);
  for (size64_t bb = blockIdx.x; bb < L.count; bb += gridDim.x) {
    const index_t b = L.block(bb);  // block bb, or select[bb] in a size class
    const int n = L.size(b);
    if (n < lo || n > hi) continue;
    const double* const A = lu + L.mat(b);
    const size64_t r0 = L.row(b);
    const int np = (n + P - 1) / P, stages = 2 * np;
    __syncwarp();  // the previous block's ring, ys and ps are no longer read
#pragma unroll
    for (int st = 0; st < SL - 1; ++st) panel_copy<P>(A, n, np, st, ring + size64_t(st) * hi * Sh::stride, lane);
    double y[R], d[R];
    permuted_rhs<R, true>(n, lane, A, piv + r0, bv + r0, ps, ys, d);
    __syncwarp();
#pragma unroll
    for (int r = 0; r < R; ++r) y[r] = lane + 32 * r < n ? ys[lane + 32 * r] : 0.0;
    for (int st = 0; st < stages; ++st) {
      __pipeline_wait_prior(SL - 2);
      __syncwarp();  // every lane's copies of stage st are visible; stage st - 1's slot is no longer read
      panel_copy<P>(A, n, np, st + SL - 1, ring + size64_t((st + SL - 1) % SL) * hi * Sh::stride, lane);
      const double* const M = ring + size64_t(st % SL) * hi * Sh::stride;
      static_assert(32 % P == 0 && R <= 2, "panel_solve: P divides 32, at most 64 rows");
      if (st < np) {  // L y = P b (unit lower), columns c0 .. c0 + P - 1
        const int c0 = st * P;
        if (R == 1 || c0 < 32) panel_forward<R, P, 0>(M, n, c0, lane, y);
        else panel_forward<R, P, R - 1>(M, n, c0, lane, y);
      } else {  // U x = y, columns c0 + P - 1 down to c0
        const int c0 = (stages - 1 - st) * P;
        if (R == 1 || c0 < 32) panel_backward<R, P, 0>(M, n, c0, lane, d, y);
        else panel_backward<R, P, R - 1>(M, n, c0, lane, d, y);
      }
    }
    __pipeline_wait_prior(0);  // the empty groups past the last stage
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int i = lane + 32 * r;
      if (i < n) x[r0 + i] = y[r];
    }
  }
}

// x = A^{-1} b for the blocks with lo <= n <= hi (hi <= 32 R), one warp per block, WARPS warps per thread
// block, grid-striding, nothing staged: the substitutions go row by row. Lane l holds y_k (then x_k) for
// k = l, l + 32, ...; row i of L (or U) is read straight from global memory, coalesced (lane l its entries
// k = l, l + 32, ...), each lane multiplies its entries by its y_k and a butterfly adds the warp's partial
// sums, so that every lane has sum_k L(i, k) y_k; lane i % 32 then forms y_i = (P b)_i - sum (x_i = (y_i -
// sum) / U(i, i) on the way back). No shared memory holds the factors, so as many warps stay in flight as
// the registers allow and each warp's chain of 2n reductions overlaps other warps' loads. The interchanges
// as in warp_solve. Results equal the CPU reference's to rounding (the sums are reassociated).
template <int R>
struct RowSolveShape {
  static constexpr int warps = 4;
};
template <int R>
__global__ void __launch_bounds__(32 * RowSolveShape<R>::warps)
    row_solve(BatchLayout L, int lo, int hi, const double* __restrict__ lu, const index_t* __restrict__ piv,
              const double* __restrict__ bv, double* __restrict__ x)
{
  constexpr int WARPS = RowSolveShape<R>::warps;
  __shared__ double ys_all[WARPS][32 * R];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  double* const ys = ys_all[warp];
  for (size64_t bb = size64_t(blockIdx.x) * WARPS + warp; bb < L.count; bb += size64_t(gridDim.x) * WARPS) {
    const index_t b = L.block(bb);
    const int n = L.size(b);
    if (n < lo || n > hi) continue;
    const double* const A = lu + L.mat(b);
    const size64_t r0 = L.row(b);
    double y[R];
    int pos[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int i = lane + 32 * r;
      y[r] = i < n ? bv[r0 + i] : 0.0;
      pos[r] = i;
    }
    interchanged_positions<R>(n, piv + r0, pos);
    __syncwarp();  // the previous block's reads of ys are done
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (lane + 32 * r < n) ys[pos[r]] = y[r];
    __syncwarp();
#pragma unroll
    for (int r = 0; r < R; ++r) y[r] = lane + 32 * r < n ? ys[lane + 32 * r] : 0.0;
    // L y = P b (unit lower): y_i -= sum_{k < i} L(i, k) y_k.
#pragma unroll
    for (int rb = 0; rb < R; ++rb)
#pragma unroll
      for (int ii = 0; ii < 32; ++ii) {
        const int i = 32 * rb + ii;
        if (i >= n) break;
        const double* const row = A + size64_t(i) * n;
        double s = 0.0;
#pragma unroll
        for (int r = 0; r <= rb; ++r) {
          const int k = lane + 32 * r;
          if (k < i) s = fma(row[k], y[r], s);
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(full_mask, s, off);
        if (lane == ii) y[rb] -= s;
      }
    // U x = y: x_i = (y_i - sum_{k > i} U(i, k) x_k) / U(i, i).
#pragma unroll
    for (int rb = R - 1; rb >= 0; --rb)
#pragma unroll
      for (int ii = 31; ii >= 0; --ii) {
        const int i = 32 * rb + ii;
        if (i >= n) continue;
        const double* const row = A + size64_t(i) * n;
        double s = 0.0;
#pragma unroll
        for (int r = rb; r < R; ++r) {
          const int k = lane + 32 * r;
          if (k > i && k < n) s = fma(row[k], y[r], s);
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(full_mask, s, off);
        if (lane == ii) y[rb] = (y[rb] - s) / row[i];
      }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int i = lane + 32 * r;
      if (i < n) x[r0 + i] = y[r];
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Launchers (stream first), explicitly instantiated in the batched_lu_cuda_*.cu files.
// ------------------------------------------------------------------------------------------------

template <int NP, bool Uniform>
void launch_small_factor(stream_t s, const BatchLayout& L, int lo, double* a, index_t* piv, int* info);
template <int G>
void launch_small_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                        const double* b, double* x);
template <int N>
bool launch_lane_solve(stream_t s, const BatchLayout& L, const double* lu, const index_t* piv, const double* b,
                       double* x);
template <int NP, int MB>
void launch_row_factor(stream_t s, const BatchLayout& L, int lo, int hi, double* a, index_t* piv, int* info);
template <int T, int NB, int RPT>
void launch_blocked_factor(stream_t s, const BatchLayout& L, int lo, int hi, double* a, index_t* piv, int* info);
template <int T>
void launch_blocked_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                          const double* b, double* x);
template <int R>
void launch_warp_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                       const double* b, double* x);
template <int R>
void launch_row_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                      const double* b, double* x);
template <int R, int P, int SL>
void launch_panel_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                        const double* b, double* x);

// The compiled instances (X-macro lists: the .cu files instantiate them with the *_INSTANCE
// macros, the dispatch declares them extern with the same macros after `extern`).
// Register kernels, one list per batched_lu_cuda_small_*.cu: F(NP, Uniform) factors (uniform sizes
// 1..32, variable classes 1, 2, 4, ..., 32), S(G) solves (G = 1, 2, 4, 8, 16; 17..64 is warp_solve's).
#define BLOCKRES_LU_SMALL_1_16(F, S)                                                                      \
  F(1, true) F(2, true) F(3, true) F(4, true) F(5, true) F(6, true) F(7, true) F(8, true) F(9, true)      \
  F(10, true) F(11, true) F(12, true) F(13, true) F(14, true) F(15, true) F(16, true)                     \
  F(1, false) F(2, false) F(4, false) F(8, false) F(16, false) S(1) S(2) S(4) S(8) S(16)
// Lane solves (lane_solve), uniform layouts of 4..15 rows in batched_lu_cuda_small_1_16.cu, 16..24 in
// batched_lu_cuda_lane_16_24.cu.
#define BLOCKRES_LU_LANE_SOLVES_4_15(X) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define BLOCKRES_LU_LANE_SOLVES_16_24(X) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24)
#define BLOCKRES_LU_LANE_SOLVES(X) BLOCKRES_LU_LANE_SOLVES_4_15(X) BLOCKRES_LU_LANE_SOLVES_16_24(X)
#define BLOCKRES_LU_LANE_SOLVE_INSTANCE(N) \
  template bool launch_lane_solve<N>(stream_t, const BatchLayout&, const double*, const index_t*, const double*, double*);
#define BLOCKRES_LU_SMALL_17_24(F, S) \
  F(17, true) F(18, true) F(19, true) F(20, true) F(21, true) F(22, true) F(23, true) F(24, true)
#define BLOCKRES_LU_SMALL_25_32(F, S)                                                                \
  F(25, true) F(26, true) F(27, true) F(28, true) F(29, true) F(30, true) F(31, true) F(32, true) \
  F(32, false)
#define BLOCKRES_LU_SMALL_FACTOR_INSTANCE(NP, U) \
  template void launch_small_factor<NP, U>(stream_t, const BatchLayout&, int, double*, index_t*, int*);
#define BLOCKRES_LU_SMALL_SOLVE_INSTANCE(G)                                                                \
  template void launch_small_solve<G>(stream_t, const BatchLayout&, int, int, const double*, const index_t*, \
                                      const double*, double*);
// Row kernels, in batched_lu_cuda_rows_33_56.cu: class NP holds the sizes NP - 7 .. NP; MB is the launch
// bound's blocks per SM (1: no register cap). Chosen on an H200 (issue 31, 2026-11-27), getrf speedups of the
// row kernel against the blocked one: NP 40 with MB 6 (168 registers) 2.59-2.73x against 1.36-1.41x; 48 and
// 56 uncapped (254 registers) 2.23x and 1.86x against 1.65x and 1.58x (MB 6 there: 1.82x, 1.68x). At 64 the
// blocked kernel stays faster (1.89x against 1.39x uncapped, 1.60x with MB 6).
#define BLOCKRES_LU_ROW_FACTOR_CLASSES(X) X(40, 6) X(48, 1) X(56, 1)
#define BLOCKRES_LU_ROW_FACTOR_INSTANCE(NP, MB) \
  template void launch_row_factor<NP, MB>(stream_t, const BatchLayout&, int, int, double*, index_t*, int*);
// Blocked classes (57..512): T threads, panels of NB columns, n <= T * RPT; one blocked solve.
#define BLOCKRES_LU_BLOCKED_FACTOR_CLASSES(X) X(64, 16, 1) X(128, 16, 1) X(256, 16, 1) X(256, 16, 2)
#define BLOCKRES_LU_BLOCKED_SOLVE_THREADS 128
#define BLOCKRES_LU_BLOCKED_FACTOR_INSTANCE(T, NB, RPT) \
  template void launch_blocked_factor<T, NB, RPT>(stream_t, const BatchLayout&, int, int, double*, index_t*, int*);
#define BLOCKRES_LU_BLOCKED_SOLVE_INSTANCE                                                                        \
  template void launch_blocked_solve<BLOCKRES_LU_BLOCKED_SOLVE_THREADS>(stream_t, const BatchLayout&, int, int, \
                                                                        const double*, const index_t*,         \
                                                                        const double*, double*);
// Warp solves: R rows per lane (R = 1: 17..32, R = 2: 33..64), in batched_lu_cuda_blocked.cu.
#define BLOCKRES_LU_WARP_SOLVE_INSTANCE(R)                                                                    \
  template void launch_warp_solve<R>(stream_t, const BatchLayout&, int, int, const double*, const index_t*, \
                                     const double*, double*);
// Panel solves (panel_solve): R rows per lane, panels of P columns, SL slots, in batched_lu_cuda_blocked.cu.
#define BLOCKRES_LU_PANEL_SOLVE_INSTANCE(R, P, SL)                                                              \
  template void launch_panel_solve<R, P, SL>(stream_t, const BatchLayout&, int, int, const double*, const index_t*, \
                                             const double*, double*);
// Row solves (row_solve): R rows per lane (R = 3: 65..96, R = 4: 97..128), in batched_lu_cuda_blocked.cu.
#define BLOCKRES_LU_ROW_SOLVE_INSTANCE(R)                                                                    \
  template void launch_row_solve<R>(stream_t, const BatchLayout&, int, int, const double*, const index_t*, \
                                    const double*, double*);

}  // namespace blockres::kernels::cuda::lu_detail

#if !defined(BLOCKRES_LU_EMULATION)
#include "kernels/cuda_check.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace blockres::kernels::cuda::lu_detail {

// shared_bytes_per_block_limit(): declared in lane_stage.cuh, defined in batched_lu_cuda.cu.

template <int NP, bool Uniform>
void launch_small_factor(stream_t s, const BatchLayout& L, int lo, double* a, index_t* piv, int* info)
{
  using Sh = SmallFactorShape<NP>;
  const size64_t per_cta = size64_t(Sh::warps) * Sh::groups;
  const auto grid = unsigned(std::min<size64_t>((size64_t(L.count) + per_cta - 1) / per_cta, max_grid));
  small_factor<NP, Uniform><<<grid, Sh::threads, Sh::smem_bytes, s>>>(L, lo, a, piv, info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int G>
void launch_small_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                        const double* b, double* x)
{
  using Sh = SmallSolveShape<G>;
  const size64_t per_cta = size64_t(Sh::warps) * Sh::groups;
  const auto grid = unsigned(std::min<size64_t>((size64_t(L.count) + per_cta - 1) / per_cta, max_grid));
  small_solve<G><<<grid, Sh::threads, Sh::smem_bytes, s>>>(L, lo, hi, lu, piv, b, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

// A uniform layout of N rows without a selection (lane_solve's layout); false, launching nothing, when its
// stage does not fit this GPU's shared memory per thread block (the caller falls back to small_solve).
template <int N>
bool launch_lane_solve(stream_t s, const BatchLayout& L, const double* lu, const index_t* piv, const double* b,
                       double* x)
{
  return cuda_lane::launch<N>(&lane_solve<N>, 0, s, L, lu, piv, b, x);
}

template <int NP, int MB>
void launch_row_factor(stream_t s, const BatchLayout& L, int lo, int hi, double* a, index_t* piv, int* info)
{
  using Sh = RowFactorShape<NP>;
  const auto grid = unsigned(std::min<size64_t>(L.count, max_grid));
  row_factor<NP, MB><<<grid, Sh::threads, Sh::smem_bytes, s>>>(L, lo, hi, a, piv, info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int T, int NB, int RPT>
void launch_blocked_factor(stream_t s, const BatchLayout& L, int lo, int hi, double* a, index_t* piv, int* info)
{
  using Sh = BlockedShape<T, NB, RPT>;
  const int nmax = std::min(hi, L.max_size);
  const std::size_t smem = Sh::smem_bytes(nmax);
  const auto kernel = &blocked_factor<T, NB, RPT>;
  // The panel grows with n: above 48 KB the device's own limit decides (sm_86/89 hold blocks up to
  // 432 rows, sm_80 and sm_90 all 512). Refuse with the numbers rather than fail in the launch.
  if (smem > 48 * 1024) {
    cudaFuncAttributes attr{};
    BLOCKRES_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    const std::size_t limit = shared_bytes_per_block_limit();
    if (smem + attr.sharedSizeBytes > limit) {
      int fits = nmax;
      while (fits > lo && Sh::smem_bytes(fits) + attr.sharedSizeBytes > limit) --fits;
      throw std::runtime_error(
          "cuda::lu_factor: blocks of up to " + std::to_string(nmax) + " rows need " +
          std::to_string(smem + attr.sharedSizeBytes) + " bytes of shared memory per thread block, more than the " +
          std::to_string(limit) + " this GPU allows" +
          (Sh::smem_bytes(fits) + attr.sharedSizeBytes <= limit ? " (blocks up to " + std::to_string(fits) + " rows fit)"
                                                                 : std::string()));
    }
  }
  BLOCKRES_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const auto grid = unsigned(std::min<size64_t>(L.count, max_grid_blocked));
  kernel<<<grid, T, smem, s>>>(L, lo, hi, Sh::ldp(nmax), a, piv, info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int T>
void launch_blocked_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                          const double* b, double* x)
{
  const int h = std::min(hi, L.max_size);
  const auto grid = unsigned(std::min<size64_t>(L.count, max_grid_blocked));
  blocked_solve<T><<<grid, T, solve_smem_bytes(h), s>>>(L, lo, h, lu, piv, b, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int R>
void launch_row_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                      const double* b, double* x)
{
  constexpr int warps = RowSolveShape<R>::warps;
  const auto grid = unsigned(std::min<size64_t>((L.count + warps - 1) / warps, max_grid));
  row_solve<R><<<grid, 32 * warps, 0, s>>>(L, lo, std::min(hi, L.max_size), lu, piv, b, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int R, int P, int SL>
void launch_panel_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                        const double* b, double* x)
{
  const int h = std::min(hi, L.max_size);
  const std::size_t smem = PanelSolveShape<P, SL>::smem_bytes(h);  // <= 15 KB (64 rows, P 8, SL 3)
  const auto grid = unsigned(std::min<size64_t>(L.count, max_grid));
  panel_solve<R, P, SL><<<grid, 32, smem, s>>>(L, lo, h, lu, piv, b, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int R>
void launch_warp_solve(stream_t s, const BatchLayout& L, int lo, int hi, const double* lu, const index_t* piv,
                       const double* b, double* x)
{
  const int h = std::min(hi, L.max_size);
  constexpr int warps = WarpSolveShape::warps(R);
  const std::size_t smem = WarpSolveShape::smem_bytes(R, h);  // <= 34 KB (R = 1: 4 x 8.6 KB, R = 2: 34 KB)
  const auto grid = unsigned(std::min<size64_t>((L.count + warps - 1) / warps, max_grid));
  warp_solve<R><<<grid, 32 * warps, smem, s>>>(L, lo, h, lu, piv, b, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::kernels::cuda::lu_detail
#endif
