// Block ILU(0) preconditioner (factor_view = block) on the CPU backend: created by the factory
// with its name; the same application as the scalar-view ILU(0) (bs 1..64); exact on block
// tridiagonal matrices; GMRES(30) and IDR(4) on a nonsymmetric convection-diffusion block
// stencil in at most the scalar ILU(0)'s iterations + 2 (exact solves), ISAI(k) block view
// converging too; singular diagonal blocks reported by block row; symbolic reuse with new values;
// option checks.
#include "linalg/preconditioners/ilu0/block_ilu_preconditioner.hpp"
#include "linalg/preconditioners/ilu0/ilu_preconditioner.hpp"
#include "linalg/preconditioners/registry.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/test/preconditioner_test_util.hpp"
#include "linalg/test/random_matrix.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <stdexcept>

using namespace blockres;
using test::block_ilu0_options;
using test::upload;

namespace {

// 1D convection-diffusion: block tridiagonal, so block ILU(0) is the exact block LU.
test::TestMatrix chain(int n, int bs) { return test::convection_diffusion(n, 1, 1, bs, 1.5); }

}  // namespace

TEST(BlockIlu0Preconditioner, FactoryAndName)
{
  auto e = Executor::create_cpu();
  Ilu0Options o;
  EXPECT_EQ(make_preconditioner(e, preconditioner_spec("ilu0"))->name(), "ilu0(exact triangular solves)");
  o.factor_view = IluFactorView::block;
  EXPECT_EQ(make_preconditioner(e, {"ilu0", o})->name(), "ilu0(block, exact triangular solves)");
  o = block_ilu0_options(TriangularSolve::isai, 2);
  auto M = make_preconditioner(e, {"ilu0", o});
  EXPECT_EQ(M->name(), "ilu0(block, isai(2, block view))");
  EXPECT_NE(dynamic_cast<BlockIlu0Preconditioner*>(M.get()), nullptr);
  EXPECT_EQ(to_string(IluFactorView::block), "block");
  EXPECT_EQ(to_string(IluFactorView::scalar), "scalar");
}

TEST(BlockIlu0Preconditioner, AppliesLikeScalarViewIlu0)
{
  auto e = Executor::create_cpu();
  for (int bs : {1, 2, 3, 5, 8, 17, 33, 64}) {
    const int n = bs <= 8 ? 6 : bs <= 17 ? 4 : 3;
    auto A = upload(e, test::convection_diffusion(n, n - 1, 3, bs, 2.0));
    Ilu0Preconditioner S(e);
    BlockIlu0Preconditioner B(e, block_ilu0_options());
    ASSERT_TRUE(S.setup(A).ok);
    ASSERT_TRUE(B.setup(A).ok);
    EXPECT_EQ(B.factor_nnz(), A.values().size());
    EXPECT_EQ(B.diagonal_inverses().size(), A.nrows() * size64_t(bs) * bs);
    const auto z = test::apply_both(A, B, A, S, test::random_vector(A.scalar_rows()));
    EXPECT_LE(test::max_rel_diff(z.z, z.ref), 1e-11) << "bs " << bs;
  }
}

TEST(BlockIlu0Preconditioner, ExactOnBlockTridiagonalMatrices)
{
  auto e = Executor::create_cpu();
  for (int bs : {1, 2, 5, 16, 33}) {
    auto A = upload(e, chain(29, bs));
    BlockIlu0Preconditioner M(e, block_ilu0_options());
    ASSERT_TRUE(M.setup(A).ok);
    EXPECT_EQ(M.lower_levels(), 29);
    EXPECT_LE(test::applied_residual_ratio(A, M), 1e-13) << "bs " << bs;
  }
}

