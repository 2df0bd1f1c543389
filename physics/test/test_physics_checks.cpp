// Physics checks whose expected values do not come from the code under test: the PVT, the
// transmissibilities, the hydrostatic relation and Peaceman's well index are written out here from
// PHYSICS.md. A hydrostatic initial state without wells has no flux residual (relative to
// T lambda b rho g dz) in both models, and the same check fails with the gravity sign flipped; the
// anisotropic Peaceman well index of a completion against the numbers worked by hand.
#include "physics/multicomponent/multicomponent_model.hpp"
#include "physics/oil_water/oil_water_model.hpp"
#include "physics/units.hpp"
#include "physics/wells.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

using namespace blockres;
using namespace blockres::physics;

namespace {

constexpr double g = 9.80665;  // m/s^2, PHYSICS.md: gravity along +z, depth growing downwards

// A 2 x 2 x 6 column of uneven layers, top at 2000 m, a different vertical permeability per layer
// (lateral faces join cells of equal depth and pressure: no flux there by construction).
struct Column {
  GridSpec grid;
  RockSpec rock;
  std::vector<double> kz_layer{20, 35, 5, 60, 12, 80};  // mD
  Column()
  {
    grid.nx = 2, grid.ny = 2, grid.nz = 6;
    grid.dx = {40, 30};
    grid.dy = {25, 35};
    grid.dz = {1.0, 2.0, 3.0, 1.5, 4.0, 2.5};
    grid.top = 2000.0;
    grid.gravity = true;
    const std::size_t n = 2 * 2 * 6;
    rock.porosity.assign(n, 0.2);
    rock.kx.assign(n, 100 * units::millidarcy);
    rock.ky.assign(n, 100 * units::millidarcy);
    rock.kz.resize(n);
    for (std::size_t c = 0; c < n; ++c) rock.kz[c] = kz_layer[c / 4] * units::millidarcy;
    rock.compressibility = 4e-5 / units::bar;
    rock.reference_pressure = 250 * units::bar;
  }
  // Centre depth of layer k and the vertical transmissibility between layers k and k+1 of column
  // (i, j): T = 1 / (dz_k / (2 kz_k A) + dz_k1 / (2 kz_k1 A)), A = dx dy (PHYSICS.md).
  double depth(int k) const
  {
    double z = grid.top;
    for (int q = 0; q < k; ++q) z += grid.dz[q];
    return z + 0.5 * grid.dz[k];
  }
  double tz(int i, int j, int k) const
  {
    const double A = grid.dx[i] * grid.dy[j];
    const double k0 = kz_layer[k] * units::millidarcy, k1 = kz_layer[k + 1] * units::millidarcy;
    return 1.0 / (grid.dz[k] / (2 * k0 * A) + grid.dz[k + 1] / (2 * k1 * A));
  }
};

// ECLIPSE PVTW/PVCDO (PHYSICS.md): B(p) = B_ref / (1 + X + X^2/2), X = c (p - p_ref); rho = rho_s / B.
double fvf(const PhaseSpec& ph, double p)
{
  const double X = ph.compressibility * (p - ph.reference_pressure);
  return ph.fvf_ref / (1 + X + 0.5 * X * X);
}

// The model's residual at state s with x0 = s (no accumulation: the flux alone), on the host.
template <class M>
std::vector<double> residual_at(M& model, const ExecPtr& exec, int bs, const std::vector<double>& s)
{
  Vector xv(exec, std::span<const double>(s)), R(exec, s.size());
  BsrMatrix J(exec, bs, model.pattern());
  model.begin_step(xv);
  model.assemble(xv, xv, 1.0 * units::day, R, J);
  return R.to_host();
}

}  // namespace

