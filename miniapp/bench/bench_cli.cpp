// `blockres bench`: the subcommand, its sections (each registered from its own file) and the options
// every section shares.
#include "miniapp/bench/bench_cli.hpp"

#include "miniapp/bench/suite.hpp"
#include "miniapp/io/destination.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace blockres {

Subcommand register_bench(CLI::App& app, CommandContext& context)
{
  auto* bench = app.add_subcommand(
      "bench", "the procurement suite (no section: every kernel, the Krylov iteration and the application runs, checked, "
               "one VALID/INVALID JSON report and a suite score; --compare puts reports side by side), or one expert "
               "section (CUDA device needed, except bench amg and bench scaling)");
  bench->require_subcommand(0, 1);
  auto opt = std::make_shared<suite::SuiteOptions>();
  auto compare = std::make_shared<std::vector<std::string>>();
  bench->add_option("--size", opt->size,
                    "suite problem sizes: small (minutes on a 2-core CPU), medium, large, or auto (CUDA: the largest that "
                    "fits 40% of the free device memory; CPU: small)")
      ->check(CLI::IsMember({"small", "medium", "large", "auto"}))
      ->capture_default_str();
  bench->add_option("--backend", opt->backend, "auto (CUDA when a device is present), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  bench->add_option("--json", opt->json_path, "the suite's report (JSON, layout miniapp/bench/bench_suite.schema.json)")
      ->check([](const std::string& path) {
        const std::string why = file_destination_problem(path, true);
        return why.empty() ? why : path + ": " + why;
      })
      ->capture_default_str();
  bench->add_option("--repetitions", opt->repetitions, "timed repetitions of every kernel row (median reported)")
      ->check(CLI::Range(3, 1000))
      ->capture_default_str();
  bench->add_option("--compare", *compare, "compare suite reports: A.json B.json [C.json ...] (exit code 2 for a "
                                           "missing, truncated or foreign report)")
      ->expected(2, 64);
  bench->add_option("--baselines", opt->baselines_path,
                    "the application runs' stored baselines (default: verification/bench_suite/baselines.json of the "
                    "source tree, or $BLOCKRES_SOURCE_DIR/...)");
  bench->add_option("--record-baselines", opt->record_baselines,
                    "write the application runs' summaries to this file as the baselines of their size (the report is "
                    "then INVALID: nothing was checked)");
  bench->add_option("--tuning-cache", opt->tuning_cache,
                    "CUDA kernel tuning: a file written by 'blockres tune', or 'none' for the built-in rule (default: "
                    "this GPU's cache; without one the suite tunes its BSRMV block sizes first and writes it)");
  bench->add_option("--tune-budget-s", opt->tune_budget_s,
                    "seconds the suite may spend tuning a GPU that has no tuning cache (0: do not tune, use the rule)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  add_threads_option(*bench, context);
  const std::vector<Subcommand> sections = {
      register_bench_bsrmv(*bench, context),  register_bench_batched(*bench, context),
      register_bench_isai(*bench, context),   register_bench_solver(*bench, context),
      register_bench_model(*bench, context),  register_bench_amg(*bench, context),
      register_bench_scaling(*bench, context),
  };
  Subcommand cmd{bench, [sections, opt, compare, &context] {
                   for (const Subcommand& s : sections)
                     if (s.app->parsed()) return s.run();
                   if (!compare->empty()) {
                     try {
                       return suite::compare_reports(*compare, context.log);
                     } catch (const suite::CompareError& e) {
                       context.error(e.what());
                       return 2;
                     }
                   }
                   opt->command_line = context.command_line;
                   return suite::run_suite(*opt, context.log);
                 }};
  return cmd;
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
