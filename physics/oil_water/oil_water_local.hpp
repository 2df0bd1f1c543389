// Per-cell and per-well work of the oil_water model, shared verbatim by the CPU loops and
// the CUDA kernels: residual and Jacobian block rows, well BHP solve, convergence terms,
// Newton update with chopping, fluid in place.
//
// Unknowns per cell (interleaved, cell i at x[2i], x[2i+1]): p_o [Pa], S_w.
// Residual per cell and phase a (surface m^3/s):
//   R_a,i = (V_p S_a b_a |^{n+1} - V_p S_a b_a |^n) / dt + sum_j T_ij (lambda_a b_a)_up dPhi_a - Q_a,i
// Jacobian: BSR with 2x2 blocks, block (r, c) entry (a, v) = dR_a,r / dx_v,c (row-major).
#pragma once

#include "physics/oil_water/oil_water_props.hpp"
#include "physics/well_rate.hpp"

namespace blockres::physics {

// Cell connectivity and the Jacobian positions each cell's row writes to.
struct MeshView {
  index_t ncell = 0;
  const double* pv_ref = nullptr;     // reference pore volume [m^3]
  const double* depth = nullptr;      // cell-centre depth [m], positive downwards
  const index_t* nbr_ptr = nullptr;   // ncell + 1
  const index_t* nbr_cell = nullptr;  // neighbour cell of each connection
  const double* nbr_trans = nullptr;  // transmissibility [m^3]
  const index_t* nbr_block = nullptr; // Jacobian block (i, nbr) of each connection
  const index_t* diag_block = nullptr;
  const index_t* row_ptr = nullptr;   // Jacobian pattern rows, to clear each row before writing
  // Where pattern block k is stored (Model::set_block_storage); nullptr: at k. nbr_block, diag_block and the
  // wells' couple_block hold storage positions already.
  const index_t* block_pos = nullptr;
  // CUDA: face_props_stored per cell, what its faces need of it (store_face_props), written once per
  // assembly before the cells' rows; unused (nullptr) on the CPU.
  double* face_props = nullptr;
};

enum WellKindCode : int { well_injector = 0, well_producer = 1 };
// A well's control for the next assembly (physics/well_controls.hpp keeps them on the host):
//   control_rate            rate control; switches to its BHP limit when no BHP within it meets the target;
//   control_bhp             a BHP well (its setpoint; never switches);
//   control_rate_at_limit   a rate well at its BHP limit; returns to rate control when the target is
//                           reachable within the limit;
//   control_rate_held       a rate well that switched to its limit in this time step: stays there.
enum WellControlCode : int { control_rate = 0, control_bhp = 1, control_rate_at_limit = 2, control_rate_held = 3 };

inline constexpr int well_scratch_per_completion = 8;
// bhp [Pa], q_w, q_o [surface m^3/s, + = into the reservoir], at_bhp (0/1); for wells with a rate
// target (control != control_bhp): whether some BHP meets the target (0/1) and that BHP [Pa]; then,
// for well_apply, dF/dbhp of the weighted rate when the BHP couples the completed cells, else 0.
inline constexpr int well_out_per_well = 7;

struct WellsView {
  int nwell = 0;
  const int* kind = nullptr;
  const int* control = nullptr;
  const double* target = nullptr;     // rate target magnitude [surface m^3/s] (rate control)
  const double* bhp_value = nullptr;  // BHP setpoint (bhp control) or limit (rate control) [Pa]
  const double* weight = nullptr;     // 2 per well: which phase rates the target counts
  const double* ref_depth = nullptr;  // BHP reference depth [m]
  double* head_density = nullptr;     // wellbore density for the hydrostatic head, set once per step
  const index_t* comp_ptr = nullptr;  // nwell + 1
  const index_t* comp_cell = nullptr;
  const double* comp_wi = nullptr;    // well index [m^3]
  const double* comp_depth = nullptr;
  const index_t* couple_ptr = nullptr;   // nwell + 1, into couple_block (nc*nc per rate-controlled well)
  const index_t* couple_block = nullptr; // Jacobian block (cell c, cell c') for completions c, c'
  double* scratch = nullptr;             // well_scratch_per_completion per completion
  double* out = nullptr;                 // well_out_per_well per well
};

// Flux of each phase from cell a to cell b (surface m^3/s), upstream-weighted by the phase potential.
template <class T>
BLOCKRES_HD void face_flux(const OilWaterParams& P, const T& pa, const T& sa, double za, const T& pb, const T& sb,
                           double zb, double trans, T F[num_phases])
{
  const CellProps<T> A = cell_props(P, pa, sa);
  const CellProps<T> B = cell_props(P, pb, sb);
  for (int ph = 0; ph < num_phases; ++ph) {
    const T rho_face = 0.5 * (A.rho[ph] + B.rho[ph]);
    const T dphi = (A.p[ph] - B.p[ph]) - rho_face * (P.gravity * (za - zb));
    const CellProps<T>& up = value_of(dphi) >= 0.0 ? A : B;
    F[ph] = trans * (up.mob[ph] * up.b[ph]) * dphi;
  }
}

// What a face needs of one of its cells, with the derivatives by the cell's own (p, S_w): the phase
// densities, the phase pressures and mob * b, each as value, d/dp, d/dS_w. Computed once per cell
// (CUDA), each face then reads its two cells' instead of evaluating their properties again
// (face_flux_stored): the same dual arithmetic as face_flux, so the same values (derivative slots of
// the other cell are exact zeros here, signed zeros there). Stored by quantity (structure of arrays):
// entry e of cell i at props[e * stride + i], stride >= the cell count, so that consecutive cells
// (threads) write and read consecutive addresses.
//
// Of those 18 numbers, 5 are exact constants and not stored (face_props_doubles = 13, 104 bytes a
// cell); face_flux_stored puts them back, so its duals hold the same bits as if they were stored:
//   - p_o is the variable p itself: d/dp exactly 1, d/dS_w exactly +0 (Dual::variable); its value
//     x[2i] is stored all the same (a neighbour's from x would pull its whole 16-byte (p, S_w) pair);
//   - p_w = p_o - P_cow(S_w): d/dp = 1 - (+-0) = 1 exactly (P_cow's p-slot is a table slope times the
//     +0 p-slot of S_w, or Corey's constant 0);
//   - d rho / dS_w of both phases: rho depends on p only, its S_w-slot is +-0 (the +0 S_w-slot of p
//     through products with finite numbers). Not the same bits (+0 for a -0), but it only enters the
//     face density 0.5 (rho_a + rho_b), added to the other cell's +0 in that slot: +0 either way.
// (Exact for finite states. If c (p - p_ref) overflowed, the stored S_w-slot of rho would be NaN,
// the constant 0: the residual is not finite then either way, but the entries may differ.)
// Without capillary pressure (Corey curves: P_cow is the constant 0) p_w is p_o bit for bit (p - (+0)
// = p, slot 1: +0 - (+0) = +0): its two entries are not stored either (face_props_stored = 11).
inline constexpr int face_rho = 0;       // phase ph at face_rho + 2 ph: rho, d rho / dp
inline constexpr int face_mob_b = 4;     // phase ph at face_mob_b + 3 ph: mob * b, d/dp, d/dS_w
inline constexpr int face_p_oil = 10;    // p_o
inline constexpr int face_p_water = 11;  // p_w, d p_w / dS_w (only with capillary pressure)
inline constexpr int face_props_doubles = 13;  // at most
BLOCKRES_HD bool has_capillary_pressure(const OilWaterParams& P) { return P.relperm.kind == relperm_table; }
// The entries stored per cell for these parameters (face_props_doubles with capillary pressure).
BLOCKRES_HD int face_props_stored(const OilWaterParams& P)
{
  return has_capillary_pressure(P) ? face_props_doubles : face_p_water;
}
BLOCKRES_HD void store_face_props(const OilWaterParams& P, const double* x, index_t i, double* props, size64_t stride)
{
  using D2 = Dual<2>;
  const CellProps<D2> c = cell_props(P, D2::variable(x[2 * i], 0), D2::variable(x[2 * i + 1], 1));
  double* out = props + i;
  for (int ph = 0; ph < num_phases; ++ph) {
    const D2 mb = c.mob[ph] * c.b[ph];
    out[size64_t(face_rho + 2 * ph) * stride] = c.rho[ph].v;
    out[size64_t(face_rho + 2 * ph + 1) * stride] = c.rho[ph].d[0];
    out[size64_t(face_mob_b + 3 * ph) * stride] = mb.v;
    out[size64_t(face_mob_b + 3 * ph + 1) * stride] = mb.d[0];
    out[size64_t(face_mob_b + 3 * ph + 2) * stride] = mb.d[1];
  }
  out[size64_t(face_p_oil) * stride] = c.p[oil].v;
  if (has_capillary_pressure(P)) {
    out[size64_t(face_p_water) * stride] = c.p[water].v;
    out[size64_t(face_p_water + 1) * stride] = c.p[water].d[1];
  }
}

// A 4-variable dual: value v, derivatives dp, ds in slots off, off + 1, the others +0.
BLOCKRES_HD Dual<4> dual_at(double v, double dp, double ds, int off)
{
  Dual<4> r;
  r.v = v;
  r.d[off] = dp;
  r.d[off + 1] = ds;
  return r;
}

// face_flux from the stored properties of cells a (entry e at A[e * sa]: slots 0, 1) and b (B[e * sb]:
// slots 2, 3), the exact constants put back (store_face_props).
BLOCKRES_HD void face_flux_stored(const OilWaterParams& P, const double* A, size64_t sa, double za, const double* B,
                                  size64_t sb, double zb, double trans, Dual<4> F[num_phases])
{
  using D4 = Dual<4>;
  for (int ph = 0; ph < num_phases; ++ph) {
    const double* rA = A + face_rho * sa + 2 * ph * sa;
    const double* rB = B + face_rho * sb + 2 * ph * sb;
    const D4 rho_face = 0.5 * (dual_at(rA[0], rA[sa], 0.0, 0) + dual_at(rB[0], rB[sb], 0.0, 2));
    D4 pa, pb;
    if (ph == oil || !has_capillary_pressure(P)) {
      pa = dual_at(A[face_p_oil * sa], 1.0, 0.0, 0);
      pb = dual_at(B[face_p_oil * sb], 1.0, 0.0, 2);
    } else {
      pa = dual_at(A[face_p_water * sa], 1.0, A[(face_p_water + 1) * sa], 0);
      pb = dual_at(B[face_p_water * sb], 1.0, B[(face_p_water + 1) * sb], 2);
    }
    const D4 dphi = (pa - pb) - rho_face * (P.gravity * (za - zb));
    const double* mA = A + face_mob_b * sa + 3 * ph * sa;
    const double* mB = B + face_mob_b * sb + 3 * ph * sb;
    const D4 mobb = value_of(dphi) >= 0.0 ? dual_at(mA[0], mA[sa], mA[2 * sa], 0) : dual_at(mB[0], mB[sb], mB[2 * sb], 2);
    F[ph] = trans * mobb * dphi;
  }
}

// Writes a 2x2 block (row-major) with two 16-byte stores on the device (blocks are 32-byte aligned).
BLOCKRES_HD void store_block(double* dst, double a, double b, double c, double d)
{
#ifdef __CUDA_ARCH__
  reinterpret_cast<double2*>(dst)[0] = make_double2(a, b);
  reinterpret_cast<double2*>(dst)[1] = make_double2(c, d);
#else
  dst[0] = a, dst[1] = b, dst[2] = c, dst[3] = d;
#endif
}

// Accumulation of a cell in surface volumes, V_p S_a b_a per phase (water, oil), at pressure p and
// water saturation s (double or Dual): the residual's accumulation term is its change over dt.
template <class T>
BLOCKRES_HD void cell_accumulation(const OilWaterParams& P, double pv_ref, const T& p, const T& s, T acc[num_phases])
{
  const T pv = pv_ref * pore_volume_multiplier(P, p);
  acc[water] = pv * s * inv_fvf(P.water, p);
  acc[oil] = pv * (1.0 - s) * inv_fvf(P.oil, p);
}

// d(accumulation of cell i at x) / d(p, S_w of cell i) * inv_dt: the 2x2 block (a, v) row-major,
// written to C[4] (the accumulation's share of the diagonal Jacobian block; true-IMPES weights).
BLOCKRES_HD void accumulation_block(const OilWaterParams& P, const MeshView& M, const double* x, double inv_dt,
                                    index_t i, double C[4])
{
  using D2 = Dual<2>;
  const D2 p = D2::variable(x[2 * i], 0), s = D2::variable(x[2 * i + 1], 1);
  D2 acc[num_phases];
  cell_accumulation(P, M.pv_ref[i], p, s, acc);
  for (int ph = 0; ph < num_phases; ++ph) {
    C[2 * ph + 0] = acc[ph].d[0] * inv_dt;
    C[2 * ph + 1] = acc[ph].d[1] * inv_dt;
  }
}

// Writes block row i of the Jacobian (all its blocks) and R_i, without wells: the block stored at s at
// J + 4 (s - jbase) (jbase: the first stored block of a stage that holds a stretch of rows, CUDA; else 0).
// Stored: the faces from M.face_props (store_face_props of every cell, CUDA), else each face's cell
// properties evaluated here (face_flux). Stored, a row that holds only the diagonal and one block per
// face (no well coupling blocks) is written directly, each block once with 0 + its value (the same
// bits as clearing it and adding); other rows are cleared first and added to.
template <bool Stored = false>
BLOCKRES_HD void assemble_cell(const OilWaterParams& P, const MeshView& M, const double* x, const double* x0,
                               double dt, double* R, double* J, index_t i, index_t jbase = 0)
{
  using D2 = Dual<2>;
  using D4 = Dual<4>;
  const index_t n0 = M.nbr_ptr[i], n1 = M.nbr_ptr[i + 1];
  const bool direct = Stored && M.row_ptr[i + 1] - M.row_ptr[i] == 1 + (n1 - n0);
  if (!direct)
    for (index_t k = M.row_ptr[i]; k < M.row_ptr[i + 1]; ++k) {
      const index_t s = M.block_pos ? M.block_pos[k] : k;
      for (int e = 0; e < 4; ++e) J[size64_t(s - jbase) * 4 + e] = 0.0;
    }

  double r[num_phases];
  double jd[4];
  {  // accumulation
    const D2 p = D2::variable(x[2 * i], 0), s = D2::variable(x[2 * i + 1], 1);
    const double p0 = x0[2 * i], s0 = x0[2 * i + 1];
    D2 acc[num_phases];
    double acc0[num_phases];
    cell_accumulation(P, M.pv_ref[i], p, s, acc);
    cell_accumulation(P, M.pv_ref[i], p0, s0, acc0);
    const double inv_dt = 1.0 / dt;
    for (int ph = 0; ph < num_phases; ++ph) {
      r[ph] = (acc[ph].v - acc0[ph]) * inv_dt;
      jd[2 * ph + 0] = acc[ph].d[0] * inv_dt;
      jd[2 * ph + 1] = acc[ph].d[1] * inv_dt;
    }
  }
  // Fluxes. Each face is evaluated in its canonical orientation (lower cell first) by both
  // cells, so the two contributions cancel exactly in the mass balance.
  double own[Stored ? face_props_doubles : 1];  // the entries past face_props_stored(P) are not read
  if constexpr (Stored)
    for (int e = 0; e < face_props_doubles; ++e)
      own[e] = e < face_props_stored(P) ? M.face_props[size64_t(e) * size64_t(M.ncell) + i] : 0.0;
  for (index_t n = n0; n < n1; ++n) {
    const index_t j = M.nbr_cell[n];
    const bool first = i < j;
    const index_t a = first ? i : j, b = first ? j : i;
    D4 F[num_phases];
    if constexpr (Stored) {
      // The cell's own properties from registers (own), the neighbour's from the stored array; two
      // calls with fixed roles, so that `own` stays in registers.
      const size64_t stride = size64_t(M.ncell);
      if (first)
        face_flux_stored(P, own, 1, M.depth[a], M.face_props + b, stride, M.depth[b], M.nbr_trans[n], F);
      else
        face_flux_stored(P, M.face_props + a, stride, M.depth[a], own, 1, M.depth[b], M.nbr_trans[n], F);
    } else {
      const D4 pa = D4::variable(x[2 * a], 0), sa = D4::variable(x[2 * a + 1], 1);
      const D4 pb = D4::variable(x[2 * b], 2), sb = D4::variable(x[2 * b + 1], 3);
      face_flux(P, pa, sa, M.depth[a], pb, sb, M.depth[b], M.nbr_trans[n], F);
    }
    const double sgn = first ? 1.0 : -1.0;
    // F's derivatives by this cell's (p, S_w) and by the neighbour's, (phase, variable) row-major:
    // slots 0, 1 are cell a's, 2, 3 cell b's. Selected rather than indexed by a run-time offset,
    // which kept F in local memory (80 bytes a thread) on the device.
    double d_self[4], d_nbr[4];
    for (int ph = 0; ph < num_phases; ++ph)
      for (int v = 0; v < 2; ++v) {
        d_self[2 * ph + v] = first ? F[ph].d[v] : F[ph].d[2 + v];
        d_nbr[2 * ph + v] = first ? F[ph].d[2 + v] : F[ph].d[v];
      }
    double* Jo = J + size64_t(M.nbr_block[n] - jbase) * 4;
    for (int ph = 0; ph < num_phases; ++ph) {
      r[ph] += sgn * F[ph].v;
      for (int v = 0; v < 2; ++v) jd[2 * ph + v] += sgn * d_self[2 * ph + v];
    }
    if (direct) {
      store_block(Jo, 0.0 + sgn * d_nbr[0], 0.0 + sgn * d_nbr[1], 0.0 + sgn * d_nbr[2], 0.0 + sgn * d_nbr[3]);
    } else {
      for (int e = 0; e < 4; ++e) Jo[e] += sgn * d_nbr[e];
    }
  }
#ifdef __CUDA_ARCH__
  reinterpret_cast<double2*>(R)[i] = make_double2(r[water], r[oil]);
#else
  R[2 * i] = r[water];
  R[2 * i + 1] = r[oil];
#endif
  double* Jd = J + size64_t(M.diag_block[i] - jbase) * 4;
  if (direct) {
    store_block(Jd, 0.0 + jd[0], 0.0 + jd[1], 0.0 + jd[2], 0.0 + jd[3]);
  } else {
    for (int e = 0; e < 4; ++e) Jd[e] += jd[e];
  }
}

// The well functions below split their work over `nl` lanes: lane l takes completions l, l + nl, ...,
// and sync() separates phases that read what other lanes wrote. The CPU calls them with one lane and
// a no-op sync, the CUDA kernels with a thread block per well (__syncthreads). Every sum over a
// well's completions is taken in completion order by each lane that needs it, so the CPU and the
// device compute the same values whatever the lane count (no two wells complete the same cell, so
// the lanes of different wells never write the same entry; within a well each cell is completed once).
struct NoSync {
  BLOCKRES_HD void operator()() const {}
};

// Wellbore density for the hydrostatic head, explicit in time (from the state at the start
// of the step): injectors carry water; producers the mobility-weighted mixture of the
// completed cells. Scratch slot 0 of each completion holds its term.
template <class Sync = NoSync>
BLOCKRES_HD void prepare_well(const OilWaterParams& P, const WellsView& W, const double* x, int w, int lane = 0,
                              int nl = 1, Sync sync = {})
{
  const index_t c0 = W.comp_ptr[w], c1 = W.comp_ptr[w + 1];
  double* scr = W.scratch + size64_t(c0) * well_scratch_per_completion;
  for (index_t c = c0 + lane; c < c1; c += nl) {
    const index_t cell = W.comp_cell[c];
    const CellProps<double> cp = cell_props(P, x[2 * cell], x[2 * cell + 1]);
    double term;
    if (W.kind[w] == well_injector) {
      term = cp.rho[water];
    } else {
      const double lt = cp.mob[water] + cp.mob[oil];
      term = lt > 0.0 ? (cp.mob[water] * cp.rho[water] + cp.mob[oil] * cp.rho[oil]) / lt
                      : 0.5 * (cp.rho[water] + cp.rho[oil]);
    }
    scr[size64_t(c - c0) * well_scratch_per_completion] = term;
  }
  sync();
  if (lane != 0) return;
  double sum = 0.0;
  for (index_t c = c0; c < c1; ++c) sum += scr[size64_t(c - c0) * well_scratch_per_completion];
  W.head_density[w] = c1 > c0 ? sum / double(c1 - c0) : 0.0;
}

// The weighted well rate F(b) = sum_c w . Q_c(b) from the scratch of solve_well_bhp.
BLOCKRES_HD double well_rate_at(const double* scratch, index_t nc, double b)
{
  return piecewise_well_rate(scratch, well_scratch_per_completion, nc, b);
}

// BHP that makes the weighted well rate F(bhp) = sum_c w . Q_c(bhp) equal `goal`. F is
// continuous, piecewise linear and non-decreasing in bhp with a kink at each completion's
// breakpoint bp_c = p_c - head_c (where the connection turns from producing to injecting),
// so the root is found exactly from the values at the breakpoints. Scratch per completion:
// [0] breakpoint, [1] slope below it (producing), [2] slope above it (injecting), [3] F at the
// breakpoint (well_rate_at, filled by the caller: lanes over the completions).
// Returns false when no BHP reaches the goal (all slopes on that side are zero).
BLOCKRES_HD bool solve_well_bhp(const double* scratch, index_t nc, double goal, double& bhp)
{
  bool has_lo = false, has_hi = false;
  double lo = 0, flo = 0, hi = 0, fhi = 0;
  for (index_t k = 0; k < nc; ++k) {
    const double bp = scratch[size64_t(k) * well_scratch_per_completion];
    const double f = scratch[size64_t(k) * well_scratch_per_completion + 3];
    if (f <= goal && (!has_lo || bp > lo)) has_lo = true, lo = bp, flo = f;
    if (f >= goal && (!has_hi || bp < hi)) has_hi = true, hi = bp, fhi = f;
  }
  if (has_lo && flo == goal) return bhp = lo, true;
  if (has_lo && has_hi) return bhp = (fhi == flo) ? lo : lo + (goal - flo) * (hi - lo) / (fhi - flo), true;
  double slope = 0.0;
  for (index_t c = 0; c < nc; ++c) slope += scratch[size64_t(c) * well_scratch_per_completion + (has_lo ? 2 : 1)];
  if (!(slope > 0.0)) return false;
  bhp = has_lo ? lo + (goal - flo) / slope : hi - (fhi - goal) / slope;
  return true;
}

// Well w's connection rates and their derivatives (scratch slots 0..7 of each completion) and its
// BHP, rates and control (W.out) for the state x; well_apply then adds them to R and J. Under rate
// control the BHP is an implicit function of every completed cell's state: its derivative couples
// the cells through the blocks in W.couple_block (exact Newton, no separate well unknown). Lanes:
// over the completions (see NoSync). Reads x only, so it may run beside the cells' assembly.
template <class Sync = NoSync>
BLOCKRES_HD void well_terms(const OilWaterParams& P, const WellsView& W, const double* x, int w, int lane = 0,
                            int nl = 1, Sync sync = {})
{
  using D3 = Dual<3>;
  const index_t c0 = W.comp_ptr[w], c1 = W.comp_ptr[w + 1], nc = c1 - c0;
  double* scr = W.scratch + size64_t(c0) * well_scratch_per_completion;
  const double ww = W.weight[2 * w], wo = W.weight[2 * w + 1];
  const double head_grad = W.head_density[w] * P.gravity;

  const int control = W.control[w];
  bool at_bhp = control != control_rate;
  double bhp = W.bhp_value[w];
  bool reachable = false;
  double needed = 0.0;  // the BHP that meets the rate target, when reachable
  if (control != control_bhp) {
    for (index_t c = lane; c < nc; c += nl) {
      const index_t cell = W.comp_cell[c0 + c];
      const CellProps<double> cp = cell_props(P, x[2 * cell], x[2 * cell + 1]);
      const double wi = W.comp_wi[c0 + c];
      double* s = scr + size64_t(c) * well_scratch_per_completion;
      s[0] = x[2 * cell] - head_grad * (W.comp_depth[c0 + c] - W.ref_depth[w]);
      s[1] = wi * (ww * cp.b[water] * cp.mob[water] + wo * cp.b[oil] * cp.mob[oil]);
      s[2] = wi * ww * cp.b[water] * (cp.mob[water] + cp.mob[oil]);
    }
    sync();
    for (index_t k = lane; k < nc; k += nl)
      scr[size64_t(k) * well_scratch_per_completion + 3] =
          well_rate_at(scr, nc, scr[size64_t(k) * well_scratch_per_completion]);
    sync();
    const double goal = W.kind[w] == well_injector ? W.target[w] : -W.target[w];
    reachable = solve_well_bhp(scr, nc, goal, needed);
    const bool beyond = W.kind[w] == well_injector ? needed > W.bhp_value[w] : needed < W.bhp_value[w];
    // Rate control while the target is reachable within the limit, else BHP control at the limit;
    // a well held at its limit for the rest of the step stays there.
    if (control != control_rate_held) {
      at_bhp = !(reachable && !beyond);
      if (!at_bhp) bhp = needed;
    }
    sync();  // every lane has read the scratch before it is overwritten
  }

  for (index_t c = lane; c < nc; c += nl) {
    const index_t cell = W.comp_cell[c0 + c];
    const D3 p = D3::variable(x[2 * cell], 0), sw = D3::variable(x[2 * cell + 1], 1), b = D3::variable(bhp, 2);
    const CellProps<D3> cp = cell_props(P, p, sw);
    const double wi = W.comp_wi[c0 + c];
    const D3 dp = b + head_grad * (W.comp_depth[c0 + c] - W.ref_depth[w]) - p;
    D3 Q[num_phases];
    if (dp.v > 0.0) {  // injecting connection: water with the cell's total mobility
      Q[water] = wi * cp.b[water] * (cp.mob[water] + cp.mob[oil]) * dp;
      Q[oil] = D3(0.0);
    } else {
      Q[water] = wi * cp.b[water] * cp.mob[water] * dp;
      Q[oil] = wi * cp.b[oil] * cp.mob[oil] * dp;
    }
    double* s = scr + size64_t(c) * well_scratch_per_completion;
    s[0] = Q[water].v, s[1] = Q[oil].v;
    s[2] = Q[water].d[0], s[3] = Q[water].d[1], s[4] = Q[oil].d[0], s[5] = Q[oil].d[1];
    s[6] = Q[water].d[2], s[7] = Q[oil].d[2];
  }
  sync();
  if (lane == 0) {
    double dF_dbhp = 0.0, qw = 0.0, qo = 0.0;
    for (index_t c = 0; c < nc; ++c) {
      const double* s = scr + size64_t(c) * well_scratch_per_completion;
      dF_dbhp += ww * s[6] + wo * s[7];
      qw += s[0], qo += s[1];
    }
    double* out = W.out + size64_t(w) * well_out_per_well;
    out[0] = bhp, out[1] = qw, out[2] = qo, out[3] = at_bhp ? 1.0 : 0.0;
    out[4] = reachable ? 1.0 : 0.0, out[5] = needed;
    out[6] = !at_bhp && dF_dbhp > 0.0 ? dF_dbhp : 0.0;
  }
}

// Adds well w's terms (well_terms, run before) to R and J: item t < nc*nc of a coupled well is the
// completion pair (c, c2) = (t / nc, t % nc), of an uncoupled one the completion t < nc. The item
// (c, c) (or c) first takes completion c's rates and their derivatives into R and c's diagonal
// block, then (coupled) the pair's coupling term, so every entry sees its subtractions in one order
// whatever the lanes: the CPU and the device give the same bits. Lanes over the items; no sync.
BLOCKRES_HD void well_apply(const WellsView& W, const MeshView& M, double* R, double* J, int w, int lane = 0,
                            int nl = 1)
{
  const index_t c0 = W.comp_ptr[w], nc = W.comp_ptr[w + 1] - c0;
  const double* scr = W.scratch + size64_t(c0) * well_scratch_per_completion;
  const double dF_dbhp = W.out[size64_t(w) * well_out_per_well + 6];
  const bool coupled = dF_dbhp > 0.0;
  const double ww = W.weight[2 * w], wo = W.weight[2 * w + 1];
  const size64_t items = coupled ? size64_t(nc) * size64_t(nc) : size64_t(nc);
  for (size64_t t = lane; t < items; t += nl) {
    const index_t c = coupled ? index_t(t / size64_t(nc)) : index_t(t);
    const index_t c2 = coupled ? index_t(t % size64_t(nc)) : c;
    const double* s = scr + size64_t(c) * well_scratch_per_completion;
    if (c2 == c) {
      const index_t cell = W.comp_cell[c0 + c];
      R[2 * cell] -= s[0];
      R[2 * cell + 1] -= s[1];
      double* Jd = J + size64_t(M.diag_block[cell]) * 4;
      Jd[0] -= s[2], Jd[1] -= s[3], Jd[2] -= s[4], Jd[3] -= s[5];
    }
    if (!coupled) continue;
    const double* s2 = scr + size64_t(c2) * well_scratch_per_completion;
    // d bhp / d x_c2 = -(dF/dx_c2) / (dF/dbhp)
    const double db_dp = -(ww * s2[2] + wo * s2[4]) / dF_dbhp;
    const double db_ds = -(ww * s2[3] + wo * s2[5]) / dF_dbhp;
    double* Jc = J + size64_t(W.couple_block[W.couple_ptr[w] + index_t(t)]) * 4;
    Jc[0] -= s[6] * db_dp, Jc[1] -= s[6] * db_ds;
    Jc[2] -= s[7] * db_dp, Jc[3] -= s[7] * db_ds;
  }
}

// Both, as one call (the CPU loop).
BLOCKRES_HD void assemble_well(const OilWaterParams& P, const WellsView& W, const MeshView& M, const double* x,
                               double* R, double* J, int w)
{
  well_terms(P, W, x, w);
  well_apply(W, M, R, J, w);
}

// Terms reduced over cells for the convergence test:
// [0..1] max_i |R_a,i| / V_p,i (max), [2..3] sum_i R_a,i, [4] sum V_p, [5..6] sum B_a.
inline constexpr int num_norm_terms = 7;
BLOCKRES_HD void cell_norm_terms(const OilWaterParams& P, const MeshView& M, const double* x, const double* R,
                                 index_t i, double t[num_norm_terms])
{
  const double p = x[2 * i];
  const double pv = M.pv_ref[i] * pore_volume_multiplier(P, p);
  t[0] = (R[2 * i] < 0 ? -R[2 * i] : R[2 * i]) / pv;
  t[1] = (R[2 * i + 1] < 0 ? -R[2 * i + 1] : R[2 * i + 1]) / pv;
  t[2] = R[2 * i];
  t[3] = R[2 * i + 1];
  t[4] = pv;
  t[5] = 1.0 / inv_fvf(P.water, p);
  t[6] = 1.0 / inv_fvf(P.oil, p);
}

// Fluid in place of cell i in surface volumes: [0] water, [1] oil.
BLOCKRES_HD void cell_in_place(const OilWaterParams& P, const MeshView& M, const double* x, index_t i, double t[2])
{
  cell_accumulation(P, M.pv_ref[i], x[2 * i], x[2 * i + 1], t);
}

// Newton update x <- x - dx with Appleyard-style chopping: |dS_w| <= max_ds and
// |dp| <= max_dp_rel |p| per cell; S_w kept in [0, 1].
BLOCKRES_HD void update_cell(double* x, const double* dx, index_t i, double max_ds, double max_dp_rel)
{
  double dp = dx[2 * i], ds = dx[2 * i + 1];
  const double p = x[2 * i];
  const double dp_lim = max_dp_rel * (p < 0 ? -p : p);
  if (dp > dp_lim) dp = dp_lim;
  if (dp < -dp_lim) dp = -dp_lim;
  if (ds > max_ds) ds = max_ds;
  if (ds < -max_ds) ds = -max_ds;
  double s = x[2 * i + 1] - ds;
  s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
  x[2 * i] = p - dp;
  x[2 * i + 1] = s;
}

}  // namespace blockres::physics
