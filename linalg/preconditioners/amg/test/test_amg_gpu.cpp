// The CUDA AMG against its CPU twin on fresh random input: every backend operation (strength
// graph, MIS(2) and handshake aggregation, coarse graph, tentative and smoothed prolongation,
// transposes, Galerkin products, Jacobi scalings, cycle kernels, the ILU(0) smoother, coarse LU),
// whole hierarchies and V-, W- and repeated cycles with every smoother, numeric re-setup, AMG-CG
// iteration counts, and CPR with an AMG pressure stage.
#include "linalg/preconditioners/amg/amg.hpp"
#include "kernels/amg/amg_kernels_cuda.hpp"
#include "linalg/preconditioners/amg/amg_ops.hpp"
#include "linalg/preconditioners/cpr/cpr_preconditioner.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/amg/test/amg_test_matrices.hpp"
#include "linalg/test/gpu_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>

#include <fmt/format.h>

using namespace blockres;
using test::backends;

namespace {

const double nan_value = std::numeric_limits<double>::quiet_NaN();

amg::Matrix upload(const ExecPtr& e, const amg::Csr& C)
{
  amg::Matrix M;
  M.nrows = C.nrows;
  M.ncols = C.ncols;
  M.row_ptr = to_executor(e, C.row_ptr);
  M.col_ind = to_executor(e, C.col_ind);
  M.values = to_executor(e, C.values);
  return M;
}

// Host copy with every row sorted by column (the cuSPARSE products keep their own order).
amg::Csr download(const amg::Matrix& M)
{
  amg::Csr C;
  C.nrows = M.nrows;
  C.ncols = M.ncols;
  C.row_ptr = M.row_ptr.to_host();
  C.col_ind = M.col_ind.to_host();
  C.values = M.values.to_host();
  for (index_t i = 0; i < C.nrows; ++i) {
    std::vector<std::pair<index_t, double>> row;
    for (index_t p = C.row_ptr[i]; p < C.row_ptr[i + 1]; ++p) row.emplace_back(C.col_ind[p], C.values[p]);
    std::sort(row.begin(), row.end());
    for (index_t p = C.row_ptr[i]; p < C.row_ptr[i + 1]; ++p)
      C.col_ind[p] = row[p - C.row_ptr[i]].first, C.values[p] = row[p - C.row_ptr[i]].second;
  }
  return C;
}

amg::Csr csr_of(const test::TestMatrix& m)
{
  amg::Csr C;
  C.nrows = m.pattern.nrows;
  C.ncols = m.pattern.ncols;
  C.row_ptr = m.pattern.row_ptr;
  C.col_ind = m.pattern.col_ind;
  C.values = m.values;
  return C;
}

// A nonsymmetric matrix with random signs of the off-diagonals and a few zero-strength rows: the
// strength, aggregation and product kernels see varied weights, asymmetric entries and isolated
// nodes.
amg::Csr random_general(index_t n, int per_row, unsigned seed)
{
  auto m = test::random_spd(n, per_row, seed);
  std::mt19937_64 g(seed * 7 + 1);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (index_t i = 0; i < n; ++i)
    for (index_t p = m.pattern.row_ptr[i]; p < m.pattern.row_ptr[i + 1]; ++p)
      if (m.pattern.col_ind[p] != i) m.values[p] *= (i % 17 == 3) ? 1e-6 : u(g);
  return csr_of(m);
}

void expect_same_csr(const amg::Csr& a, const amg::Csr& b, double rel, const char* what)
{
  ASSERT_EQ(a.nrows, b.nrows) << what;
  ASSERT_EQ(a.ncols, b.ncols) << what;
  ASSERT_EQ(a.row_ptr, b.row_ptr) << what;
  ASSERT_EQ(a.col_ind, b.col_ind) << what;
  double scale = 0.0;
  for (double v : a.values) scale = std::max(scale, std::abs(v));
  ASSERT_EQ(a.values.size(), b.values.size()) << what;
  for (std::size_t k = 0; k < a.values.size(); ++k) {
    if (rel == 0.0) ASSERT_EQ(a.values[k], b.values[k]) << what << " entry " << k;
    else ASSERT_NEAR(a.values[k], b.values[k], rel * scale) << what << " entry " << k;
  }
}

}  // namespace

