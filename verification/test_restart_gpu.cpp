// Restart and device allocation failures on the CUDA backend (label `gpu`, skipped without a device): a run restarted from a middle
// report gives the uninterrupted CUDA run within `blockres verify`'s same-backend tolerances, with
// the same time steps. The state is loaded on the host and uploaded through the executor.
#include "linalg/allocation.hpp"
#include "linalg/array.hpp"
#include "miniapp/verify/verify.hpp"
#include "verification/run_helpers.hpp"

#include <gtest/gtest.h>

#include <regex>

using namespace blockres;
namespace fs = std::filesystem;

namespace {

fs::path run_to(const std::string& deck, const std::vector<std::string>& overrides, const fs::path& dir,
                const fs::path& restart = {}, long report = -1)
{
  return test::run_into(Executor::create_cuda(0), deck, overrides, dir, restart, report);
}

void expect_same_run(const fs::path& result, const fs::path& baseline)
{
  const Results r = read_results(result), b = read_results(baseline);
  EXPECT_EQ(r.backend, "cuda");
  const VerifyReport rep = compare_results(r, b, default_tolerances());
  for (const auto& m : rep.mismatches) ADD_FAILURE() << m;
  EXPECT_TRUE(rep.pass()) << rep.failed_comparisons() << " comparisons failed";
  EXPECT_EQ(r.step_time.size(), b.step_time.size());
  double worst = 0;
  for (const auto& c : rep.comparisons) worst = std::max(worst, c.worst);
  std::printf("%s: %zu steps; worst |diff| / tolerance over every comparison %.3g\n", result.c_str(),
              r.step_time.size(), worst);
}

void restart_matches(const std::string& deck, const std::vector<std::string>& overrides, long report,
                     const std::string& tag)
{
  const auto dir = test::fresh_dir(tag);
  const auto full = run_to(deck, overrides, dir / "full");
  const auto cont = run_to(deck, overrides, dir / "cont", full, report);
  expect_same_run(cont, full);
  fs::remove_all(dir);
}

}  // namespace

TEST(RestartGpu, QuarterFiveSpotCpr)
{
  restart_matches("quarter_five_spot.toml",
                  {"grid.nx=20", "grid.ny=20", "grid.nz=5", "wells.PROD.i=20", "wells.PROD.j=20",
                   "schedule.end_time=540", "schedule.report_interval=90", "output.vtk=false"},
                  3, "restart-gpu-qfs");
}

TEST(RestartGpu, MulticomponentCprTrueImpes)
{
  restart_matches("multicomponent_8.toml",
                  {"grid.nx=10", "grid.ny=10", "grid.nz=3", "wells.PROD.i=10", "wells.PROD.j=10",
                   "schedule.end_time=5", "schedule.report_interval=1.25", "output.vtk=false"},
                  2, "restart-gpu-mc8");
}

// A device allocation that fails names what was allocated, the bytes asked and the bytes free: forced
// by the test hook (BLOCKRES_FAIL_ALLOC_ABOVE's limit), then a real one larger than any device.
TEST(OutOfMemoryGpu, DeviceAllocationFailureNamesBytesAskedAndFree)
{
  const auto exec = Executor::create_cuda(0);
  const AllocationLabel label("a test array");
  const std::regex message("^device memory: allocating a test array: [0-9.]+ GB \\(([0-9]+) bytes\\) failed: .* "
                           "\\([0-9.]+ GB = [0-9]+ bytes free of [0-9.]+ GB\\)");
  set_allocation_limit(1 << 20);
  try {
    Array<double> a(exec, 1 << 18);  // 2 MiB
    ADD_FAILURE() << "the forced failure did not happen";
  } catch (const OutOfMemory& e) {
    std::cmatch m;
    EXPECT_TRUE(std::regex_search(e.what(), m, message)) << e.what();
    EXPECT_EQ(m.size() > 1 ? m[1].str() : "", "2097152") << e.what();
  }
  set_allocation_limit(0);
  try {
    Array<double> a(exec, size64_t(1) << 47);  // 1 PiB
    ADD_FAILURE() << "a 1 PiB device allocation succeeded";
  } catch (const OutOfMemory& e) {
    EXPECT_TRUE(std::regex_search(e.what(), message)) << e.what();
  }
  Array<double> fine(exec, 1000);  // the executor still works
  EXPECT_EQ(fine.size(), 1000);
}