// ---- oil_water ---------------------------------------------------------------------------------
// At connate water (k_rw = 0) only oil moves, and its hydrostatic state from the datum is what the
// model's initial state gives. Three things are checked against values computed here:
//   1. the initial state obeys the discrete hydrostatic relation of TPFA with the arithmetic face
//      density: p_b - p_a = (rho(p_a) + rho(p_b)) / 2 g (z_b - z_a), to 1e-9 of rho g dz;
//   2. the model's residual at that state (x = x0, so the accumulation vanishes) is the flux alone
//      and is below 1e-8 of S_i = sum over the cell's vertical faces of T lambda_o b_o rho_o g |dz|;
//   3. the check can fail: the residual of the state hydrostatic under the flipped gravity sign
//      (pressure falling with depth), and the hand flux of the true state with the sign of the
//      gravity term flipped, are both of the order of S_i.
TEST(HydrostaticEquilibrium, OilWaterWithoutWellsHasNoFluxResidual)
{
  const Column col;
  const Grid grid(col.grid, col.rock);
  FluidSpec fluid;
  fluid.water = {1030.0, 1.02, 4.0e-5 / units::bar, 250 * units::bar, 0.5e-3};
  fluid.oil = {820.0, 1.25, 1.6e-4 / units::bar, 250 * units::bar, 2.0e-3};
  fluid.relperm.swc = 0.2, fluid.relperm.sor = 0.15, fluid.relperm.kro_max = 0.85, fluid.relperm.krw_max = 0.6;
  InitialSpec init;
  init.hydrostatic = true, init.pressure = 250 * units::bar, init.datum_depth = 2006.0, init.sw = 0.2;
  const ExecPtr exec = Executor::create_cpu();
  OilWaterModel model(exec, grid, col.rock, fluid, {}, true, init);
  ASSERT_EQ(model.num_cells(), 24);
  const std::vector<double> x = model.initial_state();

  auto cell = [&](int i, int j, int k) { return grid.active_index(grid.global_index(i, j, k)); };
  auto rho_o = [&](double p) { return fluid.oil.surface_density / fvf(fluid.oil, p); };
  const double lambda_o = fluid.relperm.kro_max / fluid.oil.viscosity;  // S_e = 0 at S_w = S_wc

  // 1. The discrete hydrostatic relation, layer by layer, from the PVT written out above.
  for (int k = 0; k + 1 < 6; ++k) {
    const double pa = x[2 * cell(0, 0, k)], pb = x[2 * cell(0, 0, k + 1)];
    const double dz = col.depth(k + 1) - col.depth(k);
    const double head = 0.5 * (rho_o(pa) + rho_o(pb)) * g * dz;
    EXPECT_NEAR((pb - pa) / head, 1.0, 1e-9) << "layers " << k << ", " << k + 1;
  }

  // Oil flux from a (layer k) down to b (layer k + 1) of column (i, j), upwind mobility; the sign of
  // the gravity term as given.
  auto oil_flux = [&](const std::vector<double>& s, int i, int j, int k, double gravity_sign) {
    const double pa = s[2 * cell(i, j, k)], pb = s[2 * cell(i, j, k + 1)];
    const double rho_face = 0.5 * (rho_o(pa) + rho_o(pb));
    const double dphi = (pa - pb) - gravity_sign * rho_face * g * (col.depth(k) - col.depth(k + 1));
    const double b_up = 1.0 / fvf(fluid.oil, dphi >= 0 ? pa : pb);
    return col.tz(i, j, k) * lambda_o * b_up * dphi;
  };
  // S_i: the size of the gravity term on the cell's vertical faces.
  auto scale = [&](const std::vector<double>& s, int i, int j, int k) {
    double sum = 0.0;
    for (int kk : {k - 1, k})
      if (kk >= 0 && kk + 1 < 6) {
        const double p = s[2 * cell(i, j, kk)];
        sum += col.tz(i, j, kk) * lambda_o / fvf(fluid.oil, p) * rho_o(p) * g * (col.depth(kk + 1) - col.depth(kk));
      }
    return sum;
  };
  auto worst_relative_residual = [&](const std::vector<double>& s, double* worst_water) {
    const auto r = residual_at(model, exec, 2, s);
    double worst = 0.0;
    *worst_water = 0.0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 6; ++k) {
          const index_t a = cell(i, j, k);
          worst = std::max(worst, std::abs(r[2 * a + 1]) / scale(s, i, j, k));
          *worst_water = std::max(*worst_water, std::abs(r[2 * a]));
        }
    return worst;
  };

  // 2. The model's residual at the hydrostatic state.
  double water = 0.0;
  const double rel = worst_relative_residual(x, &water);
  std::printf("oil_water hydrostatic state: largest |R_oil| / (T lambda b rho g dz) = %.3e\n", rel);
  EXPECT_LT(rel, 1e-8);
  EXPECT_EQ(water, 0.0);  // k_rw = 0 and x = x0: no water term at all

  // 3a. The state that is hydrostatic under the flipped gravity sign: p falls with depth.
  std::vector<double> flipped = x;
  for (index_t a = 0; a < model.num_cells(); ++a) flipped[2 * a] = 2 * init.pressure - x[2 * a];
  const double rel_flipped = worst_relative_residual(flipped, &water);
  std::printf("flipped gravity sign: largest |R_oil| / (T lambda b rho g dz) = %.3e\n", rel_flipped);
  EXPECT_GT(rel_flipped, 1.0);
  // 3b. The hand flux on the true state: zero with the right sign, the size of the head with the
  // wrong one.
  double right = 0.0, wrong = 0.0;
  for (int k = 0; k + 1 < 6; ++k) {
    const double p = x[2 * cell(1, 0, k)];
    const double head = col.tz(1, 0, k) * lambda_o / fvf(fluid.oil, p) * rho_o(p) * g * (col.depth(k + 1) - col.depth(k));
    right = std::max(right, std::abs(oil_flux(x, 1, 0, k, +1.0)) / head);
    wrong = std::max(wrong, std::abs(oil_flux(x, 1, 0, k, -1.0)) / head);
  }
  EXPECT_LT(right, 1e-8);
  EXPECT_GT(wrong, 1.5);  // 2 rho g dz over rho g dz
}

