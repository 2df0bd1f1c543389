// CUDA ILU(0) and exact triangular solves, level-scheduled: the rows of one level of the
// IluSchedule are independent, so each level is one kernel launch with one warp per row, and
// launch order on the stream orders the levels.
#include "kernels/cuda_check.hpp"
#include "kernels/ilu_isai/ilu.hpp"

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

namespace blockres::kernels::cuda {

namespace {

constexpr int warps_per_block = 4;  // small blocks spread narrow levels over more SMs
constexpr int block_threads = 32 * warps_per_block;
constexpr unsigned full_mask = 0xffffffffu;
// Lane-strided loops over a row's entries count in 64 bits: a row ending near 2^31 - 1 entries
// would otherwise overflow the index by the last stride of 32.

// Blocks for `rows` warps; beyond the cap the kernels loop over their rows grid-stride.
unsigned grid_for_rows(index_t rows)
{
  const size64_t g = (size64_t(rows) + warps_per_block - 1) / warps_per_block;
  return static_cast<unsigned>(std::clamp<size64_t>(g, 1, 65535LL * 32));
}

__device__ inline size64_t global_warp() { return (size64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; }
__device__ inline size64_t warp_stride() { return (size64_t(gridDim.x) * blockDim.x) >> 5; }

__device__ inline double warp_sum(double v)
{
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(full_mask, v, off);
  return v;
}

// *info holds the smallest bad row index (0-based) while the levels run, INT_MAX when none;
// the final kernel turns that into the documented 0 / i + 1 (no row index reaches INT_MAX,
// so the sentinel cannot collide with a real row).
__global__ void info_init_kernel(int* info) { *info = INT_MAX; }
__global__ void info_final_kernel(int* info)
{
  const int v = *info;
  *info = v == INT_MAX ? 0 : v + 1;
}

// IKJ ILU(0) of the `count` rows rows[0 .. count), one warp per row. For each strictly lower
// entry (i, k) in increasing k, lane 0 forms l_ik = a_ik / u_kk and broadcasts it; the lanes
// split the entries (k, j > k) of the finished row k and subtract l_ik u_kj from a_ij where
// (i, j) is in the pattern, found by a binary search of row i's columns to the right of (i, k).
// A lane's j increase with its q, so its search window starts where its previous one ended.
// The minimum of 8 blocks per SM lets ptxas use up to 64 registers: with the block size alone it
// targets full occupancy (32 registers) and spills.
__global__ void __launch_bounds__(block_threads, 8)
    factor_level_kernel(const index_t* __restrict__ rows, index_t count, const index_t* __restrict__ row_ptr,
                        const index_t* __restrict__ col, const index_t* __restrict__ diag, double* val, int* info)
{
  const int lane = threadIdx.x & 31;
  for (size64_t w = global_warp(); w < count; w += warp_stride()) {  // warp-uniform loop
    const index_t i = rows[w];
    const index_t di = diag[i], re = row_ptr[i + 1];
    for (index_t p = row_ptr[i]; p < di; ++p) {
      const index_t k = col[p];
      double l = 0.0;
      if (lane == 0) {
        l = val[p] / val[diag[k]];
        val[p] = l;
      }
      l = __shfl_sync(full_mask, l, 0);
      index_t lo = p + 1;
      for (size64_t q = size64_t(diag[k]) + 1 + lane; q < row_ptr[k + 1]; q += 32) {
        const index_t j = col[q];
        index_t hi = re;  // lower bound of j in col[lo, re)
        while (lo < hi) {
          const index_t mid = lo + (hi - lo) / 2;
          if (col[mid] < j) lo = mid + 1; else hi = mid;
        }
        if (lo < re && col[lo] == j) val[lo] -= l * val[q];
      }
      // Row i's updates (other lanes' writes) visible before the next step reads a_ik'.
      __syncwarp();
    }
    if (lane == 0) {  // row i is complete: check its pivot
      const double u = val[di];
      if (u == 0.0 || !isfinite(u)) atomicMin(info, i);
    }
  }
}

// x_i = b_i - sum_{j < i} l_ij x_j for the rows of one level: lanes stride over the strictly
// lower entries, warp-shuffle sum. The x_j were written by earlier launches.
__global__ void __launch_bounds__(block_threads)
    lower_level_kernel(const index_t* __restrict__ rows, index_t count, const index_t* __restrict__ row_ptr,
                       const index_t* __restrict__ col, const index_t* __restrict__ diag,
                       const double* __restrict__ val, const double* __restrict__ b, double* x)
{
  const int lane = threadIdx.x & 31;
  for (size64_t w = global_warp(); w < count; w += warp_stride()) {
    const index_t i = rows[w];
    double sum = 0.0;
    for (size64_t p = size64_t(row_ptr[i]) + lane; p < diag[i]; p += 32) sum += val[p] * x[col[p]];
    sum = warp_sum(sum);
    if (lane == 0) x[i] = b[i] - sum;
  }
}

// x_i = (b_i - sum_{j > i} u_ij x_j) / u_ii for the rows of one upper level.
__global__ void __launch_bounds__(block_threads)
    upper_level_kernel(const index_t* __restrict__ rows, index_t count, const index_t* __restrict__ row_ptr,
                       const index_t* __restrict__ col, const index_t* __restrict__ diag,
                       const double* __restrict__ val, const double* __restrict__ b, double* x)
{
  const int lane = threadIdx.x & 31;
  for (size64_t w = global_warp(); w < count; w += warp_stride()) {
    const index_t i = rows[w];
    const index_t di = diag[i];
    double sum = 0.0;
    for (size64_t p = size64_t(di) + 1 + lane; p < row_ptr[i + 1]; p += 32) sum += val[p] * x[col[p]];
    sum = warp_sum(sum);
    if (lane == 0) x[i] = (b[i] - sum) / val[di];
  }
}

// The pivot check alone (factors computed elsewhere): a thread per row, the smallest bad row by atomicMin.
__global__ void check_pivots_kernel(index_t n, const index_t* __restrict__ pivot_pos, const double* __restrict__ val,
                                    int* info)
{
  for (size64_t i = size64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < size64_t(n);
       i += size64_t(gridDim.x) * blockDim.x) {
    const double u = val[pivot_pos[i]];
    if (u == 0.0 || !isfinite(u)) atomicMin(info, int(i));
  }
}

// The host schedule behind `sched`, checked against the matrix before anything is launched.
const IluSchedule& checked_host(const IluDeviceSchedule& sched, index_t n, const char* what)
{
  if (sched.host == nullptr) throw std::invalid_argument(std::string(what) + ": device schedule without its host schedule");
  if (sched.host->n != n)
    throw std::invalid_argument(std::string(what) + ": schedule for n = " + std::to_string(sched.host->n) +
                                " but the matrix has n = " + std::to_string(n));
  if (n > 0 && (sched.diag == nullptr || sched.lower_rows == nullptr || sched.upper_rows == nullptr))
    throw std::invalid_argument(std::string(what) + ": device schedule arrays missing");
  return *sched.host;
}

}  // namespace

namespace {

// Calls launch(first, count) for every non-empty level of `level_ptr`: one kernel per level, the
// level's rows at rows[first .. first + count).
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

}  // namespace

void ilu0_factor(stream_t s, const IluDeviceSchedule& sched, CsrView<double> A, int* info)
{
  const IluSchedule& h = checked_host(sched, A.n, "ilu0_factor");
  if (info == nullptr) throw std::invalid_argument("ilu0_factor: null info");
  info_init_kernel<<<1, 1, 0, s>>>(info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  for_each_level(h.lower_level_ptr, [&](index_t first, index_t count) {
    factor_level_kernel<<<grid_for_rows(count), block_threads, 0, s>>>(sched.lower_rows + first, count, A.row_ptr,
                                                                        A.col, sched.diag, A.val, info);
  });
  info_final_kernel<<<1, 1, 0, s>>>(info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void ilu0_check_pivots(stream_t s, index_t n, const index_t* pivot_pos, const double* val, int* info)
{
  if (info == nullptr) throw std::invalid_argument("ilu0_check_pivots: null info");
  if (n > 0 && (pivot_pos == nullptr || val == nullptr)) throw std::invalid_argument("ilu0_check_pivots: null arrays");
  info_init_kernel<<<1, 1, 0, s>>>(info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  if (n > 0) {
    const size64_t blocks = (size64_t(n) + 255) / 256;
    check_pivots_kernel<<<static_cast<unsigned>(std::min<size64_t>(blocks, 65535LL * 32)), 256, 0, s>>>(
        n, pivot_pos, val, info);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
  info_final_kernel<<<1, 1, 0, s>>>(info);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void ilu0_lower_solve(stream_t s, const IluDeviceSchedule& sched, CsrView<const double> LU, const double* b,
                      double* x)
{
  const IluSchedule& h = checked_host(sched, LU.n, "ilu0_lower_solve");
  for_each_level(h.lower_level_ptr, [&](index_t first, index_t count) {
    lower_level_kernel<<<grid_for_rows(count), block_threads, 0, s>>>(sched.lower_rows + first, count, LU.row_ptr,
                                                                       LU.col, sched.diag, LU.val, b, x);
  });
}

void ilu0_upper_solve(stream_t s, const IluDeviceSchedule& sched, CsrView<const double> LU, const double* b,
                      double* x)
{
  const IluSchedule& h = checked_host(sched, LU.n, "ilu0_upper_solve");
  for_each_level(h.upper_level_ptr, [&](index_t first, index_t count) {
    upper_level_kernel<<<grid_for_rows(count), block_threads, 0, s>>>(sched.upper_rows + first, count, LU.row_ptr,
                                                                       LU.col, sched.diag, LU.val, b, x);
  });
}

}  // namespace blockres::kernels::cuda
