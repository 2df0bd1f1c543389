// CUDA kernels of the aggregation AMG (amg_kernels_cuda.hpp): the twins of amg_kernels_cpu.cpp,
// with the same graph rules and the same bits for strength, aggregation and coarse graphs.
#include "kernels/amg/amg_kernels_cuda.hpp"

#include "kernels/cuda_check.hpp"
#include "kernels/launch.cuh"

#include <thrust/binary_search.h>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>

#include <climits>
#include <cstring>
#include <cstdlib>
#include <type_traits>

namespace blockres::amg::cuda {

namespace {

using cuda_detail::grid_for;
using u64 = unsigned long long;

// ---------------------------------------------------------------- graph kernels

__device__ double diag_of(const index_t* rp, const index_t* ci, const double* v, index_t i)
{
  for (index_t p = rp[i]; p < rp[i + 1]; ++p)
    if (ci[p] == i) return v[p];
  return 0.0;
}

__global__ void abs_diag_kernel(index_t n, const index_t* rp, const index_t* ci, const double* v, double* d)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    d[i] = fabs(diag_of(rp, ci, v, i));
}

__device__ bool strong_entry(index_t i, index_t j, double a, const double* d, index_t n_local, index_t n, double theta,
                             double& w)
{
  if (j == i || j >= n_local || j >= n) return false;
  const double s = d[i] * d[j];
  if (!(s > 0.0)) return false;
  w = fabs(a) / sqrt(s);
  return w >= theta && isfinite(w);
}

__global__ void strong_count_kernel(index_t n, const index_t* rp, const index_t* ci, const double* v, const double* d,
                                    index_t n_local, double theta, size64_t* cnt)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    size64_t c = 0;
    double w;
    for (index_t p = rp[i]; p < rp[i + 1]; ++p)
      if (strong_entry(i, ci[p], v[p], d, n_local, n, theta, w)) c += 2;
    cnt[i] = c;
  }
}

__global__ void strong_emit_kernel(index_t n, const index_t* rp, const index_t* ci, const double* v, const double* d,
                                   index_t n_local, double theta, const size64_t* off, u64* keys, double* vals)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    size64_t e = off[i];
    double w;
    for (index_t p = rp[i]; p < rp[i + 1]; ++p) {
      const index_t j = ci[p];
      if (!strong_entry(i, j, v[p], d, n_local, n, theta, w)) continue;
      keys[e] = u64(i) * u64(n) + u64(j);
      vals[e++] = w;
      keys[e] = u64(j) * u64(n) + u64(i);
      vals[e++] = w;
    }
  }
}

__global__ void segment_heads_kernel(size64_t m, const u64* keys, index_t* head)
{
  for (size64_t e = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; e < m; e += size64_t(gridDim.x) * blockDim.x)
    head[e] = (e == 0 || keys[e] != keys[e - 1]) ? 1 : 0;
}

// One thread per segment of equal keys: the entry's column and its values reduced in order.
template <bool Max>
__global__ void segment_reduce_kernel(size64_t m, const u64* keys, const double* vals, const index_t* head,
                                      const index_t* seg, u64 ncols, index_t* col, double* out, u64* out_key)
{
  for (size64_t e = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; e < m; e += size64_t(gridDim.x) * blockDim.x) {
    if (!head[e]) continue;
    double s = Max ? vals[e] : 0.0 + vals[e];
    size64_t f = e + 1;
    for (; f < m && keys[f] == keys[e]; ++f) s = Max ? fmax(s, vals[f]) : s + vals[f];
    const index_t k = seg[e];
    col[k] = static_cast<index_t>(keys[e] % ncols);
    out[k] = s;
    out_key[k] = keys[e];
  }
}

struct RowStart {
  u64 ncols;
  __host__ __device__ u64 operator()(index_t r) const { return u64(r) * ncols; }
};

__global__ void fill_index_kernel(index_t n, index_t v, index_t* a)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = v;
}

// ---------------------------------------------------------------- matching and MIS(2)

__global__ void match_choose_kernel(index_t n, const index_t* rp, const index_t* ci, const double* w,
                                    const index_t* mate, index_t* choice)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    choice[i] = mate[i] >= 0 ? -1 : strongest_neighbour(rp, ci, w, i, [&](index_t j) { return mate[j] < 0; });
  }
}

