// `blockres bench bsrmv`: its options (BsrmvBenchOptions) and its action (run_bsrmv_bench).
#include "miniapp/bench/bench_cli.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace blockres {

Subcommand register_bench_bsrmv(CLI::App& bench, CommandContext& context)
{
  auto o = std::make_shared<BsrmvBenchOptions>();
  auto* section =
      bench.add_subcommand("bsrmv", "BSR SpMV against cuSPARSE on stencil, power-law and simulator matrices");
  add_bench_common_options(*section, context, *o);
  add_jacobian_option(*section, o->jacobians);
  section->add_option("--bs", o->block_sizes, "block sizes (1..64)")->delimiter(',')->check(CLI::Range(1, 64));
  section->add_option("--stencils", o->stencils, "stencils: 7 and/or 27")
      ->delimiter(',')
      ->check(CLI::IsMember({7, 27}));
  section->add_option("--powerlaw-bs", o->powerlaw_block_sizes, "block sizes of the power-law matrix (empty: none)")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  section->add_option("--size-gb", o->matrix_gb, "bytes of block values + indices per stencil matrix, in GB")
      ->check(CLI::Range(0.001, 64.0))
      ->capture_default_str();
  section->add_flag("--tune", o->tune,
                    "measure this run's own tuning first, as 'blockres tune' does (every compiled configuration per "
                    "block size on both stencils), and run every row of those block sizes with it instead of the "
                    "tuning cache");
  return {section, [o, &context] {
            o->command_line = context.command_line;
            return run_bsrmv_bench(*o, context.log);
          }};
}

}  // namespace blockres