// Strength graph, both aggregations and the coarse graph: the same bits on both backends.
TEST(AmgGpu, GraphKernelsMatchCpuBitForBit)
{
  auto cpu = amg::Ops::create(backends().cpu), gpu = amg::Ops::create(backends().gpu);
  for (unsigned seed : {1u, 2u, 3u}) {
    const index_t n = 4001 + 333 * seed;
    const amg::Csr A = random_general(n, 3 + seed, seed);
    const amg::Matrix Ac = upload(backends().cpu, A), Ag = upload(backends().gpu, A);
    for (double theta : {0.0, 0.08, 0.3}) {
      const index_t n_local = seed == 2 ? n - 500 : n;  // ghost columns left out of the graph
      amg::Matrix Gc, Gg;
      cpu->strength_graph(Ac.ref(), n_local, theta, Gc);
      gpu->strength_graph(Ag.ref(), n_local, theta, Gg);
      const amg::Csr gc = download(Gc);
      expect_same_csr(gc, download(Gg), 0.0, "strength graph");

      Array<index_t> mc, mg;
      const index_t ncm = cpu->mis2_aggregate(Gc, mc), ngm = gpu->mis2_aggregate(Gg, mg);
      EXPECT_EQ(ncm, ngm) << "mis2, theta " << theta;
      EXPECT_EQ(mc.to_host(), mg.to_host()) << "mis2, theta " << theta;

      Array<index_t> hc, hg;
      const index_t nch = cpu->handshake_match(Gc, hc), ngh = gpu->handshake_match(Gg, hg);
      EXPECT_EQ(nch, ngh) << "handshake, theta " << theta;
      EXPECT_EQ(hc.to_host(), hg.to_host()) << "handshake, theta " << theta;

      amg::Matrix Cc, Cg;
      cpu->coarse_graph(Gc, hc, nch, Cc);
      gpu->coarse_graph(Gg, hg, ngh, Cg);
      expect_same_csr(download(Cc), download(Cg), 0.0, "coarse graph");
      // and of the mis2 aggregates (some rows unaggregated)
      cpu->coarse_graph(Gc, mc, ncm, Cc);
      gpu->coarse_graph(Gg, mg, ngm, Cg);
      expect_same_csr(download(Cc), download(Cg), 0.0, "coarse graph (mis2)");

      Array<index_t> pc, pg;
      const index_t n2 = cpu->handshake_match(Cc, pc);
      ASSERT_EQ(n2, gpu->handshake_match(Cg, pg));
      cpu->compose(mc, pc);
      gpu->compose(mg, pg);
      EXPECT_EQ(mc.to_host(), mg.to_host()) << "composed aggregates";
    }
  }
}