// ---- multicomponent ----------------------------------------------------------------------------
// Three compressible components of one uniform composition, no reactions, no wells: the model's
// hydrostatic state (mixture density 1/rho = sum x_k / rho_k(p), rho_k = rho_k,ref exp(c_k (p - p_ref)))
// obeys the discrete hydrostatic relation, has no flux residual relative to T (rho/mu) rho g dz, and
// the state of the flipped gravity sign has one of the size of the head.
TEST(HydrostaticEquilibrium, MulticomponentWithoutWellsHasNoFluxResidual)
{
  const Column col;
  const Grid grid(col.grid, col.rock);
  MulticomponentInput in;
  auto& c = in.components;
  c.names = {"A", "B", "C"};
  c.density = {780.0, 1010.0, 1240.0};
  c.compressibility = {1.5e-4 / units::bar, 4.0e-5 / units::bar, 2.5e-5 / units::bar};
  c.viscosity = {0.6e-3, 1.1e-3, 2.4e-3};
  c.reference_pressure = 250 * units::bar;
  c.diffusion = 1e-9;                 // acts on composition differences only (none here)
  c.reactions.assign(9, 0.0);         // no sources
  const std::vector<double> y{0.5, 0.3, 0.2};
  in.initial.hydrostatic = true, in.initial.pressure = 250 * units::bar, in.initial.datum_depth = 2006.0;
  in.initial.composition = {y};
  const ExecPtr exec = Executor::create_cpu();
  MulticomponentModel model(exec, grid, col.rock, true, in);
  const int nc = 3;
  const std::vector<double> x = model.initial_state();

  auto cell = [&](int i, int j, int k) { return grid.active_index(grid.global_index(i, j, k)); };
  auto rho = [&](double p) {
    double v = 0.0;
    for (int k = 0; k < nc; ++k) v += y[k] / (c.density[k] * std::exp(c.compressibility[k] * (p - c.reference_pressure)));
    return 1.0 / v;
  };
  double ln_mu = 0.0;
  for (int k = 0; k < nc; ++k) ln_mu += y[k] * std::log(c.viscosity[k]);
  const double mu = std::exp(ln_mu);

  for (int k = 0; k + 1 < 6; ++k) {
    const double pa = x[std::size_t(cell(0, 0, k)) * nc], pb = x[std::size_t(cell(0, 0, k + 1)) * nc];
    const double head = 0.5 * (rho(pa) + rho(pb)) * g * (col.depth(k + 1) - col.depth(k));
    EXPECT_NEAR((pb - pa) / head, 1.0, 1e-9) << "layers " << k << ", " << k + 1;
  }

  auto worst_relative_residual = [&](const std::vector<double>& s) {
    const auto r = residual_at(model, exec, nc, s);
    double worst = 0.0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 6; ++k) {
          double scale = 0.0;  // sum over the vertical faces of T (rho/mu) rho g |dz|
          for (int kk : {k - 1, k})
            if (kk >= 0 && kk + 1 < 6) {
              const double p = s[std::size_t(cell(i, j, kk)) * nc];
              scale += col.tz(i, j, kk) * rho(p) / mu * rho(p) * g * (col.depth(kk + 1) - col.depth(kk));
            }
          for (int q = 0; q < nc; ++q)
            worst = std::max(worst, std::abs(r[std::size_t(cell(i, j, k)) * nc + q]) / (y[q] * scale));
        }
    return worst;
  };
  const double rel = worst_relative_residual(x);
  std::printf("multicomponent hydrostatic state: largest |R_k| / (x_k T rho/mu rho g dz) = %.3e\n", rel);
  EXPECT_LT(rel, 1e-8);

  std::vector<double> flipped = x;
  for (index_t a = 0; a < model.num_cells(); ++a)
    flipped[std::size_t(a) * nc] = 2 * in.initial.pressure - x[std::size_t(a) * nc];
  const double rel_flipped = worst_relative_residual(flipped);
  std::printf("flipped gravity sign: largest |R_k| / (x_k T rho/mu rho g dz) = %.3e\n", rel_flipped);
  EXPECT_GT(rel_flipped, 1.0);
}

