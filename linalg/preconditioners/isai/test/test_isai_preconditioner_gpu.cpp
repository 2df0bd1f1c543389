// General ISAI preconditioner on the CUDA backend against the CPU backend: the same application
// in both views on fresh random right-hand sides with poisoned outputs, several block sizes (short
// and long local systems) and odd grids, before and after new values; GMRES iteration counts
// within 2 of the CPU's; singular local systems reported like the CPU. Label `gpu`; skipped
// without a device.
#include "linalg/preconditioners/isai/isai_preconditioner.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/test/preconditioner_test_util.hpp"
#include "linalg/test/gpu_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace blockres;
using test::upload;

TEST(IsaiPreconditionerGpu, ApplicationMatchesCpu)
{
  auto cpu = Executor::create_cpu();
  auto gpu = Executor::create_cuda(0);
  // bs 1, k 1: 7-entry columns (warp kernel); bs 5, k 1 and every k >= 2: over 32 (block kernel).
  for (int bs : {1, 2, 4, 5})
    for (auto [nx, ny, nz] : {std::tuple{1, 1, 1}, {5, 3, 1}, {9, 7, 5}})
      for (int k = 1; k <= 2; ++k)
        for (IsaiView view : {IsaiView::scalar, IsaiView::block}) {
          const auto m = test::convection_diffusion(nx, ny, nz, bs, 1.5);
          auto Ac = upload(cpu, m);
          auto Ag = upload(gpu, m);
          const auto hr = test::random_vector(Ac.scalar_rows());
          IsaiPreconditioner Mc(cpu, {k, view}), Mg(gpu, {k, view});
          ASSERT_TRUE(Mc.setup(Ac).ok);
          ASSERT_TRUE(Mg.setup(Ag).ok);
          const auto z = test::apply_both(Ag, Mg, Ac, Mc, hr);
          for (double v : z.z) ASSERT_TRUE(std::isfinite(v)) << Mg.name();
          const std::string what = Mg.name() + " bs " + std::to_string(bs) + " grid " + std::to_string(nx) + "x" +
                                   std::to_string(ny) + "x" + std::to_string(nz);
          EXPECT_LE(test::max_rel_diff(z.z, z.ref), 1e-12) << what;
          EXPECT_LE(test::max_rel_diff(Mg.isai()->M().values().to_host(), Mc.isai()->M().values().to_host()), 1e-12)
              << what;
          // New values: numeric setup only.
          test::set_values(Ac, Ag, test::scaled(m.values, 0.75));
          ASSERT_TRUE(Mc.setup(Ac).ok);
          ASSERT_TRUE(Mg.setup(Ag).ok);
          const auto z2 = test::apply_both(Ag, Mg, Ac, Mc, hr);
          EXPECT_LE(test::max_rel_diff(z2.z, z2.ref), 1e-12) << what << " second setup";
        }
}

TEST(IsaiPreconditionerGpu, GmresIterationsMatchCpu)
{
  test::expect_gmres_agrees_on_stencils(
      std::vector<IsaiView>{IsaiView::scalar, IsaiView::block},
      [](const ExecPtr& e, IsaiView view) { return IsaiPreconditioner(e, {1, view}); }, 3000);
}

TEST(IsaiPreconditionerGpu, SingularLocalSystemReportedLikeCpu)
{
  auto both = test::zeroed_row_on_both_backends();
  for (IsaiView view : {IsaiView::scalar, IsaiView::block}) {
    IsaiPreconditioner Mc(both.cpu, {1, view}), Mg(both.gpu, {1, view});
    const auto a = Mc.setup(both.Ac), g = Mg.setup(both.Ag);
    EXPECT_FALSE(a.ok);
    EXPECT_FALSE(g.ok);
    EXPECT_EQ(g.message, a.message);
  }
}
