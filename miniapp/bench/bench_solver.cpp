// `blockres bench solver`: the Krylov methods (CG, BiCGSTAB, GMRES(30), FGMRES(30), IDR(4)) on 3D 7-point
// block stencils (1M cells per block size by default) and on simulator Jacobians. Two sections per matrix:
//  - iteration cost (stencils): fixed-iteration unpreconditioned solves, the time per iteration against the
//    bytes an iteration must move (bytes_per_iteration) at the device-to-device copy bandwidth measured in
//    the same run, with the acceptance (<= 1.3x for BiCGSTAB and GMRES(30) on a >= 1M-cell bs 4
//    stencil), and the phase split of one profiled solve;
//  - time to solution: every method with every preconditioner, chosen by the bench presets
//    (miniapp/bench/preconditioner_presets.hpp; by default none, point Jacobi, block-Jacobi, ILU(0) exact,
//    ILU(0) + ISAI(1), general ISAI(1)), setup and solve times, the residual recomputed here.
// CG needs a symmetric positive definite matrix: on the stencils it runs on a symmetric variant with the same
// pattern (so the same bytes per iteration); on the Jacobians it runs on the matrix as it is, marked nonsymmetric.
#include "miniapp/bench/bench.hpp"

#include "linalg/krylov.hpp"
#include "linalg/preconditioners/none/none.hpp"
#include "linalg/preconditioners/registry.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/bench/bench_common.hpp"
#include "miniapp/bench/preconditioner_presets.hpp"
#include "miniapp/io/tuning_cache.hpp"
#include "miniapp/io/version.hpp"
#include "miniapp/run/backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace blockres {

