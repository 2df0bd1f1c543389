// The AMG cycle's small levels in one thread block (amg_tail_cuda.hpp).
#include "kernels/amg/amg_tail_cuda.hpp"

#include "kernels/cuda_check.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace blockres::amg::cuda {

namespace {

enum TailKind : int { spmv_op, jacobi_op, scale_op, residual_op, zero_residual_op, zero_op, lu_op };

constexpr int tail_threads = 1024;
constexpr int tail_max_lu = 512;  // kernels::batched_lu_max_size
// Operations per launch: the batch is a kernel parameter, kept inside the classic 4 KB limit.
constexpr int tail_ops_per_launch = 44;
struct TailBatch {
  int count;
  TailOp op[tail_ops_per_launch];
};
static_assert(sizeof(TailBatch) <= 4000, "a launch's operations must fit the kernel parameter space");

// Shared memory for the products of one chunk of rows: the whole level at a time where it fits.
// 88 KB of dynamic shared memory (plus the LU solve's 4 KB) fits every architecture from sm_80
// (sm_86 and sm_89 allow 99 KB a block).
constexpr int tail_products = 88 * 1024 / 8;

// One row operation in two phases per chunk of rows (at most one row per thread, at most
// tail_products entries): every entry's rounded product a_ij x_j by all threads in one flat pass
// (independent loads, spread over the block), then each row's sum in storage order from shared
// memory by its thread; the arithmetic of the cpu:: kernels (products and sums rounded
// separately: __dmul_rn and __dadd_rn are never contracted into fused multiply-adds). A chunk
// whose single row has more entries than shared memory holds is summed from global memory.
// product(p): the rounded product of entry p; finish(i, sum_of(i)): writes row i.
template <class Product, class Finish>
__device__ void chunked_rows(const TailOp& o, double* prod, Product product, Finish finish)
{
  const index_t n = o.n;
  for (index_t r0 = 0; r0 < n;) {
    index_t r1 = n - r0 > index_t(blockDim.x) ? r0 + index_t(blockDim.x) : n;
    const index_t base = o.rp[r0];
    if (o.rp[r1] - base > tail_products) {  // the largest r1 whose entries fit (every thread alike)
      index_t lo = r0, hi = r1;
      while (hi - lo > 1) {
        const index_t mid = lo + (hi - lo) / 2;
        if (o.rp[mid] - base <= tail_products) lo = mid;
        else hi = mid;
      }
      r1 = lo > r0 ? lo : r0 + 1;
    }
    const index_t end = o.rp[r1];
    const bool staged = end - base <= tail_products;
    if (staged) {
      for (index_t p = base + index_t(threadIdx.x); p < end; p += index_t(blockDim.x)) prod[p - base] = product(p);
      __syncthreads();
    }
    const index_t i = r0 + index_t(threadIdx.x);
    if (i < r1) {
      const index_t b = o.rp[i], e = o.rp[i + 1];
      finish(i, [&](double s, bool subtract) {
        for (index_t p = b; p < e; ++p) {
          const double t = staged ? prod[p - base] : product(p);
          s = subtract ? __dsub_rn(s, t) : __dadd_rn(s, t);
        }
        return s;
      });
    }
    __syncthreads();
    r0 = r1;
  }
}

// kernels::cpu::lu_solve of one block by warp 0 (rows lane, lane + 32, ...), in shared memory.
__device__ void lu_solve_warp(const TailOp& o, double* xs)
{
  const int lane = static_cast<int>(threadIdx.x);
  const index_t n = o.n;
  const double* lu = o.v;
  for (index_t i = lane; i < n; i += 32) xs[i] = o.b[i];
  __syncwarp();
  if (lane == 0)
    for (index_t k = 0; k < n; ++k) {
      const index_t p = o.rp[k];
      if (p != k && p >= 0 && p < n) {
        const double t = xs[k];
        xs[k] = xs[p];
        xs[p] = t;
      }
    }
  __syncwarp();
  for (index_t j = 0; j < n; ++j) {  // L y = P b, L unit lower, column by column
    const double xj = xs[j];
    for (index_t i = j + 1 + ((lane - (j + 1)) % 32 + 32) % 32; i < n; i += 32)
      xs[i] = fma(-lu[size64_t(i) * n + j], xj, xs[i]);
    __syncwarp();
  }
  for (index_t j = n - 1; j >= 0; --j) {  // U x = y
    const double xj = xs[j] / lu[size64_t(j) * n + j];
    __syncwarp();
    if (j % 32 == lane) xs[j] = xj;
    for (index_t i = lane; i < j; i += 32) xs[i] = fma(-lu[size64_t(i) * n + j], xj, xs[i]);
    __syncwarp();
  }
  for (index_t i = lane; i < n; i += 32) o.y[i] = xs[i];
}

__global__ void __launch_bounds__(tail_threads) tail_kernel(const __grid_constant__ TailBatch batch)
{
  __shared__ double xs[tail_max_lu];
  extern __shared__ double prod[];
  for (int k = 0; k < batch.count; ++k) {
    const TailOp& o = batch.op[k];
    const index_t n = o.n;
    const auto ax = [&](index_t p) { return __dmul_rn(o.v[p], o.x[o.ci[p]]); };
    switch (o.kind) {
      case spmv_op:
        chunked_rows(o, prod, ax, [&](index_t i, auto sum_of) {
          const double s = sum_of(0.0, false);
          o.y[i] = o.beta == 0.0 ? __dmul_rn(o.alpha, s) : __dadd_rn(__dmul_rn(o.alpha, s), __dmul_rn(o.beta, o.y[i]));
        });
        break;
      case jacobi_op:
        chunked_rows(o, prod, ax, [&](index_t i, auto sum_of) {
          o.x_out[i] = __dadd_rn(o.x[i], __dmul_rn(o.dinv[i], sum_of(o.b[i], true)));
        });
        break;
      case residual_op:
        chunked_rows(o, prod, ax, [&](index_t i, auto sum_of) { o.y[i] = sum_of(o.b[i], true); });
        break;
      case zero_residual_op:  // x = dinv .* b, then r = b - A x: x_j recomputed where it is read
        chunked_rows(
            o, prod,
            [&](index_t p) {
              const index_t c = o.ci[p];
              return __dmul_rn(o.v[p], __dmul_rn(o.dinv[c], o.b[c]));
            },
            [&](index_t i, auto sum_of) {
              o.y[i] = sum_of(o.b[i], true);
              o.x_out[i] = __dmul_rn(o.dinv[i], o.b[i]);
            });
        break;
      case scale_op:
        for (index_t i = threadIdx.x; i < n; i += blockDim.x) o.x_out[i] = __dmul_rn(o.dinv[i], o.b[i]);
        break;
      case zero_op:
        for (index_t i = threadIdx.x; i < n; i += blockDim.x) o.y[i] = 0.0;
        break;
      case lu_op:
        if (threadIdx.x < 32) lu_solve_warp(o, xs);
        break;
      default: break;
    }
    __syncthreads();
  }
}

void check_csr(const CsrRef& A, const char* what)
{
  if (A.nrows < 0 || (A.nrows > 0 && (!A.row_ptr || !A.col_ind || !A.values)))
    throw std::invalid_argument(std::string("amg::cuda::TailProgram::") + what + ": incomplete matrix");
}

}  // namespace

