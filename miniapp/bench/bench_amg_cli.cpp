// `blockres bench amg`: its options (AmgBenchOptions) and its action (run_amg_bench).
#include "miniapp/bench/bench_cli.hpp"

#include "input/error.hpp"
#include "linalg/preconditioners/amg/amg_options.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace blockres {

namespace {

// An option taking one word of an enum's name table (the deck's, linalg/preconditioners/amg/amg_options.hpp)
// into `value`; the help lists the words ("what: a or b") and shows the default, its name.
template <class Enum, std::size_t N>
void add_name_option(CLI::App& section, const std::string& flag, Enum& value, const NameTable<Enum, N>& names,
                     const std::string& what)
{
  const std::vector<std::string> words(names.names().begin(), names.names().end());
  std::string help = what + ":";
  for (std::size_t i = 0; i < words.size(); ++i) help += (i == 0 ? " " : " or ") + words[i];
  const auto set = [&value, &names](const std::string& word) { value = *names.find(word); };
  section.add_option_function<std::string>(flag, set, help)
      ->check(CLI::IsMember(words))
      ->default_str(std::string(names.name(value)));
}

}  // namespace

Subcommand register_bench_amg(CLI::App& bench, CommandContext& context)
{
  auto o = std::make_shared<AmgBenchOptions>();
  auto* section = bench.add_subcommand(
      "amg",
      "aggregation AMG on 7-point Poisson, log-normal pressure matrices and deck pressure matrices (CPU or CUDA): "
      "full and numeric setup, V-cycle (ms, SpMV-equivalents, fraction of the copy bandwidth), levels and "
      "complexities, AMG-preconditioned CG to 1e-8, and hypre BoomerAMG on the CPU as the peer when built in");
  add_bench_common_options(*section, context, *o,
                           {.reps = "timed setups and solves (median reported)",
                            .min_reps = 1,
                            .warmup = "untimed calls first"});
  section->add_option("--backend", o->backend, "auto (CUDA when a device is present), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  section
      ->add_option("--sizes", o->sizes, "grid sides n of the n^3 matrices (default 100,200,300 on CUDA, 32,64 on the CPU)")
      ->delimiter(',')
      ->check(CLI::Range(4, 600));
  const auto matrices = [o](const std::vector<std::string>& kinds) {
    o->matrices.clear();
    for (const auto& k : kinds)
      if (k != "none") o->matrices.push_back(k);
  };
  section
      ->add_option_function<std::vector<std::string>>(
          "--matrices", matrices, "generated kinds: poisson, lognormal1, lognormal3, anisotropic (default all), or none")
      ->delimiter(',')
      ->check(CLI::IsMember({"poisson", "lognormal1", "lognormal3", "anisotropic", "none"}));
  section->add_option("--deck", o->decks, "also the CPR pressure matrix of this deck's first Jacobian (repeatable)")
      ->check(CLI::ExistingFile);
  section->add_option("--set", o->overrides, "override a key of every --deck: --set dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  section->add_option("--tol", o->rel_tol, "relative residual of the CG solves")
      ->check(CLI::Range(1e-14, 0.5))
      ->capture_default_str();
  section->add_option("--max-iterations", o->max_iterations, "iteration limit of the solves")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  add_name_option(*section, "--aggregation", o->amg.aggregation, amg_aggregation_names, "AMG aggregation");
  section->add_option("--aggregate-size", o->amg.aggregate_size, "AMG nominal aggregate size of matching (2, 4, 8)")
      ->check(CLI::IsMember({2, 4, 8}))
      ->capture_default_str();
  add_name_option(*section, "--interpolation", o->amg.interpolation, amg_interpolation_names, "AMG prolongation");
  add_name_option(*section, "--smoother", o->amg.smoother, amg_smoother_names, "AMG smoother");
  add_name_option(*section, "--storage", o->amg.storage, storage_precision_names,
                  "AMG cycle matrices: fp64, or fp32 copies read in fp64 arithmetic (Jacobi smoothers)");
  section
      ->add_option("--trisolve-sweeps", o->amg.trisolve_sweeps,
                   "ilu0 smoother: 0 exact (level-scheduled) triangular solves, k Jacobi sweeps per factor")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  section->add_option("--apply-reps", o->apply_reps, "timed SpMVs and V-cycles (median reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  section->add_flag_callback("--no-hypre", [o] { o->hypre = false; }, "skip hypre BoomerAMG (when built in)");
  section->add_option("--hypre-max-rows", o->hypre_max_rows, "run hypre (serial, CPU) on matrices up to this many rows")
      ->check(CLI::Range(0LL, 1LL << 31))
      ->capture_default_str();
  section->add_option("--seed", o->seed, "seed of the random permeabilities and vectors")->capture_default_str();
  return {section, [o, &context] {
            if (o->matrices.empty() && o->decks.empty())
              throw InputError("bench amg: --matrices none and no --deck leave nothing to run");
            o->command_line = context.command_line;
            return run_amg_bench(*o, context.log);
          }};
}

}  // namespace blockres
