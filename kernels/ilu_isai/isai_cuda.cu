// CUDA ISAI generation (Anzt et al., batched ISAI, section III) and the triangle SpMV.
//
// Generation of one factor's M is two kernels over disjoint column sets, so no column is skipped:
//  - short columns (m <= 32 pattern entries): a group of W = 4, 8, 16 or 32 lanes per column
//    (the smallest W >= m, one launch per W), 32 / W columns per warp. Lane t of a group
//    gathers row J[t] of T(J, J) into the group's shared m x m tile by merging LU's sorted row J[t]
//    with the sorted J from the diagonal outward (leftwards for L, rightwards for U), so the walk
//    stops as soon as J is exhausted; then the warp solves T(J, J) m = e_j(J) column by column,
//    one __shfl_sync broadcast of the pivot's right-hand side per step, and lane t writes m_t.
//  - long columns (m > 32): min(long columns, isai_long_blocks) thread blocks stride over them,
//    each staging T(J, J) column-major in its own max_long_m^2 slice of the caller's global
//    scratch, the right-hand side kept in M's own value slots (each row's slot is only touched by
//    the thread owning that row), one __syncthreads per step.
#include "kernels/cuda_check.hpp"
#include "kernels/ilu_isai/isai.hpp"
#include "kernels/launch.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace blockres::kernels::cuda {

