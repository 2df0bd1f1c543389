// Krylov solver property checks on the CPU backend (HPCG-style: documented iteration bounds,
// true residual below tolerance, failure reasons reported).
#include "linalg/krylov.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <limits>

using namespace blockres;

namespace {

struct Problem {
  BsrMatrix A;
  Vector b, x;
};

Problem make_problem(const ExecPtr& e, int n, int bs, double peclet)
{
  auto m = test::convection_diffusion(n, n + 1, n - 1, bs, peclet);  // odd, unequal sizes
  Problem p{BsrMatrix(e, bs, m.pattern), Vector(e, m.pattern.nrows * size64_t(bs)), Vector(e, m.pattern.nrows * size64_t(bs))};
  p.A.values().copy_from_host(m.values);
  p.b.copy_from_host(test::random_vector(p.b.size()));
  fill(p.x, 0.0);
  return p;
}

double true_relative_residual(const Problem& p)
{
  Vector r(p.b.exec_ptr(), p.b.size());
  copy(p.b, r);
  spmv(p.A, -1.0, p.x, 1.0, r);
  return norm2(r) / norm2(p.b);
}

}  // namespace

// Iteration bounds below are about twice the counts measured on random right-hand sides
// (BiCGSTAB 31-43, GMRES(30) 58-77 for bs 1..3): a solver that needs more has regressed.
TEST(Krylov, BlockJacobiConvectionDiffusion)
{
  auto e = Executor::create_cpu();
  for (auto [method, bound] : {std::pair{KrylovMethod::bicgstab, 90}, {KrylovMethod::gmres, 160}}) {
    for (int bs : {1, 2, 3}) {
      auto p = make_problem(e, 13, bs, 2.0);
      KrylovSolver s(e, {method, 1e-10, 0.0, 1000, 30});
      BlockJacobiPreconditioner M(e);
      ASSERT_TRUE(M.setup(p.A).ok);
      const auto st = s.solve(p.A, M, p.b, p.x);
      const char* name = method == KrylovMethod::gmres ? "GMRES(30)" : "BiCGSTAB";
      EXPECT_TRUE(st.converged) << name << " bs " << bs << ": " << to_string(st.reason);
      std::printf("%s + block-Jacobi, bs %d: %d iterations\n", name, bs, st.iterations);
      EXPECT_LE(st.iterations, bound) << name << " bs " << bs;
      EXPECT_LE(true_relative_residual(p), 1e-10 * 1.0000001) << name << " bs " << bs;
      EXPECT_LE(st.residual, 1e-10 * st.initial_residual);
    }
  }
}

TEST(Krylov, UnpreconditionedGmresSolvesExactlyInNSteps)
{
  // Full GMRES on an n-by-n system converges in at most n iterations.
  auto e = Executor::create_cpu();
  auto m = test::convection_diffusion(3, 2, 2, 1, 1.0);  // n = 12
  BsrMatrix A(e, 1, m.pattern);
  A.values().copy_from_host(m.values);
  Vector b(e, std::span<const double>(test::random_vector(12))), x(e, 12);
  fill(x, 0.0);
  IdentityPreconditioner I;
  KrylovSolver s(e, {KrylovMethod::gmres, 1e-12, 0.0, 12, 12});
  const auto st = s.solve(A, I, b, x);
  EXPECT_TRUE(st.converged);
  EXPECT_LE(st.iterations, 12);
}

TEST(Krylov, ZeroRightHandSideConvergesImmediately)
{
  auto e = Executor::create_cpu();
  auto p = make_problem(e, 5, 2, 1.0);
  fill(p.b, 0.0);
  KrylovSolver s(e, {});
  IdentityPreconditioner I;
  const auto st = s.solve(p.A, I, p.b, p.x);
  EXPECT_TRUE(st.converged);
  EXPECT_EQ(st.iterations, 0);
}

