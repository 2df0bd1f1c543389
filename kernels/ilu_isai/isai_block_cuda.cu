// CUDA generation of the block-view ISAI (kernels/ilu_isai/isai_block.hpp; Anzt et al., batched ISAI,
// section III): per block column j, T(J, J) X = E_j with bs right-hand sides, X into M's blocks.
//
// Two kernels over disjoint sets of block columns, so no column is rejected:
//  - short columns (m = |J| bs <= 32): a group of W lanes per column, 32 / W columns per warp,
//    up to 4 warps per thread block; one launch per W = 4, 8, 16, 32 over the columns whose m
//    needs it (IsaiBlockPattern::short_bucket_ptr), one template instance per W, so small
//    systems (bs 1, 2 with k = 1) do not leave most of a warp idle, even beside a few longer ones. Lane t of a group owns scalar
//    row t = (block J[t / bs], row t % bs): it gathers that row of T(J, J) into the group's
//    W x (W + 1) part of the warp's shared 32 x 33 tile (merging block row J[t / bs]'s sorted
//    block columns with the sorted J, bs values per matching block, the kind's triangle filter
//    applied) and keeps its row of the right-hand sides in the warp's shared 32 x bs array
//    (column-major: warp lane l at c * 32 + l, conflict-free). Substitution: at step s every lane
//    reads x_s = R(s, :) (broadcast within its group) and the rows still to come subtract
//    T(t, s) x_s; a row is divided by its pivot in place by its own lane right after its last
//    update; one __syncwarp per step, the steps running to the warp's largest m with per-group
//    guards. general: Gaussian elimination with implicit partial pivoting (the pivot lane is the
//    group argmax of |T(t, s)| over the rows not yet pivoted, by integer comparisons of its bit
//    pattern, lowest row on ties: warp reductions for W = 32, a butterfly inside the group
//    otherwise), then back substitution over the steps in reverse.
//    Dynamic shared memory per warp: (32 * 33 + 32 bs) doubles + 64 ints, with as many warps per
//    block (1..4) as fit in 48 KB (bs <= 32 here).
//  - long columns (m > 32): one thread block per column (whole warps, at most 256 threads), a
//    bounded grid (long_grid: at most long_max_blocks blocks and long_scratch_cap doubles of
//    scratch) striding over the long columns, each block reusing its scratch slice: T(J, J)
//    column-major m x m (T(t, u) at u * m + t, so the threads of a step touch consecutive
//    addresses), the right-hand sides column-major m x bs, and for general the pivot bookkeeping
//    (2m ints). Thread tid owns rows tid, tid + nthreads, ...; one __syncthreads per step (the
//    general pivot search reduces warp winners through double-buffered shared slots).
// unit_block_lower and block_upper run the unit_lower and general instances (Values::whole_blocks
// changes the gather only), so they add no kernel instances.
// Both kernels apply exactly the operation order of cpu::isai_block_generate (isai_block_cpu.cpp)
// and write X(s, :) = R(p_s, :) coalesced into M's row-major blocks. A zero or
// non-finite pivot records j + 1 in *info (smallest nonzero wins; *info is zeroed first).
#include "kernels/cuda_check.hpp"
#include "kernels/ilu_isai/isai_block.hpp"

#include <algorithm>
#include <climits>
#include <limits>
#include <stdexcept>
#include <string>

