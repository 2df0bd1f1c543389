// Physics on the CPU backend: hand-checked formulas, the assembled Jacobian against finite
// differences of the residual (cells and implicitly coupled wells), the accumulation blocks of
// true-IMPES against finite differences and the Jacobian, well controls,
// conservation, the log-normal generator.
#include "input/error.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"
#include "physics/dual.hpp"
#include "physics/model_registry.hpp"
#include "physics/oil_water/oil_water_local.hpp"
#include "physics/oil_water/oil_water_model.hpp"
#include "physics/test/block_storage_check.hpp"
#include "physics/test/model_fixture.hpp"
#include "physics/wells.hpp"

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <array>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>

using namespace blockres;
using namespace blockres::physics;

// Everything past the deck reader looks a model up by name here: an unknown name is bad input
// naming the registered models, not a null entry.
TEST(ModelRegistry, LookupByNameOrAnInputErrorNamingTheModels)
{
  for (const ModelEntry& m : registered_models()) EXPECT_EQ(&model_entry(m.name), find_model(m.name));
  EXPECT_EQ(model_entry("oil_water").name, "oil_water");
  EXPECT_EQ(find_model("black_oil"), nullptr);
  try {
    model_entry("black_oil");
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("model.type: unknown model 'black_oil'"), std::string::npos) << what;
    EXPECT_NE(what.find("'oil_water', 'multicomponent'"), std::string::npos) << what;
  }
}

TEST(Grid, TpfaTransmissibilityByHand)
{
  // 1 / (l1/(2 k1 A) + l2/(2 k2 A)) with l1=2, k1=1, l2=4, k2=2, A=3: 1 / (1/3 + 1/3) = 1.5
  EXPECT_DOUBLE_EQ(tpfa_transmissibility(2, 1, 4, 2, 3), 1.5);
  EXPECT_EQ(tpfa_transmissibility(2, 0, 4, 2, 3), 0.0);
}

TEST(Grid, ActiveCellsDepthsPoreVolumesFaces)
{
  GridSpec g{3, 2, 2, {1, 2, 3}, {4, 5}, {6, 7}, 100.0, true};
  RockSpec r;
  r.porosity.assign(12, 0.25);
  r.porosity[4] = 0.0;  // (1, 1, 0) inactive
  r.kx.assign(12, 2.0), r.ky.assign(12, 2.0), r.kz.assign(12, 2.0);
  const Grid grid(g, r);
  EXPECT_EQ(grid.num_cells(), 12);
  EXPECT_EQ(grid.num_active(), 11);
  EXPECT_EQ(grid.active_index(4), -1);
  EXPECT_EQ(grid.active_index(5), 4);
  EXPECT_DOUBLE_EQ(grid.layer_depth(0), 103.0);
  EXPECT_DOUBLE_EQ(grid.layer_depth(1), 109.5);
  EXPECT_DOUBLE_EQ(grid.pore_volume_ref()[grid.active_index(grid.global_index(2, 1, 1))], 0.25 * 3 * 5 * 7);
  // Faces of a 3x2x2 grid: x 2*2*2=8, y 3*1*2=6, z 3*2*1=6 -> 20, minus the 3 touching cell 4 (x: 2, y: 1, z: 1 -> 4)
  EXPECT_EQ(grid.faces().size(), 20u - 4u);
  // x-face between (0,0,0) and (1,0,0): A = 4*6, l = 1, 2
  bool found = false;
  for (const auto& f : grid.faces())
    if (f.a == 0 && f.b == 1) {
      found = true;
      EXPECT_DOUBLE_EQ(f.trans, tpfa_transmissibility(1, 2, 2, 2, 24));
    }
  EXPECT_TRUE(found);
}

