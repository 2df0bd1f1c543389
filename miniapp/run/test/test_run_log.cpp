// What `blockres run` tells its user (issue 28, item 12; --help of item 14): the step lines' progress
// (end time, fraction done, wall time left), the --set overrides echoed, a restarted run's closing time
// line separating this run's time from the original run's, the backend line when no GPU is usable,
// a schedule.tstep deck run end to end (item 14: one time step per listed step when dt allows),
// and checkpoints named in --help. Runs the CLI as main registers it, with the log collected.
#include "miniapp/run/backend.hpp"
#include "miniapp/run/run_cli.hpp"
#include "miniapp/run/simulator.hpp"
#include "verification/run_helpers.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

using namespace blockres;

namespace {

// `blockres run ...` as main builds it, with the log collected.
struct RunCommandLine {
  CLI::App app{"test", "blockres"};
  CommandContext context;
  std::vector<std::string> lines;
  Subcommand run;

  RunCommandLine()
  {
    context.command_line = "blockres run (test)";
    context.log = [this](const std::string& s) { lines.push_back(s); };
    context.error = [this](const std::string& s) { lines.push_back("error: " + s); };
    app.require_subcommand(1);
    run = register_run(app, context);
  }
  int operator()(std::vector<std::string> args)
  {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.parse(args);
    return run.run();
  }
  std::vector<std::string> matching(const std::string& pattern) const
  {
    std::vector<std::string> out;
    const std::regex re(pattern);
    for (const auto& l : lines)
      if (std::regex_search(l, re)) out.push_back(l);
    return out;
  }
};

const std::vector<std::string> kSmall = {"grid.nx=6",           "grid.ny=6",           "grid.nz=2",
                                         "wells.PROD.i=6",      "wells.PROD.j=6",      "schedule.end_time=20",
                                         "schedule.report_interval=10", "output.vtk=false"};

std::vector<std::string> run_args(const std::filesystem::path& dir, std::vector<std::string> extra = {})
{
  std::vector<std::string> a = {"run", test::deck_path("quarter_five_spot.toml"), "--backend", "cpu", "--output",
                                dir.string()};
  for (const auto& s : kSmall) a.insert(a.end(), {"--set", s});
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace

TEST(RunLog, StepLinesShowEndTimeFractionAndTimeLeft)
{
  const auto dir = test::fresh_dir("run-log-steps");
  RunCommandLine cli;
  ASSERT_EQ(cli(run_args(dir)), 0);
  const auto steps = cli.matching(R"(^step +\d+  t +[0-9.]+ / 20\.0000 d +[0-9.]+%  ~\S+ left  dt )");
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.size(), cli.matching("^step ").size()) << "every step line shows the progress";
  // The last step reaches the end: 100% and nothing left.
  EXPECT_NE(steps.back().find("20.0000 / 20.0000 d 100.0%  ~0s left"), std::string::npos) << steps.back();
  std::filesystem::remove_all(dir);
}

TEST(RunLog, ProgressAndDurations)
{
  const double day = 86400.0;
  // Half of the way from the start in 10 s: 10 s left.
  EXPECT_EQ(describe_progress(10 * day, 20 * day, 0.0, 10.0), "t    10.0000 / 20.0000 d  50.0%  ~10s left");
  // A restart at day 10 that reached day 15 in 30 s: 5 more days take 30 s more.
  EXPECT_EQ(describe_progress(15 * day, 20 * day, 10 * day, 30.0), "t    15.0000 / 20.0000 d  75.0%  ~30s left");
  EXPECT_EQ(describe_progress(20 * day, 20 * day, 0.0, 5.0), "t    20.0000 / 20.0000 d 100.0%  ~0s left");
  EXPECT_EQ(describe_progress(0.0, 20 * day, 0.0, 0.0), "t     0.0000 / 20.0000 d   0.0%  ~? left");
  EXPECT_EQ(format_duration(42.4), "42s");
  EXPECT_EQ(format_duration(0.2), "<1s");
  EXPECT_EQ(format_duration(0.0), "0s");
  EXPECT_EQ(format_duration(245), "4m05s");
  EXPECT_EQ(format_duration(2 * 3600 + 3 * 60 + 10), "2h03m");
  EXPECT_EQ(format_duration(-1), "?");
}

TEST(RunLog, EchoesSetOverridesInOrder)
{
  const auto dir = test::fresh_dir("run-log-set");
  RunCommandLine cli;
  ASSERT_EQ(cli(run_args(dir, {"--set", "solver.newton.max_iterations=15"})), 0);
  const auto echoed = cli.matching("^override: --set ");
  ASSERT_EQ(echoed.size(), kSmall.size() + 1);
  for (std::size_t k = 0; k < kSmall.size(); ++k) EXPECT_EQ(echoed[k], "override: --set " + kSmall[k]);
  EXPECT_EQ(echoed.back(), "override: --set solver.newton.max_iterations=15");
  std::filesystem::remove_all(dir);
}

// The start-up parts begin with what `blockres run` does before the simulation (reading the deck with its
// rock property fields, the output checks and the backend), the parts add up to the start-up of the time
// line, and the start-up is part of the total.
TEST(RunLog, StartupPartsBeginWithTheDeckAndTheBackend)
{
  const auto dir = test::fresh_dir("run-log-startup");
  RunCommandLine cli;
  ASSERT_EQ(cli(run_args(dir)), 0);
  const auto parts = cli.matching("^start-up parts: ");
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].rfind("start-up parts: deck (with its rock property fields) ", 0), 0u) << parts[0];
  EXPECT_NE(parts[0].find(", output checks and the backend "), std::string::npos) << parts[0];
  EXPECT_NE(parts[0].find(", grid (cells, faces, transmissibilities) "), std::string::npos) << parts[0];
  double sum = 0.0;
  const std::regex part(R"(([0-9]+\.[0-9]+) s[,;])");
  for (std::sregex_iterator it(parts[0].begin(), parts[0].end(), part), end; it != end; ++it)
    sum += std::stod((*it)[1].str());
  const auto time = cli.matching("^time: ");
  ASSERT_EQ(time.size(), 1u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(time[0], m, std::regex(R"(^time: ([0-9.]+) s total; .* start-up ([0-9.]+) s, )")))
      << time[0];
  const double total = std::stod(m[1].str()), startup = std::stod(m[2].str());
  EXPECT_NEAR(sum, startup, 0.005 * 9 + 0.005) << parts[0];  // each part and the start-up rounded to 0.01 s
  EXPECT_LE(startup, total + 0.005);
  std::filesystem::remove_all(dir);
}

