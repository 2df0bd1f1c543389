// Forcing terms of the inexact Newton method: Eisenstat–Walker choice 2 against hand-computed
// values, its safeguard and clamping, and the per-step sequence (eta_initial first, fixed forcing).
#include "miniapp/run/forcing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace blockres;

namespace {

ForcingConfig ew(double eta_min, double eta_max, double eta_initial)
{
  return {ForcingKind::eisenstat_walker, eta_min, eta_max, eta_initial};
}

}  // namespace

TEST(Forcing, ChoiceTwoValues)
{
  const ForcingConfig c = ew(1e-10, 0.9, 0.9);
  // 0.9 (||R_k|| / ||R_{k-1}||)^2 with a small previous term (no safeguard: 0.9 * 0.01^2 <= 0.1).
  EXPECT_DOUBLE_EQ(eisenstat_walker_eta(0.5, 1.0, 0.01, c), 0.9 * 0.25);
  EXPECT_DOUBLE_EQ(eisenstat_walker_eta(1.0, 10.0, 0.01, c), 0.9 * 0.01);
  EXPECT_DOUBLE_EQ(eisenstat_walker_eta(3e-3, 1e-2, 1e-3, c), 0.9 * 0.09);
  // Only the ratio matters.
  EXPECT_DOUBLE_EQ(eisenstat_walker_eta(2e7, 4e7, 0.01, c), eisenstat_walker_eta(0.5, 1.0, 0.01, c));
}

TEST(Forcing, Safeguard)
{
  const ForcingConfig c = ew(1e-10, 0.9, 0.9);
  // Previous term 0.5: 0.9 * 0.25 = 0.225 > 0.1, so eta may not drop below it.
  EXPECT_DOUBLE_EQ(eisenstat_walker_eta(1.0, 10.0, 0.5, c), 0.9 * 0.25);
  // The safeguard is a floor, not a replacement: a larger choice-2 value stands.
  EXPECT_DOUBLE_EQ(eisenstat_walker_eta(0.9, 1.0, 0.5, c), 0.9 * 0.81);
  // Previous term 0.3: 0.9 * 0.09 = 0.081 <= 0.1, no safeguard.
  EXPECT_DOUBLE_EQ(eisenstat_walker_eta(1.0, 10.0, 0.3, c), 0.9 * 0.01);
  // Just above the threshold 0.1: gamma eta^2 = 0.1 exactly at eta = 1/3.
  const double above = 0.34;
  EXPECT_DOUBLE_EQ(eisenstat_walker_eta(1.0, 10.0, above, c), 0.9 * above * above);
}

TEST(Forcing, Clamping)
{
  const ForcingConfig c = ew(1e-4, 0.1, 0.1);
  EXPECT_EQ(eisenstat_walker_eta(1e-6, 1.0, 1e-3, c), 1e-4);  // fast convergence: eta_min
  EXPECT_EQ(eisenstat_walker_eta(2.0, 1.0, 1e-3, c), 0.1);    // the residual grew: eta_max
  EXPECT_EQ(eisenstat_walker_eta(1.0, 10.0, 0.9, c), 0.1);    // a safeguarded value is clamped too
  // Undefined ratios (previous norm 0) fall back to eta_max instead of NaN.
  EXPECT_EQ(eisenstat_walker_eta(1.0, 0.0, 1e-3, c), 0.1);
  EXPECT_EQ(eisenstat_walker_eta(0.0, 0.0, 1e-3, c), 0.1);
  EXPECT_EQ(eisenstat_walker_eta(0.0, 1.0, 1e-3, c), 1e-4);
}

TEST(Forcing, SequencePerStep)
{
  ForcingSequence s(ew(1e-6, 0.9, 0.5), 1e-4);
  EXPECT_TRUE(s.needs_residual_norm());
  s.begin_step();
  EXPECT_EQ(s.next(100.0), 0.5);              // eta_initial, whatever the norm
  EXPECT_DOUBLE_EQ(s.next(10.0), 0.9 * 0.25);  // 0.009 raised by the safeguard 0.9 * 0.5^2 = 0.225
  EXPECT_DOUBLE_EQ(s.next(1.0), 0.9 * 0.01);   // safeguard 0.9 * 0.225^2 = 0.046 <= 0.1: inactive
  EXPECT_DOUBLE_EQ(s.next(0.5), 0.9 * 0.25);   // slower progress: a looser term again
  EXPECT_EQ(s.next(1e-9), 1e-6);               // clamped to eta_min
  // A new step (or a retry after a cut) starts again from eta_initial, not from the last norm.
  s.begin_step();
  EXPECT_EQ(s.next(1e-12), 0.5);
  EXPECT_DOUBLE_EQ(s.next(1e-13), 0.9 * 0.25);  // safeguarded from eta_initial as above
}

TEST(Forcing, FixedIgnoresNorms)
{
  ForcingSequence s(ForcingConfig{}, 1e-4);
  EXPECT_FALSE(s.needs_residual_norm());
  s.begin_step();
  for (const double norm : {1.0, 0.5, 0.0, std::numeric_limits<double>::quiet_NaN()}) EXPECT_EQ(s.next(norm), 1e-4);
}
