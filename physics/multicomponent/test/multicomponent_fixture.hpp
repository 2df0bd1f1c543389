// Test fixture of the multicomponent model: a small irregular grid (uneven cells, an inactive cell,
// gravity, rock compressibility), random components (compressible, diffusion, a random
// mass-conserving rate matrix), wells under rate and BHP control, random states.
#pragma once

#include "linalg/test/random_matrix.hpp"
#include "physics/multicomponent/multicomponent_model.hpp"
#include "physics/test/grid_fixture.hpp"
#include "physics/units.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace blockres::test {

struct McSetup : GridRockSetup {
  physics::MulticomponentInput input;
};

// Random composition strictly inside the simplex (every fraction >= 0.2 / (1.2 nc) or so).
inline std::vector<double> random_composition(int nc)
{
  std::vector<double> y(static_cast<std::size_t>(nc));
  double s = 0.0;
  for (auto& v : y) s += (v = uniform(0.2, 1.0));
  for (auto& v : y) v /= s;
  return y;
}

// Random rate matrix [1/s]: off-diagonals >= 0 (about half of them zero), columns summing to 0.
inline std::vector<double> random_rate_matrix(int nc, double scale_per_day)
{
  std::vector<double> K(static_cast<std::size_t>(nc) * nc, 0.0);
  for (int l = 0; l < nc; ++l) {
    double col = 0.0;
    for (int k = 0; k < nc; ++k)
      if (k != l && uniform(0, 1) < 0.5) col += (K[std::size_t(k) * nc + l] = uniform(0, scale_per_day) / units::day);
    K[std::size_t(l) * nc + l] = -col;
  }
  return K;
}

inline physics::ComponentsSpec random_components(int nc, double diffusion_m2_per_day, double k_scale_per_day)
{
  physics::ComponentsSpec c;
  for (int k = 0; k < nc; ++k) {
    c.names.push_back("C" + std::to_string(k + 1));
    c.density.push_back(uniform(700.0, 1300.0));
    c.compressibility.push_back(uniform(1e-5, 1e-4) / units::bar);
    c.viscosity.push_back(uniform(0.3, 3.0) * units::centipoise);
  }
  c.reference_pressure = 150 * units::bar;
  c.diffusion = diffusion_m2_per_day / units::day;
  c.reactions = random_rate_matrix(nc, k_scale_per_day);
  return c;
}

// 4 x 3 x 3 grid with uneven cells and one inactive cell; four wells: a rate-controlled injector
// (3 completions), a rate-controlled producer, a BHP producer and a BHP injector.
inline McSetup mc_setup(int nc, unsigned long long seed, bool wells = true)
{
  using namespace physics;
  McSetup s;
  static_cast<GridRockSetup&>(s) = small_grid_rock(4, 1, seed);
  // Diffusion strong enough to matter next to the Darcy fluxes in the checks.
  s.input.components = random_components(nc, 2.0, 0.5);
  s.input.initial.pressure = 200 * units::bar;
  s.input.initial.composition = {random_composition(nc)};
  if (!wells) return s;
  MulticomponentWellSpec inj;
  inj.name = "INJ", inj.kind = WellKind::injector, inj.i = 0, inj.j = 0, inj.k_top = 0, inj.k_bottom = 2;
  inj.control = WellControlMode::rate, inj.rate = 3.0e4 / units::day, inj.bhp = 500 * units::bar;
  inj.composition = random_composition(nc);
  MulticomponentWellSpec prod;
  prod.name = "PROD", prod.kind = WellKind::producer, prod.i = 3, prod.j = 2, prod.k_top = 0, prod.k_bottom = 2;
  prod.control = WellControlMode::rate, prod.rate = 2.0e4 / units::day, prod.bhp = 50 * units::bar;
  MulticomponentWellSpec p2;
  p2.name = "P2", p2.kind = WellKind::producer, p2.i = 3, p2.j = 0, p2.k_top = 1, p2.k_bottom = 2;
  p2.control = WellControlMode::bhp, p2.bhp = 190 * units::bar;
  MulticomponentWellSpec i2;
  i2.name = "I2", i2.kind = WellKind::injector, i2.i = 0, i2.j = 2, i2.k_top = 1, i2.k_bottom = 2;
  i2.control = WellControlMode::bhp, i2.bhp = 210 * units::bar;
  i2.composition = random_composition(nc);
  s.input.wells = {inj, prod, p2, i2};
  return s;
}

// Random state: p around 200 bar, fractions strictly inside (0, 1).
inline std::vector<double> mc_random_state(index_t ncell, int nc)
{
  std::vector<double> x(static_cast<std::size_t>(ncell) * nc);
  for (index_t i = 0; i < ncell; ++i) {
    x[std::size_t(i) * nc] = uniform(195.0, 205.0) * units::bar;
    const auto y = random_composition(nc);
    for (int k = 0; k + 1 < nc; ++k) x[std::size_t(i) * nc + 1 + k] = y[k];
  }
  return x;
}

}  // namespace blockres::test
