// `blockres bench amg`: the results it measures (one MatrixResult per matrix) and its byte models, for the
// report writer and the tests; the entry point run_amg_bench is declared in miniapp/bench/bench.hpp.
#pragma once

#include "linalg/preconditioners/amg/amg.hpp"
#include "miniapp/bench/bench.hpp"

#include <limits>
#include <string>
#include <vector>

#include "miniapp/bench/bench_timing.hpp"

namespace blockres::amgbench {

using bench::nan_v;
using bench::Timing;

// One Krylov solve of A x = b from x = 0 (CG when A is symmetric, else GMRES(30)).
struct SolveResult {
  std::string method;
  bool converged = false;
  int iterations = 0;
  bool iterations_varied = false;  // the timed solves did not all take the same number of iterations
  std::string reason;              // "converged", "max_iterations", "breakdown", "not_finite"
  double rel_residual = nan_v;     // ||b - A x||_2 / ||b||_2 recomputed on the host after the solve
  Timing time;
};

struct HypreLevelSizes {
  long long rows = 0, nnz = 0;
};

// hypre BoomerAMG on the same matrix and right-hand side, on the CPU (builds with BLOCKRES_WITH_HYPRE).
struct HypreResult {
  bool run = false;
  std::string skipped;  // why it did not run (not built in, --no-hypre, above --hypre-max-rows)
  std::string error;    // setup failure or exception
  double matrix_copy_ms = nan_v;  // our CSR into hypre's IJ/ParCSR matrix (once, not part of the setup)
  Timing setup, vcycle;
  std::vector<HypreLevelSizes> levels;
  double operator_complexity = nan_v, grid_complexity = nan_v;
  SolveResult solve;  // our Krylov solver (same method, tolerance, b) with BoomerAMG as the preconditioner
};

// Rows and nonzeros of one level, and of its transfer operator P_l (R_l = P_l^T has as many; 0 on the
// coarsest level).
struct LevelSizes {
  index_t rows = 0;
  size64_t nnz = 0;
  size64_t transfer_nnz = 0;
};

struct MatrixResult {
  std::string name, kind, description;
  int side = 0;
  index_t rows = 0;
  size64_t nnz = 0;
  double asymmetry = nan_v;  // max |a_ij - a_ji| / max |a_ij|
  bool symmetric = false;    // asymmetry <= 1e-12: CG, else GMRES(30)
  double matrix_bytes = 0;   // 12 nnz + 4 (rows + 1): values, column indices, row pointers

  // SpMV with the finest matrix (the SpMV-equivalent unit): ours (BsrMatrix::apply, bs = 1) and, on
  // CUDA, cuSPARSE CSR SpMV on the same arrays; max |y - y_ref| / max |y_ref| against the host.
  Timing spmv, cusparse;
  double spmv_error = nan_v, cusparse_error = nan_v;

  // Our AMG.
  std::string amg_name, amg_error;
  AmgStatistics stats;
  std::vector<LevelSizes> levels;
  bool transfer_nnz_from_hierarchy = false;  // false: nnz(P_l) estimated (see the byte model)
  double first_full_setup_ms = nan_v;        // the very first setup (allocations included)
  Timing full_setup, numeric_setup, vcycle;
  // Numeric re-setup with keep_interpolation (P and R of the full setup kept; Galerkin operators,
  // smoothers and coarse LU recomputed): the cost of a re-setup within a time step.
  Timing numeric_setup_kept;
  double vcycle_bytes = nan_v, full_setup_bytes = nan_v, numeric_setup_bytes = nan_v;
  bool numeric_dispatched = false;   // setup() on the same structure did numeric re-setups only
  bool numeric_graph = false;        // ... replayed as one recorded CUDA graph
  double resetup_difference = nan_v; // V-cycle after numeric re-setups vs after the full setup (relative)
  SolveResult solve;

  HypreResult hypre;

  std::vector<std::string> failures;  // failed checks (empty: verified)
  bool verified() const { return failures.empty(); }
};

// Growth of AMG-CG iterations over the sizes of one generated kind: largest grid over smallest.
struct IterationGrowth {
  std::string kind;
  bool evaluated = false;  // at least two sizes whose solve converged
  index_t rows_small = 0, rows_large = 0;
  int iterations_small = 0, iterations_large = 0;
  double ratio = nan_v;
};

struct AmgBenchReport {
  std::string device, backend;
  double copy_gbs = nan_v;
  Timing copy;
  std::vector<MatrixResult> matrices;
  IterationGrowth growth;                       // poisson (the target)
  std::vector<IterationGrowth> growth_by_kind;  // every generated kind of the run
  bool all_verified() const
  {
    for (const auto& m : matrices)
      if (!m.verified()) return false;
    return true;
  }
};

// ---- byte models (what the fractions of the copy bandwidth divide by) ---------------------------------
// Bytes of a CSR matrix: 8 per value (value_bytes: 4 for fp32 storage) + 4 per column index + 4 per row
// pointer.
double csr_bytes(size64_t rows, size64_t nnz, double value_bytes = 8.0);
// One V-cycle (AmgPreconditioner::apply), levels finest first: per level l above the coarsest, the
// smoother sweeps (the first pre-sweep from a zero guess reads b and D^-1 and writes x; every other sweep
// reads A_l, x, b, D^-1 and writes x), the residual r = b - A_l x (A_l, x, b read, r written), the
// restriction (R_l, r read, b_{l+1} written) and the prolongation x += P_l x_{l+1} (P_l, x_{l+1}, x read,
// x written); on the coarsest level the dense LU solve (8 n^2 factor bytes + 4 n pivots, b read, x written)
// or, when it is too large for that, max(2, pre + post) sweeps. Every array is counted once per pass
// (perfect cache reuse of x within an SpMV); the copies of r and z at the entry and exit are not counted.
// With fp32 storage (AmgOptions::storage) the cycle's matrices (A_l, P_l, R_l) read 4 bytes per value.
double vcycle_bytes(const std::vector<LevelSizes>& levels, const AmgOptions& opt, bool coarsest_direct);
// Setups, lower bounds: the finest matrix read once (csr_bytes) and what the setup produces written once:
// full setup: every coarse operator, P_l and R_l as CSR (indices and values); numeric re-setup: their values
// only (8 bytes each).
double full_setup_bytes(const std::vector<LevelSizes>& levels);
double numeric_setup_bytes(const std::vector<LevelSizes>& levels);

// The whole benchmark (bench_amg.cpp): runs every matrix, logs, writes the JSON report to o.json_path
// (rewritten after every matrix with "complete": false until the end) and returns the results.
AmgBenchReport run_amg_bench_report(const AmgBenchOptions& o, const std::function<void(const std::string&)>& log);
// The run's exit code: 1 when a check failed, or when strict and an issue-16 target evaluated on the
// report's Poisson rows was missed (V-cycle, numeric re-setup, CG iteration growth); else 0.
int amg_bench_exit_code(const AmgBenchReport& rep, bool strict);

}  // namespace blockres::amgbench
