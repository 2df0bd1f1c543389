// CUDA register kernels of batched Gauss–Huard (BGH/BGHT) and Gauss–Jordan (BGJE): templates,
// instantiated per lane-group width in batched_gh_cuda_{1_8,9_16,17_32}.cu, dispatched in
// batched_gh_cuda.cu. Formulas, storage layouts and the pivot rule: kernels/batched/batched_gh.hpp.
//
// Work distribution: a block of size n is handled by a group of W = pow2ceil(max_size) lanes of a
// warp (W in {1, 2, 4, 8, 16, 32}), 32 / W blocks per warp, block b by the group with global index b
// (every group of a launch runs the same instruction stream, so the warp shuffles are always
// convergent; a group without a block or with n < W simply carries padding).
//   factor / invert: lane c holds column c of its block in registers, v[i] = A(i, c), loaded with
//     lane c reading a[i*n + c] (coalesced); the pivot search of step k is an arg-max over the
//     group (shuffle max + ballot), pivot rows/columns are broadcast with __shfl_sync(width W);
//     at W = 32 the arg-max uses integer warp reductions and the pivot row/column go through a
//     small shared-memory buffer per warp instead (exchange_in_shared).
//     Columns beyond n are identity padding: they are never pivot candidates before step n and
//     steps >= n leave the real columns untouched, so one kernel serves every n <= W. The step
//     loop is fully unrolled (static register indices) and stops after the largest n of the warp.
//   solve: lane j holds y(j); step k is a group sum of L(k, j) y(j) + one broadcast. For W <= 8 the
//     factor entries a lane needs, L(k, j) and U(j, k) for k > j, are all loaded up front
//     (independent of the computation) and the steps fully unrolled; for W >= 16 the steps are a
//     run-time loop that reads each step's two entries (fewer registers, more warps per SM) from a
//     copy of the block in shared memory (staged_solve). BGHT reads U(j, k) from row n-1-k of the
//     stored block, so its global loads are coalesced.
//   gemv: W <= 8: lane j loads column j of the inverse and x(j); the W partial row sums are reduced
//     with a transposing butterfly (W - 1 shuffles per lane), which leaves row j's sum in lane j.
//     W >= 16 (gemv_staged_kernel, gemv_rows_kernel): 32 rows per warp copied coalesced into shared
//     memory, a row's sum per lane (uniform layouts: the batch as one tall matrix; variable layouts:
//     the rows in order, whatever blocks hold them).
//   lane solves (uniform 4..29, gh_lane_solve_kernel): a lane per block, 32, 16 or 8 blocks per warp
//     (cuda_lane::blocks_per_warp) staged in shared memory, the CPU reference's steps in registers.
//   lane factor (uniform 4..14, gh_lane_factor_kernel): a lane per block, 32 blocks per warp staged in shared
//     memory, the columns put in pivoted order as the steps go, a step's body per static k.
#pragma once

#include "kernels/batched/batched_gh.hpp"
#include "kernels/batched/lane_stage.cuh"
#include "kernels/cuda_check.hpp"

#include <cuda_pipeline.h>
#include <math_constants.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <type_traits>