namespace blockres::kernels::cuda {

namespace {

constexpr unsigned full_mask = 0xffffffffu;
constexpr int short_max_warps = 4;                 // warps (columns) per block of the short kernel
constexpr int tile_stride = 33;                    // row stride of the 32-row tiles: lanes reading
                                                   //   T(t, s) for consecutive t hit distinct banks
constexpr int tile_doubles = 32 * tile_stride;
constexpr size64_t short_smem_budget = 48 * 1024;  // static-limit dynamic shared memory per block
constexpr int long_max_threads = 256;              // most threads per long column
constexpr int long_min_blocks = 2;                 // per SM at 256 threads: <= 128 registers (the
                                                   //   default bound spilled at 48-64 registers)
constexpr size64_t long_max_blocks = 4 * 132;      // long-column blocks in the grid: 4 per H200 SM
constexpr size64_t long_scratch_cap = size64_t(1) << 26;  // doubles (512 MiB) before fewer blocks

// Values of A as the kernels read them.
struct Values {
  const index_t* __restrict__ row_ptr;
  const index_t* __restrict__ col_ind;
  const double* __restrict__ val;
  int bs;
  BlockStorage storage;
  // Whole-block triangles (unit_block_lower, block_upper): they run the unit_lower and general
  // instances with this flag, which changes only which entries gather_row keeps.
  bool whole_blocks;
};

// Where scalar row a of block row R keeps its values in either storage: entry (a, c) of the
// row's k-th block (q = row_ptr[R] + k) is at base + k * block_stride + c (the same accessor as
// in isai_block_cpu.cpp).
struct ScalarRowLayout {
  size64_t base, block_stride;
};
__device__ __forceinline__ ScalarRowLayout scalar_row_layout(const Values& v, index_t R, int a)
{
  const size64_t first = v.row_ptr[R], len = v.row_ptr[R + 1] - v.row_ptr[R], bs2 = size64_t(v.bs) * v.bs;
  if (v.storage == BlockStorage::bsr) return {first * bs2 + size64_t(a) * v.bs, bs2};
  return {first * bs2 + size64_t(a) * len * v.bs, v.bs};
}

// Row t of T(J, J) (block row J[t / bs], row t % bs; nb blocks in J) into out[u * ld], u < nb bs:
// every entry is written (0 where the pattern or the kind's triangle has none; 1 on the diagonal
// of unit_lower). The merge only visits the blocks of J inside the triangle: b <= t / bs for
// unit_lower, b >= t / bs for upper and block_upper (whose walk starts at the diagonal block).
// v.whole_blocks: unit_lower keeps the blocks b < t / bs only (unit_block_lower), general starts
// at the diagonal block and keeps everything from there (block_upper).
template <IsaiKind KIND>
__device__ __forceinline__ void gather_row(const Values& v, const index_t* J, index_t nb, index_t t, double* out,
                                           size64_t ld)
{
  const int bs = v.bs;
  const index_t m = nb * bs, bt = t / bs, rb = J[bt];
  const int a = static_cast<int>(t - bt * bs);
  for (index_t u = 0; u < m; ++u) out[u * ld] = 0.0;
  const ScalarRowLayout lay = scalar_row_layout(v, rb, a);
  const index_t q0 = v.row_ptr[rb], q1 = v.row_ptr[rb + 1];
  index_t q = q0, b = 0, b_end = nb;
  if (KIND == IsaiKind::unit_lower) b_end = bt + 1;
  if (KIND == IsaiKind::upper || (KIND == IsaiKind::general && v.whole_blocks)) {
    b = bt;  // first block column >= rb: the diagonal block
    index_t hi = q1;
    while (q < hi) {
      const index_t mid = q + (hi - q) / 2;
      if (v.col_ind[mid] < rb) q = mid + 1; else hi = mid;
    }
  }
  while (q < q1 && b < b_end) {
    const index_t c = v.col_ind[q], jb = J[b];
    if (c < jb) {
      ++q;
    } else if (c > jb) {
      ++b;
    } else {
      const double* src = v.val + lay.base + (q - q0) * lay.block_stride;
      for (int k = 0; k < bs; ++k) {
        const index_t u = b * bs + k;
        const bool keep = KIND == IsaiKind::general ? true
                          : KIND == IsaiKind::upper ? u >= t
                                                    : (v.whole_blocks ? b < bt : u < t);
        if (keep) out[u * ld] = src[k];
      }
      ++q, ++b;
    }
  }
  if (KIND == IsaiKind::unit_lower) out[t * ld] = 1.0;
}

// x(k * ld) *= f for k < n: a row of the column-major right-hand sides.
__device__ __forceinline__ void scale_row(double* x, size64_t ld, int n, double f)
{
  for (int k = 0; k < n; ++k) x[k * ld] *= f;
}

__device__ __forceinline__ bool bad_pivot(double d) { return d == 0.0 || !isfinite(d); }

// *info = the smallest nonzero of (*info, v); 0 means no failure yet.
__device__ __forceinline__ void record_failure(int* info, int v)
{
  int seen = 0;
  for (;;) {
    const int prev = atomicCAS(info, seen, v);
    if (prev == seen || (prev != 0 && prev <= v)) return;
    seen = prev;
  }
}

// Pivot key of a candidate row: bits of |x| plus one (0 for lanes that are no candidate), so
// integer order is |x| order with NaN on top, as cpu::isai_block_generate compares.
__device__ __forceinline__ unsigned long long pivot_key(bool candidate, double x)
{
  return candidate ? static_cast<unsigned long long>(__double_as_longlong(fabs(x))) + 1ull : 0ull;
}

// The lowest lane holding the warp's largest key (as batched_gh_cuda.cuh's warp_argmax_bits).
__device__ __forceinline__ int warp_argmax(unsigned long long key)
{
  const unsigned hi = static_cast<unsigned>(key >> 32), lo = static_cast<unsigned>(key);
  const unsigned mhi = __reduce_max_sync(full_mask, hi);
  const unsigned mlo = __reduce_max_sync(full_mask, hi == mhi ? lo : 0u);
  return __ffs(static_cast<int>(__ballot_sync(full_mask, hi == mhi && lo == mlo))) - 1;
}

// The lowest group-local row holding the largest key within each aligned group of W < 32 lanes: a
// butterfly over the group (xor offsets < W stay inside it), all 32 lanes taking part. The order
// (key descending, row ascending) is total, so every lane of a group ends with the same row.
template <int W>
__device__ __forceinline__ int group_argmax(unsigned long long key, int t)
{
#pragma unroll
  for (int off = W / 2; off > 0; off >>= 1) {
    const unsigned long long k2 = __shfl_xor_sync(full_mask, key, off);
    const int t2 = __shfl_xor_sync(full_mask, t, off);
    if (k2 > key || (k2 == key && t2 < t)) key = k2, t = t2;
  }
  return t;
}

// ---- Kernel 1: short block columns (m <= 32), 32 / W per warp ------------------------------

// Group g = lane / W of a warp solves short column (warp's first + g) with lane t = lane % W
// owning its scalar row t (m <= W: W is at least the largest m of the short columns). Group g's
// tile is T(t, u) at (g W + t)(W + 1) + u inside the warp's 32 x 33 tile (so lane l's row starts
// at l (W + 1): an odd stride over the warp, conflict-free like W = 32), its right-hand sides
// are R's lanes g W .. g W + W - 1, its J and piv the same slots of the warp's int arrays. The
// step loops run to the warp's largest m (uniform, so every shuffle and __syncwarp has all 32
// lanes), a group's work guarded by s < its m; groups past the end of the column list have m = 0
// and write nothing. W = 32: one column per warp, exactly the former kernel.
template <IsaiKind KIND, int W>
__global__ void __launch_bounds__(32 * short_max_warps)
    isai_block_short_kernel(index_t nshort, const index_t* __restrict__ short_cols,
                            const index_t* __restrict__ col_ptr, const index_t* __restrict__ row_ind,
                            const index_t* __restrict__ bsr_pos, Values v, double* __restrict__ m_val, int* info)
{
  static_assert(W == 4 || W == 8 || W == 16 || W == 32, "group width");
  constexpr int G = 32 / W;   // columns per warp
  constexpr int ld = W + 1;   // group tile row stride (W = 32: tile_stride)
  extern __shared__ double smem[];
  const int warps = static_cast<int>(blockDim.x >> 5), warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int gbase = lane / W * W, t = lane - gbase;  // group's first lane, own row in the group
  const size64_t first_col = (size64_t(blockIdx.x) * warps + warp) * G;
  if (first_col >= nshort) return;  // uniform over the warp
  const size64_t col = first_col + lane / W;
  const bool active = col < nshort;
  const int bs = v.bs;
  double* Tw = smem + size64_t(warp) * (tile_doubles + 32 * bs + 32);
  double* R = Tw + tile_doubles + gbase;                        // R(t, c) at c * 32 + t
  index_t* J = reinterpret_cast<index_t*>(Tw + tile_doubles + 32 * bs) + gbase;  // block rows
  index_t* piv = J + 32;                                        // general: pivot row of step s
  double* T = Tw + gbase * ld;                                  // T(t, u) at t * ld + u

  index_t j = 0, base = 0, nb = 0;  // inactive groups: an empty column
  if (active) {
    j = short_cols[col];
    base = col_ptr[j];
    nb = col_ptr[j + 1] - base;
  }
  const int m = static_cast<int>(nb * bs);
  const int m_warp = W == 32 ? m : static_cast<int>(__reduce_max_sync(full_mask, static_cast<unsigned>(m)));
  if (t < nb) J[t] = row_ind[base + t];
  __syncwarp();
  if (t < m) {
    gather_row<KIND>(v, J, nb, t, T + t * ld, 1);
    const bool diag_block = J[t / bs] == j;
    for (int c = 0; c < bs; ++c) R[c * 32 + t] = diag_block && t % bs == c ? 1.0 : 0.0;
  }
  bool bad = false;

  // R(t, :) is divided by its pivot (x_t in place of r_t) by its own lane right after its last
  // update, so at step s every lane reads x_s = R(s, :) (R(p_s, :) for general) directly.
  if (KIND == IsaiKind::general) {
    // my_step: the step at which this lane's row became the pivot (-1: not yet; INT_MAX for the
    // rows >= m, which never take part). A row with my_step < 0 implies s < m.
    int my_step = t < m ? -1 : INT_MAX;
    double* row = T + t * ld;
    for (int s = 0; s < m_warp; ++s) {
      __syncwarp();  // rows updated in step s - 1 (and the gather) are visible
      const unsigned long long key = pivot_key(my_step < 0, my_step < 0 ? row[s] : 0.0);
      int p;
      if constexpr (W == 32) p = warp_argmax(key);
      else p = group_argmax<W>(key, t);
      if (s < m) {
        const double* prow = T + p * ld;
        const double d = prow[s];
        bad = bad || bad_pivot(d);
        if (t == p) my_step = s;
        if (t == 0) piv[s] = p;
        if (my_step < 0) {
          const double l = row[s] * (1.0 / d);
          for (int u = s + 1; u < m; ++u) row[u] -= l * prow[u];
          for (int c = 0; c < bs; ++c) R[c * 32 + t] -= l * R[c * 32 + p];
        }
      }
    }
    if (my_step == m - 1) scale_row(R + t, 32, bs, 1.0 / row[m - 1]);  // never for m = 0 (INT_MAX)
    for (int s = m_warp - 1; s > 0; --s) {
      __syncwarp();
      if (s < m) {
        const int p = piv[s];
        if (my_step < s) {
          const double l = row[s];
          for (int c = 0; c < bs; ++c) R[c * 32 + t] -= l * R[c * 32 + p];
          if (my_step == s - 1) scale_row(R + t, 32, bs, 1.0 / row[s - 1]);
        }
      }
    }
  } else {
    // Forward from J[0] = j for unit_lower, backward from the last block for upper.
    constexpr bool lower = KIND == IsaiKind::unit_lower;
    if (lower ? m > 0 && t == 0 : t == m - 1) scale_row(R + t, 32, bs, 1.0 / T[t * ld + t]);
    for (int k = 0; k < m_warp; ++k) {
      __syncwarp();
      if (k < m) {
        const int s = lower ? k : m - 1 - k;
        const double d = T[s * ld + s];
        bad = bad || bad_pivot(d);
        if (lower ? t > s && t < m : t < s) {
          const double l = T[t * ld + s];
          for (int c = 0; c < bs; ++c) R[c * 32 + t] -= l * R[c * 32 + s];
          if (t == (lower ? s + 1 : s - 1)) scale_row(R + t, 32, bs, 1.0 / T[t * ld + t]);
        }
      }
    }
    if (t < m) piv[t] = t;
  }
  __syncwarp();

  // X(s, :) = R(p_s, :) into block (J[s / bs], j), consecutive lanes of a group on consecutive
  // entries of M's row-major blocks.
  const int bs2 = bs * bs;
  for (int e = t; e < m * bs; e += W) {
    const int b = e / bs2, rc = e - b * bs2;
    m_val[size64_t(bsr_pos[base + b]) * bs2 + rc] = R[(rc % bs) * 32 + piv[b * bs + rc / bs]];
  }
  if (bad && t == 0) record_failure(info, j + 1);
}

// ---- Kernel 2: one thread block per long block column (m > 32) -------------------------------

// Smallest t >= lo with t == tid (mod nt): the first row from lo on owned by thread tid.
__device__ __forceinline__ index_t first_owned(index_t tid, index_t lo, index_t nt)
{
  return tid >= lo ? tid : tid + (lo - tid + nt - 1) / nt * nt;
}

// Block-wide pivot search of step s (general): the lowest row with the largest key among the
// rows not yet pivoted. Ends with the __syncthreads that publishes the step s - 1 updates'
// successors; `slots` is double-buffered by step parity, so a warp that runs ahead into step
// s + 1 never overwrites what a slower one still reads for step s.
__device__ __forceinline__ index_t block_argmax(unsigned long long key, index_t row, unsigned long long* slot_key,
                                                index_t* slot_row)
{
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long k2 = __shfl_down_sync(full_mask, key, off);
    const index_t r2 = __shfl_down_sync(full_mask, row, off);
    if (k2 > key || (k2 == key && r2 < row)) key = k2, row = r2;
  }
  const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x >> 5);
  if (lane == 0) slot_key[warp] = key, slot_row[warp] = row;
  __syncthreads();
  key = slot_key[0], row = slot_row[0];
  for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w)
    if (slot_key[w] > key || (slot_key[w] == key && slot_row[w] < row)) key = slot_key[w], row = slot_row[w];
  return row;
}

