// ILU(0) preconditioner on the CUDA backend against the CPU backend: the same application (exact
// and ISAI(k) with sweeps) on fresh random right-hand sides with poisoned outputs, several block
// sizes and odd grid sizes, by both CUDA implementations (cuSPARSE, the default there, and the
// project's kernels), also after a second numeric setup with new values; GMRES iteration counts
// within 2 of the CPU's; zero and non-finite pivots reported with the CPU's message by both.
// Label `gpu`; skipped without a device.
#include "linalg/preconditioners/ilu0/ilu_preconditioner.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/test/preconditioner_test_util.hpp"
#include "linalg/test/gpu_test_util.hpp"

#include <fmt/format.h>
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
      for (const auto& opt : all_variants)
        for (auto impl : {IluImplementation::automatic, IluImplementation::blockres}) {
          Ilu0Options og = opt;
          og.implementation = impl;
          Ilu0Preconditioner Mc(cpu, opt), Mg(gpu, og);
          const std::string what = fmt::format("{} bs {} grid {}x{}x{}", Mg.name(), bs, nx, ny, nz);
          EXPECT_EQ(Mg.name(), Mc.name());
          EXPECT_EQ(Mg.setup_summary().find("cuSPARSE") != std::string::npos, impl == IluImplementation::automatic)
              << what;
          ASSERT_TRUE(Mc.setup(Ac).ok);
          ASSERT_TRUE(Mg.setup(Ag).ok) << what;
          const auto z = test::apply_both(Ag, Mg, Ac, Mc, hr);
          for (double v : z.z) ASSERT_TRUE(std::isfinite(v)) << what;
          EXPECT_LE(test::max_rel_diff(z.z, z.ref), 1e-12) << what;
          EXPECT_EQ(Mg.isai_nnz(), Mc.isai_nnz());
          // Setup again with new values (numeric setup only; not a multiple of the old ones, so the factors
          // change in L and U alike) and compare again: a solve still reading the first factors fails here.
          auto v2 = m.values;
          for (std::size_t k = 0; k < v2.size(); ++k) v2[k] *= 1.0 + 0.25 * double(1 + k % 7) / 7.0;
          test::set_values(Ac, Ag, v2);
          ASSERT_TRUE(Mc.setup(Ac).ok);
          ASSERT_TRUE(Mg.setup(Ag).ok) << what;
          const auto z2 = test::apply_both(Ag, Mg, Ac, Mc, hr);
          EXPECT_LE(test::max_rel_diff(z2.z, z2.ref), 1e-12) << what << " second setup";
          EXPECT_GT(test::max_rel_diff(z2.z, z.ref), 1e-6) << what << " (the new values change the application)";
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
  for (auto impl : {IluImplementation::automatic, IluImplementation::cusparse, IluImplementation::blockres}) {
    Ilu0Options o;
    o.implementation = impl;
    Ilu0Preconditioner Mc(both.cpu), Mg(both.gpu, o);
    const auto a = Mc.setup(both.Ac), g = Mg.setup(both.Ag);
    EXPECT_FALSE(a.ok);
    EXPECT_FALSE(g.ok) << to_string(impl);
    EXPECT_EQ(g.message, a.message) << to_string(impl);
    EXPECT_NE(g.message.find("block row 97"), std::string::npos) << g.message;
  }
}

TEST(Ilu0PreconditionerGpu, NonFinitePivotReportedLikeCpu)
{
  // csrilu02 flags exact zeros only: a NaN in one diagonal entry must still fail the cuSPARSE setup at
  // the CPU's row (the pivot check), and a good setup afterwards succeeds again.
  auto cpu = Executor::create_cpu();
  auto gpu = Executor::create_cuda(0);
  const auto m = test::convection_diffusion(7, 5, 3, 3, 1.5);
  auto Ac = upload(cpu, m);
  auto Ag = upload(gpu, m);
  for (auto impl : {IluImplementation::cusparse, IluImplementation::blockres}) {
    Ilu0Options o;
    o.implementation = impl;
    Ilu0Preconditioner Mc(cpu), Mg(gpu, o);
    auto bad = m.values;
    const index_t r = 50;  // block row 50, its diagonal block's (1, 1) entry
    const auto rp = Ac.row_ptr().to_host();
    const auto ci = Ac.col_ind().to_host();
    for (index_t q = rp[r]; q < rp[r + 1]; ++q)
      if (ci[q] == r) bad[std::size_t(q) * 9 + 4] = std::numeric_limits<double>::quiet_NaN();
    test::set_values(Ac, Ag, bad);
    const auto a = Mc.setup(Ac), g = Mg.setup(Ag);
    EXPECT_FALSE(a.ok);
    EXPECT_FALSE(g.ok) << to_string(impl);
    EXPECT_EQ(g.message, a.message) << to_string(impl);
    EXPECT_NE(g.message.find("block row 50 (component 1)"), std::string::npos) << g.message;
    test::set_values(Ac, Ag, m.values);
    EXPECT_TRUE(Mg.setup(Ag).ok) << to_string(impl);
  }
}
