// The command line of `blockres bench`, registered as main registers it: every section takes the
// shared options (--threads, --json, --strict, --reps, --warmup) with its own defaults, bench model
// takes --strict, bad values are refused while parsing, bench solver and bench model take the same
// preconditioner labels (the presets), and bench amg's options reach the run.
#include "input/error.hpp"
#include "miniapp/bench/bench.hpp"
#include "miniapp/bench/bench_cli.hpp"
#include "miniapp/bench/preconditioner_presets.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace blockres;

namespace {

const std::string deck_file = std::string(BLOCKRES_SOURCE_DIR) + "/inputs/quarter_five_spot.toml";

// `blockres bench ...` as main builds it, with the log collected.
struct BenchCommandLine {
  CLI::App app{"test", "blockres"};
  CommandContext context;
  std::vector<std::string> lines;
  Subcommand bench;

  BenchCommandLine()
  {
    context.log = [this](const std::string& s) { lines.push_back(s); };
    context.error = [this](const std::string& s) { lines.push_back("error: " + s); };
    app.require_subcommand(1);
    bench = register_bench(app, context);
  }
  void parse(std::vector<std::string> args)
  {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
  }
  CLI::App& section(const std::string& name) { return *bench.app->get_subcommand(name); }
  bool logged(const std::string& text) const
  {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }
};

struct SectionDefaults {
  std::string name;
  BenchCommonOptions defaults;
};

const std::vector<SectionDefaults> sections = {
    {"bsrmv", BsrmvBenchOptions{}},   {"batched", BatchedBenchOptions{}}, {"isai", IsaiBenchOptions{}},
    {"solver", SolverBenchOptions{}}, {"model", ModelBenchOptions{}},     {"amg", AmgBenchOptions{}},
    {"scaling", ScalingBenchOptions{}},
};

}  // namespace

TEST(BenchCli, EverySectionTakesTheSharedOptionsWithItsOwnDefaults)
{
  BenchCommandLine cli;
  EXPECT_EQ(cli.bench.app->get_subcommands({}).size(), sections.size());
  for (const auto& s : sections) {
    SCOPED_TRACE(s.name);
    CLI::App& section = cli.section(s.name);
    for (const char* flag : {"--threads", "--json", "--strict", "--reps", "--warmup"})
      EXPECT_NO_THROW(section.get_option(flag)) << flag;
    EXPECT_EQ(section.get_option("--json")->get_default_str(), s.defaults.json_path);
    EXPECT_EQ(section.get_option("--reps")->get_default_str(), std::to_string(s.defaults.reps));
    EXPECT_EQ(section.get_option("--warmup")->get_default_str(), std::to_string(s.defaults.warmup));
    EXPECT_FALSE(s.defaults.strict);
    EXPECT_EQ(s.defaults.json_path, "bench_" + s.name + ".json");
  }
  // The defaults each section had before the shared options were declared once.
  EXPECT_EQ(BsrmvBenchOptions{}.reps, 25);
  EXPECT_EQ(BsrmvBenchOptions{}.warmup, 5);
  EXPECT_EQ(BatchedBenchOptions{}.reps, 25);
  EXPECT_EQ(BatchedBenchOptions{}.warmup, 5);
  EXPECT_EQ(IsaiBenchOptions{}.reps, 10);
  EXPECT_EQ(IsaiBenchOptions{}.warmup, 3);
  EXPECT_EQ(SolverBenchOptions{}.reps, 5);
  EXPECT_EQ(SolverBenchOptions{}.warmup, 1);
  EXPECT_EQ(ModelBenchOptions{}.reps, 10);
  EXPECT_EQ(ModelBenchOptions{}.warmup, 2);
  EXPECT_EQ(AmgBenchOptions{}.reps, 5);
  EXPECT_EQ(AmgBenchOptions{}.warmup, 1);
  // --jacobian where a section times simulator Jacobians.
  for (const char* name : {"bsrmv", "batched", "isai", "solver"}) EXPECT_NO_THROW(cli.section(name).get_option("--jacobian")) << name;
}

TEST(BenchCli, BenchModelTakesStrict)
{
  BenchCommandLine cli;
  EXPECT_NO_THROW(cli.parse({"bench", "model", deck_file, "--strict", "--reps", "3", "--warmup", "0", "--json", "m.json"}));
  EXPECT_TRUE(cli.section("model").parsed());
  EXPECT_EQ(cli.section("model").get_option("--strict")->count(), 1u);
}

TEST(BenchCli, BadValuesAreRefusedWhileParsing)
{
  const std::vector<std::vector<std::string>> bad = {
      {"bench", "bsrmv", "--reps", "2"},                // below 3
      {"bench", "amg", "--reps", "0"},                  // below bench amg's 1
      {"bench", "solver", "--warmup", "0"},             // bench solver needs one (workspace allocation)
      {"bench", "model", deck_file, "--warmup", "1001"},     // above 1000
      {"bench", "amg", "--aggregation", "pairwise"},    // not an AMG word
      {"bench", "solver", "--iterations", "45"},        // not a multiple of 30
      {"bench", "isai", "--threads", "0"},
  };
  for (const auto& args : bad) {
    BenchCommandLine cli;
    EXPECT_THROW(cli.parse(args), CLI::ValidationError) << args[1] << " " << args[2];
  }
  BenchCommandLine cli;
  // --no-solve is bench solver's one name for skipping the time-to-solution section.
  EXPECT_THROW(cli.parse({"bench", "solver", "--only-iteration"}), CLI::ExtrasError);
  BenchCommandLine accepted;
  EXPECT_NO_THROW(accepted.parse({"bench", "solver", "--no-solve", "--warmup", "1", "--reps", "3"}));
}