namespace {

using benchutil::ms;
using benchutil::nan_v;
using benchutil::TestMatrix;
using benchutil::Timing;
using benchutil::time_on_stream;

// ---- what is measured (the texts below quote these values) -------------------------------------------
constexpr std::uint64_t rhs_seed = 4242;
constexpr int restart = 30;                     // GMRES(30), FGMRES(30)
constexpr int idr_s = 4;                        // IDR(4)
constexpr double residual_slack = 1.01;         // a converged solve fails when its true residual > 1.01 rel_tol
constexpr double acceptance_ratio = 1.3;        // issue 6: measured / (bytes / copy bandwidth)
constexpr int acceptance_bs = 4;
// A fixed-iteration solve's relative residual after its last iteration against the CPU backend's on the same
// matrix and right-hand side: |gpu - cpu| <= cpu_check_rel cpu + cpu_check_abs.
constexpr double cpu_check_rel = 1e-2, cpu_check_abs = 1e-10;
constexpr index_t acceptance_cells = 1000000;

constexpr const char* matrix_text =
    "stencil7_bsB: 3D 7-point stencil on an s x s x s grid (cells x fastest, s = --side) with B x B blocks; bench "
    "isai's nonsymmetric convection-diffusion-like matrix: the block to the x-1 (x+1) neighbour is -(1 + 0.5) I "
    "(-(1 - 0.5) I), to the y and z neighbours -I, each plus 0.05 |coefficient| R with R uniform in [-1, 1) (seed "
    "2026); the diagonal block is d I + 0.1 R' (R' zero on the diagonal), d = 6 (1 + 0.05 B) + 0.1 B + 0.05, so "
    "every row is strictly diagonally dominant (by at least 0.15). Symmetric variant (CG only): the same pattern and "
    "d, every neighbour block -I + 0.05 S and the diagonal block d I + 0.1 S' (S' zero on the diagonal), S and S' "
    "uniform in [-1, 1) (seed 2027) drawn once per unordered pair of cells (of block entries for S'), so that block "
    "(j, i) = block (i, j)^T: symmetric and strictly diagonally dominant with a positive diagonal, hence positive "
    "definite. Jacobians: files written by 'blockres run DECK --write-jacobian FILE', values as stored; they are "
    "nonsymmetric and CG runs on them as they are (reported as A = nonsym).";
constexpr const char* iteration_text =
    "Stencils only. Unpreconditioned solves (preconditioner none, which the solver skips: is_identity) of A x = b, b "
    "uniform in [-1, 1) (seed 4242), x0 = 0, rel_tol = abs_tol = 0, so no method stops before max_iterations = "
    "--iterations (BiCGSTAB: --iterations / 2, two products with A per iteration); --iterations is a multiple of 30, "
    "so GMRES(30) and FGMRES(30) end on a full restart cycle and IDR(4) on a full cycle of s + 1 = 5. CG on the "
    "symmetric variant. One KrylovSolver per method and matrix: --warmup untimed solves (workspace, IDR's shadow "
    "space), then --reps timed ones, CUDA events on the executor's stream around KrylovSolver::solve (x reset outside "
    "the events; the solver synchronises on its reductions, so the events bracket the whole call); ms_per_iteration = "
    "solve time / iterations done, median / min / max over the reps. The time includes the work bytes_per_iteration "
    "leaves out (the initial and final explicit residuals, GMRES's restart residuals and solution updates). A solve "
    "that stops early (breakdown, NaN) is reported with the iterations it did. profile: one more solve with the "
    "solver's profiling on (KrylovProfile: CUDA events per phase): spmv, precond, orthogonalization, other = total "
    "minus those three, in % of the profiled total.";
constexpr const char* byte_text =
    "bytes_per_iteration (linalg/krylov.hpp): the bytes one unpreconditioned iteration of the method must move as "
    "implemented (fused kernels counted once), for vectors of n = scalar rows doubles and matrix bytes = 8 B^2 nnzb "
    "(values) + 4 nnzb (column indices) + 4 (block rows + 1) (row pointers); GMRES / FGMRES averaged over a restart "
    "cycle, IDR(s) over a cycle of s + 1 iterations. copy_ms = bytes / the device-to-device copy bandwidth of this "
    "run (cudaMemcpyAsync of 2 GiB, read + write); ratio = ms_per_iteration / copy_ms; fraction_of_copy_bandwidth = "
    "1 / ratio. A bytes_per_iteration of 0 (not provided by this build) leaves bytes, ratio and fraction null.";
constexpr const char* acceptance_text =
    "target: ratio <= 1.3 for BiCGSTAB and GMRES(30) on a 7-point stencil with block size 4 and at least 1000000 "
    "cells, evaluated on every such stencil of the run (none in the run: not evaluated). The verdict is reported; it "
    "changes the exit code only with --strict.";
constexpr const char* solve_text =
    "A x = b with b as above, x0 = 0, right preconditioning, stop at ||b - A x||_2 <= rel_tol ||b||_2 (--tol, "
    "confirmed by an explicit residual) or max_iterations (--max-iterations; iterations as counted in "
    "linalg/krylov.hpp: a BiCGSTAB iteration has two preconditioned products with A, the others one). CG on the "
    "symmetric variant of each stencil. Preconditioners: the bench presets, each a set of the deck's "
    "[solver.linear.preconditioner] keys read as a deck is (each row's preconditioner_toml; the same labels as "
    "bench model). By default none; jacobi: point Jacobi (type jacobi, blocks of 1 row); block_jacobi: the natural "
    "BSR blocks, automatic factorisation (Gauss-Jordan inverses for blocks up to 32 rows, LU above); ilu0: ILU(0) of "
    "the scalar view, exact level-scheduled triangular solves; ilu0_isai: ILU(0) with the ISAI(1) of both factors, "
    "block view; isai: the general ISAI(1) of A, block view. A preconditioner is symmetric (whenever A is) when it "
    "is none, jacobi, block_jacobi or ILU(0) with exact solves of its exact factors (symmetric_preconditioner); the "
    "ISAI variants are not, so CG's theory does not cover CG with "
    "them. One solver per method and matrix, its workspace allocated by a 2-iteration solve first, as in a Newton "
    "loop. One preconditioner object per preconditioner and matrix: first_setup_ms = its first setup (symbolic + "
    "numeric) on the nonsymmetric values, host clock, synchronised, shown on each of its rows; setup_ms = one later "
    "numeric setup (CUDA events), done again for CG on the symmetric values; solve_ms = one solve (CUDA events); "
    "time_to_solution_ms = setup_ms + solve_ms. relative_residual = ||b - A x||_2 / ||b||_2 recomputed by the "
    "benchmark after the solve. device_memory_gb: device memory in use after the setup (cudaMemGetInfo: the matrix, "
    "its symmetric variant, the vectors, every method's solver workspace and this preconditioner).";
constexpr const char* verification_text =
    "time to solution: a row fails when it reports convergence while the recomputed relative residual exceeds 1.01 "
    "rel_tol (or is not finite), or when, on a stencil matrix (strictly diagonally dominant; the symmetric positive "
    "definite variant for CG), a solve whose preconditioner set up ends in NaN/Inf (except CG with a preconditioner "
    "that is not symmetric: the ISAI variants). On the Jacobians, not converging and diverging to NaN/Inf are results, not failures. "
    "iteration cost: a fixed-iteration solve that ends in NaN/Inf fails, and so does one whose iterations or relative "
    "residual after its last iteration differ from the CPU backend's same solve (same matrix, right-hand side, method "
    "and iteration count; |gpu - cpu| <= 1e-2 cpu + 1e-10), checked on matrices up to --cpu-check-gb (default 4) of "
    "values and indices. The acceptance target is printed as PASS/FAIL; with --strict a FAIL also fails the run. "
    "A preconditioner whose setup fails or "
    "throws (singular block, a limit of its kernels, device memory) is reported with the message and does not fail "
    "the run. Exit code 1 when any row fails.";

// ---- methods and preconditioners ------------------------------------------------------------------
struct Method {
  KrylovMethod kind;
  const char* key;    // --methods
  const char* label;  // tables and report
  GemvKernel gemv = GemvKernel::fused;  // GMRES/FGMRES Gram–Schmidt (KrylovConfig's default)
};
// The iteration-cost section also runs GMRES and FGMRES with the Gram–Schmidt step as five cuBLAS
// GEMVs (the peer) and as five own tall-skinny GEMVs, beside the default's three fused passes.
constexpr Method other_gemv_methods[] = {{KrylovMethod::gmres, "gmres", "gmres(30) cublas-gemv", GemvKernel::cublas},
                                         {KrylovMethod::gmres, "gmres", "gmres(30) own-gemv", GemvKernel::own},
                                         {KrylovMethod::fgmres, "fgmres", "fgmres(30) cublas-gemv", GemvKernel::cublas},
                                         {KrylovMethod::fgmres, "fgmres", "fgmres(30) own-gemv", GemvKernel::own}};
constexpr Method all_methods[] = {{KrylovMethod::cg, "cg", "cg"},
                                  {KrylovMethod::bicgstab, "bicgstab", "bicgstab"},
                                  {KrylovMethod::gmres, "gmres", "gmres(30)"},
                                  {KrylovMethod::fgmres, "fgmres", "fgmres(30)"},
                                  {KrylovMethod::idr, "idr", "idr(4)"}};

const Method& method_of(const std::string& key)
{
  for (const auto& m : all_methods)
    if (key == m.key) return m;
  throw std::runtime_error(fmt::format("bench solver: unknown method '{}' (cg, bicgstab, gmres, fgmres, idr)", key));
}

KrylovConfig config_of(const Method& m, double rel_tol, int max_iterations)
{
  KrylovConfig kc;
  kc.method = m.kind, kc.rel_tol = rel_tol, kc.abs_tol = 0.0, kc.max_iterations = max_iterations;
  kc.restart = restart, kc.idr_s = idr_s;
  kc.gemv = m.gemv;
  return kc;
}

// ---- matrices ---------------------------------------------------------------------------------------
// Bytes of A read by one SpMV: values, column indices, row pointers.
double matrix_bytes(const BsrPattern& p, int bs)
{
  return double(p.nnzb()) * (8.0 * bs * bs + 4.0) + 4.0 * (double(p.nrows) + 1);
}

double device_memory_in_use_gb()
{
  std::size_t free = 0, total = 0;
  BLOCKRES_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return double(total - free) / 1e9;
}

double device_memory_free_gb()
{
  std::size_t free = 0, total = 0;
  BLOCKRES_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return double(free) / 1e9;
}

// ---- report rows ------------------------------------------------------------------------------------
struct MatrixInfo {
  std::string name, file;  // file: the Jacobian's path (empty for stencils)
  int bs = 0;
  bool stencil = false;
  index_t block_rows = 0, nnzb = 0;
  double bytes = 0;
};

struct IterationRow {
  std::string matrix;
  int bs = 0;
  index_t block_rows = 0;
  bool symmetric = false;  // A's values: the symmetric variant (CG)
  const Method* method = nullptr;
  int requested = 0;
  bool varied = false;  // the timed solves did not all do the same number of iterations
  SolveStatus status;   // of the last timed solve
  Timing per_iteration;
  double bytes = nan_v;  // bytes_per_iteration (nan: not provided)
  double copy_gbs = nan_v;
  KrylovProfile profile;
  // The CPU backend's fixed-iteration solve (cpu_check_text): its iterations and relative residual (NaN: not
  // run, see cpu_note).
  int cpu_iterations = 0;
  double cpu_rel_residual = nan_v;
  std::string cpu_note;

