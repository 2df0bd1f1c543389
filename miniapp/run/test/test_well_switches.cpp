// Well control switches end to end (quarter five-spot 10x10x3, CPU): an injector whose 300 m3/day
// need more than its 260 bar limit switches to BHP control in the first step; every switch is one
// log line (time, well, from -> to, the BHP that decided it against the limit) and one row of
// /well_switches; no well flips back within a step (under a rule re-decided freely in every
// assembly this deck flips rate -> BHP -> rate -> BHP in its first step). A run without switches
// has an empty /well_switches.
#include "verification/run_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

using namespace blockres;

namespace {

const std::vector<std::string> kSmall = {"grid.nx=10",      "grid.ny=10",           "grid.nz=3",
                                         "wells.PROD.i=10", "wells.PROD.j=10",      "schedule.end_time=300",
                                         "schedule.report_interval=300", "output.vtk=false"};

struct Logged {
  Results results;
  std::vector<std::string> lines;
};

Logged run(std::vector<std::string> overrides)
{
  overrides.insert(overrides.begin(), kSmall.begin(), kSmall.end());
  const RunConfig cfg = load_deck(test::deck_path("quarter_five_spot.toml"), overrides);
  const auto dir = test::fresh_dir("well-switches");
  Logged l;
  const auto out = run_simulation(cfg, Executor::create_cpu(), {dir, "test", false, {}},
                                  [&](const std::string& line) { l.lines.push_back(line); });
  l.results = read_results(out.result_file);
  std::filesystem::remove_all(dir);
  return l;
}

}  // namespace

TEST(WellSwitches, LoggedStoredAndNeverBackWithinAStep)
{
  const Logged l = run({"wells.INJ.rate=300", "wells.INJ.bhp=260"});
  const Results& r = l.results;
  const std::size_t n = r.switch_step.size();
  ASSERT_GE(n, 1u);
  for (const auto* c : {&r.switch_attempt, &r.switch_iteration, &r.switch_time, &r.switch_well, &r.switch_to_bhp,
                        &r.switch_bhp_needed, &r.switch_bhp_limit})
    ASSERT_EQ(c->size(), n);

  // The first switch: INJ (well 0) to BHP control in step 1, its target needing more than 260 bar.
  EXPECT_EQ(r.switch_step[0], 1.0);
  EXPECT_EQ(r.switch_well[0], 0.0);
  EXPECT_EQ(r.switch_to_bhp[0], 1.0);
  EXPECT_EQ(r.switch_bhp_limit[0], 260.0);
  EXPECT_GT(r.switch_bhp_needed[0], 260.0);
  EXPECT_NEAR(r.switch_time[0], r.step_time[0], 1e-12);  // the end of the step it was decided in
  EXPECT_EQ(r.well_at_bhp[0][0], 1.0);
  EXPECT_NEAR(r.well_bhp[0][0], 260.0, 1e-9);

  // One log line per stored switch, in order, with the same step, attempt, iteration and values.
  const std::regex line_re(R"(^  well (\w+): (rate -> BHP|BHP -> rate) control at t = ([0-9.e+-]+) d \(step (\d+), attempt (\d+), )"
                           R"(Newton iteration (\d+)\): (.*)$)");
  std::vector<std::string> kept;
  for (const auto& s : l.lines)
    if (s.find(" control at t = ") != std::string::npos) kept.push_back(s);
  ASSERT_EQ(kept.size(), n) << "log lines and /well_switches rows differ";
  for (std::size_t k = 0; k < n; ++k) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(kept[k], m, line_re)) << kept[k];
    EXPECT_EQ(m[1].str(), r.well_names.at(std::size_t(r.switch_well[k]))) << kept[k];
    EXPECT_EQ(m[2].str() == "rate -> BHP", r.switch_to_bhp[k] == 1.0) << kept[k];
    EXPECT_NEAR(std::stod(m[3].str()), r.switch_time[k], 1e-5 * std::max(1.0, r.switch_time[k])) << kept[k];
    EXPECT_EQ(std::stod(m[4].str()), r.switch_step[k]) << kept[k];
    EXPECT_EQ(std::stod(m[5].str()), r.switch_attempt[k]) << kept[k];
    EXPECT_EQ(std::stod(m[6].str()), r.switch_iteration[k]) << kept[k];
    const std::string why = m[7].str();
    if (std::isnan(r.switch_bhp_needed[k])) {
      EXPECT_NE(why.find("no BHP meets its rate target"), std::string::npos) << kept[k];
    } else {
      EXPECT_NE(why.find(fmt::format("needs a BHP of {:.2f} bar", r.switch_bhp_needed[k])), std::string::npos)
          << kept[k];
      EXPECT_NE(why.find(fmt::format("the limit {:.2f} bar", r.switch_bhp_limit[k])), std::string::npos) << kept[k];
    }
  }

  // Within one attempt of one step a well switches at most once each way, and never back to rate
  // after going to BHP control.
  std::map<std::tuple<double, double, double>, std::vector<double>> per_attempt;  // (step, attempt, well) -> to_bhp
  for (std::size_t k = 0; k < n; ++k)
    per_attempt[{r.switch_step[k], r.switch_attempt[k], r.switch_well[k]}].push_back(r.switch_to_bhp[k]);
  for (const auto& [key, seq] : per_attempt) {
    EXPECT_LE(seq.size(), 2u) << "step " << std::get<0>(key);
    for (std::size_t k = 1; k < seq.size(); ++k)
      EXPECT_FALSE(seq[k - 1] == 1.0 && seq[k] == 0.0)
          << "well " << std::get<2>(key) << " went back to rate control within step " << std::get<0>(key);
  }
}

TEST(WellSwitches, NoneInARunWithoutSwitches)
{
  const Logged l = run({});  // the deck's 100 m3/day fit under its 400 bar limit
  EXPECT_TRUE(l.results.switch_step.empty());
  for (const auto& s : l.lines) EXPECT_EQ(s.find(" control at t = "), std::string::npos) << s;
  for (const auto& row : l.results.well_at_bhp) EXPECT_EQ(row[0], 0.0);
}
