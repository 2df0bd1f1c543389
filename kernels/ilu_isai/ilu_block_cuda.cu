// CUDA block ILU(0) and exact block triangular solves (kernels/ilu_isai/ilu_block.hpp), level-scheduled:
// the block rows of one level are independent, so each level is one kernel launch.
//
// Factorisation: a group of threads per block row, its threads over the entries of the block
// operations: a warp (4 per thread block) for bs <= 8, a thread block of up to 256 threads for
// larger bs. For each strictly lower block (i, k) in increasing k the group copies A_ik to its
// working block W, forms L_ik = W D_k in place of A_ik, then splits the updates
// A_ij -= L_ik U_kj over (block (k, j), entry) pairs, finding (i, j) by a binary search of row i
// right of (i, k); finally it inverts U_ii in W by Gauss–Jordan with partial pivoting (the
// pivot search by the group's first thread, the eliminations entry-parallel) into D_i. The
// working set (W, two vectors, a reduction array) lives in shared memory up to 48 KB (bs <= 75)
// and in a global workspace slice per thread block above, so no block size is rejected. Every
// sum runs over m in increasing order as in the CPU reference.
// Solves: a warp per block row (4 per thread block). bs <= 32: the warp's lanes form 32 / bs
// segments of bs lanes, lane (segment g, row r) sums row r of every (32 / bs)-th off-diagonal
// block from the g-th on, and the segments' partial sums are added in segment order through
// shared memory (deterministic, no atomics). bs > 32: lane l owns rows l, l + 32, ... The upper
// solve then multiplies by D_i (lanes over rows, the right-hand side in shared memory).
#include "kernels/cuda_check.hpp"
#include "kernels/ilu_isai/ilu_block.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <stdexcept>
#include <string>