namespace {

constexpr unsigned full_mask = 0xffffffffu;
constexpr int short_warps = 4;        // warps per block of the short-column kernel
constexpr int long_threads = 256;     // most threads per long column (fewer when all are shorter)
constexpr int spmv_threads = 256;     // 8 rows (warps) per block of the triangle SpMV

struct Factors {
  const index_t* __restrict__ row_ptr;
  const index_t* __restrict__ col;
  const double* __restrict__ val;
};

// First position in LU's row r whose column is >= c (the diagonal entry for c = r).
__device__ __forceinline__ index_t lower_bound_in_row(const Factors& f, index_t r, index_t c)
{
  index_t lo = f.row_ptr[r], hi = f.row_ptr[r + 1];
  while (lo < hi) {
    const index_t mid = lo + (hi - lo) / 2;
    if (f.col[mid] < c) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// Row t of T(J, J) (T's row r = J[t]) into out[b * ld] for every b of T's triangle: out(t, t) is
// the diagonal (1 for L), every other b gets T(r, J[b]) or 0. Walks from the diagonal outward in
// LU's row and in J together, as the paper recommends, so the walk ends once J is exhausted.
// J may live in shared or global memory; m is the system size.
template <Triangle TRI>
__device__ __forceinline__ void gather_row(const Factors& f, const index_t* J, index_t m, index_t t, double* out,
                                           size64_t ld)
{
  const index_t r = J[t];
  const index_t d = lower_bound_in_row(f, r, r);  // diagonal position (validated by isai_pattern)
  if (TRI == Triangle::unit_lower) {
    out[t * ld] = 1.0;
    const index_t begin = f.row_ptr[r];
    index_t q = d - 1, b = t - 1;
    while (b >= 0 && q >= begin) {
      const index_t c = f.col[q], jb = J[b];
      if (c > jb) {
        --q;
      } else {
        out[b * ld] = c == jb ? f.val[q] : 0.0;
        q -= c == jb;
        --b;
      }
    }
    for (; b >= 0; --b) out[b * ld] = 0.0;  // LU's row ended before J did
  } else {
    const index_t end = f.row_ptr[r + 1];
    const bool has_diag = d < end && f.col[d] == r;
    out[t * ld] = has_diag ? f.val[d] : 0.0;
    index_t q = has_diag ? d + 1 : d, b = t + 1;
    while (b < m && q < end) {
      const index_t c = f.col[q], jb = J[b];
      if (c < jb) {
        ++q;
      } else {
        out[b * ld] = c == jb ? f.val[q] : 0.0;
        q += c == jb;
        ++b;
      }
    }
    for (; b < m; ++b) out[b * ld] = 0.0;
  }
}

// Kernel 1: short columns (m <= W), a group of W lanes per column, 32 / W columns per warp.
template <Triangle TRI, int W>
__global__ void __launch_bounds__(32 * short_warps)
    isai_short_kernel(index_t nshort, const index_t* __restrict__ short_cols, const index_t* __restrict__ col_ptr,
                      const index_t* __restrict__ row_ind, const index_t* __restrict__ csr_pos, Factors f,
                      double* __restrict__ m_val)
{
  constexpr int G = 32 / W;      // columns per warp
  constexpr int ld = W + 1;      // row stride of a group's tile (odd: conflict-free column reads)
  __shared__ double tile[short_warps][G * W * ld];  // G tiles T(J, J), row t at t * ld (sized by W:
                                                   //   narrow groups leave room for more blocks per SM)
  __shared__ index_t rows[short_warps][32];                // G index sets J
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane / W, t = lane % W;
  const size64_t first = (size64_t(blockIdx.x) * short_warps + warp) * G;
  if (first >= nshort) return;  // uniform over the warp
  const size64_t c = first + g;
  // A group past the end of the list (last warp only) has m = 0: it joins the shuffles, writes nothing.
  const index_t j = c < nshort ? short_cols[c] : 0;
  const index_t base = c < nshort ? col_ptr[j] : 0;
  const int m = c < nshort ? static_cast<int>(col_ptr[j + 1] - base) : 0;
  double* T = tile[warp] + g * W * ld;
  index_t* J = rows[warp] + g * W;

  index_t pos = 0;
  if (t < m) {
    J[t] = row_ind[base + t];
    pos = csr_pos[base + t];
  }
  __syncwarp();
  // Lane t gathers row t (column b at T[t * ld + b]).
  if (t < m) gather_row<TRI>(f, J, m, t, T + t * ld, 1);
  __syncwarp();

  // Column-oriented substitution with the right-hand side in registers: at step s every lane
  // receives its group's r_s by shuffle and forms x_s = r_s / T_ss itself (T_ss is a
  // shared-memory broadcast); the rows still to come subtract T_ts x_s. The steps run to the
  // warp's largest m (every lane takes part in every shuffle); a group whose m is smaller skips
  // them (s >= m: nothing read, nothing updated). J[0] = j for L (e_j(J) = e_0), J[m-1] = j for U.
  const int steps = __reduce_max_sync(full_mask, m);
  double rhs = 0.0, x = 0.0;
  if (TRI == Triangle::unit_lower) {
    rhs = t == 0 && m > 0 ? 1.0 : 0.0;
    for (int s = 0; s < steps; ++s) {
      const double rs = __shfl_sync(full_mask, rhs, s, W);
      if (s >= m) continue;
      const double xs = rs / T[s * ld + s];
      if (t == s) x = xs;
      if (t > s && t < m) rhs -= T[t * ld + s] * xs;
    }
  } else {
    rhs = t == m - 1 ? 1.0 : 0.0;
    for (int s = steps - 1; s >= 0; --s) {
      const double rs = __shfl_sync(full_mask, rhs, s, W);
      if (s >= m) continue;
      const double xs = rs / T[s * ld + s];
      if (t == s) x = xs;
      if (t < s) rhs -= T[t * ld + s] * xs;
    }
  }
  if (t < m) m_val[pos] = x;
}

// Smallest t >= lo with t == tid (mod nt): the first row above lo owned by thread tid.
__device__ __forceinline__ index_t first_owned(index_t tid, index_t lo, index_t nt)
{
  return tid >= lo ? tid : tid + (lo - tid + nt - 1) / nt * nt;
}

// Kernel 2: thread blocks striding over the long columns (m > 32), T(J, J) column-major in the
// block's scratch slice (T(t, b) at A[b * m + t], so in a step the threads read consecutive
// addresses).
template <Triangle TRI>
__global__ void __launch_bounds__(long_threads)
    isai_long_kernel(index_t nlong, const index_t* __restrict__ long_cols, size64_t slice,
                     const index_t* __restrict__ col_ptr, const index_t* __restrict__ row_ind,
                     const index_t* __restrict__ csr_pos, Factors f, double* __restrict__ m_val,
                     double* __restrict__ scratch)
{
  __shared__ double xs_buf[2];  // x_s of the current step, double-buffered (one sync per step)
  double* A = scratch + slice * blockIdx.x;
  const index_t tid = threadIdx.x, nt = blockDim.x;
  for (index_t c = blockIdx.x; c < nlong; c += gridDim.x) {
    const index_t j = long_cols[c];
    const index_t base = col_ptr[j];
    const index_t m = col_ptr[j + 1] - base;
    const index_t* J = row_ind + base;
    const index_t* P = csr_pos + base;
    const index_t diag = TRI == Triangle::unit_lower ? 0 : m - 1;  // position of j in J

    // Thread tid owns rows tid, tid + nt, ...: it gathers them and keeps their right-hand sides
    // (initially e_j(J)) in M's value slots, which no other thread touches. The barrier also
    // orders this column's writes to A after the previous column's last reads.
    __syncthreads();
    for (index_t t = tid; t < m; t += nt) {
      gather_row<TRI>(f, J, m, t, A + t, m);
      m_val[P[t]] = t == diag ? 1.0 : 0.0;
    }
    __syncthreads();

    if (TRI == Triangle::unit_lower) {
      for (index_t s = 0; s < m; ++s) {
        if (tid == s % nt) {
          const double xs = m_val[P[s]] / A[size64_t(s) * m + s];
          m_val[P[s]] = xs;
          xs_buf[s & 1] = xs;
        }
        __syncthreads();
        const double xs = xs_buf[s & 1];
        const double* As = A + size64_t(s) * m;
        for (index_t t = first_owned(tid, s + 1, nt); t < m; t += nt) m_val[P[t]] -= As[t] * xs;
      }
    } else {
      for (index_t s = m - 1; s >= 0; --s) {
        if (tid == s % nt) {
          const double xs = m_val[P[s]] / A[size64_t(s) * m + s];
          m_val[P[s]] = xs;
          xs_buf[s & 1] = xs;
        }
        __syncthreads();
        const double xs = xs_buf[s & 1];
        const double* As = A + size64_t(s) * m;
        for (index_t t = tid; t < s; t += nt) m_val[P[t]] -= As[t] * xs;
      }
    }
  }
}

// One warp per row: the lanes stride over the row, keep the entries of the triangle, reduce.
template <Triangle TRI>
__global__ void __launch_bounds__(spmv_threads)
    triangle_spmv_kernel(index_t n, Factors f, const double* __restrict__ x, double* __restrict__ y)
{
  const int lane = threadIdx.x & 31;
  const size64_t warps = size64_t(gridDim.x) * (blockDim.x >> 5);
  for (size64_t i = (size64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
    const index_t row = static_cast<index_t>(i);
    double sum = 0.0;
    for (index_t q = f.row_ptr[row] + lane; q < f.row_ptr[row + 1]; q += 32) {
      const index_t c = f.col[q];
      if (TRI == Triangle::unit_lower ? c < row : c >= row) sum += f.val[q] * x[c];
    }
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(full_mask, sum, off);
    if (lane == 0) y[row] = TRI == Triangle::unit_lower ? x[row] + sum : sum;
  }
}

template <Triangle TRI>
void generate(stream_t s, const IsaiDevicePattern& p, Factors f, double* m_val, double* scratch)
{
  const IsaiPattern& h = *p.host;
  const size64_t nlong = static_cast<size64_t>(h.long_cols.size());
  // One launch per lane-group width (kernels/ilu_isai/isai.hpp: short_bucket_ptr).
  auto launch_short = [&](auto width) {
    constexpr int W = decltype(width)::value;
    const int b = W == 4 ? 0 : W == 8 ? 1 : W == 16 ? 2 : 3;
    const index_t begin = h.short_bucket_ptr[b], count = h.short_bucket_ptr[b + 1] - begin;
    if (count == 0) return;
    const size64_t per_block = size64_t(short_warps) * (32 / W);
    const unsigned grid = static_cast<unsigned>((count + per_block - 1) / per_block);
    isai_short_kernel<TRI, W><<<grid, 32 * short_warps, 0, s>>>(count, p.short_cols + begin, p.col_ptr, p.row_ind,
                                                                 p.csr_pos, f, m_val);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  };
  launch_short(std::integral_constant<int, 4>{});
  launch_short(std::integral_constant<int, 8>{});
  launch_short(std::integral_constant<int, 16>{});
  launch_short(std::integral_constant<int, 32>{});
  if (nlong > 0) {
    // A thread per row up to long_threads: whole warps covering the longest column, so that the
    // per-step barrier is not paid by idle warps when every long column is only a little over 32.
    const index_t max_m = h.max_long_m;
    const int threads = static_cast<int>(std::min<index_t>(long_threads, (max_m + 31) / 32 * 32));
    const size64_t blocks = std::min<size64_t>(nlong, isai_long_blocks);
    isai_long_kernel<TRI><<<static_cast<unsigned>(blocks), threads, 0, s>>>(
        static_cast<index_t>(nlong), p.long_cols, size64_t(max_m) * max_m, p.col_ptr, p.row_ind, p.csr_pos, f, m_val,
        scratch);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
}

template <Triangle TRI>
void spmv(stream_t s, Factors f, index_t n, const double* x, double* y)
{
  const int rows_per_block = spmv_threads / 32;
  triangle_spmv_kernel<TRI><<<cuda_detail::grid_for(n, rows_per_block), spmv_threads, 0, s>>>(n, f, x, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace

void isai_generate(stream_t s, const IsaiDevicePattern& p, CsrView<const double> LU, double* m_val, double* scratch)
{
  if (p.host == nullptr) throw std::invalid_argument("cuda::isai_generate: IsaiDevicePattern without host pattern");
  const IsaiPattern& h = *p.host;
  if (LU.n != h.n)
    throw std::invalid_argument("cuda::isai_generate: LU has " + std::to_string(LU.n) + " rows, the pattern " +
                                std::to_string(h.n));
  if (h.n == 0 || h.nnz() == 0) return;
  if (!h.long_cols.empty() && scratch == nullptr)
    throw std::invalid_argument("cuda::isai_generate: pattern has long columns but scratch is null");
  const Factors f{LU.row_ptr, LU.col, LU.val};
  if (h.tri == Triangle::unit_lower)
    generate<Triangle::unit_lower>(s, p, f, m_val, scratch);
  else
    generate<Triangle::upper>(s, p, f, m_val, scratch);
}

void triangle_spmv(stream_t s, Triangle tri, CsrView<const double> LU, const double* x, double* y)
{
  if (LU.n <= 0) return;
  const Factors f{LU.row_ptr, LU.col, LU.val};
  if (tri == Triangle::unit_lower)
    spmv<Triangle::unit_lower>(s, f, LU.n, x, y);
  else
    spmv<Triangle::upper>(s, f, LU.n, x, y);
}

}  // namespace blockres::kernels::cuda
