// Test fixture: a small, irregular oil_water setup (uneven cell sizes, an inactive cell,
// random rock, gravity, compressible fluids, tabulated curves with capillary pressure,
// multi-completion wells under rate and BHP control) and random states.
#pragma once

#include "linalg/test/random_matrix.hpp"
#include "physics/oil_water/oil_water_model.hpp"
#include "physics/test/grid_fixture.hpp"
#include "physics/units.hpp"

#include <vector>

namespace blockres::test {

struct ModelSetup : GridRockSetup {
  physics::FluidSpec fluid;
  std::vector<physics::WellSpec> wells;
};

inline ModelSetup small_setup(bool table_relperm, unsigned long long seed)
{
  using namespace physics;
  ModelSetup s;
  static_cast<GridRockSetup&>(s) = small_grid_rock(5, 2, seed);
  s.fluid.water = {1020.0, 1.01, 4.5e-5 / units::bar, 200 * units::bar, 0.4e-3};
  s.fluid.oil = {850.0, 1.2, 1.5e-4 / units::bar, 200 * units::bar, 1.8e-3};
  auto& rp = s.fluid.relperm;
  if (table_relperm) {
    rp.kind = RelpermSpec::Kind::table;
    rp.table = {0.15, 0.0,  0.9,  0.6 * units::bar,  //
                0.3,  0.03, 0.55, 0.35 * units::bar, //
                0.5,  0.15, 0.2,  0.15 * units::bar, //
                0.7,  0.35, 0.04, 0.05 * units::bar, //
                0.85, 0.55, 0.0,  0.0};
  } else {
    rp.kind = RelpermSpec::Kind::corey;
    rp.swc = 0.15, rp.sor = 0.2, rp.nw = 2.2, rp.no = 1.8, rp.krw_max = 0.7, rp.kro_max = 0.9;
  }
  WellSpec inj;
  inj.name = "INJ", inj.kind = WellKind::injector, inj.i = 0, inj.j = 0, inj.k_top = 0, inj.k_bottom = 2;
  inj.control = WellControlMode::rate, inj.target = RateTarget::water;
  inj.rate = 40.0 * units::m3_per_day, inj.bhp = 500 * units::bar;
  WellSpec prod;
  prod.name = "PROD", prod.kind = WellKind::producer, prod.i = 4, prod.j = 2, prod.k_top = 0, prod.k_bottom = 2;
  prod.control = WellControlMode::rate, prod.target = RateTarget::liquid;
  prod.rate = 30.0 * units::m3_per_day, prod.bhp = 50 * units::bar;
  WellSpec p2;
  p2.name = "P2", p2.kind = WellKind::producer, p2.i = 4, p2.j = 0, p2.k_top = 1, p2.k_bottom = 2;
  p2.control = WellControlMode::bhp, p2.bhp = 190 * units::bar;
  s.wells = {inj, prod, p2};
  return s;
}

// Random state: p around 200 bar with a gravity-like trend, S_w inside the mobile range.
inline std::vector<double> random_state(index_t ncell)
{
  std::vector<double> x(static_cast<std::size_t>(ncell) * 2);
  for (index_t i = 0; i < ncell; ++i) {
    x[2 * i] = uniform(195.0, 205.0) * units::bar;
    x[2 * i + 1] = uniform(0.32, 0.62);
  }
  return x;
}

}  // namespace blockres::test