// Transfer operators, products, transposes, scalings and cycle kernels agree to rounding; outputs
// are poisoned with NaN first where the operation writes into existing storage.
TEST(AmgGpu, NumericKernelsMatchCpu)
{
  auto cpu = amg::Ops::create(backends().cpu), gpu = amg::Ops::create(backends().gpu);
  const index_t n = 5003;
  const amg::Csr A = random_general(n, 4, 9);
  const amg::Matrix Ac = upload(backends().cpu, A), Ag = upload(backends().gpu, A);
  amg::Matrix G;
  cpu->strength_graph(Ac.ref(), n, 0.08, G);
  Array<index_t> agg_c;
  const index_t nc = cpu->mis2_aggregate(G, agg_c);
  ASSERT_GT(nc, 10);
  const auto agg_h = agg_c.to_host();
  Array<index_t> agg_g = to_executor(backends().gpu, agg_h);

  amg::Matrix P0c, P0g;
  cpu->tentative_prolongation(agg_c, nc, P0c);
  gpu->tentative_prolongation(agg_g, nc, P0g);
  expect_same_csr(download(P0c), download(P0g), 0.0, "P0");

  // Smoothed P = (I - omega D^-1 A) P0 through A P0.
  amg::Matrix Pc, Pg;
  auto ap0c = cpu->product_symbolic(Ac.ref(), P0c.ref(), Pc);
  auto ap0g = gpu->product_symbolic(Ag.ref(), P0g.ref(), Pg);
  fill(Pg.values, nan_value);
  cpu->product_numeric(*ap0c, Ac.ref(), P0c.ref(), Pc);
  gpu->product_numeric(*ap0g, Ag.ref(), P0g.ref(), Pg);
  expect_same_csr(download(Pc), download(Pg), 1e-14, "A P0");
  const double rc = cpu->jacobi_radius_bound(Ac.ref()), rg = gpu->jacobi_radius_bound(Ag.ref());
  EXPECT_EQ(rc, rg);
  cpu->smoothed_prolongation(Ac.ref(), agg_c, 4.0 / (3.0 * rc), Pc);
  gpu->smoothed_prolongation(Ag.ref(), agg_g, 4.0 / (3.0 * rg), Pg);
  expect_same_csr(download(Pc), download(Pg), 1e-14, "smoothed P");

  // R = P^T and A_c = R (A P).
  amg::Matrix Rc, Rg, APc, APg, Cc, Cg;
  auto rtc = cpu->transpose_symbolic(Pc, Rc);
  auto rtg = gpu->transpose_symbolic(Pg, Rg);
  cpu->transpose_numeric(*rtc, Pc, Rc);
  gpu->transpose_numeric(*rtg, Pg, Rg);
  expect_same_csr(download(Rc), download(Rg), 1e-14, "R");
  auto apc = cpu->product_symbolic(Ac.ref(), Pc.ref(), APc);
  auto apg = gpu->product_symbolic(Ag.ref(), Pg.ref(), APg);
  cpu->product_numeric(*apc, Ac.ref(), Pc.ref(), APc);
  gpu->product_numeric(*apg, Ag.ref(), Pg.ref(), APg);
  auto rapc = cpu->product_symbolic(Rc.ref(), APc.ref(), Cc);
  auto rapg = gpu->product_symbolic(Rg.ref(), APg.ref(), Cg);
  fill(Cg.values, nan_value);
  cpu->product_numeric(*rapc, Rc.ref(), APc.ref(), Cc);
  gpu->product_numeric(*rapg, Rg.ref(), APg.ref(), Cg);
  expect_same_csr(download(Cc), download(Cg), 1e-12, "Galerkin R A P");

  // Jacobi scalings (both kinds), with a zero diagonal reported at the same row.
  for (bool l1 : {false, true}) {
    Array<double> dc, dg(backends().gpu, n);
    fill(dg, nan_value);
    EXPECT_EQ(cpu->jacobi_scaling(Ac.ref(), 2.0 / 3.0, l1, dc), 0);
    EXPECT_EQ(gpu->jacobi_scaling(Ag.ref(), 2.0 / 3.0, l1, dg), 0);
    const auto hc = dc.to_host(), hg = dg.to_host();
    for (index_t i = 0; i < n; ++i) ASSERT_NEAR(hc[i], hg[i], 1e-15 * std::abs(hc[i])) << i;
  }
  {
    amg::Csr Z = A;
    for (index_t i : {4000, 777})
      for (index_t p = Z.row_ptr[i]; p < Z.row_ptr[i + 1]; ++p)
        if (Z.col_ind[p] == i) Z.values[p] = 0.0;
    const amg::Matrix Zc = upload(backends().cpu, Z), Zg = upload(backends().gpu, Z);
    Array<double> dc, dg;
    EXPECT_EQ(cpu->jacobi_scaling(Zc.ref(), 1.0, false, dc), 778);
    EXPECT_EQ(gpu->jacobi_scaling(Zg.ref(), 1.0, false, dg), 778);
  }

  // Cycle kernels on the fine operator and on the (unsorted, cuSPARSE-made) Galerkin operator.
  for (int which = 0; which < 2; ++which) {
    const amg::Matrix& Mc = which == 0 ? Ac : Cc;
    const amg::Matrix& Mg = which == 0 ? Ag : Cg;
    const index_t m = Mc.nrows;
    const auto x = test::random_vector(m), b = test::random_vector(m), d = test::random_vector(m);
    Array<double> xc = to_executor(backends().cpu, x), bc = to_executor(backends().cpu, b),
                  dc = to_executor(backends().cpu, d);
    Array<double> xg = to_executor(backends().gpu, x), bg = to_executor(backends().gpu, b),
                  dg = to_executor(backends().gpu, d);
    Array<double> yc(backends().cpu, m), yg(backends().gpu, m);
    auto check = [&](const char* what) {
      const auto hc = yc.to_host(), hg = yg.to_host();
      for (index_t i = 0; i < m; ++i) ASSERT_NEAR(hc[i], hg[i], 1e-12 * (1.0 + std::abs(hc[i]))) << what << " " << i;
    };
    auto poison = [&] {
      fill(yg, nan_value);
      fill(yc, nan_value);
    };
    poison();
    cpu->spmv(Mc.ref(), 1.5, xc.data(), 0.0, yc.data());
    gpu->spmv(Mg.ref(), 1.5, xg.data(), 0.0, yg.data());
    check("spmv beta 0");
    cpu->spmv(Mc.ref(), -0.5, xc.data(), 2.0, yc.data());
    gpu->spmv(Mg.ref(), -0.5, xg.data(), 2.0, yg.data());
    check("spmv beta 2");
    poison();
    cpu->residual(Mc.ref(), bc.data(), xc.data(), yc.data());
    gpu->residual(Mg.ref(), bg.data(), xg.data(), yg.data());
    check("residual");
    poison();
    cpu->jacobi_sweep(Mc.ref(), dc.data(), bc.data(), xc.data(), yc.data());
    gpu->jacobi_sweep(Mg.ref(), dg.data(), bg.data(), xg.data(), yg.data());
    check("jacobi sweep");
    poison();
    cpu->jacobi_sweep(Mc.ref(), dc.data(), bc.data(), nullptr, yc.data());
    gpu->jacobi_sweep(Mg.ref(), dg.data(), bg.data(), nullptr, yg.data());
    check("jacobi from zero");
  }

  // The ILU(0) smoother (exact and Jacobi-sweep triangular solves) on the fine operator and on the
  // unsorted Galerkin operator: factorisation info, one step from zero and one from a guess.
  for (int which = 0; which < 2; ++which) {
    const amg::Matrix& Mc = which == 0 ? Ac : Cc;
    const amg::Matrix& Mg = which == 0 ? Ag : Cg;
    const index_t m = Mc.nrows;
    const auto x = test::random_vector(m), b = test::random_vector(m);
    Array<double> xc = to_executor(backends().cpu, x), bc = to_executor(backends().cpu, b);
    Array<double> xg = to_executor(backends().gpu, x), bg = to_executor(backends().gpu, b);
    Array<double> yc(backends().cpu, m), yg(backends().gpu, m), wc(backends().cpu, m), wg(backends().gpu, m);
    for (int sweeps : {0, 2}) {
      const std::string what = fmt::format("ilu0 smoother, {} trisolve sweeps, {} operator", sweeps,
                                           which == 0 ? "fine" : "Galerkin");
      auto pc = cpu->ilu_symbolic(Mc.ref(), sweeps);
      auto pg = gpu->ilu_symbolic(Mg.ref(), sweeps);
      Array<index_t> ic = to_executor(backends().cpu, std::vector<index_t>{-1}),
                     ig = to_executor(backends().gpu, std::vector<index_t>{-1});
      cpu->ilu_factor_into(*pc, Mc.ref(), ic.data());
      gpu->ilu_factor_into(*pg, Mg.ref(), ig.data());
      ASSERT_EQ(ic.to_host()[0], 0) << what;
      ASSERT_EQ(ig.to_host()[0], 0) << what;
      auto check = [&](const char* step) {
        const auto hc = yc.to_host(), hg = yg.to_host();
        double scale = 0.0;
        for (double v : hc) scale = std::max(scale, std::abs(v));
        for (index_t i = 0; i < m; ++i) ASSERT_NEAR(hc[i], hg[i], 1e-11 * scale) << what << " " << step << " " << i;
      };
      fill(yg, nan_value);
      fill(wg, nan_value);
      cpu->ilu_sweep(*pc, Mc.ref(), bc.data(), nullptr, yc.data(), wc.data());
      gpu->ilu_sweep(*pg, Mg.ref(), bg.data(), nullptr, yg.data(), wg.data());
      check("from zero");
      fill(yg, nan_value);
      cpu->ilu_sweep(*pc, Mc.ref(), bc.data(), xc.data(), yc.data(), wc.data());
      gpu->ilu_sweep(*pg, Mg.ref(), bg.data(), xg.data(), yg.data(), wg.data());
      check("from a guess");
    }
  }

  // Coarse LU of the Galerkin operator if small enough, else of a leading block.
  {
    const amg::Csr C = download(Cc);
    amg::Csr S;  // the leading 301 x 301 block, diagonally shifted
    const index_t m = std::min<index_t>(301, C.nrows);
    S.nrows = S.ncols = m;
    S.row_ptr.push_back(0);
    for (index_t i = 0; i < m; ++i) {
      for (index_t p = C.row_ptr[i]; p < C.row_ptr[i + 1]; ++p)
        if (C.col_ind[p] < m) S.col_ind.push_back(C.col_ind[p]), S.values.push_back(C.values[p] + (C.col_ind[p] == i));
      S.row_ptr.push_back(static_cast<index_t>(S.col_ind.size()));
    }
    const amg::Matrix Sc = upload(backends().cpu, S), Sg = upload(backends().gpu, S);
    Array<double> luc, lug, invc, invg;
    Array<index_t> pvc, pvg;
    EXPECT_EQ(cpu->coarse_factor(Sc.ref(), luc, pvc, invc), 0);
    EXPECT_EQ(gpu->coarse_factor(Sg.ref(), lug, pvg, invg), 0);
    // The CPU substitutes; the GPU above amg::coarse_inverse_min_rows rows multiplies by the inverse.
    EXPECT_TRUE(invc.empty());
    EXPECT_EQ(invg.size(), m >= amg::coarse_inverse_min_rows ? size64_t(m) * m : 0);
    const auto b = test::random_vector(m);
    Array<double> bc = to_executor(backends().cpu, b), bg = to_executor(backends().gpu, b);
    Array<double> xc(backends().cpu, m), xg(backends().gpu, m);
    fill(xg, nan_value);
    cpu->coarse_solve(m, luc, pvc, invc, bc.data(), xc.data());
    gpu->coarse_solve(m, lug, pvg, invg, bg.data(), xg.data());
    const auto hc = xc.to_host(), hg = xg.to_host();
    for (index_t i = 0; i < m; ++i) ASSERT_NEAR(hc[i], hg[i], 1e-10 * (1.0 + std::abs(hc[i]))) << i;
  }
}

