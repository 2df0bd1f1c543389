// `blockres bench batched`, block-Jacobi section: setup and apply times of BlockJacobiPreconditioner
// (linalg/preconditioners/block_jacobi/block_jacobi.hpp) and the BiCGSTAB iterations it buys, on Jacobians written by
// `blockres run --write-jacobian`: no preconditioner, point (scalar) Jacobi, the natural BSR blocks
// and agglomerated blocks, each factored by Gauss–Jordan, Gauss–Huard (both storages) and LU.
#include "miniapp/bench/bench_common.hpp"

#include "linalg/krylov.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"
#include "linalg/preconditioners/none/none.hpp"
#include "linalg/vector_ops.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blockres::benchutil {

namespace {

// ---- what is measured (the texts below and in run_block_jacobi_section quote these values) ------
constexpr double rel_tol = 1e-6;       // BiCGSTAB: ||b - A x||_2 <= rel_tol ||b||_2 (x0 = 0)
constexpr int max_iterations = 5000;
constexpr int solve_warmup = 1;        // untimed solves first (Krylov workspace allocation)
constexpr int solve_reps = 3;          // timed solves (median / min / max)
constexpr std::uint64_t rhs_seed = 4242;
constexpr double residual_slack = 10;  // a converged solve fails when its true residual > 10 rel_tol
constexpr int agglomerated_sizes[] = {16, 32, 64};  // 64: LU only (the Gauss variants stop at 32)

constexpr const char* matrices_text =
    "Jacobians written by 'blockres run DECK --write-jacobian FILE' (the last Jacobian assembled in the run), "
    "read from the --jacobian files with their values as stored; name = the file's stem.";
constexpr const char* configurations_text =
    "none: no preconditioner (apply = vector copy). scalar: point Jacobi on the diagonal entries (max_block_size 1, "
    "1x1 blocks inverted with gauss_jordan). natural: the diagonal BSR blocks A_rr (max_block_size 0). agglomerated "
    "m: consecutive block rows merged while the Jacobi block stays within m scalar rows and every added block row is "
    "coupled to the block (max_block_size m); m = 16 and 32 with every factorisation, 64 with lu only; sizes that "
    "cannot hold two block rows (m < 2 x the block size) are skipped, as are the Gauss variants on natural blocks "
    "larger than 32. Factorisations: gauss_jordan (explicit inverse, applied by a block-diagonal gemv), gauss_huard "
    "(Gauss-Huard factors), gauss_huard_t (the same with the upper factor stored transposed), lu (partial pivoting, "
    "triangular solves).";
constexpr const char* timing_text =
    "CUDA events on the executor's stream around one call; the calls synchronise (setup downloads the count of "
    "failed blocks, the Krylov solver its dot products), so the events bracket the whole call. first_setup_ms: the "
    "first setup, symbolic (grouping, extraction map, storage, on the host) plus numeric, host clock, synchronised. "
    "setup: the numeric setup alone (extract the Jacobi blocks, factor them, count failures) by later setup calls; "
    "median / min / max over --reps calls after --warmup untimed ones. apply: z = M^{-1} b, same repetitions. solve: "
    "the whole KrylovSolver::solve from x0 = 0 (x reset outside the events), 3 timed solves after 1 untimed one, "
    "median / min / max (none and scalar, which usually run to the iteration limit: 1 timed solve, no untimed one). No L2 scrub: as in a Newton step, setup follows assembly and apply runs inside the Krylov "
    "loop (small Jacobians fit in L2).";
constexpr const char* solve_text =
    "BiCGSTAB (linalg/krylov.hpp), right-preconditioned, on A x = b with b_i uniform in [-1, 1) (seed 4242, "
    "benchutil::unit), x0 = 0; stops when ||b - A x||_2 <= 1e-6 ||b||_2 (confirmed with an explicitly computed "
    "residual) or after 5000 iterations; one iteration applies the preconditioner and the matrix twice each. A random "
    "b, like a Newton residual, loads every equation (all equations share one unit, surface volume per time); "
    "b = A x* with a random x* would not: the unknowns' units differ (pressure in Pa), so the pressure columns are "
    "orders of magnitude smaller and such a b all but ignores the pressure coupling. relative_residual: "
    "||b - A x||_2 / ||b||_2 recomputed by the benchmark after the last timed solve.";
constexpr const char* verification_text =
    "a row fails when it reports convergence while the recomputed relative residual exceeds 10 x 1e-6, or when a "
    "natural or agglomerated block-Jacobi solve (the runs that should converge: every Jacobi block holds whole cell "
    "blocks) reports NaN/Inf (reason not_finite). none and scalar are baselines: not converging, and for them even "
    "diverging to not_finite, is a result, not a failure (point Jacobi divides each equation by one diagonal entry, "
    "which on the oil-water Jacobians can be 1e-10 of its row, and BiCGSTAB may then overflow). A failed setup (a "
    "singular Jacobi block) is reported with its message and has no times or solve; it does not fail the run.";

// ---- one row: a preconditioner configuration on one Jacobian ------------------------------------
struct Config {
  bool identity = false;  // the "none" row
  BlockJacobiOptions bj;
};

// "none", "scalar", "natural" or "agglomerated".
std::string kind(const Config& c, int bs)
{
  if (c.identity) return "none";
  if (c.bj.max_block_size == 1) return "scalar";
  return c.bj.max_block_size <= bs ? "natural" : "agglomerated";
}

std::string label(const Config& c, int bs)
{
  const std::string k = kind(c, bs);
  return k == "agglomerated" ? fmt::format("{} {}", k, c.bj.max_block_size) : k;
}

// The rows of the section for block size bs (see configurations_text).
std::vector<Config> configurations(int bs)
{
  constexpr BlockFactorization all[] = {BlockFactorization::gauss_jordan, BlockFactorization::gauss_huard,
                                        BlockFactorization::gauss_huard_t, BlockFactorization::lu};
  std::vector<Config> out;
  out.push_back({true, {}});
  out.push_back({false, {BlockFactorization::gauss_jordan, 1}});
  for (auto f : all)
    if (bs <= max_block_rows(f)) out.push_back({false, {f, 0}});
  for (int m : agglomerated_sizes)  // m < 2 bs would leave every block row on its own: natural blocks again
    for (auto f : all)
      if (m >= 2 * bs && m <= max_block_rows(f) && (m <= 32 || f == BlockFactorization::lu))
        out.push_back({false, {f, m}});
  return out;
}

struct Row {
  std::string matrix, file;
  int bs = 0;
  index_t block_rows = 0, nnzb = 0;
  Config config;
  std::string kind, label;
  index_t jacobi_blocks = 0;
  int largest_block = 0;
  bool setup_ok = true;
  std::string setup_message;
  double first_setup_ms = nan_v;
  Timing setup, apply, solve;
  SolveStatus status;
  double rel_residual = nan_v;

