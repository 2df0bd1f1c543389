// The physical input every model shares, resolved and in SI units (the deck loader converts and
// validates): the grid, the rock, and the geometry and control kind of a well. A model's own input
// (fluids, initial state, well targets) lives in its folder (e.g. physics/oil_water/oil_water_spec.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace blockres::physics {

struct GridSpec {
  int nx = 1, ny = 1, nz = 1;
  std::vector<double> dx, dy, dz;  // one value per index along each axis [m]
  double top = 0.0;                // depth of the top face [m]
  bool gravity = true;
};

// Per-cell rock properties on the full grid in natural order (i fastest, then j, then k).
struct RockSpec {
  std::vector<double> porosity;     // cells with porosity 0 are inactive
  std::vector<double> kx, ky, kz;   // [m^2]
  double compressibility = 0.0;     // [1/Pa]
  double reference_pressure = 1.0e5;  // [Pa]
};

enum class WellControlMode { rate, bhp };
enum class WellKind { injector, producer };

// The deck keys every model's wells share (inputs/README.md, [[wells]]).
struct WellGeometry {
  std::string name;
  WellKind kind = WellKind::producer;
  int i = 0, j = 0, k_top = 0, k_bottom = 0;  // 0-based, inclusive layer range
  double radius = 0.1;  // [m]
  double skin = 0.0;
  std::vector<double> well_index;   // explicit per-completion well index [m^3]; empty: Peaceman
  std::optional<double> ref_depth;  // BHP reference depth [m]; default: first completion's centre
};

}  // namespace blockres::physics