__global__ void match_confirm_kernel(index_t n, const index_t* choice, index_t* mate, index_t* count)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const index_t c = choice[i];
    if (c >= 0 && choice[c] == i) {
      mate[i] = c;
      atomicAdd(count, 1);
    }
  }
}

__global__ void match_root_kernel(index_t n, const index_t* rp, const index_t* ci, const double* w, const index_t* mate,
                                  index_t* root)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    if (mate[i] >= 0) {
      root[i] = min(i, mate[i]);
      continue;
    }
    const index_t best = strongest_neighbour(rp, ci, w, i, [&](index_t j) { return mate[j] >= 0; });
    root[i] = best >= 0 ? min(best, mate[best]) : i;
  }
}

__global__ void root_flag_kernel(index_t n, const index_t* root, index_t* flag)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    flag[i] = root[i] == i ? 1 : 0;
}

__global__ void root_number_kernel(index_t n, const index_t* root, const index_t* number, index_t* agg)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) agg[i] = number[root[i]];
}

__device__ bool mis_better(const signed char* state, index_t a, index_t b)
{
  return state[a] != state[b] ? state[a] > state[b] : mis_priority_greater(a, b);
}

__global__ void mis_init_kernel(index_t n, const index_t* rp, signed char* state)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    state[i] = rp[i + 1] > rp[i] ? mis_undecided : mis_out;
}

__global__ void mis_max_kernel(index_t n, const index_t* rp, const index_t* ci, const signed char* state,
                               const index_t* in, index_t* out)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    index_t best = in ? in[i] : i;
    for (index_t p = rp[i]; p < rp[i + 1]; ++p) {
      const index_t c = in ? in[ci[p]] : ci[p];
      if (mis_better(state, c, best)) best = c;
    }
    out[i] = best;
  }
}

__global__ void mis_update_kernel(index_t n, const index_t* m2, signed char* state, index_t* undecided)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    if (state[i] != mis_undecided) continue;
    if (m2[i] == i) state[i] = mis_in;
    else if (state[m2[i]] == mis_in) state[i] = mis_out;
    else atomicAdd(undecided, 1);
  }
}

__global__ void mis_flag_kernel(index_t n, const signed char* state, index_t* flag)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    flag[i] = state[i] == mis_in ? 1 : 0;
}

// first[i]: the aggregate of a root, or of the root among i's neighbours, or -1.
__global__ void mis_first_kernel(index_t n, const index_t* rp, const index_t* ci, const signed char* state,
                                 const index_t* number, index_t* first)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    index_t a = state[i] == mis_in ? number[i] : -1;
    if (a < 0)
      for (index_t p = rp[i]; p < rp[i + 1]; ++p)
        if (state[ci[p]] == mis_in) {
          a = number[ci[p]];
          break;
        }
    first[i] = a;
  }
}

__global__ void mis_join_kernel(index_t n, const index_t* rp, const index_t* ci, const double* w, const index_t* first,
                                index_t* agg)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    index_t a = first[i];
    if (a < 0 && rp[i + 1] > rp[i]) {
      const index_t best = strongest_neighbour(rp, ci, w, i, [&](index_t j) { return first[j] >= 0; });
      a = best >= 0 ? first[best] : -1;
    }
    agg[i] = a;
  }
}

// ---------------------------------------------------------------- coarse graph, transfer, setup numerics

__global__ void coarse_count_kernel(index_t n, const index_t* rp, const index_t* ci, const index_t* agg, size64_t* cnt)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    size64_t c = 0;
    const index_t I = agg[i];
    if (I >= 0)
      for (index_t p = rp[i]; p < rp[i + 1]; ++p) {
        const index_t J = agg[ci[p]];
        c += (J >= 0 && J != I);
      }
    cnt[i] = c;
  }
}