// The set-up's arrays are built row by row and cell by cell in parallel (issue 30: start-up at a
// million cells). They must be those of the plain serial loops, in the same order (the assembly sums
// a cell's fluxes in cell_faces() order), for any thread count: checked against those loops, written
// here as the reference, on grids above and below the size where the loops go parallel, with
// inactive cells, zero permeabilities (faces dropped) and wells under rate and BHP control.
TEST(Grid, ParallelSetupMatchesTheSerialLoops)
{
  const int before = omp_get_max_threads();
  for (const auto [nx, ny, nz] : {std::array{41, 23, 19}, std::array{7, 5, 3}, std::array{1, 1, 9}, std::array{29, 1, 1}}) {
    SCOPED_TRACE(fmt::format("{}x{}x{}", nx, ny, nz));
    GridSpec g;
    g.nx = nx, g.ny = ny, g.nz = nz, g.top = 1000, g.gravity = true;
    for (int i = 0; i < nx; ++i) g.dx.push_back(test::uniform(1, 3));
    for (int j = 0; j < ny; ++j) g.dy.push_back(test::uniform(1, 3));
    for (int k = 0; k < nz; ++k) g.dz.push_back(test::uniform(0.5, 2));
    const std::size_t n = std::size_t(nx) * ny * nz;
    RockSpec r;
    for (std::size_t c = 0; c < n; ++c) {
      r.porosity.push_back(test::uniform(0, 1) < 0.15 ? 0.0 : test::uniform(0.1, 0.3));
      for (auto* k : {&r.kx, &r.ky, &r.kz}) k->push_back(test::uniform(0, 1) < 0.05 ? 0.0 : test::uniform(1e-14, 1e-12));
    }
    r.porosity[0] = 0.2;  // one active cell at least
    // The serial reference: active cells in global order, faces toward x+, y+, z+ cell by cell.
    std::vector<index_t> active(n, -1), global;
    std::vector<double> depth, pv;
    std::vector<Grid::Face> faces;
    double top = g.top;
    for (int k = 0; k < nz; ++k) {
      const double dep = top + 0.5 * g.dz[k];
      top += g.dz[k];
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const index_t c = i + nx * (j + ny * k);
          if (r.porosity[c] > 0.0) {
            active[c] = index_t(global.size()), global.push_back(c), depth.push_back(dep);
            pv.push_back(r.porosity[c] * g.dx[i] * g.dy[j] * g.dz[k]);
          }
        }
    }
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const index_t c = i + nx * (j + ny * k);
          const auto add = [&](index_t e, double l1, double k1, double l2, double k2, double area) {
            if (active[c] < 0 || active[e] < 0) return;
            const double t = tpfa_transmissibility(l1, k1, l2, k2, area);
            if (t > 0.0) faces.push_back({active[c], active[e], t});
          };
          if (i + 1 < nx) add(c + 1, g.dx[i], r.kx[c], g.dx[i + 1], r.kx[c + 1], g.dy[j] * g.dz[k]);
          if (j + 1 < ny) add(c + nx, g.dy[j], r.ky[c], g.dy[j + 1], r.ky[c + nx], g.dx[i] * g.dz[k]);
          if (k + 1 < nz) add(c + nx * ny, g.dz[k], r.kz[c], g.dz[k + 1], r.kz[c + nx * ny], g.dx[i] * g.dy[j]);
        }
    const index_t na = index_t(global.size());
    // cell faces: a counting sort of the faces by both their cells
    std::vector<index_t> cf_ptr(std::size_t(na) + 1, 0), cf_face;
    for (const auto& f : faces) ++cf_ptr[f.a + 1], ++cf_ptr[f.b + 1];
    for (index_t a = 0; a < na; ++a) cf_ptr[a + 1] += cf_ptr[a];
    cf_face.resize(std::size_t(cf_ptr[na]));
    std::vector<index_t> next(cf_ptr.begin(), cf_ptr.end() - 1);
    for (std::size_t f = 0; f < faces.size(); ++f) cf_face[next[faces[f].a]++] = index_t(f), cf_face[next[faces[f].b]++] = index_t(f);
    // two wells on up to 5 active cells each (distinct cells), one under rate control
    std::vector<WellInfo> wells(2);
    wells[0].rate_control = true;
    for (index_t a = 0; a < na; a += std::max<index_t>(1, na / 9)) {
      WellInfo& w = wells[std::size_t(wells[0].completions.size() < 5 ? 0 : 1)];
      if (w.completions.size() < 5) w.completions.push_back({0, 0, 0, a, 1.0, 0.0});
    }
    // pattern: per row sorted unique {i, neighbours, rate-well partners}
    std::vector<std::vector<index_t>> rows(static_cast<std::size_t>(na), std::vector<index_t>{});
    for (index_t a = 0; a < na; ++a) rows[a].push_back(a);
    for (const auto& f : faces) rows[f.a].push_back(f.b), rows[f.b].push_back(f.a);
    for (const auto& c : wells[0].completions)
      for (const auto& c2 : wells[0].completions) rows[c.cell].push_back(c2.cell);
    std::vector<index_t> row_ptr{0}, col;
    for (auto& row : rows) {
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end()), row.end());
      col.insert(col.end(), row.begin(), row.end());
      row_ptr.push_back(index_t(col.size()));
    }
    for (const int threads : {1, 3}) {
      SCOPED_TRACE(fmt::format("{} threads", threads));
      omp_set_num_threads(threads);
      const Grid grid(g, r);
      ASSERT_EQ(grid.num_active(), na);
      EXPECT_EQ(grid.active_map(), active);
      EXPECT_EQ(grid.global_map(), global);
      EXPECT_EQ(grid.depth(), depth);
      EXPECT_EQ(grid.pore_volume_ref(), pv);
      ASSERT_EQ(grid.faces().size(), faces.size());
      for (std::size_t f = 0; f < faces.size(); ++f) {
        ASSERT_EQ(grid.faces()[f].a, faces[f].a) << f;
        ASSERT_EQ(grid.faces()[f].b, faces[f].b) << f;
        ASSERT_EQ(grid.faces()[f].trans, faces[f].trans) << f;  // bit for bit
      }
      const Grid::CellFaces cf = grid.cell_faces();
      EXPECT_TRUE(std::equal(cf.ptr.begin(), cf.ptr.end(), cf_ptr.begin(), cf_ptr.end()));
      EXPECT_TRUE(std::equal(cf.face.begin(), cf.face.end(), cf_face.begin(), cf_face.end()));
      const BsrPattern p = jacobian_pattern(grid, wells);
      EXPECT_EQ(p.row_ptr, row_ptr);
      EXPECT_EQ(p.col_ind, col);
      const CellConnections conn = cell_connections(grid, cf, p);
      ASSERT_EQ(conn.cell.size(), cf_face.size());
      for (index_t a = 0; a < na; ++a) {
        EXPECT_EQ(conn.diag_block[a], p.find(a, a));
        for (index_t q = cf_ptr[a]; q < cf_ptr[a + 1]; ++q) {
          const Grid::Face& f = faces[cf_face[q]];
          ASSERT_EQ(conn.cell[q], f.a + f.b - a) << a;
          ASSERT_EQ(conn.trans[q], f.trans) << a;
          ASSERT_EQ(conn.block[q], p.find(a, f.a + f.b - a)) << a;
          ASSERT_GE(conn.block[q], 0) << a;
        }
      }
    }
  }
  omp_set_num_threads(before);
}

