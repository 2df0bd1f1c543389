// Test fixture: a small, irregular oil_water setup (uneven cell sizes, an inactive cell,
// random rock, gravity, compressible fluids, tabulated curves with capillary pressure,
// multi-completion wells under rate and BHP control) and random states.
#pragma once

#include "linalg/test/random_matrix.hpp"
#include "physics/grid.hpp"
#include "physics/oil_water/oil_water_model.hpp"
#include "physics/units.hpp"

#include <vector>

namespace blockres::test {

struct ModelSetup {
  physics::GridSpec grid;
  physics::RockSpec rock;
  physics::FluidSpec fluid;
  std::vector<physics::WellSpec> wells;
};

inline ModelSetup small_setup(bool table_relperm, unsigned long long seed)
{
  using namespace physics;
  ModelSetup s;
  s.grid.nx = 5, s.grid.ny = 3, s.grid.nz = 3;
  s.grid.dx = {10, 12, 9, 11, 10};
  s.grid.dy = {8, 10, 9};
  s.grid.dz = {2, 3, 2.5};
  s.grid.top = 1500;
  s.grid.gravity = true;
  const std::size_t n = 5 * 3 * 3;
  s.rock.porosity.assign(n, 0.0);
  for (auto& p : s.rock.porosity) p = uniform(0.1, 0.3);
  s.rock.porosity[2 + 5 * (1 + 3 * 1)] = 0.0;  // an inactive cell in the middle
  s.rock.kx = lognormal_field(5, 3, 3, std::log(100.0), 0.8, 1.0, seed);
  for (auto& k : s.rock.kx) k *= units::millidarcy;
  s.rock.ky = s.rock.kx;
  s.rock.kz = s.rock.kx;
  for (auto& k : s.rock.kz) k *= 0.1;
  s.rock.compressibility = 5e-5 / units::bar;
  s.rock.reference_pressure = 200 * units::bar;
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
