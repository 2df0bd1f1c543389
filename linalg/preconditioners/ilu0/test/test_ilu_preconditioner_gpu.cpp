// ILU(0) preconditioner on the CUDA backend against the CPU backend: the same application (exact
// and ISAI(k) with sweeps) on fresh random right-hand sides with poisoned outputs, several block
// sizes and odd grid sizes; GMRES iteration counts within 2 of the CPU's; zero pivots reported.
// Label `gpu`; skipped without a device.
#include "linalg/preconditioners/ilu0/ilu_preconditioner.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/test/preconditioner_test_util.hpp"
#include "linalg/test/gpu_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

using namespace blockres;
using test::upload;

namespace {

const std::vector<Ilu0Options> all_variants = test::ilu0_variants(3);

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
        const auto z = test::apply_both(Ag, Mg, Ac, Mc, hr);
        for (double v : z.z) ASSERT_TRUE(std::isfinite(v)) << Mg.name();
        EXPECT_LE(test::max_rel_diff(z.z, z.ref), 1e-12)
            << Mg.name() << " bs " << bs << " grid " << nx << "x" << ny << "x" << nz;
        EXPECT_EQ(Mg.isai_nnz(), Mc.isai_nnz());
        // Setup again with new values (numeric setup only) and compare again.
        test::set_values(Ac, Ag, test::scaled(m.values, 1.25));
        ASSERT_TRUE(Mc.setup(Ac).ok);
        ASSERT_TRUE(Mg.setup(Ag).ok);
        const auto z2 = test::apply_both(Ag, Mg, Ac, Mc, hr);
        EXPECT_LE(test::max_rel_diff(z2.z, z2.ref), 1e-12) << Mg.name() << " second setup";
        test::set_values(Ac, Ag, m.values);
      }
    }
}

TEST(Ilu0PreconditionerGpu, GmresIterationsMatchCpu)
{
  test::expect_gmres_agrees_on_stencils(
      all_variants, [](const ExecPtr& e, const Ilu0Options& opt) { return Ilu0Preconditioner(e, opt); }, 1000);
}

TEST(Ilu0PreconditionerGpu, ZeroPivotReportedLikeCpu)
{
  auto both = test::zeroed_row_on_both_backends();
  Ilu0Preconditioner Mc(both.cpu), Mg(both.gpu);
  const auto a = Mc.setup(both.Ac), g = Mg.setup(both.Ag);
  EXPECT_FALSE(a.ok);
  EXPECT_FALSE(g.ok);
  EXPECT_EQ(g.message, a.message);
  EXPECT_NE(g.message.find("block row 97"), std::string::npos) << g.message;
}