// Two rate-controlled wells on one cell would need both wells' couplings in its row: complete_wells
// refuses such decks, and the pattern builder refuses such wells too rather than keep one.
TEST(Grid, PatternRefusesTwoRateWellsOnACell)
{
  GridSpec g{3, 1, 1, {1, 1, 1}, {1}, {1}, 100.0, false};
  RockSpec r;
  r.porosity.assign(3, 0.2), r.kx.assign(3, 1e-13), r.ky.assign(3, 1e-13), r.kz.assign(3, 1e-13);
  const Grid grid(g, r);
  std::vector<WellInfo> wells(2);
  for (auto& w : wells) w.rate_control = true;
  wells[0].name = "A", wells[1].name = "B";
  wells[0].completions.push_back({0, 0, 0, 1, 1.0, 0.0});
  wells[1].completions.push_back({0, 0, 0, 1, 1.0, 0.0});
  EXPECT_THROW(jacobian_pattern(grid, wells), std::invalid_argument);
  wells[1].completions[0].cell = 2;  // different cells: fine
  EXPECT_EQ(jacobian_pattern(grid, wells).nnzb(), 7);  // 3 diagonal + 2 x 2 face blocks
}

TEST(Dual, DerivativesMatchFiniteDifferences)
{
  auto f = [](auto x, auto y) { return (x * x + 3.0 * y) / (1.0 + x * y) - pow_nonneg(x, 2.5) * y; };
  const double x0 = 0.7, y0 = 1.3, h = 1e-6;
  const auto d = f(Dual<2>::variable(x0, 0), Dual<2>::variable(y0, 1));
  EXPECT_NEAR(d.v, f(x0, y0), 1e-15);
  EXPECT_NEAR(d.d[0], (f(x0 + h, y0) - f(x0 - h, y0)) / (2 * h), 1e-8);
  EXPECT_NEAR(d.d[1], (f(x0, y0 + h) - f(x0, y0 - h)) / (2 * h), 1e-8);
  // pow at zero: exact derivative n x^(n-1) = 0 for n > 1, 1 for n = 1
  EXPECT_EQ(pow_nonneg(Dual<1>::variable(0.0, 0), 2.0).d[0], 0.0);
  EXPECT_EQ(pow_nonneg(Dual<1>::variable(0.0, 0), 1.0).d[0], 1.0);
}

