// Shared pieces of the preconditioner tests (CPU and CUDA against CPU): block-diagonal test
// matrices, the ILU(0) option sets, the residual of an application, one application of two
// preconditioners to the same random vector with the output under test poisoned, and the GMRES and
// zeroed-row fixtures of the CUDA-against-CPU tests.
#pragma once

#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/preconditioners/preconditioner.hpp"
#include "linalg/test/gpu_test_util.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <span>
#include <string>
#include <vector>

namespace blockres::test {

// Block-diagonal BSR matrix with dense, well-conditioned nonsymmetric blocks: ILU(0) is its exact
// LU and every ISAI pattern holds the whole inverse.
inline TestMatrix block_diagonal(index_t n, int bs)
{
  TestMatrix m;
  m.bs = bs;
  m.pattern.nrows = m.pattern.ncols = n;
  for (index_t r = 0; r <= n; ++r) m.pattern.row_ptr.push_back(r);
  for (index_t r = 0; r < n; ++r) m.pattern.col_ind.push_back(r);
  m.values = random_values(m.pattern, bs, 2.0 * bs);
  return m;
}

// ||A z - r|| / ||r||.
inline double residual_ratio(const BsrMatrix& A, const Vector& z, const Vector& r)
{
  Vector w(r.exec_ptr(), r.size());
  copy(r, w);
  spmv(A, 1.0, z, -1.0, w);
  return norm2(w) / norm2(r);
}

// ||A z - r|| / ||r|| with z = M r for a random r, z poisoned before (M set up on A): about the
// rounding error where M is A's exact inverse.
inline double applied_residual_ratio(const BsrMatrix& A, const Preconditioner& M)
{
  const ExecPtr& e = A.exec_ptr();
  Vector r(e, std::span<const double>(random_vector(A.scalar_rows()))), z(e, A.scalar_rows());
  fill(z, std::numeric_limits<double>::quiet_NaN());
  M.apply(r, z);
  return residual_ratio(A, z, r);
}

// z = M r and z_ref = M_ref r for the host vector hr, each preconditioner set up on its matrix (on
// the same executor or on two: CUDA against the CPU); M's output is poisoned first, so an entry it
// does not write shows. Both on the host.
struct Applied {
  std::vector<double> z, ref;
};
inline Applied apply_both(const BsrMatrix& A, const Preconditioner& M, const BsrMatrix& A_ref,
                          const Preconditioner& M_ref, const std::vector<double>& hr)
{
  Vector r(A.exec_ptr(), std::span<const double>(hr)), z(A.exec_ptr(), hr.size());
  Vector r_ref(A_ref.exec_ptr(), std::span<const double>(hr)), z_ref(A_ref.exec_ptr(), hr.size());
  fill(z, std::numeric_limits<double>::quiet_NaN());
  M.apply(r, z);
  M_ref.apply(r_ref, z_ref);
  return {z.to_host(), z_ref.to_host()};
}

// New values for both matrices (the same structure: the next setup is numeric only).
inline void set_values(BsrMatrix& A, BsrMatrix& B, const std::vector<double>& values)
{
  A.values().copy_from_host(values);
  B.values().copy_from_host(values);
}

inline std::vector<double> scaled(std::vector<double> v, double s)
{
  for (auto& x : v) x *= s;
  return v;
}

// Scalar-view ILU(0) with exact solves, ISAI(1..3) in both views, and ISAI(1) with `sweeps`
// fixed-point sweeps in both views.
inline std::vector<Ilu0Options> ilu0_variants(int sweeps)
{
  return {{TriangularSolve::exact, 1, 0},
          {TriangularSolve::isai, 1, 0},
          {TriangularSolve::isai, 2, 0},
          {TriangularSolve::isai, 3, 0},
          {TriangularSolve::isai, 1, sweeps},
          {TriangularSolve::isai, 1, 0, IsaiView::block},
          {TriangularSolve::isai, 2, 0, IsaiView::block},
          {TriangularSolve::isai, 3, 0, IsaiView::block},
          {TriangularSolve::isai, 1, sweeps, IsaiView::block}};
}

// Block-view ILU(0) (factor_view = block) with exact or ISAI(power) block-view triangular solves.
inline Ilu0Options block_ilu0_options(TriangularSolve t = TriangularSolve::exact, int power = 1)
{
  Ilu0Options o;
  o.trisolve = t;
  o.isai_power = power;
  o.view = IsaiView::block;
  o.factor_view = IluFactorView::block;
  return o;
}

// ---- CUDA against the CPU --------------------------------------------------------------------------

// A matrix on the CPU and on the first CUDA device.
struct OnBothBackends {
  ExecPtr cpu = Executor::create_cpu();
  ExecPtr gpu = Executor::create_cuda(0);
  BsrMatrix Ac, Ag;
  explicit OnBothBackends(const TestMatrix& m) : Ac(upload(cpu, m)), Ag(upload(gpu, m)) {}
};

// The 7x6x5 convection-diffusion matrix (bs 2, drift 1.0) with block row 97 zeroed, on both backends:
// a zero pivot for ILU(0), singular local systems for ISAI.
inline OnBothBackends zeroed_row_on_both_backends()
{
  auto m = convection_diffusion(7, 6, 5, 2, 1.0);
  zero_block_row(m, 97);
  return OnBothBackends(m);
}

// GMRES on the 23x21x19 convection-diffusion matrices (drift 2.0) of block sizes 1, 2 and 4 with the same
// random right-hand side on both backends: for each variant, make(executor, variant) gives the
// preconditioner of each backend, both set up on the matrix, and expect_gmres_agrees compares them.
template <class Variant, class Make>
void expect_gmres_agrees_on_stencils(const std::vector<Variant>& variants, Make make, int max_iterations)
{
  auto cpu = Executor::create_cpu();
  auto gpu = Executor::create_cuda(0);
  for (int bs : {1, 2, 4}) {
    const auto m = convection_diffusion(23, 21, 19, bs, 2.0);
    auto Ac = upload(cpu, m);
    auto Ag = upload(gpu, m);
    const auto hb = random_vector(Ac.scalar_rows());
    for (const auto& variant : variants) {
      auto Mc = make(cpu, variant);
      auto Mg = make(gpu, variant);
      ASSERT_TRUE(Mc.setup(Ac).ok);
      ASSERT_TRUE(Mg.setup(Ag).ok);
      expect_gmres_agrees(Ac, Mc, Ag, Mg, hb, max_iterations, Mg.name() + " bs " + std::to_string(bs));
    }
  }
}

}  // namespace blockres::test
