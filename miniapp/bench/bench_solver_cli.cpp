// `blockres bench solver`: its options (SolverBenchOptions) and its action (run_solver_bench).
#include "miniapp/bench/bench_cli.hpp"

#include "input/error.hpp"
#include "miniapp/bench/preconditioner_presets.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <memory>
#include <string>

namespace blockres {

Subcommand register_bench_solver(CLI::App& bench, CommandContext& context)
{
  auto o = std::make_shared<SolverBenchOptions>();
  auto* section = bench.add_subcommand(
      "solver",
      "CG, BiCGSTAB, GMRES(30), FGMRES(30) and IDR(4) on 7-point block stencils (1M cells) and simulator Jacobians: "
      "cost per iteration against the bytes it moves at the copy bandwidth, phase split, and time to solution with "
      "each preconditioner preset (default none, jacobi, block_jacobi, ilu0, ilu0_isai, isai)");
  add_bench_common_options(*section, context, *o,
                           {.reps = "timed fixed-iteration solves (median reported)",
                            .warmup = "untimed solves first (at least 1: workspace allocation)",
                            .min_warmup = 1});
  add_jacobian_option(*section, o->jacobians);
  section
      ->add_option("--cpu-check-gb", o->cpu_check_gb,
                   "repeat the fixed-iteration solves on the CPU backend for matrices up to this many GB")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  section->add_option("--bs", o->block_sizes, "block sizes of the 7-point stencil matrices (1..32; default 1,2,4,8,16)")
      ->delimiter(',')
      ->check(CLI::Range(1, 32));
  auto* side = section->add_option("--side", o->side, "stencil grid side: side^3 cells")
                   ->check(CLI::Range(4, 500))
                   ->capture_default_str();
  const auto cells = [o](long long n) {  // the side is the cube root, rounded up
    o->side = 1;
    while (static_cast<long long>(o->side) * o->side * o->side < n) ++o->side;
  };
  section
      ->add_option_function<long long>("--cells", cells,
                                       "stencil cells instead of --side (side = the cube root, rounded up)")
      ->check(CLI::Range(64LL, 500LL * 500 * 500))
      ->excludes(side);
  section->add_option("--methods", o->methods, "Krylov methods (cg, bicgstab, gmres, fgmres, idr; default all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"cg", "bicgstab", "gmres", "fgmres", "idr"}));
  section
      ->add_option("--preconditioners", o->preconditioners,
                   "time-to-solution preconditioners: bench presets, the same labels as bench model's; the report "
                   "shows each one's deck keys (default none,jacobi,block_jacobi,ilu0,ilu0_isai,isai)")
      ->delimiter(',')
      ->check(CLI::IsMember(bench::preconditioner_preset_labels()));
  section->add_option("--tol", o->rel_tol, "relative residual of the time-to-solution solves")
      ->check(CLI::Range(1e-14, 0.5))
      ->capture_default_str();
  section->add_option("--max-iterations", o->max_iterations, "iteration limit of the time-to-solution solves")
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
  section
      ->add_option("--iterations", o->iterations,
                   "iterations of the fixed-iteration solves of the iteration-cost section (a multiple of 30; "
                   "BiCGSTAB does half as many, two products each)")
      ->check(CLI::Range(30, 30000))
      ->check(multiple_of_30)
      ->capture_default_str();
  // --no-solve only: it was also spelled --only-iteration, which nothing in the repository used.
  section->add_flag_callback("--no-solve", [o] { o->solve_section = false; }, "skip the time-to-solution section");
  section->add_flag_callback("--no-iteration", [o] { o->iteration_section = false; }, "skip the iteration-cost section");
  return {section, [o, &context] {
            if (!o->solve_section && !o->iteration_section)
              throw InputError("--no-solve and --no-iteration leave nothing to run");
            o->command_line = context.command_line;
            return run_solver_bench(*o, context.log);
          }};
}

}  // namespace blockres