TEST(Fluid, CoreyAndTableByHand)
{
  RelpermParams c;
  c.swc = 0.2, c.sor = 0.2, c.nw = 2, c.no = 3, c.krw_max = 0.5, c.kro_max = 0.8;
  double krw, kro, pc;
  relperm(c, 0.5, krw, kro, pc);  // S_e = 0.5
  EXPECT_DOUBLE_EQ(krw, 0.5 * 0.25);
  EXPECT_DOUBLE_EQ(kro, 0.8 * 0.125);
  EXPECT_EQ(pc, 0.0);
  relperm(c, 0.1, krw, kro, pc);  // below S_wc: clamped
  EXPECT_EQ(krw, 0.0);
  EXPECT_DOUBLE_EQ(kro, 0.8);
  const double t[] = {0.2, 0.0, 1.0, 2.0, 0.6, 0.4, 0.2, 1.0, 0.8, 0.6, 0.0, 0.0};
  RelpermParams tb;
  tb.kind = relperm_table, tb.table = t, tb.nrows = 3;
  relperm(tb, 0.5, krw, kro, pc);  // 3/4 of the way from row 0 to row 1
  EXPECT_DOUBLE_EQ(krw, 0.3);
  EXPECT_DOUBLE_EQ(kro, 0.4);
  EXPECT_DOUBLE_EQ(pc, 1.25);
  relperm(tb, 0.95, krw, kro, pc);
  EXPECT_DOUBLE_EQ(krw, 0.6);
  // B(p) = B_ref / (1 + X + X^2/2)
  PhaseParams ph{1000.0, 1.0 / 1.2, 1e-9, 2e7, 1000.0};
  const double X = 1e-9 * 1e6;
  EXPECT_NEAR(1.0 / inv_fvf(ph, 2.1e7), 1.2 / (1 + X + X * X / 2), 1e-15);
}

namespace {

// Dense Jacobian from the BSR values of a model's pattern.
std::vector<double> dense(const BsrPattern& p, const std::vector<double>& v)
{
  const std::size_t n = std::size_t(p.nrows) * 2;
  std::vector<double> d(n * n, 0.0);
  for (index_t r = 0; r < p.nrows; ++r)
    for (index_t k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) d[(2 * r + a) * n + 2 * p.col_ind[k] + b] = v[4 * std::size_t(k) + 2 * a + b];
  return d;
}

struct Harness {
  ExecPtr exec = Executor::create_cpu();
  test::ModelSetup s;
  Grid grid;
  OilWaterModel model;
  BsrMatrix J;
  Vector R;
  explicit Harness(test::ModelSetup setup)
      : s(std::move(setup)),
        grid(s.grid, s.rock),
        model(exec, grid, s.rock, s.fluid, s.wells, true),
        J(exec, 2, model.pattern()),
        R(exec, 2 * size64_t(model.num_cells()))
  {
  }
  std::vector<double> residual(const std::vector<double>& x, const std::vector<double>& x0, double dt)
  {
    Vector xv(exec, std::span<const double>(x)), x0v(exec, std::span<const double>(x0));
    model.assemble(xv, x0v, dt, R, J);
    return R.to_host();
  }
};

}  // namespace

