// blockres command line: run, bench, verify, --version, --help; every error -> one line, exit 1
// (verify: 2, its own convention: 0 pass, 1 fail, 2 error).
#include "linalg/allocation.hpp"
#include "linalg/executor.hpp"
#include "miniapp/run/backend.hpp"
#include "miniapp/bench/bench.hpp"
#include "miniapp/io/deck.hpp"
#include "miniapp/io/h5.hpp"
#include "input/quote.hpp"
#include "miniapp/run/restart.hpp"
#include "miniapp/run/run_control.hpp"
#include "miniapp/run/simulator.hpp"
#include "miniapp/verify/verify.hpp"
#include "miniapp/run/threads.hpp"
#include "miniapp/io/version.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace {

void log_line(const std::string& s)
{
  std::fputs(s.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

[[noreturn]] void fail(const std::string& msg, int code = 1)
{
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  std::exit(code);
}

}  // namespace

int main(int argc, char** argv)
{
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);

  CLI::App app{"blockres: a reservoir-style Newton-Krylov mini-application (block-sparse GPU solvers)", "blockres"};
  app.set_version_flag("--version", fmt::format("blockres {} (git {}, CUDA backend {})", blockres::version_string(),
                                                blockres::git_commit(),
                                                blockres::Executor::built_with_cuda() ? "built" : "not built"));
  app.require_subcommand(1);

  std::string deck, backend = "auto", output_dir;
  std::vector<std::string> overrides;
  int threads = 0;  // --threads (run, verify, bench): 0 = the affinity mask and cgroup quota
  auto add_threads = [&](CLI::App* c) {
    c->add_option("--threads", threads,
                  "CPU threads (OpenMP); default: the CPUs this process may use (affinity mask, cgroup quota) or "
                  "OMP_NUM_THREADS")
        ->check(CLI::Range(1, 4096));
  };
  auto* run = app.add_subcommand("run", "run an input deck and write <output>/<name>.h5");
  add_threads(run);
  run->add_option("deck", deck, "TOML input deck")->required();
  run->add_option("--backend", backend, "auto (CUDA when a device is present), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  run->add_option("--output", output_dir, "output directory (default: the deck's output.directory)");
  run->add_option("--set", overrides, "override a deck key: --set dotted.key=value (repeatable)")
      ->allow_extra_args(false);  // `--set k=v DECK`: DECK is the deck, not a second override
  bool verbose = false;
  run->add_flag("-v,--verbose", verbose, "log every Newton iteration (residual norms, linear iterations)");
  std::string jacobian_path;
  run->add_option("--write-jacobian", jacobian_path, "write the last assembled Jacobian to this HDF5 file");
  std::string restart_file;
  long restart_report = -1;
  auto* restart_opt = run->add_option("--restart", restart_file,
                                      "continue from a report of this result file (a NAME.h5 or NAME.checkpoint.h5)");
  run->add_option("--restart-report", restart_report, "the report row to continue from (0 = t = 0; default: the last)")
      ->check(CLI::Range(0L, 1L << 40))
      ->needs(restart_opt);

  auto* bench = app.add_subcommand("bench", "performance benchmarks with verified results (CUDA device needed, "
                                                       "except bench amg)");
  bench->require_subcommand(1);
  blockres::BsrmvBenchOptions bo;
  auto* bsrmv = bench->add_subcommand("bsrmv", "BSR SpMV against cuSPARSE on stencil, power-law and simulator matrices");
  add_threads(bsrmv);
  bsrmv->add_option("--json", bo.json_path, "report file (JSON)")->capture_default_str();
  bsrmv->add_flag("--strict", bo.strict, "a missed issue target (printed as FAIL) also fails the run (exit code 1); failed checks always do");
  bsrmv->add_option("--bs", bo.block_sizes, "block sizes (1..64)")->delimiter(',')->check(CLI::Range(1, 64));
  bsrmv->add_option("--stencils", bo.stencils, "stencils: 7 and/or 27")->delimiter(',')->check(CLI::IsMember({7, 27}));
  bsrmv->add_option("--powerlaw-bs", bo.powerlaw_block_sizes, "block sizes of the power-law matrix (empty: none)")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  bsrmv->add_option("--size-gb", bo.matrix_gb, "bytes of block values + indices per stencil matrix, in GB")
      ->check(CLI::Range(0.001, 64.0))
      ->capture_default_str();
  bsrmv->add_option("--reps", bo.reps, "timed repetitions (median reported)")->check(CLI::Range(3, 100000))->capture_default_str();
  bsrmv->add_option("--warmup", bo.warmup, "untimed repetitions first")->check(CLI::Range(0, 1000))->capture_default_str();
  bsrmv->add_option("--jacobian", bo.jacobians, "Jacobian file from 'blockres run --write-jacobian' (repeatable)")
      ->check(CLI::ExistingFile);
  bsrmv->add_flag("--tune", bo.tune, "time every compiled kernel configuration per block size first");

  blockres::BatchedBenchOptions bb;
  auto* batched = bench->add_subcommand(
      "batched",
      "batched Gauss-Huard, Gauss-Jordan and LU against cuBLAS getrf/getrs/matinvBatched; block-Jacobi preconditioner "
      "setup, apply and BiCGSTAB iterations on simulator Jacobians");
  add_threads(batched);
  batched->add_option("--json", bb.json_path, "report file (JSON)")->capture_default_str();
  batched->add_flag("--strict", bb.strict, "a missed issue target (printed as FAIL) also fails the run (exit code 1); failed checks always do");
  batched
      ->add_option("--sizes", bb.sizes,
                   "block sizes (1..512; Gauss-Huard, Gauss-Jordan and LU up to 32, LU only above; default 1..32, "
                   "48, 64, 128, 256, 512)")
      ->delimiter(',')
      ->check(CLI::Range(1, 512));
  batched->add_option("--batch-gb", bb.batch_gb, "cap on the bytes of the blocks of one batch, in GB")
      ->check(CLI::Range(0.0001, 32.0))
      ->capture_default_str();
  batched->add_option("--max-blocks", bb.max_blocks, "cap on the blocks of one batch")
      ->check(CLI::Range(1LL, 1LL << 28))
      ->capture_default_str();
  batched->add_option("--reps", bb.reps, "timed repetitions (median reported)")
      ->check(CLI::Range(3, 100000))
      ->capture_default_str();
  batched->add_option("--warmup", bb.warmup, "untimed repetitions first")->check(CLI::Range(0, 1000))->capture_default_str();
  batched
      ->add_option("--jacobian", bb.jacobians,
                   "Jacobian file from 'blockres run DECK --write-jacobian FILE' for the block-Jacobi section "
                   "(repeatable; none: the section is skipped)")
      ->check(CLI::ExistingFile);
  std::string batched_only;
  batched
      ->add_option("--only", batched_only,
                   "run one section: 'kernels' (batched kernels vs cuBLAS, --sizes) or 'block-jacobi' (scalar, "
                   "natural and agglomerated block-Jacobi on the --jacobian files); default both")
      ->check(CLI::IsMember({"kernels", "block-jacobi"}));

  blockres::IsaiBenchOptions bi;
  auto* isai = bench->add_subcommand(
      "isai",
      "ILU(0) with exact vs ISAI triangular solves (scalar and block view), general ISAI and block-Jacobi: setup, "
      "generation, application against cuSPARSE csrilu02/bsrilu02/SpSV/bsrsv2, and GMRES/IDR(4) time to solution on "
      "7-point block stencils and simulator Jacobians");
  add_threads(isai);
  isai->add_option("--json", bi.json_path, "report file (JSON)")->capture_default_str();
  isai->add_flag("--strict", bi.strict, "a missed issue target (printed as FAIL) also fails the run (exit code 1); failed checks always do");
  isai->add_option("--bs", bi.block_sizes, "block sizes of the 7-point stencil matrices (1..16)")
      ->delimiter(',')
      ->check(CLI::Range(1, 16));
  isai->add_option("--size-gb", bi.matrix_gb, "bytes of block values + indices per stencil matrix, in GB")
      ->check(CLI::Range(0.0001, 16.0))
      ->capture_default_str();
  isai->add_option("--max-side", bi.max_side, "largest stencil grid side")->check(CLI::Range(4, 1000))->capture_default_str();
  isai->add_option("--powers", bi.powers, "ISAI powers k of the ILU(0) factors (1..3)")
      ->delimiter(',')
      ->check(CLI::Range(1, blockres::max_isai_power));
  isai->add_option("--general-powers", bi.general_powers, "powers k of the general ISAI of A (1..3)")
      ->delimiter(',')
      ->check(CLI::Range(1, blockres::max_isai_power));
  isai->add_option("--methods", bi.methods, "Krylov methods of the solve section (gmres, idr, bicgstab)")
      ->delimiter(',')
      ->check(CLI::IsMember({"gmres", "idr", "bicgstab"}));
  isai->add_option("--tol", bi.rel_tol, "relative residual of the solve section")
      ->check(CLI::Range(1e-14, 0.5))
      ->capture_default_str();
  isai->add_option("--max-iterations", bi.max_iterations, "iteration limit of the solve section")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  bool isai_no_solve = false;
  isai->add_flag("--no-solve", isai_no_solve, "skip the time-to-solution section");
  isai->add_option("--reps", bi.reps, "timed repetitions (median reported)")->check(CLI::Range(3, 100000))->capture_default_str();
  isai->add_option("--warmup", bi.warmup, "untimed repetitions first")->check(CLI::Range(0, 1000))->capture_default_str();
  isai->add_option("--jacobian", bi.jacobians, "Jacobian file from 'blockres run --write-jacobian' (repeatable)")
      ->check(CLI::ExistingFile);

  blockres::SolverBenchOptions bsv;
  auto* solver = bench->add_subcommand(
      "solver",
      "CG, BiCGSTAB, GMRES(30), FGMRES(30) and IDR(4) on 7-point block stencils (1M cells) and simulator Jacobians: "
      "cost per iteration against the bytes it moves at the copy bandwidth, phase split, and time to solution with "
      "each preconditioner (none, jacobi, block_jacobi, ilu0, ilu0+isai(1), isai(1))");
  add_threads(solver);
  solver->add_option("--json", bsv.json_path, "report file (JSON)")->capture_default_str();
  solver->add_option("--cpu-check-gb", bsv.cpu_check_gb,
                     "repeat the fixed-iteration solves on the CPU backend for matrices up to this many GB")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  solver->add_flag("--strict", bsv.strict, "a missed issue target (printed as FAIL) also fails the run (exit code 1); failed checks always do");
  solver->add_option("--bs", bsv.block_sizes, "block sizes of the 7-point stencil matrices (1..32; default 1,2,4,8,16)")
      ->delimiter(',')
      ->check(CLI::Range(1, 32));
  auto* side = solver->add_option("--side", bsv.side, "stencil grid side: side^3 cells")
                   ->check(CLI::Range(4, 500))
                   ->capture_default_str();
  long long solver_cells = 0;
  solver->add_option("--cells", solver_cells, "stencil cells instead of --side (side = the cube root, rounded up)")
      ->check(CLI::Range(64LL, 500LL * 500 * 500))
      ->excludes(side);
  solver
      ->add_option("--methods", bsv.methods, "Krylov methods (cg, bicgstab, gmres, fgmres, idr; default all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"cg", "bicgstab", "gmres", "fgmres", "idr"}));
  solver
      ->add_option("--preconditioners", bsv.preconditioners,
                   "time-to-solution preconditioners (none, jacobi, block_jacobi, ilu0, ilu0_isai, isai; default all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"none", "jacobi", "block_jacobi", "ilu0", "ilu0_isai", "isai"}));
  solver->add_option("--tol", bsv.rel_tol, "relative residual of the time-to-solution solves")
      ->check(CLI::Range(1e-14, 0.5))
      ->capture_default_str();
  solver->add_option("--max-iterations", bsv.max_iterations, "iteration limit of the time-to-solution solves")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  // GMRES(30) must end on a full restart cycle and IDR(4) on a full cycle of s + 1 = 5 iterations.
  const CLI::Validator multiple_of_30(
      [](std::string& v) {
        char* end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        return *end == '\0' && n % 30 == 0 ? std::string() : "must be a multiple of 30, got " + v;
      },
      "MULTIPLE OF 30");
  solver
      ->add_option("--iterations", bsv.iterations,
                   "iterations of the fixed-iteration solves of the iteration-cost section (a multiple of 30; "
                   "BiCGSTAB does half as many, two products each)")
      ->check(CLI::Range(30, 30000))
      ->check(multiple_of_30)
      ->capture_default_str();
  bool solver_no_solve = false, solver_no_iteration = false;
  solver->add_flag("--no-solve,--only-iteration", solver_no_solve, "skip the time-to-solution section");
  solver->add_flag("--no-iteration", solver_no_iteration, "skip the iteration-cost section");
  solver->add_option("--reps", bsv.reps, "timed fixed-iteration solves (median reported)")
      ->check(CLI::Range(3, 100000))
      ->capture_default_str();
  solver->add_option("--warmup", bsv.warmup, "untimed solves first (at least 1: workspace allocation)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  solver->add_option("--jacobian", bsv.jacobians, "Jacobian file from 'blockres run --write-jacobian' (repeatable)")
      ->check(CLI::ExistingFile);

  blockres::ModelBenchOptions bm;
  auto* bmodel = bench->add_subcommand(
      "model",
      "a deck's model on the device: assembly throughput against the copy bandwidth (checked against the CPU "
      "assembly), and the first Newton iterations with each preconditioner: assembly, setup and solve times, linear "
      "iterations, peak device memory");
  add_threads(bmodel);
  bmodel->add_option("deck", bm.deck, "input deck (TOML)")->required()->check(CLI::ExistingFile);
  bmodel->add_option("--set", bm.overrides, "override a deck key: --set dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  bmodel
      ->add_option("--preconditioners", bm.preconditioners,
                   "deck, none, jacobi, block_jacobi, block_jacobi_lu, ilu0, ilu0_isai, bilu0, bilu0_isai "
                   "(default deck,block_jacobi,bilu0,bilu0_isai)")
      ->delimiter(',')
      ->check(CLI::IsMember({"deck", "none", "jacobi", "block_jacobi", "block_jacobi_lu", "ilu0", "ilu0_isai", "bilu0",
                             "bilu0_isai"}));
  bmodel->add_option("--newton", bm.newton_iterations, "Newton iterations of the first time step per preconditioner")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  bmodel->add_option("--tol", bm.rel_tol, "relative tolerance of each linear solve")
      ->check(CLI::Range(1e-14, 0.5))
      ->capture_default_str();
  bmodel->add_option("--verify-gb", bm.verify_gb, "check the assembly against the CPU when the Jacobian has at most "
                                                  "this many GB")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  bmodel->add_option("--reps", bm.reps, "timed assemblies (median reported)")->check(CLI::Range(3, 100000))->capture_default_str();
  bmodel->add_option("--warmup", bm.warmup, "untimed assemblies first")->check(CLI::Range(0, 1000))->capture_default_str();
  bmodel->add_option("--json", bm.json_path, "report file (JSON)")->capture_default_str();

  blockres::AmgBenchOptions ba;
  auto* bamg = bench->add_subcommand(
      "amg",
      "aggregation AMG on 7-point Poisson, log-normal pressure matrices and deck pressure matrices (CPU or CUDA): "
      "full and numeric setup, V-cycle (ms, SpMV-equivalents, fraction of the copy bandwidth), levels and "
      "complexities, AMG-preconditioned CG to 1e-8, and hypre BoomerAMG on the CPU as the peer when built in");
  add_threads(bamg);
  bamg->add_option("--backend", ba.backend, "auto (CUDA when a device is present), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  bamg->add_option("--sizes", ba.sizes, "grid sides n of the n^3 matrices (default 100,200,300 on CUDA, 32,64 on the CPU)")
      ->delimiter(',')
      ->check(CLI::Range(4, 600));
  std::vector<std::string> amg_matrices;
  bamg->add_option("--matrices", amg_matrices,
                   "generated kinds: poisson, lognormal1, lognormal3, anisotropic (default all), or none")
      ->delimiter(',')
      ->check(CLI::IsMember({"poisson", "lognormal1", "lognormal3", "anisotropic", "none"}));
  bamg->add_option("--deck", ba.decks, "also the CPR pressure matrix of this deck's first Jacobian (repeatable)")
      ->check(CLI::ExistingFile);
  bamg->add_option("--set", ba.overrides, "override a key of every --deck: --set dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  bamg->add_option("--tol", ba.rel_tol, "relative residual of the CG solves")
      ->check(CLI::Range(1e-14, 0.5))
      ->capture_default_str();
  bamg->add_option("--max-iterations", ba.max_iterations, "iteration limit of the solves")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  std::string amg_aggregation = "mis2";
  bamg->add_option("--aggregation", amg_aggregation, "AMG aggregation: mis2 or matching")
      ->check(CLI::IsMember({"mis2", "matching"}))
      ->capture_default_str();
  bamg->add_option("--aggregate-size", ba.amg.aggregate_size, "AMG nominal aggregate size of matching (2, 4, 8)")
      ->check(CLI::IsMember({2, 4, 8}))
      ->capture_default_str();
  std::string amg_interpolation = "smoothed", amg_smoother = "jacobi";
  bamg->add_option("--interpolation", amg_interpolation, "AMG prolongation: smoothed or plain")
      ->check(CLI::IsMember({"smoothed", "plain"}))
      ->capture_default_str();
  bamg->add_option("--smoother", amg_smoother, "AMG smoother: jacobi or l1_jacobi")
      ->check(CLI::IsMember({"jacobi", "l1_jacobi"}))
      ->capture_default_str();
  bamg->add_option("--reps", ba.reps, "timed setups and solves (median reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bamg->add_option("--apply-reps", ba.apply_reps, "timed SpMVs and V-cycles (median reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bamg->add_option("--warmup", ba.warmup, "untimed calls first")->check(CLI::Range(0, 1000))->capture_default_str();
  bool amg_no_hypre = false;
  bamg->add_flag("--no-hypre", amg_no_hypre, "skip hypre BoomerAMG (when built in)");
  bamg->add_option("--hypre-max-rows", ba.hypre_max_rows, "run hypre (serial, CPU) on matrices up to this many rows")
      ->check(CLI::Range(0LL, 1LL << 31))
      ->capture_default_str();
  bamg->add_option("--seed", ba.seed, "seed of the random permeabilities and vectors")->capture_default_str();
  bamg->add_option("--json", ba.json_path, "report file (JSON)")->capture_default_str();
  bamg->add_flag("--strict", ba.strict, "a missed issue target (printed as FAIL) also fails the run (exit code 1); failed checks always do");

  blockres::VerifyOptions vo;
  auto* verify = app.add_subcommand(
      "verify",
      "compare a result with a stored HDF5 baseline field by field (exit 0 pass, 1 fail, 2 error): "
      "'verify RESULT.h5 --baseline BASE.h5', 'verify DECK.toml --baseline BASE.h5' (runs the deck first) or "
      "'verify --case CASE.toml' (deck, overrides, baseline and tolerances of a verification case)");
  add_threads(verify);
  verify->add_option("input", vo.input, "result file (.h5) or deck (.toml) to run; default: the case's deck");
  verify->add_option("--baseline", vo.baseline, "baseline result file (default: the case's baseline)");
  verify->add_option("--case", vo.case_file, "verification case file (verification/cases/*.toml)");
  // One value per occurrence: `--rtol 1e-3 RESULT.h5` must not take RESULT.h5 as a second tolerance.
  verify->add_option("--rtol", vo.rtol, "relative tolerance, FIELD=VALUE or VALUE for every field (repeatable)")
      ->allow_extra_args(false);
  verify->add_option("--atol", vo.atol, "absolute tolerance in the field's unit, FIELD=VALUE or VALUE (repeatable)")
      ->allow_extra_args(false);
  verify->add_option("--backend", vo.backend, "backend of the deck run: auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  verify->add_option("--set", vo.overrides, "override a deck key of the deck run: --set dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  verify->add_option("--output", vo.output_dir, "keep the deck run's result in this directory (default: discarded)");
  verify->add_option("--json", vo.json_path, "also write the comparison as JSON to this file");
  verify->add_flag("--regenerate", vo.regenerate,
                   "run the case's deck on the CPU backend and replace its baseline (on purpose only; prints the "
                   "differences to the old baseline first)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 only says "a subcommand is required" for an unknown one; name it.
    const std::string_view first = argc > 1 ? std::string_view(argv[1]) : std::string_view();
    if (!first.empty() && first[0] != '-' && first != "run" && first != "bench" && first != "verify")
      fail(fmt::format("unknown subcommand '{}' (expected: run, bench or verify; see 'blockres --help')", argv[1]));
    fail(fmt::format("{} (see 'blockres {}--help')", e.what(), first == "verify" ? "verify " : ""),
         first == "verify" ? 2 : 1);
  }

  try {
    blockres::set_allocation_limit_from_environment();
    const blockres::ThreadPolicy& thread_policy = blockres::apply_thread_policy(threads);
    if (run->parsed()) {
      // Ctrl-C / a batch system's SIGTERM: the time loop stops cleanly (miniapp/run/run_control.hpp).
      blockres::install_interrupt_handlers();
      // --output is applied as an override so the resolved deck in the result records it.
      if (!output_dir.empty()) overrides.push_back("output.directory=" + blockres::quote_literal(output_dir));
      blockres::RunConfig cfg = [&] {
        const blockres::AllocationLabel label("the deck's grid and rock properties");
        return blockres::load_deck(deck, overrides);
      }();
      log_line(fmt::format("blockres {} (git {}): deck {}", blockres::version_string(), blockres::git_commit(), deck));
      log_line(fmt::format("threads: {}", thread_policy.text()));
      auto exec = blockres::choose_backend(backend, log_line);
      blockres::RunOptions ro(cfg.output.directory, command_line, verbose, jacobian_path);
      ro.restart_file = restart_file;
      ro.restart_report = restart_report;
      const auto outcome = blockres::run_simulation(cfg, exec, ro, log_line);
      log_line(fmt::format("results written to {}", outcome.result_file.string()));
    }
    if (verify->parsed()) {
      vo.command_line = command_line;
      return blockres::run_verify(vo, log_line, [](const std::string& msg) { fail(msg, 2); });
    }
    if (bsrmv->parsed()) {
      bo.command_line = command_line;
      return blockres::run_bsrmv_bench(bo, log_line);
    }
    if (batched->parsed()) {
      bb.command_line = command_line;
      bb.kernels_section = batched_only != "block-jacobi";
      bb.block_jacobi_section = batched_only != "kernels";
      return blockres::run_batched_bench(bb, log_line);
    }
    if (isai->parsed()) {
      bi.command_line = command_line;
      bi.solve_section = !isai_no_solve;
      return blockres::run_isai_bench(bi, log_line);
    }
    if (solver->parsed()) {
      bsv.command_line = command_line;
      if (solver_cells > 0) {
        bsv.side = 1;
        while (static_cast<long long>(bsv.side) * bsv.side * bsv.side < solver_cells) ++bsv.side;
      }
      if (solver_no_solve && solver_no_iteration) fail("--no-solve and --no-iteration leave nothing to run");
      bsv.solve_section = !solver_no_solve;
      bsv.iteration_section = !solver_no_iteration;
      return blockres::run_solver_bench(bsv, log_line);
    }
    if (bamg->parsed()) {
      ba.command_line = command_line;
      if (!amg_matrices.empty()) {
        ba.matrices.clear();
        for (const auto& k : amg_matrices)
          if (k != "none") ba.matrices.push_back(k);
      }
      ba.amg.aggregation =
          amg_aggregation == "matching" ? blockres::AmgAggregation::matching : blockres::AmgAggregation::mis2;
      ba.amg.interpolation =
          amg_interpolation == "plain" ? blockres::AmgInterpolation::plain : blockres::AmgInterpolation::smoothed;
      ba.amg.smoother = amg_smoother == "l1_jacobi" ? blockres::AmgSmoother::l1_jacobi : blockres::AmgSmoother::jacobi;
      ba.hypre = !amg_no_hypre;
      if (ba.matrices.empty() && ba.decks.empty()) fail("bench amg: --matrices none and no --deck leave nothing to run");
      return blockres::run_amg_bench(ba, log_line);
    }
    if (bmodel->parsed()) {
      bm.command_line = command_line;
      return blockres::run_model_bench(bm, log_line);
    }
  } catch (const blockres::Interrupted& e) {
    // One line, then the conventional status of a process ended by the signal (130, 143).
    std::fflush(stdout);
    std::fprintf(stderr, "blockres: %s\n", e.what());
    std::exit(128 + e.signal);
  } catch (const blockres::InputError& e) {
    fail(e.what());
  } catch (const blockres::RestartError& e) {
    fail(e.what());
  } catch (const blockres::OutputBusy& e) {
    fail(e.what());
  } catch (const std::bad_alloc&) {
    const auto& f = blockres::last_failed_host_allocation();
    const std::size_t limit = blockres::allocation_limit();
    fail(f.bytes ? fmt::format("out of host memory: {} failed{}", blockres::describe_allocation(f.label, f.bytes),
                               limit && f.bytes > limit
                                   ? fmt::format(" [forced: BLOCKRES_FAIL_ALLOC_ABOVE = {}]", limit)
                                   : std::string())
                 : std::string("out of host memory (std::bad_alloc; the request's size is unknown)"));
  } catch (const blockres::BackendError& e) {
    fail(e.what());
  } catch (const blockres::SimulationError& e) {
    fail(fmt::format("simulation failed: {}", e.what()));
  } catch (const blockres::h5::Error& e) {
    fail(fmt::format("HDF5: {}", e.what()));
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return 0;
}
