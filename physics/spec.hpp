// Resolved physical input of a simulation, in SI units (the deck loader converts and validates).
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

struct PhaseSpec {
  double surface_density = 1000.0;   // [kg/m^3]
  double fvf_ref = 1.0;              // B at the reference pressure
  double compressibility = 0.0;      // [1/Pa]
  double reference_pressure = 1.0e5; // [Pa]
  double viscosity = 1.0e-3;         // [Pa s]
};

struct RelpermSpec {
  enum class Kind { corey, table } kind = Kind::corey;
  double swc = 0.0, sor = 0.0, nw = 2.0, no = 2.0, krw_max = 1.0, kro_max = 1.0;
  std::vector<double> table;  // rows of (S_w, k_rw, k_ro, P_cow [Pa])
};

struct FluidSpec {
  PhaseSpec water, oil;
  RelpermSpec relperm;
};

struct InitialSpec {
  bool hydrostatic = false;  // oil-phase hydrostatic equilibrium from a datum
  double pressure = 1.0e7;   // uniform pressure, or the datum pressure [Pa]
  double datum_depth = 0.0;  // [m]
  double sw = 0.0;
};

enum class WellControlMode { rate, bhp };
enum class RateTarget { water, oil, liquid };

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

// An oil_water well: the shared geometry and its controls.
struct WellSpec : WellGeometry {
  WellControlMode control = WellControlMode::bhp;
  RateTarget target = RateTarget::water;  // which surface rate `rate` counts
  double rate = 0.0;    // target magnitude [surface m^3/s]
  double bhp = 0.0;     // setpoint (bhp control) or limit (rate control) [Pa]
};

}  // namespace blockres::physics