namespace {

struct Built {
  std::unique_ptr<AmgPreconditioner> cpu, gpu;
  std::unique_ptr<BsrMatrix> Ac, Ag;
};

Built build_both(const test::TestMatrix& m, const AmgOptions& opt)
{
  Built b;
  b.Ac = std::make_unique<BsrMatrix>(test::upload(backends().cpu, m));
  b.Ag = std::make_unique<BsrMatrix>(test::upload(backends().gpu, m));
  b.cpu = std::make_unique<AmgPreconditioner>(backends().cpu, opt);
  b.gpu = std::make_unique<AmgPreconditioner>(backends().gpu, opt);
  const auto sc = b.cpu->setup(*b.Ac), sg = b.gpu->setup(*b.Ag);
  EXPECT_TRUE(sc.ok) << sc.message;
  EXPECT_TRUE(sg.ok) << sg.message;
  return b;
}

void expect_hierarchies_agree(const AmgPreconditioner& c, const AmgPreconditioner& g, double rel)
{
  ASSERT_EQ(c.num_levels(), g.num_levels());
  for (int l = 0; l < c.num_levels(); ++l) {
    const auto hc = c.level_host(l), hg = g.level_host(l);
    EXPECT_EQ(hc.agg, hg.agg) << "aggregates of level " << l;
    expect_same_csr(hc.A, hg.A, l == 0 ? 0.0 : rel, "level operator");
    if (l + 1 < c.num_levels()) {
      expect_same_csr(hc.P, hg.P, rel, "P");
      expect_same_csr(hc.R, hg.R, rel, "R");
    }
  }
}

void expect_cycles_agree(const Built& b, double rel)
{
  const size64_t n = b.Ac->nrows();
  const auto r = test::random_vector(n);
  Vector rc = to_executor(backends().cpu, r), rg = to_executor(backends().gpu, r);
  Vector zc(backends().cpu, n), zg(backends().gpu, n);
  fill(zg, nan_value);
  b.cpu->apply(rc, zc);
  b.gpu->apply(rg, zg);  // records the cycle's graph and runs it
  const auto hc = zc.to_host(), hg = zg.to_host();
  {  // the replayed graph gives the same bits, also after other work on the level vectors
    Vector other = to_executor(backends().gpu, test::random_vector(n)), z2(backends().gpu, n);
    b.gpu->apply(other, z2);
    fill(z2, nan_value);
    b.gpu->apply(rg, z2);
    EXPECT_EQ(z2.to_host(), hg);
  }
  double scale = 0.0;
  for (double v : hc) scale = std::max(scale, std::abs(v));
  for (size64_t i = 0; i < n; ++i) ASSERT_NEAR(hc[i], hg[i], rel * scale) << i;
}

}  // namespace