// The CUDA assembly's path (assemble_cell<true>: each cell's face properties stored by quantity once,
// rows that hold only the diagonal and one block per face written once, other rows cleared and added
// to) run on the host through the shared cell functions: the same residual and Jacobian as the CPU's
// per-face evaluation, every entry written (outputs poisoned), both row kinds present (the wells'
// coupling blocks make longer rows). Wells are added by assemble_well afterwards on both backends.
TEST(Assembly, StoredFacePropertiesPathMatchesThePerFaceEvaluation)
{
  for (bool table : {false, true}) {
    Harness h(test::small_setup(table, 17));
    const index_t n = h.model.num_cells();
    const auto x = test::random_state(n), x0 = test::random_state(n);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    MeshView M = h.model.mesh_view();
    std::vector<double> props(size64_t(n) * face_props_doubles, nan);
    M.face_props = props.data();
    const OilWaterParams& P = h.model.host_params();
    for (index_t i = 0; i < n; ++i) store_face_props(P, x.data(), i, props.data(), size64_t(n));
    const size64_t nv = h.J.values().size();
    std::vector<double> Jr(nv, nan), Js(nv, nan), Rr(2 * size64_t(n), nan), Rs(Rr.size(), nan);
    const double dt = 2.0 * units::day;
    int direct = 0, other = 0;
    for (index_t i = 0; i < n; ++i) {
      assemble_cell<false>(P, M, x.data(), x0.data(), dt, Rr.data(), Jr.data(), i);
      assemble_cell<true>(P, M, x.data(), x0.data(), dt, Rs.data(), Js.data(), i);
      (M.row_ptr[i + 1] - M.row_ptr[i] == 1 + (M.nbr_ptr[i + 1] - M.nbr_ptr[i]) ? direct : other) += 1;
    }
    EXPECT_GT(direct, 0);
    EXPECT_GT(other, 0);
    for (size64_t k = 0; k < nv; ++k) ASSERT_TRUE(Js[k] == Jr[k]) << "Jacobian entry " << k << ": " << Js[k] << " vs " << Jr[k];
    for (size64_t k = 0; k < size64_t(Rr.size()); ++k) ASSERT_TRUE(Rs[k] == Rr[k]) << "residual entry " << k;
  }
}

class JacobianVsFiniteDifferences : public ::testing::TestWithParam<bool> {};

TEST_P(JacobianVsFiniteDifferences, AllColumns)
{
  Harness h(test::small_setup(GetParam(), test::rng()()));
  const index_t n = h.model.num_cells();
  const auto x0 = test::random_state(n);
  auto x = test::random_state(n);
  const double dt = 5.0 * units::day;
  {
    Vector x0v(h.exec, std::span<const double>(x0));
    h.model.begin_step(x0v);
  }
  const auto R0 = h.residual(x, x0, dt);
  const auto Jd = dense(h.model.pattern(), h.J.values().to_host());
  const auto wr = h.model.well_results();
  ASSERT_EQ(wr.size(), 3u);
  EXPECT_FALSE(wr[0].at_bhp) << "the injector should be on rate control for this test";
  EXPECT_FALSE(wr[1].at_bhp) << "the producer should be on rate control for this test";

  const std::size_t N = std::size_t(n) * 2;
  double worst = 0.0;
  for (std::size_t c = 0; c < N; ++c) {
    const double step = (c % 2 == 0) ? 1.0 : 1e-6;  // 1 Pa in p, 1e-6 in S_w
    auto xp = x, xm = x;
    xp[c] += step, xm[c] -= step;
    const auto Rp = h.residual(xp, x0, dt);
    const auto Rm = h.residual(xm, x0, dt);
    double col_norm = 0.0;
    for (std::size_t r = 0; r < N; ++r) col_norm = std::max(col_norm, std::abs(Jd[r * N + c]));
    for (std::size_t r = 0; r < N; ++r) {
      const double fd = (Rp[r] - Rm[r]) / (2 * step);
      const double scale = std::max(col_norm, 1e-300);
      // The residual is only piecewise smooth: where a perturbation flips an upwind direction or
      // crosses a relative-permeability table node, the central difference averages two slopes. The
      // analytic derivative is then the one-sided one of its own side, so accept the closest of the
      // central and the two one-sided differences (a wrong derivative matches none of them).
      double err = std::abs(fd - Jd[r * N + c]) / scale;
      if (err > 1e-5)
        err = std::min({err, std::abs((Rp[r] - R0[r]) / step - Jd[r * N + c]) / scale,
                        std::abs((R0[r] - Rm[r]) / step - Jd[r * N + c]) / scale});
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-5) << "row " << r << " col " << c << ": analytic " << Jd[r * N + c] << " fd " << fd;
    }
  }
  std::printf("max relative column error (analytic vs central differences): %.2e\n", worst);
}

INSTANTIATE_TEST_SUITE_P(Relperm, JacobianVsFiniteDifferences, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("table") : std::string("corey"); });

