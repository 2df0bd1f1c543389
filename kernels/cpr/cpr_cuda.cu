// CUDA CPR kernels (kernels/cpr/cpr.hpp): quasi-IMPES weights (a thread per cell for bs <= 8, a
// thread block per cell in shared memory above), pressure-matrix values (a warp per block row),
// restriction and prolongation (a thread per cell).
#include "kernels/cpr/cpr.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/launch.cuh"

#include <stdexcept>

namespace blockres::kernels::cuda {

namespace {

constexpr int small_weights_max = 8;   // largest bs solved by one thread in local memory
constexpr int weights_block = 128;     // threads per cell above that

// One thread per cell: Gauss elimination with partial pivoting on D^T (same operation order as
// the CPU reference), then max-abs normalisation.
template <int BS>
__global__ void weights_small_kernel(index_t nrows, const index_t* __restrict__ diag_pos,
                                     const double* __restrict__ values, double* __restrict__ w,
                                     int* __restrict__ info)
{
  constexpr size64_t bb = size64_t(BS) * BS;
  for (index_t r = blockIdx.x * blockDim.x + threadIdx.x; r < nrows; r += gridDim.x * blockDim.x) {
    const double* d = values + size64_t(diag_pos[r]) * bb;
    double m[BS * BS], x[BS];
#pragma unroll
    for (int i = 0; i < BS; ++i) {
#pragma unroll
      for (int j = 0; j < BS; ++j) m[i * BS + j] = d[j * BS + i];
      x[i] = i == 0 ? 1.0 : 0.0;
    }
    int fail = 0;
    for (int k = 0; k < BS; ++k) {
      int p = k;
      for (int i = k + 1; i < BS; ++i)
        if (fabs(m[i * BS + k]) > fabs(m[p * BS + k])) p = i;
      const double piv = m[p * BS + k];
      if (piv == 0.0 || !isfinite(piv)) {
        fail = k + 1;
        break;
      }
      if (p != k) {
        for (int j = k; j < BS; ++j) {
          const double t = m[p * BS + j];
          m[p * BS + j] = m[k * BS + j];
          m[k * BS + j] = t;
        }
        const double t = x[p];
        x[p] = x[k];
        x[k] = t;
      }
      for (int i = k + 1; i < BS; ++i) {
        const double l = m[i * BS + k] / piv;
        for (int j = k + 1; j < BS; ++j) m[i * BS + j] -= l * m[k * BS + j];
        x[i] -= l * x[k];
      }
    }
    double* wr = w + size64_t(r) * BS;
    if (!fail) {
      double amax = 0.0;
      for (int i = BS - 1; i >= 0; --i) {
        double s = x[i];
        for (int j = i + 1; j < BS; ++j) s -= m[i * BS + j] * x[j];
        x[i] = s / m[i * BS + i];
        amax = fmax(amax, fabs(x[i]));
      }
      if (!(amax > 0.0) || !isfinite(amax)) {
        fail = BS;
      } else {
#pragma unroll
        for (int i = 0; i < BS; ++i) wr[i] = x[i] / amax;
      }
    }
    info[r] = fail;
  }
}

// One thread block per cell: D^T and the right-hand side in shared memory ((bs*bs + bs) doubles,
// at most 33 KB for bs = 64); the pivot search and the final max by warp 0, row updates by all.
__global__ void weights_block_kernel(index_t nrows, int bs, const index_t* __restrict__ diag_pos,
                                     const double* __restrict__ values, double* __restrict__ w,
                                     int* __restrict__ info)
{
  extern __shared__ double sh[];
  double* m = sh;
  double* x = sh + size64_t(bs) * bs;
  __shared__ int piv_row, fail;
  __shared__ double scale;
  const int tid = threadIdx.x, lane = tid & 31, nt = blockDim.x;
  const int bb = bs * bs;
  for (index_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const double* d = values + size64_t(diag_pos[r]) * bb;
    for (int t = tid; t < bb; t += nt) {  // coalesced read of D, transposed store
      const int i = t / bs, j = t - i * bs;
      m[j * bs + i] = d[t];
    }
    for (int t = tid; t < bs; t += nt) x[t] = t == 0 ? 1.0 : 0.0;
    if (tid == 0) fail = 0;
    __syncthreads();
    for (int k = 0; k < bs; ++k) {
      if (tid < 32) {  // argmax |m(i, k)| over i >= k, the smallest index among ties (as on the CPU)
        double best = -1.0;
        int bi = bs;
        for (int i = k + lane; i < bs; i += 32) {
          const double v = fabs(m[i * bs + k]);
          if (v > best) best = v, bi = i;
        }
        for (int off = 16; off > 0; off >>= 1) {
          const double ob = __shfl_down_sync(0xffffffffu, best, off);
          const int oi = __shfl_down_sync(0xffffffffu, bi, off);
          if (ob > best || (ob == best && oi < bi)) best = ob, bi = oi;
        }
        if (lane == 0) {
          piv_row = bi;
          const double piv = bi < bs ? m[bi * bs + k] : 0.0;
          if (piv == 0.0 || !isfinite(piv)) fail = k + 1;
        }
      }
      __syncthreads();
      if (fail) break;  // shared: uniform across the block
      const int p = piv_row;
      if (p != k) {
        for (int j = k + tid; j <= bs; j += nt) {  // j == bs: the right-hand side
          double* a = j < bs ? &m[p * bs + j] : &x[p];
          double* b = j < bs ? &m[k * bs + j] : &x[k];
          const double t = *a;
          *a = *b;
          *b = t;
        }
        __syncthreads();
      }
      const double piv = m[k * bs + k];
      // The multipliers l_i = m(i, k) / piv, once per row, into column k (which no later step reads): one
      // division a row instead of one per updated entry (bs = 64: 2080 instead of 87360 a cell), same values.
      for (int i = k + 1 + tid; i < bs; i += nt) m[i * bs + k] /= piv;
      __syncthreads();
      const int rows = bs - k - 1, cols = bs - k;  // rows k+1.., columns k+1..bs-1 and the rhs
      for (int t = tid; t < rows * cols; t += nt) {
        const int i = k + 1 + t / cols, jj = t - (t / cols) * cols, j = k + 1 + jj;
        const double l = m[i * bs + k];
        if (j < bs) m[i * bs + j] -= l * m[k * bs + j];
        else x[i] -= l * x[k];
      }
      __syncthreads();
    }
    if (!fail) {
      for (int i = bs - 1; i >= 0; --i) {  // column-oriented back substitution
        if (tid == 0) x[i] /= m[i * bs + i];
        __syncthreads();
        for (int j = tid; j < i; j += nt) x[j] -= m[j * bs + i] * x[i];
        __syncthreads();
      }
      if (tid < 32) {
        double amax = 0.0;
        for (int i = lane; i < bs; i += 32) amax = fmax(amax, fabs(x[i]));
        for (int off = 16; off > 0; off >>= 1) amax = fmax(amax, __shfl_down_sync(0xffffffffu, amax, off));
        if (lane == 0) {
          scale = amax;
          if (!(amax > 0.0) || !isfinite(amax)) fail = bs;
        }
      }
      __syncthreads();
      if (!fail)
        for (int i = tid; i < bs; i += nt) w[size64_t(r) * bs + i] = x[i] / scale;
    }
    if (tid == 0) info[r] = fail;
    __syncthreads();  // shared memory is reused by the next cell
  }
}

// A warp per block row, a lane per block: ap[k] = w_r . column 0 of block k, that column copied to col.
__global__ void pressure_values_kernel(index_t nrows, int bs, const index_t* __restrict__ row_ptr,
                                       const double* __restrict__ values, const double* __restrict__ w,
                                       double* __restrict__ ap, double* __restrict__ col)
{
  const size64_t bb = size64_t(bs) * bs;
  const int lane = threadIdx.x & 31;
  const size64_t warps = size64_t(gridDim.x) * (blockDim.x >> 5);
  for (size64_t r = (blockIdx.x * size64_t(blockDim.x) + threadIdx.x) >> 5; r < nrows; r += warps) {
    const double* wr = w + r * bs;
    for (index_t k = row_ptr[r] + lane; k < row_ptr[r + 1]; k += 32) {
      const double* a = values + size64_t(k) * bb;
      double* c = col + size64_t(k) * bs;
      double s = 0.0;
      for (int i = 0; i < bs; ++i) {
        const double v = a[size64_t(i) * bs];
        c[i] = v;
        s += wr[i] * v;
      }
      ap[k] = s;
    }
  }
}

__global__ void restrict_kernel(index_t nrows, int bs, const double* __restrict__ w, const double* __restrict__ x,
                                double* __restrict__ rp)
{
  for (size64_t r = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; r < nrows; r += size64_t(gridDim.x) * blockDim.x) {
    double s = 0.0;
    for (int i = 0; i < bs; ++i) s += w[r * bs + i] * x[r * bs + i];
    rp[r] = s;
  }
}

__global__ void prolong_add_kernel(index_t nrows, int bs, const double* __restrict__ xp, double* __restrict__ x)
{
  for (size64_t r = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; r < nrows; r += size64_t(gridDim.x) * blockDim.x)
    x[r * bs] += xp[r];
}

// r2 = r - A P xp: a thread per scalar row (i, a), neighbouring threads the rows of one block row, so they read
// consecutive entries of each block's column copy (coalesced).
__global__ void pressure_residual_kernel(size64_t rows, int bs, const index_t* __restrict__ row_ptr,
                                         const index_t* __restrict__ col_ind, const double* __restrict__ col,
                                         const double* __restrict__ xp, const double* __restrict__ r,
                                         double* __restrict__ r2)
{
  for (size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; t < rows; t += size64_t(gridDim.x) * blockDim.x) {
    const index_t i = static_cast<index_t>(t / bs);
    const int a = static_cast<int>(t - size64_t(i) * bs);
    double sum = 0.0;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
      sum += col[size64_t(k) * bs + a] * xp[col_ind[k]];
    r2[t] = r[t] - sum;
  }
}

template <int BS>
void launch_weights_small(stream_t s, index_t nrows, const index_t* diag_pos, const double* values, double* w,
                          int* info)
{
  weights_small_kernel<BS><<<cuda_detail::grid_for(nrows, 128), 128, 0, s>>>(nrows, diag_pos, values, w, info);
}

}  // namespace

void cpr_quasi_impes_weights(stream_t s, index_t nrows, int bs, const index_t* diag_pos, const double* values,
                             double* w, int* info)
{
  if (nrows <= 0) return;
  if (bs < 1 || bs > 64) throw std::invalid_argument("cpr_quasi_impes_weights: block size must be in 1..64");
  switch (bs) {  // the one dispatch from run-time to compile-time block size
    case 1: launch_weights_small<1>(s, nrows, diag_pos, values, w, info); break;
    case 2: launch_weights_small<2>(s, nrows, diag_pos, values, w, info); break;
    case 3: launch_weights_small<3>(s, nrows, diag_pos, values, w, info); break;
    case 4: launch_weights_small<4>(s, nrows, diag_pos, values, w, info); break;
    case 5: launch_weights_small<5>(s, nrows, diag_pos, values, w, info); break;
    case 6: launch_weights_small<6>(s, nrows, diag_pos, values, w, info); break;
    case 7: launch_weights_small<7>(s, nrows, diag_pos, values, w, info); break;
    case 8: launch_weights_small<8>(s, nrows, diag_pos, values, w, info); break;
    default: {
      static_assert(small_weights_max == 8);
      const std::size_t shmem = (std::size_t(bs) * bs + bs) * sizeof(double);
      weights_block_kernel<<<cuda_detail::grid_for(nrows, 1, 65535LL * 16), weights_block, shmem, s>>>(
          nrows, bs, diag_pos, values, w, info);
    }
  }
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void cpr_pressure_values(stream_t s, index_t nrows, int bs, const index_t* row_ptr, const double* values,
                         const double* w, double* ap, double* col)
{
  if (nrows <= 0) return;
  pressure_values_kernel<<<cuda_detail::grid_for(size64_t(nrows) * 32), cuda_detail::default_block, 0, s>>>(
      nrows, bs, row_ptr, values, w, ap, col);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void cpr_restrict(stream_t s, index_t nrows, int bs, const double* w, const double* x, double* rp)
{
  if (nrows <= 0) return;
  restrict_kernel<<<cuda_detail::grid_for(nrows), cuda_detail::default_block, 0, s>>>(nrows, bs, w, x, rp);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void cpr_prolong_add(stream_t s, index_t nrows, int bs, const double* xp, double* x)
{
  if (nrows <= 0) return;
  prolong_add_kernel<<<cuda_detail::grid_for(nrows), cuda_detail::default_block, 0, s>>>(nrows, bs, xp, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void cpr_pressure_residual(stream_t s, index_t nrows, int bs, const index_t* row_ptr, const index_t* col_ind,
                           const double* col, const double* xp, const double* r, double* r2)
{
  if (nrows <= 0) return;
  const size64_t rows = size64_t(nrows) * bs;
  pressure_residual_kernel<<<cuda_detail::grid_for(rows), cuda_detail::default_block, 0, s>>>(
      rows, bs, row_ptr, col_ind, col, xp, r, r2);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::kernels::cuda
