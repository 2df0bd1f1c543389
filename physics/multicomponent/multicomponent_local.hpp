// Per-cell, per-face and per-well work of the multicomponent model, shared verbatim by the CPU
// loops (multicomponent_cpu.cpp) and the CUDA kernels (multicomponent_cuda*.cu).
//
// Unknowns per cell (interleaved, nc per cell): u = (p [Pa], x_1 .. x_{nc-1}); x_nc = 1 - sum.
// Equations per cell, k = 1..nc (mass, kg/s; PHYSICS.md "Model multicomponent"):
//   R_k,i = [ (V_p rho x_k)^{n+1} - (V_p rho x_k)^n ] / dt
//           + sum_j [ F_ij x_k,up - D_ij rho_face (x_k,j - x_k,i) ] - V_p rho (K x)_k - Q_k,i
// Jacobian: BSR, nc x nc blocks, block (r, c) entry (k, v) = dR_k,r / du_v,c, row-major.
//
// Assembly runs in two passes, so that no thread ever holds nc-wide dual numbers:
//   pass 1 (one thread per cell, O(nc^2)): cell_props() stores rho, lambda = rho/mu, V_p, dV_p/dp,
//     x_nc, the old mass and x_nc, d rho/du, d lambda/du (nc each) and K x (nc) per cell;
//   pass 2: every Jacobian entry (k, v) and residual entry k of a block row is a cheap closed
//     formula of those per-cell vectors (accumulation + reaction, and per face the flux and
//     diffusion terms); assemble_cell_entries() computes the entries lane, lane + group, ... of a
//     row, so the same code runs as one thread per cell (group = 1) or a group of threads per cell.
// Derivatives are exact (analytic); the tests compare them with finite differences.
#pragma once

#include "kernels/common.hpp"
#include "physics/well_rate.hpp"

#include <cmath>

#if defined(__CUDA_ARCH__)
#define BLOCKRES_MC_UNROLL _Pragma("unroll")
#else
#define BLOCKRES_MC_UNROLL
#endif