template <IsaiKind KIND>
__global__ void __launch_bounds__(long_max_threads, long_min_blocks)
    isai_block_long_kernel(index_t nlong, const index_t* __restrict__ long_cols, const index_t* __restrict__ col_ptr,
                           const index_t* __restrict__ row_ind, const index_t* __restrict__ bsr_pos, Values v,
                           double* __restrict__ m_val, double* scratch, size64_t slice_doubles, int* info)
{
  __shared__ unsigned long long slot_key[2][long_max_threads / 32];
  __shared__ index_t slot_row[2][long_max_threads / 32];
  const index_t tid = threadIdx.x, nt = blockDim.x;
  const int bs = v.bs;
  const index_t bs2 = bs * bs;  // bs <= m <= max_long_m, and long_grid keeps max_long_m^2 in 32 bits
  const index_t nt_blocks = nt / bs2, nt_rest = nt % bs2;
  int first_bad = INT_MAX;  // smallest j + 1 with a bad pivot among this block's columns
  double* slice = scratch + size64_t(blockIdx.x) * slice_doubles;

  for (size64_t col = blockIdx.x; col < nlong; col += gridDim.x) {
    const index_t j = long_cols[col];
    const index_t base = col_ptr[j];
    const index_t nb = col_ptr[j + 1] - base;
    const index_t m = nb * bs;
    const index_t* J = row_ind + base;
    double* T = slice;                     // T(t, u) at u * m + t
    double* R = T + size64_t(m) * m;       // R(t, c) at c * m + t
    index_t* step_of = reinterpret_cast<index_t*>(R + size64_t(m) * bs);  // general: 2m ints
    index_t* piv = step_of + m;

    for (index_t t = tid; t < m; t += nt) {
      gather_row<KIND>(v, J, nb, t, T + t, m);
      const bool diag_block = J[t / bs] == j;
      for (int c = 0; c < bs; ++c) R[size64_t(c) * m + t] = diag_block && t % bs == c ? 1.0 : 0.0;
      if (KIND == IsaiKind::general) step_of[t] = -1;
    }
    bool bad = false;

    // As in the short kernel, the owner divides a row by its pivot right after its last update.
    if (KIND == IsaiKind::general) {
      for (index_t s = 0; s < m; ++s) {
        // Candidates among the own rows; the __syncthreads inside block_argmax publishes the
        // previous step's updates (and the gather) before the pivot row is read.
        unsigned long long key = 0;
        index_t row = INT_MAX;
        for (index_t t = tid; t < m; t += nt) {
          const unsigned long long k = pivot_key(step_of[t] < 0, T[size64_t(s) * m + t]);
          if (k > key) key = k, row = t;
        }
        const index_t p = block_argmax(key, row, slot_key[s & 1], slot_row[s & 1]);
        const double d = T[size64_t(s) * m + p];
        bad = bad || bad_pivot(d);
        if (tid == p % nt) step_of[p] = s, piv[s] = p;
        for (index_t t = tid; t < m; t += nt) {
          if (step_of[t] >= 0) continue;  // pivoted (p included: its owner just marked it)
          const double l = T[size64_t(s) * m + t] * (1.0 / d);
          for (index_t u = s + 1; u < m; ++u) T[size64_t(u) * m + t] -= l * T[size64_t(u) * m + p];
          for (int c = 0; c < bs; ++c) R[size64_t(c) * m + t] -= l * R[size64_t(c) * m + p];
        }
      }
      for (index_t t = tid; t < m; t += nt)
        if (step_of[t] == m - 1) scale_row(R + t, m, bs, 1.0 / T[size64_t(m - 1) * m + t]);
      for (index_t s = m - 1; s > 0; --s) {
        __syncthreads();  // piv, and R(p_s, :) final
        const index_t p = piv[s];
        for (index_t t = tid; t < m; t += nt) {
          if (step_of[t] >= s) continue;
          const double l = T[size64_t(s) * m + t];
          for (int c = 0; c < bs; ++c) R[size64_t(c) * m + t] -= l * R[size64_t(c) * m + p];
          if (step_of[t] == s - 1) scale_row(R + t, m, bs, 1.0 / T[size64_t(s - 1) * m + t]);
        }
      }
    } else {
      const bool lower = KIND == IsaiKind::unit_lower;
      const index_t first = lower ? 0 : m - 1;
      if (tid == first % nt) scale_row(R + first, m, bs, 1.0 / T[size64_t(first) * m + first]);
      for (index_t k = 0; k < m; ++k) {
        __syncthreads();  // x_s = R(s, :) final and visible
        const index_t s = lower ? k : m - 1 - k;
        const double d = T[size64_t(s) * m + s];
        bad = bad || bad_pivot(d);
        const double* Ts = T + size64_t(s) * m;
        const index_t next = lower ? s + 1 : s - 1;
        for (index_t t = lower ? first_owned(tid, s + 1, nt) : tid; t < (lower ? m : s); t += nt) {
          const double l = Ts[t];
          for (int c = 0; c < bs; ++c) R[size64_t(c) * m + t] -= l * R[size64_t(c) * m + s];
          if (t == next) scale_row(R + t, m, bs, 1.0 / T[size64_t(t) * m + t]);
        }
      }
    }
    __syncthreads();

    // Entry e = b bs^2 + rc of the column's blocks, stepped by nt without 64-bit divisions.
    for (index_t b = tid / bs2, rc = tid % bs2; b < nb;) {
      const index_t s = b * bs + rc / bs;
      const index_t p = KIND == IsaiKind::general ? piv[s] : s;
      m_val[size64_t(bsr_pos[base + b]) * bs2 + rc] = R[size64_t(rc % bs) * m + p];
      b += nt_blocks, rc += nt_rest;
      if (rc >= bs2) rc -= bs2, ++b;
    }
    if (bad) first_bad = min(first_bad, j + 1);
    __syncthreads();  // the slice and the slots are reused by the next column
  }
  if (first_bad != INT_MAX && tid == 0) record_failure(info, first_bad);
}