  // Natural and agglomerated blocks: each Jacobi block holds whole cell blocks.
  bool should_converge() const { return kind == "natural" || kind == "agglomerated"; }
  // See verification_text.
  bool verified() const
  {
    if (!setup_ok) return true;
    if (status.reason == SolveReason::not_finite && should_converge()) return false;
    return !status.converged || rel_residual <= residual_slack * rel_tol;
  }
};

// One Jacobian on the device with the right-hand side of the section's solves.
class Problem {
 public:
  Problem(const ExecPtr& e, const TestMatrix& m)
      : e_(e),
        A_(e, m.bs, m.pattern),
        b_(e, A_.scalar_rows()),
        x_(e, A_.scalar_rows()),
        z_(e, A_.scalar_rows()),
        r_(e, A_.scalar_rows()),
        solver_(e, {KrylovMethod::bicgstab, rel_tol, 0.0, max_iterations, 30})
  {
    A_.values().copy_from_host(m.values);
    b_.copy_from_host(random_values(A_.scalar_rows(), rhs_seed));
    b_norm_ = norm2(b_);
  }

  // Fills the measured fields of row (see timing_text).
  void measure(Row& row, int warmup, int reps)
  {
    const auto s = e_->stream();
    std::unique_ptr<Preconditioner> M;
    if (row.config.identity) {
      M = std::make_unique<IdentityPreconditioner>();
    } else {
      auto bj = std::make_unique<BlockJacobiPreconditioner>(e_, row.config.bj);
      const auto t0 = std::chrono::steady_clock::now();
      const SetupStatus first = bj->setup(A_);
      e_->synchronize();
      row.first_setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      row.jacobi_blocks = bj->num_blocks();
      row.largest_block = bj->largest_block();
      SetupStatus last = first;
      if (first.ok) row.setup = time_on_stream(s, warmup, reps, [&] { last = bj->setup(A_); });
      if (!last.ok) {
        row.setup_ok = false;
        row.setup_message = last.message;
        return;
      }
      M = std::move(bj);
    }
    row.apply = time_on_stream(s, warmup, reps, [&] { M->apply(b_, z_); });
    // The baselines usually run to max_iterations: one timed solve, no warm-up, keeps them affordable.
    const bool baseline = row.config.identity || row.config.bj.max_block_size == 1;
    row.solve = time_on_stream(
        s, baseline ? 0 : solve_warmup, baseline ? 1 : solve_reps, [&] { row.status = solver_.solve(A_, *M, b_, x_); },
        [&] { fill(x_, 0.0); });
    row.rel_residual = benchutil::relative_residual(A_, b_, x_, r_, b_norm_);
  }

