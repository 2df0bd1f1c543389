// The AMG cycle on small levels in one launch (CUDA): the cycle's operations on the levels that
// fill a small part of the device (a few hundred rows, where each operation as its own kernel is
// mostly launch latency: on the 60x60x20 deck's pressure W-cycle 24 of 35 kernels per application
// worked on levels of at most 336 rows) are recorded in order and then run by one thread block,
// with a barrier between operations. Every operation is the CPU reference kernel's arithmetic in
// the CPU's order (cpu::spmv, jacobi_sweep, residual, smooth_zero_residual and kernels::cpu::lu_solve:
// one thread per row summing its entries in storage order, products and sums rounded separately,
// the LU solve with fused multiply-adds as the CPU's std::fma), so the result is the CPU twin's
// bit for bit where the CPU compiler does not contract a * b + c itself.
#pragma once

#include "kernels/amg/amg_kernels.hpp"

#include <vector>

namespace blockres::amg::cuda {

// One recorded operation (device pointers; see TailProgram).
struct TailOp {
  int kind = 0;
  index_t n = 0;
  const index_t* rp = nullptr;  // rows; the LU solve: the pivots
  const index_t* ci = nullptr;
  const double* v = nullptr;    // values; the LU solve: the factors
  const double* x = nullptr;
  const double* b = nullptr;
  const double* dinv = nullptr;
  double* y = nullptr;
  double* x_out = nullptr;
  double alpha = 0.0, beta = 0.0;
};

// Operations recorded on the host and run in order by launch(). Each is the cpu:: kernel of the
// same name on device arrays; an operation reads what the ones before it wrote.
class TailProgram {
 public:
  void spmv(const CsrRef& A, double alpha, const double* x, double beta, double* y);
  // x_in == nullptr: x_out = dinv .* b.
  void jacobi_sweep(const CsrRef& A, const double* dinv, const double* b, const double* x_in, double* x_out);
  void residual(const CsrRef& A, const double* b, const double* x, double* r);
  void smooth_zero_residual(const CsrRef& A, const double* dinv, const double* b, double* x, double* r);
  void zero(index_t n, double* x);
  // x = A^{-1} b from the dense row-major LU with partial pivoting of A (n <= 512), as
  // kernels::cpu::lu_solve.
  void lu_solve(index_t n, const double* lu, const index_t* piv, const double* b, double* x);

  // Runs the recorded operations on stream s (one thread block per launch, several launches when
  // there are more operations than one launch's parameters hold) and forgets them.
  void launch(stream_t s);
  void clear() { ops_.clear(); }
  bool empty() const { return ops_.empty(); }
  std::size_t size() const { return ops_.size(); }

 private:
  std::vector<TailOp> ops_;
};

}  // namespace blockres::amg::cuda