void TailProgram::spmv(const CsrRef& A, double alpha, const double* x, double beta, double* y)
{
  check_csr(A, "spmv");
  if (A.nrows == 0) return;
  TailOp o;
  o.kind = spmv_op, o.n = A.nrows, o.rp = A.row_ptr, o.ci = A.col_ind, o.v = A.values, o.x = x, o.y = y;
  o.alpha = alpha, o.beta = beta;
  ops_.push_back(o);
}

void TailProgram::jacobi_sweep(const CsrRef& A, const double* dinv, const double* b, const double* x_in, double* x_out)
{
  check_csr(A, "jacobi_sweep");
  if (A.nrows == 0) return;
  TailOp o;
  o.kind = x_in ? jacobi_op : scale_op, o.n = A.nrows, o.rp = A.row_ptr, o.ci = A.col_ind, o.v = A.values;
  o.x = x_in, o.b = b, o.dinv = dinv, o.x_out = x_out;
  ops_.push_back(o);
}

void TailProgram::residual(const CsrRef& A, const double* b, const double* x, double* r)
{
  check_csr(A, "residual");
  if (A.nrows == 0) return;
  TailOp o;
  o.kind = residual_op, o.n = A.nrows, o.rp = A.row_ptr, o.ci = A.col_ind, o.v = A.values, o.x = x, o.b = b, o.y = r;
  ops_.push_back(o);
}

void TailProgram::smooth_zero_residual(const CsrRef& A, const double* dinv, const double* b, double* x, double* r)
{
  check_csr(A, "smooth_zero_residual");
  if (A.nrows == 0) return;
  TailOp o;
  o.kind = zero_residual_op, o.n = A.nrows, o.rp = A.row_ptr, o.ci = A.col_ind, o.v = A.values;
  o.b = b, o.dinv = dinv, o.y = r, o.x_out = x;
  ops_.push_back(o);
}

void TailProgram::zero(index_t n, double* x)
{
  if (n <= 0) return;
  TailOp o;
  o.kind = zero_op, o.n = n, o.y = x;
  ops_.push_back(o);
}

void TailProgram::lu_solve(index_t n, const double* lu, const index_t* piv, const double* b, double* x)
{
  if (n < 0 || n > tail_max_lu)
    throw std::invalid_argument("amg::cuda::TailProgram::lu_solve: " + std::to_string(n) + " rows (1.." +
                                std::to_string(tail_max_lu) + ")");
  if (n == 0) return;
  TailOp o;
  o.kind = lu_op, o.n = n, o.rp = piv, o.v = lu, o.b = b, o.y = x;
  ops_.push_back(o);
}

TailProgram::TailProgram()
{
  // The products' shared memory above the default 48 KB: set once, before any launch (and outside
  // any graph recording), for the device current at the first program.
  static const bool sized = [] {
    BLOCKRES_CUDA_CHECK(cudaFuncSetAttribute(tail_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(tail_products * sizeof(double))));
    return true;
  }();
  (void)sized;
}

void TailProgram::launch(stream_t s)
{
  for (std::size_t first = 0; first < ops_.size(); first += tail_ops_per_launch) {
    TailBatch batch{};
    batch.count = static_cast<int>(std::min<std::size_t>(tail_ops_per_launch, ops_.size() - first));
    std::copy_n(ops_.begin() + static_cast<std::ptrdiff_t>(first), batch.count, batch.op);
    tail_kernel<<<1, tail_threads, tail_products * sizeof(double), s>>>(batch);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
  ops_.clear();
}

}  // namespace blockres::amg::cuda