// ---- Peaceman ------------------------------------------------------------------------------------
// PHYSICS.md: WI = 2 pi sqrt(kx ky) dz / (ln(r_o / r_w) + skin),
//   r_o = 0.28 sqrt( sqrt(ky/kx) dx^2 + sqrt(kx/ky) dy^2 ) / ( (ky/kx)^(1/4) + (kx/ky)^(1/4) ).
// kx = 100 mD, ky = 25 mD, a cell of dx = 30 m (along x), dy = 20 m, dz = 5 m, r_w = 0.1 m:
//   sqrt(ky/kx) = 0.5, sqrt(kx/ky) = 2, (ky/kx)^(1/4) = 0.70710678, (kx/ky)^(1/4) = 1.41421356
//   r_o = 0.28 sqrt(0.5 * 900 + 2 * 400) / 2.12132034 = 0.28 * 35.3553391 / 2.12132034 = 14/3 m
//   ln(r_o / r_w) = ln(46.6666667) = 3.8430301339411947
//   WI = 2 pi * 50 mD * 5 m / 3.8430301339411947 = 408.73900855520395 mD m  (skin 0)
//   WI = 2 pi * 50 mD * 5 m / 5.8430301339411947 = 268.8324877310491 mD m   (skin 2)
// With dx and dy exchanged r_o would be 5.903 m and WI 385.18 mD m, 6 % less: the comparison sees
// an axis mix-up, as it sees a geometric mean of kx, ky taken as isotropic (r_o 5.048 m).
TEST(PeacemanWellIndex, AnisotropicCompletionByHand)
{
  constexpr double md = units::millidarcy;
  const double wi_skin0 = 408.73900855520395 * md, wi_skin2 = 268.8324877310491 * md;  // m^3
  EXPECT_NEAR(peaceman_well_index(100 * md, 25 * md, 30, 20, 5, 0.1, 0.0, "W", 0), wi_skin0, 1e-12 * wi_skin0);
  EXPECT_NEAR(peaceman_well_index(100 * md, 25 * md, 30, 20, 5, 0.1, 2.0, "W", 0), wi_skin2, 1e-12 * wi_skin2);

  // Through a grid: the completion's cell is the one of dx = 30, dy = 20, dz = 5, kx = 100 mD and
  // ky = 25 mD (its neighbours differ), so complete_wells must pass the right cell's sizes and
  // permeabilities in the right order.
  GridSpec gs;
  gs.nx = 3, gs.ny = 3, gs.nz = 2;
  gs.dx = {12, 30, 50};
  gs.dy = {8, 20, 45};
  gs.dz = {3, 5};
  gs.top = 1000;
  RockSpec rock;
  const std::size_t n = 3 * 3 * 2;
  rock.porosity.assign(n, 0.25);
  rock.kx.assign(n, 300 * md), rock.ky.assign(n, 7 * md), rock.kz.assign(n, 10 * md);
  const std::size_t target = 1 + 3 * (1 + 3 * 1);  // (i, j, k) = (1, 1, 1), 0-based
  rock.kx[target] = 100 * md, rock.ky[target] = 25 * md;
  const Grid grid(gs, rock);
  WellGeometry w;
  w.name = "PROD", w.i = 1, w.j = 1, w.k_top = 1, w.k_bottom = 1, w.radius = 0.1, w.skin = 0.0;
  const auto wells = complete_wells(grid, rock, {&w}, {false});
  ASSERT_EQ(wells.size(), 1u);
  ASSERT_EQ(wells[0].completions.size(), 1u);
  EXPECT_NEAR(wells[0].completions[0].wi, wi_skin0, 1e-12 * wi_skin0);
  const double swapped = 385.18489962983205 * md;
  EXPECT_GT(std::abs(wells[0].completions[0].wi - swapped), 0.05 * wi_skin0);
}