__global__ void coarse_emit_kernel(index_t n, const index_t* rp, const index_t* ci, const double* w, const index_t* agg,
                                   index_t nc, const size64_t* off, u64* keys, double* vals)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const index_t I = agg[i];
    if (I < 0) continue;
    size64_t e = off[i];
    for (index_t p = rp[i]; p < rp[i + 1]; ++p) {
      const index_t J = agg[ci[p]];
      if (J < 0 || J == I) continue;
      keys[e] = u64(I) * u64(nc) + u64(J);
      vals[e++] = w[p];
    }
  }
}

__global__ void compose_kernel(index_t n, index_t* agg, const index_t* pass)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (agg[i] >= 0) agg[i] = pass[agg[i]];
}

__global__ void p0_count_kernel(index_t n, const index_t* agg, index_t* cnt)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += gridDim.x * blockDim.x)
    cnt[i] = i < n && agg[i] >= 0 ? 1 : 0;
}

__global__ void p0_fill_kernel(index_t n, const index_t* agg, const index_t* rp, index_t* ci, double* v)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (agg[i] >= 0) ci[rp[i]] = agg[i], v[rp[i]] = 1.0;
}

__global__ void iota_double_kernel(size64_t n, double* v)
{
  for (size64_t k = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; k < n; k += size64_t(gridDim.x) * blockDim.x)
    v[k] = static_cast<double>(k);
}

__global__ void to_index_kernel(size64_t n, const double* v, index_t* map)
{
  for (size64_t k = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; k < n; k += size64_t(gridDim.x) * blockDim.x)
    map[k] = static_cast<index_t>(v[k]);
}

__global__ void gather_kernel(size64_t n, const double* src, const index_t* map, double* dst)
{
  for (size64_t k = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; k < n; k += size64_t(gridDim.x) * blockDim.x)
    dst[k] = src[map[k]];
}

// max_i sum_j |a_ij| / |a_ii| (rows without a diagonal and non-finite ratios count 0, as the CPU
// twin ignores them): per-thread and per-block maxima, then one atomicMax on the bits of the
// non-negative double (their order is the integers' order), so the result needs no reduction
// buffer or allocation and is exact whatever the order.
__global__ void radius_kernel(index_t n, const index_t* rp, const index_t* ci, const double* v, u64* result)
{
  double local = 0.0;
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    double sum = 0.0, d = 0.0;
    for (index_t p = rp[i]; p < rp[i + 1]; ++p) {
      sum += fabs(v[p]);
      if (ci[p] == i) d = fabs(v[p]);
    }
    const double r = d > 0.0 ? sum / d : 0.0;
    if (r > local) local = r;  // NaN never wins
  }
  local = cuda_detail::block_max(local);
  if (threadIdx.x == 0 && local > 0.0) atomicMax(result, static_cast<u64>(__double_as_longlong(local)));
}

// omega, or with rho_bits != null omega = 4 / (3 rho) from the radius bound's bits (0 when rho = 0),
// computed on the device as the host computes it (same IEEE operations, same bits).
__global__ void smooth_p_kernel(index_t n, const index_t* rp, const index_t* ci, const double* v, const index_t* agg,
                                double omega, const u64* rho_bits, const index_t* prp, const index_t* pci, double* pv)
{
  if (rho_bits) {
    const double rho = __longlong_as_double(static_cast<long long>(*rho_bits));
    omega = rho > 0.0 ? 4.0 / (3.0 * rho) : 0.0;
  }
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double d = diag_of(rp, ci, v, i);
    const double s = d != 0.0 ? -omega / d : 0.0;
    for (index_t p = prp[i]; p < prp[i + 1]; ++p) pv[p] = s * pv[p] + (pci[p] == agg[i] ? 1.0 : 0.0);
  }
}

__global__ void jacobi_scaling_kernel(index_t n, const index_t* rp, const index_t* ci, const double* v, double omega,
                                      bool l1, double* dinv, index_t* first_bad)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    double s = 0.0, di;
    if (l1) {
      double d = 0.0;
      for (index_t p = rp[i]; p < rp[i + 1]; ++p) {
        if (ci[p] == i) d = v[p];
        else s += fabs(v[p]);
      }
      s = d >= 0.0 ? d + s : d - s;
      di = 1.0 / s;
    } else {
      s = diag_of(rp, ci, v, i);
      di = omega / s;
    }
    if (!(s != 0.0) || !isfinite(di)) {
      atomicMin(first_bad, i);
      di = 0.0;
    }
    dinv[i] = di;
  }
}