TEST(RunLog, RestartTimeLineSeparatesThisRunFromTheOriginal)
{
  const auto dir = test::fresh_dir("run-log-restart");
  RunCommandLine first;
  ASSERT_EQ(first(run_args(dir / "a")), 0);
  const auto fresh_time = first.matching("^time: ");
  ASSERT_EQ(fresh_time.size(), 1u);
  EXPECT_EQ(fresh_time[0].find("this run"), std::string::npos) << "a fresh run has no history: " << fresh_time[0];

  RunCommandLine second;
  const std::string source = (dir / "a" / "quarter_five_spot.h5").string();
  ASSERT_EQ(second(run_args(dir / "b", {"--restart", source, "--restart-report", "1"})), 0);
  const auto time = second.matching("^time: ");
  ASSERT_EQ(time.size(), 1u);
  std::smatch m;
  const std::regex re(R"(^time: ([0-9.]+) s total \(this run ([0-9.]+) s \+ the original run\(s\) ([0-9.]+) s up to )"
                      R"(report 1 of (\S+); the parts below are totals of both\); assembly )");
  ASSERT_TRUE(std::regex_search(time[0], m, re)) << time[0];
  EXPECT_EQ(m[4].str(), source);
  EXPECT_NEAR(std::stod(m[1].str()), std::stod(m[2].str()) + std::stod(m[3].str()), 0.011);
  EXPECT_GT(std::stod(m[3].str()), 0.0);
  // The restarted run's progress is measured from the restart point (day 10), to the same end.
  EXPECT_FALSE(second.matching(R"(^step +\d+  t +1[0-9]\.[0-9]+ / 20\.0000 d )").empty());
  std::filesystem::remove_all(dir);
}

