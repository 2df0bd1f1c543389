// `blockres tune` on the device (label gpu; skipped without one): two block sizes tuned with a tiny matrix and
// budget, the cache written, read back with this device's key, and used: a matrix on an executor holding it
// plans the cached configuration (an explicit one still wins, an untuned block size takes the rule), a run
// records it in its result file; a budget that runs out leaves every block size to the rule, in the file too.
#include "linalg/bsr_matrix.hpp"
#include "miniapp/io/h5.hpp"
#include "miniapp/io/tuning_cache.hpp"
#include "miniapp/run/backend.hpp"
#include "miniapp/run/run_cli.hpp"
#include "miniapp/tune/tune.hpp"

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

fs::path fresh_dir(const std::string& tag)
{
  static int n = 0;
  const auto d = fs::temp_directory_path() / ("blockres-tune-gpu-" + tag + "-" + std::to_string(::getpid()) + "-" +
                                              std::to_string(n++));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

BsrPattern tridiagonal(index_t n)
{
  BsrPattern p;
  p.nrows = p.ncols = n;
  p.row_ptr.push_back(0);
  for (index_t r = 0; r < n; ++r) {
    for (index_t c = std::max<index_t>(0, r - 1); c <= std::min<index_t>(n - 1, r + 1); ++c) p.col_ind.push_back(c);
    p.row_ptr.push_back(static_cast<index_t>(p.col_ind.size()));
  }
  return p;
}

TuneOptions tiny(const std::string& cache)
{
  TuneOptions o;
  o.block_sizes = {2, 32};
  o.size_gb = 0.005;
  o.budget_s = 600;
  o.reps = 3;
  o.warmup = 1;
  o.tuning_cache = cache;
  o.command_line = "test_tune_gpu";
  return o;
}

}  // namespace