#if BLOCKRES_HAVE_CUDA  // calls the CUDA AMG's host functions, which a CPU-only build does not have
// The cycle kernels with every lane group per row (2..32; chosen from the rows' mean length and
// how many rows fill the device): matrices shaped to select each one on this device, every
// operation against the CPU twin with poisoned outputs, including the fused sweep-from-zero and
// residual (x must be dinv .* b bit for bit, r within rounding of the CPU's r = b - A x).
TEST(AmgGpu, CycleKernelsEveryLaneGroup)
{
  constexpr size64_t h200 = 132 * 2048;
  EXPECT_EQ(amg::cuda::cycle_lane_group(1000000, 6940000, h200), 4);  // Poisson 1M: level 0
  EXPECT_EQ(amg::cuda::cycle_lane_group(90185, 3020151, h200), 4);    // level 1
  EXPECT_EQ(amg::cuda::cycle_lane_group(4768, 468466, h200), 32);     // level 2
  EXPECT_EQ(amg::cuda::cycle_lane_group(234, 25644, h200), 32);       // level 3
  EXPECT_EQ(amg::cuda::cycle_lane_group(18, 324, h200), 32);          // 18 entries a row: > 16 lanes
  EXPECT_EQ(amg::cuda::cycle_lane_group(20000, 300000, h200), 16);    // 15 a row
  EXPECT_EQ(amg::cuda::cycle_lane_group(5000, 10000, h200), 2);       // <= 2.5 entries a row
  EXPECT_EQ(amg::cuda::cycle_lane_group(0, 0, h200), 2);

  auto cpu = amg::Ops::create(backends().cpu), gpu = amg::Ops::create(backends().gpu);
  const size64_t R = amg::cuda::device_resident_threads();
  ASSERT_GT(R, 1000u);
  struct Shape {
    int lanes;
    index_t n;
    int lo, hi;  // row lengths
  };
  const std::vector<Shape> shapes = {{2, 999, 1, 2},
                                     {4, index_t(R / 3) + 7, 3, 9},
                                     {8, index_t(R / 6) + 1, 10, 30},
                                     {16, index_t(R / 12) + 3, 20, 60},
                                     {32, index_t(R / 50) + 5, 50, 150}};
  std::mt19937_64 g(20261126);
  for (const auto& sh : shapes) {
    amg::Csr A;
    A.nrows = A.ncols = sh.n;
    A.row_ptr.push_back(0);
    std::uniform_int_distribution<int> len(sh.lo, sh.hi);
    std::uniform_int_distribution<index_t> col(0, sh.n - 1);
    std::uniform_real_distribution<double> val(-1.0, 1.0);
    for (index_t i = 0; i < sh.n; ++i) {
      const int k = len(g);
      for (int e = 0; e < k; ++e) {
        A.col_ind.push_back(e == 0 ? i : col(g));
        A.values.push_back(e == 0 ? 4.0 + val(g) : val(g));
      }
      A.row_ptr.push_back(static_cast<index_t>(A.col_ind.size()));
    }
    ASSERT_EQ(amg::cuda::cycle_lane_group(A.nrows, A.values.size(), R), sh.lanes) << "shape of " << sh.lanes;
    const amg::Matrix Mc = upload(backends().cpu, A), Mg = upload(backends().gpu, A);
    const index_t m = sh.n;
    const auto x = test::random_vector(m), b = test::random_vector(m), d = test::random_vector(m, 0.1, 0.3);
    Array<double> xc = to_executor(backends().cpu, x), bc = to_executor(backends().cpu, b),
                  dc = to_executor(backends().cpu, d);
    Array<double> xg = to_executor(backends().gpu, x), bg = to_executor(backends().gpu, b),
                  dg = to_executor(backends().gpu, d);
    Array<double> yc(backends().cpu, m), yg(backends().gpu, m), zc(backends().cpu, m), zg(backends().gpu, m);
    const std::string what = fmt::format("{} lanes, {} rows", sh.lanes, m);
    auto check = [&](const char* op, const Array<double>& c, const Array<double>& gg, double tol) {
      const auto hc = c.to_host(), hg = gg.to_host();
      for (index_t i = 0; i < m; ++i)
        ASSERT_NEAR(hc[i], hg[i], tol * (1.0 + std::abs(hc[i]))) << what << " " << op << " row " << i;
    };
    auto poison = [&] {
      for (auto* a : {&yc, &yg, &zc, &zg}) fill(*a, nan_value);
    };
    poison();
    cpu->spmv(Mc.ref(), 1.5, xc.data(), 0.0, yc.data());
    gpu->spmv(Mg.ref(), 1.5, xg.data(), 0.0, yg.data());
    check("spmv beta 0", yc, yg, 1e-12);
    cpu->spmv(Mc.ref(), -0.5, xc.data(), 2.0, yc.data());
    gpu->spmv(Mg.ref(), -0.5, xg.data(), 2.0, yg.data());
    check("spmv beta 2", yc, yg, 1e-12);
    poison();
    cpu->residual(Mc.ref(), bc.data(), xc.data(), yc.data());
    gpu->residual(Mg.ref(), bg.data(), xg.data(), yg.data());
    check("residual", yc, yg, 1e-12);
    poison();
    cpu->jacobi_sweep(Mc.ref(), dc.data(), bc.data(), xc.data(), yc.data());
    gpu->jacobi_sweep(Mg.ref(), dg.data(), bg.data(), xg.data(), yg.data());
    check("jacobi sweep", yc, yg, 1e-12);
    poison();
    cpu->smooth_zero_residual(Mc.ref(), dc.data(), bc.data(), zc.data(), yc.data());
    gpu->smooth_zero_residual(Mg.ref(), dg.data(), bg.data(), zg.data(), yg.data());
    check("sweep from zero: x", zc, zg, 0.0);
    check("sweep from zero: residual", yc, yg, 1e-12);
    // The ILU(0) smoother's Jacobi sweeps (A's entries taken as the factors, d as 1 / u_ii).
    for (bool upper : {false, true}) {
      const std::string sweep = upper ? "ilu upper sweep" : "ilu lower sweep";
      poison();
      amg::cpu::ilu_jacobi_sweep(Mc.ref(), dc.data(), upper, bc.data(), xc.data(), yc.data());
      amg::cuda::ilu_jacobi_sweep(backends().gpu->stream(), Mg.ref(), dg.data(), upper, bg.data(), xg.data(),
                                  yg.data());
      check(sweep.c_str(), yc, yg, 1e-12);
      poison();
      amg::cpu::ilu_jacobi_sweep(Mc.ref(), dc.data(), upper, bc.data(), nullptr, yc.data());
      amg::cuda::ilu_jacobi_sweep(backends().gpu->stream(), Mg.ref(), dg.data(), upper, bg.data(), nullptr, yg.data());
      check((sweep + " from zero").c_str(), yc, yg, 0.0);
    }
    // fp32 storage (StoragePrecision::fp32): the fp32 copies bit for bit (a few values beyond the fp32
    // range saturate to +-inf on both), then the four cycle operations on them.
    {
      const size64_t nnz = A.values.size();
      Array<float> vc(backends().cpu, nnz), vg(backends().gpu, nnz);
      Array<float> oc(backends().cpu, 4), og(backends().gpu, 4);
      const std::vector<double> odd = {1e39, -1e39, 3.4028235677973366e38, 1e-46};
      const Array<double> odd_c = to_executor(backends().cpu, odd), odd_g = to_executor(backends().gpu, odd);
      cpu->to_fp32(4, odd_c.data(), oc.data());
      gpu->to_fp32(4, odd_g.data(), og.data());
      EXPECT_EQ(oc.to_host(), og.to_host()) << what;
      cpu->to_fp32(nnz, Mc.values.data(), vc.data());
      gpu->to_fp32(nnz, Mg.values.data(), vg.data());
      ASSERT_EQ(vc.to_host(), vg.to_host()) << what << ": fp32 copies";
      const amg::CycleRef Fc(Mc.ref(), vc.data()), Fg(Mg.ref(), vg.data());
      poison();
      cpu->spmv(Fc, -0.5, xc.data(), 0.0, yc.data());
      gpu->spmv(Fg, -0.5, xg.data(), 0.0, yg.data());
      check("fp32 spmv", yc, yg, 1e-12);
      poison();
      cpu->residual(Fc, bc.data(), xc.data(), yc.data());
      gpu->residual(Fg, bg.data(), xg.data(), yg.data());
      check("fp32 residual", yc, yg, 1e-12);
      poison();
      cpu->jacobi_sweep(Fc, dc.data(), bc.data(), xc.data(), yc.data());
      gpu->jacobi_sweep(Fg, dg.data(), bg.data(), xg.data(), yg.data());
      check("fp32 jacobi sweep", yc, yg, 1e-12);
      poison();
      cpu->smooth_zero_residual(Fc, dc.data(), bc.data(), zc.data(), yc.data());
      gpu->smooth_zero_residual(Fg, dg.data(), bg.data(), zg.data(), yg.data());
      check("fp32 sweep from zero: x", zc, zg, 0.0);
      check("fp32 sweep from zero: residual", yc, yg, 1e-12);
    }
  }
}
#endif