TEST(Krylov, NaNInRightHandSideIsReported)
{
  auto e = Executor::create_cpu();
  for (auto method : {KrylovMethod::bicgstab, KrylovMethod::gmres}) {
    auto p = make_problem(e, 5, 2, 1.0);
    auto b = p.b.to_host();
    b[3] = std::numeric_limits<double>::quiet_NaN();
    p.b.copy_from_host(b);
    KrylovSolver s(e, {method, 1e-8, 0.0, 50, 10});
    IdentityPreconditioner I;
    const auto st = s.solve(p.A, I, p.b, p.x);
    EXPECT_FALSE(st.converged);
    EXPECT_EQ(st.reason, SolveReason::not_finite);
  }
}

TEST(Krylov, IterationLimitIsReported)
{
  auto e = Executor::create_cpu();
  for (auto method : {KrylovMethod::bicgstab, KrylovMethod::gmres}) {
    auto p = make_problem(e, 11, 1, 0.5);
    KrylovSolver s(e, {method, 1e-14, 0.0, 3, 30});
    IdentityPreconditioner I;
    const auto st = s.solve(p.A, I, p.b, p.x);
    EXPECT_FALSE(st.converged);
    EXPECT_EQ(st.reason, SolveReason::max_iterations);
    EXPECT_LE(st.iterations, 3);
    EXPECT_LT(st.residual, st.initial_residual);  // it did make progress
  }
}

TEST(BlockJacobi, SingularBlockIsReportedWithItsRow)
{
  auto e = Executor::create_cpu();
  auto m = test::convection_diffusion(4, 3, 2, 2, 1.0);
  const index_t bad = 7;
  const index_t k = m.pattern.find(bad, bad);
  for (int q = 0; q < 4; ++q) m.values[std::size_t(k) * 4 + q] = 0.0;
  BsrMatrix A(e, 2, m.pattern);
  A.values().copy_from_host(m.values);
  BlockJacobiPreconditioner M(e);
  const auto st = M.setup(A);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("block row 7"), std::string::npos) << st.message;
}

namespace {

const BlockFactorization all_factorizations[] = {BlockFactorization::gauss_jordan, BlockFactorization::gauss_huard,
                                                 BlockFactorization::gauss_huard_t, BlockFactorization::lu};

std::vector<int> block_sizes_for(BlockFactorization f)
{
  if (f == BlockFactorization::lu) return {0, 1, 8, 16, 32, 64, 130};
  return {0, 1, 8, 16, 32};
}

// max over Jacobi blocks g of ||D_g z_g - r_g||_inf / (||D_g||_inf ||z_g||_inf), with D_g the
// restriction of A to the scalar rows and columns off[g]..off[g+1]-1, computed here from the
// host pattern.
double jacobi_block_residual(const test::TestMatrix& m, int bs, const std::vector<index_t>& off,
                             const std::vector<double>& z, const std::vector<double>& r)
{
  double worst = 0.0;
  for (std::size_t g = 0; g + 1 < off.size(); ++g) {
    const index_t s0 = off[g], s1 = off[g + 1];
    double dnorm = 0.0, znorm = 0.0, res = 0.0;
    for (index_t i = s0; i < s1; ++i) znorm = std::max(znorm, std::abs(z[i]));
    for (index_t si = s0; si < s1; ++si) {
      const index_t br = si / bs;
      const int i = static_cast<int>(si % bs);
      double sum = 0.0, rowabs = 0.0;
      for (index_t k = m.pattern.row_ptr[br]; k < m.pattern.row_ptr[br + 1]; ++k)
        for (int j = 0; j < bs; ++j) {
          const index_t sc = m.pattern.col_ind[k] * bs + j;
          if (sc < s0 || sc >= s1) continue;
          const double a = m.values[(size64_t(k) * bs + i) * bs + j];
          sum += a * z[sc];
          rowabs += std::abs(a);
        }
      res = std::max(res, std::abs(sum - r[si]));
      dnorm = std::max(dnorm, rowabs);
    }
    worst = std::max(worst, res / (dnorm * znorm));
  }
  return worst;
}

}  // namespace

