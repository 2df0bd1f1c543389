// The well control rule (physics/model.hpp, WellSwitch) at the model level, both models: a rate well
// whose target needs a BHP beyond its limit switches to BHP control at the limit in that assembly
// and stays there for the rest of the step even when a later iterate would allow the rate again
// (no flip-flop within a step); a cut attempt restarts from the step's controls; in the next step
// the well returns to rate control as soon as the target is reachable within the limit. Every
// switch is reported once, with the BHP that decided it.
#include "physics/multicomponent/test/multicomponent_fixture.hpp"
#include "physics/oil_water/oil_water_model.hpp"
#include "physics/test/model_fixture.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using namespace blockres;
using namespace blockres::physics;

namespace {

// One model and its Jacobian; x_low and x_high: a state and the same state 20 bar higher in every
// cell, so the BHP an injector's rate target needs is about 20 bar higher at x_high.
struct Bench {
  ExecPtr exec = Executor::create_cpu();
  std::unique_ptr<Model> model;
  std::vector<double> x_low, x_high;

  void assemble(const std::vector<double>& x)
  {
    Vector xv(exec, std::span<const double>(x)), R(exec, x.size());
    BsrMatrix J(exec, model->block_size(), model->pattern());
    model->assemble(xv, xv, 1.0 * units::day, R, J);
  }
  void begin_step(const std::vector<double>& x0)
  {
    Vector xv(exec, std::span<const double>(x0));
    model->begin_step(xv);
  }
};

// The sequence of the rule on well 0 (a rate-controlled injector) of `b`, whose BHP limit lies
// between what its target needs at x_low and at x_high.
void check_rule(Bench& b, double limit)
{
  // Step 1, attempt 0.
  b.begin_step(b.x_low);
  b.assemble(b.x_low);
  EXPECT_TRUE(b.model->take_well_switches().empty());
  auto wr = b.model->well_results();
  EXPECT_FALSE(wr[0].at_bhp);
  EXPECT_LT(wr[0].bhp, limit);

  b.assemble(b.x_high);  // the target now needs more than the limit: rate -> BHP
  auto sw = b.model->take_well_switches();
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].well, 0);
  EXPECT_TRUE(sw[0].to_bhp);
  EXPECT_TRUE(sw[0].reachable);
  EXPECT_GT(sw[0].bhp_needed, limit);
  EXPECT_EQ(sw[0].bhp_limit, limit);
  wr = b.model->well_results();
  EXPECT_TRUE(wr[0].at_bhp);
  EXPECT_EQ(wr[0].bhp, limit);

  b.assemble(b.x_low);  // the rate would fit again, but not within this step
  EXPECT_TRUE(b.model->take_well_switches().empty());
  wr = b.model->well_results();
  EXPECT_TRUE(wr[0].at_bhp) << "the well flipped back to rate control within the step";
  EXPECT_EQ(wr[0].bhp, limit);
  b.assemble(b.x_high);
  EXPECT_TRUE(b.model->take_well_switches().empty());

  // The attempt is cut: attempt 1 starts from the step's controls (rate) again.
  b.begin_step(b.x_low);
  b.assemble(b.x_low);
  EXPECT_TRUE(b.model->take_well_switches().empty());
  EXPECT_FALSE(b.model->well_results()[0].at_bhp);
  b.assemble(b.x_high);
  sw = b.model->take_well_switches();
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_TRUE(sw[0].to_bhp);

  // Accepted at the limit; in step 2 the well returns to rate control where the target fits.
  b.model->accept_step();
  b.begin_step(b.x_high);
  b.assemble(b.x_high);  // still beyond the limit: stays, no switch
  EXPECT_TRUE(b.model->take_well_switches().empty());
  EXPECT_TRUE(b.model->well_results()[0].at_bhp);
  b.assemble(b.x_low);
  sw = b.model->take_well_switches();
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].well, 0);
  EXPECT_FALSE(sw[0].to_bhp);
  EXPECT_TRUE(sw[0].reachable);
  EXPECT_LT(sw[0].bhp_needed, limit);
  wr = b.model->well_results();
  EXPECT_FALSE(wr[0].at_bhp);
  EXPECT_EQ(wr[0].bhp, sw[0].bhp_needed);
}

std::vector<double> raised(std::vector<double> x, int bs, double dp)
{
  for (std::size_t i = 0; i < x.size(); i += std::size_t(bs)) x[i] += dp;
  return x;
}

}  // namespace

TEST(WellSwitching, OilWaterHeldAtTheLimitForTheRestOfTheStep)
{
  auto setup = test::small_setup(false, 5);
  const Grid grid(setup.grid, setup.rock);
  Bench b;
  b.x_low = test::random_state(grid.num_active());
  b.x_high = raised(b.x_low, 2, 20 * units::bar);
  // What the injector's target needs at x_low (limit 500 bar: no switch), then a limit 10 bar above.
  b.model = std::make_unique<OilWaterModel>(b.exec, grid, setup.rock, setup.fluid, setup.wells, true);
  b.begin_step(b.x_low);
  b.assemble(b.x_low);
  const double needed_low = b.model->well_results()[0].bhp;
  ASSERT_FALSE(b.model->well_results()[0].at_bhp);
  setup.wells[0].bhp = needed_low + 10 * units::bar;
  b.model = std::make_unique<OilWaterModel>(b.exec, grid, setup.rock, setup.fluid, setup.wells, true);
  check_rule(b, setup.wells[0].bhp);
}

TEST(WellSwitching, MulticomponentHeldAtTheLimitForTheRestOfTheStep)
{
  auto setup = test::mc_setup(3, 9);
  const Grid grid(setup.grid, setup.rock);
  Bench b;
  b.x_low = test::mc_random_state(grid.num_active(), 3);
  b.x_high = raised(b.x_low, 3, 20 * units::bar);
  b.model = std::make_unique<MulticomponentModel>(b.exec, grid, setup.rock, true, setup.input);
  b.begin_step(b.x_low);
  b.assemble(b.x_low);
  const double needed_low = b.model->well_results()[0].bhp;
  ASSERT_FALSE(b.model->well_results()[0].at_bhp);
  setup.input.wells[0].bhp = needed_low + 10 * units::bar;
  b.model = std::make_unique<MulticomponentModel>(b.exec, grid, setup.rock, true, setup.input);
  check_rule(b, setup.input.wells[0].bhp);
}