  double rel_residual() const
  {
    return status.initial_residual > 0 ? status.residual / status.initial_residual : status.residual;
  }
  bool cpu_checked() const { return std::isfinite(cpu_rel_residual); }
  bool cpu_agrees() const
  {
    return !cpu_checked() || (cpu_iterations == status.iterations &&
                              std::abs(rel_residual() - cpu_rel_residual) <= cpu_check_rel * cpu_rel_residual + cpu_check_abs);
  }
  bool stopped_early() const { return status.iterations < requested; }
  double copy_ms() const { return bytes / (copy_gbs * 1e9) * 1e3; }
  double ratio() const { return per_iteration.median_ms / copy_ms(); }
  bool acceptance_applies() const
  {
    return (method->kind == KrylovMethod::bicgstab || method->kind == KrylovMethod::gmres) && bs == acceptance_bs &&
           block_rows >= acceptance_cells && method->gemv == KrylovConfig{}.gemv;  // the default GEMV only
  }
  // "PASS", "FAIL", "--" (criterion not applicable) or "n/a" (no byte count).
  std::string acceptance() const
  {
    if (!acceptance_applies()) return "--";
    if (!std::isfinite(ratio())) return "n/a";
    return ratio() <= acceptance_ratio ? "PASS" : "FAIL";
  }
  bool verified() const { return status.reason != SolveReason::not_finite && cpu_agrees(); }
  double phase_pct(double seconds) const
  {
    return profile.total_seconds > 0 ? 100.0 * seconds / profile.total_seconds : nan_v;
  }
};

struct SolveRow {
  std::string matrix;
  bool stencil = false;
  bool symmetric = false;  // A's values: the symmetric variant (CG on a stencil)
  const Method* method = nullptr;
  std::string preconditioner, preconditioner_name;  // key (label) and Preconditioner::name()
  std::string preconditioner_toml;                  // its deck keys (bench::BenchPreconditioner::toml)
  bool symmetric_preconditioner = true;
  bool setup_ok = true;
  std::string message;
  double first_ms = nan_v, setup_ms = nan_v, solve_ms = nan_v;
  SolveStatus status;
  double rel_residual = nan_v;
  double memory_gb = nan_v;

  double total_ms() const { return setup_ms + solve_ms; }
  bool finite() const { return status.reason != SolveReason::not_finite && std::isfinite(rel_residual); }
  // Where NaN/Inf can only be a defect (verification_text).
  bool must_stay_finite() const
  {
    return stencil && (method->kind != KrylovMethod::cg || symmetric_preconditioner);
  }
  bool verified(double rel_tol) const
  {
    if (!setup_ok) return true;
    if (status.converged && !(rel_residual <= residual_slack * rel_tol)) return false;
    return finite() || !must_stay_finite();
  }
};

// ---- one matrix on the device ---------------------------------------------------------------------------
class Problem {
 public:
  // A stencil (its values, and the symmetric variant when `symmetric_variant`, generated here, so the host holds
  // at most one set of values at a time) or a Jacobian (its stored values).
  Problem(const ExecPtr& e, const TestMatrix& m, bool stencil, bool symmetric_variant)
      : e_(e), A_(e, m.bs, m.pattern), b_(e, A_.scalar_rows()), x_(e, A_.scalar_rows()), r_(e, A_.scalar_rows()),
        matrix_bytes_(matrix_bytes(m.pattern, m.bs))
  {
    if (stencil) {
      A_.values().copy_from_host(benchutil::stencil_values(m.pattern, m.bs, false));
      if (symmetric_variant) {
        other_ = Array<double>(e, A_.values().size());
        other_.copy_from_host(benchutil::stencil_values(m.pattern, m.bs, true));
      }
    } else {
      A_.values().copy_from_host(m.values);
    }
    b_.copy_from_host(benchutil::random_values(A_.scalar_rows(), rhs_seed));
    b_norm_ = norm2(b_);
  }

  const BsrMatrix& A() const { return A_; }

  // A's values become the symmetric variant (on) or the nonsymmetric matrix again. The variant has A's
  // pattern, so the value arrays are swapped in place: the SpMV plan and every preconditioner's symbolic setup
  // (keyed on the structure) stay valid; a numeric setup must follow.
  void use_symmetric(bool on)
  {
    if (on == symmetric_ || other_.empty()) return;
    std::swap(A_.values(), other_);
    symmetric_ = on;
  }
  bool symmetric() const { return symmetric_; }