// Every factorisation, natural and agglomerated blocks: z = M^{-1} r solves each Jacobi block
// (backward error), the blocks are consecutive, within the size limit and really agglomerated.
TEST(BlockJacobi, EveryFactorizationSolvesItsBlocks)
{
  auto e = Executor::create_cpu();
  for (int bs : {1, 2, 3}) {
    const auto m = test::convection_diffusion(7, 6, 5, bs, 2.0);
    BsrMatrix A(e, bs, m.pattern);
    A.values().copy_from_host(m.values);
    const auto hr = test::random_vector(A.scalar_rows());
    for (auto f : all_factorizations)
      for (int maxb : block_sizes_for(f)) {
        const std::string what = fmt::format("bs {} {} max_block_size {}", bs, to_string(f), maxb);
        BlockJacobiPreconditioner M(e, {f, maxb});
        ASSERT_TRUE(M.setup(A).ok) << what;
        const std::vector<double> poison(hr.size(), std::nan(""));
        Vector r(e, std::span<const double>(hr)), z(e, std::span<const double>(poison));
        M.apply(r, z);
        const auto off = M.block_offsets();
        ASSERT_EQ(off.front(), 0) << what;
        ASSERT_EQ(off.back(), A.scalar_rows()) << what;
        int largest = 0;
        for (std::size_t g = 0; g + 1 < off.size(); ++g) {
          const int n = off[g + 1] - off[g];
          ASSERT_GT(n, 0) << what;
          if (maxb == 1)
            ASSERT_EQ(n, 1) << what;  // point Jacobi
          else
            ASSERT_EQ(n % bs, 0) << what;
          ASSERT_LE(n, std::max(bs, maxb)) << what;
          largest = std::max(largest, n);
        }
        EXPECT_EQ(largest, M.largest_block()) << what;
        if (maxb >= 2 * bs) EXPECT_GT(largest, bs) << what << ": nothing agglomerated";
        if (maxb != 1) EXPECT_EQ(largest % bs, 0) << what;
        const double be = jacobi_block_residual(m, bs, off, z.to_host(), hr);
        EXPECT_LE(be, 100 * std::max(bs, maxb) * std::numeric_limits<double>::epsilon()) << what;
      }
  }
}

// Larger Jacobi blocks capture more of the coupling: BiCGSTAB converges with each
// factorisation (point Jacobi too; on this matrix it needs about as many iterations as the
// natural blocks, so only the agglomerated blocks are compared: no more than natural).
TEST(BlockJacobi, AgglomeratedBlocksConvergeInNoMoreIterations)
{
  auto e = Executor::create_cpu();
  for (auto f : all_factorizations) {
    int natural_its = 0;
    auto p = make_problem(e, 13, 2, 2.0);  // one right-hand side for all block sizes
    for (int maxb : {1, 0, 16, 32}) {
      fill(p.x, 0.0);
      KrylovSolver s(e, {KrylovMethod::bicgstab, 1e-10, 0.0, 1000, 30});
      BlockJacobiPreconditioner M(e, {f, maxb});
      ASSERT_TRUE(M.setup(p.A).ok);
      const auto st = s.solve(p.A, M, p.b, p.x);
      ASSERT_TRUE(st.converged) << to_string(f) << " " << maxb;
      EXPECT_LE(true_relative_residual(p), 1e-10 * 1.0000001);
      std::printf("BiCGSTAB + block-Jacobi %s, max_block_size %d: %d iterations (%d blocks)\n",
                  std::string(to_string(f)).c_str(), maxb, st.iterations, M.num_blocks());
      if (maxb == 0)
        natural_its = st.iterations;
      else if (maxb > 1)
        EXPECT_LE(st.iterations, natural_its) << to_string(f) << " " << maxb;
    }
  }
}

TEST(BlockJacobi, OutOfRangeBlockSizeIsRejected)
{
  auto e = Executor::create_cpu();
  EXPECT_THROW(BlockJacobiPreconditioner(e, {BlockFactorization::gauss_huard, 33}), std::invalid_argument);
  EXPECT_THROW(BlockJacobiPreconditioner(e, {BlockFactorization::lu, 513}), std::invalid_argument);
  EXPECT_THROW(BlockJacobiPreconditioner(e, {BlockFactorization::lu, -1}), std::invalid_argument);
  EXPECT_NO_THROW(BlockJacobiPreconditioner(e, {BlockFactorization::lu, 512}));
}
