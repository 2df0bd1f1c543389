// The CUDA oil_water kernels against the CPU loops on random states: residual, Jacobian
// (outputs poisoned first), well results, convergence norms, Newton update, fluid in place, the
// true-IMPES accumulation blocks.
// Label `gpu`; skipped without a device.
#include "physics/oil_water/oil_water_model.hpp"
#include "physics/test/block_storage_check.hpp"
#include "physics/test/model_fixture.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace blockres;
using namespace blockres::physics;

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();

// The same model, state, Jacobian and residual on both backends.
struct Pair {
  ExecPtr cpu = Executor::create_cpu(), gpu = Executor::create_cuda(0);
  Grid grid;
  OilWaterModel mc, mg;
  std::vector<double> hx0, hx;
  Vector x0c, xc, x0g, xg;
  BsrMatrix Jc, Jg;
  Vector Rc, Rg;
  explicit Pair(const test::ModelSetup& s)
      : grid(s.grid, s.rock),
        mc(cpu, grid, s.rock, s.fluid, s.wells, true),
        mg(gpu, grid, s.rock, s.fluid, s.wells, true),
        hx0(test::random_state(mc.num_cells())),
        hx(test::random_state(mc.num_cells())),
        x0c(cpu, std::span<const double>(hx0)),
        xc(cpu, std::span<const double>(hx)),
        x0g(gpu, std::span<const double>(hx0)),
        xg(gpu, std::span<const double>(hx)),
        Jc(cpu, 2, mc.pattern()),
        Jg(gpu, 2, mg.pattern()),
        Rc(cpu, 2 * size64_t(mc.num_cells())),
        Rg(gpu, 2 * size64_t(mc.num_cells()))
  {
    // Poison every output so an entry the kernels forget to write cannot pass.
    const std::vector<double> pj(static_cast<std::size_t>(Jc.values().size()), nan_v);
    const std::vector<double> pr(static_cast<std::size_t>(Rc.size()), nan_v);
    Jc.values().copy_from_host(pj), Jg.values().copy_from_host(pj);
    Rc.copy_from_host(pr), Rg.copy_from_host(pr);
  }
  void assemble(double dt)
  {
    mc.begin_step(x0c), mg.begin_step(x0g);
    mc.assemble(xc, x0c, dt, Rc, Jc);
    mg.assemble(xg, x0g, dt, Rg, Jg);
  }
};

}  // namespace

class AssemblyGpu : public ::testing::TestWithParam<bool> {};

TEST_P(AssemblyGpu, MatchesCpu)
{
  Pair P(test::small_setup(GetParam(), test::rng()()));
  auto &mc = P.mc, &mg = P.mg;
  auto &xc = P.xc, &xg = P.xg, &Rc = P.Rc, &Rg = P.Rg;
  const index_t n = mc.num_cells();
  const double dt = 3.0 * units::day;
  P.assemble(dt);
  EXPECT_LE(test::max_rel_diff(Rg.to_host(), Rc.to_host()), 1e-12);
  EXPECT_LE(test::max_rel_diff(P.Jg.values().to_host(), P.Jc.values().to_host()), 1e-12);

  const auto wc = mc.well_results(), wg = mg.well_results();
  ASSERT_EQ(wc.size(), wg.size());
  for (std::size_t w = 0; w < wc.size(); ++w) {
    EXPECT_NEAR(wg[w].bhp, wc[w].bhp, 1e-9 * std::abs(wc[w].bhp));
    EXPECT_NEAR(wg[w].rates[0], wc[w].rates[0], 1e-12 + 1e-10 * std::abs(wc[w].rates[0]));
    EXPECT_NEAR(wg[w].rates[1], wc[w].rates[1], 1e-12 + 1e-10 * std::abs(wc[w].rates[1]));
    EXPECT_EQ(wg[w].at_bhp, wc[w].at_bhp);
  }

  const auto nc = mc.convergence(xc, Rc, dt), ng = mg.convergence(xg, Rg, dt);
  for (int a = 0; a < 2; ++a) {
    EXPECT_NEAR(ng.cnv[a], nc.cnv[a], 1e-12 * nc.cnv[a]);
    EXPECT_NEAR(ng.mb[a], nc.mb[a], 1e-9 * nc.mb[a] + 1e-18);
  }
  EXPECT_TRUE(ng.finite);

  const auto ic = mc.in_place(xc), ig = mg.in_place(xg);
  EXPECT_NEAR(ig[0], ic[0], 1e-13 * ic[0]);
  EXPECT_NEAR(ig[1], ic[1], 1e-13 * ic[1]);

  // Update with chopping: a mix of small and large (chopped) steps, and NaN propagation.
  auto hdx = test::random_vector(2 * size64_t(n), -1.0, 1.0);
  auto cpu = P.cpu, gpu = P.gpu;
  for (index_t i = 0; i < n; ++i) hdx[2 * i] *= (i % 3 == 0 ? 1e8 : 1e5);
  hdx[5] = nan_v;
  Vector dxc(cpu, std::span<const double>(hdx)), dxg(gpu, std::span<const double>(hdx));
  mc.update(xc, dxc, {0.3, 0.2, 0.2}), mg.update(xg, dxg, {0.3, 0.2, 0.2});
  const auto uc = xc.to_host(), ug = xg.to_host();
  ASSERT_TRUE(std::isnan(uc[5]) && std::isnan(ug[5]));
  for (std::size_t k = 0; k < uc.size(); ++k) {
    if (k != 5) {
      ASSERT_EQ(ug[k], uc[k]) << k;
    }
  }

  // A NaN state must be reported as not finite by both backends.
  auto bad = P.hx;
  bad[7] = nan_v;
  xc.copy_from_host(bad), xg.copy_from_host(bad);
  mc.assemble(xc, P.x0c, dt, Rc, P.Jc), mg.assemble(xg, P.x0g, dt, Rg, P.Jg);
  EXPECT_FALSE(mc.convergence(xc, Rc, dt).finite);
  EXPECT_FALSE(mg.convergence(xg, Rg, dt).finite);
}

