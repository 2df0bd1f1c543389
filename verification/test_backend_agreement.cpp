// CPU and CUDA backends give the same fields (1e-6 relative) on the quarter five-spot with
// tight tolerances, at every report step. Label `gpu`; skipped without a device.
#include "verification/run_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace blockres;

namespace {
// max |a - b| / max |b| over the active cells (NaN marks inactive cells in both).
double rel_diff(const std::vector<double>& a, const std::vector<double>& b)
{
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i])) continue;
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}
}  // namespace

TEST(BackendAgreement, QuarterFiveSpot)
{
  const std::vector<std::string> tight = {"solver.newton.tol_cnv=1e-8", "solver.newton.tol_mb=1e-11",
                                          "solver.linear.tolerance=1e-11", "solver.linear.max_iterations=5000"};
  const auto cpu = test::run_deck(test::deck_path("quarter_five_spot.toml"), tight, Executor::create_cpu());
  const auto gpu = test::run_deck(test::deck_path("quarter_five_spot.toml"), tight, Executor::create_cuda(0));
  ASSERT_EQ(cpu.results.report_times, gpu.results.report_times);
  ASSERT_EQ(cpu.results.step_time.size(), gpu.results.step_time.size()) << "the two backends took different steps";
  double worst_p = 0, worst_s = 0;
  for (std::size_t r = 0; r < cpu.results.report_times.size(); ++r) {
    const double dp = rel_diff(gpu.results.cell_field("pressure").rows[r], cpu.results.cell_field("pressure").rows[r]);
    const double ds = rel_diff(gpu.results.cell_field("sw").rows[r], cpu.results.cell_field("sw").rows[r]);
    worst_p = std::max(worst_p, dp), worst_s = std::max(worst_s, ds);
    EXPECT_LE(dp, 1e-6) << "pressure at report " << r;
    EXPECT_LE(ds, 1e-6) << "S_w at report " << r;
  }
  std::printf("CPU vs CUDA (%s), %zu reports: max rel diff pressure %.2e, S_w %.2e; "
              "CPU %d Newton / %d linear its in %.1f s; CUDA %d / %d in %.1f s\n",
              gpu.results.device.c_str(), cpu.results.report_times.size(), worst_p, worst_s,
              cpu.stats.newton_iterations, cpu.stats.linear_iterations, cpu.seconds, gpu.stats.newton_iterations,
              gpu.stats.linear_iterations, gpu.seconds);
}