namespace blockres::kernels::cuda_gh {

constexpr int threads_per_block = 128;

template <int W>
void launch_factor(stream_t s, const BatchLayout& L, double* a, index_t* perm, int* info, GhStorage storage);
template <int W>
void launch_solve(stream_t s, const BatchLayout& L, const double* f, const index_t* perm, GhStorage storage,
                  const double* b, double* x);
template <int W>
void launch_invert(stream_t s, const BatchLayout& L, double* a, int* info);
template <int W, class T>
void launch_gemv(stream_t s, const BatchLayout& L, const T* inv, const double* x, double* y);
// A variable layout (row_off, mat_off) of blocks up to 32 rows, all rows in one launch (gemv_rows_kernel);
// rows_bound: about the layout's rows (the grid's size: the warps stride, so fewer still cover every row). In
// batched_gh_cuda_17_32.cu.
template <class T>
void launch_gemv_rows(stream_t s, const BatchLayout& L, size64_t rows_bound, const T* inv, const double* x, double* y);
extern template void launch_gemv_rows<double>(stream_t, const BatchLayout&, size64_t, const double*, const double*,
                                              double*);
extern template void launch_gemv_rows<float>(stream_t, const BatchLayout&, size64_t, const float*, const double*,
                                             double*);
// A uniform layout of N rows without a selection (gh_lane_solve_kernel's layout); false, launching nothing, when
// its stage does not fit this GPU's shared memory per thread block (the caller then runs the group solve).
template <int N>
bool launch_lane_solve(stream_t s, const BatchLayout& L, const double* f, const index_t* perm, GhStorage storage,
                       const double* b, double* x);
#define BLOCKRES_GH_LANE_SOLVE(N, PREFIX)                                                                     \
  PREFIX template bool launch_lane_solve<N>(stream_t, const BatchLayout&, const double*, const index_t*, GhStorage, \
                                            const double*, double*);
// Instantiated in batched_gh_cuda_1_8.cu (4..8), batched_gh_cuda_9_16.cu (9..15) and batched_gh_cuda_lane_16_29.cu.
#define BLOCKRES_GH_LANE_SOLVES_4_8(X, PREFIX) X(4, PREFIX) X(5, PREFIX) X(6, PREFIX) X(7, PREFIX) X(8, PREFIX)
#define BLOCKRES_GH_LANE_SOLVES_9_15(X, PREFIX) \
  X(9, PREFIX) X(10, PREFIX) X(11, PREFIX) X(12, PREFIX) X(13, PREFIX) X(14, PREFIX) X(15, PREFIX)
#define BLOCKRES_GH_LANE_SOLVES_16_29(X, PREFIX)                                                                   \
  X(16, PREFIX) X(17, PREFIX) X(18, PREFIX) X(19, PREFIX) X(20, PREFIX) X(21, PREFIX) X(22, PREFIX) X(23, PREFIX) \
  X(24, PREFIX) X(25, PREFIX) X(26, PREFIX) X(27, PREFIX) X(28, PREFIX) X(29, PREFIX)
BLOCKRES_GH_LANE_SOLVES_4_8(BLOCKRES_GH_LANE_SOLVE, extern)
BLOCKRES_GH_LANE_SOLVES_9_15(BLOCKRES_GH_LANE_SOLVE, extern)
BLOCKRES_GH_LANE_SOLVES_16_29(BLOCKRES_GH_LANE_SOLVE, extern)
// The factorisation of a uniform layout of N rows without a selection, a lane per block (gh_lane_factor_kernel);
// false, launching nothing, when its stage does not fit (the caller then runs the group factor). Sizes 4..14, in
// batched_gh_cuda_lane_factor.cu.
template <int N>
bool launch_lane_factor(stream_t s, const BatchLayout& L, double* a, index_t* perm, int* info, GhStorage storage);
#define BLOCKRES_GH_LANE_FACTOR(N, PREFIX) \
  PREFIX template bool launch_lane_factor<N>(stream_t, const BatchLayout&, double*, index_t*, int*, GhStorage);
#define BLOCKRES_GH_LANE_FACTORS(X, PREFIX)                                                                      \
  X(4, PREFIX) X(5, PREFIX) X(6, PREFIX) X(7, PREFIX) X(8, PREFIX) X(9, PREFIX) X(10, PREFIX) X(11, PREFIX)      \
  X(12, PREFIX) X(13, PREFIX) X(14, PREFIX)
BLOCKRES_GH_LANE_FACTORS(BLOCKRES_GH_LANE_FACTOR, extern)

#define BLOCKRES_GH_LAUNCHERS(W, PREFIX)                                                                        \
  PREFIX template void launch_factor<W>(stream_t, const BatchLayout&, double*, index_t*, int*, GhStorage);     \
  PREFIX template void launch_solve<W>(stream_t, const BatchLayout&, const double*, const index_t*, GhStorage, \
                                       const double*, double*);                                                 \
  PREFIX template void launch_invert<W>(stream_t, const BatchLayout&, double*, int*);                          \
  PREFIX template void launch_gemv<W, double>(stream_t, const BatchLayout&, const double*, const double*, double*); \
  PREFIX template void launch_gemv<W, float>(stream_t, const BatchLayout&, const float*, const double*, double*);

// Every width is instantiated in exactly one batched_gh_cuda_*.cu file.
BLOCKRES_GH_LAUNCHERS(1, extern)
BLOCKRES_GH_LAUNCHERS(2, extern)
BLOCKRES_GH_LAUNCHERS(4, extern)
BLOCKRES_GH_LAUNCHERS(8, extern)
BLOCKRES_GH_LAUNCHERS(16, extern)
BLOCKRES_GH_LAUNCHERS(32, extern)

namespace detail {

constexpr unsigned full_mask = 0xffffffffu;

// Value of `v` in lane `src` of this lane's group.
template <int W>
__device__ __forceinline__ double group_bcast(double v, int src)
{
  if constexpr (W == 1) return v;
  else return __shfl_sync(full_mask, v, src, W);
}

template <int W>
__device__ __forceinline__ double group_sum(double v)
{
#pragma unroll
  for (int o = W / 2; o > 0; o /= 2) v += __shfl_xor_sync(full_mask, v, o, W);
  return v;
}

template <int W>
__device__ __forceinline__ double group_max(double v)
{
#pragma unroll
  for (int o = W / 2; o > 0; o /= 2) v = fmax(v, __shfl_xor_sync(full_mask, v, o, W));
  return v;
}

// Group-local index of the lane with the largest key (ties: lowest index). Keys are never NaN.
template <int W>
__device__ __forceinline__ int group_argmax(double key, int lane)
{
  const double m = group_max<W>(key);
  unsigned ballot = __ballot_sync(full_mask, key == m);
  if constexpr (W < 32) ballot = (ballot >> (lane & ~(W - 1))) & ((1u << W) - 1u);
  return __ffs(static_cast<int>(ballot)) - 1;
}

// Exact arg-max of a non-negative double key over a whole warp with two integer reductions
// instead of log2(32) dependent shuffle rounds: the bit patterns of non-negative doubles order
// like their values, so the largest key has the largest (high word, low word) pair. `key < 0`
// (a non-candidate) maps to 0, below every candidate. Ties: lowest lane, as group_argmax.
__device__ __forceinline__ int warp_argmax_bits(double key)
{
  const unsigned long long bits =
      key < 0.0 ? 0ull : static_cast<unsigned long long>(__double_as_longlong(key)) + 1ull;
  const unsigned hi = static_cast<unsigned>(bits >> 32), lo = static_cast<unsigned>(bits);
  const unsigned mhi = __reduce_max_sync(full_mask, hi);
  const unsigned mlo = __reduce_max_sync(full_mask, hi == mhi ? lo : 0u);
  return __ffs(static_cast<int>(__ballot_sync(full_mask, hi == mhi && lo == mlo))) - 1;
}

template <int W>
__device__ __forceinline__ int pivot_argmax(double key, int lane)
{
  if constexpr (W == 32) return warp_argmax_bits(key);
  else return group_argmax<W>(key, lane);
}

// The W = 32 factor and invert exchange the pivot row and column through shared memory (one
// store, then every lane reads the values as broadcast double2 loads) instead of one shuffle pair
// per value, and find the pivot with pivot_argmax's integer reductions. At n = 32 the shuffle
// version issues ~8000 instructions per block and waits mostly on shuffle results (ncu on the
// H200: short-scoreboard stalls first). Measured on the H200 for n = 17..32 (with the inversion's
// cap below): BGH factor 1% slower at 17, 3-11% faster at 20..32; BGHT factor 3-16% and inversion
// 15-19% faster. At W = 16 the exchange was 3-4% slower for n = 9..12 (1-5% faster at 16), so the
// smaller widths keep the shuffles.
template <int W>
constexpr bool exchange_in_shared = W == 32;

// Shared-memory exchange buffers of the lane groups of one thread block: row[g] gets the row-k
// entries of the columns chosen so far, in step order; col[g] the pivot column.
template <int W>
struct Exchange {
  static constexpr int groups = threads_per_block / W;
  alignas(16) double row[groups][W];
  alignas(16) double col[groups][W];
};

// sum_{j<k} m[j] * v[j], m in shared memory, 16-byte aligned (k static after unrolling): double2
// broadcast loads, two accumulators to halve the dependent FMA chain.
template <int W>
__device__ __forceinline__ double shared_dot(const double* m, const double (&v)[W], int k)
{
  double s0 = 0.0, s1 = 0.0;
#pragma unroll
  for (int j = 0; j < W; j += 2) {
    if (j + 1 < k) {
      const double2 mm = *reinterpret_cast<const double2*>(m + j);
      s0 = fma(mm.x, v[j], s0);
      s1 = fma(mm.y, v[j + 1], s1);
    } else if (j < k) {
      s0 = fma(m[j], v[j], s0);
    }
  }
  return s0 + s1;
}

// m[i] = v[i] for i < k (static k): double2 stores.
template <int W>
__device__ __forceinline__ void shared_store(double* m, const double (&v)[W], int k)
{
#pragma unroll
  for (int i = 0; i < W; i += 2) {
    if (i + 1 < k) *reinterpret_cast<double2*>(m + i) = make_double2(v[i], v[i + 1]);
    else if (i < k) m[i] = v[i];
  }
}

// The solve's step loop is fully unrolled up to this width and a run-time loop above it (see the
// solve kernel).
constexpr int max_unrolled_solve_width = 8;

// Thread blocks per SM the factor and invert kernels ask the compiler to fit (__launch_bounds__
// minimum, i.e. a register cap of 65536 / (128 * value)). These kernels are latency bound (on the
// H200 at n = 32: 16 warps per SM, 0.6 eligible warps per scheduler, IPC 1.7), so occupancy is
// what pays: W = 32 factor 5 (96 registers, no spill with the shared-memory exchange; 128
// unconstrained), W = 16 factor and invert 8 (64 registers; 70 / 58 unconstrained); 3-20% faster
// for n = 9..32 on the H200. W = 32 inversion 4 (128 registers, ~500 bytes spilled; 164
// unconstrained): 1-4% faster than 3 for n = 17..32. The small widths get caps above their
// unconstrained use.
template <int W, bool Invert>
constexpr int min_blocks_per_sm()
{
  if constexpr (W == 32) return Invert ? 4 : 5;
  else if constexpr (W == 16) return 8;
  else return 10;
}

__device__ __forceinline__ double pivot_key(double v) { return isnan(v) ? HUGE_VAL : fabs(v); }

__device__ __forceinline__ bool bad_pivot(double p, double tol) { return !(fabs(p) > tol) || !isfinite(p); }

// Pivot columns of the steps so far, replicated in every lane of a group, four 8-bit entries per
// register (all indices static after unrolling; halves the registers a plain int array takes).
template <int W>
struct PivotList {
  unsigned word[(W + 3) / 4] = {};
  __device__ __forceinline__ void set(int k, int p) { word[k / 4] |= static_cast<unsigned>(p) << (8 * (k % 4)); }
  __device__ __forceinline__ int operator[](int k) const { return static_cast<int>((word[k / 4] >> (8 * (k % 4))) & 0xffu); }
};

// The block this lane's group works on (slot k of the launch: block k, or select[k] in a size class), its size (0 for groups past the end and for blocks
// larger than W or than the layout's max_size, which `oversize` flags) and where its matrix and
// vector entries start.
template <int W>
struct GroupBlock {
  size64_t b;
  bool live;
  bool oversize;
  int n;
  int n_true;
  size64_t mat;
  size64_t row;

