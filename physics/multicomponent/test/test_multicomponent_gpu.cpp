// CUDA multicomponent model against the CPU reference on random states for nc across every size
// class (thread per cell 1-4, fixed-size groups 8/16/32/64, run-time groups otherwise): residual,
// Jacobian (outputs poisoned with NaN first), norms, masses in place, Newton update, wells, the
// true-IMPES accumulation blocks.
#include "physics/multicomponent/test/multicomponent_fixture.hpp"
#include "physics/test/block_storage_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace blockres {
namespace {

using physics::MulticomponentModel;
using test::uniform;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// |a - b| <= tol (|b| + scale) for every entry, and no NaN.
void expect_close(const std::vector<double>& a, const std::vector<double>& b, double tol, double scale,
                  const std::string& what)
{
  ASSERT_EQ(a.size(), b.size()) << what;
  int reported = 0;
  for (std::size_t q = 0; q < a.size(); ++q) {
    const bool ok = std::isfinite(a[q]) && std::isfinite(b[q]) && std::abs(a[q] - b[q]) <= tol * (std::abs(b[q]) + scale);
    if (!ok && reported++ < 5) ADD_FAILURE() << what << "[" << q << "]: cuda " << a[q] << " cpu " << b[q];
  }
}

class McGpu : public ::testing::TestWithParam<int> {};

TEST_P(McGpu, CudaMatchesCpu)
{
  const int nc = GetParam();
  const auto s = test::mc_setup(nc, 500 + nc);
  const physics::Grid grid(s.grid, s.rock);
  const ExecPtr cpu = Executor::create_cpu(), gpu = Executor::create_cuda();
  MulticomponentModel mc(cpu, grid, s.rock, true, s.input), mg(gpu, grid, s.rock, true, s.input);
  const index_t n = mc.num_cells();
  const std::size_t N = std::size_t(n) * nc;
  const double dt = 0.4 * units::day;

  for (int draw = 0; draw < 3; ++draw) {
    SCOPED_TRACE("nc " + std::to_string(nc) + " draw " + std::to_string(draw));
    const auto x = test::mc_random_state(n, nc), x0 = test::mc_random_state(n, nc);
    Vector xc(cpu, std::span<const double>(x)), x0c(cpu, std::span<const double>(x0));
    Vector xg(gpu, std::span<const double>(x)), x0g(gpu, std::span<const double>(x0));
    mc.begin_step(x0c);
    mg.begin_step(x0g);
    const std::vector<double> poison_r(N, kNaN);
    Vector Rc(cpu, std::span<const double>(poison_r)), Rg(gpu, std::span<const double>(poison_r));
    BsrMatrix Jc(cpu, nc, mc.pattern()), Jg(gpu, nc, mg.pattern());
    const std::vector<double> poison_j(std::size_t(Jc.values().size()), kNaN);
    Jc.values().copy_from_host(poison_j);
    Jg.values().copy_from_host(poison_j);
    mc.assemble(xc, x0c, dt, Rc, Jc);
    mg.assemble(xg, x0g, dt, Rg, Jg);
    const auto rc = Rc.to_host(), rg = Rg.to_host(), jc = Jc.values().to_host(), jg = Jg.values().to_host();
    double rscale = 0.0, jscale[2] = {0.0, 0.0};
    for (const double v : rc) rscale = std::max(rscale, std::abs(v));
    for (std::size_t q = 0; q < jc.size(); ++q) jscale[q % nc != 0] = std::max(jscale[q % nc != 0], std::abs(jc[q]));
    expect_close(rc, rc, 0.0, 0.0, "cpu R (poison left)");
    expect_close(jc, jc, 0.0, 0.0, "cpu J (poison left)");
    expect_close(rg, rc, 1e-12, 1e-3 * rscale, "R");
    {  // Jacobian: p and x columns have their own scales
      std::vector<double> jgp, jcp, jgx, jcx;
      for (std::size_t q = 0; q < jc.size(); ++q) {
        (q % nc == 0 ? jgp : jgx).push_back(jg[q]);
        (q % nc == 0 ? jcp : jcx).push_back(jc[q]);
      }
      expect_close(jgp, jcp, 1e-12, 1e-3 * jscale[0], "J p-columns");
      expect_close(jgx, jcx, 1e-12, 1e-3 * jscale[1], "J x-columns");
    }

    const auto wc = mc.well_results(), wg = mg.well_results();
    ASSERT_EQ(wc.size(), wg.size());
    for (std::size_t w = 0; w < wc.size(); ++w) {
      EXPECT_NEAR(wg[w].bhp, wc[w].bhp, 1e-12 * wc[w].bhp) << "well " << w;
      EXPECT_EQ(wg[w].at_bhp, wc[w].at_bhp) << "well " << w;
      // A connection's rate is proportional to dp = p_c - bhp - head_c, so the rates carry the BHP's
      // rounding (the 1e-12 allowed above; a rate-controlled BHP is itself solved from the cells) amplified
      // by bhp / |dp|. Bound |dp| from below by |p_c - bhp| less the largest head a 1100 kg/m3 column can
      // add over the completion's depth below the reference (at least 0.1% of the BHP), and allow each rate
      // 1e-12 (1 + bhp / |dp|) of itself: 1e-11 relative were seen on an H100 at |dp| of a few bar.
      double dp_min = std::numeric_limits<double>::infinity();
      for (const auto& cp : mc.wells()[w].completions) {
        const double head = 1100.0 * 9.80665 * std::abs(cp.depth - mc.wells()[w].ref_depth);
        dp_min = std::min(dp_min, std::abs(x[std::size_t(cp.cell) * nc] - wc[w].bhp) - head);
      }
      const double amplification = wc[w].bhp / std::max(dp_min, 1e-3 * wc[w].bhp);
      ASSERT_EQ(wg[w].rates.size(), wc[w].rates.size());
      for (std::size_t k = 0; k < wc[w].rates.size(); ++k) {
        const double a = wg[w].rates[k], b = wc[w].rates[k];
        EXPECT_TRUE(std::isfinite(a) && std::abs(a - b) <= 1e-12 * (1.0 + amplification) * std::abs(b) + 1e-15 * rscale)
            << "well " << w << " rate " << k << ": cuda " << a << " cpu " << b << " (bhp / |dp| <= " << amplification
            << ")";
      }
    }

    const auto nc_c = mc.convergence(xc, Rc, dt), nc_g = mg.convergence(xg, Rg, dt);
    EXPECT_TRUE(nc_c.finite);
    EXPECT_TRUE(nc_g.finite);
    expect_close(nc_g.cnv, nc_c.cnv, 1e-12, 0.0, "CNV");
    double mbscale = 0.0;
    for (std::size_t k = 0; k < nc_c.cnv.size(); ++k) mbscale = std::max(mbscale, nc_c.cnv[k]);
    expect_close(nc_g.mb, nc_c.mb, 1e-11, 1e-3 * mbscale, "MB");

    const auto ipc = mc.in_place(xc), ipg = mg.in_place(xg);
    expect_close(ipg, ipc, 1e-12, 0.0, "in place");

    std::vector<double> dx(N);
    for (std::size_t q = 0; q < N; ++q) dx[q] = q % nc == 0 ? uniform(-0.5, 0.5) * x[q] : uniform(-0.8, 0.8);
    const physics::UpdateLimits lim{0.2, 0.2, 0.15};
    mc.update(xc, Vector(cpu, std::span<const double>(dx)), lim);
    mg.update(xg, Vector(gpu, std::span<const double>(dx)), lim);
    expect_close(xg.to_host(), xc.to_host(), 1e-14, 1.0, "updated x");  // fractions: absolute 1e-14 (FMA contraction differs)

    // NaN in the residual reaches the norms on both backends.
    auto rn = rc;
    rn[N / 2] = kNaN;
    Vector Rn_c(cpu, std::span<const double>(rn)), Rn_g(gpu, std::span<const double>(rn));
    EXPECT_FALSE(mc.convergence(x0c, Rn_c, dt).finite);
    EXPECT_FALSE(mg.convergence(x0g, Rn_g, dt).finite);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, McGpu, ::testing::Values(1, 2, 3, 5, 8, 13, 16, 17, 32, 33, 64));

// True-IMPES accumulation blocks (Model::accumulation_blocks), outputs poisoned: p and x columns
// against the CPU within 1e-12 of |entry| + 1e-3 of their column kind's largest entry.
class McAccumulationGpu : public ::testing::TestWithParam<int> {};

TEST_P(McAccumulationGpu, CudaMatchesCpu)
{
  const int nc = GetParam();
  const auto s = test::mc_setup(nc, 700 + nc);
  const physics::Grid grid(s.grid, s.rock);
  const ExecPtr cpu = Executor::create_cpu(), gpu = Executor::create_cuda();
  MulticomponentModel mc(cpu, grid, s.rock, true, s.input), mg(gpu, grid, s.rock, true, s.input);
  const index_t n = mc.num_cells();
  const std::size_t nn = std::size_t(nc) * nc;
  const auto x = test::mc_random_state(n, nc);
  const std::vector<double> poison(nn * n, kNaN);
  Vector Cc(cpu, std::span<const double>(poison)), Cg(gpu, std::span<const double>(poison));
  mc.accumulation_blocks(Vector(cpu, std::span<const double>(x)), 0.7 * units::day, Cc);
  mg.accumulation_blocks(Vector(gpu, std::span<const double>(x)), 0.7 * units::day, Cg);
  const auto c = Cc.to_host(), g = Cg.to_host();
  std::vector<double> cp, gp, cx, gx;
  double sp = 0.0, sx = 0.0;
  for (std::size_t q = 0; q < c.size(); ++q) {
    const bool pcol = q % nc == 0;
    (pcol ? cp : cx).push_back(c[q]);
    (pcol ? gp : gx).push_back(g[q]);
    double& scale = pcol ? sp : sx;
    scale = std::max(scale, std::abs(c[q]));
  }
  expect_close(cp, cp, 0.0, 0.0, "cpu C (poison left)");
  expect_close(cx, cx, 0.0, 0.0, "cpu C (poison left)");
  expect_close(gp, cp, 1e-12, 1e-3 * sp, "C p-columns");
  expect_close(gx, cx, 1e-12, 1e-3 * sx, "C x-columns");
}

INSTANTIATE_TEST_SUITE_P(Sizes, McAccumulationGpu, ::testing::Values(1, 2, 3, 5, 8, 13, 16, 17, 32, 33, 64));

// Many cells (several thread blocks per size class) on a larger grid without wells.
TEST(McGpuLarge, CudaMatchesCpuOnManyCells)
{
  for (const int nc : {3, 8, 21}) {
    SCOPED_TRACE("nc " + std::to_string(nc));
    physics::GridSpec g;
    g.nx = 23, g.ny = 11, g.nz = 4;
    g.dx.assign(23, 10.0), g.dy.assign(11, 12.0), g.dz.assign(4, 3.0);
    g.top = 1000;
    physics::RockSpec r;
    const std::size_t cells = 23 * 11 * 4;
    r.porosity.assign(cells, 0.2);
    r.porosity[100] = 0.0;
    r.kx = physics::lognormal_field(23, 11, 4, std::log(50.0), 1.0, 2.0, 7);
    for (auto& k : r.kx) k *= units::millidarcy;
    r.ky = r.kx, r.kz = r.kx;
    r.compressibility = 1e-5 / units::bar;
    physics::MulticomponentInput in;
    in.components = test::random_components(nc, 0.5, 0.2);
    in.initial.composition = {test::random_composition(nc)};
    const physics::Grid grid(g, r);
    const ExecPtr cpu = Executor::create_cpu(), gpu = Executor::create_cuda();
    MulticomponentModel mc(cpu, grid, r, true, in), mg(gpu, grid, r, true, in);
    const index_t n = mc.num_cells();
    const auto x = test::mc_random_state(n, nc), x0 = test::mc_random_state(n, nc);
    Vector xc(cpu, std::span<const double>(x)), x0c(cpu, std::span<const double>(x0));
    Vector xg(gpu, std::span<const double>(x)), x0g(gpu, std::span<const double>(x0));
    const std::vector<double> poison_r(std::size_t(n) * nc, kNaN);
    Vector Rc(cpu, std::span<const double>(poison_r)), Rg(gpu, std::span<const double>(poison_r));
    BsrMatrix Jc(cpu, nc, mc.pattern()), Jg(gpu, nc, mg.pattern());
    Jg.values().copy_from_host(std::vector<double>(std::size_t(Jg.values().size()), kNaN));
    mc.assemble(xc, x0c, 86400.0, Rc, Jc);
    mg.assemble(xg, x0g, 86400.0, Rg, Jg);
    const auto rc = Rc.to_host(), jc = Jc.values().to_host();
    double rs = 0.0, js = 0.0;
    for (const double v : rc) rs = std::max(rs, std::abs(v));
    for (const double v : jc) js = std::max(js, std::abs(v));
    expect_close(Rg.to_host(), rc, 1e-12, 1e-3 * rs, "R");
    expect_close(Jg.values().to_host(), jc, 1e-12, 1e-3 * js, "J");
    expect_close(mg.in_place(xg), mc.in_place(xc), 1e-12, 0.0, "in place");
  }
}

// Model::set_block_storage on the device, across the kernels' size classes (thread per cell, fixed groups, run-time
// groups): the blocks written bit for bit where the map sends them.
TEST(McGpuBlockStorage, MovedBlocksAreWrittenWhereTheStorageMapSendsThem)
{
  for (const int nc : {2, 8, 13, 16}) {
    SCOPED_TRACE("nc " + std::to_string(nc));
    auto setup = test::mc_setup(nc, test::rng()());
    test::enlarge_grid(setup, 17, 9, 5, 41);
    const ExecPtr gpu = Executor::create_cuda();
    const physics::Grid grid(setup.grid, setup.rock);
    auto make = [&] { return std::make_unique<MulticomponentModel>(gpu, grid, setup.rock, true, setup.input); };
    const index_t n = grid.num_active();
    test::expect_moved_blocks_identical(gpu, make, test::mc_random_state(n, nc), test::mc_random_state(n, nc),
                                        1.5 * units::day);
  }
}

}  // namespace
}  // namespace blockres
