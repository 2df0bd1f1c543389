// The operations the AMG setup driver and V-cycle need from a backend: the CPU reference kernels
// (amg_ops_cpu.cpp) or the CUDA kernels and cuSPARSE (amg_kernels_cuda.cu). Matrices and vectors
// are in the backend executor's memory; outputs are (re)allocated by the operation.
#pragma once

#include "linalg/preconditioners/amg/amg.hpp"

#include <functional>
#include <memory>
#include <utility>

namespace blockres::amg {

// The CUDA backend's coarsest level from this many rows up is solved by a product with its explicit
// inverse (Ops::coarse_factor); below, lu_solve's register and warp kernels substitute in a few us.
inline constexpr index_t coarse_inverse_min_rows = 65;

class Ops {
 public:
  virtual ~Ops() = default;
  static std::unique_ptr<Ops> create(const ExecPtr& exec);

  // Setup, symbolic (see amg_kernels.hpp for the definitions).
  virtual void strength_graph(const CsrRef& A, index_t n_local, double theta, Matrix& G) = 0;
  // agg: G.nrows entries (allocated by the call); returns the number of aggregates.
  virtual index_t handshake_match(const Matrix& G, Array<index_t>& agg) = 0;
  virtual index_t mis2_aggregate(const Matrix& G, Array<index_t>& agg) = 0;
  virtual void coarse_graph(const Matrix& G, const Array<index_t>& agg, index_t nc, Matrix& Gc) = 0;
  // agg[i] = pass_agg[agg[i]] (where agg[i] >= 0)
  virtual void compose(Array<index_t>& agg, const Array<index_t>& pass_agg) = 0;
  virtual void tentative_prolongation(const Array<index_t>& agg, index_t nc, Matrix& P) = 0;
  // C = A B: the pattern (and the plan) now, the values by product_numeric.
  virtual std::unique_ptr<Plan> product_symbolic(const CsrRef& A, const CsrRef& B, Matrix& C) = 0;
  virtual void product_numeric(Plan& plan, const CsrRef& A, const CsrRef& B, Matrix& C) = 0;
  // R = P^T: pattern now, values by transpose_numeric.
  virtual std::unique_ptr<Plan> transpose_symbolic(const Matrix& P, Matrix& R) = 0;
  virtual void transpose_numeric(Plan& plan, const Matrix& P, Matrix& R) = 0;
  // Structure key: do A's row pointers and columns equal the stored copies?
  virtual bool same_structure(const Array<index_t>& row_ptr, const Array<index_t>& col_ind, const CsrRef& A) = 0;

  // Setup, numeric.
  virtual double jacobi_radius_bound(const CsrRef& A) = 0;
  // P holds A P0 on entry (its values), (I - omega D^-1 A) P0 on exit.
  virtual void smoothed_prolongation(const CsrRef& A, const Array<index_t>& agg, double omega, Matrix& P) = 0;
  virtual index_t jacobi_scaling(const CsrRef& A, double omega, bool l1, Array<double>& dinv) = 0;
  // Dense row-major copy of A (n x n, n = A.nrows <= 512), LU with partial pivoting in place;
  // returns the LU's info (0: factored). inv: the CUDA backend above coarse_inverse_min_rows rows also
  // forms the explicit inverse from the factors (kernels::cuda::lu_inverse), which coarse_solve then
  // multiplies by (one cuBLAS gemv: a 329-row coarsest level's substitutions took ~200 us a solve on an
  // H100, a product a few); elsewhere inv is left empty and coarse_solve substitutes with the LU (the
  // CPU backend's results are the ones before the inverse existed).
  virtual int coarse_factor(const CsrRef& A, Array<double>& lu, Array<index_t>& piv, Array<double>& inv) = 0;
  // The numeric re-setup's forms of the four above: results stay in executor memory, so the
  // CUDA backend queues a whole re-setup without waiting for the device (the driver reads every
  // level's status with one copy at the end). *rho: the radius bound; smoothed_prolongation_from
  // uses omega = 4 / (3 rho) from *rho (0 when rho = 0), computed where rho lives; *first_bad: the
  // first row with a zero or non-finite scaling, INT_MAX when none; *info: the LU's info.
  virtual void jacobi_radius_bound_into(const CsrRef& A, double* rho) = 0;
  virtual void smoothed_prolongation_from(const CsrRef& A, const Array<index_t>& agg, const double* rho, Matrix& P) = 0;
  virtual void jacobi_scaling_into(const CsrRef& A, double omega, bool l1, Array<double>& dinv, index_t* first_bad) = 0;
  virtual void coarse_factor_into(const CsrRef& A, Array<double>& lu, Array<index_t>& piv, Array<double>& inv,
                                  index_t* info) = 0;

  // ILU(0) smoother (AmgSmoother::ilu0) of one level. ilu_symbolic (full setup, may wait for the
  // device): A's pattern sorted by row (cpu::sorted_pattern), its level schedule and the work
  // vectors, for triangular solves that are exact (trisolve_sweeps = 0: level-scheduled,
  // kernels/ilu_isai/ilu_block.hpp with 1 x 1 blocks) or trisolve_sweeps Jacobi sweeps per factor
  // (cpu::ilu_jacobi_sweep). ilu_factor_into (numeric, no wait): ILU(0) of A's current values on
  // that pattern; *info = 0, or i + 1 for the first row i whose pivot is zero or not finite.
  // ilu_sweep: x_out = x_in + (L U)^{-1} (b - A x_in) (x_in == nullptr: x_out = (L U)^{-1} b);
  // work holds n doubles; x_out must not alias x_in or b.
  virtual std::unique_ptr<Plan> ilu_symbolic(const CsrRef& A, int trisolve_sweeps) = 0;
  virtual void ilu_factor_into(Plan& plan, const CsrRef& A, index_t* info) = 0;
  virtual void ilu_sweep(const Plan& plan, const CsrRef& A, const double* b, const double* x_in, double* x_out,
                         double* work) = 0;