  __device__ __forceinline__ explicit GroupBlock(const BatchLayout& L)
  {
    const size64_t k = (size64_t(blockIdx.x) * threads_per_block + threadIdx.x) / W;  // the launch's slot
    live = k < L.count;
    b = live ? size64_t(L.block(k)) : k;
    n_true = live ? L.size(index_t(b)) : 0;
    oversize = n_true > W || n_true > L.max_size || n_true < 0;
    n = oversize ? 0 : n_true;
    mat = n > 0 ? L.mat(index_t(b)) : 0;
    row = live && n_true > 0 ? L.row(index_t(b)) : 0;
  }
};

// Column c of an n x n row-major block into v[0..W), identity padding beyond n; returns the
// group's max |A| (over the real entries).
template <int W>
__device__ __forceinline__ double load_columns(const double* blk, int n, int c, double (&v)[W])
{
  double amax = 0.0;
#pragma unroll
  for (int i = 0; i < W; ++i) {
    v[i] = (i == c) ? 1.0 : 0.0;
    if (i < n && c < n) {
      v[i] = blk[i * n + c];
      amax = fmax(amax, fabs(v[i]));
    }
  }
  return group_max<W>(amax);
}

// The start of the in-place factor and inversion kernels: column c of the group's block in v
// (identity padding), the block's size and address, the pivot threshold n eps max|A| and the
// number of steps of the warp (its largest n).
struct LoadedBlock {
  int n;
  double* blk;
  double tol;
  int steps;
};

template <int W>
__device__ __forceinline__ LoadedBlock load_group_block(const GroupBlock<W>& g, double* a, int c, double (&v)[W])
{
  const int n = g.n;
  double* blk = a + g.mat;
  const double tol = n * DBL_EPSILON * load_columns<W>(blk, n, c, v);
  const int steps = static_cast<int>(__reduce_max_sync(full_mask, static_cast<unsigned>(n)));
  return {n, blk, tol, steps};
}

// ---- Gauss–Huard decomposition: in place, implicit column pivoting ---------------------------
template <int W, bool Transposed>
__global__ void __launch_bounds__(threads_per_block, min_blocks_per_sm<W, false>())
    gh_factor_kernel(BatchLayout L, double* __restrict__ a, index_t* __restrict__ perm, int* __restrict__ info)
{
  const int lane = threadIdx.x & 31;
  const int c = lane & (W - 1);
  const GroupBlock<W> g(L);
  double v[W];
  const auto [n, blk, tol, steps] = load_group_block<W>(g, a, c, v);

  PivotList<W> piv;  // piv[k]: column chosen at step k (shuffle exchange only)
  int my_step = -1;  // step at which this lane's column was chosen
  int fail = 0;
  constexpr bool shared_x = exchange_in_shared<W>;
  __shared__ Exchange<W> xs;
  double* xrow = xs.row[threadIdx.x / W];
  double* xcol = xs.col[threadIdx.x / W];
#pragma unroll
  for (int k = 0; k < W; ++k) {
    if (k >= steps) break;
    // Row elimination: row k against the (already transformed) rows above; the multipliers
    // A(k, p_j) sit, untouched, in the lanes chosen earlier.
    double r;
    if constexpr (shared_x) {
      if (my_step >= 0) xrow[my_step] = v[k];
      __syncwarp();
      r = v[k] - shared_dot<W>(xrow, v, k);
    } else {
      r = v[k];
#pragma unroll
      for (int j = 0; j < k; ++j) r = fma(-group_bcast<W>(v[k], piv[j]), v[j], r);
    }
    if (my_step < 0) v[k] = r;
    const bool candidate = my_step < 0 && (c < n || k >= n);
    const int p = pivot_argmax<W>(candidate ? pivot_key(v[k]) : -1.0, lane);
    if constexpr (!shared_x) piv.set(k, p);
    if (c == p) my_step = k;
    const double pv = group_bcast<W>(v[k], p);
    if (k < n && fail == 0 && bad_pivot(pv, tol)) fail = k + 1;

    // Diagonalisation of row k, then column elimination of the rows above.
    const bool open = my_step < 0;
    if (open) v[k] *= 1.0 / pv;
    if constexpr (shared_x) {
      if (c == p) shared_store<W>(xcol, v, k);
      __syncwarp();
#pragma unroll
      for (int i = 0; i < k; i += 2) {
        if (i + 1 < k) {
          const double2 f = *reinterpret_cast<const double2*>(xcol + i);
          if (open) {
            v[i] = fma(-f.x, v[k], v[i]);
            v[i + 1] = fma(-f.y, v[k], v[i + 1]);
          }
        } else if (open) {
          v[i] = fma(-xcol[i], v[k], v[i]);
        }
      }
    } else {
#pragma unroll
      for (int i = 0; i < k; ++i) {
        const double f = group_bcast<W>(v[i], p);
        if (open) v[i] = fma(-f, v[k], v[i]);
      }
    }
  }

  // Lane c's column is column my_step of D (pivoted order).
  if (c < n) {
    const int s = my_step;
#pragma unroll
    for (int i = 0; i < W; ++i) {
      if (i < n) {
        if (Transposed && i < s)
          blk[(n - 1 - s) * n + (n - 1 - i)] = v[i];
        else
          blk[i * n + s] = v[i];
      }
    }
    perm[g.row + s] = c;
  }
  if (g.live && c == 0) info[g.b] = g.oversize ? -1 : fail;
}

// ---- Gauss–Huard application: x = A^{-1} b, both triangular stages in one pass ---------------
// The W >= 16 solves first copy their block into the group's shared memory, row by row (8-byte cp.async,
// every copy instruction of a group one coalesced run of a row, all in flight at once), and the steps read
// L(k, j) and U(j, k) there: reading them from global memory step by step, U's column reads (standard
// storage) are uncoalesced and a block's lines are read over the whole step chain. Measured on one H100 in
// one call (bench batched, % of copy, standard / transposed storage), global loads -> staged with a fixed
// 32 x 33 stage per group at W = 32: n 16 44.0 / 64.4% -> 98.4 / 98.0%, n 12 84.6 / 82.0% -> 87.3 /
// 86.2%, n 9 unchanged (71%); n 32 65.1 / 77.8% -> 79.0 / 83.7%, but n 17 61.1 -> 49.0%, n 20 68.1 ->
// 58.0%, n 24 72.2 -> 68.2% (34 KB per thread block: 24 warps per SM). The stage is therefore sized by
// the layout's max_size (max_size x (max_size | 1) doubles per group, dynamic shared memory). Same H100,
// global loads -> this stage: n 17 62.5 -> 67.7%, 20 69.8 -> 76.3%, 24 73.8 -> 84.8%, 28 63.7 -> 83.8%,
// 32 66.2 -> 83.0% (transposed storage 63.8..79.4 -> 67.8..82.5%, 77.5 at 32 against 79.4), n 16 97.9%,
// 12 92.3%, 9 74.8% (transposed 69.5 against 74.3). A variable layout whose max_size is 32 still gets a
// 32 x 33 stage per group whatever its blocks: the mixed 9..32 batch fell from 62.4 to 56.5% of copy. So
// W = 32 stages uniform layouts only; W = 16 (a stage of at most 17 KB per thread block) stages every one.
// One H200, one call, global -> staged (standard / transposed): n 16 60.9 / 73.0 -> 84.6 / 82.3%, 17..28
// 44.9..59.3 / 45.9..60.8 -> 48.3..64.9 / 48.8..64.5%, 32 54.2 / 70.0 -> 63.8 / 62.9%, 9 and 12 within
// 3%, mixed 9..32 unchanged (49.6 -> 49.8%). The transposed storage's global loads are coalesced rows: at
// 32 (a 34 KB stage) they beat the stage on both cards (H200 70.0 against 62.9%, H100 79.4 against 77.5%),
// so transposed blocks above 28 (the largest size measured a win) keep them.
template <int W>
__host__ __device__ constexpr bool staged_solve(const BatchLayout& L, bool transposed)
{
  return W == 16 || (W == 32 && L.uniform > 0 && !(transposed && L.max_size > 28));
}
__host__ __device__ constexpr int solve_stage_stride(int nmax) { return nmax | 1; }  // odd: columns conflict-free
inline std::size_t solve_stage_bytes(int W, int nmax)
{
  return std::size_t(threads_per_block / W) * nmax * solve_stage_stride(nmax) * sizeof(double);
}

template <int W, bool Transposed>
__global__ void __launch_bounds__(threads_per_block)
    gh_solve_kernel(BatchLayout L, const double* __restrict__ f, const index_t* __restrict__ perm,
                    const double* __restrict__ bvec, double* __restrict__ x)
{
  const int lane = threadIdx.x & 31;
  const int j = lane & (W - 1);
  const GroupBlock<W> g(L);
  const int n = g.n;
  const double* blk = f + g.mat;

  double y = 0.0, rdiag = 1.0;
  const int steps = static_cast<int>(__reduce_max_sync(full_mask, static_cast<unsigned>(n)));
  if constexpr (W <= max_unrolled_solve_width) {
    if (j < n) {
      y = bvec[g.row + j];
      rdiag = 1.0 / blk[j * n + j];
    }
    // lo[k] = L(k, j) and up[k] = U(j, k) for j < k < n, else 0: all loads issued before the
    // dependent chain starts.
    double lo[W], up[W];
#pragma unroll
    for (int k = 0; k < W; ++k) {
      const bool in = j < k && k < n;
      lo[k] = in ? blk[k * n + j] : 0.0;
      up[k] = in ? (Transposed ? blk[(n - 1 - k) * n + (n - 1 - j)] : blk[j * n + k]) : 0.0;
    }
#pragma unroll
    for (int k = 0; k < W; ++k) {
      if (k >= steps) break;
      const double s = group_sum<W>(lo[k] * y);
      if (j == k) y = (y - s) * rdiag;
      const double yk = group_bcast<W>(y, k);
      if (j < k) y = fma(-up[k], yk, y);
    }
  } else {
    // Run-time step loop, four steps unrolled (preloading all 2 W entries into registers, as below 16,
    // takes ~150 registers at W = 32 and leaves too few warps per SM to hide the dependent step chain);
    // the entries from the staged copy (staged_solve: the same for the whole launch) or global memory.
    const double* M = blk;
    int S = n;
    if (staged_solve<W>(L, Transposed)) {
      extern __shared__ __align__(16) double gh_solve_stage[];
      const int nmax = min(L.max_size, W);  // every block with n > max_size is oversize (n = 0 here)
      S = solve_stage_stride(nmax);
      double* const m = gh_solve_stage + size64_t(threadIdx.x / W) * nmax * S;
      if (j < n)
        for (int i = 0; i < n; ++i) __pipeline_memcpy_async(m + i * S + j, blk + size64_t(i) * n + j, 8);
      __pipeline_commit();
      __pipeline_wait_prior(0);
      __syncwarp();
      M = m;
    }
    if (j < n) {
      y = bvec[g.row + j];
      rdiag = 1.0 / M[j * S + j];
    }
#pragma unroll 4
    for (int k = 0; k < steps; ++k) {
      const bool in = j < k && k < n;
      const double lo = in ? M[k * S + j] : 0.0;
      const double up = in ? (Transposed ? M[(n - 1 - k) * S + (n - 1 - j)] : M[j * S + k]) : 0.0;
      const double s = group_sum<W>(lo * y);
      if (j == k) y = (y - s) * rdiag;
      const double yk = group_bcast<W>(y, k);
      if (j < k) y = fma(-up, yk, y);
    }
  }
  if (j < n) {
    const unsigned p = static_cast<unsigned>(perm[g.row + j]);
    if (p < static_cast<unsigned>(n)) x[g.row + p] = y;  // a corrupt perm must not write outside the block
  }
  if (g.live && g.oversize)
    for (int i = j; i < g.n_true; i += W) x[g.row + i] = CUDART_NAN;
}

// ---- Gauss–Huard application, a lane per block (uniform layouts of 4..29 rows) ---------------
// The group solve above runs a group sum and a broadcast per step for one block (at n = 9, two blocks per warp
// through 9 steps of 5 shuffle rounds each, and 7 of 16 lanes idle; H200: 54.2% of copy at 9, 54.1% at 5).
// Here a warp takes B = cuda_lane::blocks_per_warp(N) consecutive blocks of a uniform layout (32 up to 15 rows,
// 16 to 21, 8 above), lane l block b0 + l, as lu_solve's lane solve: the factors (B N^2 contiguous doubles),
// right-hand sides and permutations are copied into shared memory
// (coalesced 8-byte cp.async; a block's factors at odd stride S, its vectors at odd stride SN, so lane l
// reading entry e of its own block is conflict-free), every lane runs the CPU reference's steps on its block
// with y in registers (the same operations in the same order, fma for each multiply-subtract), scatters y
// through the permutation into its row of the stage, and the solution goes out coalesced. An entry whose perm
// is outside the block is skipped, as in the group solve: x keeps what it held there.
template <int N, bool Transposed>
__global__ void __launch_bounds__(32)
    gh_lane_solve_kernel(BatchLayout L, const double* __restrict__ f, const index_t* __restrict__ perm,
                         const double* __restrict__ bvec, double* __restrict__ x)
{
  using St = cuda_lane::LaneStage<N>;
  constexpr int S = St::S, SN = St::SN;
  extern __shared__ __align__(16) unsigned char gh_lane_stage[];
  const St st(gh_lane_stage);
  double* const Y = st.Y;
  unsigned* const W = static_cast<unsigned*>(st.after());  // bit i: x(i) of the lane's block written
  const int lane = threadIdx.x;
  for (size64_t b0 = St::first(); b0 < size64_t(L.count); b0 += St::step()) {
    const int cnt = st.next(lane, b0, L.count, f, bvec, perm);
    const size64_t r0 = b0 * N;
    if (lane < cnt) {
      const double* const a = st.M + lane * S;
      const auto U = [a](int i, int k) { return Transposed ? a[(N - 1 - k) * N + (N - 1 - i)] : a[i * N + k]; };
      double y[N];
#pragma unroll
      for (int i = 0; i < N; ++i) y[i] = Y[lane * SN + i];
#pragma unroll
      for (int k = 0; k < N; ++k) {
        double s = y[k];
#pragma unroll
        for (int j = 0; j < k; ++j) s = fma(-a[k * N + j], y[j], s);
        y[k] = s * (1.0 / a[k * N + k]);
#pragma unroll
        for (int i = 0; i < k; ++i) y[i] = fma(-U(i, k), y[k], y[i]);
      }
      unsigned written = 0;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const unsigned p = static_cast<unsigned>(st.P[lane * SN + k]);
        if (p < unsigned(N)) {
          Y[lane * SN + p] = y[k];
          written |= 1u << p;
        }
      }
      W[lane] = written;
    }
    __syncwarp();
    for (int e = lane; e < cnt * N; e += 32) {
      const int k = e / N, i = e - k * N;
      if ((W[k] >> i) & 1u) x[r0 + e] = Y[k * SN + i];
    }
  }
}

// f(std::integral_constant<int, k>{}) for the run-time k in [K, N) (a chain of uniform compares).
template <int K, int N, class F>
__device__ __forceinline__ void static_step(int k, F&& f)
{
  if constexpr (K < N) {
    if (k == K)
      f(std::integral_constant<int, K>{});
    else
      static_step<K + 1, N>(k, f);
  }
}

// ---- Gauss–Huard factorisation, a lane per block (uniform layouts of 4..14 rows) ----------------
// The group factor above runs a butterfly argmax and broadcasts per step for one block (latency-bound: H200 29-43%
// of copy at 9..16; the dispatch in batched_gh_cuda.cu has the measured sizes). Here a warp takes B =
// cuda_lane::blocks_per_warp(N) consecutive blocks, lane l block b0 + l, staged in shared memory as the lane solves
// do, and every lane runs the CPU reference's elimination on its block (implicit pivoting) with the columns put in
// pivoted order as it goes: position c of the rows done holds column q[c] (q a byte a column after the matrices,
// LaneStage::Q; q[0..k) the pivots so far), so the open columns of step k are the positions k..N-1 in every lane and
// the step's loops run over them alone (static k: a step per value, static_step). At step k row k is gathered through q (its entries are
// untouched until then), loses the rows above (multipliers A(k, p_j) = its entries at positions j < k), the open
// position of largest key becomes the pivot (ties: the lowest original column, NaN above all), is swapped with
// position k in row k's registers, in q and in the rows above, the open entries are scaled by its reciprocal and
// the rows above lose row k's multiple in the open positions. The rows end in pivoted order; for the transposed
// storage the strict upper triangle is then reflected ((i, k) <-> (N-1-k, N-1-i)), and the blocks, their
// permutations and info go out coalesced. Same floating-point operations, in the same order, as the group factor
// (fma for each multiply-subtract, in step order). A first form kept the columns in place under a mask of the
// chosen ones, every loop over all N columns: H200, session 47, % of copy, masked -> pivoted order: 4 81.1 -> 90.6,
// 9 58.4 -> 71.7, 12 41.5 -> 57.3, 14 34.5 -> 48.6. Its code grows as N^3/6 steps' bodies: at 15 and 16 rows it
// fell to 15-18% (the instruction cache, we believe: no spills); runtime loops over the rows above (code as N^2)
// gave 37-38% there, below the group factor's 40-43%, which keeps 15 and 16.
template <int N, bool Transposed>
__global__ void __launch_bounds__(32)
    gh_lane_factor_kernel(BatchLayout L, double* __restrict__ a, index_t* __restrict__ perm, int* __restrict__ info)
{
  using St = cuda_lane::LaneStage<N>;
  constexpr int S = St::S, SN = St::SN, B = St::B;
  extern __shared__ __align__(16) unsigned char gh_lane_stage[];
  const St st(gh_lane_stage);
  const int lane = threadIdx.x;
  for (size64_t b0 = St::first(); b0 < size64_t(L.count); b0 += St::step()) {
    const int cnt = int(min(size64_t(B), size64_t(L.count) - b0));
    __syncwarp();  // the previous group's stage is no longer read
    st.load_matrices(lane, b0, cnt, a);
    if (lane < cnt) {
      double* const w = st.M + lane * S;
      unsigned char* const q = st.Q() + lane * SN;
      double amax = 0.0;
#pragma unroll
      for (int e = 0; e < N * N; ++e) amax = fmax(amax, fabs(w[e]));
      const double tol = N * DBL_EPSILON * amax;
#pragma unroll
      for (int c = 0; c < N; ++c) q[c] = static_cast<unsigned char>(c);
      int fail = 0;
#pragma unroll 1
      for (int k = 0; k < N; ++k)
        static_step<0, N>(k, [&](auto kc) {
          constexpr int K = decltype(kc)::value;
          double r[N];
#pragma unroll
          for (int c = 0; c < N; ++c) r[c] = w[K * N + q[c]];  // row K, untouched, in position order
#pragma unroll
          for (int j = 0; j < K; ++j) {  // row elimination with the rows above, j in order; A(K, p_j) = r[j]
#pragma unroll
            for (int c = K; c < N; ++c) r[c] = fma(-r[j], w[j * N + c], r[c]);
          }
          int p = K, pq = q[K];
          double best = pivot_key(r[K]), pval = r[K];
#pragma unroll
          for (int c = K + 1; c < N; ++c) {
            const double key = pivot_key(r[c]);
            const int qc = q[c];
            if (key > best || (key == best && qc < pq)) {
              best = key;
              p = c;
              pq = qc;
              pval = r[c];
            }
          }
          if (fail == 0 && bad_pivot(pval, tol)) fail = K + 1;
          const double d = 1.0 / pval;
          const double rk = r[K];
#pragma unroll
          for (int c = K + 1; c < N; ++c) {  // position p <-> K in row K, then the open entries scaled
            if (c == p) r[c] = rk;
            r[c] *= d;
          }
          r[K] = pval;
          if (p != K) {
            q[p] = q[K];
            q[K] = static_cast<unsigned char>(pq);
          }
#pragma unroll
          for (int c = 0; c < N; ++c) w[K * N + c] = r[c];
#pragma unroll
          for (int i = 0; i < K; ++i) {  // the rows above: positions p <-> K, then column elimination
            const double f = w[i * N + p];
            if (p != K) w[i * N + p] = w[i * N + K];
            w[i * N + K] = f;
#pragma unroll
            for (int c = K + 1; c < N; ++c) w[i * N + c] = fma(-f, r[c], w[i * N + c]);
          }
        });
      if constexpr (Transposed) {
#pragma unroll
        for (int i = 0; i < N; ++i)
#pragma unroll
          for (int k = i + 1; k < N; ++k) {
            const int i2 = N - 1 - k, k2 = N - 1 - i;  // (i, k) -> (i2, k2), an involution of the strict upper part
            if (i < i2 || (i == i2 && k < k2)) {
              const double t = w[i * N + k];
              w[i * N + k] = w[i2 * N + k2];
              w[i2 * N + k2] = t;
            }
          }
      }
      info[b0 + lane] = fail;
    }
    __syncwarp();
    st.store_matrices(lane, b0, cnt, a);
    const size64_t r0 = b0 * N;
    for (int e = lane; e < cnt * N; e += 32) {
      const int k = e / N;
      perm[r0 + e] = st.Q()[k * SN + (e - k * N)];
    }
  }
}

// ---- Gauss–Jordan inversion: in place, implicit column pivoting ------------------------------
template <int W>
__global__ void __launch_bounds__(threads_per_block, min_blocks_per_sm<W, true>())
    gj_invert_kernel(BatchLayout L, double* __restrict__ a, int* __restrict__ info)
{
  const int lane = threadIdx.x & 31;
  const int c = lane & (W - 1);
  const GroupBlock<W> g(L);
  double v[W];
  const auto [n, blk, tol, steps] = load_group_block<W>(g, a, c, v);

  PivotList<W> piv;
  int my_step = -1;
  int fail = 0;
  __shared__ Exchange<W> xs;
  double* xcol = xs.col[threadIdx.x / W];
#pragma unroll
  for (int k = 0; k < W; ++k) {
    if (k >= steps) break;
    const bool candidate = my_step < 0 && (c < n || k >= n);
    const int p = pivot_argmax<W>(candidate ? pivot_key(v[k]) : -1.0, lane);
    piv.set(k, p);
    if (c == p) my_step = k;
    const double pv = group_bcast<W>(v[k], p);
    if (k < n && fail == 0 && bad_pivot(pv, tol)) fail = k + 1;
    const double d = 1.0 / pv;
    if (c == p) {
#pragma unroll
      for (int i = 0; i < W; ++i) v[i] = (i == k) ? d : v[i] * d;
    }
    // Every other column (chosen before or not) loses its row-k entry.
    const double fk = v[k];
    if constexpr (exchange_in_shared<W>) {
      if (c == p) shared_store<W>(xcol, v, W);
      __syncwarp();
#pragma unroll
      for (int i = 0; i < W; i += 2) {
        const double2 vp = *reinterpret_cast<const double2*>(xcol + i);
        if (c != p) {
          v[i] = fma(-fk, vp.x, i == k ? 0.0 : v[i]);
          v[i + 1] = fma(-fk, vp.y, i + 1 == k ? 0.0 : v[i + 1]);
        }
      }
      __syncwarp();  // the next step's pivot lane overwrites xcol
    } else {
#pragma unroll
      for (int i = 0; i < W; ++i) {
        const double vp = group_bcast<W>(v[i], p);
        if (c != p) v[i] = fma(-fk, vp, i == k ? 0.0 : v[i]);
      }
    }
  }

  // A^{-1}(p_k, s) = v[k] of the lane chosen at step s: row p_k, column s (coalesced per k).
  if (c < n) {
    const int s = my_step;
#pragma unroll
    for (int k = 0; k < W; ++k)
      if (k < n) blk[piv[k] * n + s] = v[k];
  }
  if (g.live && c == 0) info[g.b] = g.oversize ? -1 : fail;
}

// ---- Block-diagonal GEMV: y = blockdiag(inv) x ------------------------------------------------
template <int W, class T>
__global__ void __launch_bounds__(threads_per_block)
    gemv_kernel(BatchLayout L, const T* __restrict__ inv, const double* __restrict__ x, double* __restrict__ y)
{
  const int lane = threadIdx.x & 31;
  const int j = lane & (W - 1);
  const GroupBlock<W> g(L);
  const int n = g.n;
  const T* blk = inv + g.mat;

  const double xj = j < n ? x[g.row + j] : 0.0;
  double v[W];  // v[i] = inv(i, j) x(j): lane j's share of every row sum (fp32 inverses read as fp64)
#pragma unroll
  for (int i = 0; i < W; ++i) v[i] = (i < n && j < n) ? double(blk[i * n + j]) * xj : 0.0;
  // Transposing butterfly: at offset o a lane keeps half of its rows and receives its partner's
  // half of the same rows; after log2(W) stages v[0] is the full sum of row j.
#pragma unroll
  for (int o = W / 2; o > 0; o /= 2) {
    const bool upper = (j & o) != 0;
#pragma unroll
    for (int r = 0; r < W / 2; ++r) {  // constant trip count: fully unrolled, v stays in registers
      if (r < o) {
        const double send = upper ? v[r] : v[r + o];
        const double keep = upper ? v[r + o] : v[r];
        v[r] = keep + __shfl_xor_sync(full_mask, send, o, W);
      }
    }
  }
  if (j < n) y[g.row + j] = v[0];
  if (g.live && g.oversize)
    for (int i = j; i < g.n_true; i += W) y[g.row + i] = CUDART_NAN;
}

// ---- Block-diagonal GEMV from a staged copy, a row per lane (W = 16, 32) ----------------------
// The column kernel above holds W products per lane (78 registers at W = 32: 37.5% occupancy) and moves n^2
// doubles per group of W lanes, so at n = 17 a warp has 2.3 KB in flight and 15 idle lanes (H200: 46.9% of
// copy at 17, 63.0% at 9). Here each unit of rows is copied, contiguous and coalesced (8-byte cp.async for
// fp64, 4-byte for fp32, every copy instruction one run of the unit), into the warp's shared memory with
// odd row stride S (a column read by the lanes is conflict-free), then lane i forms its row's sum
// sum_j inv(i, j) x(j) in column order, one fma chain (the CPU reference's order). Uniform layouts (variable
// ones: gemv_rows_kernel below): the batch is one tall (count n) x n row-major matrix, row r of block
// r / n at r n; a warp takes 32 consecutive rows (32 n contiguous entries, blocks straddling warps are fine:
// row r's x entries start at r - r % n), so every lane has a row whatever n. (A group-per-block form for
// variable layouts, a W-lane group and a max_size slot per block, reached 60.5% of copy on the mixed 9..32
// batch against gemv_rows_kernel's 76.2%: removed.) Entry e of a unit sits at row e / n, column e % n; the quotient comes from a float reciprocal (e < 32 n
// <= 1024, so (e + 0.5) / n is at least 1 / 64 from an integer and the float error is below 1e-5).
struct GemvStage {
  static constexpr int warps = threads_per_block / 32;
  __host__ __device__ static constexpr int stride(int nmax) { return nmax | 1; }
  template <class T>
  static std::size_t bytes(int nmax)
  {
    return std::size_t(warps) * 32 * stride(nmax) * sizeof(T);
  }
};

template <int W, class T>
__global__ void __launch_bounds__(threads_per_block)
    gemv_staged_kernel(BatchLayout L, const T* __restrict__ inv, const double* __restrict__ x, double* __restrict__ y)
{
  static_assert(W == 16 || W == 32, "gemv_staged_kernel: W = 16 or 32");
  extern __shared__ __align__(16) unsigned char gh_gemv_stage[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int n = L.uniform;
  const int S = GemvStage::stride(n);
  T* const m = reinterpret_cast<T*>(gh_gemv_stage) + size64_t(warp) * 32 * S;
  const size64_t total = size64_t(L.count) * n;
  const size64_t r0 = (size64_t(blockIdx.x) * GemvStage::warps + warp) * 32;
  if (r0 >= total) return;  // whole warps only: the copy below is warp-synchronous
  const int rows = int(min(size64_t(32), total - r0));
  const T* const src = inv + r0 * n;
  const size64_t yrow = r0 + lane;                    // this lane's row of y
  const size64_t xrow = yrow - yrow % size64_t(n);  // the first entry of its block's x
  const int count = rows * n;
  const float rn = 1.0f / float(max(n, 1));
  for (int e = lane; e < count; e += 32) {
    const int i = int((float(e) + 0.5f) * rn), j = e - i * n;
    __pipeline_memcpy_async(m + i * S + j, src + e, sizeof(T));
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncwarp();
  if (lane < rows) {
    const T* const row = m + lane * S;
    double s = 0.0;
    for (int j = 0; j < n; ++j) s = fma(double(row[j]), x[xrow + j], s);
    y[yrow] = s;
  }
}

// ---- Block-diagonal GEMV of a variable layout, a row per lane over the rows in order ----------
// The group form of gemv_staged_kernel gives each block a W-lane group and a 32-row slot sized for the largest
// block: a 21-row block fills 42% of it, and the warps in flight carry that much less (H200: mixed 9..32 at 60.5%
// of copy against 95.0% for the uniform 21). Here, as for uniform layouts, a warp takes 32 consecutive rows of
// the whole batch (units of 32 rows, gemv_rows_units of them in a row per warp), whatever blocks they belong
// to: the warp finds the block holding its first row once (a 32-ary search of row_off, then a window of 32
// offsets per unit), copies each block's part of the unit (its rows are contiguous: one coalesced run per
// block, 8-byte cp.async, 4-byte for fp32) into the unit's rows of the stage (odd stride), and lane l forms row
// r0 + l's sum in column order, as the staged kernel. Blocks of size 0 hold no row; a block larger than the
// layout's max_size gets NaN, as in the other kernels. Blocks may sit anywhere in memory (mat_off). The warps
// stride over the batch, so any grid covers every row.
constexpr int gemv_rows_units = 8;

template <class T>
__global__ void __launch_bounds__(threads_per_block)
    gemv_rows_kernel(BatchLayout L, const T* __restrict__ inv, const double* __restrict__ x, double* __restrict__ y)
{
  extern __shared__ __align__(16) unsigned char gh_gemv_stage[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nmax = min(L.max_size, 32);
  const int S = GemvStage::stride(nmax);
  T* const m = reinterpret_cast<T*>(gh_gemv_stage) + size64_t(warp) * 32 * S;
  const index_t* const ro = L.row_off;
  const size64_t total = size64_t(ro[L.count]);
  constexpr size64_t span = 32 * gemv_rows_units;  // rows per warp and pass
  const size64_t stride = size64_t(gridDim.x) * GemvStage::warps * span;
  for (size64_t base = size64_t(ro[0]) + (size64_t(blockIdx.x) * GemvStage::warps + warp) * span; base < total;
       base += stride) {
    // b0: the last block with row_off[b0] <= base (the block holding that row, past any empty blocks before it).
    index_t b0 = 0;
    {
      index_t hi = L.count;  // the answer lies in [b0, hi)
      while (hi - b0 > 32) {
        const index_t step = (hi - b0 + 31) / 32;
        const index_t p = b0 + lane * step;
        const unsigned ok = __ballot_sync(full_mask, p < hi && size64_t(ro[p]) <= base);  // lane 0 always
        b0 += (31 - __clz(static_cast<int>(ok))) * step;
        hi = min(hi, b0 + step);
      }
    }
    // The unit's first window of 32 blocks (row_off of each block and the next, mat_off), loaded a unit ahead:
    // the next unit's window loads while this unit's copies are in flight.
    const auto load_window = [&](index_t bw, size64_t& ws, size64_t& we, size64_t& wm) {
      const index_t bl = bw + lane;
      ws = we = total, wm = 0;
      if (bl < L.count) ws = size64_t(ro[bl]), we = size64_t(ro[bl + 1]), wm = L.mat_off[bl];
    };
    const auto advance = [&](size64_t r) {  // b0 to the block holding row r (the hits are a prefix)
      for (;;) {
        const index_t p = b0 + 1 + lane;
        const unsigned ok = __ballot_sync(full_mask, p < L.count && size64_t(ro[p]) <= r);
        b0 += __popc(ok);
        if (ok != full_mask) break;
      }
    };
    advance(base);
    size64_t ws, we, wm;
    load_window(b0, ws, we, wm);
    const size64_t end = min(total, base + span);
    for (size64_t r0 = base; r0 < end; r0 += 32) {
      const int rows = int(min(size64_t(32), total - r0));
      __syncwarp();  // the previous unit's stage is no longer read
      size64_t my_s = 0;
      int my_n = 0;
      for (index_t bw = b0;; bw += 32) {  // windows of 32 blocks until the unit's last row is covered
        size64_t s = ws, e = we, mo = wm;
        if (bw != b0) load_window(bw, s, e, mo);
        for (int l = 0; l < 32; ++l) {
          const size64_t bs = __shfl_sync(full_mask, s, l), be = __shfl_sync(full_mask, e, l);
          if (bs >= r0 + rows) break;  // warp-uniform
          const size64_t first = max(bs, r0), last = min(be, r0 + rows);
          if (first >= last) continue;
          const int n = int(be - bs);
          if (lane >= int(first - r0) && lane < int(last - r0)) my_s = bs, my_n = n;
          if (n > nmax) continue;  // oversize: NaN below
          const T* const src = inv + __shfl_sync(full_mask, mo, l) + (first - bs) * n;
          const int d0 = int(first - r0), cnt = int(last - first) * n;
          const float rn = 1.0f / float(n);
          for (int q = lane; q < cnt; q += 32) {
            const int i = int((float(q) + 0.5f) * rn), j = q - i * n;
            __pipeline_memcpy_async(m + (d0 + i) * S + j, src + q, sizeof(T));
          }
        }
        if (__shfl_sync(full_mask, e, 31) >= r0 + rows || bw + 32 >= L.count) break;
      }
      __pipeline_commit();
      if (r0 + 32 < end) {  // the next unit's block and window, from this window's row_off where it reaches
        const unsigned ok = __ballot_sync(full_mask, b0 + 1 + lane < L.count && we <= r0 + 32);
        b0 += __popc(ok);
        if (ok == full_mask) advance(r0 + 32);
        load_window(b0, ws, we, wm);
      }
      __pipeline_wait_prior(0);
      __syncwarp();
      if (lane < rows) {
        double sum = CUDART_NAN;
        if (my_n <= nmax) {
          const T* const row = m + lane * S;
          sum = 0.0;
          for (int j = 0; j < my_n; ++j) sum = fma(double(row[j]), x[my_s + j], sum);
        }
        y[r0 + lane] = sum;
      }
    }
  }
}

inline unsigned grid_for_groups(index_t count, int W)
{
  const size64_t threads = size64_t(count) * W;
  return static_cast<unsigned>((threads + threads_per_block - 1) / threads_per_block);
}

}  // namespace detail

// ---- Launchers (explicitly instantiated per width) --------------------------------------------
template <int W>
void launch_factor(stream_t s, const BatchLayout& L, double* a, index_t* perm, int* info, GhStorage storage)
{
  const unsigned grid = detail::grid_for_groups(L.count, W);
  if (storage == GhStorage::transposed)
    detail::gh_factor_kernel<W, true><<<grid, threads_per_block, 0, s>>>(L, a, perm, info);
  else
    detail::gh_factor_kernel<W, false><<<grid, threads_per_block, 0, s>>>(L, a, perm, info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int W>
void launch_solve(stream_t s, const BatchLayout& L, const double* f, const index_t* perm, GhStorage storage,
                  const double* b, double* x)
{
  const unsigned grid = detail::grid_for_groups(L.count, W);
  // <= 34 KB (W = 32, max_size 32): within the default 48 KB of dynamic shared memory.
  const std::size_t smem = detail::staged_solve<W>(L, storage == GhStorage::transposed)
                               ? detail::solve_stage_bytes(W, std::clamp(L.max_size, 1, W))
                               : 0;
  if (storage == GhStorage::transposed)
    detail::gh_solve_kernel<W, true><<<grid, threads_per_block, smem, s>>>(L, f, perm, b, x);
  else
    detail::gh_solve_kernel<W, false><<<grid, threads_per_block, smem, s>>>(L, f, perm, b, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_gemv_rows(stream_t s, const BatchLayout& L, size64_t rows_bound, const T* inv, const double* x, double* y)
{
  using detail::GemvStage;
  const size64_t warps = (rows_bound + 32 * detail::gemv_rows_units - 1) / (32 * detail::gemv_rows_units);
  const auto grid = unsigned(std::clamp<size64_t>((warps + GemvStage::warps - 1) / GemvStage::warps, 1, 1 << 20));
  detail::gemv_rows_kernel<T><<<grid, threads_per_block, GemvStage::bytes<T>(std::min(L.max_size, 32)), s>>>(L, inv, x, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int N>
bool launch_lane_solve(stream_t s, const BatchLayout& L, const double* f, const index_t* perm, GhStorage storage,
                       const double* b, double* x)
{
  const auto kernel = storage == GhStorage::transposed ? &detail::gh_lane_solve_kernel<N, true>
                                                       : &detail::gh_lane_solve_kernel<N, false>;
  // + a written-mask word per block
  return cuda_lane::launch<N>(kernel, cuda_lane::LaneStage<N>::B * sizeof(unsigned), s, L, f, perm, b, x);
}

template <int N>
bool launch_lane_factor(stream_t s, const BatchLayout& L, double* a, index_t* perm, int* info, GhStorage storage)
{
  const auto kernel = storage == GhStorage::transposed ? &detail::gh_lane_factor_kernel<N, true>
                                                       : &detail::gh_lane_factor_kernel<N, false>;
  return cuda_lane::launch_bytes<N>(kernel, cuda_lane::LaneStage<N>::factor_bytes, s, L, a, perm, info);
}

template <int W>
void launch_invert(stream_t s, const BatchLayout& L, double* a, int* info)
{
  detail::gj_invert_kernel<W><<<detail::grid_for_groups(L.count, W), threads_per_block, 0, s>>>(L, a, info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

template <int W, class T>
void launch_gemv(stream_t s, const BatchLayout& L, const T* inv, const double* x, double* y)
{
  // Uniform layouts above 8 rows: staged, a row per lane (gemv_staged_kernel; <= 34 KB of shared memory).
  // (Variable layouts above 8 rows go to launch_gemv_rows; a size class's selection, which only the dispatch
  // makes, keeps the column kernel.)
  if constexpr (W >= 16) {
    if (L.uniform > 0 && L.select == nullptr) {
      using detail::GemvStage;
      const size64_t warps = (size64_t(L.count) * L.uniform + 31) / 32;
      const auto grid = unsigned((warps + GemvStage::warps - 1) / GemvStage::warps);
      detail::gemv_staged_kernel<W, T><<<grid, threads_per_block, GemvStage::bytes<T>(L.uniform), s>>>(L, inv, x, y);
      BLOCKRES_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  detail::gemv_kernel<W, T><<<detail::grid_for_groups(L.count, W), threads_per_block, 0, s>>>(L, inv, x, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::kernels::cuda_gh
