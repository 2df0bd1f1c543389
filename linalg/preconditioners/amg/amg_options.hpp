// Options of the aggregation AMG (linalg/preconditioners/amg/amg.hpp; deck: type = "amg"), apart
// from the AMG machinery so that CPR (its default pressure stage) and the benches hold them lightly.
#pragma once

#include "input/names.hpp"
#include "kernels/common.hpp"
#include "linalg/executor.hpp"
#include "linalg/preconditioners/storage_precision.hpp"

#include <memory>
#include <string_view>

namespace blockres::deck {
class Section;  // input/section.hpp
}

namespace blockres {

class Preconditioner;

// jacobi: damped Jacobi (jacobi_omega); l1_jacobi: l1-Jacobi (Baker, Falgout, Kolev, Yang);
// ilu0: x += (L U)^{-1} (b - A x) with the ILU(0) of the level's operator (factored on every
// numeric setup), its triangular solves exact or by trisolve_sweeps Jacobi sweeps (the smoother of
// OPM's CPR pressure AMG, Dune's SeqILU; the sweeps make it a parallel one on the GPU).
enum class AmgSmoother { jacobi, l1_jacobi, ilu0 };
inline constexpr auto amg_smoother_names = name_table<AmgSmoother>(
    {{AmgSmoother::jacobi, "jacobi"}, {AmgSmoother::l1_jacobi, "l1_jacobi"}, {AmgSmoother::ilu0, "ilu0"}});
constexpr std::string_view to_string(AmgSmoother s) { return amg_smoother_names.name(s); }

// mis2: aggregates around a distance-2 maximal independent set (root and its strong neighbours,
// the rest attached to a neighbouring aggregate: about 3^d / 2 rows per aggregate on a d-dimensional
// stencil); matching: aggregate_size / 2 ... passes of parallel pairwise (handshake) matching.
enum class AmgAggregation { mis2, matching };
inline constexpr auto amg_aggregation_names =
    name_table<AmgAggregation>({{AmgAggregation::mis2, "mis2"}, {AmgAggregation::matching, "matching"}});
constexpr std::string_view to_string(AmgAggregation a) { return amg_aggregation_names.name(a); }

// Plain: piecewise-constant P (one entry per row). Smoothed: P = (I - omega D^-1 A) P0 with
// omega = 4 / (3 rho), rho the Gershgorin bound of D^-1 A (smoothed aggregation, Vanek et al.).
enum class AmgInterpolation { plain, smoothed };
inline constexpr auto amg_interpolation_names =
    name_table<AmgInterpolation>({{AmgInterpolation::smoothed, "smoothed"}, {AmgInterpolation::plain, "plain"}});
constexpr std::string_view to_string(AmgInterpolation p) { return amg_interpolation_names.name(p); }

// The cycle on levels 0 .. L-2: v visits the next coarser level once, w twice (the second visit
// starts from the first's result; a level above a directly solved coarsest level visits it once).
enum class AmgCycle { v, w };
inline constexpr auto amg_cycle_names = name_table<AmgCycle>({{AmgCycle::v, "v"}, {AmgCycle::w, "w"}});
constexpr std::string_view to_string(AmgCycle c) { return amg_cycle_names.name(c); }

struct AmgOptions {
  // Strength of connection on level l: i ~ j when |a_ij| >= theta_l * sqrt(|a_ii a_jj|) (either
  // direction), theta_l = theta * 2^-l (Vanek, Mandel, Brezina: Galerkin operators get denser,
  // each coupling weaker relative to the diagonal; with a fixed 0.08 the smoothed-aggregation
  // level 1 of 3D Poisson has no strong couplings at all and coarsening stops).
  double theta = 0.08;
  AmgAggregation aggregation = AmgAggregation::mis2;
  // matching only: nominal aggregate size 2 (one pairwise matching pass), 4 (two passes) or 8 (three), as in
  // AMGX's size-2/4/8 aggregation and Notay's double pairwise aggregation. A row whose strong
  // neighbours are all taken joins its strongest neighbour's aggregate, so a few aggregates
  // exceed the nominal size.
  int aggregate_size = 8;
  AmgInterpolation interpolation = AmgInterpolation::smoothed;
  AmgSmoother smoother = AmgSmoother::jacobi;
  double jacobi_omega = 2.0 / 3.0;  // damped Jacobi only (l1-Jacobi is undamped)
  // ilu0 only: 0 exact triangular solves (level-scheduled: one launch per level on the GPU), k >= 1
  // k Jacobi sweeps per triangular factor after the start (each one SpMV-like pass over half the
  // level's entries: parallel on the GPU).
  int trisolve_sweeps = 0;
  int pre_sweeps = 1;
  int post_sweeps = 1;
  AmgCycle cycle = AmgCycle::v;
  // Cycles per apply: the first from a zero guess, each further one from the last one's result
  // (a stationary iteration, so the apply stays one fixed linear operator, as BiCGSTAB needs).
  int cycles = 1;
  int max_levels = 20;
  // Coarsening stops at this many rows; the coarsest level is factored densely with the batched
  // LU (at most kernels::batched_lu_max_size = 512 rows). 128: a dense LU of 500 rows cost more
  // than the rest of a numeric setup of 4,500 rows (CPU), and coarse levels are cheap.
  index_t max_coarse = 128;
  // Coarsening also stops when a level keeps more than this fraction of its rows (stagnation).
  double min_coarsening_ratio = 0.85;
  // setup() on a matrix with the same structure (row pointers and columns, compared by
  // content) keeps the aggregates and patterns and only recomputes values (refresh_numeric), and
  // that every this many setup() calls on the same structure: 1 refreshes on every call; k > 1
  // lets one hierarchy serve k calls (k Newton iterations, as OPM can keep its CPR hierarchy): the
  // finest level's operator is then the current matrix, its smoother scaling and every coarser
  // level those of the last refresh.
  int refresh_interval = 1;
  // Numeric re-setups keep the prolongation and restriction of the last full setup and recompute
  // only the Galerkin operators, smoother scalings and coarse LU (AMGX's structure reuse): cheaper
  // (no A P0 product, no smoothing of P, no transpose), and P is still a good interpolation while
  // the matrix changes little (Newton iterations of one time step).
  bool keep_interpolation = false;
  // > 0: adaptive reuse (issue 30). setup() keeps the whole hierarchy (as a kept refresh_interval
  // setup: the finest operator is the current matrix, everything else that of the last refresh)
  // within a time step and refreshes its values only at the first setup of a time step (or of its
  // retry after a cut), after a failed solve, or when the last solve took more than
  // (1 + refresh_growth) x the iterations of the first solve after the last refresh (+1, so that
  // 2 -> 3 is no growth). Needs the time loop's feedback (Preconditioner::note_new_step,
  // note_solve); without it every setup refreshes. 0: off (refresh_interval decides).
  double refresh_growth = 0.0;
  // The cycle's matrices (every level's operator, the finest included, and the transfer operators):
  // fp64, or fp32 copies made by every setup (the smoother scalings, the coarsest level's LU and every
  // vector stay fp64; the cycle's kernels read the fp32 values and compute in fp64): 8 instead of 12
  // bytes per matrix entry. Jacobi smoothers only.
  StoragePrecision storage = StoragePrecision::fp64;
  // Distributed runs (several ranks, issue 33): the levels stay distributed (aggregates inside each rank's rows,
  // Galerkin products across the halo) down to the first with at most this many rows in all, which is gathered
  // onto every rank and continued there as one serial hierarchy (amg_distributed.hpp). A problem this small is
  // gathered whole: the serial AMG on every rank. No effect on one rank.
  index_t gather_rows = 20000;
  bool operator==(const AmgOptions&) const = default;
};
inline constexpr std::string_view amg_keys[] = {
    "aggregation", "aggregate_size", "interpolation", "smoother",   "jacobi_omega",     "trisolve_sweeps",  "theta",
    "pre_sweeps",  "post_sweeps",    "cycle",         "cycles",     "max_levels",       "max_coarse",
    "refresh_interval", "keep_interpolation", "refresh_growth", "storage", "gather_rows"};
AmgOptions read(deck::Section& table, const AmgOptions& defaults);
std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const AmgOptions& opt);

}  // namespace blockres