__global__ void differ_kernel(size64_t n, const index_t* a, const index_t* b, index_t* differ)
{
  for (size64_t i = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; i < n; i += size64_t(gridDim.x) * blockDim.x)
    if (a[i] != b[i]) {
      *differ = 1;
      return;
    }
}

__global__ void densify_kernel(index_t n, const index_t* rp, const index_t* ci, const double* v, double* d)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    for (index_t p = rp[i]; p < rp[i + 1]; ++p) d[size64_t(i) * n + ci[p]] += v[p];
}

// ---------------------------------------------------------------- cycle kernels

enum RowMode { spmv_mode, jacobi_mode, residual_mode, zero_residual_mode, lower_sweep_mode, upper_sweep_mode };

// One group of G lanes per row: s = sum_j a_ij x_j, then
//   spmv:          y = alpha s + beta y (beta == 0: y not read)
//   jacobi:        y = x + dinv (b - s)
//   residual:      y = b - s
//   zero_residual: x_j = dinv_j b_j in the sum (x is not read), y = b - s and x_out = dinv .* b
//   lower_sweep:   the sum over j < i only, y = b - s        (cpu::ilu_jacobi_sweep)
//   upper_sweep:   the sum over j > i only, y = dinv (b - s)
template <int G, int Mode, class V>
__global__ void __launch_bounds__(256) csr_rows_kernel(index_t n, const index_t* __restrict__ rp,
                                                       const index_t* __restrict__ ci, const V* __restrict__ v,
                                                       const double* __restrict__ x, double alpha, double beta,
                                                       const double* __restrict__ b, const double* __restrict__ dinv,
                                                       double* __restrict__ y, double* __restrict__ x_out)
{
  const size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x;
  const index_t row = static_cast<index_t>(t / G);
  const int lane = static_cast<int>(t % G);
  const bool valid = row < n;
  double s = 0.0;
  if (valid) {
    const index_t end = rp[row + 1];
    if (Mode == zero_residual_mode) {
      for (index_t p = rp[row] + lane; p < end; p += G) {
        const index_t c = ci[p];
        s += double(v[p]) * (dinv[c] * b[c]);
      }
    } else if (Mode == lower_sweep_mode || Mode == upper_sweep_mode) {
      for (index_t p = rp[row] + lane; p < end; p += G) {
        const index_t c = ci[p];
        if (Mode == lower_sweep_mode ? c < row : c > row) s += double(v[p]) * x[c];
      }
    } else {
      for (index_t p = rp[row] + lane; p < end; p += G) s += double(v[p]) * x[ci[p]];
    }
  }
#pragma unroll
  for (int off = G / 2; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off, G);
  if (!valid || lane != 0) return;
  if (Mode == spmv_mode) y[row] = beta == 0.0 ? alpha * s : alpha * s + beta * y[row];
  else if (Mode == jacobi_mode) y[row] = x[row] + dinv[row] * (b[row] - s);
  else if (Mode == residual_mode || Mode == lower_sweep_mode) y[row] = b[row] - s;
  else if (Mode == upper_sweep_mode) y[row] = dinv[row] * (b[row] - s);
  else {
    y[row] = b[row] - s;
    x_out[row] = dinv[row] * b[row];
  }
}

__global__ void scale_kernel(index_t n, const double* dinv, const double* b, double* x)
{
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = dinv[i] * b[i];
}

size64_t resident_threads()  // device_resident_threads, read once
{
  static const size64_t threads = [] {
    int dev = 0, sms = 0, per_sm = 0;
    BLOCKRES_CUDA_CHECK(cudaGetDevice(&dev));
    BLOCKRES_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    BLOCKRES_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    return size64_t(sms) * size64_t(per_sm);
  }();
  return threads;
}

