// ILU(0) preconditioner on the CUDA backend against the CPU backend: the same application (exact
// and ISAI(k) with sweeps) on fresh random right-hand sides with poisoned outputs, several block
// sizes and odd grid sizes; GMRES iteration counts within 2 of the CPU's; zero pivots reported.
// Label `gpu`; skipped without a device.
#include "linalg/ilu_preconditioner.hpp"
#include "linalg/krylov.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace blockres;
using test::upload;

namespace {

const std::vector<Ilu0Options> all_variants = {
    {TriangularSolve::exact, 1, 0}, {TriangularSolve::isai, 1, 0}, {TriangularSolve::isai, 2, 0},
    {TriangularSolve::isai, 3, 0},  {TriangularSolve::isai, 1, 3},
    {TriangularSolve::isai, 1, 0, IsaiView::block}, {TriangularSolve::isai, 2, 0, IsaiView::block},
    {TriangularSolve::isai, 3, 0, IsaiView::block}, {TriangularSolve::isai, 1, 3, IsaiView::block}};

}  // namespace

TEST(Ilu0PreconditionerGpu, ApplicationMatchesCpu)
{
  auto cpu = Executor::create_cpu();
  auto gpu = Executor::create_cuda(0);
  for (int bs : {1, 2, 3, 4, 7})
    for (auto [nx, ny, nz] : {std::tuple{1, 1, 1}, {5, 3, 1}, {11, 9, 7}, {31, 29, 17}}) {
      if (bs == 7 && nx > 11) continue;  // keep the 27-point-free ISAI(3) patterns moderate
      const auto m = test::convection_diffusion(nx, ny, nz, bs, 1.5);
      auto Ac = upload(cpu, m);
      auto Ag = upload(gpu, m);
      const auto hr = test::random_vector(Ac.scalar_rows());
      for (const auto& opt : all_variants) {
        Ilu0Preconditioner Mc(cpu, opt), Mg(gpu, opt);
        ASSERT_TRUE(Mc.setup(Ac).ok);
        ASSERT_TRUE(Mg.setup(Ag).ok);
        Vector rc(cpu, std::span<const double>(hr)), rg(gpu, std::span<const double>(hr));
        Vector zc(cpu, Ac.scalar_rows()), zg(gpu, Ag.scalar_rows());
        fill(zg, std::numeric_limits<double>::quiet_NaN());
        Mc.apply(rc, zc);
        Mg.apply(rg, zg);
        const auto a = zg.to_host(), b = zc.to_host();
        for (double v : a) ASSERT_TRUE(std::isfinite(v)) << Mg.name();
        EXPECT_LE(test::max_rel_diff(a, b), 1e-12) << Mg.name() << " bs " << bs << " grid " << nx << "x" << ny << "x" << nz;
        EXPECT_EQ(Mg.isai_nnz(), Mc.isai_nnz());
        // Setup again with new values (numeric setup only) and compare again.
        auto m2 = m;
        for (auto& v : m2.values) v *= 1.25;
        Ac.values().copy_from_host(m2.values);
        Ag.values().copy_from_host(m2.values);
        ASSERT_TRUE(Mc.setup(Ac).ok);
        ASSERT_TRUE(Mg.setup(Ag).ok);
        Mc.apply(rc, zc);
        Mg.apply(rg, zg);
        EXPECT_LE(test::max_rel_diff(zg.to_host(), zc.to_host()), 1e-12) << Mg.name() << " second setup";
        Ac.values().copy_from_host(m.values);
        Ag.values().copy_from_host(m.values);
      }
    }
}

TEST(Ilu0PreconditionerGpu, GmresIterationsMatchCpu)
{
  auto cpu = Executor::create_cpu();
  auto gpu = Executor::create_cuda(0);
  for (int bs : {1, 2, 4}) {
    const auto m = test::convection_diffusion(23, 21, 19, bs, 2.0);
    auto Ac = upload(cpu, m);
    auto Ag = upload(gpu, m);
    const auto hb = test::random_vector(Ac.scalar_rows());
    for (const auto& opt : all_variants) {
      Ilu0Preconditioner Mc(cpu, opt), Mg(gpu, opt);
      ASSERT_TRUE(Mc.setup(Ac).ok);
      ASSERT_TRUE(Mg.setup(Ag).ok);
      Vector bc(cpu, std::span<const double>(hb)), bg(gpu, std::span<const double>(hb));
      Vector xc(cpu, Ac.scalar_rows()), xg(gpu, Ag.scalar_rows());
      fill(xc, 0.0), fill(xg, 0.0);
      KrylovSolver sc(cpu, {KrylovMethod::gmres, 1e-10, 0.0, 1000, 30}), sg(gpu, {KrylovMethod::gmres, 1e-10, 0.0, 1000, 30});
      const auto a = sc.solve(Ac, Mc, bc, xc);
      const auto g = sg.solve(Ag, Mg, bg, xg);
      std::printf("GMRES(30) + %s, bs %d: CPU %d, CUDA %d iterations\n", Mg.name().c_str(), bs, a.iterations,
                  g.iterations);
      EXPECT_TRUE(a.converged);
      EXPECT_TRUE(g.converged) << Mg.name() << ": " << to_string(g.reason);
      EXPECT_LE(std::abs(a.iterations - g.iterations), 2) << Mg.name() << " bs " << bs;
    }
  }
}

TEST(Ilu0PreconditionerGpu, ZeroPivotReportedLikeCpu)
{
  auto cpu = Executor::create_cpu();
  auto gpu = Executor::create_cuda(0);
  auto m = test::convection_diffusion(7, 6, 5, 2, 1.0);
  const index_t row = 97;
  for (index_t k = m.pattern.row_ptr[row]; k < m.pattern.row_ptr[row + 1]; ++k)
    for (int i = 0; i < 4; ++i) m.values[size64_t(k) * 4 + i] = 0.0;  // block row 97 all zero
  auto Ac = upload(cpu, m);
  auto Ag = upload(gpu, m);
  Ilu0Preconditioner Mc(cpu), Mg(gpu);
  const auto a = Mc.setup(Ac), g = Mg.setup(Ag);
  EXPECT_FALSE(a.ok);
  EXPECT_FALSE(g.ok);
  EXPECT_EQ(g.message, a.message);
  EXPECT_NE(g.message.find("block row 97"), std::string::npos) << g.message;
}
