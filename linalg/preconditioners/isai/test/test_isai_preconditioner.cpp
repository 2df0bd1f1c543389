// General ISAI preconditioner (M ~ A^{-1} on S(|A|^k)) on the CPU backend: exact on block-diagonal
// matrices (where the pattern holds the whole inverse), the scalar and block views giving the same
// application, Krylov convergence on a nonsymmetric convection-diffusion matrix, singular local
// systems reported, option checks.
#include "linalg/preconditioners/isai/isai_preconditioner.hpp"
#include "linalg/preconditioners/none/none.hpp"
#include "linalg/preconditioners/registry.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/test/preconditioner_test_util.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>

using namespace blockres;
using test::block_diagonal;
using test::upload;

TEST(IsaiPreconditioner, ExactOnBlockDiagonalMatrices)
{
  auto e = Executor::create_cpu();
  for (int bs : {1, 2, 3, 5, 8})
    for (IsaiView view : {IsaiView::scalar, IsaiView::block}) {
      auto A = upload(e, block_diagonal(37, bs));
      IsaiPreconditioner M(e, {1, view});
      ASSERT_TRUE(M.setup(A).ok);
      EXPECT_LE(test::applied_residual_ratio(A, M), 1e-13) << M.name() << " bs " << bs;
    }
}

TEST(IsaiPreconditioner, ScalarAndBlockViewsAgree)
{
  auto e = Executor::create_cpu();
  for (int bs : {1, 2, 3, 4})
    for (int k = 1; k <= 2; ++k) {
      auto A = upload(e, test::convection_diffusion(6, 5, 4, bs, 1.5));
      IsaiPreconditioner S(e, {k, IsaiView::scalar}), B(e, {k, IsaiView::block});
      ASSERT_TRUE(S.setup(A).ok);
      ASSERT_TRUE(B.setup(A).ok);
      const auto z = test::apply_both(A, B, A, S, test::random_vector(A.scalar_rows()));
      EXPECT_LE(test::max_rel_diff(z.z, z.ref), 1e-12) << B.name() << " bs " << bs;
      EXPECT_EQ(B.isai()->M().block_size(), bs);
      EXPECT_EQ(S.isai()->M().block_size(), 1);
    }
}

// Iteration bound: twice the largest count measured when the test was written (bs 1..3: GMRES(30)
// 28-35 with ISAI(1), 24-30 with ISAI(2), 56-82 without; BiCGSTAB 17-20, 15-17, 32-40). ISAI(1)
// must need fewer iterations than no preconditioner on every right-hand side; ISAI(2) no more
// than ISAI(1) in total over 4 random right-hand sides. (Per right-hand side that is not a
// property: BiCGSTAB's count moves by 1-2 with the rhs, and on the H200 machine one draw gave
// ISAI(2) 16 vs ISAI(1) 15.)
TEST(IsaiPreconditioner, KrylovConverges)
{
  auto e = Executor::create_cpu();
  constexpr int draws = 4;
  for (int bs : {1, 2, 3}) {
    auto A = upload(e, test::convection_diffusion(13, 14, 12, bs, 2.0));
    for (auto method : {KrylovMethod::gmres, KrylovMethod::bicgstab}) {
      const char* name = method == KrylovMethod::gmres ? "GMRES(30)" : "BiCGSTAB";
      KrylovSolver s(e, {method, 1e-10, 0.0, 3000, 30});
      IsaiPreconditioner M1(e, {1, IsaiView::block}), M2(e, {2, IsaiView::block});
      ASSERT_TRUE(M1.setup(A).ok);
      ASSERT_TRUE(M2.setup(A).ok);
      int total[3] = {0, 0, 0};  // none, ISAI(1), ISAI(2)
      for (int d = 0; d < draws; ++d) {
        const auto hb = test::random_vector(A.scalar_rows());
        Vector b(e, std::span<const double>(hb)), x(e, A.scalar_rows());
        IdentityPreconditioner none;
        fill(x, 0.0);
        const auto s0 = s.solve(A, none, b, x);
        total[0] += s0.iterations;
        for (int k = 1; k <= 2; ++k) {
          const IsaiPreconditioner& M = k == 1 ? M1 : M2;
          fill(x, 0.0);
          const auto st = s.solve(A, M, b, x);
          std::printf("%s + %s, bs %d: %d iterations (none: %d)\n", name, M.name().c_str(), bs, st.iterations,
                      s0.iterations);
          EXPECT_TRUE(st.converged) << name << " " << M.name() << ": " << to_string(st.reason);
          EXPECT_LE(st.residual, 1e-10 * st.initial_residual * 1.0000001);
          EXPECT_LT(st.iterations, s0.iterations) << name << " " << M.name() << " bs " << bs;
          EXPECT_LE(st.iterations, 70) << name << " " << M.name() << " bs " << bs;
          total[k] += st.iterations;
        }
      }
      EXPECT_LE(total[2], total[1]) << name << " bs " << bs << ": ISAI(2) took more iterations in total than ISAI(1)";
    }
  }
}

TEST(IsaiPreconditioner, SingularLocalSystemFailsSetup)
{
  auto e = Executor::create_cpu();
  auto m = block_diagonal(11, 3);
  for (int i = 0; i < 9; ++i) m.values[7 * 9 + i] = 0.0;  // block 7 zero: its local system is singular
  auto A = upload(e, m);
  for (IsaiView view : {IsaiView::scalar, IsaiView::block}) {
    IsaiPreconditioner M(e, {1, view});
    const auto st = M.setup(A);
    EXPECT_FALSE(st.ok) << M.name();
    EXPECT_NE(st.message.find("block column 7"), std::string::npos) << st.message;
  }
}

TEST(IsaiPreconditioner, OptionsAreChecked)
{
  auto e = Executor::create_cpu();
  EXPECT_THROW(IsaiPreconditioner(e, {0, IsaiView::block}), std::invalid_argument);
  EXPECT_THROW(IsaiPreconditioner(e, {max_isai_power + 1, IsaiView::scalar}), std::invalid_argument);
  auto A = upload(e, block_diagonal(5, 2));
  IsaiPreconditioner M(e);
  Vector r(e, 10), z(e, 10);
  EXPECT_THROW(M.apply(r, z), std::logic_error);  // before setup
  ASSERT_TRUE(M.setup(A).ok);
  Vector r9(e, 9), z9(e, 9);
  EXPECT_THROW(M.apply(r9, z9), std::invalid_argument);
  EXPECT_EQ(make_preconditioner(e, preconditioner_spec("isai"))->name(), "isai(1, block view)");
}