TEST(TuneGpu, TwoBlockSizesWrittenReadBackAndUsed)
{
  const auto dir = fresh_dir("used");
  const std::string cache = (dir / "cache.json").string(), report = (dir / "tune.json").string();
  std::vector<std::string> lines;
  const auto log = [&](const std::string& l) { lines.push_back(l); };
  TuneOptions o = tiny(cache);
  o.json_path = report;
  ASSERT_EQ(run_tune(o, log), 0);
  ASSERT_TRUE(fs::exists(cache));
  ASSERT_TRUE(fs::exists(report));

  const BsrmvSpace space = compiled_bsrmv_space();
  const TuningKey key = make_tuning_key(Executor::cuda_device_identity(0), space);
  const TuningLoad load = load_tuning_cache(cache, key, space);
  ASSERT_EQ(load.status, TuningCacheStatus::loaded) << load.message;
  ASSERT_TRUE(load.tuning.bsrmv(2) && load.tuning.bsrmv(32));
  EXPECT_FALSE(load.tuning.bsrmv(4).has_value());
  const TuningRecord rec = parse_tuning_record(read_json_file(cache));
  ASSERT_EQ(rec.bsrmv.size(), 2u);
  for (const auto& b : rec.bsrmv) {
    EXPECT_GT(b.configs_timed, 1);
    EXPECT_EQ(b.configs_wrong, 0);
    ASSERT_TRUE(b.rule) << "bs " << b.bs << ": the rule is measured beside the choice";
    EXPECT_LE(b.best.sum_ms(), b.rule->sum_ms()) << "bs " << b.bs;
    EXPECT_GT(b.best.stencil7_read_fraction, 0);
  }
  EXPECT_GT(rec.read_gbs, 0);
  EXPECT_TRUE(rec.not_measured.empty());

  // The cache as it is, and one whose bs 2 choice is a configuration the rule does not give on either side
  // of its bandwidth and row-length thresholds (so "uses the cached configuration" cannot pass by the
  // rule's coincidence).
  const auto configs = kernels::cuda::bsrmv_configs(2);
  const auto other = *std::find_if(configs.begin(), configs.end(), [](const kernels::BsrmvConfig& c) {
    for (const double key : {0.0, 1000.0})
      for (const double row_blocks : {0.0, 1000.0})
        if (c == kernels::cuda::bsrmv_rule(2, key, row_blocks)) return false;
    return true;
  });
  TuningRecord edited = rec;
  edited.bsrmv[0].best.config = other;
  const std::string edited_path = (dir / "edited.json").string();
  write_tuning_cache(edited_path, edited);
  for (const auto& [path, expected2] : {std::pair{cache, *load.tuning.bsrmv(2)}, std::pair{edited_path, other}}) {
    lines.clear();
    const ExecPtr e = create_tuned_cuda(0, path, log);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("BSRMV: tuning cache " + path), std::string::npos) << lines[0];
    EXPECT_EQ(e->tuning().source.rfind("tuning cache " + path, 0), 0u) << e->tuning().source;
    const BsrPattern p = tridiagonal(101);
    EXPECT_EQ(BsrMatrix(e, 2, p).spmv_config(), expected2) << kernels::describe(BsrMatrix(e, 2, p).spmv_config());
    EXPECT_EQ(BsrMatrix(e, 32, p).spmv_config(), *load.tuning.bsrmv(32));
    const double key = e->dram_gbps_per_sm();
    const double row_blocks = double(p.nnzb()) / double(p.nrows);  // tridiagonal: short rows
    EXPECT_EQ(BsrMatrix(e, 4, p).spmv_config(), kernels::cuda::bsrmv_rule(4, key, row_blocks)) << "not tuned: the rule";
    SpmvOptions explicit_config;
    explicit_config.config = kernels::cuda::bsrmv_rule(2, key, row_blocks);
    EXPECT_EQ(BsrMatrix(e, 2, p, explicit_config).spmv_config(), kernels::cuda::bsrmv_rule(2, key, row_blocks))
        << "explicit wins";
    const auto plans = e->bsrmv_plans();
    ASSERT_EQ(plans.count(2), 1u);
    EXPECT_EQ(plans.find(2)->second, expected2);
    const std::string text = describe_bsrmv_plans(plans, e->tuning());
    EXPECT_NE(text.find("bs 2: " + kernels::describe(expected2) + " [measured]"), std::string::npos) << text;
    const auto rule4 = kernels::cuda::bsrmv_rule(4, key, row_blocks);
    EXPECT_NE(text.find("bs 4: " + kernels::describe(rule4) + " [built-in rule]"), std::string::npos) << text;
  }

  // A run on the device with that cache records it in its result file (quarter_five_spot: oil_water, bs 2).
  CLI::App app{"test", "blockres"};
  CommandContext context;
  context.log = log;
  context.error = log;
  const Subcommand run = register_run(app, context);
  std::vector<std::string> args = {"run", std::string(BLOCKRES_SOURCE_DIR) + "/inputs/quarter_five_spot.toml",
                                   "--backend", "cuda", "--output", (dir / "out").string(), "--tuning-cache",
                                   edited_path};
  for (const char* s : {"grid.nx=5", "grid.ny=5", "grid.nz=1", "wells.PROD.i=5", "wells.PROD.j=5",
                        "schedule.end_time=5", "schedule.report_interval=5", "output.vtk=false"})
    args.insert(args.end(), {"--set", s});
  std::reverse(args.begin(), args.end());
  lines.clear();
  app.parse(args);
  ASSERT_EQ(run.run(), 0);
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("BSRMV:", 0) == 0; }),
            1)
      << "the tuning source is logged once";
  const auto f = h5::File::open_read(dir / "out" / "quarter_five_spot.h5");
  EXPECT_EQ(h5::read_string_attribute(f.id(), "bsrmv_tuning").rfind("tuning cache " + edited_path, 0), 0u);
  const std::string used = h5::read_string_attribute(f.id(), "bsrmv_configs");
  EXPECT_NE(used.find("bs 2: " + kernels::describe(other) + " [measured]"), std::string::npos) << used;
  fs::remove_all(dir);
}

TEST(TuneGpu, ABudgetThatRunsOutLeavesTheRuleAndSaysSo)
{
  const auto dir = fresh_dir("budget");
  const std::string cache = (dir / "cache.json").string();
  std::vector<std::string> lines;
  TuneOptions o = tiny(cache);
  o.budget_s = 1e-3;  // gone before the first block size (the ceilings alone take longer)
  ASSERT_EQ(run_tune(o, [&](const std::string& l) { lines.push_back(l); }), 0);
  const TuningRecord rec = parse_tuning_record(read_json_file(cache));
  EXPECT_TRUE(rec.bsrmv.empty());
  EXPECT_EQ(rec.not_measured, (std::vector<int>{2, 32}));
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("time budget") != std::string::npos && l.find("not measured") != std::string::npos;
  }));
  const BsrmvSpace space = compiled_bsrmv_space();
  const TuningLoad load = load_tuning_cache(cache, make_tuning_key(Executor::cuda_device_identity(0), space), space);
  EXPECT_EQ(load.status, TuningCacheStatus::loaded) << load.message;
  EXPECT_TRUE(load.tuning.bsrmv_measured.empty());
  EXPECT_NE(load.message.find("bs 2,32 not measured"), std::string::npos) << load.message;
  fs::remove_all(dir);
}
