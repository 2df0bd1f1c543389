// `blockres bench scaling`: its options (ScalingBenchOptions) and its action (run_scaling_bench). The one section that
// runs under an MPI launcher with several ranks (main.cpp lets it through).
#include "miniapp/bench/bench_cli.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace blockres {

Subcommand register_bench_scaling(CLI::App& bench, CommandContext& context)
{
  auto o = std::make_shared<ScalingBenchOptions>();
  auto* section = bench.add_subcommand(
      "scaling",
      "issue 33, first part: one block stencil matrix split by rows over the ranks of the run (mpirun -np P; CUDA: one "
      "GPU per rank), its distributed product timed against rank 0 alone with the whole matrix (speedup, strong-scaling "
      "efficiency, GB/s against the ranks' copy bandwidth, halo bytes, the exchange alone), checked against it");
  add_bench_common_options(*section, context, *o,
                           {.reps = "timed products (median of the slowest rank's times)", .warmup = "untimed products first"});
  section->add_option("--backend", o->backend, "auto (CUDA when a device is present), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  section->add_option("--bs", o->block_sizes, "block sizes")->delimiter(',')->check(CLI::Range(1, 64));
  section->add_option("--matrix-gb", o->matrix_gb, "GB of the whole matrix's blocks and indices (0: 2 on CUDA, 0.05 on the CPU)")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  return {section, [o, &context] {
            o->command_line = context.command_line;
            return run_scaling_bench(*o, context.log);
          }};
}

}  // namespace blockres