  // The iteration-cost row of one method (iteration_text).
  IterationRow iteration_cost(const Method& m, const SolverBenchOptions& o, double copy_gbs)
  {
    IterationRow row;
    row.method = &m;
    row.symmetric = symmetric_;
    row.requested = m.kind == KrylovMethod::bicgstab ? o.iterations / 2 : o.iterations;
    row.copy_gbs = copy_gbs;
    const KrylovConfig kc = config_of(m, 0.0, row.requested);
    const double bytes = bytes_per_iteration(kc, A_.scalar_rows(), matrix_bytes_, A_.exec().is_cuda());
    row.bytes = bytes > 0 ? bytes : nan_v;
    KrylovSolver solver(e_, kc);
    IdentityPreconditioner none;
    for (int i = 0; i < o.warmup; ++i) {
      fill(x_, 0.0);
      (void)solver.solve(A_, none, b_, x_);
    }
    const auto s = e_->stream();
    std::vector<double> per_it;
    for (int i = 0; i < o.reps; ++i) {
      SolveStatus st;
      const double t =
          time_on_stream(s, 0, 1, [&] { st = solver.solve(A_, none, b_, x_); }, [&] { fill(x_, 0.0); }).median_ms;
      if (i > 0 && st.iterations != row.status.iterations) row.varied = true;
      row.status = st;
      per_it.push_back(st.iterations > 0 ? t / st.iterations : nan_v);
    }
    // NaN (a solve that stopped before its first iteration) sorts last.
    std::sort(per_it.begin(), per_it.end(), [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; });
    row.per_iteration = {per_it[per_it.size() / 2], per_it.front(), per_it.back()};
    solver.set_profiling(true);
    solver.reset_profile();
    fill(x_, 0.0);
    (void)solver.solve(A_, none, b_, x_);
    e_->synchronize();
    row.profile = solver.profile();
    // The same fixed-iteration solve on the CPU backend (cpu_check_text).
    const double gb = matrix_bytes_ / 1e9;
    if (gb > o.cpu_check_gb) {
      row.cpu_note = fmt::format("not checked: {:.1f} GB matrix above --cpu-check-gb {}", gb, o.cpu_check_gb);
    } else {
      const ExecPtr cpu = Executor::create_cpu();
      BsrPattern pat;
      pat.nrows = A_.nrows(), pat.ncols = A_.ncols();
      pat.row_ptr = A_.row_ptr().to_host(), pat.col_ind = A_.col_ind().to_host();
      BsrMatrix Ac(cpu, A_.block_size(), pat);
      Ac.values().copy_from_host(A_.values().to_host());
      Vector bc(cpu, std::span<const double>(b_.to_host())), xc(cpu, A_.scalar_rows());
      fill(xc, 0.0);
      KrylovSolver cs(cpu, kc);
      const SolveStatus st = cs.solve(Ac, none, bc, xc);
      row.cpu_iterations = st.iterations;
      row.cpu_rel_residual = st.initial_residual > 0 ? st.residual / st.initial_residual : st.residual;
      if (!std::isfinite(row.cpu_rel_residual)) row.cpu_note = "CPU solve not finite";
    }
    return row;
  }

  // The solver of one method on this matrix, its workspace (and IDR's shadow space) allocated by a 2-iteration
  // solve, so the timed solves reuse it as a Newton loop does.
  KrylovSolver solver(const Method& m, const SolverBenchOptions& o)
  {
    KrylovSolver s(e_, config_of(m, o.rel_tol, 2));
    IdentityPreconditioner none;
    fill(x_, 0.0);
    (void)s.solve(A_, none, b_, x_);
    s.set_config(config_of(m, o.rel_tol, o.max_iterations));
    return s;
  }

  // One timed numeric setup of P on A's current values.
  SetupStatus setup(Preconditioner& P, double& ms_out)
  {
    SetupStatus st;
    ms_out = time_on_stream(e_->stream(), 0, 1, [&] { st = P.setup(A_); }).median_ms;
    return st;
  }

  // One timed solve from x0 = 0 and the residual recomputed (solve_text); fills row.
  void solve(KrylovSolver& solver, const Preconditioner& P, SolveRow& row)
  {
    row.solve_ms = time_on_stream(
                       e_->stream(), 0, 1, [&] { row.status = solver.solve(A_, P, b_, x_); }, [&] { fill(x_, 0.0); })
                       .median_ms;
    row.rel_residual = benchutil::relative_residual(A_, b_, x_, r_, b_norm_);
  }