template <int Mode, class V>
void csr_rows(stream_t s, const CsrRefT<V>& A, const double* x, double alpha, double beta, const double* b,
              const double* dinv, double* y, double* x_out = nullptr)
{
  const index_t n = A.nrows;
  if (n == 0) return;
  auto launch = [&](auto g) {
    constexpr int G = decltype(g)::value;
    const size64_t threads = size64_t(n) * G;
    const unsigned blocks = static_cast<unsigned>((threads + 255) / 256);
    csr_rows_kernel<G, Mode, V><<<blocks, 256, 0, s>>>(n, A.row_ptr, A.col_ind, A.values, x, alpha, beta, b, dinv, y,
                                                       x_out);
  };
  switch (cycle_lane_group(n, A.nnz(), resident_threads())) {
    case 2: launch(std::integral_constant<int, 2>{}); break;
    case 4: launch(std::integral_constant<int, 4>{}); break;
    case 8: launch(std::integral_constant<int, 8>{}); break;
    case 16: launch(std::integral_constant<int, 16>{}); break;
    default: launch(std::integral_constant<int, 32>{}); break;
  }
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace

auto policy(stream_t s) { return thrust::cuda::par.on(s); }

template <class T>
T read(stream_t s, const T* p)
{
  T v{};
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(&v, p, sizeof(T), cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  return v;
}

size64_t strength_count(stream_t s, const CsrRef& A, index_t n_local, double theta, double* d, size64_t* off)
{
  const index_t n = A.nrows;
  if (n > 0) {
    abs_diag_kernel<<<grid_for(n), 256, 0, s>>>(n, A.row_ptr, A.col_ind, A.values, d);
    strong_count_kernel<<<grid_for(n), 256, 0, s>>>(n, A.row_ptr, A.col_ind, A.values, d, n_local, theta, off);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(off + n, 0, sizeof(size64_t), s));
  thrust::exclusive_scan(policy(s), off, off + n + 1, off);
  return read(s, off + n);
}

void strength_emit(stream_t s, const CsrRef& A, index_t n_local, double theta, const double* d, const size64_t* off,
                   std::uint64_t* keys, double* vals)
{
  const index_t n = A.nrows;
  if (n == 0) return;
  strong_emit_kernel<<<grid_for(n), 256, 0, s>>>(n, A.row_ptr, A.col_ind, A.values, d, n_local, theta, off,
                                                 reinterpret_cast<u64*>(keys), vals);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

index_t sort_segments(stream_t s, size64_t m, std::uint64_t* keys, double* vals, index_t* head, index_t* seg)
{
  if (m == 0) return 0;
  u64* k = reinterpret_cast<u64*>(keys);
  thrust::stable_sort_by_key(policy(s), k, k + m, vals);
  segment_heads_kernel<<<grid_for(m), 256, 0, s>>>(m, k, head);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  thrust::exclusive_scan(policy(s), head, head + m, seg);
  return read(s, seg + m - 1) + read(s, head + m - 1);
}

void segment_reduce(stream_t s, size64_t m, const std::uint64_t* keys, const double* vals, const index_t* head,
                    const index_t* seg, index_t ncols, bool max, index_t* col, double* out, std::uint64_t* ukeys)
{
  if (m == 0) return;
  const u64* k = reinterpret_cast<const u64*>(keys);
  u64* uk = reinterpret_cast<u64*>(ukeys);
  if (max) segment_reduce_kernel<true><<<grid_for(m), 256, 0, s>>>(m, k, vals, head, seg, u64(ncols), col, out, uk);
  else segment_reduce_kernel<false><<<grid_for(m), 256, 0, s>>>(m, k, vals, head, seg, u64(ncols), col, out, uk);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void rows_from_keys(stream_t s, const std::uint64_t* ukeys, index_t nnz, index_t nrows, index_t ncols, index_t* row_ptr)
{
  const u64* k = reinterpret_cast<const u64*>(ukeys);
  auto starts = thrust::make_transform_iterator(thrust::counting_iterator<index_t>(0), RowStart{u64(ncols)});
  thrust::lower_bound(policy(s), k, k + nnz, starts, starts + nrows + 1, row_ptr);
}

void fill(stream_t s, index_t n, index_t value, index_t* a)
{
  if (n == 0) return;
  fill_index_kernel<<<grid_for(n), 256, 0, s>>>(n, value, a);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

index_t match_round(stream_t s, const CsrRef& G, index_t* mate, index_t* choice, index_t* counter)
{
  const index_t n = G.nrows;
  match_choose_kernel<<<grid_for(n), 256, 0, s>>>(n, G.row_ptr, G.col_ind, G.values, mate, choice);
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(index_t), s));
  match_confirm_kernel<<<grid_for(n), 256, 0, s>>>(n, choice, mate, counter);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  return read(s, counter);
}

index_t match_finish(stream_t s, const CsrRef& G, const index_t* mate, index_t* root, index_t* number, index_t* agg)
{
  const index_t n = G.nrows;
  match_root_kernel<<<grid_for(n), 256, 0, s>>>(n, G.row_ptr, G.col_ind, G.values, mate, root);
  root_flag_kernel<<<grid_for(n), 256, 0, s>>>(n, root, number);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(number + n, 0, sizeof(index_t), s));
  thrust::exclusive_scan(policy(s), number, number + n + 1, number);
  root_number_kernel<<<grid_for(n), 256, 0, s>>>(n, root, number, agg);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  return read(s, number + n);
}

void mis_init(stream_t s, const CsrRef& G, signed char* state)
{
  mis_init_kernel<<<grid_for(G.nrows), 256, 0, s>>>(G.nrows, G.row_ptr, state);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

index_t mis_round(stream_t s, const CsrRef& G, signed char* state, index_t* m1, index_t* m2, index_t* counter)
{
  const index_t n = G.nrows;
  mis_max_kernel<<<grid_for(n), 256, 0, s>>>(n, G.row_ptr, G.col_ind, state, nullptr, m1);
  mis_max_kernel<<<grid_for(n), 256, 0, s>>>(n, G.row_ptr, G.col_ind, state, m1, m2);
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(index_t), s));
  mis_update_kernel<<<grid_for(n), 256, 0, s>>>(n, m2, state, counter);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  return read(s, counter);
}

index_t mis_finish(stream_t s, const CsrRef& G, const signed char* state, index_t* number, index_t* first, index_t* agg)
{
  const index_t n = G.nrows;
  mis_flag_kernel<<<grid_for(n), 256, 0, s>>>(n, state, number);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(number + n, 0, sizeof(index_t), s));
  thrust::exclusive_scan(policy(s), number, number + n + 1, number);
  mis_first_kernel<<<grid_for(n), 256, 0, s>>>(n, G.row_ptr, G.col_ind, state, number, first);
  mis_join_kernel<<<grid_for(n), 256, 0, s>>>(n, G.row_ptr, G.col_ind, G.values, first, agg);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  return read(s, number + n);
}

