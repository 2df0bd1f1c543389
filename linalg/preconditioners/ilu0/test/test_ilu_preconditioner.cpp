// ILU(0) preconditioner on the CPU backend: exact on a block-diagonal matrix (where ILU(0) is the
// exact LU and the ISAI pattern is closed), GMRES/BiCGSTAB convergence with exact and ISAI
// triangular solves on a nonsymmetric convection-diffusion matrix, sweeps moving the ISAI
// application toward the exact one, zero pivots reported, option checks.
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"
#include "linalg/preconditioners/ilu0/ilu_preconditioner.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/test/preconditioner_test_util.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>

using namespace blockres;
using test::block_diagonal;
using test::upload;

namespace {

const std::vector<Ilu0Options> all_variants = test::ilu0_variants(2);

}  // namespace

TEST(Ilu0Preconditioner, ExactOnBlockDiagonalMatrices)
{
  auto e = Executor::create_cpu();
  for (int bs : {1, 2, 3, 5, 8})
    for (const auto& opt : all_variants) {
      auto A = upload(e, block_diagonal(37, bs));
      Ilu0Preconditioner M(e, opt);
      ASSERT_TRUE(M.setup(A).ok);
      EXPECT_LE(test::applied_residual_ratio(A, M), 1e-13) << M.name() << " bs " << bs;
    }
}

// Iteration bounds: about twice the largest counts measured when the test was written, for
// bs 1..3: exact ILU(0) GMRES(30) 18-22 / BiCGSTAB 11-12; ISAI(1) GMRES(30) 29-36 / BiCGSTAB
// 18-20 (ISAI(2), ISAI(3) and sweeps need fewer). ILU(0) must also beat natural block-Jacobi.
TEST(Ilu0Preconditioner, KrylovConvergesWithEveryVariant)
{
  auto e = Executor::create_cpu();
  for (int bs : {1, 2, 3}) {
    auto m = test::convection_diffusion(13, 14, 12, bs, 2.0);
    auto A = upload(e, m);
    const auto hb = test::random_vector(A.scalar_rows());
    int exact_its[2] = {0, 0};
    for (const auto& opt : all_variants)
      for (auto method : {KrylovMethod::gmres, KrylovMethod::bicgstab}) {
        Ilu0Preconditioner M(e, opt);
        ASSERT_TRUE(M.setup(A).ok) << M.name();
        Vector b(e, std::span<const double>(hb)), x(e, A.scalar_rows());
        fill(x, 0.0);
        KrylovSolver s(e, {method, 1e-10, 0.0, 1000, 30});
        const auto st = s.solve(A, M, b, x);
        const char* name = method == KrylovMethod::gmres ? "GMRES(30)" : "BiCGSTAB";
        std::printf("%s + %s, bs %d: %d iterations\n", name, M.name().c_str(), bs, st.iterations);
        EXPECT_TRUE(st.converged) << name << " " << M.name() << " bs " << bs << ": " << to_string(st.reason);
        EXPECT_LE(st.residual, 1e-10 * st.initial_residual * 1.0000001);
        EXPECT_LE(st.iterations, opt.trisolve == TriangularSolve::exact ? 45 : 75) << name << " " << M.name();
        if (opt.trisolve == TriangularSolve::exact) exact_its[method == KrylovMethod::gmres ? 0 : 1] = st.iterations;
        // ILU(0) must beat block-Jacobi on this matrix.
        if (opt.trisolve == TriangularSolve::exact) {
          BlockJacobiPreconditioner J(e);
          ASSERT_TRUE(J.setup(A).ok);
          fill(x, 0.0);
          const auto sj = s.solve(A, J, b, x);
          std::printf("%s + block-Jacobi, bs %d: %d iterations\n", name, bs, sj.iterations);
          EXPECT_LT(st.iterations, sj.iterations) << name << " bs " << bs;
        }
      }
    EXPECT_GT(exact_its[0], 0);
  }
}