 private:
  ExecPtr e_;
  BsrMatrix A_;
  Array<double> other_;  // the values not in A_ now (the symmetric variant, or the nonsymmetric ones while swapped)
  bool symmetric_ = false;
  Vector b_, x_, r_;
  double matrix_bytes_;  // read by one SpMV with A (matrix_bytes)
  double b_norm_ = 0;
};

// Runs f, a preconditioner construction or setup; an exception becomes a failed status, so a preconditioner
// that cannot be built for this matrix (a block size above a factorisation's limit, a scalar view beyond 2^31
// entries, device memory) is a row of the report rather than the end of the run.
template <class F>
SetupStatus guarded(F&& f)
{
  try {
    return f();
  } catch (const std::exception& ex) {
    return {false, ex.what()};
  }
}

// ---- terminal text -------------------------------------------------------------------------------------
// v with `decimals` decimals and `suffix`, or "--" when not measured.
std::string fixed(double v, int decimals, const char* suffix = "")
{
  return std::isfinite(v) ? fmt::format("{:.{}f}{}", v, decimals, suffix) : std::string("--");
}

std::string iteration_header(int w)
{
  return fmt::format("{:<{}} {:<6} {:<10} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>6} {:<6} {}", "matrix", w, "A",
                     "method", "iters", "ms/iter", "min", "max", "MB/iter", "copy_ms", "ratio", "%copy", "accept",
                     "status");
}

std::string iteration_text_row(const IterationRow& r, int w)
{
  std::string status = r.stopped_early() ? fmt::format("STOPPED EARLY ({})", to_string(r.status.reason))
                                         : std::string("full");
  if (r.varied) status += ", iterations varied between reps";
  status += r.cpu_checked() ? fmt::format(", residual {:.3e} (CPU {:.3e}{})", r.rel_residual(), r.cpu_rel_residual,
                                          r.cpu_agrees() ? "" : " DISAGREES")
                            : ", " + (r.cpu_note.empty() ? std::string("CPU not checked") : r.cpu_note);
  std::string text =
      fmt::format("{:<{}} {:<6} {:<10} {:>6} {} {} {} {:>9} {:>9} {:>6} {:>6} {:<6} {}", r.matrix, w,
                  r.symmetric ? "sym" : "nonsym", r.method->label, r.status.iterations, ms(r.per_iteration.median_ms),
                  ms(r.per_iteration.min_ms), ms(r.per_iteration.max_ms), fixed(r.bytes / 1e6, 1),
                  fixed(r.copy_ms(), 4), fixed(r.ratio(), 2),
                  fixed(100.0 / r.ratio(), 0, "%"), r.acceptance(), status);
  return r.verified() ? text : text + "  VERIFICATION FAILED";
}

std::string profile_header(int w)
{
  return fmt::format("{:<{}} {:<10} {:>6} {:>10} {:>7} {:>8} {:>7} {:>7}", "matrix", w, "method", "iters", "total_ms",
                     "spmv%", "precond%", "orth%", "other%");
}

std::string profile_text_row(const IterationRow& r, int w)
{
  const KrylovProfile& p = r.profile;
  return fmt::format("{:<{}} {:<10} {:>6} {:>10} {:>7} {:>8} {:>7} {:>7}", r.matrix, w, r.method->label, p.iterations,
                     fixed(p.total_seconds > 0 ? p.total_seconds * 1e3 : nan_v, 2),
                     fixed(r.phase_pct(p.spmv_seconds), 1), fixed(r.phase_pct(p.precond_seconds), 1),
                     fixed(r.phase_pct(p.orthogonalization_seconds), 1),
                     fixed(r.phase_pct(p.other_seconds()), 1));
}

std::string solve_header(int w)
{
  return fmt::format("{:<{}} {:<6} {:<10} {:<15} {:>9} {:>9} {:>10} {:>10} {:>6} {:>9} {:>7}  {}", "matrix", w, "A",
                     "method", "precond", "first_ms", "setup_ms", "solve_ms", "total_ms", "iters", "rel_resid",
                     "mem_GB", "status");
}

std::string solve_text_row(const SolveRow& r, int w, double rel_tol)
{
  std::string text = fmt::format("{:<{}} {:<6} {:<10} {:<15} {} {} ", r.matrix, w, r.symmetric ? "sym" : "nonsym",
                                 r.method->label, r.preconditioner, ms(r.first_ms), ms(r.setup_ms));
  if (!r.setup_ok) return text + "SETUP FAILED: " + r.message;
  text += fmt::format("{:>10.2f} {:>10.2f} {:>6} {:>9.2e} {:>7}  {}", r.solve_ms, r.total_ms(), r.status.iterations,
                      r.rel_residual, fixed(r.memory_gb, 1), to_string(r.status.reason));
  if (r.method->kind == KrylovMethod::cg && !r.symmetric) text += " (CG on a nonsymmetric matrix)";
  else if (r.method->kind == KrylovMethod::cg && !r.symmetric_preconditioner) text += " (nonsymmetric M)";
  return r.verified(rel_tol) ? text : text + "  VERIFICATION FAILED";
}

// ---- JSON report ----------------------------------------------------------------------------------------
struct Report {
  Report(const SolverBenchOptions& opt, std::string dev) : o(opt), device(std::move(dev)) {}

  const SolverBenchOptions& o;
  std::string device;
  double copy_gbs = nan_v;
  Timing copy_t;
  std::vector<MatrixInfo> matrices;  // those begun so far
  std::vector<IterationRow> iteration_rows;
  std::vector<SolveRow> solve_rows;

  bool all_verified() const
  {
    return std::all_of(iteration_rows.begin(), iteration_rows.end(), [](const auto& r) { return r.verified(); }) &&
           std::all_of(solve_rows.begin(), solve_rows.end(), [&](const auto& r) { return r.verified(o.rel_tol); });
  }

  // The acceptance rows (IterationRow::acceptance_applies) and whether each has a verdict and all pass.
  void acceptance(std::vector<const IterationRow*>& rows, bool& evaluated, bool& pass) const
  {
    rows.clear();
    for (const auto& r : iteration_rows)
      if (r.acceptance_applies()) rows.push_back(&r);
    evaluated =
        !rows.empty() && std::all_of(rows.begin(), rows.end(), [](auto* r) { return std::isfinite(r->ratio()); });
    pass = evaluated && std::all_of(rows.begin(), rows.end(), [](auto* r) { return r->ratio() <= acceptance_ratio; });
  }

