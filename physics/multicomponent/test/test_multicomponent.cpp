// Model-level checks of the multicomponent model on the CPU: analytic Jacobian against finite
// differences, the true-IMPES accumulation blocks against finite differences and the Jacobian,
// batch reactor against exp(K t), mass conservation in a closed domain,
// relabelling invariance, identical components, Newton-update chops, NaN in the norms.
#include "physics/multicomponent/test/multicomponent_fixture.hpp"
#include "physics/test/block_storage_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>

namespace blockres {
namespace {

using physics::MulticomponentInput;
using physics::MulticomponentModel;
using test::uniform;

struct Eval {
  std::vector<double> R, J;
};

Eval evaluate(MulticomponentModel& m, const std::vector<double>& x, const std::vector<double>& x0, double dt)
{
  const ExecPtr& exec = Executor::create_cpu();
  Vector X(exec, std::span<const double>(x)), X0(exec, std::span<const double>(x0));
  Vector R(exec, size64_t(x.size()));
  BsrMatrix J(exec, m.block_size(), m.pattern());
  m.assemble(X, X0, dt, R, J);
  return {R.to_host(), J.values().to_host()};
}

// Dense copy (row-major, N x N) of a BSR matrix with the model's pattern.
std::vector<double> dense(const BsrPattern& p, int bs, const std::vector<double>& values)
{
  const std::size_t N = std::size_t(p.nrows) * bs;
  std::vector<double> A(N * N, 0.0);
  for (index_t r = 0; r < p.nrows; ++r)
    for (index_t b = p.row_ptr[r]; b < p.row_ptr[r + 1]; ++b)
      for (int a = 0; a < bs; ++a)
        for (int v = 0; v < bs; ++v)
          A[(std::size_t(r) * bs + a) * N + std::size_t(p.col_ind[b]) * bs + v] =
              values[std::size_t(b) * bs * bs + std::size_t(a) * bs + v];
  return A;
}

// Solves A x = b (N x N row-major) by Gaussian elimination with partial pivoting.
std::vector<double> dense_solve(std::vector<double> A, std::vector<double> b)
{
  const std::size_t N = b.size();
  for (std::size_t c = 0; c < N; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < N; ++r)
      if (std::abs(A[r * N + c]) > std::abs(A[piv * N + c])) piv = r;
    if (piv != c) {
      for (std::size_t k = 0; k < N; ++k) std::swap(A[c * N + k], A[piv * N + k]);
      std::swap(b[c], b[piv]);
    }
    for (std::size_t r = c + 1; r < N; ++r) {
      const double f = A[r * N + c] / A[c * N + c];
      if (f == 0.0) continue;
      for (std::size_t k = c; k < N; ++k) A[r * N + k] -= f * A[c * N + k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(N);
  for (std::size_t r = N; r-- > 0;) {
    double s = b[r];
    for (std::size_t k = r + 1; k < N; ++k) s -= A[r * N + k] * x[k];
    x[r] = s / A[r * N + r];
  }
  return x;
}

std::unique_ptr<MulticomponentModel> make_model(const test::McSetup& s)
{
  const physics::Grid grid(s.grid, s.rock);
  return std::make_unique<MulticomponentModel>(Executor::create_cpu(), grid, s.rock, s.grid.gravity, s.input);
}

// ---- Jacobian against central finite differences ---------------------------------------------------
// Central differences with step h have error h^2/6 |R'''| + eps |R| / h. The steps (20 Pa in p,
// 1e-7 in a fraction) make both terms below ~1e-8 of the column's largest entry for these states
// (pressure nonlinearity scale 1/c ~ 1e9 Pa, |R| / h bounded by 1e-16 |R| / 1e-7), so the bound
// asserted is 1e-6 (|J_ij| + max_i |J_ij|) per entry, with margin.
class McJacobian : public ::testing::TestWithParam<int> {};

TEST_P(McJacobian, MatchesCentralFiniteDifferences)
{
  const int nc = GetParam();
  const auto s = test::mc_setup(nc, 1000 + nc);
  auto m = make_model(s);
  const index_t n = m->num_cells();
  const std::size_t N = std::size_t(n) * nc;
  const auto x = test::mc_random_state(n, nc), x0 = test::mc_random_state(n, nc);
  const double dt = 0.5 * units::day;
  {
    const ExecPtr exec = Executor::create_cpu();
    m->begin_step(Vector(exec, std::span<const double>(x0)));
  }
  const Eval base = evaluate(*m, x, x0, dt);
  const auto wr = m->well_results();
  ASSERT_EQ(wr.size(), 4u);
  EXPECT_FALSE(wr[0].at_bhp) << "the rate injector should be under rate control";
  EXPECT_FALSE(wr[1].at_bhp) << "the rate producer should be under rate control";
  const auto A = dense(m->pattern(), nc, base.J);

  std::vector<std::size_t> columns(N);
  std::iota(columns.begin(), columns.end(), 0);
  if (nc > 17) {  // sample the columns of the big case: every unknown kind, random cells
    std::shuffle(columns.begin(), columns.end(), test::rng());
    columns.resize(48);
    columns.push_back(0), columns.push_back(std::size_t(nc) - 1);
  }
  double worst = 0.0;
  for (const std::size_t col : columns) {
    const int v = int(col % nc);
    const double h = v == 0 ? 20.0 : 1e-7;
    auto xp = x, xm = x;
    xp[col] += h, xm[col] -= h;
    const Eval ep = evaluate(*m, xp, x0, dt), em = evaluate(*m, xm, x0, dt);
    double colscale = 0.0;
    for (std::size_t r = 0; r < N; ++r) colscale = std::max(colscale, std::abs(A[r * N + col]));
    for (std::size_t r = 0; r < N; ++r) {
      const double fd = (ep.R[r] - em.R[r]) / (2 * h), an = A[r * N + col];
      double err = std::abs(fd - an) / (std::abs(an) + colscale);
      // A kink inside [x - h, x + h] (a face's upwind direction flips, about 1 column in 40 of the
      // random states at nc 17) puts the central difference across two branches; the analytic
      // derivative is that of x's own branch, which one of the one-sided differences (truncation
      // h |R''| / 2, still far below the bound here) stays on. Same bound, either side.
      if (err > 1e-6) {
        const double fwd = (ep.R[r] - base.R[r]) / h, bwd = (base.R[r] - em.R[r]) / h;
        err = std::min({err, std::abs(fwd - an) / (std::abs(an) + colscale), std::abs(bwd - an) / (std::abs(an) + colscale)});
      }
      worst = std::max(worst, err);
      ASSERT_LE(err, 1e-6) << "nc " << nc << " row " << r << " (cell " << r / nc << ", eq " << r % nc << ") col " << col
                           << " (cell " << col / nc << ", unknown " << v << "): fd " << fd << " analytic " << an;
    }
  }
  std::printf("nc = %d: largest relative Jacobian error %.3g over %zu columns\n", nc, worst, columns.size());
}

INSTANTIATE_TEST_SUITE_P(Sizes, McJacobian, ::testing::Values(1, 3, 17, 64));

// ---- True-IMPES accumulation blocks ------------------------------------------------------------------
// Model::accumulation_blocks (poisoned output first) against central differences of the component
// masses in place (sum over cells of V_p rho x_k: its derivative by one cell's unknown is that
// cell's accumulation derivative) divided by dt, and against the Jacobian: fluxes, wells and
// reactions do not see dt, so J_ii(dt) - J_ii(2 dt) = C_i(dt) / 2 (equation order, sign and scaling
// of the Jacobian rows; the reaction is not in C).
class McAccumulation : public ::testing::TestWithParam<int> {};

TEST_P(McAccumulation, MatchesFiniteDifferencesAndTheJacobian)
{
  const int nc = GetParam();
  const auto s = test::mc_setup(nc, 2000 + nc);
  auto m = make_model(s);
  const ExecPtr exec = Executor::create_cpu();
  const index_t n = m->num_cells();
  const std::size_t nn = std::size_t(nc) * nc;
  const auto x = test::mc_random_state(n, nc), x0 = test::mc_random_state(n, nc);
  const double dt = 0.5 * units::day;
  ASSERT_TRUE(m->has_accumulation_blocks());
  const std::vector<double> poison(nn * n, std::numeric_limits<double>::quiet_NaN());
  Vector C(exec, std::span<const double>(poison));
  m->accumulation_blocks(Vector(exec, std::span<const double>(x)), dt, C);
  const auto c = C.to_host();

  double worst = 0.0;
  for (index_t i = 0; i < n; ++i)
    for (int v = 0; v < nc; ++v) {
      const double h = v == 0 ? 1e3 : 1e-6;  // Pa; mass fraction
      auto xp = x, xm = x;
      xp[std::size_t(i) * nc + v] += h, xm[std::size_t(i) * nc + v] -= h;
      const auto mp = m->in_place(Vector(exec, std::span<const double>(xp)));
      const auto mm = m->in_place(Vector(exec, std::span<const double>(xm)));
      double scale = 0.0;
      for (int k = 0; k < nc; ++k) scale = std::max(scale, std::abs(c[std::size_t(i) * nn + std::size_t(k) * nc + v]));
      ASSERT_GT(scale, 0.0) << "cell " << i << " unknown " << v;
      for (int k = 0; k < nc; ++k) {
        const double fd = (mp[k] - mm[k]) / (2 * h * dt), an = c[std::size_t(i) * nn + std::size_t(k) * nc + v];
        const double err = std::abs(fd - an) / scale;
        worst = std::max(worst, err);
        ASSERT_LE(err, 1e-6) << "nc " << nc << " cell " << i << " equation " << k << " unknown " << v << ": " << an
                             << " fd " << fd;
      }
    }
  std::printf("nc = %d: accumulation blocks, largest relative error against central differences %.3g\n", nc, worst);

  m->begin_step(Vector(exec, std::span<const double>(x0)));
  const Eval e1 = evaluate(*m, x, x0, dt), e2 = evaluate(*m, x, x0, 2 * dt);
  for (index_t i = 0; i < n; ++i) {
    const std::size_t b = std::size_t(m->pattern().find(i, i)) * nn;
    double scale = 0.0;
    for (std::size_t e = 0; e < nn; ++e) scale = std::max({scale, std::abs(e1.J[b + e]), std::abs(e2.J[b + e])});
    for (std::size_t e = 0; e < nn; ++e)
      ASSERT_NEAR(2 * (e1.J[b + e] - e2.J[b + e]), c[std::size_t(i) * nn + e], 1e-10 * scale)
          << "nc " << nc << " cell " << i << " entry " << e;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, McAccumulation, ::testing::Values(1, 3, 17));

// ---- Batch reactor ---------------------------------------------------------------------------------

// exp(A) by scaling and squaring with a 30-term Taylor series (independent of the model).
std::vector<double> expm(std::vector<double> A, int n)
{
  double norm = 0.0;
  for (int c = 0; c < n; ++c) {
    double s = 0.0;
    for (int r = 0; r < n; ++r) s += std::abs(A[std::size_t(r) * n + c]);
    norm = std::max(norm, s);
  }
  int sq = 0;
  while (norm > 0.25) norm *= 0.5, ++sq;
  for (auto& a : A) a = std::ldexp(a, -sq);
  std::vector<double> E(static_cast<std::size_t>(n) * n, 0.0), T(static_cast<std::size_t>(n) * n, 0.0), tmp(static_cast<std::size_t>(n) * n);
  for (int i = 0; i < n; ++i) E[std::size_t(i) * n + i] = T[std::size_t(i) * n + i] = 1.0;
  auto mul = [&](const std::vector<double>& X, const std::vector<double>& Y) {
    std::vector<double> Z(static_cast<std::size_t>(n) * n, 0.0);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k)
        for (int j = 0; j < n; ++j) Z[std::size_t(i) * n + j] += X[std::size_t(i) * n + k] * Y[std::size_t(k) * n + j];
    return Z;
  };
  for (int t = 1; t <= 30; ++t) {
    tmp = mul(T, A);
    for (auto& v : tmp) v /= t;
    T = tmp;
    for (std::size_t i = 0; i < E.size(); ++i) E[i] += T[i];
  }
  for (int s = 0; s < sq; ++s) E = mul(E, E);
  return E;
}

TEST(Multicomponent, BatchReactorMatchesBackwardEulerAndConvergesToExpKt)
{
  using namespace physics;
  const int nc = 4;
  test::McSetup s;
  s.grid.nx = s.grid.ny = s.grid.nz = 1;
  s.grid.dx = {10}, s.grid.dy = {10}, s.grid.dz = {2};
  s.grid.top = 1000;
  s.rock.porosity = {0.25};
  s.rock.kx = s.rock.ky = s.rock.kz = {100 * units::millidarcy};
  ComponentsSpec& c = s.input.components;
  c.names = {"A", "B", "C", "D"};
  c.density.assign(nc, 1000.0);          // equal densities and no compressibility: the mass
  c.compressibility.assign(nc, 0.0);     // V_p rho of the closed cell is constant
  c.viscosity = {0.5e-3, 1e-3, 2e-3, 4e-3};
  // A -> B -> C -> D with B <-> A back-reaction and A -> C (rates 1/day).
  const double k[nc][nc] = {{-0.9, 0.2, 0, 0}, {0.6, -0.7, 0, 0}, {0.3, 0.5, -0.4, 0}, {0, 0, 0.4, 0}};
  for (int r = 0; r < nc; ++r)
    for (int q = 0; q < nc; ++q) c.reactions.push_back(k[r][q] / units::day);
  const std::vector<double> y0 = {0.7, 0.2, 0.1, 0.0};
  s.input.initial.pressure = 100 * units::bar;
  s.input.initial.composition = {y0};
  auto m = make_model(s);
  const ExecPtr exec = Executor::create_cpu();
  const double T = 2.0 * units::day;

  // Reference (I - dt K)^-n x(0) by dense solves (K as a matrix in 1/s).
  auto backward_euler = [&](int steps) {
    const double dt = T / steps;
    std::vector<double> I_dtK(static_cast<std::size_t>(nc) * nc), y = y0;
    for (int r = 0; r < nc; ++r)
      for (int q = 0; q < nc; ++q) I_dtK[std::size_t(r) * nc + q] = (r == q ? 1.0 : 0.0) - dt * c.reactions[std::size_t(r) * nc + q];
    for (int st = 0; st < steps; ++st) y = dense_solve(I_dtK, y);
    return y;
  };
  // The model: one Newton solve per step on the composition unknowns (p does not enter: no flow,
  // incompressible), equations 1..nc-1 (the last one is their sum's complement).
  auto model_run = [&](int steps) {
    const double dt = T / steps;
    std::vector<double> x = m->initial_state();
    for (int st = 0; st < steps; ++st) {
      const std::vector<double> xold = x;
      m->begin_step(Vector(exec, std::span<const double>(xold)));
      for (int it = 0; it < 8; ++it) {
        const Eval e = evaluate(*m, x, xold, dt);
        const int n = nc - 1;
        std::vector<double> Ared(static_cast<std::size_t>(n) * n), b(static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r) {
          b[r] = e.R[r];
          for (int q = 0; q < n; ++q) Ared[std::size_t(r) * n + q] = e.J[std::size_t(r) * nc + 1 + q];
        }
        const auto d = dense_solve(Ared, b);
        double big = 0.0;
        for (int q = 0; q < n; ++q) x[1 + q] -= d[q], big = std::max(big, std::abs(d[q]));
        if (big < 1e-15) break;
      }
    }
    std::vector<double> y(x.begin() + 1, x.end());
    y.push_back(1.0 - std::accumulate(y.begin(), y.end(), 0.0));
    return y;
  };
  std::vector<double> KT(c.reactions);
  for (auto& v : KT) v *= T;
  const auto E = expm(KT, nc);
  std::vector<double> exact(nc, 0.0);
  for (int r = 0; r < nc; ++r)
    for (int q = 0; q < nc; ++q) exact[r] += E[std::size_t(r) * nc + q] * y0[q];

  const int steps[3] = {10, 20, 40};
  double err[3];
  for (int t = 0; t < 3; ++t) {
    const auto ym = model_run(steps[t]), yb = backward_euler(steps[t]);
    err[t] = 0.0;
    for (int r = 0; r < nc; ++r) {
      EXPECT_NEAR(ym[r], yb[r], 1e-10) << steps[t] << " steps, component " << r;
      err[t] = std::max(err[t], std::abs(ym[r] - exact[r]));
    }
  }
  for (int t = 0; t < 2; ++t) {
    const double order = std::log2(err[t] / err[t + 1]);
    std::printf("batch reactor: dt = T/%d -> T/%d: error %.3e -> %.3e, observed order %.3f\n", steps[t], steps[t + 1],
                err[t], err[t + 1], order);
    EXPECT_GE(order, 0.8);
    EXPECT_LE(order, 1.2);
  }
}

// ---- Closed domain: mass conservation --------------------------------------------------------------

// Newton-converged backward-Euler steps with a dense solve; returns the masses after each step.
std::vector<std::vector<double>> closed_run(MulticomponentModel& m, std::vector<double> x, double dt, int steps)
{
  const ExecPtr exec = Executor::create_cpu();
  const int nc = m.block_size();
  std::vector<std::vector<double>> masses{m.in_place(Vector(exec, std::span<const double>(x)))};
  for (int st = 0; st < steps; ++st) {
    const auto xold = x;
    m.begin_step(Vector(exec, std::span<const double>(xold)));
    bool converged = false;
    for (int it = 0; it < 25 && !converged; ++it) {
      const Eval e = evaluate(m, x, xold, dt);
      const auto d = dense_solve(dense(m.pattern(), nc, e.J), e.R);
      double big = 0.0;
      for (std::size_t q = 0; q < x.size(); ++q) {
        x[q] -= d[q];
        big = std::max(big, std::abs(d[q]) / (q % nc == 0 ? 1e7 : 1.0));
      }
      converged = big < 1e-12;  // quadratic convergence: the residual is far below round-off of the masses then
    }
    EXPECT_TRUE(converged) << "Newton did not converge in step " << st;
    masses.push_back(m.in_place(Vector(exec, std::span<const double>(x))));
  }
  return masses;
}

TEST(Multicomponent, ClosedDomainConservesEachComponentWithoutReactions)
{
  const int nc = 3;
  auto s = test::mc_setup(nc, 77, false);
  s.input.components.reactions.assign(std::size_t(nc) * nc, 0.0);
  auto m = make_model(s);
  const auto x = test::mc_random_state(m->num_cells(), nc);
  const auto masses = closed_run(*m, x, 2.0 * units::day, 4);
  for (std::size_t st = 1; st < masses.size(); ++st)
    for (int k = 0; k < nc; ++k)
      EXPECT_NEAR(masses[st][k], masses[0][k], 1e-10 * masses[0][k]) << "component " << k << " step " << st;
  // Something moved: the composition is not uniform, so diffusion and flow redistribute it.
}

TEST(Multicomponent, ClosedDomainConservesTotalMassWithReactions)
{
  const int nc = 4;
  auto s = test::mc_setup(nc, 78, false);
  auto m = make_model(s);
  const auto x = test::mc_random_state(m->num_cells(), nc);
  const auto masses = closed_run(*m, x, 2.0 * units::day, 4);
  const double total0 = std::accumulate(masses[0].begin(), masses[0].end(), 0.0);
  double changed = 0.0;
  for (std::size_t st = 1; st < masses.size(); ++st) {
    const double total = std::accumulate(masses[st].begin(), masses[st].end(), 0.0);
    EXPECT_NEAR(total, total0, 1e-10 * total0) << "step " << st;
    for (int k = 0; k < nc; ++k) changed = std::max(changed, std::abs(masses[st][k] - masses[0][k]) / total0);
  }
  EXPECT_GT(changed, 1e-4) << "the reactions should change the component masses";
}

// ---- Relabelling ------------------------------------------------------------------------------------

TEST(Multicomponent, RelabellingPermutesResidualAndJacobian)
{
  const int nc = 6;
  const auto a = test::mc_setup(nc, 4242);
  // sigma permutes the independent components 0..nc-2; the dependent last one stays last.
  std::vector<int> sigma(nc);
  std::iota(sigma.begin(), sigma.end(), 0);
  std::shuffle(sigma.begin(), sigma.end() - 1, test::rng());
  auto b = a;
  auto& cb = b.input.components;
  const auto& ca = a.input.components;
  for (int j = 0; j < nc; ++j) {
    cb.names[j] = ca.names[sigma[j]];
    cb.density[j] = ca.density[sigma[j]];
    cb.compressibility[j] = ca.compressibility[sigma[j]];
    cb.viscosity[j] = ca.viscosity[sigma[j]];
    for (int l = 0; l < nc; ++l) cb.reactions[std::size_t(j) * nc + l] = ca.reactions[std::size_t(sigma[j]) * nc + sigma[l]];
  }
  for (std::size_t w = 0; w < a.input.wells.size(); ++w)
    if (!a.input.wells[w].composition.empty())
      for (int j = 0; j < nc; ++j) b.input.wells[w].composition[j] = a.input.wells[w].composition[sigma[j]];
  auto ma = make_model(a), mb = make_model(b);
  const index_t n = ma->num_cells();
  const auto xa = test::mc_random_state(n, nc), x0a = test::mc_random_state(n, nc);
  auto permute = [&](const std::vector<double>& x) {
    auto y = x;
    for (index_t i = 0; i < n; ++i)
      for (int j = 0; j + 1 < nc; ++j) y[std::size_t(i) * nc + 1 + j] = x[std::size_t(i) * nc + 1 + sigma[j]];
    return y;
  };
  const auto xb = permute(xa), x0b = permute(x0a);
  const ExecPtr exec = Executor::create_cpu();
  ma->begin_step(Vector(exec, std::span<const double>(x0a)));
  mb->begin_step(Vector(exec, std::span<const double>(x0b)));
  const Eval ea = evaluate(*ma, xa, x0a, 0.3 * units::day), eb = evaluate(*mb, xb, x0b, 0.3 * units::day);
  double rscale = 0.0, jscale[2] = {0.0, 0.0};
  for (const double r : ea.R) rscale = std::max(rscale, std::abs(r));
  for (std::size_t q = 0; q < ea.J.size(); ++q) jscale[q % nc != 0] = std::max(jscale[q % nc != 0], std::abs(ea.J[q]));
  for (index_t i = 0; i < n; ++i)
    for (int j = 0; j < nc; ++j)
      EXPECT_NEAR(eb.R[std::size_t(i) * nc + j], ea.R[std::size_t(i) * nc + sigma[j]], 1e-12 * rscale);
  const std::size_t nn = std::size_t(nc) * nc;
  for (std::size_t blk = 0; blk < ea.J.size() / nn; ++blk)
    for (int j = 0; j < nc; ++j)
      for (int v = 0; v < nc; ++v) {
        const int va = v == 0 ? 0 : 1 + sigma[v - 1];
        EXPECT_NEAR(eb.J[blk * nn + std::size_t(j) * nc + v], ea.J[blk * nn + std::size_t(sigma[j]) * nc + va],
                    1e-12 * jscale[v != 0])
            << "block " << blk << " entry (" << j << ", " << v << ")";
      }
  const auto wa = ma->well_results(), wb = mb->well_results();
  for (std::size_t w = 0; w < wa.size(); ++w) {
    EXPECT_NEAR(wb[w].bhp, wa[w].bhp, 1e-9 * wa[w].bhp);
    for (int j = 0; j < nc; ++j) EXPECT_NEAR(wb[w].rates[j], wa[w].rates[sigma[j]], 1e-12 * rscale);
  }
}

TEST(Multicomponent, TwoIdenticalComponentsEqualOne)
{
  auto one = test::mc_setup(1, 99);
  one.input.components.reactions = {0.0};
  for (auto& w : one.input.wells)
    if (!w.composition.empty()) w.composition = {1.0};
  one.input.initial.composition = {{1.0}};
  auto two = one;
  auto& c2 = two.input.components;
  const auto& c1 = one.input.components;
  c2.names = {"A", "A2"};
  c2.density = {c1.density[0], c1.density[0]};
  c2.compressibility = {c1.compressibility[0], c1.compressibility[0]};
  c2.viscosity = {c1.viscosity[0], c1.viscosity[0]};
  const double ka = 0.3 / units::day, kb = 0.1 / units::day;
  c2.reactions = {-ka, kb, ka, -kb};
  for (auto& w : two.input.wells)
    if (!w.composition.empty()) {
      const double y = uniform(0.1, 0.9);
      w.composition = {y, 1 - y};
    }
  two.input.initial.composition = {{0.4, 0.6}};
  auto m1 = make_model(one), m2 = make_model(two);
  const index_t n = m1->num_cells();
  const auto x1 = test::mc_random_state(n, 1), x01 = test::mc_random_state(n, 1);
  std::vector<double> x2(static_cast<std::size_t>(n) * 2), x02(static_cast<std::size_t>(n) * 2);
  for (index_t i = 0; i < n; ++i) {
    x2[2 * i] = x1[i], x02[2 * i] = x01[i];
    x2[2 * i + 1] = uniform(0.1, 0.9), x02[2 * i + 1] = uniform(0.1, 0.9);
  }
  const ExecPtr exec = Executor::create_cpu();
  m1->begin_step(Vector(exec, std::span<const double>(x01)));
  m2->begin_step(Vector(exec, std::span<const double>(x02)));
  const double dt = 0.7 * units::day;
  const Eval e1 = evaluate(*m1, x1, x01, dt), e2 = evaluate(*m2, x2, x02, dt);
  double rscale = 0.0, jscale = 0.0, jxscale = 0.0;
  for (const double r : e1.R) rscale = std::max(rscale, std::abs(r));
  for (const double j : e1.J) jscale = std::max(jscale, std::abs(j));
  for (std::size_t b = 0; b < e1.J.size(); ++b) jxscale = std::max({jxscale, std::abs(e2.J[4 * b + 1]), std::abs(e2.J[4 * b + 3])});
  for (index_t i = 0; i < n; ++i) EXPECT_NEAR(e2.R[2 * i] + e2.R[2 * i + 1], e1.R[i], 1e-12 * rscale) << "cell " << i;
  for (std::size_t b = 0; b < e1.J.size(); ++b) {
    EXPECT_NEAR(e2.J[4 * b] + e2.J[4 * b + 2], e1.J[b], 1e-12 * jscale) << "block " << b;
    EXPECT_NEAR(e2.J[4 * b + 1] + e2.J[4 * b + 3], 0.0, 1e-12 * jxscale) << "block " << b;
  }
  const auto w1 = m1->well_results(), w2 = m2->well_results();
  for (std::size_t w = 0; w < w1.size(); ++w) {
    EXPECT_NEAR(w2[w].bhp, w1[w].bhp, 1e-9 * w1[w].bhp);
    EXPECT_NEAR(w2[w].rates[0] + w2[w].rates[1], w1[w].rates[0], 1e-12 * rscale);
  }
}

// ---- Newton update and norms ------------------------------------------------------------------------

TEST(Multicomponent, UpdateKeepsFractionsInRangeAndChopsSteps)
{
  const int nc = 5;
  const auto s = test::mc_setup(nc, 5, false);
  auto m = make_model(s);
  const index_t n = m->num_cells();
  const ExecPtr exec = Executor::create_cpu();
  physics::UpdateLimits lim;
  lim.max_dx = 0.2, lim.max_dp_rel = 0.1;
  for (int trial = 0; trial < 20; ++trial) {
    const auto x = test::mc_random_state(n, nc);
    const double size = trial < 5 ? 1e-3 : uniform(0.1, 2.0);
    std::vector<double> dx(x.size());
    for (std::size_t q = 0; q < dx.size(); ++q) dx[q] = q % nc == 0 ? uniform(-0.3, 0.3) * x[q] : uniform(-size, size);
    Vector X(exec, std::span<const double>(x));
    m->update(X, Vector(exec, std::span<const double>(dx)), lim);
    const auto y = X.to_host();
    for (index_t i = 0; i < n; ++i) {
      const double* a = x.data() + std::size_t(i) * nc;
      const double* b = y.data() + std::size_t(i) * nc;
      const double* d = dx.data() + std::size_t(i) * nc;
      EXPECT_LE(std::abs(b[0] - a[0]), lim.max_dp_rel * a[0] * (1 + 1e-14));
      double sa = 0, sb = 0, sd = 0;
      bool plain = true;
      for (int k = 1; k < nc; ++k) {
        EXPECT_GE(b[k], -1e-15);
        EXPECT_LE(b[k], 1.0 + 1e-15);
        EXPECT_LE(std::abs(b[k] - a[k]), lim.max_dx * (1 + 1e-12));
        sa += a[k], sb += b[k], sd += d[k];
        plain = plain && std::abs(d[k]) <= lim.max_dx && a[k] - d[k] >= 0;
      }
      EXPECT_GE(1.0 - sb, -1e-14);
      EXPECT_LE(std::abs((1.0 - sb) - (1.0 - sa)), lim.max_dx * (1 + 1e-12));
      plain = plain && std::abs(sd) <= lim.max_dx && (1 - sa) + sd >= 0;
      if (plain) {  // within every limit: the plain Newton step
        for (int k = 1; k < nc; ++k) EXPECT_NEAR(b[k], a[k] - d[k], 1e-15);
      }
    }
  }
}

TEST(Multicomponent, NormsAndNaN)
{
  const int nc = 3;
  const auto s = test::mc_setup(nc, 6);
  auto m = make_model(s);
  const index_t n = m->num_cells();
  const ExecPtr exec = Executor::create_cpu();
  const auto x = test::mc_random_state(n, nc);
  std::vector<double> r(x.size());
  for (auto& v : r) v = uniform(-1, 1);
  const double dt = 86400.0;
  const auto c = m->convergence(Vector(exec, std::span<const double>(x)), Vector(exec, std::span<const double>(r)), dt);
  ASSERT_EQ(c.cnv.size(), std::size_t(nc));
  EXPECT_TRUE(c.finite);
  // Independent evaluation of CNV_k and MB_k.
  const auto f = m->cell_field_values(x);  // pressure, density, fractions
  const physics::Grid grid(s.grid, s.rock);
  const auto& pv = grid.pore_volume_ref();
  double total = 0.0;
  std::vector<double> mx(nc, 0.0), sum(nc, 0.0);
  for (index_t i = 0; i < n; ++i) {
    const double X = s.rock.compressibility * (x[std::size_t(i) * nc] - s.rock.reference_pressure);
    const double mass = pv[i] * (1 + X + 0.5 * X * X) * f[1][i];
    total += mass;
    for (int k = 0; k < nc; ++k) {
      mx[k] = std::max(mx[k], std::abs(r[std::size_t(i) * nc + k]) / mass);
      sum[k] += r[std::size_t(i) * nc + k];
    }
  }
  for (int k = 0; k < nc; ++k) {
    EXPECT_NEAR(c.cnv[k], dt * mx[k], 1e-12 * dt * mx[k]);
    EXPECT_NEAR(c.mb[k], dt * std::abs(sum[k]) / total, 1e-10 * dt * mx[k]);
  }
  r[std::size_t(n / 2) * nc + 1] = std::nan("");
  const auto cn = m->convergence(Vector(exec, std::span<const double>(x)), Vector(exec, std::span<const double>(r)), dt);
  EXPECT_FALSE(cn.finite);
}

TEST(Multicomponent, QuantitiesAndInitialState)
{
  auto s = test::mc_setup(3, 7);
  s.input.components.names = {"CO2", "brine", "tracer_1"};
  s.input.initial.hydrostatic = true;
  s.input.initial.datum_depth = 1500;
  s.input.initial.composition = {{0.1, 0.85, 0.05}, {0.0, 1.0, 0.0}, {0.2, 0.7, 0.1}};
  auto m = make_model(s);
  EXPECT_EQ(m->block_size(), 3);
  EXPECT_EQ(m->unknown_names(), (std::vector<std::string>{"p", "x_CO2", "x_brine"}));
  EXPECT_EQ(m->equation_names(), (std::vector<std::string>{"CO2", "brine", "tracer_1"}));
  const auto cf = m->cell_fields();
  ASSERT_EQ(cf.size(), 5u);
  EXPECT_EQ(cf[2].name, "x_CO2");
  EXPECT_EQ(cf[2].group, "mass_fraction");
  EXPECT_EQ(m->in_place_quantities()[1].name, "brine_in_place");
  EXPECT_EQ(m->well_rates()[2].name, "tracer_1_rate");
  EXPECT_EQ(m->well_rates()[2].unit, "kg/day");
  const auto x = m->initial_state();
  const auto f = m->cell_field_values(x);
  const physics::Grid grid(s.grid, s.rock);
  // Pressure grows downwards by about rho g dz between layers; compositions per layer.
  for (index_t a = 0; a < m->num_cells(); ++a) {
    const int k = int(grid.global_of_active(a) / 12);
    EXPECT_NEAR(f[2][a], s.input.initial.composition[k][0], 1e-15);
    EXPECT_NEAR(f[4][a], s.input.initial.composition[k][2], 1e-15);
    if (k == 0) {
      EXPECT_NEAR(f[0][a], 200.0 + f[1][a] * 9.80665 * (grid.layer_depth(0) - 1500) / 1e5, 1e-5);
    }
  }
  EXPECT_GT(m->assembly_bytes(), 0);
  EXPECT_GT(m->scratch_bytes(), 0);
}

}  // namespace

// Model::set_block_storage: the blocks, moved, written bit for bit where the map sends them (a distributed run's
// layout and a random one), the wells' coupling and zeroed blocks included; bad maps refused.
TEST(McBlockStorage, MovedBlocksAreWrittenWhereTheStorageMapSendsThem)
{
  for (const int nc : {1, 3, 6}) {
    SCOPED_TRACE("nc " + std::to_string(nc));
    auto setup = test::mc_setup(nc, test::rng()());
    test::enlarge_grid(setup, 11, 7, 4, 31);
    const ExecPtr cpu = Executor::create_cpu();
    const physics::Grid grid(setup.grid, setup.rock);
    auto make = [&] { return std::make_unique<MulticomponentModel>(cpu, grid, setup.rock, true, setup.input); };
    const index_t n = grid.num_active();
    test::expect_moved_blocks_identical(cpu, make, test::mc_random_state(n, nc), test::mc_random_state(n, nc),
                                        1.5 * units::day);
  }
}

}  // namespace blockres