TEST(RunLog, NoUsableGpuReadsAsAChoiceNotAnError)
{
  EXPECT_EQ(no_gpu_reason("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version"),
            "driver missing");
  EXPECT_EQ(no_gpu_reason("cudaErrorNoDevice: no CUDA-capable device is detected"), "no CUDA device found");
  EXPECT_EQ(no_gpu_reason("cudaGetDeviceCount reports 0 devices"), "no CUDA device found");
  EXPECT_EQ(no_gpu_reason("built without CUDA"), "this blockres was built without CUDA");
  EXPECT_EQ(no_gpu_reason("cudaErrorSomethingElse: text"), "cudaErrorSomethingElse");

  // On this machine (no GPU in CI): auto says it runs on the CPU, and CUDA's words only with -v.
  std::string why;
  if (Executor::cuda_device_count(&why) > 0) GTEST_SKIP() << "a GPU is usable here";
  std::vector<std::string> quiet, verbose;
  (void)choose_backend("auto", [&](const std::string& s) { quiet.push_back(s); });
  (void)choose_backend("auto", [&](const std::string& s) { verbose.push_back(s); }, true);
  ASSERT_EQ(quiet.size(), 1u);
  EXPECT_NE(quiet[0].find("backend: cpu (auto: no usable GPU (" + no_gpu_reason(why) + "): running on the CPU; "),
            std::string::npos)
      << quiet[0];
  EXPECT_EQ(quiet[0].find("cudaError"), std::string::npos) << quiet[0];
  EXPECT_EQ(verbose[0], quiet[0]);
  if (Executor::built_with_cuda()) {
    ASSERT_EQ(verbose.size(), 2u);
    EXPECT_EQ(verbose[1], "backend: CUDA reports " + why);
  }
}

// schedule.tstep end to end (item 14): a report after each listed step, and with dt_initial = dt_max
// at least the longest step, one time step per entry (replaying another simulator's steps).
TEST(RunLog, TstepReplaysTheListedSteps)
{
  const auto dir = test::fresh_dir("run-log-tstep");
  std::string deck;
  {
    std::ifstream in(test::deck_path("quarter_five_spot.toml"));
    deck.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string from = "end_time = 1800.0\nreport_interval = 180.0\ndt_initial = 1.0\ndt_max = 60.0";
  const auto at = deck.find(from);
  ASSERT_NE(at, std::string::npos) << "the shipped deck's schedule changed";
  deck.replace(at, from.size(), "tstep = [1, 2, \"2*5\"]\ndt_initial = 5.0\ndt_max = 5.0");
  std::ofstream(dir / "tstep.toml") << deck;
  std::vector<std::string> args = run_args(dir / "out");
  args[1] = (dir / "tstep.toml").string();
  // kSmall's end_time and report_interval cannot be combined with tstep: leave them out.
  std::vector<std::string> kept;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k] == "--set" && args[k + 1].rfind("schedule.", 0) == 0) {
      ++k;
      continue;
    }
    kept.push_back(args[k]);
  }
  RunCommandLine cli;
  ASSERT_EQ(cli(kept), 0);
  const auto steps = cli.matching("^step ");
  ASSERT_EQ(steps.size(), 4u);
  const char* expected[] = {R"(t +1\.0000 / 13\.0000 d .*dt +1\.0000 d)", R"(t +3\.0000 / 13\.0000 d .*dt +2\.0000 d)",
                            R"(t +8\.0000 / 13\.0000 d .*dt +5\.0000 d)", R"(t +13\.0000 / 13\.0000 d .*dt +5\.0000 d)"};
  for (std::size_t k = 0; k < 4; ++k) EXPECT_TRUE(std::regex_search(steps[k], std::regex(expected[k]))) << steps[k];
  const Results r = read_results(dir / "out" / "tstep.h5");
  EXPECT_EQ(r.report_times, (std::vector<double>{0.0, 1.0, 3.0, 8.0, 13.0}));
  std::filesystem::remove_all(dir);
}

TEST(RunLog, HelpMentionsCheckpointsAndRestart)
{
  RunCommandLine cli;
  const std::string help = cli.run.app->help();
  EXPECT_NE(help.find("output.checkpoint"), std::string::npos) << help;
  EXPECT_NE(help.find("--restart"), std::string::npos) << help;
  EXPECT_NE(help.find("NAME.checkpoint.h5"), std::string::npos) << help;
}