  Json json(bool complete) const
  {
    Json j;
    write_report_head(j, "solver", o.json_path, device, o.command_line);
    j["complete"] = complete;
    j["strict"] = o.strict;
    Json& cfg = j["configuration"];
    cfg["block_sizes"] = o.block_sizes;
    cfg["side"] = o.side;
    cfg["cells"] = static_cast<long long>(o.side) * o.side * o.side;
    Json& method_labels = cfg["methods"] = Json::array();
    for (const auto& m : o.methods) method_labels.push_back(method_of(m).label);
    cfg["preconditioners"] = o.preconditioners;
    cfg["jacobians"] = o.jacobians;
    cfg["restart"] = restart;
    cfg["idr_s"] = idr_s;
    cfg["iteration_section"] = o.iteration_section;
    cfg["iterations"] = o.iterations;
    cfg["solve_section"] = o.solve_section;
    cfg["rel_tol"] = o.rel_tol;
    cfg["max_iterations"] = o.max_iterations;
    cfg["reps"] = o.reps;
    cfg["warmup"] = o.warmup;
    cfg["rhs_seed"] = rhs_seed;
    cfg["matrices"] = matrix_text;
    cfg["iteration_cost"] = iteration_text;
    cfg["bytes"] = byte_text;
    cfg["acceptance"] = acceptance_text;
    cfg["time_to_solution"] = solve_text;
    cfg["verification"] = verification_text;
    j["copy_bandwidth"] = {{"gb_per_s", copy_gbs}, {"median_ms", copy_t.median_ms}};

    Json& matrix_rows = j["matrices"] = Json::array();
    for (const auto& m : matrices)
      matrix_rows.push_back({{"name", m.name},
                             {"kind", m.stencil ? "stencil7" : "jacobian"},
                             {"file", m.file},
                             {"block_size", m.bs},
                             {"block_rows", m.block_rows},
                             {"nonzero_blocks", m.nnzb},
                             {"matrix_bytes", m.bytes}});

    Json& cost_rows = j["iteration_cost"] = Json::array();
    for (const auto& r : iteration_rows) {
      const KrylovProfile& p = r.profile;
      cost_rows.push_back({{"matrix", r.matrix},
                           {"block_size", r.bs},
                           {"block_rows", r.block_rows},
                           {"values", r.symmetric ? "symmetric" : "nonsymmetric"},
                           {"method", r.method->label},
                           {"iterations_requested", r.requested},
                           {"iterations", r.status.iterations},
                           {"stopped_early", r.stopped_early()},
                           {"iterations_varied", r.varied},
                           {"reason", to_key(r.status.reason)},
                           {"ms_per_iteration", timing_json(r.per_iteration)},
                           {"bytes_per_iteration", r.bytes},
                           {"copy_ms_per_iteration", r.copy_ms()},
                           {"ratio", r.ratio()},
                           {"fraction_of_copy_bandwidth", 1.0 / r.ratio()},
                           {"acceptance", r.acceptance()},
                           {"relative_residual", r.rel_residual()},
                           {"cpu_iterations", r.cpu_checked() ? Json(r.cpu_iterations) : Json(nullptr)},
                           {"cpu_relative_residual", r.cpu_rel_residual},
                           {"cpu_agrees", r.cpu_agrees()},
                           {"cpu_note", r.cpu_note},
                           {"profile",
                            {{"iterations", p.iterations},
                             {"spmv_count", p.spmv_count},
                             {"precond_count", p.precond_count},
                             {"total_ms", p.total_seconds > 0 ? p.total_seconds * 1e3 : nan_v},
                             {"spmv_ms", p.spmv_seconds * 1e3},
                             {"precond_ms", p.precond_seconds * 1e3},
                             {"orthogonalization_ms", p.orthogonalization_seconds * 1e3},
                             {"other_ms", p.total_seconds > 0 ? p.other_seconds() * 1e3 : nan_v},
                             {"spmv_pct", r.phase_pct(p.spmv_seconds)},
                             {"precond_pct", r.phase_pct(p.precond_seconds)},
                             {"orthogonalization_pct", r.phase_pct(p.orthogonalization_seconds)},
                             {"other_pct", r.phase_pct(p.other_seconds())}}},
                           {"verified", r.verified()}});
    }

    std::vector<const IterationRow*> acc;
    bool evaluated = false, pass = false;
    acceptance(acc, evaluated, pass);
    Json acceptance_rows = Json::array();
    for (const auto* r : acc)
      acceptance_rows.push_back(
          {{"matrix", r->matrix}, {"method", r->method->label}, {"ratio", r->ratio()}, {"verdict", r->acceptance()}});
    j["acceptance"] = {{"threshold", acceptance_ratio},
                       {"evaluated", evaluated},
                       {"pass", pass},
                       {"rows", std::move(acceptance_rows)}};

    // time_to_solution_ms = setup_ms + solve_ms, the key bench isai gives the same time (this report wrote
    // total_ms before; the profile's total_ms above is the Krylov solve's own phase total).
    Json& tts_rows = j["time_to_solution"] = Json::array();
    for (const auto& r : solve_rows) {
      Json row = {{"matrix", r.matrix},
                  {"values", r.symmetric ? "symmetric" : "nonsymmetric"},
                  {"method", r.method->label},
                  {"preconditioner", r.preconditioner},
                  {"preconditioner_toml", r.preconditioner_toml},
                  {"preconditioner_name", r.preconditioner_name},
                  {"symmetric_preconditioner", r.symmetric_preconditioner}};
      benchutil::write_solve_outcome(row, r);
      row["device_memory_gb"] = r.memory_gb;
      row["verified"] = r.verified(o.rel_tol);
      tts_rows.push_back(std::move(row));
    }
    j["all_verified"] = all_verified();
    return j;
  }
};

}  // namespace

