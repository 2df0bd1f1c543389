// `blockres bench model DECK`: its options (ModelBenchOptions) and its action (run_model_bench).
#include "miniapp/bench/bench_cli.hpp"

#include "miniapp/bench/preconditioner_presets.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace blockres {

Subcommand register_bench_model(CLI::App& bench, CommandContext& context)
{
  auto o = std::make_shared<ModelBenchOptions>();
  auto* section = bench.add_subcommand(
      "model",
      "a deck's model on the device: assembly throughput against the copy bandwidth (checked against the CPU "
      "assembly), and the first Newton iterations with each preconditioner: assembly, setup and solve times, linear "
      "iterations, peak device memory");
  add_bench_common_options(*section, context, *o,
                           {.reps = "timed assemblies (median reported)", .warmup = "untimed assemblies first"});
  section->add_option("deck", o->deck, "input deck (TOML)")->required()->check(CLI::ExistingFile);
  section->add_option("--set", o->overrides, "override a deck key: --set dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  std::vector<std::string> labels = {"deck"};  // the deck's own, then the presets every bench shares
  for (const auto& l : bench::preconditioner_preset_labels()) labels.push_back(l);
  section
      ->add_option("--preconditioners", o->preconditioners,
                   "deck (the deck's own) or bench presets, the same labels as bench solver's; the report shows "
                   "each one's deck keys (default deck,block_jacobi,bilu0,bilu0_isai)")
      ->delimiter(',')
      ->check(CLI::IsMember(labels));
  section->add_option("--newton", o->newton_iterations, "Newton iterations of the first time step per preconditioner")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  section->add_option("--tol", o->rel_tol, "relative tolerance of each linear solve")
      ->check(CLI::Range(1e-14, 0.5))
      ->capture_default_str();
  section
      ->add_option("--verify-gb", o->verify_gb,
                   "check the assembly against the CPU when the Jacobian has at most this many GB")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  return {section, [o, &context] {
            o->command_line = context.command_line;
            return run_model_bench(*o, context.log);
          }};
}

}  // namespace blockres
