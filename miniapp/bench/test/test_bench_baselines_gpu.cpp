// The GPU sections meet matrices their library baselines cannot represent, made cheap by lowering the
// limits (BenchCommonOptions::baseline_limits) the way inputs/multicomponent_64.toml's Jacobian meets
// cuSPARSE's 2^31 - 1: each such baseline is skipped with a log line naming it and why, recorded as
// "skipped" in the report, and ours is still timed and verified (exit code 0). Label `gpu`.
#include "miniapp/bench/bench.hpp"
#include "miniapp/io/json_file.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace blockres;

namespace {

std::filesystem::path scratch(const std::string& name)
{
  const auto dir = std::filesystem::temp_directory_path() / ("blockres_bench_baselines_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

int count_containing(const std::vector<std::string>& lines, const std::string& part)
{
  int n = 0;
  for (const auto& l : lines) n += l.find(part) != std::string::npos;
  return n;
}

BsrmvBenchOptions small_bsrmv(const std::string& json)
{
  BsrmvBenchOptions o;
  o.block_sizes = {2};
  o.stencils = {7};
  o.powerlaw_block_sizes = {};
  o.matrix_gb = 0.001;  // a 15^3 grid: 3375 block rows, 6750 scalar rows
  o.reps = 2;
  o.warmup = 1;
  o.json_path = scratch(json).string();
  return o;
}

}  // namespace

TEST(BenchBaselinesGpu, BsrmvSkipsEveryCusparseBaselineBeyondTheIndexLimitAndStillReportsOurs)
{
  BsrmvBenchOptions o = small_bsrmv("index.json");
  o.baseline_limits.index_limit = 1000;  // the scalar view's 6750 rows do not fit
  std::vector<std::string> log;
  ASSERT_EQ(run_bsrmv_bench(o, [&](const std::string& l) { log.push_back(l); }), 0);
  EXPECT_EQ(count_containing(log, "bench bsrmv: stencil7 bs 2: skipped baselines cusparse_bsrmv_row, cusparse_bsrmv_col, "
                                  "cusparse_spmv_bsr_row, cusparse_spmv_bsr_col, cusparse_spmv_csr_default, "
                                  "cusparse_spmv_csr_alg2: 32-bit indices: "),
            1);
  const Json j = read_json_file(o.json_path);
  EXPECT_TRUE(j["all_verified"].get<bool>());
  ASSERT_EQ(j["results"].size(), 1u);
  const Json& r = j["results"][0];
  EXPECT_LE(r["max_rel_error_blockres"].get<double>(), 1e-12);
  EXPECT_GT(r["blockres"]["median_ms"].get<double>(), 0.0);
  EXPECT_TRUE(r["fastest_baseline"].is_null());
  ASSERT_EQ(r["baselines"].size(), 6u);
  for (const auto& b : r["baselines"]) {
    ASSERT_TRUE(b.contains("skipped")) << b.dump();
    EXPECT_NE(b["skipped"].get<std::string>().find("6750 rows"), std::string::npos) << b.dump();
    EXPECT_FALSE(b.contains("time")) << b.dump();
  }
}

TEST(BenchBaselinesGpu, BsrmvSkipsOnlyTheBaselinesWhoseCopiesDoNotFitTheDeviceMemory)
{
  BsrmvBenchOptions o = small_bsrmv("memory.json");
  o.baseline_limits.reserve_bytes = 1e15;  // no copy fits: the row-major BSR baselines need none
  std::vector<std::string> log;
  ASSERT_EQ(run_bsrmv_bench(o, [&](const std::string& l) { log.push_back(l); }), 0);
  EXPECT_EQ(count_containing(log, "skipped baselines cusparse_bsrmv_col, cusparse_spmv_bsr_col: device memory: the "
                                  "column-major copy of the values needs"),
            1);
  EXPECT_EQ(count_containing(log, "skipped baselines cusparse_spmv_csr_default, cusparse_spmv_csr_alg2: device memory: "
                                  "the expanded CSR copy needs"),
            1);
  const Json j = read_json_file(o.json_path);
  EXPECT_TRUE(j["all_verified"].get<bool>());
  const Json& b = j["results"][0]["baselines"];
  ASSERT_EQ(b.size(), 6u);
  for (int k : {0, 2}) {  // bsrmv_row, spmv_bsr_row: ran and verified
    EXPECT_FALSE(b[k].contains("skipped")) << b[k].dump();
    EXPECT_FALSE(b[k]["wrong"].get<bool>()) << b[k].dump();
    EXPECT_GT(b[k]["speedup"].get<double>(), 0.0) << b[k].dump();
  }
  for (int k : {1, 3, 4, 5}) EXPECT_TRUE(b[k].contains("skipped")) << b[k].dump();
  EXPECT_FALSE(j["results"][0]["fastest_baseline"].is_null());
}

TEST(BenchBaselinesGpu, BatchedSkipsCublasBeyondItsBatchCountAndStillVerifiesOurs)
{
  BatchedBenchOptions o;
  o.sizes = {4, 40};
  o.max_blocks = 1000;
  o.reps = 2;
  o.warmup = 1;
  o.block_jacobi_section = false;
  o.json_path = scratch("batched.json").string();
  o.baseline_limits.index_limit = 999;  // cuBLAS's batch count, lowered below the 1000 blocks
  std::vector<std::string> log;
  ASSERT_EQ(run_batched_bench(o, [&](const std::string& l) { log.push_back(l); }), 0);
  // n 4: gemv, getrf and getrs in both layouts, matinv; n 40: getrf and getrs in both layouts.
  EXPECT_EQ(count_containing(log, "skipped: cuBLAS batched calls take an int batch count: 1000 blocks of"), 6 + 4);
  const Json j = read_json_file(o.json_path);
  EXPECT_TRUE(j["all_verified"].get<bool>());
  int ours = 0, skipped = 0;
  for (const auto& r : j["results"]) {
    if (r["library"] == "cublas") {
      EXPECT_TRUE(r.contains("skipped")) << r.dump();
      ++skipped;
    } else {
      EXPECT_TRUE(r["verified"].get<bool>()) << r.dump();
      EXPECT_TRUE(r["speedup_vs_baseline"].is_null()) << r.dump();  // NaN: no baseline ran
      ++ours;
    }
  }
  EXPECT_EQ(skipped, 10);
  EXPECT_GT(ours, 0);
}

TEST(BenchBaselinesGpu, IsaiSkipsCusparseIlu0BeyondTheIndexLimitAndStillRunsOurs)
{
  IsaiBenchOptions o;
  o.block_sizes = {2};
  o.max_side = 10;
  o.powers = {1};
  o.general_powers = {1};
  o.methods = {"gmres"};
  o.reps = 2;
  o.warmup = 1;
  o.json_path = scratch("isai.json").string();
  o.baseline_limits.index_limit = 1000;  // 10^3 x 2 = 2000 scalar rows
  std::vector<std::string> log;
  ASSERT_EQ(run_isai_bench(o, [&](const std::string& l) { log.push_back(l); }), 0);
  EXPECT_EQ(count_containing(log, "bench isai: stencil7_bs2: skipped baselines csrilu02, SpSV L+U (CSR): 32-bit"), 1);
  EXPECT_EQ(count_containing(log, "bench isai: stencil7_bs2: skipped baselines bsrilu02, bsrsv2 L+U: 32-bit"), 1);
  EXPECT_EQ(count_containing(log, "bench isai: stencil7_bs2: skipped baseline cusparse_ilu0: 32-bit"), 1);
  const Json j = read_json_file(o.json_path);
  EXPECT_TRUE(j["all_verified"].get<bool>());
  int skipped_kernels = 0, our_setup = 0, our_apply = 0;
  for (const auto& r : j["kernels"]) {
    if (r.contains("skipped")) ++skipped_kernels;
    our_setup += r["op"] == "ilu0_setup" && r["variant"] == "ours";
    our_apply += r["op"] == "apply" && r["variant"] == "ilu0 exact (ours)" && r["verified"].get<bool>();
  }
  EXPECT_EQ(skipped_kernels, 4);  // csrilu02, SpSV, bsrilu02, bsrsv2
  EXPECT_EQ(our_setup, 1);
  EXPECT_EQ(our_apply, 1);
  int skipped_solves = 0;
  for (const auto& r : j["solve"]) skipped_solves += r.contains("skipped");
  EXPECT_EQ(skipped_solves, 1);
}