// Iteration bound of the task: block ILU(0) with exact solves needs at most the scalar ILU(0)'s
// iterations + 2 (they are the same preconditioner up to rounding). ISAI: a generous bound.
TEST(BlockIlu0Preconditioner, KrylovConvergesLikeScalarIlu0)
{
  auto e = Executor::create_cpu();
  for (int bs : {1, 3, 4}) {
    auto A = upload(e, test::convection_diffusion(13, 12, 11, bs, 2.0));
    const auto hb = test::random_vector(A.scalar_rows());
    for (auto method : {KrylovMethod::gmres, KrylovMethod::idr}) {
      KrylovConfig cfg{method, 1e-10, 0.0, 1000, 30};
      KrylovSolver s(e, cfg);
      const char* name = method == KrylovMethod::gmres ? "GMRES(30)" : "IDR(4)";
      auto run = [&](const Preconditioner& M) {
        Vector b(e, std::span<const double>(hb)), x(e, A.scalar_rows());
        fill(x, 0.0);
        const auto st = s.solve(A, M, b, x);
        std::printf("%s + %s, bs %d: %d iterations\n", name, M.name().c_str(), bs, st.iterations);
        EXPECT_TRUE(st.converged) << name << " " << M.name() << " bs " << bs << ": " << to_string(st.reason);
        return st.iterations;
      };
      Ilu0Preconditioner S(e);
      ASSERT_TRUE(S.setup(A).ok);
      BlockIlu0Preconditioner B(e, block_ilu0_options());
      ASSERT_TRUE(B.setup(A).ok);
      const int its_scalar = run(S);
      EXPECT_LE(run(B), its_scalar + 2) << name << " bs " << bs;
      for (int power : {1, 2}) {
        BlockIlu0Preconditioner I(e, block_ilu0_options(TriangularSolve::isai, power));
        ASSERT_TRUE(I.setup(A).ok);
        EXPECT_GT(I.isai_nnz(), 0);
        EXPECT_LE(run(I), 3 * its_scalar + 10) << name << " bs " << bs << " power " << power;
      }
    }
  }
}

TEST(BlockIlu0Preconditioner, SingularDiagonalBlockFailsSetupNamingTheRow)
{
  auto e = Executor::create_cpu();
  for (const auto& opt : {block_ilu0_options(), block_ilu0_options(TriangularSolve::isai, 1)}) {
    auto m = test::convection_diffusion(5, 4, 3, 3, 1.0);
    test::TestMatrix z = m;
    for (index_t p = z.pattern.row_ptr[17]; p < z.pattern.row_ptr[18]; ++p)
      for (int k = 0; k < 9; ++k) z.values[size64_t(p) * 9 + k] = 0.0;
    auto A = upload(e, z);
    BlockIlu0Preconditioner M(e, opt);
    const auto st = M.setup(A);
    EXPECT_FALSE(st.ok);
    EXPECT_NE(st.message.find("block row 17"), std::string::npos) << st.message;
    // The same structure with good values: symbolic reuse, numeric setup only.
    A.values().copy_from_host(m.values);
    EXPECT_TRUE(M.setup(A).ok);
  }
}

TEST(BlockIlu0Preconditioner, NewValuesOnTheSameStructure)
{
  auto e = Executor::create_cpu();
  auto m = test::convection_diffusion(6, 5, 4, 2, 1.0);
  auto A = upload(e, m);
  BlockIlu0Preconditioner M(e, block_ilu0_options(TriangularSolve::isai, 1));
  ASSERT_TRUE(M.setup(A).ok);
  for (auto& v : m.values) v *= 2.0;
  A.values().copy_from_host(m.values);
  ASSERT_TRUE(M.setup(A).ok);
  BlockIlu0Preconditioner fresh(e, block_ilu0_options(TriangularSolve::isai, 1));
  ASSERT_TRUE(fresh.setup(A).ok);
  Vector r(e, std::span<const double>(test::random_vector(A.scalar_rows()))), z1(e, A.scalar_rows()),
      z2(e, A.scalar_rows());
  M.apply(r, z1);
  fresh.apply(r, z2);
  EXPECT_EQ(z1.to_host(), z2.to_host());
}