// One label, one meaning: bench solver and bench model take every preset label (bench model also "deck",
// the deck's own) and refuse anything else while parsing.
TEST(BenchCli, SolverAndModelTakeTheSamePreconditionerLabels)
{
  std::string all;
  for (const auto& label : bench::preconditioner_preset_labels()) all += (all.empty() ? "" : ",") + label;
  BenchCommandLine solver;
  EXPECT_NO_THROW(solver.parse({"bench", "solver", "--preconditioners", all}));
  EXPECT_EQ(solver.section("solver").get_option("--preconditioners")->as<std::vector<std::string>>(),
            bench::preconditioner_preset_labels());
  BenchCommandLine model;
  EXPECT_NO_THROW(model.parse({"bench", "model", deck_file, "--preconditioners", "deck," + all}));
  std::vector<std::string> with_deck = {"deck"};
  for (const auto& label : bench::preconditioner_preset_labels()) with_deck.push_back(label);
  EXPECT_EQ(model.section("model").get_option("--preconditioners")->as<std::vector<std::string>>(), with_deck);
  for (const char* bad : {"bilu", "ilu0+isai", "gauss_jordan"}) {
    BenchCommandLine s, m;
    EXPECT_THROW(s.parse({"bench", "solver", "--preconditioners", bad}), CLI::ValidationError) << bad;
    EXPECT_THROW(m.parse({"bench", "model", deck_file, "--preconditioners", bad}), CLI::ValidationError) << bad;
  }
  BenchCommandLine s;  // "deck" is bench model's alone: bench solver has no deck
  EXPECT_THROW(s.parse({"bench", "solver", "--preconditioners", "deck"}), CLI::ValidationError);
  // The help of both lists every preset (CLI11 prints the accepted set).
  for (const char* name : {"solver", "model"}) {
    const std::string help = BenchCommandLine().section(name).help();
    for (const std::string& label : bench::preconditioner_preset_labels())
      EXPECT_NE(help.find(label), std::string::npos) << name << ": " << label;
  }
}

TEST(BenchCli, RunsThatCannotRunAnythingAreInputErrors)
{
  BenchCommandLine solver;
  solver.parse({"bench", "solver", "--no-solve", "--no-iteration"});
  EXPECT_THROW(solver.bench.run(), InputError);
  BenchCommandLine amg;
  amg.parse({"bench", "amg", "--matrices", "none"});
  EXPECT_THROW(amg.bench.run(), InputError);
}

// The AMG words and the shared options reach the run (CPU, one tiny Poisson matrix).
TEST(BenchCli, AmgOptionsReachTheRun)
{
  const std::string json =
      (std::filesystem::temp_directory_path() / ("blockres-bench-cli-" + std::to_string(::getpid()) + ".json")).string();
  BenchCommandLine cli;
  cli.context.command_line = "blockres bench amg (test_bench_cli)";
  cli.parse({"bench", "amg", "--backend", "cpu", "--sizes", "8", "--matrices", "poisson", "--reps", "1",
             "--apply-reps", "1", "--warmup", "0", "--no-hypre", "--aggregation", "matching", "--aggregate-size", "4",
             "--interpolation", "plain", "--smoother", "l1_jacobi", "--strict", "--json", json});
  cli.bench.run();
  EXPECT_TRUE(cli.logged("amg(plain, matched aggregates of 4, l1_jacobi 1/1)"));
  EXPECT_TRUE(cli.logged("matrices: poisson on 8^3"));
  EXPECT_TRUE(cli.logged("--strict: a FAIL fails the run"));
  EXPECT_TRUE(cli.logged("report written to " + json));
  EXPECT_TRUE(std::filesystem::exists(json));
  std::filesystem::remove(json);
}

// The ILU(0) smoother and its Jacobi-sweep triangular solves through bench amg's options.
TEST(BenchCli, AmgIluSmootherReachesTheRun)
{
  const std::string json =
      (std::filesystem::temp_directory_path() / ("blockres-bench-cli-ilu-" + std::to_string(::getpid()) + ".json"))
          .string();
  BenchCommandLine cli;
  cli.context.command_line = "blockres bench amg (test_bench_cli)";
  cli.parse({"bench", "amg", "--backend", "cpu", "--sizes", "8", "--matrices", "poisson", "--reps", "1",
             "--apply-reps", "1", "--warmup", "0", "--no-hypre", "--smoother", "ilu0", "--trisolve-sweeps", "2",
             "--json", json});
  cli.bench.run();
  EXPECT_TRUE(cli.logged("amg(smoothed, mis2 aggregates, ilu0 (2 trisolve sweeps) 1/1)"));
  EXPECT_TRUE(cli.logged("AMG-gmres(30)"));  // the ILU-smoothed cycle is not symmetric: no CG
  std::filesystem::remove(json);
}
