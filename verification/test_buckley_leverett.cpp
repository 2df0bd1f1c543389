// Buckley–Leverett: the 1D waterflood deck in the incompressible limit against the analytic
// (Welge) solution: L1 error falling as the grid is refined (100, 200, 400 cells, time step
// proportional to the cell size) and, on the finest grid, the front within 2% of the domain
// length. The front is where S_w crosses the middle of the shock; upwind smearing moves that
// point ahead of the exact shock by a distance that shrinks with the cell size.
#include "physics/oil_water/oil_water_props.hpp"
#include "verification/run_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

using namespace blockres;

namespace {

// Deck values (inputs/buckley_leverett.toml).
constexpr double L = 300.0, area = 100.0, phi = 0.2, q = 10.0;  // m, m2, -, m3/day (B = 1)
constexpr double mu_w = 0.5, mu_o = 2.0, swc = 0.2, sor = 0.2, nw = 2.0, no = 2.0;
constexpr double t_end = 150.0;  // day: front at ~60% of the domain

double frac_flow(double s)
{
  const double se = std::clamp((s - swc) / (1 - swc - sor), 0.0, 1.0);
  const double lw = std::pow(se, nw) / mu_w, lo = std::pow(1 - se, no) / mu_o;
  return lw / (lw + lo);
}
double dfrac(double s)
{
  const double h = 1e-7;
  return (frac_flow(s + h) - frac_flow(s - h)) / (2 * h);
}

double bisect(const std::function<double(double)>& g, double a, double b)
{
  for (int it = 0; it < 200; ++it) {
    const double m = 0.5 * (a + b);
    ((g(a) < 0) == (g(m) < 0) ? a : b) = m;
  }
  return 0.5 * (a + b);
}

struct Welge {
  double s_front, x_front, scale;  // scale = q t / (phi A)
  // Exact saturation at x.
  double operator()(double x) const
  {
    if (x >= x_front) return swc;
    // Invert x = scale f'(S) on [s_front, 1 - sor], where f' decreases in S.
    return bisect([&](double s) { return scale * dfrac(s) - x; }, s_front, 1 - sor - 1e-12);
  }
};

Welge welge(double t)
{
  Welge w;
  // Tangent from (S_wc, 0): f'(S) (S - S_wc) = f(S).
  w.s_front = bisect([](double s) { return dfrac(s) * (s - swc) - frac_flow(s); }, swc + 0.05, 1 - sor - 1e-9);
  w.scale = q * t / (phi * area);
  w.x_front = w.scale * dfrac(w.s_front);
  return w;
}

}  // namespace

TEST(BuckleyLeverett, MatchesWelgeSolutionAndConvergesUnderRefinement)
{
  const Welge exact = welge(t_end);
  std::printf("Welge: front saturation %.4f at x = %.2f m (%.1f%% of L)\n", exact.s_front, exact.x_front,
              100 * exact.x_front / L);
  ASSERT_LT(exact.x_front, 0.8 * L);
  auto exec = Executor::create_cpu();
  std::vector<double> errors, front_errors;
  for (int n : {100, 200, 400}) {
    const double dx = L / n;
    const auto r = test::run_deck(test::deck_path("buckley_leverett.toml"),
                                  {"grid.nx=" + std::to_string(n), "grid.dx=" + std::to_string(dx),
                                   "wells.PROD.i=" + std::to_string(n), "rock.compressibility=0.0",
                                   "fluid.water.compressibility=0.0", "fluid.oil.compressibility=0.0",
                                   "schedule.end_time=" + std::to_string(t_end), "schedule.report_interval=" + std::to_string(t_end),
                                   "schedule.dt_initial=" + std::to_string(0.2 * dx / 3.0),
                                   "schedule.dt_max=" + std::to_string(2.0 * dx / 3.0), "solver.newton.tol_cnv=1e-6",
                                   "solver.linear.tolerance=1e-8", "solver.linear.max_iterations=5000"},
                                  exec);
    ASSERT_EQ(r.results.report_times.size(), 2u);
    ASSERT_DOUBLE_EQ(r.results.report_times.back(), t_end);
    const auto& s = r.results.cell_field("sw").rows.back();
    ASSERT_EQ(s.size(), std::size_t(n));
    // Front: first cell centre (from the injector) where S_w drops below the midpoint of the
    // shock, linearly interpolated between centres.
    const double mid = 0.5 * (exact.s_front + swc);
    double x_front = L;
    for (int i = 0; i + 1 < n; ++i)
      if (s[i] >= mid && s[i + 1] < mid) {
        const double xi = (i + 0.5) * dx;
        x_front = xi + dx * (s[i] - mid) / (s[i] - s[i + 1]);
        break;
      }
    double l1 = 0.0;
    for (int i = 0; i < n; ++i) {
      // Cell average of the exact solution (8-point midpoint rule inside the cell).
      double avg = 0.0;
      for (int k = 0; k < 8; ++k) avg += exact((i + (k + 0.5) / 8.0) * dx) / 8.0;
      l1 += std::abs(s[i] - avg) * dx / L;
    }
    errors.push_back(l1);
    std::printf("n = %3d: front at %.2f m (exact %.2f m, error %.2f%% of L), L1 error %.4f, %d steps\n", n, x_front,
                exact.x_front, 100 * std::abs(x_front - exact.x_front) / L, l1, r.stats.steps);
    front_errors.push_back(std::abs(x_front - exact.x_front));
  }
  EXPECT_LE(front_errors.back(), 0.02 * L) << "front on the finest grid";
  EXPECT_LT(front_errors[2], front_errors[1]);
  EXPECT_LT(front_errors[1], front_errors[0]);
  EXPECT_LT(errors[1], errors[0]);
  EXPECT_LT(errors[2], errors[1]);
}