TEST(BlockIlu0Preconditioner, OptionsAreChecked)
{
  auto e = Executor::create_cpu();
  auto o = block_ilu0_options(TriangularSolve::isai, 0);
  EXPECT_THROW(BlockIlu0Preconditioner(e, o), std::invalid_argument);
  o = block_ilu0_options(TriangularSolve::isai, 1);
  o.view = IsaiView::scalar;
  EXPECT_THROW(BlockIlu0Preconditioner(e, o), std::invalid_argument);
  for (int k : {-1, max_isai_sweeps + 1}) {
    o = block_ilu0_options(TriangularSolve::isai, 1);
    o.sweeps = k;
    EXPECT_THROW(BlockIlu0Preconditioner(e, o), std::invalid_argument) << k;
  }
  for (int k : {-1, max_factor_sweeps + 1}) {
    o = block_ilu0_options(TriangularSolve::isai, 1);
    o.factor_sweeps = k;
    EXPECT_THROW(BlockIlu0Preconditioner(e, o), std::invalid_argument) << k;
  }
  auto A = upload(e, chain(5, 2));
  BlockIlu0Preconditioner M(e, block_ilu0_options());
  ASSERT_TRUE(M.setup(A).ok);
  Vector r(e, 9), z(e, 9);
  EXPECT_THROW(M.apply(r, z), std::invalid_argument);
}

// The iterative factorisation (factor_sweeps = k): named; with the most sweeps (64, more than the
// 28 levels of this 7-point stencil, whose ILU(0) changes only the diagonal blocks) the same
// factors as the exact one (to rounding); with 1-2 sweeps GMRES(30) converges in at most a few
// more iterations than with the exact factors, with exact solves and with ISAI; a singular
// diagonal block of A fails the setup naming the row.
TEST(BlockIlu0Preconditioner, IterativeFactorisation)
{
  auto e = Executor::create_cpu();
  Ilu0Options po = block_ilu0_options(TriangularSolve::isai, 1);
  po.factor_sweeps = 2;
  EXPECT_EQ(make_preconditioner(e, {"ilu0", po})->name(), "ilu0(block, 2 factor sweeps, isai(1, block view))");
  for (int bs : {1, 2, 3}) {
    auto A = upload(e, test::convection_diffusion(11, 10, 9, bs, 2.0));
    BlockIlu0Preconditioner exact(e, block_ilu0_options());
    ASSERT_TRUE(exact.setup(A).ok);
    auto opt = block_ilu0_options();
    ASSERT_LT(exact.lower_levels(), max_factor_sweeps);
    opt.factor_sweeps = max_factor_sweeps;
    BlockIlu0Preconditioner full(e, opt);
    ASSERT_TRUE(full.setup(A).ok);
    const std::vector<double> fe(exact.factors().values, exact.factors().values + exact.factor_nnz());
    const std::vector<double> ff(full.factors().values, full.factors().values + full.factor_nnz());
    EXPECT_LE(test::max_rel_diff(ff, fe), 1e-12) << "bs " << bs;
    EXPECT_LE(test::max_rel_diff(full.diagonal_inverses().to_host(), exact.diagonal_inverses().to_host()), 1e-12);

    const auto hb = test::random_vector(A.scalar_rows());
    KrylovSolver s(e, KrylovConfig{KrylovMethod::gmres, 1e-10, 0.0, 1000, 30});
    auto its = [&](const Preconditioner& M) {
      Vector b(e, std::span<const double>(hb)), x(e, A.scalar_rows());
      fill(x, 0.0);
      const auto st = s.solve(A, M, b, x);
      EXPECT_TRUE(st.converged) << M.name();
      std::printf("GMRES(30) + %s, bs %d: %d iterations\n", M.name().c_str(), bs, st.iterations);
      return st.iterations;
    };
    for (auto t : {TriangularSolve::exact, TriangularSolve::isai}) {
      BlockIlu0Preconditioner ref(e, block_ilu0_options(t, 1));
      ASSERT_TRUE(ref.setup(A).ok);
      const int its_exact = its(ref);
      for (int k : {1, 2}) {
        auto o = block_ilu0_options(t, 1);
        o.factor_sweeps = k;
        BlockIlu0Preconditioner M(e, o);
        ASSERT_TRUE(M.setup(A).ok);
        EXPECT_LE(its(M), its_exact + 3) << M.name() << " bs " << bs;
      }
    }
  }
  auto z = test::convection_diffusion(5, 4, 3, 2, 1.0);
  for (index_t p = z.pattern.row_ptr[11]; p < z.pattern.row_ptr[12]; ++p)
    if (z.pattern.col_ind[p] == 11)
      for (int k = 0; k < 4; ++k) z.values[size64_t(p) * 4 + k] = 0.0;
  auto Z = upload(e, z);
  auto o = block_ilu0_options();
  o.factor_sweeps = 2;
  BlockIlu0Preconditioner M(e, o);
  const auto st = M.setup(Z);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("block row 11"), std::string::npos) << st.message;
}

