// Material balance per time step, read back from the HDF5 result: the change of water and
// oil in place equals the net well flow over the step, to 1e-8 relative, when the Newton
// material-balance tolerance is tight (tol_mb = 1e-12). Runs the quarter five-spot deck
// (compressible fluids and rock, gravity, log-normal permeability) over a shortened schedule.
#include "verification/run_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace blockres;

TEST(MassBalance, EveryStepOfTheQuarterFiveSpot)
{
  auto exec = Executor::create_cpu();
  const auto r = test::run_deck(test::deck_path("quarter_five_spot.toml"),
                                {"schedule.end_time=240", "schedule.report_interval=120", "solver.newton.tol_mb=1e-12",
                                 "solver.linear.tolerance=1e-10"},
                                exec);
  const auto& R = r.results;
  const std::size_t nsteps = R.step_time.size();
  ASSERT_GT(nsteps, 5u);
  const StepSeries* in_place[2] = {&R.in_place_series("water_in_place"), &R.in_place_series("oil_in_place")};
  const Series* well_rates[2] = {&R.well_rate("water_rate"), &R.well_rate("oil_rate")};
  ASSERT_EQ(well_rates[0]->rows.size(), nsteps);
  double prev[2] = {in_place[0]->initial, in_place[1]->initial};
  double worst_in_place = 0, worst_flow = 0;
  for (std::size_t k = 0; k < nsteps; ++k) {
    const double now[2] = {in_place[0]->values[k], in_place[1]->values[k]};
    const std::vector<double>* rates[2] = {&well_rates[0]->rows[k], &well_rates[1]->rows[k]};
    for (int a = 0; a < 2; ++a) {
      double q = 0.0;  // surface m3/day into the reservoir
      for (double v : *rates[a]) q += v;
      const double flow = q * R.step_dt[k];
      const double imbalance = std::abs((now[a] - prev[a]) - flow);
      worst_in_place = std::max(worst_in_place, imbalance / now[a]);
      worst_flow = std::max(worst_flow, imbalance / std::abs(flow));
      EXPECT_LE(imbalance, 1e-8 * now[a]) << "step " << k << " phase " << a;
      EXPECT_LE(imbalance, 1e-8 * std::abs(flow)) << "step " << k << " phase " << a;
    }
    prev[0] = now[0], prev[1] = now[1];
  }
  std::printf("%zu steps: worst imbalance %.2e of fluid in place, %.2e of the step's well flow\n", nsteps,
              worst_in_place, worst_flow);
}
