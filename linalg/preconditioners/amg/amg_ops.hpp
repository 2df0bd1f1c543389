// The operations the AMG setup driver and V-cycle need from a backend: the CPU reference kernels
// (amg_ops_cpu.cpp) or the CUDA kernels and cuSPARSE (amg_kernels_cuda.cu). Matrices and vectors
// are in the backend executor's memory; outputs are (re)allocated by the operation.
#pragma once

#include "linalg/preconditioners/amg/amg.hpp"

#include <memory>

namespace blockres::amg {

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
  // returns the LU's info (0: factored).
  virtual int coarse_factor(const CsrRef& A, Array<double>& lu, Array<index_t>& piv) = 0;
  // The numeric re-setup's forms of the four above: results stay in executor memory, so the
  // CUDA backend queues a whole re-setup without waiting for the device (the driver reads every
  // level's status with one copy at the end). *rho: the radius bound; smoothed_prolongation_from
  // uses omega = 4 / (3 rho) from *rho (0 when rho = 0), computed where rho lives; *first_bad: the
  // first row with a zero or non-finite scaling, INT_MAX when none; *info: the LU's info.
  virtual void jacobi_radius_bound_into(const CsrRef& A, double* rho) = 0;
  virtual void smoothed_prolongation_from(const CsrRef& A, const Array<index_t>& agg, const double* rho, Matrix& P) = 0;
  virtual void jacobi_scaling_into(const CsrRef& A, double omega, bool l1, Array<double>& dinv, index_t* first_bad) = 0;
  virtual void coarse_factor_into(const CsrRef& A, Array<double>& lu, Array<index_t>& piv, index_t* info) = 0;

  // Cycle.
  virtual void coarse_solve(index_t n, const Array<double>& lu, const Array<index_t>& piv, const double* b,
                            double* x) = 0;
  virtual void spmv(const CsrRef& A, double alpha, const double* x, double beta, double* y) = 0;
  virtual void jacobi_sweep(const CsrRef& A, const double* dinv, const double* b, const double* x_in, double* x_out) = 0;
  virtual void residual(const CsrRef& A, const double* b, const double* x, double* r) = 0;
  // jacobi_sweep from zero, then residual (one pass on CUDA; see cpu::smooth_zero_residual).
  virtual void smooth_zero_residual(const CsrRef& A, const double* dinv, const double* b, double* x, double* r) = 0;

  // Work recorded once and replayed as one launch (CUDA graphs), one recording per slot:
  //   cycle    the V-cycle: the first apply after a setup records the cycle's launches
  //            (capture_begin .. capture_end, nothing runs), later applies replay them;
  //   numeric  a numeric re-setup's launches (products, transposes, scalings, coarse LU), replayed
  //            by the next re-setups of the same matrix arrays.
  // capture_end returns false when the recording failed (a library call that cannot be recorded);
  // capture_abort ends a recording after an exception. The CPU has no graphs: capture_begin and
  // replay return false.
  enum class Graph { cycle, numeric };
  virtual bool capture_begin(Graph) { return false; }
  virtual bool capture_end(Graph) { return false; }
  virtual void capture_abort() {}
  virtual bool replay(Graph) { return false; }
  virtual void drop_graph(Graph) {}
};

#if BLOCKRES_HAVE_CUDA
std::unique_ptr<Ops> make_cuda_ops(const ExecPtr& exec);  // amg_kernels_cuda.cu
#endif

}  // namespace blockres::amg