namespace blockres::kernels::cuda {

namespace {

constexpr int warp_groups = 4;         // warps (block rows) per thread block: warp kernels
constexpr int warp_max_bs = 8;         // factorisation: a warp per block row up to this bs
constexpr int block_max_threads = 256; // factorisation: threads per block row above it
constexpr size64_t smem_budget = 48 * 1024;
constexpr size64_t max_grid = 65535LL * 32;
constexpr size64_t workspace_blocks = 4 * 132;  // thread blocks of the grid with a global workspace

// Doubles of one group's working set: W (bs^2), row_s, col_s, perm (3 bs), the reduction array
// (one per thread) and the pivot's magnitude threshold.
size64_t group_doubles(int bs, int threads) { return size64_t(bs) * bs + 3 * size64_t(bs) + threads + 1; }

int factor_threads(int bs)
{
  if (bs <= warp_max_bs) return 32;
  const size64_t want = (size64_t(bs) * bs + 31) / 32 * 32;
  return static_cast<int>(std::clamp<size64_t>(want, 64, block_max_threads));
}

struct FactorPlan {
  bool warp = true;
  int threads = 32;            // per group
  size64_t slice = 0;          // doubles per group
  bool global = false;         // working set in the workspace instead of shared memory
};

FactorPlan factor_plan(int bs)
{
  FactorPlan p;
  p.threads = factor_threads(bs);
  p.warp = bs <= warp_max_bs;
  p.slice = group_doubles(bs, p.threads);
  const size64_t groups_per_block = p.warp ? warp_groups : 1;
  p.global = !p.warp && p.slice * groups_per_block * size64_t(sizeof(double)) > smem_budget;
  return p;
}

// A group of threads working on one block row: a warp or the whole thread block.
template <bool WARP>
struct Group {
  int rank, size;
  __device__ void sync() const
  {
    if constexpr (WARP) __syncwarp();
    else __syncthreads();
  }
};

// *info holds the smallest bad block row while the levels run (INT_MAX: none); the final kernel
// turns it into 0 / i + 1.
__global__ void info_init_kernel(int* info) { *info = INT_MAX; }
__global__ void info_final_kernel(int* info)
{
  const int v = *info;
  *info = v == INT_MAX ? 0 : v + 1;
}

// Block ILU(0) of the `count` block rows rows[0 .. count) of one level (see the file comment).
template <bool WARP>
__global__ void __launch_bounds__(WARP ? 32 * warp_groups : block_max_threads)
    factor_level_kernel(const index_t* __restrict__ rows, index_t count, const index_t* __restrict__ row_ptr,
                        const index_t* __restrict__ col, const index_t* __restrict__ diag, int bs, double* val,
                        double* __restrict__ dinv, int* info, double* workspace, size64_t slice)
{
  extern __shared__ double smem[];
  Group<WARP> g;
  size64_t first, stride;
  double* buf;
  if constexpr (WARP) {
    g.rank = threadIdx.x & 31;
    g.size = 32;
    const int w = threadIdx.x >> 5;
    first = size64_t(blockIdx.x) * warp_groups + w;
    stride = size64_t(gridDim.x) * warp_groups;
    buf = smem + w * slice;
  } else {
    g.rank = threadIdx.x;
    g.size = blockDim.x;
    first = blockIdx.x;
    stride = gridDim.x;
    buf = workspace ? workspace + size64_t(blockIdx.x) * slice : smem;
  }
  const size64_t bs2 = size64_t(bs) * bs;
  double* W = buf;
  double* row_s = W + bs2;
  double* col_s = row_s + bs;
  double* perm = col_s + bs;
  double* red = perm + bs;  // g.size + 1

  for (size64_t w = first; w < count; w += stride) {  // uniform over the group
    const index_t i = rows[w];
    const index_t di = diag[i], re = row_ptr[i + 1];
    for (index_t p = row_ptr[i]; p < di; ++p) {
      const index_t k = col[p];
      double* l = val + size64_t(p) * bs2;
      const double* d = dinv + size64_t(k) * bs2;
      for (size64_t e = g.rank; e < bs2; e += g.size) W[e] = l[e];
      g.sync();
      for (size64_t e = g.rank; e < bs2; e += g.size) {
        const int r = static_cast<int>(e / bs), c = static_cast<int>(e - size64_t(r) * bs);
        double acc = 0.0;
        for (int m = 0; m < bs; ++m) acc += W[size64_t(r) * bs + m] * d[size64_t(m) * bs + c];
        l[e] = acc;
      }
      g.sync();  // L_ik complete (global writes visible to the group) before the updates read it
      const index_t q0 = diag[k] + 1, q1 = row_ptr[k + 1];
      const size64_t items = size64_t(q1 - q0) * bs2;
      index_t lo = p + 1;  // items of one thread visit increasing j: the search window shrinks
      for (size64_t it = g.rank; it < items; it += g.size) {
        const index_t q = q0 + static_cast<index_t>(it / bs2);
        const size64_t e = it - size64_t(q - q0) * bs2;
        const index_t j = col[q];
        index_t hi = re;
        while (lo < hi) {
          const index_t mid = lo + (hi - lo) / 2;
          if (col[mid] < j) lo = mid + 1; else hi = mid;
        }
        if (lo < re && col[lo] == j) {
          const int r = static_cast<int>(e / bs), c = static_cast<int>(e - size64_t(r) * bs);
          const double* u = val + size64_t(q) * bs2;
          double acc = 0.0;
          for (int m = 0; m < bs; ++m) acc += l[size64_t(r) * bs + m] * u[size64_t(m) * bs + c];
          val[size64_t(lo) * bs2 + e] -= acc;
        }
      }
      g.sync();  // row i's updates visible before the next block reads them
    }

    // D_i = U_ii^{-1}: Gauss–Jordan with partial pivoting in W.
    double mx = 0.0;
    for (size64_t e = g.rank; e < bs2; e += g.size) {
      const double x = val[size64_t(di) * bs2 + e];
      W[e] = x;
      mx = fmax(mx, isfinite(x) ? fabs(x) : INFINITY);
    }
    red[g.rank] = mx;
    g.sync();
    bool bad = false;
    if (g.rank == 0) {
      for (int t = 1; t < g.size; ++t) mx = fmax(mx, red[t]);
      bad = !(mx < INFINITY);
      red[g.size] = bs * DBL_EPSILON * mx;
    }
    for (int s = 0; s < bs; ++s) {
      if (g.rank == 0) {
        int pr = s;
        double best = fabs(W[size64_t(s) * bs + s]);
        for (int r = s + 1; r < bs; ++r)
          if (fabs(W[size64_t(r) * bs + s]) > best) best = fabs(W[size64_t(r) * bs + s]), pr = r;
        perm[s] = pr;
      }
      g.sync();
      const int pr = static_cast<int>(perm[s]);
      if (pr != s)
        for (int c = g.rank; c < bs; c += g.size) {
          const double t = W[size64_t(s) * bs + c];
          W[size64_t(s) * bs + c] = W[size64_t(pr) * bs + c];
          W[size64_t(pr) * bs + c] = t;
        }
      g.sync();
      const double piv = W[size64_t(s) * bs + s];
      if (g.rank == 0 && (piv == 0.0 || !isfinite(piv) || fabs(piv) <= red[g.size])) bad = true;
      const double rinv = 1.0 / piv;
      for (int c = g.rank; c < bs; c += g.size) row_s[c] = (c == s ? 1.0 : W[size64_t(s) * bs + c]) * rinv;
      for (int r = g.rank; r < bs; r += g.size) col_s[r] = W[size64_t(r) * bs + s];
      g.sync();
      for (size64_t e = g.rank; e < bs2; e += g.size) {
        const int r = static_cast<int>(e / bs), c = static_cast<int>(e - size64_t(r) * bs);
        W[e] = r == s ? row_s[c] : (c == s ? 0.0 : W[e]) - col_s[r] * row_s[c];
      }
      g.sync();
    }
    // Undo the row interchanges as column swaps in reverse order, a thread per row.
    double* d = dinv + size64_t(i) * bs2;
    for (int r = g.rank; r < bs; r += g.size) {
      double* wr = W + size64_t(r) * bs;
      for (int s = bs - 1; s >= 0; --s) {
        const int pr = static_cast<int>(perm[s]);
        if (pr != s) {
          const double t = wr[s];
          wr[s] = wr[pr];
          wr[pr] = t;
        }
      }
      for (int c = 0; c < bs; ++c) d[size64_t(r) * bs + c] = wr[c];
    }
    if (g.rank == 0 && bad) atomicMin(info, i);
    g.sync();  // W, perm and red are reused by the next block row
  }
}

// Sum over the off-diagonal blocks p in [p0, p1) of row r of block p times x_{col[p]}, for the
// lane's rows (see the file comment); the finished sums of rows r0 .. r0 + 31 are in out[0 ..).
// Returns after a __syncwarp; `part` holds 32 doubles of the warp's shared memory.
__device__ __forceinline__ void row_sums(int lane, int bs, int r0, index_t p0, index_t p1,
                                         const index_t* __restrict__ col, const double* __restrict__ val,
                                         const double* x, double* part, double* out)
{
  const size64_t bs2 = size64_t(bs) * bs;
  const int segs = bs <= 32 ? 32 / bs : 1;
  const int r = bs <= 32 ? lane % bs : r0 + lane;
  const int seg = bs <= 32 ? lane / bs : 0;
  double sum = 0.0;
  if (seg < segs && r < bs)
    for (index_t p = p0 + seg; p < p1; p += segs) {
      const double* a = val + size64_t(p) * bs2 + size64_t(r) * bs;
      const double* xc = x + size64_t(col[p]) * bs;
      for (int c = 0; c < bs; ++c) sum += a[c] * xc[c];
    }
  part[lane] = sum;
  __syncwarp();
  const int rows = bs <= 32 ? bs : min(32, bs - r0);
  double total = 0.0;
  if (lane < rows) {
    if (bs <= 32)
      for (int t = 0; t < segs; ++t) total += part[t * bs + lane];
    else
      total = part[lane];
  }
  __syncwarp();
  if (lane < rows) out[lane] = total;
  __syncwarp();
}

__device__ inline size64_t global_warp() { return (size64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; }
__device__ inline size64_t warp_stride() { return (size64_t(gridDim.x) * blockDim.x) >> 5; }

// x_i = b_i - sum_{k<i} L_ik x_k for the block rows of one level.
__global__ void __launch_bounds__(32 * warp_groups, 8)
    lower_level_kernel(const index_t* __restrict__ rows, index_t count, const index_t* __restrict__ row_ptr,
                       const index_t* __restrict__ col, const index_t* __restrict__ diag, int bs,
                       const double* __restrict__ val, const double* __restrict__ b, double* x)
{
  extern __shared__ double smem[];
  const int lane = threadIdx.x & 31;
  double* part = smem + (threadIdx.x >> 5) * size64_t(64 + bs);
  double* sums = part + 32;
  for (size64_t w = global_warp(); w < count; w += warp_stride()) {
    const index_t i = rows[w];
    for (int r0 = 0; r0 < bs; r0 += 32) {
      row_sums(lane, bs, r0, row_ptr[i], diag[i], col, val, x, part, sums);
      const int r = r0 + lane;
      if (lane < 32 && r < bs) x[size64_t(i) * bs + r] = b[size64_t(i) * bs + r] - sums[lane];
      __syncwarp();
      if (bs <= 32) break;
    }
  }
}

// x_i = D_i (b_i - sum_{j>i} U_ij x_j) for the block rows of one upper level.
__global__ void __launch_bounds__(32 * warp_groups, 8)
    upper_level_kernel(const index_t* __restrict__ rows, index_t count, const index_t* __restrict__ row_ptr,
                       const index_t* __restrict__ col, const index_t* __restrict__ diag, int bs,
                       const double* __restrict__ val, const double* __restrict__ dinv,
                       const double* __restrict__ b, double* x)
{
  extern __shared__ double smem[];
  const int lane = threadIdx.x & 31;
  double* part = smem + (threadIdx.x >> 5) * size64_t(64 + bs);
  double* y = part + 32;  // bs + 32 doubles: the right-hand side y_i (row_sums writes 32 at a time)
  const size64_t bs2 = size64_t(bs) * bs;
  for (size64_t w = global_warp(); w < count; w += warp_stride()) {
    const index_t i = rows[w];
    for (int r0 = 0; r0 < bs; r0 += 32) {
      row_sums(lane, bs, r0, diag[i] + 1, row_ptr[i + 1], col, val, x, part, y + r0);
      const int r = r0 + lane;
      if (r < bs && lane < (bs <= 32 ? bs : 32)) y[r] = b[size64_t(i) * bs + r] - y[r];
      __syncwarp();
      if (bs <= 32) break;
    }
    const double* d = dinv + size64_t(i) * bs2;
    for (int r = lane; r < bs; r += 32) {
      double sum = 0.0;
      for (int c = 0; c < bs; ++c) sum += d[size64_t(r) * bs + c] * y[c];
      x[size64_t(i) * bs + r] = sum;
    }
    __syncwarp();  // y is reused by the next block row
  }
}

// D_i = U_ii^{-1} for small blocks (bs <= thread_invert_max_bs), a thread per block row with the
// block in local memory: cpu::block_ilu0_invert's operations in its order (pivot search, swaps,
// Gauss–Jordan steps, column swaps undone in reverse).
constexpr int thread_invert_max_bs = 8;
__global__ void invert_diagonal_kernel(index_t n, int bs, const index_t* __restrict__ diag,
                                       const double* __restrict__ val, double* __restrict__ dinv, int* info)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    double w[thread_invert_max_bs * thread_invert_max_bs], row_s[thread_invert_max_bs], col_s[thread_invert_max_bs];
    int perm[thread_invert_max_bs];
    const size64_t bs2 = size64_t(bs) * bs;
    const double* u = val + size64_t(diag[i]) * bs2;
    double max_abs = 0.0;
    for (int e = 0; e < bs * bs; ++e) {
      w[e] = u[e];
      max_abs = fmax(max_abs, isfinite(w[e]) ? fabs(w[e]) : INFINITY);
    }
    bool bad = !(max_abs < INFINITY);
    const double tiny = bs * DBL_EPSILON * max_abs;
    for (int st = 0; st < bs; ++st) {
      int p = st;
      double best = fabs(w[st * bs + st]);
      for (int r = st + 1; r < bs; ++r)
        if (fabs(w[r * bs + st]) > best) best = fabs(w[r * bs + st]), p = r;
      perm[st] = p;
      if (p != st)
        for (int c = 0; c < bs; ++c) {
          const double t = w[st * bs + c];
          w[st * bs + c] = w[p * bs + c];
          w[p * bs + c] = t;
        }
      const double piv = w[st * bs + st];
      if (piv == 0.0 || !isfinite(piv) || fabs(piv) <= tiny) bad = true;
      const double rinv = 1.0 / piv;
      for (int c = 0; c < bs; ++c) row_s[c] = (c == st ? 1.0 : w[st * bs + c]) * rinv;
      for (int r = 0; r < bs; ++r) col_s[r] = w[r * bs + st];
      for (int r = 0; r < bs; ++r)
        for (int c = 0; c < bs; ++c)
          w[r * bs + c] = r == st ? row_s[c] : __dsub_rn(c == st ? 0.0 : w[r * bs + c], __dmul_rn(col_s[r], row_s[c]));
    }
    double* d = dinv + size64_t(i) * bs2;
    for (int r = 0; r < bs; ++r) {
      for (int st = bs - 1; st >= 0; --st) {
        const int p = perm[st];
        if (p != st) {
          const double t = w[r * bs + st];
          w[r * bs + st] = w[r * bs + p];
          w[r * bs + p] = t;
        }
      }
      for (int c = 0; c < bs; ++c) d[size64_t(r) * bs + c] = w[r * bs + c];
    }
    if (bad) atomicMin(info, i);
  }
}

// One Jacobi sweep of the iterative block ILU(0) (ilu_block.hpp), a thread per entry (position e,
// row r, column c) of every block; sums in the CPU reference's order.
__global__ void sweep_kernel(size64_t total, int bs, const size64_t* __restrict__ pair_ptr,
                             const index_t* __restrict__ pair_l, const index_t* __restrict__ pair_u,
                             const index_t* __restrict__ row_of, const index_t* __restrict__ col,
                             const double* __restrict__ a, const double* __restrict__ in,
                             const double* __restrict__ dinv_in, double* __restrict__ out, bool products)
{
  const size64_t bs2 = size64_t(bs) * bs;
  for (size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; t < total;
       t += size64_t(gridDim.x) * blockDim.x) {
    const size64_t e = t / bs2, rc = t - e * bs2;
    const int r = static_cast<int>(rc / bs), c = static_cast<int>(rc - size64_t(r) * bs);
    const index_t i = row_of[e], j = col[e];
    const size64_t q0 = products ? pair_ptr[e] : 0, q1 = products ? pair_ptr[e + 1] : 0;
    // S(r, m) of the updated block; the lower blocks need the whole row r (times D_j).
    auto S = [&](int m) {
      double v = a[e * bs2 + size64_t(r) * bs + m];
      for (size64_t q = q0; q < q1; ++q) {
        const double* l = in + size64_t(pair_l[q]) * bs2 + size64_t(r) * bs;
        const double* u = in + size64_t(pair_u[q]) * bs2 + m;
        double acc = 0.0;
        for (int x = 0; x < bs; ++x) acc += l[x] * u[size64_t(x) * bs];
        v -= acc;
      }
      return v;
    };
    double o;
    if (j < i) {
      const double* d = dinv_in + size64_t(j) * bs2 + c;
      o = 0.0;
      for (int m = 0; m < bs; ++m) o += S(m) * d[size64_t(m) * bs];
    } else {
      o = S(c);
    }
    out[t] = o;
  }
}

template <class T>
const IluSchedule& checked_host(const IluDeviceSchedule& sched, const BsrView<T>& A, const char* what)
{
  if (sched.host == nullptr)
    throw std::invalid_argument(std::string(what) + ": device schedule without its host schedule");
  if (A.nrows != A.ncols)
    throw std::invalid_argument(std::string(what) + ": the matrix is not square");
  if (A.bs < 1) throw std::invalid_argument(std::string(what) + ": block size " + std::to_string(A.bs) + " < 1");
  if (sched.host->n != A.nrows)
    throw std::invalid_argument(std::string(what) + ": schedule for " + std::to_string(sched.host->n) +
                                " block rows but the matrix has " + std::to_string(A.nrows));
  if (A.nrows > 0 && (sched.diag == nullptr || sched.lower_rows == nullptr || sched.upper_rows == nullptr))
    throw std::invalid_argument(std::string(what) + ": device schedule arrays missing");
  return *sched.host;
}

template <class Launch>
void for_each_level(const std::vector<index_t>& level_ptr, Launch&& launch)
{
  for (std::size_t l = 0; l + 1 < level_ptr.size(); ++l) {
    const index_t first = level_ptr[l], count = level_ptr[l + 1] - first;
    if (count == 0) continue;
    launch(first, count);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
}

unsigned warp_grid(index_t rows)
{
  return static_cast<unsigned>(std::clamp<size64_t>((size64_t(rows) + warp_groups - 1) / warp_groups, 1, max_grid));
}

size64_t workspace_grid(const IluSchedule& s)
{
  index_t widest = 0;
  for (std::size_t l = 0; l + 1 < s.lower_level_ptr.size(); ++l)
    widest = std::max(widest, s.lower_level_ptr[l + 1] - s.lower_level_ptr[l]);
  return std::clamp<size64_t>(widest, 1, workspace_blocks);
}

std::size_t solve_smem(int bs) { return static_cast<std::size_t>(warp_groups * (64 + size64_t(bs)) * sizeof(double)); }

// w = b - T x (cpu::block_triangle_residual): a thread per scalar row (i, a), the row's blocks in
// the triangle in increasing position, row a of each block times x_j. Neighbouring threads read
// neighbouring rows of the same block, so a warp reads whole blocks for bs <= 32.
// TRI = upper with ALL: every block of the row (bsr_gemv_fp32's product, y = sum + beta y).
template <Triangle TRI, bool ALL, class T>
__global__ void __launch_bounds__(256)
    triangle_residual_kernel(size64_t rows, int bs, const index_t* __restrict__ row_ptr,
                             const index_t* __restrict__ col, const T* __restrict__ val,
                             const double* b, const double* __restrict__ x, double* w, double beta = 0.0)
{
  const size64_t bs2 = size64_t(bs) * bs;
  for (size64_t t = size64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < rows; t += size64_t(gridDim.x) * blockDim.x) {
    const index_t i = static_cast<index_t>(t / bs);
    const int a = static_cast<int>(t - size64_t(i) * bs);
    double sum = 0.0;
    for (index_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) {
      const index_t j = col[p];
      if (!ALL && (TRI == Triangle::unit_lower ? j >= i : j < i)) continue;
      const T* v = val + size64_t(p) * bs2 + size64_t(a) * bs;
      const double* xj = x + size64_t(j) * bs;
      for (int c = 0; c < bs; ++c) sum = fma(double(v[c]), xj[c], sum);
    }
    if (ALL) w[t] = beta == 0.0 ? sum : fma(beta, w[t], sum);
    else w[t] = b[t] - (TRI == Triangle::unit_lower ? x[t] + sum : sum);
  }
}

template <class T>
void launch_triangle_residual(stream_t s, Triangle tri, BsrView<const T> LU, const double* b, const double* x, double* w)
{
  if (LU.nrows != LU.ncols || LU.bs < 1)
    throw std::invalid_argument("cuda::block_triangle_residual: LU is not square");
  const size64_t rows = size64_t(LU.nrows) * LU.bs;
  if (rows == 0) return;
  const auto grid = static_cast<unsigned>(std::clamp<size64_t>((rows + 255) / 256, 1, max_grid));
  if (tri == Triangle::unit_lower)
    triangle_residual_kernel<Triangle::unit_lower, false, T>
        <<<grid, 256, 0, s>>>(rows, LU.bs, LU.row_ptr, LU.col_ind, LU.values, b, x, w);
  else
    triangle_residual_kernel<Triangle::upper, false, T>
        <<<grid, 256, 0, s>>>(rows, LU.bs, LU.row_ptr, LU.col_ind, LU.values, b, x, w);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace

size64_t block_ilu0_workspace_doubles(const IluSchedule& s, int bs)
{
  const FactorPlan p = factor_plan(bs);
  return p.global ? workspace_grid(s) * p.slice : 0;
}

void block_ilu0_factor(stream_t s, const IluDeviceSchedule& sched, BsrView<double> A, double* dinv, int* info,
                       double* workspace)
{
  const IluSchedule& h = checked_host(sched, A, "cuda::block_ilu0_factor");
  if (info == nullptr) throw std::invalid_argument("cuda::block_ilu0_factor: null info");
  const FactorPlan plan = factor_plan(A.bs);
  if (plan.global && workspace == nullptr)
    throw std::invalid_argument("cuda::block_ilu0_factor: block size " + std::to_string(A.bs) +
                                " needs a workspace (block_ilu0_workspace_doubles)");
  info_init_kernel<<<1, 1, 0, s>>>(info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  for_each_level(h.lower_level_ptr, [&](index_t first, index_t count) {
    const index_t* rows = sched.lower_rows + first;
    if (plan.warp) {
      const std::size_t bytes = static_cast<std::size_t>(warp_groups * plan.slice * sizeof(double));
      factor_level_kernel<true><<<warp_grid(count), 32 * warp_groups, bytes, s>>>(
          rows, count, A.row_ptr, A.col_ind, sched.diag, A.bs, A.values, dinv, info, nullptr, plan.slice);
    } else if (!plan.global) {
      const std::size_t bytes = static_cast<std::size_t>(plan.slice * sizeof(double));
      const auto grid = static_cast<unsigned>(std::clamp<size64_t>(count, 1, max_grid));
      factor_level_kernel<false><<<grid, plan.threads, bytes, s>>>(rows, count, A.row_ptr, A.col_ind, sched.diag,
                                                                   A.bs, A.values, dinv, info, nullptr, plan.slice);
    } else {
      const auto grid = static_cast<unsigned>(std::min<size64_t>(count, workspace_grid(h)));
      factor_level_kernel<false><<<grid, plan.threads, 0, s>>>(rows, count, A.row_ptr, A.col_ind, sched.diag, A.bs,
                                                               A.values, dinv, info, workspace, plan.slice);
    }
  });
  info_final_kernel<<<1, 1, 0, s>>>(info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void block_ilu0_lower_solve(stream_t s, const IluDeviceSchedule& sched, BsrView<const double> LU, const double* b,
                            double* x)
{
  const IluSchedule& h = checked_host(sched, LU, "cuda::block_ilu0_lower_solve");
  for_each_level(h.lower_level_ptr, [&](index_t first, index_t count) {
    lower_level_kernel<<<warp_grid(count), 32 * warp_groups, solve_smem(LU.bs), s>>>(
        sched.lower_rows + first, count, LU.row_ptr, LU.col_ind, sched.diag, LU.bs, LU.values, b, x);
  });
}

void block_ilu0_upper_solve(stream_t s, const IluDeviceSchedule& sched, BsrView<const double> LU,
                            const double* dinv, const double* b, double* x)
{
  const IluSchedule& h = checked_host(sched, LU, "cuda::block_ilu0_upper_solve");
  for_each_level(h.upper_level_ptr, [&](index_t first, index_t count) {
    upper_level_kernel<<<warp_grid(count), 32 * warp_groups, solve_smem(LU.bs), s>>>(
        sched.upper_rows + first, count, LU.row_ptr, LU.col_ind, sched.diag, LU.bs, LU.values, dinv, b, x);
  });
}

void block_ilu_sweep(stream_t s, const BlockIluSweepDevicePlan& p, BsrView<const double> A, const double* in,
                     const double* dinv_in, double* out, bool products)
{
  if (p.host == nullptr || p.host->nrows != A.nrows)
    throw std::invalid_argument("cuda::block_ilu_sweep: the plan was made for another pattern");
  const size64_t total = size64_t(p.host->row_of.size()) * size64_t(A.bs) * A.bs;
  if (total == 0) return;
  const auto grid = static_cast<unsigned>(std::clamp<size64_t>((total + 255) / 256, 1, max_grid));
  sweep_kernel<<<grid, 256, 0, s>>>(total, A.bs, p.pair_ptr, p.pair_l, p.pair_u, p.row_of, A.col_ind, A.values, in,
                                   dinv_in, out, products);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void block_ilu_invert_diagonal(stream_t s, const IluDeviceSchedule& sched, const BlockIluSweepDevicePlan& p,
                               BsrView<const double> LU, double* dinv, int* info, double* workspace)
{
  const IluSchedule& h = checked_host(sched, LU, "cuda::block_ilu_invert_diagonal");
  if (info == nullptr) throw std::invalid_argument("cuda::block_ilu_invert_diagonal: null info");
  const FactorPlan plan = factor_plan(LU.bs);
  if (plan.global && workspace == nullptr)
    throw std::invalid_argument("cuda::block_ilu_invert_diagonal: block size " + std::to_string(LU.bs) +
                                " needs a workspace (block_ilu0_workspace_doubles)");
  info_init_kernel<<<1, 1, 0, s>>>(info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  // Small blocks: a thread per block row. Larger: the factorisation kernel on rows that start at
  // their diagonal block (row_ptr := diag_next):
  // no strictly lower block, so it only inverts U_ii into D_i, every row independent: one launch.
  // (The kernel writes nothing but D_i and info when a row has no lower block.)
  const index_t n = h.n;
  if (n > 0 && LU.bs <= thread_invert_max_bs) {
    const auto grid = static_cast<unsigned>(std::clamp<size64_t>((size64_t(n) + 127) / 128, 1, max_grid));
    invert_diagonal_kernel<<<grid, 128, 0, s>>>(n, LU.bs, sched.diag, LU.values, dinv, info);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  } else if (n > 0) {
    double* values = const_cast<double*>(LU.values);
    if (plan.warp) {
      const std::size_t bytes = static_cast<std::size_t>(warp_groups * plan.slice * sizeof(double));
      factor_level_kernel<true><<<warp_grid(n), 32 * warp_groups, bytes, s>>>(
          sched.lower_rows, n, p.diag_next, LU.col_ind, sched.diag, LU.bs, values, dinv, info, nullptr, plan.slice);
    } else if (!plan.global) {
      const std::size_t bytes = static_cast<std::size_t>(plan.slice * sizeof(double));
      const auto grid = static_cast<unsigned>(std::clamp<size64_t>(n, 1, max_grid));
      factor_level_kernel<false><<<grid, plan.threads, bytes, s>>>(sched.lower_rows, n, p.diag_next, LU.col_ind,
                                                                   sched.diag, LU.bs, values, dinv, info, nullptr,
                                                                   plan.slice);
    } else {
      const auto grid = static_cast<unsigned>(std::min<size64_t>(n, workspace_grid(h)));
      factor_level_kernel<false><<<grid, plan.threads, 0, s>>>(sched.lower_rows, n, p.diag_next, LU.col_ind,
                                                               sched.diag, LU.bs, values, dinv, info, workspace,
                                                               plan.slice);
    }
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
  info_final_kernel<<<1, 1, 0, s>>>(info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void block_triangle_residual(stream_t s, Triangle tri, BsrView<const double> LU, const double* b, const double* x,
                             double* w)
{
  launch_triangle_residual(s, tri, LU, b, x, w);
}

void block_triangle_residual(stream_t s, Triangle tri, BsrView<const float> LU, const double* b, const double* x,
                             double* w)
{
  launch_triangle_residual(s, tri, LU, b, x, w);
}

void bsr_gemv_fp32(stream_t s, BsrView<const float> M, const double* x, double beta, double* y)
{
  if (M.bs < 1) throw std::invalid_argument("cuda::bsr_gemv_fp32: block size below 1");
  const size64_t rows = size64_t(M.nrows) * M.bs;
  if (rows == 0) return;
  const auto grid = static_cast<unsigned>(std::clamp<size64_t>((rows + 255) / 256, 1, max_grid));
  triangle_residual_kernel<Triangle::upper, true, float>
      <<<grid, 256, 0, s>>>(rows, M.bs, M.row_ptr, M.col_ind, M.values, nullptr, x, y, beta);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::kernels::cuda
