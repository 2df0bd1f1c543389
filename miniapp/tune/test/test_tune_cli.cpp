// `blockres tune` and the tuning options of run and bench on the CPU: the command line (defaults, refusals,
// the help saying that tuning happens only on request), tune without a device or without CUDA (one clear
// error), `--tuning-cache` accepted by run and every bench section, and the result file of a run recording
// where its SpMV configurations came from (root attributes bsrmv_tuning and bsrmv_configs).
#include "miniapp/bench/bench_cli.hpp"
#include "miniapp/io/h5.hpp"
#include "miniapp/run/backend.hpp"
#include "miniapp/run/run_cli.hpp"
#include "miniapp/tune/tune.hpp"
#include "miniapp/tune/tune_cli.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace blockres;
namespace fs = std::filesystem;

namespace {

// The commands as main registers them, with the log collected.
struct CommandLine {
  CLI::App app{"test", "blockres"};
  CommandContext context;
  std::vector<std::string> lines;
  Subcommand run, bench, tune;

  CommandLine()
  {
    context.log = [this](const std::string& s) { lines.push_back(s); };
    context.error = [this](const std::string& s) { lines.push_back("error: " + s); };
    app.require_subcommand(1);
    run = register_run(app, context);
    bench = register_bench(app, context);
    tune = register_tune(app, context);
  }
  void parse(std::vector<std::string> args)
  {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
  }
  bool logged(const std::string& text) const
  {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
  }
};

fs::path fresh_dir(const std::string& tag)
{
  static int n = 0;
  const auto d = fs::temp_directory_path() / ("blockres-tune-" + tag + "-" + std::to_string(::getpid()) + "-" +
                                              std::to_string(n++));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(TuneCommandLine, HelpSaysTuningIsOnRequestAndWhereTheCacheGoes)
{
  CommandLine cli;
  const std::string help = cli.tune.app->help();
  for (const char* part : {"only on request", "--bs", "--size-gb", "--budget-s", "--tuning-cache", "--json",
                           "BLOCKRES_TUNING_DIR", "XDG_CACHE_HOME", "~/.cache/blockres", "built-in rule", "300 s"})
    EXPECT_NE(help.find(part), std::string::npos) << "tune --help lacks \"" << part << "\":\n" << help;
}

TEST(TuneCommandLine, DefaultsAndRefusals)
{
  const TuneOptions d;
  ASSERT_EQ(d.block_sizes.size(), 64u);
  EXPECT_EQ(d.block_sizes.front(), 1);
  EXPECT_EQ(d.block_sizes.back(), 64);
  EXPECT_EQ(d.size_gb, 0.5);
  EXPECT_EQ(d.budget_s, tune_default_budget_s);
  EXPECT_EQ(d.tuning_cache, "");
  {
    CommandLine cli;
    EXPECT_NO_THROW(cli.parse({"tune", "--bs", "4,32", "--size-gb", "0.01", "--budget-s", "20", "--reps", "3",
                               "--warmup", "1", "--tuning-cache", "/tmp/x.json"}));
  }
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"tune", "--bs", "65"},
                                              {"tune", "--bs", "0"},
                                              {"tune", "--budget-s", "0"},
                                              {"tune", "--size-gb", "0"},
                                              {"tune", "--reps", "0"}}) {
    CommandLine cli;
    EXPECT_THROW(cli.parse(bad), CLI::ParseError) << bad[1] << " " << bad[2];
  }
}

TEST(TuneCommandLine, WithoutADeviceTuneSaysSoAndFails)
{
  if (Executor::cuda_device_count() > 0) GTEST_SKIP() << "a device is present: tune would measure it";
  CommandLine cli;
  cli.parse({"tune", "--bs", "4", "--budget-s", "5", "--tuning-cache", "none"});
  try {
    cli.tune.run();
    FAIL() << "tune ran without a device";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("tune"), std::string::npos) << what;
    EXPECT_TRUE(what.find(Executor::built_with_cuda() ? "needs a CUDA device" : "built without CUDA") !=
                    std::string::npos ||
                what.find("BLOCKRES_REQUIRE_GPU") != std::string::npos)
        << what;
  }
}

TEST(TuningCacheOption, RunAndEveryBenchSectionTakeIt)
{
  {
    CommandLine cli;
    EXPECT_NO_THROW(cli.parse({"run", "deck.toml", "--tuning-cache", "none"}));
    EXPECT_NO_THROW(cli.parse({"run", "deck.toml", "--tuning-cache", "/some/cache.json"}));
  }
  for (const char* section : {"bsrmv", "batched", "isai", "solver", "model", "amg"}) {
    CommandLine cli;
    std::vector<std::string> args = {"bench", section, "--tuning-cache", "/tmp/cache.json"};
    if (std::string(section) == "model") args.push_back(std::string(BLOCKRES_SOURCE_DIR) + "/inputs/quarter_five_spot.toml");
    EXPECT_NO_THROW(cli.parse(args)) << section;
  }
}

TEST(TuningCacheOption, TheCpuBackendHasNoTuningLine)
{
  std::vector<std::string> lines;
  const auto e = choose_backend("cpu", [&](const std::string& l) { lines.push_back(l); }, false, "none");
  EXPECT_FALSE(e->is_cuda());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("backend: cpu", 0), 0u) << lines[0];
}

TEST(TuningRecordInResults, ACpuRunRecordsThatItsSpmvHasNoConfiguration)
{
  const auto dir = fresh_dir("results");
  CommandLine cli;
  std::vector<std::string> args = {"run", std::string(BLOCKRES_SOURCE_DIR) + "/inputs/quarter_five_spot.toml",
                                   "--backend", "cpu", "--output", dir.string(), "--tuning-cache", "none"};
  for (const char* s : {"grid.nx=5", "grid.ny=5", "grid.nz=1", "wells.PROD.i=5", "wells.PROD.j=5",
                        "schedule.end_time=5", "schedule.report_interval=5", "output.vtk=false"})
    args.insert(args.end(), {"--set", s});
  cli.parse(args);
  ASSERT_EQ(cli.run.run(), 0);
  EXPECT_FALSE(cli.logged("BSRMV:")) << "no tuning line on the CPU backend";
  const auto f = h5::File::open_read(dir / "quarter_five_spot.h5");
  EXPECT_EQ(h5::read_string_attribute(f.id(), "bsrmv_tuning"), "none (CPU backend: the reference SpMV)");
  EXPECT_EQ(h5::read_string_attribute(f.id(), "bsrmv_configs"), "none (CPU backend: the reference SpMV)");
  fs::remove_all(dir);
}
