// Which library baselines of `blockres bench` can represent a matrix, decided on the CPU: the 32-bit
// index limit of cuSPARSE's scalar and BSR views (the nc 64 deck's Jacobian: 2.8e9 entries), the device
// memory of the extra copies, cuBLAS's batch count and matinv's 32x32, the one log line per reason, and
// a skipped baseline's verdict (not wrong, no speedup).
#include "miniapp/bench/baseline_limits.hpp"
#include "miniapp/bench/bench_timing.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <string>
#include <vector>

using namespace blockres::bench;

namespace {

// inputs/multicomponent_64.toml's Jacobian: 50 x 50 x 40 cells, 7-point stencil, 64 unknowns per cell.
BsrShape nc64_jacobian()
{
  const std::uint64_t cells = 50 * 50 * 40;
  const std::uint64_t faces = 49 * 50 * 40 + 50 * 49 * 40 + 50 * 50 * 39;
  return {cells, cells, cells + 2 * faces, 64};
}

std::vector<std::string> names(const std::vector<BaselineDecision>& plan)
{
  std::vector<std::string> n;
  for (const auto& d : plan) n.push_back(d.name);
  return n;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(BaselineLimits, TheNc64JacobianDoesNotFitCusparses32BitIndicesAndEveryCusparseBaselineIsSkippedInOneLine)
{
  const BsrShape m = nc64_jacobian();
  ASSERT_EQ(m.blocks, 687000u);
  EXPECT_EQ(m.scalar_entries(), 2813952000u);
  const std::string why = scalar_view_limit(m, {});
  EXPECT_TRUE(contains(why, "2813952000 entries")) << why;
  EXPECT_TRUE(contains(why, "6400000 rows")) << why;
  EXPECT_TRUE(contains(why, "more than the 2147483647")) << why;

  const auto plan = plan_bsrmv_baselines(m, 80e9, {});
  EXPECT_EQ(names(plan), (std::vector<std::string>{"cusparse_bsrmv_row", "cusparse_bsrmv_col", "cusparse_spmv_bsr_row",
                                                   "cusparse_spmv_bsr_col", "cusparse_spmv_csr_default",
                                                   "cusparse_spmv_csr_alg2"}));
  for (const auto& d : plan) EXPECT_EQ(d.skipped, why) << d.name;
  const auto lines = skip_lines("bench bsrmv", "multicomponent_64 bs 64", plan);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("bench bsrmv: multicomponent_64 bs 64: skipped baselines cusparse_bsrmv_row, "
                           "cusparse_bsrmv_col, cusparse_spmv_bsr_row, cusparse_spmv_bsr_col, cusparse_spmv_csr_default, "
                           "cusparse_spmv_csr_alg2: 32-bit indices: ",
                           0),
            0u)
      << lines[0];
}

TEST(BaselineLimits, AJacobianThatFitsRunsEveryBaselineWhenMemoryAllows)
{
  BsrShape m = nc64_jacobian();
  m.bs = 32;  // 7.0e8 entries
  EXPECT_EQ(scalar_view_limit(m, {}), "");
  for (const auto& d : plan_bsrmv_baselines(m, 80e9, {})) EXPECT_EQ(d.skipped, "") << d.name;
  EXPECT_TRUE(skip_lines("bench bsrmv", "x", plan_bsrmv_baselines(m, 80e9, {})).empty());
}

TEST(BaselineLimits, ACopyThatDoesNotFitTheFreeDeviceMemorySkipsOnlyTheBaselinesThatNeedIt)
{
  BsrShape m = nc64_jacobian();
  m.bs = 32;
  // Column-major copy 5.63 GB (+ 0.27 GB reserve) fits 6 GB; the expanded CSR (8.45 GB) does not.
  const auto plan = plan_bsrmv_baselines(m, 6e9, {});
  ASSERT_EQ(plan.size(), 6u);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(plan[k].skipped, "") << plan[k].name;
  for (int k = 4; k < 6; ++k) {
    EXPECT_TRUE(contains(plan[k].skipped, "the expanded CSR copy needs 8.45 GB")) << plan[k].skipped;
    EXPECT_TRUE(contains(plan[k].skipped, "6.00 GB are free")) << plan[k].skipped;
  }
  const auto lines = skip_lines("bench bsrmv", "j", plan);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_TRUE(contains(lines[0], "skipped baselines cusparse_spmv_csr_default, cusparse_spmv_csr_alg2: device memory"));
  // Less memory still: the column-major copy goes too, under its own reason (two lines).
  const auto tight = plan_bsrmv_baselines(m, 5e9, {});
  EXPECT_EQ(tight[0].skipped, "");
  EXPECT_TRUE(contains(tight[1].skipped, "column-major copy of the values needs 5.63 GB")) << tight[1].skipped;
  EXPECT_EQ(skip_lines("bench bsrmv", "j", tight).size(), 2u);
}

TEST(BaselineLimits, TheIndexLimitIsInclusiveOnRowsColumnsAndEntries)
{
  BaselineLimits lim;
  lim.index_limit = 100;
  EXPECT_EQ(scalar_view_limit({5, 5, 25, 2}, lim), "");  // 100 entries
  EXPECT_NE(scalar_view_limit({5, 5, 26, 2}, lim), "");  // 104 entries
  EXPECT_EQ(scalar_view_limit({50, 50, 25, 2}, lim), "");  // 100 rows, 100 columns
  EXPECT_NE(scalar_view_limit({51, 1, 1, 2}, lim), "");  // 102 rows
  EXPECT_NE(scalar_view_limit({1, 51, 1, 2}, lim), "");  // 102 columns
  // The real limit, at 2^31 - 1 and one past it.
  EXPECT_EQ(scalar_view_limit({INT_MAX, INT_MAX, INT_MAX, 1}, {}), "");
  EXPECT_NE(scalar_view_limit({1, 1, std::uint64_t(INT_MAX) + 1, 1}, {}), "");
}

TEST(BaselineLimits, ScalarMatricesHaveOnlyTheCsrBaselines)
{
  const auto plan = plan_bsrmv_baselines({1000, 1000, 7000, 1}, 1e9, {});
  EXPECT_EQ(names(plan), (std::vector<std::string>{"cusparse_spmv_csr_default", "cusparse_spmv_csr_alg2"}));
}

TEST(BaselineLimits, DeviceMemoryKeepsTheReserveForTheLibrary)
{
  BaselineLimits lim;
  lim.reserve_bytes = 100;
  EXPECT_EQ(device_memory_limit("x", 900, 1000, lim), "");
  EXPECT_NE(device_memory_limit("x", 901, 1000, lim), "");
  lim.reserve_bytes = 0;
  EXPECT_EQ(device_memory_limit("x", 1000, 1000, lim), "");
  EXPECT_EQ(device_memory_limit("the copy", 2e9, 1e9, {}),
            "device memory: the copy needs 2.00 GB and 0.27 GB more for the library's workspace, 1.00 GB are free");
}

TEST(BaselineLimits, CublasBatchCountAndMatinvSize)
{
  EXPECT_EQ(cublas_batched_limit(512, INT_MAX, {}), "");
  EXPECT_TRUE(contains(cublas_batched_limit(4, std::uint64_t(INT_MAX) + 1, {}), "2147483648 blocks of 4x4"));
  EXPECT_EQ(cublas_matinv_limit(32), "");
  EXPECT_EQ(cublas_matinv_limit(33), "cublasDmatinvBatched inverts blocks of at most 32x32; these are 33x33");
}

TEST(BaselineLimits, CusparseIlu0NeedsTheScalarViewAndItsCopies)
{
  const BsrShape big = nc64_jacobian();
  EXPECT_EQ(plan_cusparse_ilu0(big, false, 1e12, {}).skipped, scalar_view_limit(big, {}));
  EXPECT_EQ(plan_cusparse_ilu0(big, true, 1e12, {}).name, "bsrilu02");
  EXPECT_EQ(plan_cusparse_ilu0(big, true, 1e12, {}).skipped, scalar_view_limit(big, {}));
  const BsrShape m{1000000, 1000000, 7000000, 4};  // 1.12e8 entries: values 0.90 GB
  EXPECT_EQ(plan_cusparse_ilu0(m, true, 2.1e9, {}).skipped, "");  // 1.79 GB + reserve
  EXPECT_TRUE(contains(plan_cusparse_ilu0(m, true, 1.9e9, {}).skipped, "bsrilu02's copies of the values needs 1.79 GB"));
  // CSR: values twice and the expansion's indices: 16 B + 4 B per entry + row pointers.
  EXPECT_TRUE(contains(plan_cusparse_ilu0(m, false, 2.1e9, {}).skipped, "needs 2.26 GB"))
      << plan_cusparse_ilu0(m, false, 2.1e9, {}).skipped;
  EXPECT_EQ(plan_cusparse_ilu0(m, false, 2.6e9, {}).skipped, "");
}

TEST(BaselineLimits, ASkippedBaselineIsNeitherWrongNorTheFastestAndGetsNoSpeedup)
{
  std::vector<Baseline> b{{"ran", {2.0, 2.0, 2.0}, 0.0, {}}, {"skipped", {}, nan_v, "32-bit indices: ..."}};
  const auto v = judge_baselines(b, 1e-12);
  EXPECT_EQ(v.wrong, (std::vector<bool>{false, false}));
  EXPECT_EQ(v.fastest, 0);
  EXPECT_TRUE(std::isnan(speedup_over(b, v, 1, 1.0)));
  b.erase(b.begin());  // every baseline skipped: no speedup at all, and nothing wrong
  const auto none = judge_baselines(b, 1e-12);
  EXPECT_EQ(none.fastest, -1);
  EXPECT_FALSE(none.any_wrong());
  EXPECT_TRUE(std::isnan(none.speedup(b, 1.0)));
}