  // Cycle. The operator is a CycleRef: fp64 values, or with fp32 storage (StoragePrecision::fp32) the
  // fp32 copy of its values, read in fp64 arithmetic with fp64 vectors.
  virtual void coarse_solve(index_t n, const Array<double>& lu, const Array<index_t>& piv, const Array<double>& inv,
                            const double* b, double* x) = 0;
  virtual void spmv(const CycleRef& A, double alpha, const double* x, double beta, double* y) = 0;
  virtual void jacobi_sweep(const CycleRef& A, const double* dinv, const double* b, const double* x_in,
                            double* x_out) = 0;
  virtual void residual(const CycleRef& A, const double* b, const double* x, double* r) = 0;
  // jacobi_sweep from zero, then residual (one pass on CUDA; see cpu::smooth_zero_residual).
  virtual void smooth_zero_residual(const CycleRef& A, const double* dinv, const double* b, double* x, double* r) = 0;
  // The fp32 copy of n values (the setups of fp32 storage).
  virtual void to_fp32(size64_t n, const double* in, float* out) = 0;

  // Work recorded once and replayed as one launch (CUDA graphs, linalg/stream_graph.hpp), one
  // recording per slot:
  //   cycle    the cycle: recorded by an apply (nothing runs), replayed by the applies after it
  //            while the hierarchy's arrays stay where they are;
  //   numeric  a numeric re-setup's launches (products, transposes, scalings, coarse LU), replayed
  //            by the next re-setups of the same matrix arrays.
  // record returns false when nothing was recorded: the CPU (no graphs), a stream that is being
  // recorded already (a caller's recording, e.g. CPR's: the work goes into that one), or a call in
  // body that cannot be recorded; body's work has not run then. replay returns false when the slot
  // holds no recording or the stream is being recorded.
  enum class Graph { cycle, numeric };
  virtual bool record(Graph, const std::function<void()>& body)
  {
    (void)body;
    return false;
  }
  virtual bool replay(Graph) { return false; }
  virtual void drop_graph(Graph) {}
};

// The ILU(0) smoother's application, the same sequence of operations on both backends:
//   rhs = b (x_in == nullptr) or work = b - A x_in (residual(work));
//   c = L^{-1} rhs, u = U^{-1} c: exact (lower(rhs, c), upper(c, u)) or, with k = sweeps >= 1,
//     the Jacobi sweeps y_0 = rhs, y_s = sweep(lower, rhs, y_{s-1}), c = y_k and
//     u_0 = sweep(upper, c, nullptr), u_s = sweep(upper, c, u_{s-1}), u = u_k;
//   x_out = u (x_in == nullptr: written there directly) or x_in + u (add(x_in, u, x_out)).
// w1, w2: n doubles each beside work (n doubles); the buffers alternate so that no operation
// reads what it writes.
template <class Residual, class Lower, class Upper, class Sweep, class Add>
void ilu_smoother_apply(int sweeps, const double* b, const double* x_in, double* x_out, double* work, double* w1,
                        double* w2, Residual residual, Lower lower, Upper upper, Sweep sweep, Add add)
{
  const double* rhs = b;
  if (x_in) {
    residual(work);
    rhs = work;
  }
  if (sweeps == 0) {
    lower(rhs, w1);
    upper(w1, x_in ? w2 : x_out);
    if (x_in) add(x_in, w2, x_out);
    return;
  }
  const double* y = rhs;
  for (int s = 0; s < sweeps; ++s) {
    double* next = s % 2 == 0 ? w1 : w2;
    sweep(false, rhs, y, next);
    y = next;
  }
  // c = y (w1 or w2). The upper iterates alternate between the two buffers that are not c, the
  // last one (write sweeps + 1) landing in `last`.
  double* free_w = y == w1 ? w2 : w1;
  double* last = x_in ? free_w : x_out;
  double* other = x_in ? work : free_w;  // work (rhs) is no longer read once c is made
  const int writes = sweeps + 1;
  const double* u = nullptr;
  for (int s = 0; s < writes; ++s) {
    double* next = (writes - 1 - s) % 2 == 0 ? last : other;
    sweep(true, y, u, next);
    u = next;
  }
  if (x_in) add(x_in, u, x_out);
}

// `sweeps` smoothing steps of a cycle level, the same for the serial and the distributed hierarchy: x and t
// alternate (a Jacobi sweep reads the old iterate everywhere), the first from zero when from_zero;
// sweep(x_in, x_out) is one step x_out = x_in + M^{-1} (b - A x_in) (x_in == nullptr: from zero).
template <class Sweep>
void smooth(int sweeps, bool from_zero, Array<double>& x, Array<double>& t, Sweep sweep)
{
  for (int s = 0; s < sweeps; ++s) {
    if (from_zero && s == 0) {
      sweep(nullptr, x.data());
    } else {
      sweep(x.data(), t.data());
      std::swap(x, t);
    }
  }
}

#if BLOCKRES_HAVE_CUDA
std::unique_ptr<Ops> make_cuda_ops(const ExecPtr& exec);  // amg_kernels_cuda.cu
#endif

}  // namespace blockres::amg