// Whole hierarchies (aggregates, operators, transfers) and V-cycles of both backends, for every
// aggregation, interpolation and smoother, on random matrices of odd sizes and a heterogeneous
// Poisson problem; then a numeric re-setup on new values.

TEST(AmgGpu, HierarchiesAndCyclesAgree)
{
  struct Case {
    AmgAggregation agg;
    int size;
    AmgInterpolation interp;
    AmgSmoother smoother;
    int trisolve_sweeps = 0;
    AmgCycle cycle = AmgCycle::v;
    int cycles = 1;
    StoragePrecision storage = StoragePrecision::fp64;
    index_t max_coarse = 60;
  } cases[] = {{AmgAggregation::mis2, 0, AmgInterpolation::smoothed, AmgSmoother::jacobi},
               {AmgAggregation::mis2, 0, AmgInterpolation::plain, AmgSmoother::l1_jacobi},
               {AmgAggregation::matching, 8, AmgInterpolation::smoothed, AmgSmoother::l1_jacobi},
               {AmgAggregation::matching, 4, AmgInterpolation::plain, AmgSmoother::jacobi},
               {AmgAggregation::matching, 2, AmgInterpolation::smoothed, AmgSmoother::jacobi},
               {AmgAggregation::mis2, 0, AmgInterpolation::smoothed, AmgSmoother::ilu0, 0},
               {AmgAggregation::mis2, 0, AmgInterpolation::smoothed, AmgSmoother::ilu0, 2, AmgCycle::w},
               {AmgAggregation::mis2, 0, AmgInterpolation::smoothed, AmgSmoother::jacobi, 0, AmgCycle::w, 2},
               {AmgAggregation::mis2, 0, AmgInterpolation::smoothed, AmgSmoother::jacobi, 0, AmgCycle::v, 1,
                StoragePrecision::fp32},
               {AmgAggregation::matching, 4, AmgInterpolation::plain, AmgSmoother::l1_jacobi, 0, AmgCycle::w, 2,
                StoragePrecision::fp32},
               // A coarsest level of amg::coarse_inverse_min_rows rows or more: the GPU multiplies by its
               // inverse (formed in the recorded numeric re-setup, applied in the recorded cycle), the CPU
               // substitutes with the LU.
               {AmgAggregation::mis2, 0, AmgInterpolation::smoothed, AmgSmoother::jacobi, 0, AmgCycle::w, 1,
                StoragePrecision::fp64, 400}};
  for (const auto& c : cases) {
    AmgOptions opt;
    opt.aggregation = c.agg;
    if (c.size) opt.aggregate_size = c.size;
    opt.interpolation = c.interp;
    opt.smoother = c.smoother;
    opt.trisolve_sweeps = c.trisolve_sweeps;
    opt.cycle = c.cycle;
    opt.cycles = c.cycles;
    opt.storage = c.storage;
    opt.max_coarse = c.max_coarse;
    SCOPED_TRACE(fmt::format("{} {} {} {} {} {}-cycle x{} {} max_coarse {}", to_string(c.agg), c.size,
                             to_string(c.interp), to_string(c.smoother), c.trisolve_sweeps, to_string(c.cycle),
                             c.cycles, to_string(c.storage), c.max_coarse));
    // The Poisson hierarchy's coarsest level, when the case means the inverse: large enough for it (7429,
    // 744, 99 rows on the CPU; the random matrix's ends at 20 rows either way).
    const auto expect_inverse_sized = [&](const Built& b) {
      if (c.max_coarse < amg::coarse_inverse_min_rows) return;
      EXPECT_GE(b.gpu->statistics().levels.back().rows, amg::coarse_inverse_min_rows);
      EXPECT_TRUE(b.gpu->statistics().coarsest_direct);
    };
    // fp32 storage: the two backends' fp64 hierarchies agree to 1e-12, so a value can round to
    // neighbouring fp32 numbers on the two (one fp32 ulp, 6e-8 relative): the cycles then agree to
    // that rounding, not to fp64's.
    const double cycle_tol = c.storage == StoragePrecision::fp32 ? 1e-5 : 1e-9;
    {
      const auto b = build_both(test::random_spd(9001, 3, 41), opt);
      expect_hierarchies_agree(*b.cpu, *b.gpu, 1e-12);
      expect_cycles_agree(b, cycle_tol);
    }
    {
      const int nx = 23, ny = 19, nz = 17;
      auto m = test::fv_poisson(nx, ny, nz, test::lognormal(nx * ny * nz, 1.0, 5));
      auto b = build_both(m, opt);
      expect_inverse_sized(b);
      ASSERT_GE(b.cpu->num_levels(), 3);
      EXPECT_EQ(b.cpu->statistics().levels.size(), b.gpu->statistics().levels.size());
      expect_cycles_agree(b, cycle_tol);
      // Numeric re-setup on new values with the same pattern, on both.
      const auto m2 = test::fv_poisson(nx, ny, nz, test::lognormal(nx * ny * nz, 1.0, 6));
      b.Ac->values().copy_from_host(m2.values);
      b.Ag->values().copy_from_host(m2.values);
      ASSERT_TRUE(b.cpu->setup(*b.Ac).ok);
      ASSERT_TRUE(b.gpu->setup(*b.Ag).ok);
      EXPECT_EQ(b.gpu->statistics().numeric_setups, 1);
      EXPECT_EQ(b.gpu->statistics().full_setups, 1);
      expect_hierarchies_agree(*b.cpu, *b.gpu, 1e-12);
      expect_cycles_agree(b, cycle_tol);
      // A second re-setup of the same arrays replays the recorded one (CUDA graph): it must read
      // the new values, and give what the CPU gives.
      const bool graph = b.gpu->statistics().numeric_graph;
      const auto m3 = test::fv_poisson(nx, ny, nz, test::lognormal(nx * ny * nz, 2.0, 7));
      b.Ac->values().copy_from_host(m3.values);
      b.Ag->values().copy_from_host(m3.values);
      ASSERT_TRUE(b.cpu->setup(*b.Ac).ok);
      ASSERT_TRUE(b.gpu->setup(*b.Ag).ok);
      EXPECT_EQ(b.gpu->statistics().numeric_setups, 2);
      EXPECT_EQ(b.gpu->statistics().numeric_graph, graph);
      std::printf("numeric re-setup recorded as a CUDA graph: %s\n", graph ? "yes" : "no");
      expect_hierarchies_agree(*b.cpu, *b.gpu, 1e-12);
      expect_cycles_agree(b, cycle_tol);
    }
  }
}