// True-IMPES accumulation blocks (Model::accumulation_blocks), poisoned output first:
// - every entry against central differences of the fluid in place divided by dt (in place is the
//   sum over cells of V_p S_a b_a, so its derivative by one cell's unknown is that cell's
//   accumulation derivative);
// - against the Jacobian's diagonal blocks: the accumulation is the only part of them that scales
//   with 1/dt (fluxes and wells do not see dt), so J_ii(dt) - J_ii(2 dt) = C_i(dt) / 2 entry by entry,
//   which also pins the equation order, the sign and the scaling to the Jacobian rows.
class AccumulationBlocks : public ::testing::TestWithParam<bool> {};

TEST_P(AccumulationBlocks, MatchFiniteDifferencesAndTheJacobian)
{
  Harness h(test::small_setup(GetParam(), test::rng()()));
  const index_t n = h.model.num_cells();
  const auto x0 = test::random_state(n);
  const auto x = test::random_state(n);
  const double dt = 2.5 * units::day;
  ASSERT_TRUE(h.model.has_accumulation_blocks());
  Vector xv(h.exec, std::span<const double>(x));
  const std::vector<double> poison(4 * std::size_t(n), std::numeric_limits<double>::quiet_NaN());
  Vector C(h.exec, std::span<const double>(poison));
  h.model.accumulation_blocks(xv, dt, C);
  const auto c = C.to_host();

  double worst = 0.0;
  for (index_t i = 0; i < n; ++i)
    for (int v = 0; v < 2; ++v) {
      const double step = v == 0 ? 1e3 : 1e-4;  // Pa; S_w (the accumulation is linear in S_w)
      auto xp = x, xm = x;
      xp[2 * i + v] += step, xm[2 * i + v] -= step;
      const auto ip = h.model.in_place(Vector(h.exec, std::span<const double>(xp)));
      const auto im = h.model.in_place(Vector(h.exec, std::span<const double>(xm)));
      const double scale = std::max(std::abs(c[4 * i + v]), std::abs(c[4 * i + 2 + v]));
      ASSERT_GT(scale, 0.0) << "cell " << i << " unknown " << v;
      for (int a = 0; a < 2; ++a) {
        const double fd = (ip[a] - im[a]) / (2 * step * dt), an = c[4 * i + 2 * a + v];
        const double err = std::abs(fd - an) / scale;
        worst = std::max(worst, err);
        EXPECT_LE(err, 1e-6) << "cell " << i << " equation " << a << " unknown " << v << ": " << an << " fd " << fd;
      }
    }
  std::printf("accumulation blocks: largest relative error against central differences %.2e\n", worst);

  {
    Vector x0v(h.exec, std::span<const double>(x0));
    h.model.begin_step(x0v);
  }
  h.residual(x, x0, dt);
  const auto j1 = h.J.values().to_host();
  h.residual(x, x0, 2 * dt);
  const auto j2 = h.J.values().to_host();
  for (index_t i = 0; i < n; ++i) {
    const std::size_t k = std::size_t(h.model.pattern().find(i, i));
    double scale = 0.0;
    for (int e = 0; e < 4; ++e) scale = std::max({scale, std::abs(j1[4 * k + e]), std::abs(j2[4 * k + e])});
    for (int e = 0; e < 4; ++e)
      EXPECT_NEAR(2 * (j1[4 * k + e] - j2[4 * k + e]), c[4 * i + e], 1e-10 * scale) << "cell " << i << " entry " << e;
  }
}

INSTANTIATE_TEST_SUITE_P(Relperm, AccumulationBlocks, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("table") : std::string("corey"); });