// x_s = ISAI application with s sweeps: ||x_s - x_exact|| shrinks with s on a diagonally
// dominant matrix (the sweeps are a convergent fixed-point iteration there).
TEST(Ilu0Preconditioner, SweepsApproachTheExactSolve)
{
  auto e = Executor::create_cpu();
  auto A = upload(e, test::convection_diffusion(9, 8, 7, 2, 1.0));
  Vector r(e, std::span<const double>(test::random_vector(A.scalar_rows()))), ze(e, A.scalar_rows());
  Ilu0Preconditioner exact(e, {TriangularSolve::exact, 1, 0});
  ASSERT_TRUE(exact.setup(A).ok);
  exact.apply(r, ze);
  double prev = INFINITY;
  for (int sweeps : {0, 1, 2, 4, 8, max_isai_sweeps}) {
    Ilu0Preconditioner M(e, {TriangularSolve::isai, 1, sweeps});
    ASSERT_TRUE(M.setup(A).ok);
    Vector z(e, A.scalar_rows()), d(e, A.scalar_rows());
    M.apply(r, z);
    copy(ze, d);
    axpby(1.0, z, -1.0, d);
    const double err = norm2(d) / norm2(ze);
    std::printf("ISAI(1), %d sweeps: relative distance to the exact ILU(0) application %.3e\n", sweeps, err);
    EXPECT_LT(err, prev) << sweeps << " sweeps";
    prev = err;
  }
  EXPECT_LT(prev, 1e-9);  // measured: 0.2 without sweeps, ~1e-6 after 8
}

TEST(Ilu0Preconditioner, ZeroPivotFailsSetupNamingTheRow)
{
  auto e = Executor::create_cpu();
  auto m = block_diagonal(11, 3);
  for (int i = 0; i < 9; ++i) m.values[7 * 9 + i] = 0.0;  // block row 7 singular
  auto A = upload(e, m);
  for (const auto& opt : all_variants) {
    Ilu0Preconditioner M(e, opt);
    const auto st = M.setup(A);
    EXPECT_FALSE(st.ok);
    EXPECT_NE(st.message.find("block row 7"), std::string::npos) << st.message;
  }
}

TEST(Ilu0Preconditioner, OptionsAreChecked)
{
  auto e = Executor::create_cpu();
  EXPECT_THROW(Ilu0Preconditioner(e, {TriangularSolve::isai, 0, 0}), std::invalid_argument);
  EXPECT_THROW(Ilu0Preconditioner(e, {TriangularSolve::isai, max_isai_power + 1, 0}), std::invalid_argument);
  EXPECT_THROW(Ilu0Preconditioner(e, {TriangularSolve::isai, 1, -1}), std::invalid_argument);
  auto A = upload(e, block_diagonal(5, 2));
  Ilu0Preconditioner M(e);
  ASSERT_TRUE(M.setup(A).ok);
  Vector r(e, 9), z(e, 9);
  EXPECT_THROW(M.apply(r, z), std::invalid_argument);
  // cuSPARSE is a CUDA implementation and has no block view; on the CPU "automatic" and "blockres" are ours.
  Ilu0Options cus;
  cus.implementation = IluImplementation::cusparse;
  EXPECT_THROW(Ilu0Preconditioner(e, cus), std::invalid_argument);
  cus.factor_view = IluFactorView::block;
  EXPECT_THROW(make_preconditioner(e, cus), std::invalid_argument);
  for (auto impl : {IluImplementation::automatic, IluImplementation::blockres}) {
    Ilu0Options o;
    o.implementation = impl;
    Ilu0Preconditioner P(e, o);
    EXPECT_EQ(P.name(), "ilu0(exact triangular solves)");
    ASSERT_TRUE(P.setup(A).ok);
    EXPECT_EQ(P.setup_summary(), "");
  }
}

// The block view solves one system with bs right-hand sides per block column instead of one per
// scalar column, and stores M as BSR; the ISAI matrix, hence the application, is the same.
TEST(Ilu0Preconditioner, BlockViewAppliesLikeScalarView)
{
  auto e = Executor::create_cpu();
  for (int bs : {1, 2, 3, 5})
    for (int k = 1; k <= max_isai_power; ++k)
      for (int sweeps : {0, 2}) {
        auto A = upload(e, test::convection_diffusion(7, 6, 5, bs, 1.5));
        Ilu0Preconditioner S(e, {TriangularSolve::isai, k, sweeps, IsaiView::scalar});
        Ilu0Preconditioner B(e, {TriangularSolve::isai, k, sweeps, IsaiView::block});
        ASSERT_TRUE(S.setup(A).ok);
        ASSERT_TRUE(B.setup(A).ok);
        const auto z = test::apply_both(A, B, A, S, test::random_vector(A.scalar_rows()));
        EXPECT_LE(test::max_rel_diff(z.z, z.ref), 1e-12) << B.name() << " bs " << bs;
        EXPECT_EQ(B.isai_matrix(kernels::Triangle::upper)->block_size(), bs);
        // The block view also stores the zero halves of the diagonal blocks.
        EXPECT_GE(B.isai_nnz(), S.isai_nnz());
      }
}