// Doubles of one long block's scratch slice, and the number of blocks of the long kernel's grid.
struct LongGrid {
  size64_t slice_doubles = 0;
  size64_t blocks = 0;
};
LongGrid long_grid(const IsaiBlockPattern& p)
{
  LongGrid g;
  if (p.long_cols.empty()) return g;
  const size64_t m = p.max_long_m;
  if (m * m > std::numeric_limits<index_t>::max())  // also keeps bs^2 <= m^2 in 32-bit indices
    throw std::invalid_argument("cuda::isai_block_generate: a long block column's dense system of " +
                                std::to_string(m) + " scalar rows needs more than 2^31 doubles");
  const bool pivoting = p.kind == IsaiKind::general || p.kind == IsaiKind::block_upper;
  g.slice_doubles = m * (m + p.bs + (pivoting ? 1 : 0));  // T, R, general: 2m ints
  g.blocks = std::clamp<size64_t>(long_scratch_cap / g.slice_doubles, 1, long_max_blocks);
  g.blocks = std::min<size64_t>(g.blocks, static_cast<size64_t>(p.long_cols.size()));
  return g;
}


template <IsaiKind KIND>
void generate(stream_t s, const IsaiBlockDevicePattern& p, const Values& v, double* m_val, double* scratch, int* info)
{
  const IsaiBlockPattern& h = *p.host;
  const size64_t nshort = static_cast<size64_t>(h.short_cols.size());
  const size64_t nlong = static_cast<size64_t>(h.long_cols.size());
  if (nshort > 0) {
    if (h.short_bucket_ptr.size() != 5 || h.short_bucket_ptr.back() != static_cast<index_t>(nshort))
      throw std::invalid_argument("cuda::isai_block_generate: pattern without its short-column buckets");
    const size64_t warp_bytes = (tile_doubles + 32 * size64_t(h.bs) + 32) * sizeof(double);
    const int warps = static_cast<int>(std::clamp<size64_t>(short_smem_budget / warp_bytes, 1, short_max_warps));
    const std::size_t bytes = static_cast<std::size_t>(warps * warp_bytes);
    // One launch per lane-group width W (IsaiBlockPattern::short_bucket_ptr), 32 / W columns per warp.
    const auto launch = [&](auto kernel, int b) {
      const int w = 4 << b;
      const index_t begin = h.short_bucket_ptr[b], count = h.short_bucket_ptr[b + 1] - begin;
      if (count == 0) return;
      const size64_t cols_per_block = size64_t(warps) * (32 / w);
      const unsigned grid = static_cast<unsigned>((size64_t(count) + cols_per_block - 1) / cols_per_block);
      kernel<<<grid, 32 * warps, bytes, s>>>(count, p.short_cols + begin, p.col_ptr, p.row_ind, p.bsr_pos, v, m_val,
                                            info);
      BLOCKRES_CUDA_CHECK_LAUNCH();
    };
    launch(isai_block_short_kernel<KIND, 4>, 0);
    launch(isai_block_short_kernel<KIND, 8>, 1);
    launch(isai_block_short_kernel<KIND, 16>, 2);
    launch(isai_block_short_kernel<KIND, 32>, 3);
  }
  if (nlong > 0) {
    // A thread per row up to long_max_threads, whole warps covering the longest column, so the
    // per-step barrier is not paid by idle warps when the long columns are only a little over 32.
    const LongGrid g = long_grid(h);
    const int threads = static_cast<int>(std::min<size64_t>(long_max_threads, (h.max_long_m + 31) / 32 * 32));
    isai_block_long_kernel<KIND><<<static_cast<unsigned>(g.blocks), threads, 0, s>>>(
        static_cast<index_t>(nlong), p.long_cols, p.col_ptr, p.row_ind, p.bsr_pos, v, m_val, scratch,
        g.slice_doubles, info);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

size64_t isai_block_scratch_doubles(const IsaiBlockPattern& p)
{
  const LongGrid g = long_grid(p);
  return g.blocks * g.slice_doubles;
}

void isai_block_generate(stream_t s, const IsaiBlockDevicePattern& p, BlockValuesView<const double> A,
                         double* m_val, double* scratch, int* info)
{
  const char* fn = "cuda::isai_block_generate: ";
  if (p.host == nullptr) throw std::invalid_argument(std::string(fn) + "IsaiBlockDevicePattern without host pattern");
  const IsaiBlockPattern& h = *p.host;
  if (A.nrows != h.nrows || A.bs != h.bs)
    throw std::invalid_argument(std::string(fn) + "A has " + std::to_string(A.nrows) + " block rows of size " +
                                std::to_string(A.bs) + ", the pattern " + std::to_string(h.nrows) + " of size " +
                                std::to_string(h.bs));
  if (A.storage != BlockStorage::bsr && A.storage != BlockStorage::scalar_rows)
    throw std::invalid_argument(std::string(fn) + "unknown BlockStorage");
  if (info == nullptr) throw std::invalid_argument(std::string(fn) + "null info");
  if (!h.long_cols.empty() && scratch == nullptr)
    throw std::invalid_argument(std::string(fn) + "pattern has long block columns but scratch is null");
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), s));
  if (h.nrows == 0) return;
  const bool whole = h.kind == IsaiKind::unit_block_lower || h.kind == IsaiKind::block_upper;
  const Values v{A.row_ptr, A.col_ind, A.val, A.bs, A.storage, whole};
  switch (h.kind) {
    case IsaiKind::unit_lower:
    case IsaiKind::unit_block_lower: generate<IsaiKind::unit_lower>(s, p, v, m_val, scratch, info); break;
    case IsaiKind::upper: generate<IsaiKind::upper>(s, p, v, m_val, scratch, info); break;
    case IsaiKind::general:
    case IsaiKind::block_upper: generate<IsaiKind::general>(s, p, v, m_val, scratch, info); break;
  }
}

}  // namespace blockres::kernels::cuda