TEST(Wells, RateControlMeetsTargetAndLimitSwitchesToBhp)
{
  auto setup = test::small_setup(false, 7);
  Harness h(setup);
  const index_t n = h.model.num_cells();
  const auto x = test::random_state(n);
  {
    Vector xv(h.exec, std::span<const double>(x));
    h.model.begin_step(xv);
  }
  h.residual(x, x, 1.0 * units::day);
  auto wr = h.model.well_results();
  EXPECT_NEAR(wr[0].rates[0], setup.wells[0].rate, 1e-12 * setup.wells[0].rate);
  EXPECT_NEAR(-(wr[1].rates[0] + wr[1].rates[1]), setup.wells[1].rate, 1e-12 * setup.wells[1].rate);
  EXPECT_GT(wr[0].bhp, 195 * units::bar);
  EXPECT_EQ(wr[2].bhp, setup.wells[2].bhp);
  EXPECT_TRUE(wr[2].at_bhp);

  // An injector limit just below the BHP it needs: it must switch to BHP control at the limit
  // and inject somewhat less than the target.
  setup.wells[0].bhp = wr[0].bhp - 0.05 * units::bar;
  Harness h2(setup);
  {
    Vector xv(h2.exec, std::span<const double>(x));
    h2.model.begin_step(xv);
  }
  h2.residual(x, x, 1.0 * units::day);
  wr = h2.model.well_results();
  EXPECT_TRUE(wr[0].at_bhp);
  EXPECT_EQ(wr[0].bhp, setup.wells[0].bhp);
  EXPECT_LT(wr[0].rates[0], setup.wells[0].rate);
  EXPECT_GT(wr[0].rates[0], 0.5 * setup.wells[0].rate);
}

TEST(Conservation, FluxesCancelInAClosedDomain)
{
  auto setup = test::small_setup(true, 11);
  setup.wells.clear();
  Harness h(setup);
  const index_t n = h.model.num_cells();
  const auto x0 = test::random_state(n), x = test::random_state(n);
  const double dt = 2.0 * units::day;
  const auto R = h.residual(x, x0, dt);
  Vector xv(h.exec, std::span<const double>(x)), x0v(h.exec, std::span<const double>(x0));
  const auto m1 = h.model.in_place(xv), m0 = h.model.in_place(x0v);
  double sum[2] = {0, 0}, scale[2] = {0, 0};
  for (index_t i = 0; i < n; ++i)
    for (int a = 0; a < 2; ++a) sum[a] += R[2 * i + a], scale[a] += std::abs(R[2 * i + a]);
  for (int a = 0; a < 2; ++a) EXPECT_NEAR(sum[a], (m1[a] - m0[a]) / dt, 1e-12 * scale[a]) << "phase " << a;
}

TEST(InitialState, HydrostaticOilPressure)
{
  auto setup = test::small_setup(false, 3);
  Harness h(setup);
  InitialSpec init;
  init.hydrostatic = true;
  init.pressure = 200 * units::bar;
  init.datum_depth = 1500.0;
  init.sw = 0.15;
  const auto x = h.model.initial_state(init);
  // Independent check: forward Euler with 1e5 steps per layer of dp/dz = rho_o(p) g.
  const auto& P = h.model.host_params();
  auto integrate = [&](double depth) {
    double p = init.pressure;
    const int steps = 100000;
    const double dz = (depth - init.datum_depth) / steps;
    for (int k = 0; k < steps; ++k) p += dz * P.oil.surface_density * inv_fvf(P.oil, p) * units::standard_gravity;
    return p;
  };
  for (int k = 0; k < 3; ++k) {
    const index_t a = h.grid.active_index(h.grid.global_index(0, 0, k));
    EXPECT_NEAR(x[2 * a], integrate(h.grid.layer_depth(k)), 1e-3) << "layer " << k;
  }
  EXPECT_EQ(x[1], 0.15);
}

