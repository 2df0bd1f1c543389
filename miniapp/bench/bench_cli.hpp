// `blockres bench` and its sections' command lines: each section registers itself from its own
// bench_<section>_cli.cpp; the options they share are added by one function.
#pragma once

#include "miniapp/bench/bench.hpp"
#include "miniapp/run/subcommand.hpp"

#include <string>
#include <vector>

namespace blockres {

// Adds `bench` to `app` with every section below. Its action runs the section that was parsed.
Subcommand register_bench(CLI::App& app, CommandContext& context);

// One per section, each in bench_<section>_cli.cpp; `bench` is the `bench` subcommand. A section
// that needs CUDA registers in every build: without CUDA its run_*_bench is bench_unavailable.cpp's,
// which says so.
Subcommand register_bench_bsrmv(CLI::App& bench, CommandContext& context);
Subcommand register_bench_batched(CLI::App& bench, CommandContext& context);
Subcommand register_bench_isai(CLI::App& bench, CommandContext& context);
Subcommand register_bench_solver(CLI::App& bench, CommandContext& context);
Subcommand register_bench_model(CLI::App& bench, CommandContext& context);
Subcommand register_bench_amg(CLI::App& bench, CommandContext& context);
Subcommand register_bench_scaling(CLI::App& bench, CommandContext& context);

// What a section's shared options say about it: the help of --reps and --warmup (what one
// repetition is there) and their lower bounds. The defaults are those of `common` when it is added.
struct BenchCommonHelp {
  std::string reps = "timed repetitions (median reported)";
  int min_reps = 3;
  std::string warmup = "untimed repetitions first";
  int min_warmup = 0;
};

// --threads, --json, --strict, --reps, --warmup, --tuning-cache of a section, bound to `common` (defaults shown in
// the help are its values now).
void add_bench_common_options(CLI::App& section, CommandContext& context, BenchCommonOptions& common,
                              const BenchCommonHelp& help = {});

// --jacobian FILE (repeatable, must exist) of the sections that time simulator Jacobians.
void add_jacobian_option(CLI::App& section, std::vector<std::string>& jacobians,
                         const std::string& help = "Jacobian file from 'blockres run --write-jacobian' (repeatable)");

}  // namespace blockres