// ISAI sweeps on the block factors (x <- x + M (b - T x) per factor): named; every sweep moves the
// application toward the exact block triangular solves (the error contracts, on a 3D stencil where
// ISAI(1) alone is far from exact), and 16 sweeps reach them to 1e-8; GMRES needs no more
// iterations with 3 sweeps than with none.
TEST(BlockIlu0Preconditioner, IsaiSweepsApproachTheExactSolves)
{
  auto e = Executor::create_cpu();
  auto o = block_ilu0_options(TriangularSolve::isai, 1);
  o.sweeps = 3;
  EXPECT_EQ(make_preconditioner(e, {"ilu0", o})->name(), "ilu0(block, isai(1, block view), 3 sweeps)");
  for (int bs : {1, 2, 3, 7}) {
    SCOPED_TRACE("bs " + std::to_string(bs));
    auto A = upload(e, test::convection_diffusion(9, 8, 7, bs, 2.0));
    const auto r = test::random_vector(A.scalar_rows());
    BlockIlu0Preconditioner exact(e, block_ilu0_options());
    ASSERT_TRUE(exact.setup(A).ok);
    const auto ref = test::apply_both(A, exact, A, exact, r).ref;
    double previous = INFINITY;
    for (int k : {0, 1, 2, 4, max_isai_sweeps}) {
      o.sweeps = k;
      BlockIlu0Preconditioner M(e, o);
      ASSERT_TRUE(M.setup(A).ok);
      const double err = test::max_rel_diff(test::apply_both(A, M, A, exact, r).z, ref);
      std::printf("bs %d, %d sweeps: max relative difference to the exact solves %.2e\n", bs, k, err);
      if (k == 0) {
        EXPECT_GT(err, 1e-3);  // the test would not see the sweeps otherwise
      }
      EXPECT_LT(err, previous) << k << " sweeps";
      previous = err;
    }
    EXPECT_LE(previous, 1e-8);
  }
  auto A = upload(e, test::convection_diffusion(13, 12, 11, 2, 2.0));
  const auto hb = test::random_vector(A.scalar_rows());
  auto iterations = [&](int sweeps) {
    o.sweeps = sweeps;
    BlockIlu0Preconditioner M(e, o);
    EXPECT_TRUE(M.setup(A).ok);
    KrylovSolver s(e, KrylovConfig{KrylovMethod::gmres, 1e-10, 0.0, 1000, 30});
    Vector b(e, std::span<const double>(hb)), x(e, A.scalar_rows());
    fill(x, 0.0);
    const auto st = s.solve(A, M, b, x);
    EXPECT_TRUE(st.converged) << sweeps << " sweeps";
    return st.iterations;
  };
  const int none = iterations(0), three = iterations(3);
  std::printf("GMRES(30) iterations: ISAI(1) %d, with 3 sweeps %d\n", none, three);
  EXPECT_LE(three, none);
}

