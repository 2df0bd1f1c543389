// `blockres bench isai`: its options (IsaiBenchOptions) and its action (run_isai_bench).
#include "miniapp/bench/bench_cli.hpp"

#include "linalg/preconditioners/preconditioner.hpp"  // max_isai_power

#include <CLI/CLI.hpp>

#include <memory>

namespace blockres {

Subcommand register_bench_isai(CLI::App& bench, CommandContext& context)
{
  auto o = std::make_shared<IsaiBenchOptions>();
  auto* section = bench.add_subcommand(
      "isai",
      "ILU(0) with exact vs ISAI triangular solves (scalar and block view), general ISAI and block-Jacobi: setup, "
      "generation, application against cuSPARSE csrilu02/bsrilu02/SpSV/bsrsv2, and GMRES/IDR(4) time to solution on "
      "7-point block stencils and simulator Jacobians");
  add_bench_common_options(*section, context, *o);
  add_jacobian_option(*section, o->jacobians);
  section->add_option("--bs", o->block_sizes, "block sizes of the 7-point stencil matrices (1..16)")
      ->delimiter(',')
      ->check(CLI::Range(1, 16));
  section->add_option("--size-gb", o->matrix_gb, "bytes of block values + indices per stencil matrix, in GB")
      ->check(CLI::Range(0.0001, 16.0))
      ->capture_default_str();
  section->add_option("--max-side", o->max_side, "largest stencil grid side")
      ->check(CLI::Range(4, 1000))
      ->capture_default_str();
  section->add_option("--powers", o->powers, "ISAI powers k of the ILU(0) factors (1..3)")
      ->delimiter(',')
      ->check(CLI::Range(1, max_isai_power));
  section->add_option("--general-powers", o->general_powers, "powers k of the general ISAI of A (1..3)")
      ->delimiter(',')
      ->check(CLI::Range(1, max_isai_power));
  section->add_option("--methods", o->methods, "Krylov methods of the solve section (gmres, idr, bicgstab)")
      ->delimiter(',')
      ->check(CLI::IsMember({"gmres", "idr", "bicgstab"}));
  section->add_option("--tol", o->rel_tol, "relative residual of the solve section")
      ->check(CLI::Range(1e-14, 0.5))
      ->capture_default_str();
  section->add_option("--max-iterations", o->max_iterations, "iteration limit of the solve section")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  section->add_flag_callback("--no-solve", [o] { o->solve_section = false; }, "skip the time-to-solution section");
  return {section, [o, &context] {
            o->command_line = context.command_line;
            return run_isai_bench(*o, context.log);
          }};
}

}  // namespace blockres