namespace blockres::physics::multicomponent {

inline constexpr int max_components = 64;

// Component and rock parameters, SI units; the arrays live in the executor's memory.
struct Params {
  int nc = 1;
  double gravity = 0.0;                  // m/s^2; 0 switches gravity off
  double rock_compressibility = 0.0;     // 1/Pa
  double rock_reference_pressure = 1e5;  // Pa
  double reference_pressure = 1e5;       // of the component densities [Pa]
  const double* rho_ref = nullptr;          // nc, density at the reference pressure [kg/m^3]
  const double* compressibility = nullptr;  // nc [1/Pa]
  const double* ln_mu = nullptr;            // nc, ln(viscosity [Pa s])
  const double* K = nullptr;                // nc x nc row-major rate matrix [1/s]
};

// Cells, faces and the Jacobian positions each block row writes.
struct Mesh {
  index_t ncell = 0;
  const double* pv_ref = nullptr;      // reference pore volume [m^3]
  const double* depth = nullptr;       // cell-centre depth [m], positive downwards
  const index_t* nbr_ptr = nullptr;    // ncell + 1
  const index_t* nbr_cell = nullptr;   // neighbour of each connection
  const double* nbr_trans = nullptr;   // transmissibility [m^3]
  const double* nbr_diff = nullptr;    // D_ij = phi_face D_m A / distance [m^3/s]
  const index_t* nbr_block = nullptr;  // Jacobian block (i, neighbour)
  const index_t* diag_block = nullptr; // Jacobian block (i, i)
  const index_t* extra_ptr = nullptr;  // ncell + 1: blocks of the row no face writes (well couplings),
  const index_t* extra_block = nullptr;//   zeroed by the cell pass
};

// ---- Per-cell property record (pass 1) ---------------------------------------------------------
// Layout of one cell's record, props_stride(nc) = 7 + 3 nc doubles.
enum PropSlot : int {
  prop_rho = 0,  // mixture density [kg/m^3]
  prop_lam,      // rho / mu [kg/(m^3 Pa s)]
  prop_pv,       // V_p(p) [m^3]
  prop_dpv,      // dV_p/dp
  prop_xlast,    // x_nc = 1 - sum x_k
  prop_mass0,    // V_p rho at the old state x0
  prop_x0last,   // x_nc at the old state
  prop_drho      // then d rho/du_v (nc), d lambda/du_v (nc), (K x)_k (nc) [1/s]
};
BLOCKRES_HD int props_stride(int nc) { return 7 + 3 * nc; }
BLOCKRES_HD int prop_dlam(int nc) { return prop_drho + nc; }
BLOCKRES_HD int prop_kx(int nc) { return prop_drho + 2 * nc; }

BLOCKRES_HD double component_density(const Params& P, int k, double p)
{
  return P.rho_ref[k] * exp(P.compressibility[k] * (p - P.reference_pressure));
}

// V_p / V_p,ref = 1 + X + X^2/2, X = c_r (p - p_ref) (ECLIPSE ROCK), and its p-derivative.
BLOCKRES_HD double pore_volume_multiplier(const Params& P, double p, double& dmult_dp)
{
  const double X = P.rock_compressibility * (p - P.rock_reference_pressure);
  dmult_dp = P.rock_compressibility * (1.0 + X);
  return 1.0 + X + 0.5 * X * X;
}

// x_k of a cell from its unknowns (xc) and its property record (pr: x_nc).
BLOCKRES_HD double comp_of(const double* xc, const double* pr, int nc, int k)
{
  return k < nc - 1 ? xc[1 + k] : pr[prop_xlast];
}
// d x_k / d u_v: v = 0 is p; v >= 1 is x_{v-1} (x_nc depends on every x_m with -1).
BLOCKRES_HD double dcomp(int nc, int k, int v)
{
  if (v == 0) return 0.0;
  if (k == v - 1) return 1.0;
  return k == nc - 1 ? -1.0 : 0.0;
}

// Mixture density of composition y (nc fractions summing to 1) at pressure p (ideal mixing).
BLOCKRES_HD double mixture_density(const Params& P, const double* y, double p)
{
  double v = 0.0;
  for (int k = 0; k < P.nc; ++k) v += y[k] / component_density(P, k, p);
  return 1.0 / v;
}

// The injected mixture of composition y at the cell pressure p: rho/mu and d(rho/mu)/dp.
BLOCKRES_HD double injected_mobility(const Params& P, const double* y, double p, double& dlam_dp, double& rho)
{
  double v = 0.0, dv = 0.0, lnmu = 0.0;
  for (int k = 0; k < P.nc; ++k) {
    const double rk = component_density(P, k, p);
    v += y[k] / rk;
    dv -= y[k] * P.compressibility[k] / rk;
    lnmu += y[k] * P.ln_mu[k];
  }
  rho = 1.0 / v;
  const double lam = rho * exp(-lnmu);
  dlam_dp = lam * (-rho * dv);  // d rho/dp / rho = -rho dv/dp; mu does not depend on p
  return lam;
}

// Pass 1: the property record of cell i at state x (and the old mass at x0). O(nc^2) (K x).
// Cell i's record into pr (props + i props_stride(nc), or a staging buffer).
BLOCKRES_HD void cell_props_record(const Params& P, const Mesh& M, const double* x, const double* x0, index_t i,
                                   double* pr)
{
  const int nc = P.nc;
  const double* xc = x + size64_t(i) * nc;
  const double* x0c = x0 + size64_t(i) * nc;
  double* drho = pr + prop_drho;
  double* dlam = pr + prop_dlam(nc);
  double* kx = pr + prop_kx(nc);
  const double p = xc[0], p0 = x0c[0];
  double s = 0.0, s0 = 0.0;
  for (int k = 0; k < nc - 1; ++k) s += xc[1 + k], s0 += x0c[1 + k];
  const double xl = 1.0 - s, x0l = 1.0 - s0;
  const double inv_rho_last = 1.0 / component_density(P, nc - 1, p);
  double v = 0.0, dv_dp = 0.0, v0 = 0.0, lnmu = 0.0;
  for (int k = 0; k < nc; ++k) {
    const double rk = component_density(P, k, p), inv = 1.0 / rk;
    const double xk = k < nc - 1 ? xc[1 + k] : xl;
    const double x0k = k < nc - 1 ? x0c[1 + k] : x0l;
    v += xk * inv;
    dv_dp -= xk * P.compressibility[k] * inv;
    v0 += x0k / component_density(P, k, p0);
    lnmu += xk * P.ln_mu[k];
    if (k < nc - 1) drho[1 + k] = inv - inv_rho_last;  // d(1/rho)/dx_k for now
  }
  const double rho = 1.0 / v, lam = rho * exp(-lnmu);
  drho[0] = -rho * rho * dv_dp;
  dlam[0] = lam * drho[0] * v;  // lam * drho/rho
  for (int m = 1; m < nc; ++m) {
    drho[m] = -rho * rho * drho[m];
    dlam[m] = lam * (drho[m] * v - (P.ln_mu[m - 1] - P.ln_mu[nc - 1]));
  }
  double dm, dm0;
  const double mult = pore_volume_multiplier(P, p, dm), mult0 = pore_volume_multiplier(P, p0, dm0);
  pr[prop_rho] = rho;
  pr[prop_lam] = lam;
  pr[prop_pv] = M.pv_ref[i] * mult;
  pr[prop_dpv] = M.pv_ref[i] * dm;
  pr[prop_xlast] = xl;
  pr[prop_mass0] = M.pv_ref[i] * mult0 / v0;
  pr[prop_x0last] = x0l;
  for (int k = 0; k < nc; ++k) {
    double a = 0.0;
    const double* Kk = P.K + size64_t(k) * nc;
    for (int l = 0; l < nc - 1; ++l) a += Kk[l] * xc[1 + l];
    kx[k] = a + Kk[nc - 1] * xl;
  }
}

BLOCKRES_HD void cell_props(const Params& P, const Mesh& M, const double* x, const double* x0, double* props, index_t i)
{
  cell_props_record(P, M, x, x0, i, props + size64_t(i) * props_stride(P.nc));
}

// ---- Pass 2: block rows ---------------------------------------------------------------------------

// A face seen from one of its cells, evaluated in its canonical orientation (lower cell a first)
// so that both cells compute bit-identical fluxes and they cancel exactly in the mass balance.
struct FaceTerm {
  const double *xa, *xb, *pa, *pb;  // unknowns and property records of a and b
  double sgn;      // +1 when the row's cell is a, -1 when it is b
  bool own_is_a;
  bool up_a;       // the upstream cell of the Darcy flux is a
  double trans, dphi, gdz, lam_up, F, D, rho_face;
  index_t off_block;  // Jacobian block (row cell, other cell)
};

BLOCKRES_HD FaceTerm face_term(const Params& P, const Mesh& M, const double* x, const double* props, index_t i,
                               index_t n, int nc)
{
  const int stride = props_stride(nc);
  const index_t j = M.nbr_cell[n];
  const bool first = i < j;
  const index_t a = first ? i : j, b = first ? j : i;
  FaceTerm f;
  f.xa = x + size64_t(a) * nc, f.xb = x + size64_t(b) * nc;
  f.pa = props + size64_t(a) * stride, f.pb = props + size64_t(b) * stride;
  f.sgn = first ? 1.0 : -1.0;
  f.own_is_a = first;
  f.rho_face = 0.5 * (f.pa[prop_rho] + f.pb[prop_rho]);
  f.gdz = P.gravity * (M.depth[a] - M.depth[b]);
  f.dphi = (f.xa[0] - f.xb[0]) - f.rho_face * f.gdz;
  f.up_a = f.dphi >= 0.0;
  f.lam_up = f.up_a ? f.pa[prop_lam] : f.pb[prop_lam];
  f.trans = M.nbr_trans[n];
  f.F = f.trans * f.lam_up * f.dphi;
  f.D = M.nbr_diff[n];
  f.off_block = M.nbr_block[n];
  return f;
}

// A face's per-component vectors, so that each Jacobian entry of its two blocks is a few
// products: for q = 0..nc-1 (as the unknown v or the component k),
//   [0] dF/du_q of cell a, [1] of cell b (F = T lambda_up dPhi), [2] d rho/du_q of a, [3] of b,
//   [4] x_q,up, [5] x_q,a - x_q,b;
// stored vector after vector (stride nc): face_vector_doubles(nc) per face.
BLOCKRES_HD int face_vector_doubles(int nc) { return 6 * nc; }
BLOCKRES_HD void face_vector_entry(const FaceTerm& f, int nc, int q, double* vec)
{
  for (int side = 0; side < 2; ++side) {
    const bool side_a = side == 0;
    const double* pc = side_a ? f.pa : f.pb;
    const double s = side_a ? 1.0 : -1.0;
    const bool is_up = side_a == f.up_a;
    const double drho = pc[prop_drho + q];
    const double ddphi = (q == 0 ? s : 0.0) - 0.5 * drho * f.gdz;
    vec[side * nc + q] = f.trans * ((is_up ? pc[prop_dlam(nc) + q] * f.dphi : 0.0) + f.lam_up * ddphi);
    vec[(2 + side) * nc + q] = drho;
  }
  const double xka = comp_of(f.xa, f.pa, nc, q), xkb = comp_of(f.xb, f.pb, nc, q);
  vec[4 * nc + q] = f.up_a ? xka : xkb;
  vec[5 * nc + q] = xka - xkb;
}

// Mass flux of component k from a to b: F x_k,up + D rho_face (x_k,a - x_k,b).
BLOCKRES_HD double face_flux(const FaceTerm& f, const double* vec, int nc, int k)
{
  return f.F * vec[4 * nc + k] + f.D * f.rho_face * vec[5 * nc + k];
}

// d face_flux_k / d u_v of cell a (side_a) or b.
BLOCKRES_HD double face_flux_derivative(const FaceTerm& f, const double* vec, int nc, int k, int v, bool side_a)
{
  const double s = side_a ? 1.0 : -1.0;
  const bool is_up = side_a == f.up_a;
  const double dc = dcomp(nc, k, v);
  const int side = side_a ? 0 : 1;
  return vec[side * nc + v] * vec[4 * nc + k] + (is_up ? f.F * dc : 0.0) +
         f.D * (0.5 * vec[(2 + side) * nc + v] * vec[5 * nc + k] + f.rho_face * s * dc);
}

// Accumulation and reaction of cell i: residual entry k and Jacobian entry (k, v) of the diagonal block
// (Reaction = false: the accumulation d((V_p rho x_k) / dt)/du_v alone, for true-IMPES weights).
BLOCKRES_HD double accumulation_residual(const Params& P, const double* xc, const double* x0c, const double* pr, int nc,
                                         int k, double inv_dt)
{
  const double mass = pr[prop_pv] * pr[prop_rho];
  const double xk = comp_of(xc, pr, nc, k);
  const double x0k = k < nc - 1 ? x0c[1 + k] : pr[prop_x0last];
  (void)P;
  return (mass * xk - pr[prop_mass0] * x0k) * inv_dt - mass * pr[prop_kx(nc) + k];
}
template <bool Reaction = true>
BLOCKRES_HD double accumulation_derivative(const Params& P, const double* xc, const double* pr, int nc, int k, int v,
                                           double inv_dt)
{
  const double rho = pr[prop_rho], pv = pr[prop_pv];
  const double dmass = (v == 0 ? pr[prop_dpv] * rho : 0.0) + pv * pr[prop_drho + v];
  const double xk = comp_of(xc, pr, nc, k);
  if constexpr (!Reaction) return dmass * (xk * inv_dt) + pv * rho * (dcomp(nc, k, v) * inv_dt);
  const double* Kk = P.K + size64_t(k) * nc;
  const double dkx = v == 0 ? 0.0 : Kk[v - 1] - Kk[nc - 1];
  return dmass * (xk * inv_dt - pr[prop_kx(nc) + k]) + pv * rho * (dcomp(nc, k, v) * inv_dt - dkx);
}
// Entry e = k nc + v of cell i's accumulation block (the accumulation's share of the diagonal Jacobian
// block, reaction left out) from its property record in props (pass 1 at x).
BLOCKRES_HD double accumulation_block_entry(const Params& P, const double* x, const double* props, double inv_dt,
                                            index_t i, int e)
{
  const int nc = P.nc;
  const int k = e / nc, v = e - k * nc;
  return accumulation_derivative<false>(P, x + size64_t(i) * nc, props + size64_t(i) * props_stride(nc), nc, k, v,
                                        inv_dt);
}

// Pass 2 for block row i: the entries e = lane + m*group (m < EPT, e < nc^2) of every block of the
// row and the residual entries k = lane + m*group (m < RPT, k < nc). Every value of the row is
// written exactly once (blocks no face touches are zeroed), so poisoned outputs are overwritten.
// NC > 0 fixes nc at compile time (NC == P.nc); NC == 0 is the run-time path.
// Requires EPT * group >= nc^2 and RPT * group >= nc.
// STAGED: `faces` and `vectors` hold the row's face terms and face vectors (face_vector_entry) in
// face order (the GPU group kernels stage them in shared memory); otherwise both are computed here,
// one face at a time. The values are the same.
inline constexpr int max_shared_faces = 6;  // TPFA on a Cartesian grid
template <int NC, int EPT, int RPT, bool STAGED = false>
BLOCKRES_HD void assemble_cell_entries(const Params& P, const Mesh& M, const double* x, const double* x0,
                                       const double* props, double dt, double* R, double* J, index_t i, int lane,
                                       int group, const FaceTerm* faces = nullptr, const double* vectors = nullptr)
{
  const int nc = NC > 0 ? NC : P.nc;
  const int nn = nc * nc;
  const double* xc = x + size64_t(i) * nc;
  const double* x0c = x0 + size64_t(i) * nc;
  const double* pr = props + size64_t(i) * props_stride(nc);
  const double inv_dt = 1.0 / dt;
  // Entries and residual entries this lane owns. The loops break there, so the host path with a
  // large EPT runs no idle iterations, and fully unrolled device loops keep diag[] in registers.
  const int me = lane < nn ? (nn - lane + group - 1) / group : 0;
  const int mr = lane < nc ? (nc - lane + group - 1) / group : 0;
  for (index_t b = M.extra_ptr[i]; b < M.extra_ptr[i + 1]; ++b)
    for (int e = lane; e < nn; e += group) J[size64_t(M.extra_block[b]) * nn + e] = 0.0;

  double diag[EPT];
  double res[RPT];
  BLOCKRES_MC_UNROLL
  for (int m = 0; m < EPT; ++m) {
    if (m >= me) break;
    const int e = lane + m * group;
    const int k = e / nc, v = e - k * nc;
    diag[m] = accumulation_derivative(P, xc, pr, nc, k, v, inv_dt);
  }
  BLOCKRES_MC_UNROLL
  for (int m = 0; m < RPT; ++m) {
    if (m >= mr) break;
    res[m] = accumulation_residual(P, xc, x0c, pr, nc, lane + m * group, inv_dt);
  }
  for (index_t n = M.nbr_ptr[i]; n < M.nbr_ptr[i + 1]; ++n) {
    const index_t q = n - M.nbr_ptr[i];
    const FaceTerm f = STAGED ? faces[q] : face_term(P, M, x, props, i, n, nc);
    // STAGED: the caller staged every face's vectors (GPU group kernels); else one face at a time here.
    double local[STAGED ? 1 : 6 * (NC > 0 ? NC : max_components)];
    const double* vec = local;
    if (STAGED)
      vec = vectors + size64_t(q) * face_vector_doubles(nc);
    else
      for (int c = 0; c < nc; ++c) face_vector_entry(f, nc, c, local);
    double* Jo = J + size64_t(f.off_block) * nn;
    BLOCKRES_MC_UNROLL
    for (int m = 0; m < EPT; ++m) {
      if (m >= me) break;
      const int e = lane + m * group;
      const int k = e / nc, v = e - k * nc;
      diag[m] += f.sgn * face_flux_derivative(f, vec, nc, k, v, f.own_is_a);
      Jo[e] = f.sgn * face_flux_derivative(f, vec, nc, k, v, !f.own_is_a);
    }
    BLOCKRES_MC_UNROLL
    for (int m = 0; m < RPT; ++m) {
      if (m >= mr) break;
      res[m] += f.sgn * face_flux(f, vec, nc, lane + m * group);
    }
  }
  double* Jd = J + size64_t(M.diag_block[i]) * nn;
  BLOCKRES_MC_UNROLL
  for (int m = 0; m < EPT; ++m) {
    if (m >= me) break;
    Jd[lane + m * group] = diag[m];
  }
  BLOCKRES_MC_UNROLL
  for (int m = 0; m < RPT; ++m) {
    if (m >= mr) break;
    R[size64_t(i) * nc + lane + m * group] = res[m];
  }
}

// ---- Wells ---------------------------------------------------------------------------------------

enum WellKindCode : int { well_injector = 0, well_producer = 1 };
// A well's control for the next assembly (physics/well_controls.hpp keeps them on the host):
//   control_rate            rate control; switches to its BHP limit when no BHP within it meets the target;
//   control_bhp             a BHP well (its setpoint; never switches);
//   control_rate_at_limit   a rate well at its BHP limit; returns to rate control when the target is
//                           reachable within the limit;
//   control_rate_held       a rate well that switched to its limit in this time step: stays there.
// Every code but control_bhp computes the BHP bracket of the rate target.
enum WellControlCode : int { control_rate = 0, control_bhp = 1, control_rate_at_limit = 2, control_rate_held = 3 };
enum ConnectionMode : int { connection_producing = 0, connection_injecting = 1, connection_shut = 2 };

// Scratch per completion: [0] breakpoint p - head, [1] producing slope WI lam_cell, [2] injecting
// slope WI lam_inj, [3] mode, [4] dp, [5] lam used, [6] d lam_inj/dp, [7] unused.
inline constexpr int well_scratch_per_completion = 8;
// Output per well: [0] bhp [Pa], [1] at_bhp (0/1), [2] dF/dbhp when the BHP is implicit (0 else),
// [3 + k] rate of component k [kg/s, + into the reservoir]; for wells with a rate target
// (control != control_bhp) [3 + nc] whether some BHP meets the target (0/1), [4 + nc] that BHP [Pa].
BLOCKRES_HD int well_out_stride(int nc) { return 5 + nc; }

struct Wells {
  int nwell = 0;
  index_t ncompletion = 0;             // comp_ptr[nwell]
  const int* kind = nullptr;
  const int* control = nullptr;
  const double* target = nullptr;      // total mass rate magnitude [kg/s] (rate control)
  const double* bhp_value = nullptr;   // BHP setpoint (bhp control) or limit (rate control) [Pa]
  const double* ref_depth = nullptr;   // BHP reference depth [m]
  const double* inj_comp = nullptr;    // nc per well: injected composition (injectors)
  double* head_density = nullptr;      // wellbore density for the head, explicit per step
  const index_t* comp_ptr = nullptr;   // nwell + 1
  const index_t* comp_cell = nullptr;
  const double* comp_wi = nullptr;     // [m^3]
  const double* comp_depth = nullptr;  // [m]
  const index_t* couple_ptr = nullptr;   // nwell + 1 into couple_block (ncomp^2 per rate-controlled well)
  const index_t* couple_block = nullptr; // Jacobian block (cell of c, cell of c2)
  double* scratch = nullptr;
  double* out = nullptr;
};

// Wellbore density for the hydrostatic head from the state at the start of the step: the mean over
// the completions of the injected mixture's density at the cell pressure (injectors) or of the
// cell's mixture density (producers).
BLOCKRES_HD void prepare_well(const Params& P, const Wells& W, const double* x, int w)
{
  const int nc = P.nc;
  double sum = 0.0;
  const index_t c0 = W.comp_ptr[w], c1 = W.comp_ptr[w + 1];
  for (index_t c = c0; c < c1; ++c) {
    const double* xc = x + size64_t(W.comp_cell[c]) * nc;
    if (W.kind[w] == well_injector) {
      sum += mixture_density(P, W.inj_comp + size64_t(w) * nc, xc[0]);
    } else {
      double v = 0.0, s = 0.0;
      for (int k = 0; k < nc - 1; ++k) {
        v += xc[1 + k] / component_density(P, k, xc[0]);
        s += xc[1 + k];
      }
      v += (1.0 - s) / component_density(P, nc - 1, xc[0]);
      sum += 1.0 / v;
    }
  }
  W.head_density[w] = c1 > c0 ? sum / double(c1 - c0) : 0.0;
}

// BHP that makes the total mass rate F(bhp) = sum_c slope_c(bhp) (bhp - bp_c) equal `goal`. F is
// continuous, piecewise linear and non-decreasing with a kink at each breakpoint, so the root
// is exact from the values at the breakpoints: the highest breakpoint with F <= goal (lo) and the
// lowest with F >= goal (hi) bracket it. Evaluating F at every breakpoint costs m^2 for m
// completions, so the GPU spreads the breakpoints over a warp and merges the brackets
// (bracket_merge gives the result of the sequential loop: equal breakpoints have equal F).
BLOCKRES_HD double well_rate_at(const double* scratch, index_t ncomp, double b)
{
  return piecewise_well_rate(scratch, well_scratch_per_completion, ncomp, b);
}
struct BhpBracket {
  bool has_lo = false, has_hi = false;
  double lo = 0, flo = 0, hi = 0, fhi = 0;
};
BLOCKRES_HD void bracket_add(BhpBracket& br, double bp, double f, double goal)
{
  if (f <= goal && (!br.has_lo || bp > br.lo)) br.has_lo = true, br.lo = bp, br.flo = f;
  if (f >= goal && (!br.has_hi || bp < br.hi)) br.has_hi = true, br.hi = bp, br.fhi = f;
}
BLOCKRES_HD void bracket_merge(BhpBracket& a, const BhpBracket& b)
{
  if (b.has_lo && (!a.has_lo || b.lo > a.lo)) a.has_lo = true, a.lo = b.lo, a.flo = b.flo;
  if (b.has_hi && (!a.has_hi || b.hi < a.hi)) a.has_hi = true, a.hi = b.hi, a.fhi = b.fhi;
}
// false when no BHP reaches the goal.
BLOCKRES_HD bool finish_well_bhp(const double* scratch, index_t ncomp, const BhpBracket& br, double goal, double& bhp)
{
  if (br.has_lo && br.flo == goal) return bhp = br.lo, true;
  if (br.has_lo && br.has_hi)
    return bhp = (br.fhi == br.flo) ? br.lo : br.lo + (goal - br.flo) * (br.hi - br.lo) / (br.fhi - br.flo), true;
  double slope = 0.0;
  for (index_t c = 0; c < ncomp; ++c) slope += scratch[size64_t(c) * well_scratch_per_completion + (br.has_lo ? 2 : 1)];
  if (!(slope > 0.0)) return false;
  bhp = br.has_lo ? br.lo + (goal - br.flo) / slope : br.hi - (br.fhi - goal) / slope;
  return true;
}

// Well step 1 (after pass 1), in three parts: well_connection_setup per completion (breakpoint
// p - head and slopes into scratch), the bracket of the BHP over the breakpoints (rate control),
// and well_setup_finish per well: the BHP (solved for rate control, switching to BHP control at
// the limit), each connection's mode and mobility, into scratch and out[0..2].
// A connection with bhp + head > p injects: an injector's the injected composition with the
// injected mixture's rho/mu at the cell pressure; a producer's connection is then shut (no
// back-flow into the reservoir). Otherwise it produces the cell's fluid (composition, rho/mu).
BLOCKRES_HD void well_connection_setup(const Params& P, const Wells& W, const double* x, const double* props, int w,
                                       index_t c)
{
  const int nc = P.nc, stride = props_stride(nc);
  const index_t c0 = W.comp_ptr[w];
  double* s = W.scratch + size64_t(c0 + c) * well_scratch_per_completion;
  const double head_grad = W.head_density[w] * P.gravity;
  const bool injector = W.kind[w] == well_injector;
  const double* y = W.inj_comp + size64_t(w) * nc;
  const index_t cell = W.comp_cell[c0 + c];
  const double p = x[size64_t(cell) * nc];
  const double wi = W.comp_wi[c0 + c];
  s[0] = p - head_grad * (W.comp_depth[c0 + c] - W.ref_depth[w]);
  s[1] = wi * props[size64_t(cell) * stride + prop_lam];
  double dlam = 0.0, rho = 0.0;
  s[2] = injector ? wi * injected_mobility(P, y, p, dlam, rho) : 0.0;
  s[6] = dlam;
}
BLOCKRES_HD double well_rate_goal(const Wells& W, int w)
{
  return W.kind[w] == well_injector ? W.target[w] : -W.target[w];
}
BLOCKRES_HD void well_setup_finish(const Params& P, const Wells& W, int w, const BhpBracket& br)
{
  const int nc = P.nc;
  const index_t c0 = W.comp_ptr[w], ncomp = W.comp_ptr[w + 1] - c0;
  double* scr = W.scratch + size64_t(c0) * well_scratch_per_completion;
  const bool injector = W.kind[w] == well_injector;
  const int control = W.control[w];
  bool at_bhp = control != control_rate;
  double bhp = W.bhp_value[w];
  bool reachable = false;
  double needed = 0.0;  // the BHP that meets the rate target, when reachable
  if (control != control_bhp) {
    reachable = finish_well_bhp(scr, ncomp, br, well_rate_goal(W, w), needed);
    const bool beyond = injector ? needed > W.bhp_value[w] : needed < W.bhp_value[w];
    // Rate control while the target is reachable within the limit, else BHP control at the limit;
    // a well held at its limit for the rest of the step stays there.
    if (control != control_rate_held) {
      at_bhp = !(reachable && !beyond);
      if (!at_bhp) bhp = needed;
    }
  }
  double dF_dbhp = 0.0;
  for (index_t c = 0; c < ncomp; ++c) {
    double* s = scr + size64_t(c) * well_scratch_per_completion;
    const double dp = bhp - s[0];
    const int mode = dp > 0.0 ? (injector ? connection_injecting : connection_shut) : connection_producing;
    const double wi = W.comp_wi[c0 + c];
    s[3] = double(mode);
    s[4] = dp;
    s[5] = mode == connection_producing ? s[1] / wi : mode == connection_injecting ? s[2] / wi : 0.0;
    if (!(wi > 0.0)) s[5] = 0.0;
    dF_dbhp += wi * s[5];
  }
  double* out = W.out + size64_t(w) * well_out_stride(nc);
  out[0] = bhp;
  out[1] = at_bhp ? 1.0 : 0.0;
  out[2] = (!at_bhp && dF_dbhp > 0.0) ? dF_dbhp : 0.0;
  out[3 + nc] = reachable ? 1.0 : 0.0;
  out[4 + nc] = needed;
}


// The whole of well step 1 for well w on one thread (the CPU path).
BLOCKRES_HD void well_setup(const Params& P, const Wells& W, const double* x, const double* props, int w)
{
  const index_t c0 = W.comp_ptr[w], ncomp = W.comp_ptr[w + 1] - c0;
  for (index_t c = 0; c < ncomp; ++c) well_connection_setup(P, W, x, props, w, c);
  BhpBracket br;
  if (W.control[w] != control_bhp) {
    const double* scr = W.scratch + size64_t(c0) * well_scratch_per_completion;
    const double goal = well_rate_goal(W, w);
    for (index_t k = 0; k < ncomp; ++k) {
      const double bp = scr[size64_t(k) * well_scratch_per_completion];
      bracket_add(br, bp, well_rate_at(scr, ncomp, bp), goal);
    }
  }
  well_setup_finish(P, W, w, br);
}

// Connection c's component k mass rate Q_k = WI lam dp z_k (z = x_cell or y) and its derivatives.
struct Connection {
  int mode;
  double wi, dp, lam, dlam_inj;
  const double *xc, *pr, *y;
};
BLOCKRES_HD Connection connection(const Params& P, const Wells& W, const double* x, const double* props, int w, index_t c)
{
  const int nc = P.nc;
  const double* s = W.scratch + size64_t(c) * well_scratch_per_completion;
  const index_t cell = W.comp_cell[c];
  Connection q;
  q.mode = int(s[3]);
  q.wi = W.comp_wi[c];
  q.dp = s[4];
  q.lam = s[5];
  q.dlam_inj = s[6];
  q.xc = x + size64_t(cell) * nc;
  q.pr = props + size64_t(cell) * props_stride(nc);
  q.y = W.inj_comp + size64_t(w) * nc;
  return q;
}
BLOCKRES_HD double connection_comp(const Connection& q, int nc, int k)
{
  return q.mode == connection_injecting ? q.y[k] : comp_of(q.xc, q.pr, nc, k);
}
BLOCKRES_HD double connection_rate(const Connection& q, int nc, int k)
{
  return q.mode == connection_shut ? 0.0 : q.wi * q.lam * q.dp * connection_comp(q, nc, k);
}
// d Q_k / d u_v of the completed cell, BHP held fixed.
BLOCKRES_HD double connection_derivative(const Connection& q, int nc, int k, int v)
{
  if (q.mode == connection_shut) return 0.0;
  if (q.mode == connection_injecting) return v == 0 ? q.wi * q.y[k] * (q.dlam_inj * q.dp - q.lam) : 0.0;
  const double xk = comp_of(q.xc, q.pr, nc, k);
  const double dlam = q.pr[prop_dlam(nc) + v];
  return q.wi * ((dlam * q.dp - (v == 0 ? q.lam : 0.0)) * xk + q.lam * q.dp * dcomp(nc, k, v));
}
// d (sum_k Q_k) / d u_v (BHP fixed) and d Q_k / d bhp.
BLOCKRES_HD double connection_total_derivative(const Connection& q, int nc, int v)
{
  if (q.mode == connection_shut) return 0.0;
  if (q.mode == connection_injecting) return v == 0 ? q.wi * (q.dlam_inj * q.dp - q.lam) : 0.0;
  return q.wi * (q.pr[prop_dlam(nc) + v] * q.dp - (v == 0 ? q.lam : 0.0));
}
BLOCKRES_HD double connection_bhp_derivative(const Connection& q, int nc, int k)
{
  return q.mode == connection_shut ? 0.0 : q.wi * q.lam * connection_comp(q, nc, k);
}

// Well step 2 (after well_setup and the cell pass), in two parts that run in parallel over what
// they write (the block rows of different completions never overlap, nor do different wells'):
//   well_rates           per well, lanes over k: subtracts the connection rates Q_k from R and
//                        writes the well's component rates to out[3..];
//   well_completion_entries  per completion c, lanes over its items: subtracts dQ/du of the cell
//                        from its diagonal block and, under rate control, the coupling through
//                        the BHP: d bhp/d u_c2 = -(dF/du_c2)/(dF/dbhp) into block (c, c2) for every
//                        completion c2 of the well (exact Newton, no separate well unknown).
// Item t of completion c is entry e = t % nn of the block of c2 = c0 + t / nn (only c2 = c when the
// well is not coupled); the diagonal and the (c, c) coupling of one entry are updated by the same
// item, in that order, so the result is the same on every backend and layout.
BLOCKRES_HD void well_rates(const Params& P, const Wells& W, const double* x, const double* props, double* R, int w,
                            int lane, int group)
{
  const int nc = P.nc;
  const index_t c0 = W.comp_ptr[w], c1 = W.comp_ptr[w + 1];
  double* out = W.out + size64_t(w) * well_out_stride(nc);
  for (int k = lane; k < nc; k += group) {
    double q = 0.0;
    for (index_t c = c0; c < c1; ++c) {
      const Connection cn = connection(P, W, x, props, w, c);
      const double qk = connection_rate(cn, nc, k);
      R[size64_t(W.comp_cell[c]) * nc + k] -= qk;
      q += qk;
    }
    out[3 + k] = q;
  }
}

BLOCKRES_HD void well_completion_entries(const Params& P, const Mesh& M, const Wells& W, const double* x,
                                         const double* props, double* J, int w, index_t c, int lane, int group)
{
  const int nc = P.nc, nn = nc * nc;
  const index_t c0 = W.comp_ptr[w], ncomp = W.comp_ptr[w + 1] - c0;
  const double dF_dbhp = W.out[size64_t(w) * well_out_stride(nc) + 2];
  const bool coupled = dF_dbhp > 0.0;
  const Connection cn = connection(P, W, x, props, w, c);
  double* Jd = J + size64_t(M.diag_block[W.comp_cell[c]]) * nn;
  const size64_t items = coupled ? size64_t(ncomp) * nn : size64_t(nn);
  for (size64_t t = lane; t < items; t += group) {
    const index_t c2 = coupled ? c0 + index_t(t / nn) : c;
    const int e = int(t % nn), k = e / nc, v = e - k * nc;
    if (c2 == c) Jd[e] -= connection_derivative(cn, nc, k, v);
    if (!coupled) continue;
    const Connection cn2 = connection(P, W, x, props, w, c2);
    double* Jc = J + size64_t(W.couple_block[W.couple_ptr[w] + size64_t(c - c0) * ncomp + (c2 - c0)]) * nn;
    const double dbhp = -connection_total_derivative(cn2, nc, v) / dF_dbhp;
    Jc[e] -= connection_bhp_derivative(cn, nc, k) * dbhp;
  }
}

// ---- Norms, quantities in place, Newton update ---------------------------------------------------

// Mass V_p rho of cell i and its x_nc (for the norms and the masses in place).
BLOCKRES_HD void cell_mass(const Params& P, const Mesh& M, const double* x, index_t i, double& mass, double& xlast)
{
  const int nc = P.nc;
  const double* xc = x + size64_t(i) * nc;
  double v = 0.0, s = 0.0;
  for (int k = 0; k < nc - 1; ++k) {
    v += xc[1 + k] / component_density(P, k, xc[0]);
    s += xc[1 + k];
  }
  xlast = 1.0 - s;
  v += xlast / component_density(P, nc - 1, xc[0]);
  double dm;
  mass = M.pv_ref[i] * pore_volume_multiplier(P, xc[0], dm) / v;
}

// Newton update of cell i, x <- x - dx, with the chops (inputs/README.md, "Model multicomponent"):
// pressure: |dp| <= max_dp_rel |p|. Composition (all nc fractions, x_nc included):
//   1. one factor for the whole composition step so that no |dx_k| exceeds max_dx (the direction
//      and the sum of the fractions are kept);
//   2. if a fraction would leave [0, 1] (i.e. turn negative), the negative ones are set to 0 and
//      the composition is rescaled to sum 1 (projection back onto the simplex);
//   3. if that projection moved some fraction by more than max_dx from the old state, the whole
//      change is shrunk once more by one factor (a convex combination of two points of the
//      simplex stays in it).
// So every x_k stays in [0, 1], sum x_k = 1 and no x_k changes by more than max_dx. NaN propagates.
BLOCKRES_HD void update_cell(int nc, double* x, const double* dx, index_t i, double max_dx, double max_dp_rel)
{
  double* xc = x + size64_t(i) * nc;
  const double* d = dx + size64_t(i) * nc;
  double dp = d[0];
  const double p = xc[0];
  const double dp_lim = max_dp_rel * (p < 0 ? -p : p);
  if (dp > dp_lim) dp = dp_lim;
  if (dp < -dp_lim) dp = -dp_lim;
  xc[0] = p - dp;
  if (nc == 1) return;
  // Step 1.
  double big = 0.0, dlast = 0.0, slast = 0.0;
  for (int k = 0; k < nc - 1; ++k) {
    const double a = d[1 + k] < 0 ? -d[1 + k] : d[1 + k];
    big = a > big ? a : big;
    dlast -= d[1 + k];
    slast += xc[1 + k];
  }
  const double xl_old = 1.0 - slast;
  {
    const double a = dlast < 0 ? -dlast : dlast;
    big = a > big ? a : big;
  }
  if (dlast != dlast) big = dlast;  // a NaN step: theta NaN, so the state turns NaN (not hidden by the chops)
  const double theta = big > max_dx ? max_dx / big : (big == big ? 1.0 : big);
  // Step 2: new fractions, negatives clamped, renormalised.
  double sum = 0.0, ylast = xl_old - theta * dlast;
  bool negative = ylast < 0.0;
  for (int k = 0; k < nc - 1; ++k) negative = negative || xc[1 + k] - theta * d[1 + k] < 0.0;
  if (!negative) {
    for (int k = 0; k < nc - 1; ++k) xc[1 + k] -= theta * d[1 + k];
    return;
  }
  for (int k = 0; k < nc - 1; ++k) {
    const double y = xc[1 + k] - theta * d[1 + k];
    sum += y > 0.0 ? y : 0.0;
  }
  sum += ylast > 0.0 ? ylast : 0.0;
  const double inv = 1.0 / sum;
  // Step 3: the largest change of the projected point from the old state.
  double change = 0.0;
  for (int k = 0; k < nc - 1; ++k) {
    const double y = xc[1 + k] - theta * d[1 + k];
    const double z = (y > 0.0 ? y : 0.0) * inv;
    const double a = z - xc[1 + k] < 0 ? xc[1 + k] - z : z - xc[1 + k];
    change = a > change ? a : change;
  }
  {
    const double z = (ylast > 0.0 ? ylast : 0.0) * inv;
    const double a = z - xl_old < 0 ? xl_old - z : z - xl_old;
    change = a > change ? a : change;
  }
  const double omega = change > max_dx ? max_dx / change : 1.0;
  for (int k = 0; k < nc - 1; ++k) {
    const double y = xc[1 + k] - theta * d[1 + k];
    const double z = (y > 0.0 ? y : 0.0) * inv;
    xc[1 + k] += omega * (z - xc[1 + k]);
  }
}

}  // namespace blockres::physics::multicomponent