// AMG-CG on the GPU converges like on the CPU (iteration counts within 2) on Poisson and on a
// log-normal (std_log 3) anisotropic problem; the GPU's 32^3 -> 48^3 growth is bounded.
TEST(AmgGpu, CgIterationsMatchCpu)
{
  auto run = [](const test::TestMatrix& m, const ExecPtr& e) {
    BsrMatrix A = test::upload(e, m);
    const size64_t n = m.pattern.nrows;
    Vector b = to_executor(e, test::random_vector(n)), x(e, n);
    fill(x, 0.0);
    AmgPreconditioner M(e);
    EXPECT_TRUE(M.setup(A).ok);
    KrylovConfig c;
    c.method = KrylovMethod::cg;
    c.rel_tol = 1e-8;
    c.max_iterations = 300;
    KrylovSolver s(e, c);
    const auto st = s.solve(A, M, b, x);
    EXPECT_TRUE(st.converged);
    return st.iterations;
  };
  std::vector<int> gpu_its;
  for (int n : {32, 48}) {
    const auto m = test::fv_poisson(n, n, n, std::vector<double>(n * n * n, 1.0));
    const int ic = run(m, backends().cpu), ig = run(m, backends().gpu);
    std::printf("Poisson %d^3: CPU %d, GPU %d AMG-CG iterations\n", n, ic, ig);
    EXPECT_LE(std::abs(ic - ig), 2);
    gpu_its.push_back(ig);
  }
  EXPECT_LE(gpu_its[1], 1.3 * gpu_its[0]);
  const int n = 30;
  const auto m = test::fv_poisson(n, n, n, test::lognormal(n * n * n, 3.0, 8), 1.0, 1.0, 0.1);
  const int ic = run(m, backends().cpu), ig = run(m, backends().gpu);
  std::printf("log-normal std 3, anisotropy 10, 30^3: CPU %d, GPU %d AMG-CG iterations\n", ic, ig);
  EXPECT_LE(std::abs(ic - ig), 2);
}

