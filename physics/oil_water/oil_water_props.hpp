// Oil–water fluid and rock property functions (PHYSICS.md), templated on double or Dual<N>,
// callable on host and device. Parameters are plain structs passed by value to kernels.
#pragma once

#include "physics/dual.hpp"

namespace blockres::physics {

// One phase, SI units. b = 1/B = (1 + X + X^2/2) / B_ref with X = c (p - p_ref).
struct PhaseParams {
  double surface_density = 1000.0;  // kg/m^3
  double inv_fvf_ref = 1.0;         // 1 / B_ref
  double compressibility = 0.0;     // 1/Pa
  double reference_pressure = 0.0;  // Pa
  double inv_viscosity = 1000.0;    // 1/(Pa s)
};

enum RelpermKind : int { relperm_corey = 0, relperm_table = 1 };

struct RelpermParams {
  int kind = relperm_corey;
  double swc = 0.0, sor = 0.0, nw = 2.0, no = 2.0, krw_max = 1.0, kro_max = 1.0;
  const double* table = nullptr;  // rows of (S_w, k_rw, k_ro, P_cow[Pa]), S_w strictly increasing
  int nrows = 0;
};

struct OilWaterParams {
  PhaseParams water, oil;
  double rock_compressibility = 0.0;  // 1/Pa
  double rock_reference_pressure = 0.0;
  RelpermParams relperm;
  double gravity = 0.0;  // m/s^2; 0 switches every gravity term off
};

enum Phase : int { water = 0, oil = 1 };
inline constexpr int num_phases = 2;

// 1 + X + X^2/2, X = c (p - p_ref): the ECLIPSE ROCK / PVTW / PVCDO expansion.
template <class T>
BLOCKRES_HD T compressibility_factor(double c, double p_ref, const T& p)
{
  const T X = c * (p - p_ref);
  return 1.0 + X + 0.5 * X * X;
}

// Reciprocal formation volume factor b_a = 1/B_a.
template <class T>
BLOCKRES_HD T inv_fvf(const PhaseParams& ph, const T& p)
{
  return ph.inv_fvf_ref * compressibility_factor(ph.compressibility, ph.reference_pressure, p);
}

// Pore volume multiplier V_p / V_p,ref.
template <class T>
BLOCKRES_HD T pore_volume_multiplier(const OilWaterParams& P, const T& p)
{
  return compressibility_factor(P.rock_compressibility, P.rock_reference_pressure, p);
}

// Relative permeabilities and capillary pressure P_cow at water saturation sw.
template <class T>
BLOCKRES_HD void relperm(const RelpermParams& rp, const T& sw, T& krw, T& kro, T& pcow)
{
  if (rp.kind == relperm_table) {
    const double* t = rp.table;
    const int n = rp.nrows;
    const double s = value_of(sw);
    if (s <= t[0]) {  // constant extrapolation outside the table
      krw = t[1], kro = t[2], pcow = t[3];
      return;
    }
    if (s >= t[4 * (n - 1)]) {
      const double* r = t + 4 * (n - 1);
      krw = r[1], kro = r[2], pcow = r[3];
      return;
    }
    int k = 0;
    while (k + 2 < n && s >= t[4 * (k + 1)]) ++k;
    const double* a = t + 4 * k;
    const double* b = a + 4;
    const T w = (sw - a[0]) * (1.0 / (b[0] - a[0]));
    krw = a[1] + (b[1] - a[1]) * w;
    kro = a[2] + (b[2] - a[2]) * w;
    pcow = a[3] + (b[3] - a[3]) * w;
    return;
  }
  T se = (sw - rp.swc) * (1.0 / (1.0 - rp.swc - rp.sor));
  if (value_of(se) <= 0.0) se = T(0.0);
  if (value_of(se) >= 1.0) se = T(1.0);
  krw = rp.krw_max * pow_nonneg(se, rp.nw);
  kro = rp.kro_max * pow_nonneg(1.0 - se, rp.no);
  pcow = T(0.0);
}

// Everything the flux and accumulation terms need from one cell's state.
template <class T>
struct CellProps {
  T b[num_phases];       // 1/B
  T rho[num_phases];     // reservoir density
  T mob[num_phases];     // k_r / mu
  T p[num_phases];       // phase pressure (p_w = p_o - P_cow)
  T s[num_phases];       // saturation
};

template <class T>
BLOCKRES_HD CellProps<T> cell_props(const OilWaterParams& P, const T& po, const T& sw)
{
  CellProps<T> c;
  T krw, kro, pcow;
  relperm(P.relperm, sw, krw, kro, pcow);
  c.b[water] = inv_fvf(P.water, po);
  c.b[oil] = inv_fvf(P.oil, po);
  c.rho[water] = P.water.surface_density * c.b[water];
  c.rho[oil] = P.oil.surface_density * c.b[oil];
  c.mob[water] = krw * P.water.inv_viscosity;
  c.mob[oil] = kro * P.oil.inv_viscosity;
  c.p[oil] = po;
  c.p[water] = po - pcow;
  c.s[water] = sw;
  c.s[oil] = 1.0 - sw;
  return c;
}

}  // namespace blockres::physics