// Mixed precision (issue 30): storage = fp32 keeps fp32 copies of the factors and both ISAI matrices
// and applies them in fp64 arithmetic. Its application is the fp64 one to about fp32 rounding (the
// difference well above fp64 rounding, so the copies are what is read), GMRES(30) and FGMRES(30) need
// iterations within 10% of fp64 storage on the convection-diffusion stencil (bs 1, 2, 3, 7; with 0 and 3
// ISAI sweeps, exact and iterative factors), the name says so, and exact triangular solves refuse it.
TEST(BlockIlu0Preconditioner, Fp32StorageKeepsIterationsWithinTenPercent)
{
  auto e = Executor::create_cpu();
  auto o = block_ilu0_options(TriangularSolve::isai, 1);
  o.sweeps = 3;
  o.storage = StoragePrecision::fp32;
  EXPECT_EQ(make_preconditioner(e, {"ilu0", o})->name(), "ilu0(block, isai(1, block view), 3 sweeps, fp32 storage)");
  auto exact = block_ilu0_options();
  exact.storage = StoragePrecision::fp32;
  EXPECT_THROW(BlockIlu0Preconditioner(e, exact), std::invalid_argument);
  Ilu0Options scalar;  // the scalar view has no fp32 form
  scalar.trisolve = TriangularSolve::isai, scalar.storage = StoragePrecision::fp32;
  EXPECT_THROW(Ilu0Preconditioner(e, scalar), std::invalid_argument);
  for (int bs : {1, 2, 3, 7})
    for (const auto [sweeps, factor_sweeps] : {std::pair{0, 0}, std::pair{3, 0}, std::pair{3, 1}}) {
      {
        SCOPED_TRACE(fmt::format("bs {}, {} ISAI sweeps, {} factor sweeps", bs, sweeps, factor_sweeps));
        auto A = upload(e, test::convection_diffusion(9, 8, 7, bs, 2.0));
        const auto hb = test::random_vector(A.scalar_rows());
        auto o64 = block_ilu0_options(TriangularSolve::isai, 1);
        o64.sweeps = sweeps, o64.factor_sweeps = factor_sweeps;
        auto o32 = o64;
        o32.storage = StoragePrecision::fp32;
        BlockIlu0Preconditioner M64(e, o64), M32(e, o32);
        ASSERT_TRUE(M64.setup(A).ok);
        ASSERT_TRUE(M32.setup(A).ok);
        const auto r = test::random_vector(A.scalar_rows());
        const auto both = test::apply_both(A, M32, A, M64, r);
        const double diff = test::max_rel_diff(both.z, both.ref);
        EXPECT_GT(diff, 1e-13) << "the fp32 copies are not what is applied";
        EXPECT_LT(diff, 1e-5);
        EXPECT_LT(M32.apply_bytes(), M64.apply_bytes());
        for (const KrylovMethod method : {KrylovMethod::gmres, KrylovMethod::fgmres}) {
          auto its = [&](const BlockIlu0Preconditioner& M) {
            KrylovSolver s(e, KrylovConfig{method, 1e-10, 0.0, 1000, 30});
            Vector b(e, std::span<const double>(hb)), x(e, A.scalar_rows());
            fill(x, 0.0);
            const auto st = s.solve(A, M, b, x);
            EXPECT_TRUE(st.converged);
            return st.iterations;
          };
          const int i64 = its(M64), i32 = its(M32);
          std::printf("bs %d, %d ISAI sweeps, %d factor sweeps, %s: fp64 %d, fp32 %d iterations\n", bs, sweeps,
                      factor_sweeps, std::string(to_string(method)).c_str(), i64, i32);
          EXPECT_LE(i32, i64 + std::max(1, i64 / 10));
        }
      }
    }
}