 private:
  ExecPtr e_;
  BsrMatrix A_;
  Vector b_, x_, z_, r_;
  double b_norm_ = 0;
  KrylovSolver solver_;
};

// ---- report -------------------------------------------------------------------------------------
std::string row_text(const Row& r)
{
  const bool bj = !r.config.identity;
  auto or_dashes = [&](auto v) { return bj ? fmt::format("{}", v) : std::string("--"); };
  std::string text = fmt::format("{:<16} {:<16} {:<13} {:>8} {:>7} {} {} {} {} {}", r.matrix, r.label,
                                 or_dashes(to_string(r.config.bj.factorization)), or_dashes(r.jacobi_blocks),
                                 or_dashes(r.largest_block), ms(r.first_setup_ms), ms(r.setup.median_ms),
                                 ms(r.setup.min_ms), ms(r.setup.max_ms), ms(r.apply.median_ms));
  if (!r.setup_ok) return text + "  SETUP FAILED: " + r.setup_message;
  text += fmt::format(" {:>6} {:>9.2e} {:>10.3f}  {}", r.status.iterations, r.rel_residual, r.solve.median_ms,
                      to_string(r.status.reason));
  return r.verified() ? text : text + "  VERIFICATION FAILED";
}

Json row_json(const Row& r)
{
  const bool bj = !r.config.identity;
  // Block-Jacobi only: the counts are null for "none" (its factorization "").
  return {{"matrix", r.matrix},
          {"file", r.file},
          {"block_size", r.bs},
          {"block_rows", r.block_rows},
          {"nonzero_blocks", r.nnzb},
          {"preconditioner", r.kind},
          {"max_block_size", bj ? Json(r.config.bj.max_block_size) : Json(nullptr)},
          {"factorization", bj ? to_string(r.config.bj.factorization) : std::string_view()},
          {"jacobi_blocks", bj ? Json(r.jacobi_blocks) : Json(nullptr)},
          {"largest_block", bj ? Json(r.largest_block) : Json(nullptr)},
          {"setup_ok", r.setup_ok},
          {"setup_message", r.setup_message},
          {"first_setup_ms", r.first_setup_ms},
          {"setup", timing_json(r.setup)},
          {"apply", timing_json(r.apply)},
          {"solve",
           {{"method", "bicgstab"},
            {"iterations", r.setup_ok ? Json(r.status.iterations) : Json(nullptr)},
            {"converged", r.status.converged},
            {"reason", r.setup_ok ? to_key(r.status.reason) : "setup_failed"},
            {"relative_residual", r.rel_residual},
            {"time", timing_json(r.solve)}}},
          {"should_converge", r.should_converge()},
          {"verified", r.verified()}};
}

}  // namespace

void write_block_jacobi_configuration(Json& j, const BatchedBenchOptions& o)
{
  j["block_jacobi"] = {{"jacobians", o.jacobians},
                       {"rel_tol", rel_tol},
                       {"max_iterations", max_iterations},
                       {"solve_warmup", solve_warmup},
                       {"solve_reps", solve_reps},
                       {"rhs_seed", rhs_seed},
                       {"matrices", matrices_text},
                       {"configurations", configurations_text},
                       {"timing", timing_text},
                       {"solve", solve_text},
                       {"verification", verification_text}};
}

bool run_block_jacobi_section(const ExecPtr& e, const BatchedBenchOptions& o, const std::vector<TestMatrix>& jacobians,
                              Json& j, const Log& log)
{
  log("block-Jacobi: BiCGSTAB on A x = b, b uniform in [-1, 1) (seed 4242), x0 = 0, stop at "
      "||b - A x|| <= 1e-6 ||b|| or 5000 iterations; first_ms: symbolic + numeric setup; setup_ms: numeric setup "
      "(median / min / max of --reps); apply_ms and solve_ms: medians; rel_resid: ||b - A x|| / ||b|| recomputed");
  const std::string header =
      fmt::format("{:<16} {:<16} {:<13} {:>8} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>9} {:>10}  {}", "matrix",
                  "preconditioner", "factorization", "blocks", "largest", "first_ms", "setup_ms", "min_ms", "max_ms",
                  "apply_ms", "iters", "rel_resid", "solve_ms", "status");
  bool ok = true;
  Json rows = Json::array();
  for (std::size_t i = 0; i < jacobians.size(); ++i) {
    const TestMatrix& m = jacobians[i];
    log(fmt::format("{} ({}): {} block rows of {}x{}, {} blocks", m.name, o.jacobians[i], m.pattern.nrows, m.bs, m.bs,
                    m.pattern.nnzb()));
    log(header);
    Problem problem(e, m);
    for (const Config& c : configurations(m.bs)) {
      Row r;
      r.matrix = m.name, r.file = o.jacobians[i], r.bs = m.bs;
      r.block_rows = m.pattern.nrows, r.nnzb = m.pattern.nnzb();
      r.config = c, r.kind = kind(c, m.bs), r.label = label(c, m.bs);
      problem.measure(r, o.warmup, o.reps);
      ok = ok && r.verified();
      log(row_text(r));
      rows.push_back(row_json(r));
    }
  }
  j["block_jacobi"] = std::move(rows);
  return ok;
}

}  // namespace blockres::benchutil
