// The oil_water model's own resolved input, in SI units: the two phases, relative permeability and
// capillary pressure, the initial state and the wells' rate targets.
#pragma once

#include "physics/spec.hpp"

#include <vector>

namespace blockres::physics {

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

enum class RateTarget { water, oil, liquid };

// An oil_water well: the shared geometry and its controls.
struct WellSpec : WellGeometry {
  WellControlMode control = WellControlMode::bhp;
  RateTarget target = RateTarget::water;  // which surface rate `rate` counts
  double rate = 0.0;    // target magnitude [surface m^3/s]
  double bhp = 0.0;     // setpoint (bhp control) or limit (rate control) [Pa]
};

}  // namespace blockres::physics
