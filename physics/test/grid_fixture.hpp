// Test fixture shared by the model fixtures: a small irregular nx x 3 x 3 grid (uneven cells,
// gravity) with random rock (porosity, one inactive cell in the middle, lognormal permeability,
// anisotropic kz, rock compressibility).
#pragma once

#include "linalg/test/random_matrix.hpp"
#include "physics/grid.hpp"
#include "physics/units.hpp"

#include <cmath>
#include <vector>

namespace blockres::test {

struct GridRockSetup {
  physics::GridSpec grid;
  physics::RockSpec rock;
};

// nx <= 5 columns of widths 10, 12, 9, 11, 10 m; the cell (inactive_x, 1, 1) has zero porosity.
// Porosities are drawn from uniform(), the permeability field from `seed`.
inline GridRockSetup small_grid_rock(int nx, int inactive_x, unsigned long long seed)
{
  using namespace physics;
  GridRockSetup s;
  s.grid.nx = nx, s.grid.ny = 3, s.grid.nz = 3;
  s.grid.dx = std::vector<double>{10, 12, 9, 11, 10};
  s.grid.dx.resize(static_cast<std::size_t>(nx));
  s.grid.dy = {8, 10, 9};
  s.grid.dz = {2, 3, 2.5};
  s.grid.top = 1500;
  s.grid.gravity = true;
  const std::size_t n = static_cast<std::size_t>(nx) * 3 * 3;
  s.rock.porosity.assign(n, 0.0);
  for (auto& p : s.rock.porosity) p = uniform(0.1, 0.3);
  s.rock.porosity[inactive_x + nx * (1 + 3 * 1)] = 0.0;  // an inactive cell in the middle
  s.rock.kx = lognormal_field(nx, 3, 3, std::log(100.0), 0.8, 1.0, seed);
  for (auto& k : s.rock.kx) k *= units::millidarcy;
  s.rock.ky = s.rock.kx;
  s.rock.kz = s.rock.kx;
  for (auto& k : s.rock.kz) k *= 0.1;
  s.rock.compressibility = 5e-5 / units::bar;
  s.rock.reference_pressure = 200 * units::bar;
  return s;
}

}  // namespace blockres::test
