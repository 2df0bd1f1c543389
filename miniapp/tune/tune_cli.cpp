// `blockres tune`: its options (TuneOptions) and its action (run_tune).
#include "miniapp/tune/tune_cli.hpp"

#include "miniapp/io/destination.hpp"
#include "miniapp/tune/tune.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

namespace blockres {

Subcommand register_tune(CLI::App& app, CommandContext& context)
{
  auto o = std::make_shared<TuneOptions>();
  auto* tune = app.add_subcommand(
      "tune", "measure the CUDA kernels' configurations on this GPU and write its tuning cache (CUDA builds)");
  tune->footer(fmt::format(
      "Tuning happens only on request, with this command: a run or bench never measures by itself. It times every\n"
      "compiled BSRMV configuration of each block size on a 3D 7-point and a 3D 27-point stencil (each result\n"
      "checked against the CPU reference; a wrong one is never chosen), keeps the one with the smallest sum of the\n"
      "two times, and writes them, with the built-in rule's time beside each, to the tuning cache (JSON, written\n"
      "atomically). Every later 'blockres run' and 'blockres bench' of this binary on this GPU reads it and logs\n"
      "one line saying so; a missing, stale (another GPU, SM count, compute capability, driver, blockres version\n"
      "or kernel set) or corrupt cache gives the built-in rule, with one line saying why.\n"
      "Default cache: $BLOCKRES_TUNING_DIR, else $XDG_CACHE_HOME/blockres, else ~/.cache/blockres, file\n"
      "tuning-<GPU>-<hash of the key>.json. When the budget runs out, the block sizes measured so far are kept\n"
      "and the others take the built-in rule (the log and the file say which). The default run (bs 1..64, {} GB,\n"
      "{} reps) is meant to finish within its {:.0f} s budget.",
      o->size_gb, o->reps, o->budget_s));
  add_threads_option(*tune, context);
  tune->add_option("--bs", o->block_sizes, "block sizes to tune (1..64; default all)")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  tune->add_option("--size-gb", o->size_gb, "block values + indices of each stencil matrix, in GB")
      ->check(CLI::Range(0.001, 64.0))
      ->capture_default_str();
  tune->add_option("--budget-s", o->budget_s,
                   "time budget of the whole run in seconds; block sizes not reached take the built-in rule")
      ->check(CLI::Range(1.0, 1e7))
      ->capture_default_str();
  tune->add_option("--reps", o->reps, "timed calls per configuration and stencil (median kept)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  tune->add_option("--warmup", o->warmup, "untimed calls first")->check(CLI::Range(0, 1000))->capture_default_str();
  tune->add_option("--tuning-cache", o->tuning_cache,
                   "where to write the cache (default: this GPU's file in the folder named below); 'none': measure and "
                   "report only");
  // The report's destination is checked when the option is read, not after the measurements.
  tune->add_option("--json", o->json_path, "also write a report (every configuration's times) to this JSON file")
      ->check([](const std::string& path) {
        const std::string why = file_destination_problem(path, true);
        return why.empty() ? why : path + ": " + why;
      });
  return {tune, [o, &context] {
            o->command_line = context.command_line;
            return run_tune(*o, context.log);
          }};
}

}  // namespace blockres