size64_t coarse_count(stream_t s, const CsrRef& G, const index_t* agg, size64_t* off)
{
  const index_t n = G.nrows;
  if (n > 0) {
    coarse_count_kernel<<<grid_for(n), 256, 0, s>>>(n, G.row_ptr, G.col_ind, agg, off);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(off + n, 0, sizeof(size64_t), s));
  thrust::exclusive_scan(policy(s), off, off + n + 1, off);
  return read(s, off + n);
}

void coarse_emit(stream_t s, const CsrRef& G, const index_t* agg, index_t nc, const size64_t* off, std::uint64_t* keys,
                 double* vals)
{
  const index_t n = G.nrows;
  if (n == 0) return;
  coarse_emit_kernel<<<grid_for(n), 256, 0, s>>>(n, G.row_ptr, G.col_ind, G.values, agg, nc, off,
                                                 reinterpret_cast<u64*>(keys), vals);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void compose(stream_t s, index_t n, index_t* agg, const index_t* pass_agg)
{
  if (n == 0) return;
  compose_kernel<<<grid_for(n), 256, 0, s>>>(n, agg, pass_agg);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

index_t p0_pattern(stream_t s, index_t n, const index_t* agg, index_t* row_ptr)
{
  p0_count_kernel<<<grid_for(size64_t(n) + 1), 256, 0, s>>>(n, agg, row_ptr);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  thrust::exclusive_scan(policy(s), row_ptr, row_ptr + n + 1, row_ptr);
  return read(s, row_ptr + n);
}

void p0_fill(stream_t s, index_t n, const index_t* agg, const index_t* row_ptr, index_t* col_ind, double* values)
{
  if (n == 0) return;
  p0_fill_kernel<<<grid_for(n), 256, 0, s>>>(n, agg, row_ptr, col_ind, values);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void iota(stream_t s, size64_t n, double* v)
{
  if (n == 0) return;
  iota_double_kernel<<<grid_for(n), 256, 0, s>>>(n, v);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void to_index(stream_t s, size64_t n, const double* v, index_t* map)
{
  if (n == 0) return;
  to_index_kernel<<<grid_for(n), 256, 0, s>>>(n, v, map);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void gather(stream_t s, size64_t n, const double* src, const index_t* map, double* dst)
{
  if (n == 0) return;
  gather_kernel<<<grid_for(n), 256, 0, s>>>(n, src, map, dst);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void jacobi_radius_bound_into(stream_t s, const CsrRef& A, double* rho)
{
  u64* bits = reinterpret_cast<u64*>(rho);  // a non-negative double's bits order as the double
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof(u64), s));
  const index_t n = A.nrows;
  if (n == 0) return;
  radius_kernel<<<grid_for(n), 256, 0, s>>>(n, A.row_ptr, A.col_ind, A.values, bits);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

double jacobi_radius_bound(stream_t s, const CsrRef& A, double* scratch)
{
  jacobi_radius_bound_into(s, A, scratch);
  return read(s, scratch);
}

void smoothed_prolongation(stream_t s, const CsrRef& A, const index_t* agg, double omega, const CsrRef& P,
                           double* p_values)
{
  const index_t n = A.nrows;
  if (n == 0) return;
  smooth_p_kernel<<<grid_for(n), 256, 0, s>>>(n, A.row_ptr, A.col_ind, A.values, agg, omega, nullptr, P.row_ptr,
                                               P.col_ind, p_values);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void smoothed_prolongation_from(stream_t s, const CsrRef& A, const index_t* agg, const double* rho, const CsrRef& P,
                                double* p_values)
{
  const index_t n = A.nrows;
  if (n == 0) return;
  smooth_p_kernel<<<grid_for(n), 256, 0, s>>>(n, A.row_ptr, A.col_ind, A.values, agg, 0.0,
                                               reinterpret_cast<const u64*>(rho), P.row_ptr, P.col_ind, p_values);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void jacobi_scaling_into(stream_t s, const CsrRef& A, double omega, bool l1, double* dinv, index_t* first_bad)
{
  fill(s, 1, INT_MAX, first_bad);
  const index_t n = A.nrows;
  if (n == 0) return;
  jacobi_scaling_kernel<<<grid_for(n), 256, 0, s>>>(n, A.row_ptr, A.col_ind, A.values, omega, l1, dinv, first_bad);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

index_t jacobi_scaling(stream_t s, const CsrRef& A, double omega, bool l1, double* dinv, index_t* scratch)
{
  if (A.nrows == 0) return 0;
  jacobi_scaling_into(s, A, omega, l1, dinv, scratch);
  const index_t bad = read(s, scratch);
  return bad == INT_MAX ? 0 : bad + 1;
}

void densify(stream_t s, const CsrRef& A, double* dense)
{
  const index_t n = A.nrows;
  if (n == 0) return;
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(dense, 0, sizeof(double) * size64_t(n) * n, s));
  densify_kernel<<<grid_for(n), 256, 0, s>>>(n, A.row_ptr, A.col_ind, A.values, dense);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

bool equal(stream_t s, const index_t* a, const index_t* b, size64_t n, index_t* scratch)
{
  return equal2(s, a, b, n, nullptr, nullptr, 0, scratch);
}

bool equal2(stream_t s, const index_t* a1, const index_t* b1, size64_t n1, const index_t* a2, const index_t* b2,
            size64_t n2, index_t* scratch)
{
  if (n1 == 0 && n2 == 0) return true;
  BLOCKRES_CUDA_CHECK(cudaMemsetAsync(scratch, 0, sizeof(index_t), s));
  if (n1 > 0) differ_kernel<<<grid_for(n1), 256, 0, s>>>(n1, a1, b1, scratch);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  if (n2 > 0) differ_kernel<<<grid_for(n2), 256, 0, s>>>(n2, a2, b2, scratch);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  return read(s, scratch) == 0;
}

namespace {

template <class V>
void jacobi_sweep_t(stream_t s, const CsrRefT<V>& A, const double* dinv, const double* b, const double* x_in,
                    double* x_out)
{
  if (A.nrows == 0) return;
  if (!x_in) {
    scale_kernel<<<grid_for(A.nrows), 256, 0, s>>>(A.nrows, dinv, b, x_out);
    BLOCKRES_CUDA_CHECK_LAUNCH();
    return;
  }
  csr_rows<jacobi_mode>(s, A, x_in, 0.0, 0.0, b, dinv, x_out);
}

}  // namespace

void spmv(stream_t s, const CsrRef& A, double alpha, const double* x, double beta, double* y)
{
  csr_rows<spmv_mode>(s, A, x, alpha, beta, nullptr, nullptr, y);
}
void spmv(stream_t s, const CsrRef32& A, double alpha, const double* x, double beta, double* y)
{
  csr_rows<spmv_mode>(s, A, x, alpha, beta, nullptr, nullptr, y);
}

void jacobi_sweep(stream_t s, const CsrRef& A, const double* dinv, const double* b, const double* x_in, double* x_out)
{
  jacobi_sweep_t(s, A, dinv, b, x_in, x_out);
}
void jacobi_sweep(stream_t s, const CsrRef32& A, const double* dinv, const double* b, const double* x_in, double* x_out)
{
  jacobi_sweep_t(s, A, dinv, b, x_in, x_out);
}

void residual(stream_t s, const CsrRef& A, const double* b, const double* x, double* r)
{
  csr_rows<residual_mode>(s, A, x, 0.0, 0.0, b, nullptr, r);
}
void residual(stream_t s, const CsrRef32& A, const double* b, const double* x, double* r)
{
  csr_rows<residual_mode>(s, A, x, 0.0, 0.0, b, nullptr, r);
}

void smooth_zero_residual(stream_t s, const CsrRef& A, const double* dinv, const double* b, double* x, double* r)
{
  csr_rows<zero_residual_mode>(s, A, nullptr, 0.0, 0.0, b, dinv, r, x);
}
void smooth_zero_residual(stream_t s, const CsrRef32& A, const double* dinv, const double* b, double* x, double* r)
{
  csr_rows<zero_residual_mode>(s, A, nullptr, 0.0, 0.0, b, dinv, r, x);
}


void ilu_jacobi_sweep(stream_t s, const CsrRef& LU, const double* dinv, bool upper, const double* b, const double* x,
                      double* y)
{
  const index_t n = LU.nrows;
  if (n == 0) return;
  if (!x) {
    if (upper) {
      scale_kernel<<<grid_for(n), 256, 0, s>>>(n, dinv, b, y);
      BLOCKRES_CUDA_CHECK_LAUNCH();
    } else {
      BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(y, b, sizeof(double) * size64_t(n), cudaMemcpyDeviceToDevice, s));
    }
    return;
  }
  if (upper) csr_rows<upper_sweep_mode>(s, LU, x, 0.0, 0.0, b, dinv, y);
  else csr_rows<lower_sweep_mode>(s, LU, x, 0.0, 0.0, b, nullptr, y);
}

size64_t device_resident_threads() { return resident_threads(); }

int cycle_lane_group(index_t nrows, size64_t nnz, size64_t resident_threads)
{
  // 2 or 4 lanes on the large levels: on the H200 (Poisson 8M rows, every level) 4 lanes gave a
  // V-cycle of 6.9 SpMV-equivalents, 8 lanes for rows of <= 8 entries and 32 for longer ones 8.2,
  // 16 lanes 13.1 (more rows in flight per warp beat fewer idle lanes). A coarse level of a few
  // thousand rows of ~100 entries leaves most of the device idle with 4 lanes and each group
  // walking its long row serially: there more lanes per row are free parallelism.
  const double mean = nrows > 0 && nnz > 0 ? double(nnz) / double(nrows) : 1.0;
  int g = mean <= 2.5 ? 2 : 4;
  while (g < 32 && double(g) < mean && size64_t(nrows) * size64_t(g) < resident_threads) g *= 2;
  return g;
}

}  // namespace blockres::amg::cuda
