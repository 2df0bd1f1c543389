// Block ILU(0) preconditioner (factor_view = block) on the CUDA backend against the CPU backend:
// factors, diagonal inverses and applications (exact and ISAI(k) block view) on fresh random
// values (bs 1..64 spread), outputs poisoned; GMRES(30) on both backends within 2 iterations of
// each other; a singular diagonal block named by block row; new values on the same structure.
// Label `gpu`.
#include "linalg/preconditioners/ilu0/block_ilu_preconditioner.hpp"
#include "linalg/preconditioners/test/preconditioner_test_util.hpp"
#include "linalg/test/gpu_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

using namespace blockres;
using test::backends;
using test::block_ilu0_options;
using test::upload;

namespace {

// A convection-diffusion block stencil with every value perturbed at random (fresh each run), so
// the diagonal blocks pivot and no two runs see the same numbers.
test::TestMatrix random_stencil(int nx, int ny, int nz, int bs)
{
  auto m = test::convection_diffusion(nx, ny, nz, bs, 1.5);
  for (auto& v : m.values) v += test::uniform(-0.3, 0.3);
  return m;
}

}  // namespace

TEST(BlockIlu0PreconditionerGpu, MatchesTheCpuBackend)
{
  const unsigned seed = std::random_device{}();
  test::rng().seed(seed);
  std::printf("block ILU(0) GPU test seed %u\n", seed);
  auto& be = backends();
  for (int bs : {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 48, 64}) {
    const int n = bs <= 9 ? 9 : bs <= 17 ? 5 : 3;
    const auto m = random_stencil(n, n - 1, n + 1, bs);
    auto Ac = upload(be.cpu, m);
    auto Ag = upload(be.gpu, m);
    auto iterative = block_ilu0_options(TriangularSolve::isai, 1);
    iterative.factor_sweeps = 2;
    auto swept = iterative;  // the ISAI sweeps on the factors
    swept.sweeps = 3;
    auto swept32 = swept;  // mixed precision: fp32 copies of the factors and the ISAI
    swept32.storage = StoragePrecision::fp32;
    for (const auto& opt : {block_ilu0_options(), block_ilu0_options(TriangularSolve::isai, 1), block_ilu0_options(TriangularSolve::isai, 2),
                            iterative, swept, swept32}) {
      BlockIlu0Preconditioner Mc(be.cpu, opt), Mg(be.gpu, opt);
      ASSERT_TRUE(Mc.setup(Ac).ok);
      const auto st = Mg.setup(Ag);
      ASSERT_TRUE(st.ok) << st.message;
      const std::string what = Mg.name() + " bs " + std::to_string(bs);
      const BsrView<const double> fc = Mc.factors(), fg = Mg.factors();
      std::vector<double> vg(static_cast<std::size_t>(Mg.factor_nnz()));
      be.gpu->copy_to_host(vg.data(), fg.values, vg.size() * sizeof(double));
      const std::vector<double> vc(fc.values, fc.values + Mc.factor_nnz());
      EXPECT_LE(test::max_rel_diff(vg, vc), 1e-11) << what;
      EXPECT_LE(test::max_rel_diff(Mg.diagonal_inverses().to_host(), Mc.diagonal_inverses().to_host()), 1e-11) << what;
      const auto z = test::apply_both(Ag, Mg, Ac, Mc, test::random_vector(Ac.scalar_rows()));
      // fp32 copies of fp64 factors that agree to 1e-11 may round to neighbouring floats: fp32 rounding.
      EXPECT_LE(test::max_rel_diff(z.z, z.ref), opt.storage == StoragePrecision::fp32 ? 1e-5 : 1e-10) << what;
    }
  }
}

TEST(BlockIlu0PreconditionerGpu, GmresAgreesWithTheCpu)
{
  auto& be = backends();
  for (int bs : {1, 3, 8}) {
    const auto m = test::convection_diffusion(12, 11, 10, bs, 2.0);
    auto Ac = upload(be.cpu, m);
    auto Ag = upload(be.gpu, m);
    for (const auto& opt : {block_ilu0_options(), block_ilu0_options(TriangularSolve::isai, 1)}) {
      BlockIlu0Preconditioner Mc(be.cpu, opt), Mg(be.gpu, opt);
      ASSERT_TRUE(Mc.setup(Ac).ok);
      ASSERT_TRUE(Mg.setup(Ag).ok);
      test::expect_gmres_agrees(Ac, Mc, Ag, Mg, test::random_vector(Ac.scalar_rows()), 500,
                                Mg.name() + " bs " + std::to_string(bs));
    }
  }
}

TEST(BlockIlu0PreconditionerGpu, SingularBlockAndNewValues)
{
  auto& be = backends();
  auto m = random_stencil(5, 4, 3, 5);
  auto z = m;
  test::zero_block_row(z, 23);
  auto Ag = upload(be.gpu, z);
  BlockIlu0Preconditioner M(be.gpu, block_ilu0_options());
  const auto st = M.setup(Ag);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("block row 23"), std::string::npos) << st.message;
  Ag.values().copy_from_host(m.values);  // same structure: numeric setup only
  ASSERT_TRUE(M.setup(Ag).ok);
  auto Ac = upload(be.cpu, m);
  BlockIlu0Preconditioner Mc(be.cpu, block_ilu0_options());
  ASSERT_TRUE(Mc.setup(Ac).ok);
  const auto applied = test::apply_both(Ag, M, Ac, Mc, test::random_vector(Ac.scalar_rows()));
  EXPECT_LE(test::max_rel_diff(applied.z, applied.ref), 1e-10);
}