int run_solver_bench(const SolverBenchOptions& o, const std::function<void(const std::string&)>& log)
{
  benchutil::require_cuda_device("bench solver");
  // Options checked here too (the command line validates them; other callers may not).
  if (o.side < 4 || o.side > 500) throw std::runtime_error(fmt::format("bench solver: side {} outside 4..500", o.side));
  if (o.iterations < 30 || o.iterations % 30 != 0)
    throw std::runtime_error(
        fmt::format("bench solver: --iterations {} is not a positive multiple of 30", o.iterations));
  if (o.reps < 1 || o.warmup < 1) throw std::runtime_error("bench solver: --reps and --warmup must be at least 1");
  if (!(o.rel_tol > 0) || o.max_iterations < 1)
    throw std::runtime_error("bench solver: --tol must be positive and --max-iterations at least 1");
  std::vector<const Method*> methods;
  for (const auto& m : o.methods) methods.push_back(&method_of(m));
  std::vector<bench::BenchPreconditioner> preconditioners;
  for (const auto& p : o.preconditioners) preconditioners.push_back(bench::preconditioner_preset(p));
  const bool with_cg = std::any_of(methods.begin(), methods.end(), [](auto* m) { return m->kind == KrylovMethod::cg; });
  // Jacobians first: a bad file fails before anything is timed. One pattern serves every stencil.
  std::vector<TestMatrix> jacobians;
  for (const auto& path : o.jacobians) jacobians.push_back(benchutil::read_jacobian(path));
  const BsrPattern stencil = o.block_sizes.empty() ? BsrPattern{} : benchutil::stencil_pattern(o.side, 7);

  int w = 14;  // the matrix column
  for (int bs : o.block_sizes) w = std::max<int>(w, static_cast<int>(fmt::format("stencil7_bs{}", bs).size()));
  for (const auto& m : jacobians) w = std::max<int>(w, static_cast<int>(m.name.size()));

  auto e = create_tuned_cuda(0, o.tuning_cache, log);  // the device's tuning cache: one line
  // A stencil whose values (twice with CG: the symmetric variant stays on the device too) cannot fit stops the
  // run here, before anything is generated or timed, rather than with an allocation failure minutes in.
  for (int bs : o.block_sizes) {
    const double need = (with_cg ? 2.0 : 1.0) * 8.0 * bs * bs * double(stencil.nnzb()) + 4.0 * double(stencil.nnzb()) +
                        3.0 * 8.0 * bs * double(stencil.nrows);
    if (need > device_memory_free_gb() * 1e9)
      throw std::runtime_error(fmt::format(
          "bench solver: stencil7_bs{} on {}^3 cells needs {:.1f} GB of device memory for its values{} and vectors "
          "alone, {:.1f} GB are free: use a smaller --side",
          bs, o.side, need / 1e9, with_cg ? " (twice: the symmetric variant for CG)" : "", device_memory_free_gb()));
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  Report rep(o, e->device_name());
  log(fmt::format("blockres {} ({}): bench solver on {}", version_string(), provenance_text(), e->device_name()));
  {
    std::string ms_list, ps_list, bs_list;
    for (auto* m : methods) ms_list += (ms_list.empty() ? "" : ", ") + std::string(m->label);
    for (const auto& p : o.preconditioners) ps_list += (ps_list.empty() ? "" : ", ") + p;
    for (int bs : o.block_sizes) bs_list += (bs_list.empty() ? "" : ", ") + std::to_string(bs);
    log(fmt::format("stencils: bs {} on {}^3 = {} cells; {} Jacobian(s); methods: {}",
                    bs_list.empty() ? "none" : bs_list,
                    o.side, static_cast<long long>(o.side) * o.side * o.side, jacobians.size(), ms_list));
    if (o.iteration_section)
      log(fmt::format("iteration cost: unpreconditioned, {} iterations (BiCGSTAB {}), {} warm-up + {} timed solves",
                      o.iterations, o.iterations / 2, o.warmup, o.reps));
    if (o.solve_section) {
      log(fmt::format("time to solution: preconditioners {}; stop at ||b - A x|| <= {:.0e} ||b|| or {} iterations",
                      ps_list, o.rel_tol, o.max_iterations));
      log("preconditioners (their [solver.linear.preconditioner] keys):");
      for (const auto& pc : preconditioners) log(fmt::format("  {:<16} {}", pc.label, pc.toml));
    }
  }
  rep.copy_gbs = benchutil::copy_bandwidth_gbs(e, size64_t(2) << 30, o.warmup, std::max(o.reps, 5), rep.copy_t);
  log(fmt::format("device-to-device copy: {:.0f} GB/s (2 GiB, read + write, median of {})", rep.copy_gbs,
                  std::max(o.reps, 5)));
  // The report is rewritten (atomically) after every matrix, marked incomplete until the end, so a run cut
  // short still leaves the matrices it finished.
  auto write_report = [&](bool complete) {
    Json j = rep.json(complete);
    write_tuning_json(j, *e);  // the SpMV configurations the rows used so far
    write_json_file(o.json_path, j);
  };

  const std::size_t nstencil = o.block_sizes.size();
  for (std::size_t i = 0; i < nstencil + jacobians.size(); ++i) {
    const bool is_stencil = i < nstencil;
    TestMatrix stencil_matrix;
    if (is_stencil) {
      stencil_matrix.bs = o.block_sizes[i];
      stencil_matrix.name = fmt::format("stencil7_bs{}", stencil_matrix.bs);
      stencil_matrix.pattern = stencil;
    }
    const TestMatrix& m = is_stencil ? stencil_matrix : jacobians[i - nstencil];
    MatrixInfo info{m.name, is_stencil ? "" : o.jacobians[i - nstencil], m.bs, is_stencil, m.pattern.nrows,
                    m.pattern.nnzb(), matrix_bytes(m.pattern, m.bs)};
    rep.matrices.push_back(info);
    log(fmt::format("[{:7.1f} s] {}: {} block rows of {}x{}, {} blocks, {:.3f} GB (values, column indices, row "
                    "pointers){}; {:.1f} GB of device memory free",
                    elapsed(), m.name, m.pattern.nrows, m.bs, m.bs, m.pattern.nnzb(), info.bytes / 1e9,
                    is_stencil ? "" : fmt::format(", from {}", info.file), device_memory_free_gb()));
    Problem p(e, m, is_stencil, is_stencil && with_cg);

    if (o.iteration_section && is_stencil) {
      log(fmt::format("  iteration cost (unpreconditioned, fixed iterations; copy_ms: bytes at {:.0f} GB/s; accept: "
                      "ratio <= {} on bs {} >= {} cells):",
                      rep.copy_gbs, acceptance_ratio, acceptance_bs, acceptance_cells));
      log(iteration_header(w));
      const std::size_t first = rep.iteration_rows.size();
      std::vector<const Method*> iteration_methods;
      for (const Method* meth : methods) {
        iteration_methods.push_back(meth);
        for (const Method& other : other_gemv_methods)
          if (other.kind == meth->kind) iteration_methods.push_back(&other);
      }
      for (const Method* meth : iteration_methods) {
        p.use_symmetric(meth->kind == KrylovMethod::cg);
        IterationRow r = p.iteration_cost(*meth, o, rep.copy_gbs);
        r.matrix = m.name, r.bs = m.bs, r.block_rows = m.pattern.nrows;
        log(iteration_text_row(r, w));
        rep.iteration_rows.push_back(std::move(r));
      }
      p.use_symmetric(false);
      log("  phase split (one profiled solve, % of its total):");
      log(profile_header(w));
      for (std::size_t k = first; k < rep.iteration_rows.size(); ++k) log(profile_text_row(rep.iteration_rows[k], w));
    }

    if (o.solve_section) {
      log(fmt::format("[{:7.1f} s] {}: time to solution", elapsed(), m.name));
      log(solve_header(w));
      // Every method's solver lives for the whole matrix (workspace allocated once); CG last, since its rows
      // switch A to the symmetric variant and back.
      std::vector<std::pair<const Method*, KrylovSolver>> solvers;
      for (const Method* meth : methods)
        if (meth->kind != KrylovMethod::cg) solvers.emplace_back(meth, p.solver(*meth, o));
      for (const Method* meth : methods)
        if (meth->kind == KrylovMethod::cg) solvers.emplace_back(meth, p.solver(*meth, o));
      const double solve_start = elapsed();
      const std::size_t first_row = rep.solve_rows.size();
      for (const auto& pc : preconditioners) {
        std::unique_ptr<Preconditioner> P;
        double first_ms = nan_v, steady_ms = nan_v;
        SetupStatus st = guarded([&] {
          P = make_preconditioner(e, pc.spec);
          const auto h0 = std::chrono::steady_clock::now();
          const SetupStatus s = P->setup(p.A());
          e->synchronize();
          first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count();
          return s;
        });
        if (st.ok) st = guarded([&] { return p.setup(*P, steady_ms); });
        for (auto& [meth, solver] : solvers) {
          SolveRow r;
          r.matrix = m.name, r.stencil = is_stencil, r.method = meth;
          r.preconditioner = pc.label, r.preconditioner_toml = pc.toml;
          r.symmetric_preconditioner = bench::symmetric_preconditioner(pc.spec);
          r.preconditioner_name = P ? P->name() : pc.label;
          r.first_ms = first_ms, r.setup_ms = steady_ms;
          SetupStatus rs = st;
          if (meth->kind == KrylovMethod::cg && st.ok) {  // a new numeric setup on the values CG runs on
            p.use_symmetric(true);
            rs = guarded([&] { return p.setup(*P, r.setup_ms); });
          }
          r.symmetric = p.symmetric();
          if (!rs.ok) {
            r.setup_ok = false, r.message = rs.message;
          } else {
            r.memory_gb = device_memory_in_use_gb();
            p.solve(solver, *P, r);
          }
          p.use_symmetric(false);
          log(solve_text_row(r, w, o.rel_tol));
          rep.solve_rows.push_back(std::move(r));
        }
      }
      // The fastest converged row of this matrix, for the summary line.
      const SolveRow* best = nullptr;
      for (std::size_t k = first_row; k < rep.solve_rows.size(); ++k) {
        const SolveRow& r = rep.solve_rows[k];
        if (r.setup_ok && r.status.converged && (!best || r.total_ms() < best->total_ms())) best = &r;
      }
      if (best)
        log(fmt::format("  fastest converged: {} + {} ({}), {:.2f} ms (setup {:.2f} + solve {:.2f}); section {:.1f} s",
                        best->method->label, best->preconditioner, best->symmetric ? "sym" : "nonsym",
                        best->total_ms(), best->setup_ms, best->solve_ms, elapsed() - solve_start));
      else
        log(fmt::format("  no method converged; section {:.1f} s", elapsed() - solve_start));
    }
    write_report(false);
  }

  // ---- summary --------------------------------------------------------------------------------------
  if (o.iteration_section && nstencil > 0) {
    std::vector<const IterationRow*> acc;
    bool evaluated = false, pass = false;
    rep.acceptance(acc, evaluated, pass);
    log(fmt::format("acceptance (target: ms per iteration / (bytes_per_iteration / copy bandwidth) <= {} for "
                    "bicgstab and gmres(30) on a bs {} stencil with >= {} cells):",
                    acceptance_ratio, acceptance_bs, acceptance_cells));
    if (acc.empty()) log("  not evaluated: no such stencil in this run (--bs 4 with --side >= 100)");
    for (const auto* r : acc)
      log(fmt::format("  {} {:<10} ratio {} {}", r->matrix, r->method->label, fixed(r->ratio(), 2),
                      r->acceptance() == "n/a" ? "n/a (bytes_per_iteration returned 0)" : r->acceptance()));
  }
  const bool ok = rep.all_verified();
  bool accepted = true;
  if (o.iteration_section && nstencil > 0) {
    std::vector<const IterationRow*> acc;
    bool evaluated = false;
    rep.acceptance(acc, evaluated, accepted);
    accepted = accepted || !evaluated;  // a target this run could not evaluate is not a miss
  }
  write_report(true);
  log(fmt::format("[{:7.1f} s] report written to {}{}{}", elapsed(), o.json_path,
                  ok ? "" : " (SOME RESULTS FAILED VERIFICATION)",
                  accepted ? "" : o.strict ? " (ACCEPTANCE FAILED: --strict)" : " (acceptance failed)"));
  return !ok || (o.strict && !accepted) ? 1 : 0;
}

}  // namespace blockres