INSTANTIATE_TEST_SUITE_P(Relperm, AssemblyGpu, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("table") : std::string("corey"); });

// True-IMPES accumulation blocks (Model::accumulation_blocks), outputs poisoned: the pressure and
// the saturation columns (different units) each within 1e-12 of their largest CPU entry.
TEST_P(AssemblyGpu, AccumulationBlocksMatchCpu)
{
  Pair P(test::small_setup(GetParam(), test::rng()()));
  const index_t n = P.mc.num_cells();
  const double dt = 1.5 * units::day;
  const std::vector<double> poison(4 * std::size_t(n), nan_v);
  Vector Cc(P.cpu, std::span<const double>(poison)), Cg(P.gpu, std::span<const double>(poison));
  P.mc.accumulation_blocks(P.xc, dt, Cc);
  P.mg.accumulation_blocks(P.xg, dt, Cg);
  const auto c = Cc.to_host(), g = Cg.to_host();
  for (int v = 0; v < 2; ++v) {  // column v of every block
    std::vector<double> cv, gv;
    for (std::size_t q = 0; q < c.size(); ++q)
      if (int(q % 2) == v) cv.push_back(c[q]), gv.push_back(g[q]);
    EXPECT_LE(test::max_rel_diff(gv, cv), 1e-12) << "column " << v;
  }
}

TEST(AssemblyGpu, LargeGridMatchesCpu)
{
  // Enough cells to fill many thread blocks, odd dimensions; a rate-controlled producer completed in
  // every layer: 13 completions (169 coupling blocks, more than the 128 threads that compute its
  // terms) and 35 (1,225 completion pairs, more than the 1,024 threads that add them to R and J).
  for (const int nz : {13, 35}) {
    SCOPED_TRACE(nz);
    auto setup = test::small_setup(false, 5);
    setup.grid.nx = 37, setup.grid.ny = 29, setup.grid.nz = nz;
    setup.grid.dx.assign(37, 7.0), setup.grid.dy.assign(29, 9.0), setup.grid.dz.assign(std::size_t(nz), 2.0);
    const std::size_t n = 37 * 29 * std::size_t(nz);
    setup.rock.porosity.assign(n, 0.2);
    setup.rock.kx = lognormal_field(37, 29, nz, std::log(200.0), 1.0, 3.0, 99);
    for (auto& k : setup.rock.kx) k *= units::millidarcy;
    setup.rock.ky = setup.rock.kx, setup.rock.kz = setup.rock.kx;
    setup.wells[1].i = 36, setup.wells[1].j = 28, setup.wells[1].k_bottom = nz - 1;
    setup.wells[2].i = 36, setup.wells[2].j = 0;
    Pair P(setup);
    P.assemble(10 * units::day);
    EXPECT_LE(test::max_rel_diff(P.Rg.to_host(), P.Rc.to_host()), 1e-12);
    EXPECT_LE(test::max_rel_diff(P.Jg.values().to_host(), P.Jc.values().to_host()), 1e-12);
    // The producer meets its rate (its BHP couples its cells): the coupling blocks were written.
    const auto wc = P.mc.well_results(), wg = P.mg.well_results();
    EXPECT_FALSE(wc[1].at_bhp);
    EXPECT_EQ(wg[1].at_bhp, wc[1].at_bhp);
  }
}

// Model::set_block_storage on the device: the cell kernel stages a thread block's rows in shared memory only where
// they are stored contiguously, so both of its paths run (the "distributed" map leaves some stretches whole).
TEST(AssemblyGpu, MovedBlocksAreWrittenWhereTheStorageMapSendsThem)
{
  auto setup = test::small_setup(false, test::rng()());
  test::enlarge_grid(setup, 37, 29, 7, 23);
  const ExecPtr gpu = Executor::create_cuda(0);
  const physics::Grid grid(setup.grid, setup.rock);
  auto make = [&] { return std::make_unique<OilWaterModel>(gpu, grid, setup.rock, setup.fluid, setup.wells, true); };
  const index_t n = grid.num_active();
  test::expect_moved_blocks_identical(gpu, make, test::random_state(n), test::random_state(n), 4.0 * units::day);
}