TEST(LognormalField, ReproducibleWithTheRequestedStatistics)
{
  const auto a = lognormal_field(17, 13, 7, 3.0, 0.7, 3.0, 42);
  const auto b = lognormal_field(17, 13, 7, 3.0, 0.7, 3.0, 42);
  const auto c = lognormal_field(17, 13, 7, 3.0, 0.7, 3.0, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double m = 0, s = 0;
  for (double v : a) m += std::log(v);
  m /= a.size();
  for (double v : a) s += (std::log(v) - m) * (std::log(v) - m);
  s = std::sqrt(s / (a.size() - 1));
  EXPECT_NEAR(m, 3.0, 1e-12);
  EXPECT_NEAR(s, 0.7, 1e-12);
  // Correlated: neighbours along x are much more alike than independent draws.
  double num = 0, den = 0;
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if ((i + 1) % 17 != 0) num += (std::log(a[i]) - m) * (std::log(a[i + 1]) - m), den += (std::log(a[i]) - m) * (std::log(a[i]) - m);
  EXPECT_GT(num / den, 0.5);
}

// The field in halves (standard_normal_field, then exp(mean + std g)) is the field, bit for bit, and neither
// half depends on the OpenMP thread count (the noise is drawn by index, lines are smoothed independently,
// the mean and variance are summed in index order); odd cell counts (an unused last sine) included.
TEST(LognormalField, HalvesAndThreadCountGiveTheSameValues)
{
  const int before = omp_get_max_threads();
  for (const auto [nx, ny, nz] : {std::array{17, 13, 7}, std::array{31, 1, 1}, std::array{9, 8, 5}}) {
    SCOPED_TRACE(fmt::format("{}x{}x{}", nx, ny, nz));
    omp_set_num_threads(1);
    const auto one = standard_normal_field(nx, ny, nz, 5.0, 4242);
    const auto field_one = lognormal_field(nx, ny, nz, 1.5, 0.8, 5.0, 4242);
    omp_set_num_threads(3);
    EXPECT_EQ(standard_normal_field(nx, ny, nz, 5.0, 4242), one);
    EXPECT_EQ(lognormal_field(nx, ny, nz, 1.5, 0.8, 5.0, 4242), field_one);
    EXPECT_EQ(lognormal_field(one, 1.5, 0.8), field_one);
    // The same noise under another mean and spread: the fields differ by the map exp(m + s g) alone.
    const auto other = lognormal_field(nx, ny, nz, -1.0, 0.3, 5.0, 4242);
    for (std::size_t c = 0; c < one.size(); ++c) ASSERT_EQ(other[c], std::exp(-1.0 + 0.3 * one[c])) << c;
  }
  omp_set_num_threads(before);
}

TEST(LinearSolve, FirstNewtonStepFromConnateWaterState)
{
  // At S_w = S_wc every water equation but the injector's decouples (k_rw = k_rw' = 0), so
  // BiCGSTAB's shadow residual (the initial residual, nonzero only at the injector) becomes
  // orthogonal to later residuals: the solver must restart, not report a breakdown.
  auto setup = test::small_setup(false, 13);
  const int n = 9;  // 1D, one completion per well, as the Buckley-Leverett deck
  setup.grid.nx = n, setup.grid.ny = 1, setup.grid.nz = 1;
  setup.grid.dx.assign(n, 3.0), setup.grid.dy = {10.0}, setup.grid.dz = {10.0};
  setup.rock.porosity.assign(n, 0.2);
  setup.rock.kx.assign(n, 100 * units::millidarcy);
  setup.rock.ky = setup.rock.kz = setup.rock.kx;
  setup.wells.resize(2);
  setup.wells[0].k_bottom = 0;
  setup.wells[1].i = n - 1, setup.wells[1].j = 0, setup.wells[1].k_bottom = 0;
  setup.wells[1].control = WellControlMode::bhp, setup.wells[1].bhp = 200 * units::bar;
  Harness h(setup);
  InitialSpec init;
  init.pressure = 200 * units::bar;
  init.sw = setup.fluid.relperm.swc;
  const auto x0 = h.model.initial_state(init);
  Vector x0v(h.exec, std::span<const double>(x0));
  h.model.begin_step(x0v);
  h.residual(x0, x0, 1.0 * units::day);
  for (auto method : {KrylovMethod::bicgstab, KrylovMethod::gmres}) {
    BlockJacobiPreconditioner M(h.exec);
    ASSERT_TRUE(M.setup(h.J).ok);
    Vector dx(h.exec, h.R.size());
    fill(dx, 0.0);
    KrylovSolver solver(h.exec, {method, 1e-8, 0.0, 500, 30});
    const auto st = solver.solve(h.J, M, h.R, dx);
    EXPECT_TRUE(st.converged) << to_string(st.reason) << " after " << st.iterations;
  }
}

// Model::set_block_storage: the blocks, moved, written bit for bit where the map sends them (a distributed run's
// layout and a random one), rate-controlled wells' coupling blocks included; bad maps refused.
TEST(Assembly, MovedBlocksAreWrittenWhereTheStorageMapSendsThem)
{
  auto setup = test::small_setup(true, test::rng()());
  test::enlarge_grid(setup, 13, 9, 5, 17);
  const ExecPtr cpu = Executor::create_cpu();
  const physics::Grid grid(setup.grid, setup.rock);
  auto make = [&] { return std::make_unique<OilWaterModel>(cpu, grid, setup.rock, setup.fluid, setup.wells, true); };
  const index_t n = grid.num_active();
  test::expect_moved_blocks_identical(cpu, make, test::random_state(n), test::random_state(n), 2.0 * units::day);
}
