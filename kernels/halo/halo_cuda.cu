#include "kernels/cuda_check.hpp"
#include "kernels/halo/halo.hpp"
#include "kernels/launch.cuh"

namespace blockres::kernels::cuda {

namespace {

// One thread per entry (consecutive threads: consecutive entries of a block, coalesced reads within a block).
__global__ void halo_pack_kernel(const double* __restrict__ x, const index_t* __restrict__ ids, size64_t total, int bs,
                                 double* __restrict__ out)
{
  for (size64_t e = size64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += size64_t(gridDim.x) * blockDim.x) {
    const size64_t i = e / bs, c = e - i * bs;
    out[e] = x[size64_t(ids[i]) * bs + c];
  }
}

// One warp per row: its D values, then its O values, the lanes over consecutive values (coalesced).
__global__ void hcat_rows_kernel(index_t n, int bb, const index_t* __restrict__ d_ptr, const double* __restrict__ d,
                                 const index_t* __restrict__ o_ptr, const double* __restrict__ o,
                                 double* __restrict__ out)
{
  const size64_t warp = (size64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  const size64_t warps = size64_t(gridDim.x) * blockDim.x / 32;
  for (size64_t i = warp; i < size64_t(n); i += warps) {
    const size64_t start = size64_t(d_ptr[i]) + (o_ptr ? size64_t(o_ptr[i]) : 0);
    const size64_t nd = size64_t(d_ptr[i + 1] - d_ptr[i]) * bb;
    const double* src = d + size64_t(d_ptr[i]) * bb;
    double* dst = out + start * bb;
    for (size64_t e = lane; e < nd; e += 32) dst[e] = src[e];
    if (o_ptr) {
      const size64_t no = size64_t(o_ptr[i + 1] - o_ptr[i]) * bb;
      const double* so = o + size64_t(o_ptr[i]) * bb;
      for (size64_t e = lane; e < no; e += 32) dst[nd + e] = so[e];
    }
  }
}

// One thread per row (rows of a pressure operator: a few entries), in the CPU twin's order.
__global__ void lump_ghost_columns_kernel(index_t n, index_t n_local, const index_t* __restrict__ row_ptr,
                                          const index_t* __restrict__ col_ind, const double* __restrict__ values,
                                          double* __restrict__ out)
{
  for (size64_t t = size64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < size64_t(n);
       t += size64_t(gridDim.x) * blockDim.x) {
    const index_t i = index_t(t);
    double ghost = 0.0;
    index_t diag = -1;
    for (index_t q = row_ptr[i]; q < row_ptr[i + 1]; ++q) {
      const index_t c = col_ind[q];
      if (c >= n_local) {
        ghost += values[q];
        out[q] = 0.0;
      } else {
        out[q] = values[q];
        if (c == i) diag = q;
      }
    }
    if (diag >= 0) out[diag] += ghost;
  }
}

__global__ void sum_ranks_kernel(int P, int k, const double* parts, double* out)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k; i += gridDim.x * blockDim.x) {
    double s = parts[i];
    for (int r = 1; r < P; ++r) s += parts[size64_t(r) * k + i];
    out[i] = s;
  }
}

}  // namespace

void sum_ranks(stream_t s, int P, int k, const double* parts, double* out)
{
  if (k <= 0 || P <= 0) return;
  sum_ranks_kernel<<<cuda_detail::grid_for(size64_t(k)), cuda_detail::default_block, 0, s>>>(P, k, parts, out);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void lump_ghost_columns(stream_t s, index_t n, index_t n_local, const index_t* row_ptr, const index_t* col_ind,
                        const double* values, double* out)
{
  if (n <= 0) return;
  lump_ghost_columns_kernel<<<cuda_detail::grid_for(size64_t(n)), cuda_detail::default_block, 0, s>>>(
      n, n_local, row_ptr, col_ind, values, out);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void hcat_rows(stream_t s, index_t n, int bb, const index_t* d_ptr, const double* d, const index_t* o_ptr,
               const double* o, double* out)
{
  if (n <= 0) return;
  const size64_t threads = size64_t(n) * 32;
  hcat_rows_kernel<<<cuda_detail::grid_for(threads), cuda_detail::default_block, 0, s>>>(n, bb, d_ptr, d, o_ptr, o,
                                                                                         out);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void halo_pack(stream_t s, const double* x, const index_t* ids, index_t n, int bs, double* out)
{
  const size64_t total = size64_t(n) * bs;
  if (total <= 0) return;
  halo_pack_kernel<<<cuda_detail::grid_for(total), cuda_detail::default_block, 0, s>>>(x, ids, total, bs, out);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::kernels::cuda
