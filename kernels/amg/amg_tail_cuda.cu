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

// The arithmetic of the cpu:: kernels, products and sums rounded separately (__dmul_rn / __dadd_rn
// are never contracted into fused multiply-adds).
__device__ __forceinline__ double row_dot(const TailOp& o, index_t i)
{
  double s = 0.0;
  for (index_t p = o.rp[i]; p < o.rp[i + 1]; ++p) s = __dadd_rn(s, __dmul_rn(o.v[p], o.x[o.ci[p]]));
  return s;
}
__device__ __forceinline__ double row_residual(const TailOp& o, index_t i, const double* x)
{
  double s = o.b[i];
  for (index_t p = o.rp[i]; p < o.rp[i + 1]; ++p) s = __dsub_rn(s, __dmul_rn(o.v[p], x[o.ci[p]]));
  return s;
}
// cpu::smooth_zero_residual: x = dinv .* b, then r = b - A x; x_j recomputed where it is read.
__device__ __forceinline__ double row_zero_residual(const TailOp& o, index_t i)
{
  double s = o.b[i];
  for (index_t p = o.rp[i]; p < o.rp[i + 1]; ++p) {
    const index_t c = o.ci[p];
    s = __dsub_rn(s, __dmul_rn(o.v[p], __dmul_rn(o.dinv[c], o.b[c])));
  }
  return s;
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
  for (int k = 0; k < batch.count; ++k) {
    const TailOp& o = batch.op[k];
    const index_t n = o.n;
    switch (o.kind) {
      case spmv_op:
        for (index_t i = threadIdx.x; i < n; i += blockDim.x) {
          const double s = row_dot(o, i);
          o.y[i] = o.beta == 0.0 ? __dmul_rn(o.alpha, s) : __dadd_rn(__dmul_rn(o.alpha, s), __dmul_rn(o.beta, o.y[i]));
        }
        break;
      case jacobi_op:
        for (index_t i = threadIdx.x; i < n; i += blockDim.x)
          o.x_out[i] = __dadd_rn(o.x[i], __dmul_rn(o.dinv[i], row_residual(o, i, o.x)));
        break;
      case scale_op:
        for (index_t i = threadIdx.x; i < n; i += blockDim.x) o.x_out[i] = __dmul_rn(o.dinv[i], o.b[i]);
        break;
      case residual_op:
        for (index_t i = threadIdx.x; i < n; i += blockDim.x) o.y[i] = row_residual(o, i, o.x);
        break;
      case zero_residual_op:
        for (index_t i = threadIdx.x; i < n; i += blockDim.x) {
          o.y[i] = row_zero_residual(o, i);
          o.x_out[i] = __dmul_rn(o.dinv[i], o.b[i]);
        }
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

void TailProgram::launch(stream_t s)
{
  for (std::size_t first = 0; first < ops_.size(); first += tail_ops_per_launch) {
    TailBatch batch{};
    batch.count = static_cast<int>(std::min<std::size_t>(tail_ops_per_launch, ops_.size() - first));
    std::copy_n(ops_.begin() + static_cast<std::ptrdiff_t>(first), batch.count, batch.op);
    tail_kernel<<<1, tail_threads, 0, s>>>(batch);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
  ops_.clear();
}

}  // namespace blockres::amg::cuda