// CPR with an AMG pressure stage on convection-diffusion block systems (bs 2, 3, 7): GMRES on both
// backends converges with iteration counts within 2.
TEST(AmgGpu, CprWithAmgPressureStageAgreesWithCpu)
{
  for (int bs : {2, 3, 7}) {
    const auto m = test::convection_diffusion(15, 13, 11, bs, 1.0);
    CprOptions o;
    o.pressure = {"amg", AmgOptions{.max_coarse = 50}};
    o.second = {"block_jacobi", BlockJacobiOptions{}};
    BsrMatrix Ac = test::upload(backends().cpu, m), Ag = test::upload(backends().gpu, m);
    CprPreconditioner Mc(backends().cpu, o), Mg(backends().gpu, o);
    ASSERT_TRUE(Mc.setup(Ac).ok);
    ASSERT_TRUE(Mg.setup(Ag).ok);
    test::expect_gmres_agrees(Ac, Mc, Ag, Mg, test::random_vector(Ac.scalar_rows()), 400,
                             fmt::format("cpr(amg) bs {}", bs));
  }
}

// The structure key on the device: the same pattern takes the numeric path, another pattern (same
// sizes, one column moved) a full setup.
TEST(AmgGpu, StructureKeyOnTheDevice)
{
  auto m = test::fv_poisson(12, 11, 10, std::vector<double>(1320, 1.0));
  BsrMatrix A = test::upload(backends().gpu, m);
  AmgPreconditioner M(backends().gpu, AmgOptions{.max_coarse = 20});
  ASSERT_TRUE(M.setup(A).ok);
  ASSERT_TRUE(M.setup(A).ok);
  EXPECT_EQ(M.statistics().full_setups, 1);
  EXPECT_EQ(M.statistics().numeric_setups, 1);
  // Row 0's last entry moves to the next free column (same nnz, same row pointers).
  auto m2 = m;
  const index_t last = m2.pattern.row_ptr[1] - 1;
  m2.pattern.col_ind[last] += 1;
  BsrMatrix B = test::upload(backends().gpu, m2);
  ASSERT_TRUE(M.setup(B).ok);
  EXPECT_EQ(M.statistics().full_setups, 2);
}
