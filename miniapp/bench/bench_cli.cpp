// `blockres bench`: the subcommand, its sections (each registered from its own file) and the options
// every section shares.
#include "miniapp/bench/bench_cli.hpp"

#include "miniapp/io/destination.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace blockres {

Subcommand register_bench(CLI::App& app, CommandContext& context)
{
  auto* bench = app.add_subcommand("bench", "performance benchmarks with verified results (CUDA device needed, "
                                            "except bench amg)");
  bench->require_subcommand(1);
  const std::vector<Subcommand> sections = {
      register_bench_bsrmv(*bench, context),  register_bench_batched(*bench, context),
      register_bench_isai(*bench, context),   register_bench_solver(*bench, context),
      register_bench_model(*bench, context),  register_bench_amg(*bench, context),
  };
  return {bench, [sections] {
            for (const Subcommand& s : sections)
              if (s.app->parsed()) return s.run();
            return 0;  // not reached: bench requires a section
          }};
}

void add_bench_common_options(CLI::App& section, CommandContext& context, BenchCommonOptions& common,
                              const BenchCommonHelp& help)
{
  add_threads_option(section, context);
  // The report's destination is checked when the option is read, not after the measurements.
  section.add_option("--json", common.json_path, "report file (JSON)")
      ->check([](const std::string& path) {
        const std::string why = file_destination_problem(path, true);
        return why.empty() ? why : path + ": " + why;
      })
      ->capture_default_str();
  section.add_flag("--strict", common.strict,
                   "a missed target (printed as FAIL) also fails the run (exit code 1); failed checks always do");
  section.add_option("--reps", common.reps, help.reps)->check(CLI::Range(help.min_reps, 100000))->capture_default_str();
  section.add_option("--warmup", common.warmup, help.warmup)
      ->check(CLI::Range(help.min_warmup, 1000))
      ->capture_default_str();
  section.add_option("--tuning-cache", common.tuning_cache,
                     "CUDA kernel tuning: a file written by 'blockres tune', or 'none' for the built-in rule (default: "
                     "this GPU's cache under $BLOCKRES_TUNING_DIR or ~/.cache/blockres, when there is one)");
}

void add_jacobian_option(CLI::App& section, std::vector<std::string>& jacobians, const std::string& help)
{
  section.add_option("--jacobian", jacobians, help)->check(CLI::ExistingFile);
}

}  // namespace blockres
