// Result files: round trip through the writer and reader (fields, steps, wells, /newton and
// /statistics) for the oil_water model and for a multicomponent-like test double, atomic commit
// (nothing under the final name before commit, no temporary left after an abandoned run), clear
// errors for missing, foreign, truncated and inconsistent files and for unknown layout versions;
// version 1 and 2 files (the stored baselines) stay readable. Layout version 4 (issue 28): every
// counter, index and flag int64, /restart's times in days beside their exact seconds, per-cell and
// per-well series [rows][1] on a one-cell grid and for one well; version 3 files (the stored
// baselines, and run results rewritten as version 3 wrote them) read into the same Results.
#include "miniapp/io/results.hpp"
#include "miniapp/io/test/fake_model.hpp"
#include "miniapp/io/test/layout3_file.hpp"
#include "miniapp/io/test/one_cell_deck.hpp"
#include "physics/test/model_fixture.hpp"
#include "physics/units.hpp"
#include "verification/run_helpers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <unistd.h>

using namespace blockres;

namespace {

std::filesystem::path tmpdir()
{
  auto d = std::filesystem::temp_directory_path() / ("blockres-results-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

struct Fixture {
  test::ModelSetup s = test::small_setup(false, 1);
  RunConfig cfg;
  physics::Grid grid{s.grid, s.rock};
  physics::OilWaterModel model{Executor::create_cpu(), grid, s.rock, s.fluid, s.wells, true};
  Fixture()
  {
    cfg.deck_text = "# deck text\n[grid]\nnx = 5\n";
    cfg.resolved_toml = "[grid]\nnx = 5\n";
    cfg.rock = s.rock;
    cfg.grid = s.grid;
    cfg.deck_path = "some/deck.toml";
  }
};

}  // namespace

TEST(Results, RoundTripAndAtomicCommit)
{
  Fixture f;
  const auto path = tmpdir() / "round_trip.h5";
  std::filesystem::remove(path);
  const index_t n = f.model.num_cells();
  const auto x0 = test::random_state(n), x1 = test::random_state(n);
  {
    ResultsWriter w(path, f.cfg, {"cpu", "test device", "blockres run x"}, f.grid, f.model, {1.5, 2.5});
    w.write_report(0.0, x0);
    StepRecord st;
    st.time = 86400.0 * 2, st.dt = 86400.0 * 2, st.newton_iterations = 3, st.linear_iterations = 17, st.cuts = 1;
    st.norms.cnv = {1e-4, 2e-4}, st.norms.mb = {1e-8, 2e-8};
    st.in_place = {1.25, 2.75};
    st.wells = {{250e5, {100.0 / 86400, 0.0}, false},
                {150e5, {-40.0 / 86400, -60.0 / 86400}, true},
                {190e5, {0, -1.0 / 86400}, true}};
    w.write_step(st);
    w.write_report(st.time, x1);
    w.write_newton({1, 0, 0, 10, 0.1, 0.08, true, SolveReason::converged});
    w.write_newton({1, 0, 1, 7, 0.05, 0.04, true, SolveReason::converged, 0.25, 0.5, 1.5, 0.125});
    w.write_newton({1, 1, 0, 500, 1e-4, 0.5, false, SolveReason::max_iterations});
    EXPECT_FALSE(std::filesystem::exists(path)) << "the final file must not exist before commit";
    EXPECT_TRUE(std::filesystem::exists(path.string() + ".tmp"));
    RunStatistics st1;
    st1.steps = 1, st1.newton_iterations = 3, st1.linear_iterations = 517, st1.max_linear_iterations = 500;
    st1.wall_seconds = 0.5, st1.assembly_seconds = 0.1, st1.linear_setup_seconds = 0.1, st1.linear_solve_seconds = 0.2;
    st1.spmv_seconds = 0.05, st1.precond_apply_seconds = 0.04, st1.orthogonalization_seconds = 0.03;
    st1.linear_other_seconds = 0.08;
    st1.linear_method = "fgmres", st1.preconditioner = "block_jacobi(lu, scalar)", st1.forcing = "eisenstat_walker";
    w.commit(st1);
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  {
    // Each /newton row's wall-clock split (issue 30 item 4): NaN where the record had none.
    const h5::File file = h5::File::open_read(path);
    const auto col = [&](const char* name) { return h5::read_doubles(file.id(), std::string("newton/") + name).values; };
    for (const char* name : {"assembly_seconds", "setup_seconds", "solve_seconds", "wait_seconds"}) {
      const auto v = col(name);
      ASSERT_EQ(v.size(), 3u) << name;
      EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[2])) << name;
    }
    EXPECT_EQ(col("assembly_seconds")[1], 0.25);
    EXPECT_EQ(col("setup_seconds")[1], 0.5);
    EXPECT_EQ(col("solve_seconds")[1], 1.5);
    EXPECT_EQ(col("wait_seconds")[1], 0.125);
    EXPECT_EQ(h5::read_string_attribute(h5::Id(H5Dopen2(file.id(), "newton/solve_seconds", H5P_DEFAULT)), "units"), "s");
  }
  const Results r = read_results(path);
  EXPECT_EQ(r.layout_version, results_layout_version);
  EXPECT_EQ(r.backend, "cpu");
  EXPECT_EQ(r.device, "test device");
  EXPECT_EQ(r.deck_text, f.cfg.deck_text);
  EXPECT_EQ(r.resolved_deck, f.cfg.resolved_toml);
  EXPECT_EQ(r.model, "oil_water");
  EXPECT_EQ(r.block_size, 2);
  EXPECT_EQ(r.unknown_names, (std::vector<std::string>{"p", "sw"}));
  EXPECT_EQ(r.nx, 5);
  EXPECT_EQ(r.report_times, (std::vector<double>{0.0, 2.0}));
  // The fields in the file are the model's with in_results: so (VTK only) is not among them.
  ASSERT_EQ(r.cell_fields.size(), 2u);
  EXPECT_EQ(r.cell_fields[0].name, "pressure");
  EXPECT_EQ(r.cell_fields[0].unit, "bar");
  EXPECT_EQ(r.cell_fields[1].name, "sw");
  EXPECT_FALSE(r.has_cell_field("so"));
  const auto& p = r.cell_field("pressure").rows;
  const auto& sw = r.cell_field("sw").rows;
  ASSERT_EQ(p.size(), 2u);
  // Field values land on the full grid at their global index, in bar; inactive cells are NaN.
  for (index_t a = 0; a < n; ++a) {
    const auto g = f.grid.global_of_active(a);
    EXPECT_DOUBLE_EQ(p[1][g], x1[2 * a] / 1e5);
    EXPECT_DOUBLE_EQ(sw[0][g], x0[2 * a + 1]);
  }
  for (index_t g = 0; g < f.grid.num_cells(); ++g) {
    if (f.grid.active_index(g) < 0) {
      EXPECT_TRUE(std::isnan(p[0][g]));
    }
  }
  EXPECT_EQ(r.step_dt, (std::vector<double>{2.0}));
  EXPECT_EQ(r.linear_iterations, (std::vector<double>{17.0}));
  EXPECT_EQ(r.cuts, (std::vector<double>{1.0}));
  EXPECT_EQ(r.equation_names, (std::vector<std::string>{"water", "oil"}));
  ASSERT_EQ(r.cnv.size(), 2u);
  EXPECT_EQ(r.cnv[1].values, (std::vector<double>{2e-4}));
  EXPECT_EQ(r.mb[0].values, (std::vector<double>{1e-8}));
  EXPECT_EQ(r.in_place_series("water_in_place").initial, 1.5);
  EXPECT_EQ(r.in_place_series("oil_in_place").values, (std::vector<double>{2.75}));
  EXPECT_EQ(r.in_place_series("oil_in_place").unit, "surface m3");
  EXPECT_EQ(r.well_names, (std::vector<std::string>{"INJ", "PROD", "P2"}));
  EXPECT_EQ(r.well_types, (std::vector<std::string>{"injector", "producer", "producer"}));
  EXPECT_EQ(r.well_controls, (std::vector<std::string>{"rate", "rate", "bhp"}));
  ASSERT_EQ(r.well_bhp.size(), 1u);
  EXPECT_DOUBLE_EQ(r.well_bhp[0][0], 250.0);
  EXPECT_EQ(r.well_at_bhp[0], (std::vector<double>{0, 1, 1}));
  EXPECT_NEAR(r.well_rate("water_rate").rows[0][0], 100.0, 1e-12);
  EXPECT_NEAR(r.well_rate("oil_rate").rows[0][1], -60.0, 1e-12);
  EXPECT_EQ(r.well_rate("oil_rate").unit, "surface m3/day");
  EXPECT_THROW(r.well_rate("gas_rate"), std::out_of_range);

  // The oil_water datasets keep their version 2 names and values: read as a version 2 file (the
  // fixed names, no lists), the file gives the same numbers.
  {
    h5::Id fid(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    ASSERT_GE(fid.get(), 0);
    ASSERT_GE(H5Adelete(fid, "layout_version"), 0);
    h5::write_attribute(fid, "layout_version", std::int64_t(2));
  }
  const Results old = read_results(path);
  EXPECT_EQ(old.layout_version, 2);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(old.cell_fields[k].name, r.cell_fields[k].name);
    EXPECT_EQ(old.cell_fields[k].unit, r.cell_fields[k].unit);
    for (std::size_t row = 0; row < 2; ++row)
      for (std::size_t c = 0; c < p[row].size(); ++c) {
        const double a = old.cell_fields[k].rows[row][c], b = r.cell_fields[k].rows[row][c];
        EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b)));
      }
    EXPECT_EQ(old.in_place[k].name, r.in_place[k].name);
    EXPECT_EQ(old.in_place[k].values, r.in_place[k].values);
    EXPECT_EQ(old.in_place[k].initial, r.in_place[k].initial);
    EXPECT_EQ(old.well_rates[k].name, r.well_rates[k].name);
    EXPECT_EQ(old.well_rates[k].unit, r.well_rates[k].unit);
    EXPECT_EQ(old.well_rates[k].rows, r.well_rates[k].rows);
    EXPECT_EQ(old.cnv[k].values, r.cnv[k].values);
    EXPECT_EQ(old.mb[k].values, r.mb[k].values);
  }

  EXPECT_EQ(r.newton_step, (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(r.newton_attempt, (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(r.newton_iteration, (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(r.newton_linear_iterations, (std::vector<double>{10, 7, 500}));
  EXPECT_EQ(r.newton_forcing, (std::vector<double>{0.1, 0.05, 1e-4}));
  EXPECT_EQ(r.newton_linear_reduction, (std::vector<double>{0.08, 0.04, 0.5}));
  EXPECT_EQ(r.newton_linear_converged, (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(r.newton_linear_reason, (std::vector<double>{0, 0, 1}));  // max_iterations is code 1
  const RunStatistics& st = r.statistics;
  EXPECT_EQ(st.steps, 1);
  EXPECT_EQ(st.newton_iterations, 3);
  EXPECT_EQ(st.linear_iterations, 517);
  EXPECT_EQ(st.max_linear_iterations, 500);
  EXPECT_EQ(st.linear_solve_seconds, 0.2);
  EXPECT_EQ(st.spmv_seconds, 0.05);
  EXPECT_EQ(st.precond_apply_seconds, 0.04);
  EXPECT_EQ(st.orthogonalization_seconds, 0.03);
  EXPECT_EQ(st.linear_other_seconds, 0.08);
  EXPECT_EQ(st.linear_method, "fgmres");
  EXPECT_EQ(st.preconditioner, "block_jacobi(lu, scalar)");
  EXPECT_EQ(st.forcing, "eisenstat_walker");

  // Every /newton dataset says its units, and the reason codes are spelled out in the file.
  const h5::File file = h5::File::open_read(path);
  for (const char* name : {"step", "attempt", "iteration", "linear_iterations", "forcing", "linear_reduction",
                           "linear_converged", "linear_reason"}) {
    h5::Id ds(H5Dopen2(file.id(), (std::string("newton/") + name).c_str(), H5P_DEFAULT));
    ASSERT_GE(ds.get(), 0) << name;
    EXPECT_EQ(h5::read_string_attribute(ds, "units"), "1") << name;
  }
  h5::Id reason(H5Dopen2(file.id(), "newton/linear_reason", H5P_DEFAULT));
  EXPECT_EQ(h5::read_string_attribute(reason, "codes"), "0 converged, 1 max_iterations, 2 breakdown, 3 not_finite");
}

namespace {

// Rewrites the layout_version attribute of a result file in place.
void set_layout_version(const std::filesystem::path& p, std::int64_t v)
{
  h5::Id f(H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
  ASSERT_GE(f.get(), 0);
  ASSERT_GE(H5Adelete(f, "layout_version"), 0);
  h5::write_attribute(f, "layout_version", v);
}

}  // namespace

// Version 1 files (before /newton) are still read, without the version 2 additions; versions
// this build does not know are rejected with a message that names the version. (An oil_water
// version 3 file is a version 2 file plus lists, so relabelled it reads as one; read_results reads a
// version 4 file's int64 series and 2-D one-column series as it reads version 3's float64 and 1-D
// ones, so the relabelled version 4 file reads as one of version 3.)
// StaticFields::later (the run's background writer): the constructor leaves /grid/depth, /grid/active
// and /static out, write_static() adds them, the same values as a writer that wrote them at once; a
// checkpoint or commit before write_static() is a logic error, and so is a second write_static().
TEST(Results, DeferredStaticFieldsMatchTheImmediateOnes)
{
  Fixture f;
  const index_t n = f.model.num_cells();
  const auto x0 = test::random_state(n);
  const auto now = tmpdir() / "static_now.h5", later = tmpdir() / "static_later.h5";
  std::filesystem::remove(now), std::filesystem::remove(later);
  {
    ResultsWriter w(now, f.cfg, {"cpu", "d", "c", 1, "t", "none"}, f.grid, f.model, {1.5, 2.5});
    EXPECT_THROW(w.write_static(), std::logic_error);  // written by the constructor already
    w.write_report(0.0, x0);
    w.commit(RunStatistics{});
  }
  {
    ResultsWriter w(later, f.cfg, {"cpu", "d", "c", 1, "t", "none"}, f.grid, f.model, {1.5, 2.5}, StaticFields::later);
    w.write_report(0.0, x0);
    EXPECT_THROW(w.commit(RunStatistics{}), std::logic_error);
    EXPECT_THROW(w.write_checkpoint(tmpdir() / "static_later.checkpoint.h5", RunStatistics{}), std::logic_error);
    w.write_static();
    EXPECT_THROW(w.write_static(), std::logic_error);
    w.commit(RunStatistics{});
  }
  const h5::File a = h5::File::open_read(now), b = h5::File::open_read(later);
  for (const char* name : {"grid/depth", "static/porosity", "static/permx", "static/permy", "static/permz",
                           "static/pore_volume"}) {
    SCOPED_TRACE(name);
    const auto va = h5::read_doubles(a.id(), name).values, vb = h5::read_doubles(b.id(), name).values;
    ASSERT_EQ(va.size(), std::size_t(f.grid.num_cells()));
    EXPECT_EQ(va, vb);
  }
  const Results r = read_results(later);  // a complete result file
  EXPECT_EQ(r.layout_version, results_layout_version);
}

TEST(Results, LayoutVersions)
{
  Fixture f;
  const auto dir = tmpdir();
  const auto path = dir / "versions.h5";
  {
    ResultsWriter w(path, f.cfg, {"cpu", "d", "c"}, f.grid, f.model, {1, 1});
    w.write_report(0.0, test::random_state(f.model.num_cells()));
    w.write_newton({1, 0, 0, 4, 0.1, 0.05, true, SolveReason::converged});
    RunStatistics st;
    st.newton_iterations = 1, st.linear_iterations = 4, st.linear_method = "gmres";
    w.commit(st);
  }
  const Results v4 = read_results(path);
  EXPECT_EQ(v4.layout_version, 4);
  EXPECT_EQ(v4.newton_linear_iterations, (std::vector<double>{4}));
  EXPECT_EQ(v4.statistics.linear_method, "gmres");

  set_layout_version(path, 3);
  const Results v3 = read_results(path);
  EXPECT_EQ(v3.layout_version, 3);
  EXPECT_EQ(v3.newton_linear_iterations, (std::vector<double>{4}));
  EXPECT_EQ(v3.statistics.linear_method, "gmres");

  set_layout_version(path, 2);
  const Results v2 = read_results(path);
  EXPECT_EQ(v2.layout_version, 2);
  EXPECT_EQ(v2.newton_linear_iterations, (std::vector<double>{4}));
  EXPECT_EQ(v2.statistics.linear_method, "gmres");

  set_layout_version(path, 1);
  const Results v1 = read_results(path);
  EXPECT_EQ(v1.layout_version, 1);
  EXPECT_TRUE(v1.newton_step.empty());
  EXPECT_EQ(v1.statistics.linear_iterations, 4);
  EXPECT_EQ(v1.statistics.linear_method, "");

  for (const std::int64_t bad : {std::int64_t(0), results_layout_version + 1}) {
    set_layout_version(path, bad);
    try {
      read_results(path);
      ADD_FAILURE() << "no error for layout version " << bad;
    } catch (const h5::Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("layout version " + std::to_string(bad)), std::string::npos) << msg;
      EXPECT_NE(msg.find("does not know"), std::string::npos) << msg;
    }
  }
}

TEST(Results, AbandonedWriterLeavesNothing)
{
  Fixture f;
  const auto path = tmpdir() / "abandoned.h5";
  std::filesystem::remove(path);
  {
    ResultsWriter w(path, f.cfg, {"cpu", "d", "c"}, f.grid, f.model, {1, 1});
    w.write_report(0.0, test::random_state(f.model.num_cells()));
  }  // no commit: as when the run fails
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}

TEST(Results, ClearErrorsForBadFiles)
{
  const auto dir = tmpdir();
  auto expect_error = [](const std::filesystem::path& p, const std::string& needle) {
    try {
      read_results(p);
      ADD_FAILURE() << "no error for " << p;
    } catch (const h5::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(dir / "missing.h5", "does not exist");
  {
    std::ofstream(dir / "text.h5") << "not hdf5 at all\n";
  }
  expect_error(dir / "text.h5", "not an HDF5 file");

  // A truncated copy of a valid result file.
  Fixture f;
  const auto good = dir / "good.h5";
  {
    ResultsWriter w(good, f.cfg, {"cpu", "d", "c"}, f.grid, f.model, {1, 1});
    w.write_report(0.0, test::random_state(f.model.num_cells()));
    w.commit({});
  }
  const auto size = std::filesystem::file_size(good);
  std::filesystem::copy_file(good, dir / "truncated.h5", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(dir / "truncated.h5", size / 2);
  EXPECT_THROW(read_results(dir / "truncated.h5"), h5::Error);

  // An HDF5 file that is not a blockres result.
  {
    auto other = h5::File::create(dir / "other.h5");
    h5::write_dataset(other.id(), "x", std::vector<double>{1, 2, 3});
    other.close();
  }
  expect_error(dir / "other.h5", "not a blockres result file");
}

namespace {

// A small grid with one inactive cell for the test double.
struct FakeFixture {
  physics::GridSpec gs;
  physics::RockSpec rock;
  RunConfig cfg;
  std::optional<physics::Grid> grid;
  std::optional<test::FakeModel> model;
  FakeFixture()
  {
    gs.nx = 3, gs.ny = 2, gs.nz = 2;
    gs.dx = {1, 2, 3}, gs.dy = {1, 1}, gs.dz = {1, 2};
    rock.porosity.assign(12, 0.2);
    rock.porosity[4] = 0.0;
    rock.kx = rock.ky = rock.kz = std::vector<double>(12, 100 * units::millidarcy);
    grid.emplace(gs, rock);
    model.emplace(*grid);
    cfg.model = "ignored: the file names the model's own type";
    cfg.grid = gs, cfg.rock = rock;
    cfg.deck_text = cfg.resolved_toml = "[model]\ntype = \"fake\"\n";
  }
};

// A complete file of the test double: reports at 0 and 1 day, two steps.
void write_fake(const std::filesystem::path& path, const FakeFixture& f, const std::vector<double>& x0,
                const std::vector<double>& x1)
{
  ResultsWriter w(path, f.cfg, {"cpu", "d", "c"}, *f.grid, *f.model, {10.0, 20.0, 30.0});
  w.write_report(0.0, x0);
  for (int s = 1; s <= 2; ++s) {
    StepRecord st;
    st.time = 43200.0 * s, st.dt = 43200.0, st.newton_iterations = s, st.linear_iterations = 5 * s;
    st.norms.cnv = {1e-3 * s, 2e-3 * s, 3e-3 * s}, st.norms.mb = {1e-9, 2e-9, 3e-9};
    st.in_place = {10.0 + s, 20.0 + s, 30.0 - 2 * s};
    st.wells = {{300e5, {1.0 / 86400, 2.0 / 86400, 0.0}, false}, {100e5, {-0.5 / 86400, -s / 86400.0, -1.0}, true}};
    w.write_step(st);
  }
  w.write_report(86400.0, x1);
  w.commit({});
}

}  // namespace

// A model the result code knows nothing of: every cell field with in_results, the per-equation
// norms, the quantities in place and the well rates come back with their names, units and groups.
TEST(Results, GenericModelRoundTrip)
{
  FakeFixture f;
  const auto path = tmpdir() / "fake.h5";
  auto x0 = f.model->initial_state(), x1 = x0;
  for (auto& v : x1) v *= 1.01;
  write_fake(path, f, x0, x1);
  const Results r = read_results(path);
  EXPECT_EQ(r.layout_version, results_layout_version);
  EXPECT_EQ(r.model, "fake_multicomponent");
  EXPECT_EQ(r.block_size, 3);
  EXPECT_EQ(r.unknown_names, (std::vector<std::string>{"p", "x_N2", "x_CO2"}));
  EXPECT_EQ(r.equation_names, (std::vector<std::string>{"N2", "CO2", "C1"}));

  std::vector<std::string> names, groups, units_;
  for (const auto& s : r.cell_fields) names.push_back(s.name), groups.push_back(s.group), units_.push_back(s.unit);
  EXPECT_EQ(names, (std::vector<std::string>{"pressure", "density", "x_N2", "x_CO2", "x_C1"}));  // no x_sum
  EXPECT_EQ(groups, (std::vector<std::string>{"pressure", "density", "mass_fraction", "mass_fraction", "mass_fraction"}));
  EXPECT_EQ(units_, (std::vector<std::string>{"bar", "kg/m3", "1", "1", "1"}));
  EXPECT_EQ(r.cell_field("x_CO2").description, "mass fraction of CO2");
  // Values: the model's, on the full grid, NaN in the inactive cell.
  const auto v0 = f.model->cell_field_values(x0), v1 = f.model->cell_field_values(x1);
  for (std::size_t k = 0; k < 5; ++k) {
    ASSERT_EQ(r.cell_fields[k].rows.size(), 2u);
    for (index_t a = 0; a < f.grid->num_active(); ++a) {
      EXPECT_EQ(r.cell_fields[k].rows[0][f.grid->global_of_active(a)], v0[k][a]) << names[k];
      EXPECT_EQ(r.cell_fields[k].rows[1][f.grid->global_of_active(a)], v1[k][a]) << names[k];
    }
    EXPECT_TRUE(std::isnan(r.cell_fields[k].rows[1][4])) << names[k];
  }
  EXPECT_THROW(r.cell_field("x_sum"), std::out_of_range);
  try {
    r.cell_field("sw");
    ADD_FAILURE() << "no error for a field the file does not have";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("no cell field 'sw' (cell field: pressure, density, x_N2"), std::string::npos)
        << e.what();
  }

  EXPECT_EQ(r.step_time, (std::vector<double>{0.5, 1.0}));
  EXPECT_EQ(r.newton_iterations, (std::vector<double>{1, 2}));
  ASSERT_EQ(r.cnv.size(), 3u);
  EXPECT_EQ(r.cnv[2].name, "C1");
  EXPECT_EQ(r.cnv[2].values, (std::vector<double>{3e-3, 6e-3}));
  EXPECT_EQ(r.mb[1].values, (std::vector<double>{2e-9, 2e-9}));
  ASSERT_EQ(r.in_place.size(), 3u);
  EXPECT_EQ(r.in_place[0].name, "N2_in_place");
  EXPECT_EQ(r.in_place[0].unit, "kg");
  EXPECT_EQ(r.in_place[0].group, "mass_in_place");
  EXPECT_EQ(r.in_place[0].initial, 10.0);
  EXPECT_EQ(r.in_place_series("C1_in_place").values, (std::vector<double>{28.0, 26.0}));

  EXPECT_EQ(r.well_names, (std::vector<std::string>{"INJ", "PROD"}));
  EXPECT_EQ(r.well_types, (std::vector<std::string>{"injector", "producer"}));
  EXPECT_EQ(r.well_controls, (std::vector<std::string>{"rate", "bhp"}));
  ASSERT_EQ(r.well_rates.size(), 3u);
  EXPECT_EQ(r.well_rates[1].name, "CO2_rate");
  EXPECT_EQ(r.well_rates[1].unit, "kg/day");
  EXPECT_EQ(r.well_rates[1].group, "well_mass_rate");
  ASSERT_EQ(r.well_rates[1].rows.size(), 2u);
  EXPECT_DOUBLE_EQ(r.well_rates[1].rows[0][0], 2.0);   // SI * from_si
  EXPECT_DOUBLE_EQ(r.well_rates[1].rows[1][1], -2.0);
  EXPECT_DOUBLE_EQ(r.well_rates[2].rows[0][1], -86400.0);
  EXPECT_EQ(r.well_bhp[1], (std::vector<double>{300.0, 100.0}));
  EXPECT_EQ(r.well_at_bhp[0], (std::vector<double>{0.0, 1.0}));

  // The lists a reader without the model needs are in the file, as are the units and groups.
  const h5::File file = h5::File::open_read(path);
  EXPECT_EQ(h5::read_string_list(file.id(), "reports/fields"), names);
  EXPECT_EQ(h5::read_string_list(file.id(), "steps/equations"), r.equation_names);
  EXPECT_EQ(h5::read_string_list(file.id(), "steps/in_place"),
            (std::vector<std::string>{"N2_in_place", "CO2_in_place", "C1_in_place"}));
  EXPECT_EQ(h5::read_string_list(file.id(), "wells/rates"), (std::vector<std::string>{"N2_rate", "CO2_rate", "C1_rate"}));
  EXPECT_EQ(h5::read_string_list(file.id(), "unknowns"), r.unknown_names);
  EXPECT_EQ(h5::read_int_attribute(file.id(), "block_size"), 3);
  h5::Id ds(H5Dopen2(file.id(), "steps/cnv_CO2", H5P_DEFAULT));
  ASSERT_GE(ds.get(), 0);
  EXPECT_EQ(h5::read_string_attribute(ds, "units"), "1");
  h5::Id rate(H5Dopen2(file.id(), "wells/C1_rate", H5P_DEFAULT));
  EXPECT_EQ(h5::read_string_attribute(rate, "group"), "well_mass_rate");
  EXPECT_EQ(h5::read_string_attribute(rate, "sign"), "positive into the reservoir");
  h5::Id steps(H5Gopen2(file.id(), "steps", H5P_DEFAULT));
  EXPECT_EQ(h5::read_double_attribute(steps, "initial_CO2_in_place"), 20.0);
}

// A model whose lists do not fit the file is refused before anything is written; so is a step
// record of the wrong shape.
TEST(Results, WriterChecksTheModelsLists)
{
  FakeFixture f;
  const auto path = tmpdir() / "bad_lists.h5";
  EXPECT_THROW(ResultsWriter(path, f.cfg, {"cpu", "d", "c"}, *f.grid, *f.model, {1.0, 2.0}), std::invalid_argument);
  const test::FakeModel clash(*f.grid, {"A", "A"});  // x_A twice
  EXPECT_THROW(ResultsWriter(path, f.cfg, {"cpu", "d", "c"}, *f.grid, clash, {1.0, 2.0}), std::invalid_argument);
  const test::FakeModel slash(*f.grid, {"A/B", "C"});
  EXPECT_THROW(ResultsWriter(path, f.cfg, {"cpu", "d", "c"}, *f.grid, slash, {1.0, 2.0}), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));

  ResultsWriter w(path, f.cfg, {"cpu", "d", "c"}, *f.grid, *f.model, {1.0, 2.0, 3.0});
  StepRecord st;
  st.norms.cnv = st.norms.mb = {0, 0};  // 2 of 3 equations
  st.in_place = {1, 2, 3};
  st.wells = {{1e5, {0, 0, 0}, false}, {1e5, {0, 0, 0}, false}};
  EXPECT_THROW(w.write_step(st), std::invalid_argument);
  st.norms.cnv = st.norms.mb = {0, 0, 0};
  st.wells[1].rates = {0, 0};
  EXPECT_THROW(w.write_step(st), std::invalid_argument);
  EXPECT_THROW(w.write_report(0.0, std::vector<double>(5, 1.0)), std::invalid_argument);
}

// The stored baselines are layout version 2 (oil_water): they read into the generic structure
// with the oil_water names, units and groups.
TEST(Results, ReadsTheStoredVersion2Baselines)
{
  const Results r = read_results(std::filesystem::path(BLOCKRES_SOURCE_DIR) / "verification/baselines/buckley_leverett.h5");
  EXPECT_EQ(r.layout_version, 2);
  EXPECT_EQ(r.model, "oil_water");
  EXPECT_EQ(r.block_size, 2);
  ASSERT_EQ(r.cell_fields.size(), 2u);
  EXPECT_EQ(r.cell_fields[0].name, "pressure");
  EXPECT_EQ(r.cell_fields[0].unit, "bar");
  EXPECT_EQ(r.cell_fields[0].group, "pressure");
  EXPECT_EQ(r.cell_fields[1].name, "sw");
  EXPECT_EQ(r.cell_field("sw").rows.size(), r.report_times.size());
  EXPECT_EQ(r.cell_field("sw").rows[0].size(), std::size_t(r.nx) * r.ny * r.nz);
  EXPECT_EQ(r.equation_names, (std::vector<std::string>{"water", "oil"}));
  ASSERT_EQ(r.cnv.size(), 2u);
  EXPECT_EQ(r.cnv[0].values.size(), r.step_time.size());
  ASSERT_EQ(r.in_place.size(), 2u);
  EXPECT_EQ(r.in_place[0].name, "water_in_place");
  EXPECT_EQ(r.in_place[1].unit, "surface m3");
  EXPECT_GT(r.in_place[1].initial, 0.0);
  EXPECT_EQ(r.in_place[1].values.size(), r.step_time.size());
  ASSERT_EQ(r.well_rates.size(), 2u);
  EXPECT_EQ(r.well_rates[0].name, "water_rate");
  EXPECT_EQ(r.well_rates[1].name, "oil_rate");
  EXPECT_EQ(r.well_rates[1].unit, "surface m3/day");
  EXPECT_EQ(r.well_rate("water_rate").rows.size(), r.step_time.size());
  EXPECT_FALSE(r.well_names.empty());
}

// A version 3 file whose list names a dataset that is not there (edited by hand, or written by a
// broken tool) is an error naming the dataset and the list.
TEST(Results, MissingListedDatasetIsAClearError)
{
  FakeFixture f;
  const auto dir = tmpdir();
  const auto x = f.model->initial_state();
  for (const auto& [dataset, list] : std::vector<std::pair<std::string, std::string>>{
           {"reports/x_CO2", "reports/fields"},
           {"steps/C1_in_place", "steps/in_place"},
           {"steps/mb_N2", "steps/equations"},
           {"wells/N2_rate", "wells/rates"}}) {
    const auto path = dir / "missing_listed.h5";
    write_fake(path, f, x, x);
    {
      h5::Id fid(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
      ASSERT_GE(fid.get(), 0);
      ASSERT_GE(H5Ldelete(fid, dataset.c_str(), H5P_DEFAULT), 0) << dataset;
    }
    try {
      read_results(path);
      ADD_FAILURE() << "no error without " << dataset;
    } catch (const h5::Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("dataset '" + dataset + "' is listed in '" + list + "' but missing"), std::string::npos) << msg;
    }
  }
}

// Compressed datasets of many chunks (written chunk by chunk, deflated in parallel): 1-D doubles
// and int32 and the rows of a field Series, of sizes that are not a multiple of the chunk, read
// back bit for bit through HDF5's own filters, which the datasets declare (shuffle, deflate).
TEST(Results, CompressedChunksReadBack)
{
  const auto dir = std::filesystem::temp_directory_path() / ("blockres-h5-chunks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "chunks.h5";
  std::vector<double> d(200003), r0(150001), r1(150001);
  std::vector<std::int32_t> k(70001);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = std::exp(std::sin(0.37 * double(i))) * (i % 7 == 0 ? -1.0 : 1.0);
  for (std::size_t i = 0; i < r0.size(); ++i) r0[i] = 1e7 + 3.0 * double(i), r1[i] = std::cos(double(i));
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::int32_t>(i * 2654435761u % 1000003u) - 500000;
  {
    auto f = h5::File::create(path);
    h5::write_dataset(f.id(), "d", std::span<const double>(d));
    h5::write_dataset(f.id(), "k", std::span<const std::int32_t>(k));
    h5::Series s(f.id(), "rows", h5::Shape::rows, r0.size(), h5::Element::float64, 1);
    s.append(r0);
    s.append(r1);
    f.close();
  }
  auto f = h5::File::open_read(path);
  EXPECT_EQ(h5::read_doubles(f.id(), "d").values, d);
  const auto ki = h5::read_ints(f.id(), "k");
  ASSERT_EQ(ki.size(), k.size());
  for (std::size_t i = 0; i < k.size(); ++i) ASSERT_EQ(ki[i], k[i]) << i;
  const auto rows = h5::read_doubles(f.id(), "rows");
  ASSERT_EQ(rows.dims, (std::vector<hsize_t>{2, r0.size()}));
  EXPECT_TRUE(std::equal(r0.begin(), r0.end(), rows.values.begin()));
  EXPECT_TRUE(std::equal(r1.begin(), r1.end(), rows.values.begin() + std::ptrdiff_t(r0.size())));
  for (const char* name : {"d", "k", "rows"}) {  // the filters a reader needs are declared
    const hid_t ds = H5Dopen2(f.id(), name, H5P_DEFAULT);
    const hid_t plist = H5Dget_create_plist(ds);
    EXPECT_EQ(H5Pget_nfilters(plist), 2) << name;
    H5Pclose(plist);
    H5Dclose(ds);
  }
  f.close();
  EXPECT_LT(std::filesystem::file_size(path), (d.size() + r0.size() + r1.size()) * sizeof(double));
  std::filesystem::remove_all(dir);
}

// h5::Series::append_rows (a report's fields and state, compressed together) writes the datasets
// that appending row by row writes: compressed field rows of several chunks (one of more chunks
// than a compression batch holds), an uncompressed multi-row series and an int64 column, twice;
// a series listed twice and a row of the wrong size are clear errors.
TEST(H5Series, AppendRowsTogetherIsAppendingOneByOne)
{
  const auto dir = std::filesystem::temp_directory_path() / ("blockres-h5-rows-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<double> a(150001), b(70001), big((std::size_t(1) << 24) + 3), small(5), one{7.0};
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::exp(std::sin(0.37 * double(i)));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = -1e5 + 0.25 * double(i);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = 0.5 * double(i % 1000003);
  for (std::size_t i = 0; i < small.size(); ++i) small[i] = double(i) / 3.0;
  const auto write = [&](const std::filesystem::path& path, bool together) {
    auto f = h5::File::create(path);
    h5::Series sa(f.id(), "a", h5::Shape::rows, a.size(), h5::Element::float64, 1);
    h5::Series sb(f.id(), "b", h5::Shape::rows, b.size(), h5::Element::float64, 1);
    h5::Series sbig(f.id(), "big", h5::Shape::rows, big.size(), h5::Element::float64, 1);
    h5::Series ss(f.id(), "small", h5::Shape::rows, small.size());  // 64 rows per chunk: not written chunk by chunk
    h5::Series si(f.id(), "counts", h5::Shape::column, 1, h5::Element::int64);
    for (int rep = 0; rep < 2; ++rep) {
      if (together) {
        const std::vector<h5::Series*> series{&sa, &sb, &sbig, &ss, &si};
        const std::vector<std::span<const double>> rows{a, b, big, small, one};
        h5::Series::append_rows(series, rows);
      } else {
        sa.append(a), sb.append(b), sbig.append(big), ss.append(small), si.append(std::span<const double>(one));
      }
    }
    if (together) {
      const std::vector<h5::Series*> twice{&sa, &sa};
      const std::vector<std::span<const double>> rows{a, a};
      EXPECT_THROW(h5::Series::append_rows(twice, rows), h5::Error);
      const std::vector<h5::Series*> wrong{&sb};
      const std::vector<std::span<const double>> short_row{std::span<const double>(a).first(b.size() - 1)};
      EXPECT_THROW(h5::Series::append_rows(wrong, short_row), h5::Error);
      EXPECT_EQ(sa.rows(), 2u);
      EXPECT_EQ(sb.rows(), 2u);
    }
    f.close();
  };
  write(dir / "one_by_one.h5", false);
  write(dir / "together.h5", true);
  auto f1 = h5::File::open_read(dir / "one_by_one.h5");
  auto f2 = h5::File::open_read(dir / "together.h5");
  for (const char* name : {"a", "b", "big", "small"}) {
    const auto x = h5::read_doubles(f1.id(), name), y = h5::read_doubles(f2.id(), name);
    EXPECT_EQ(x.dims, y.dims) << name;
    EXPECT_TRUE(x.values == y.values) << name;  // bit for bit (no NaN here)
  }
  EXPECT_EQ(h5::read_doubles(f2.id(), "big").dims, (std::vector<hsize_t>{2, big.size()}));
  EXPECT_TRUE(std::equal(big.begin(), big.end(), h5::read_doubles(f2.id(), "big").values.begin() + std::ptrdiff_t(big.size())));
  EXPECT_EQ(h5::read_ints(f1.id(), "counts"), h5::read_ints(f2.id(), "counts"));
  EXPECT_EQ(h5::read_ints(f2.id(), "counts"), (std::vector<std::int64_t>{7, 7}));
  f1.close();
  f2.close();
  std::filesystem::remove_all(dir);
}

// ---- layout version 4 -------------------------------------------------------------------------

TEST(H5Series, Int64SeriesTakeIntegersOnly)
{
  const auto path = tmpdir() / "int64_series.h5";
  auto f = h5::File::create(path);
  h5::Series s(f.id(), "counts", h5::Shape::column, 1, h5::Element::int64);
  const double three = 3.0, half = 2.5, not_a_number = NAN;
  s.append(std::span<const double>(&three, 1));
  const std::int64_t big = (std::int64_t(1) << 60) + 1;  // not a double: the int64 overload keeps it exact
  s.append(std::span<const std::int64_t>(&big, 1));
  EXPECT_THROW(s.append(std::span<const double>(&half, 1)), h5::Error);
  EXPECT_THROW(s.append(std::span<const double>(&not_a_number, 1)), h5::Error);
  h5::Series d(f.id(), "values", h5::Shape::rows, 1);  // [rows][1]: two dimensions though one column
  EXPECT_THROW(d.append(std::span<const std::int64_t>(&big, 1)), h5::Error);
  d.append(std::span<const double>(&half, 1));
  EXPECT_THROW(h5::Series(f.id(), "bad", h5::Shape::column, 2), h5::Error);
  EXPECT_EQ(h5::read_ints(f.id(), "counts"), (std::vector<std::int64_t>{3, big}));
  const auto t = h5::dataset_type(f.id(), "counts");
  EXPECT_EQ(t.element_class, H5T_INTEGER);
  EXPECT_EQ(t.element_bytes, 8u);
  EXPECT_EQ(h5::dataset_type(f.id(), "values").dims, (std::vector<hsize_t>{1, 1}));
  f.close();
}

namespace {

// Every dataset of a file (path without the leading '/'), through the link API that HDF5 1.10 and
// 1.12 share.
std::vector<std::string> all_datasets(hid_t file)
{
  std::vector<std::string> out;
  const auto visit = [](hid_t loc, const char* name, const H5L_info_t*, void* data) -> herr_t {
    h5::Id obj(H5Oopen(loc, name, H5P_DEFAULT));
    if (H5Iget_type(obj) == H5I_DATASET) static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit, &out) < 0) throw h5::Error("H5Lvisit");
  return out;
}

H5T_class_t attribute_class(hid_t obj, const char* name, std::size_t* bytes = nullptr)
{
  if (H5Aexists(obj, name) <= 0) return H5T_NO_CLASS;
  h5::Id a(H5Aopen(obj, name, H5P_DEFAULT));
  h5::Id t(H5Aget_type(a));
  if (bytes) *bytes = H5Tget_size(t);
  return H5Tget_class(t);
}

std::string units_of(hid_t file, const std::string& dataset)
{
  h5::Id ds(H5Dopen2(file, dataset.c_str(), H5P_DEFAULT));
  return h5::read_string_attribute(ds, "units");
}

// The integer-valued datasets of layout version 4 (all int64); /grid/active is int32 as in every version.
const std::set<std::string> int64_datasets = {
    "steps/newton_iterations", "steps/linear_iterations", "steps/cuts", "wells/at_bhp",
    "newton/step", "newton/attempt", "newton/iteration", "newton/linear_iterations", "newton/linear_converged",
    "newton/linear_reason", "well_switches/step", "well_switches/attempt", "well_switches/iteration",
    "well_switches/well", "well_switches/to_bhp", "restart/steps", "restart/cuts", "restart/newton_iterations",
    "restart/linear_iterations", "restart/max_linear_iterations", "restart/newton_rows",
    "restart/cuts_without_progress"};

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

void expect_same_rows(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b,
                      const std::string& what)
{
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].size(), b[r].size()) << what << " row " << r;
    for (std::size_t c = 0; c < a[r].size(); ++c)
      EXPECT_TRUE(same_value(a[r][c], b[r][c])) << what << " [" << r << "][" << c << "]: " << a[r][c] << " vs " << b[r][c];
  }
}

void expect_same_values(const std::vector<double>& a, const std::vector<double>& b, const std::string& what)
{
  expect_same_rows({a}, {b}, what);
}

// Everything read_results gives, value for value (NaN equal to NaN), but the layout version.
void expect_same_results(const Results& a, const Results& b)
{
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.block_size, b.block_size);
  EXPECT_EQ(a.report_times, b.report_times);
  ASSERT_EQ(a.cell_fields.size(), b.cell_fields.size());
  for (std::size_t k = 0; k < a.cell_fields.size(); ++k) {
    EXPECT_EQ(a.cell_fields[k].name, b.cell_fields[k].name);
    EXPECT_EQ(a.cell_fields[k].unit, b.cell_fields[k].unit);
    expect_same_rows(a.cell_fields[k].rows, b.cell_fields[k].rows, "reports/" + a.cell_fields[k].name);
  }
  EXPECT_EQ(a.step_time, b.step_time);
  EXPECT_EQ(a.step_dt, b.step_dt);
  EXPECT_EQ(a.newton_iterations, b.newton_iterations);
  EXPECT_EQ(a.linear_iterations, b.linear_iterations);
  EXPECT_EQ(a.cuts, b.cuts);
  ASSERT_EQ(a.in_place.size(), b.in_place.size());
  for (std::size_t k = 0; k < a.in_place.size(); ++k) EXPECT_EQ(a.in_place[k].values, b.in_place[k].values);
  EXPECT_EQ(a.well_names, b.well_names);
  expect_same_rows(a.well_bhp, b.well_bhp, "wells/bhp");
  expect_same_rows(a.well_at_bhp, b.well_at_bhp, "wells/at_bhp");
  ASSERT_EQ(a.well_rates.size(), b.well_rates.size());
  for (std::size_t k = 0; k < a.well_rates.size(); ++k)
    expect_same_rows(a.well_rates[k].rows, b.well_rates[k].rows, "wells/" + a.well_rates[k].name);
  EXPECT_EQ(a.newton_step, b.newton_step);
  EXPECT_EQ(a.newton_attempt, b.newton_attempt);
  EXPECT_EQ(a.newton_iteration, b.newton_iteration);
  EXPECT_EQ(a.newton_linear_iterations, b.newton_linear_iterations);
  EXPECT_EQ(a.newton_linear_converged, b.newton_linear_converged);
  EXPECT_EQ(a.newton_linear_reason, b.newton_linear_reason);
  EXPECT_EQ(a.switch_step, b.switch_step);
  EXPECT_EQ(a.switch_well, b.switch_well);
  EXPECT_EQ(a.switch_to_bhp, b.switch_to_bhp);
  expect_same_values(a.switch_bhp_needed, b.switch_bhp_needed, "well_switches/bhp_needed");
  EXPECT_EQ(a.statistics.steps, b.statistics.steps);
  EXPECT_EQ(a.statistics.linear_iterations, b.statistics.linear_iterations);
}

}  // namespace

// A run's file: every counter, index and flag (datasets and attributes) is int64, everything else
// numeric float64 (but /grid/active, int32); every simulated time is in days, /restart's too, which
// equal the /reports/time rows, with the exact seconds beside them.
TEST(Layout4, CountersAreInt64AndEverySimulatedTimeIsInDays)
{
  const auto dir = test::fresh_dir("layout4-types");
  // A BHP limit the injector reaches (well switches in the file); CPR with AMG (a first setup to repeat).
  const auto path = test::run_into(Executor::create_cpu(), "quarter_five_spot.toml",
                                   {"grid.nx=7", "grid.ny=5", "grid.nz=3", "wells.PROD.i=7", "wells.PROD.j=5",
                                    "schedule.end_time=60", "schedule.report_interval=20", "wells.INJ.bhp=205",
                                    "output.vtk=false"},
                                   dir);
  const Results r = read_results(path);
  ASSERT_EQ(r.layout_version, 4);
  const h5::File file = h5::File::open_read(path);
  const hid_t f = file.id();

  std::set<std::string> seen_int64;
  for (const auto& ds : all_datasets(f)) {
    const auto t = h5::dataset_type(f, ds);
    if (t.element_class == H5T_STRING) continue;  // deck texts and name lists
    if (int64_datasets.count(ds)) {
      EXPECT_EQ(t.element_class, H5T_INTEGER) << ds;
      EXPECT_EQ(t.element_bytes, 8u) << ds;
      seen_int64.insert(ds);
    } else if (ds == "grid/active") {
      EXPECT_EQ(t.element_class, H5T_INTEGER) << ds;
      EXPECT_EQ(t.element_bytes, 4u) << ds;
    } else {
      EXPECT_EQ(t.element_class, H5T_FLOAT) << ds << ": an integer-valued dataset not listed in int64_datasets?";
      EXPECT_EQ(t.element_bytes, 8u) << ds;
    }
  }
  EXPECT_EQ(seen_int64, int64_datasets);
  ASSERT_FALSE(r.switch_step.empty()) << "the injector never reached its BHP limit: /well_switches is empty";
  ASSERT_TRUE(h5::exists(f, "restart/setup_x")) << "no first preconditioner setup recorded";

  // Integer attributes int64, times float64.
  const std::map<std::string, std::vector<const char*>> int_attributes = {
      {"/", {"layout_version", "threads", "block_size"}},
      {"grid", {"nx", "ny", "nz", "gravity"}},
      {"statistics", {"steps", "cuts", "newton_iterations", "linear_iterations", "max_linear_iterations"}},
      {"restart", {"setup_step"}}};
  for (const auto& [group, names] : int_attributes) {
    h5::Id g = h5::open_group(f, group);
    for (const char* a : names) {
      std::size_t bytes = 0;
      EXPECT_EQ(attribute_class(g, a, &bytes), H5T_INTEGER) << group << " " << a;
      EXPECT_EQ(bytes, 8u) << group << " " << a;
    }
  }
  h5::Id restart = h5::open_group(f, "restart");
  EXPECT_EQ(attribute_class(restart, "setup_dt"), H5T_FLOAT);
  EXPECT_EQ(attribute_class(restart, "setup_dt_seconds"), H5T_FLOAT);

  // Units: every simulated time in days; the exact seconds say so.
  for (const char* ds : {"reports/time", "steps/time", "steps/dt", "well_switches/time", "restart/time",
                         "restart/dt_next"})
    EXPECT_EQ(units_of(f, ds), "day") << ds;
  for (const char* ds : {"restart/time_seconds", "restart/dt_next_seconds", "restart/wall_seconds"})
    EXPECT_EQ(units_of(f, ds), "s") << ds;
  for (const auto& ds : int64_datasets) EXPECT_EQ(units_of(f, ds), "1") << ds;

  // /restart/time is /reports/time, row for row, bit for bit; the seconds are the schedule's.
  const auto rep_time = h5::read_doubles(f, "reports/time").values;
  const auto rs_time = h5::read_doubles(f, "restart/time").values;
  const auto rs_seconds = h5::read_doubles(f, "restart/time_seconds").values;
  const auto dt_days = h5::read_doubles(f, "restart/dt_next").values;
  const auto dt_seconds = h5::read_doubles(f, "restart/dt_next_seconds").values;
  EXPECT_EQ(rep_time, (std::vector<double>{0, 20, 40, 60}));
  EXPECT_EQ(rs_time, rep_time);
  ASSERT_EQ(rs_seconds.size(), rep_time.size());
  ASSERT_EQ(dt_seconds.size(), rep_time.size());
  for (std::size_t k = 0; k < rep_time.size(); ++k) {
    EXPECT_EQ(rs_seconds[k], 20.0 * double(k) * units::day) << k;
    EXPECT_EQ(rs_seconds[k] / units::day, rs_time[k]) << k;
    EXPECT_GT(dt_seconds[k], 0.0) << k;
    EXPECT_EQ(dt_seconds[k] / units::day, dt_days[k]) << k;
  }
  EXPECT_EQ(h5::read_double_attribute(restart, "setup_dt_seconds") / units::day,
            h5::read_double_attribute(restart, "setup_dt"));
  // The counters' values: /restart's last row is /statistics, /newton (every linear solve) sums to it.
  EXPECT_EQ(h5::read_ints(f, "restart/steps").back(), r.statistics.steps);
  EXPECT_EQ(h5::read_ints(f, "restart/linear_iterations").back(), r.statistics.linear_iterations);
  EXPECT_EQ(h5::read_ints(f, "restart/newton_rows").back(), r.statistics.newton_iterations);
  std::int64_t linear = 0;
  for (const auto n : h5::read_ints(f, "newton/linear_iterations")) linear += n;
  EXPECT_EQ(linear, r.statistics.linear_iterations);
  EXPECT_EQ(h5::read_ints(f, "steps/cuts").size(), std::size_t(r.statistics.steps));
  std::filesystem::remove_all(dir);
}

// A one-cell grid keeps [reports][cells] = [r][1] for its fields (and /restart/state [r][bs], also
// for one unknown per cell); one well keeps [steps][wells] = [s][1], and so does a run without wells
// (its padding column: NaN in the float64 series, -1 in at_bhp, which read_results gives as NaN).
// Rewritten as version 3 wrote them (1-D series, float64, seconds), the files read the same.
TEST(Layout4, OneCellGridAndOneWellKeepTwoDimensions)
{
  const auto dir = test::fresh_dir("layout4-one-cell");
  struct Case {
    test::OneCell kind;
    const char* name;
    std::vector<std::string> overrides;
  };
  const Case cases[] = {{test::OneCell::oil_water_one_well, "ow", {}},
                        {test::OneCell::oil_water_no_wells, "ow_none", {"schedule.end_time=10"}},  // one report
                        {test::OneCell::one_component_one_well, "mc1", {}}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto deck = test::write_one_cell_deck(c.kind, dir / c.name);
    const auto path = test::run_one_cell(deck, dir / c.name / "out", c.overrides);
    const Results r = read_results(path);
    const std::size_t reports = r.report_times.size(), steps = r.step_time.size();
    ASSERT_EQ(reports, c.overrides.empty() ? 3u : 2u);
    ASSERT_GT(steps, 0u);
    {
      const h5::File file = h5::File::open_read(path);
      const hid_t f = file.id();
      for (const auto& name : h5::read_string_list(f, "reports/fields"))
        EXPECT_EQ(h5::dataset_type(f, "reports/" + name).dims, (std::vector<hsize_t>{reports, 1})) << name;
      std::vector<std::string> well_series = {"bhp", "at_bhp"};
      for (const auto& name : h5::read_string_list(f, "wells/rates")) well_series.push_back(name);
      for (const auto& name : well_series)
        EXPECT_EQ(h5::dataset_type(f, "wells/" + name).dims, (std::vector<hsize_t>{steps, 1})) << name;
      EXPECT_EQ(h5::dataset_type(f, "restart/state").dims, (std::vector<hsize_t>{reports, hsize_t(r.block_size)}));
      EXPECT_EQ(h5::dataset_type(f, "reports/time").dims, (std::vector<hsize_t>{reports}));
      if (r.well_names.empty()) {
        EXPECT_EQ(h5::read_ints(f, "wells/at_bhp"), std::vector<std::int64_t>(steps, -1));
        for (const auto& row : r.well_at_bhp) EXPECT_TRUE(std::isnan(row.at(0)));
        for (const auto& row : r.well_bhp) EXPECT_TRUE(std::isnan(row.at(0)));
      } else {
        EXPECT_EQ(r.well_names.size(), 1u);
        for (const auto& row : r.well_at_bhp) EXPECT_TRUE(row.at(0) == 0.0 || row.at(0) == 1.0);
      }
    }
    for (const auto& field : r.cell_fields)
      for (const auto& row : field.rows) EXPECT_EQ(row.size(), 1u) << field.name;

    // The same file as version 3 wrote it: 1-D where one value per row, float64 counters.
    const auto v3 = dir / c.name / "v3.h5";
    std::filesystem::copy_file(path, v3);
    test::rewrite_as_layout_3(v3);
    {
      const h5::File file = h5::File::open_read(v3);
      EXPECT_EQ(h5::dataset_type(file.id(), "reports/pressure").dims, (std::vector<hsize_t>{reports}));
      EXPECT_EQ(h5::dataset_type(file.id(), "wells/bhp").dims, (std::vector<hsize_t>{steps}));
      EXPECT_EQ(h5::dataset_type(file.id(), "steps/cuts").element_class, H5T_FLOAT);
      EXPECT_EQ(units_of(file.id(), "restart/time"), "s");
    }
    const Results old = read_results(v3);
    EXPECT_EQ(old.layout_version, 3);
    expect_same_results(old, r);
  }
  std::filesystem::remove_all(dir);
}

// The rewrite the tests use for version 3 files gives what the version 3 writer gave: every dataset
// of a stored version 3 baseline has the same element type and rank in a fresh run of its deck
// rewritten as version 3 (the baseline predates /restart and /well_switches, additions within
// version 3, so they are checked by their documentation only); and the stored file reads as the
// fresh one does.
TEST(Layout3, RewrittenFilesMatchTheStoredVersion3Baseline)
{
  const auto baseline = std::filesystem::path(BLOCKRES_SOURCE_DIR) / "verification/baselines/multicomponent_3.h5";
  const auto dir = test::fresh_dir("layout3-rewrite");
  const auto path = test::run_into(Executor::create_cpu(), "multicomponent_3.toml",
                                   {"schedule.end_time=40", "output.vtk=false"}, dir);
  const auto v3 = dir / "v3.h5";
  std::filesystem::copy_file(path, v3);
  test::rewrite_as_layout_3(v3);
  const h5::File stored = h5::File::open_read(baseline), rewritten = h5::File::open_read(v3);
  ASSERT_EQ(h5::read_int_attribute(stored.id(), "layout_version"), 3);
  std::size_t compared = 0, float_counters = 0;
  for (const auto& ds : all_datasets(stored.id())) {
    ASSERT_TRUE(h5::exists(rewritten.id(), ds)) << ds;
    const auto a = h5::dataset_type(stored.id(), ds), b = h5::dataset_type(rewritten.id(), ds);
    EXPECT_EQ(a.element_class, b.element_class) << ds;
    EXPECT_EQ(a.element_bytes, b.element_bytes) << ds;
    EXPECT_EQ(a.dims.size(), b.dims.size()) << ds;
    ++compared;
    float_counters += int64_datasets.count(ds) && a.element_class == H5T_FLOAT;
  }
  EXPECT_GT(compared, 40u);
  EXPECT_EQ(float_counters, 10u);  // /steps' 3, /wells/at_bhp and /newton's 6: float64 in version 3
  // The stored version 3 file reads with its counters as the numbers they are.
  const Results r = read_results(baseline);
  EXPECT_EQ(r.layout_version, 3);
  std::int64_t linear = 0;
  for (const double n : r.newton_linear_iterations) {
    EXPECT_EQ(n, std::trunc(n));
    linear += std::int64_t(n);
  }
  EXPECT_EQ(linear, r.statistics.linear_iterations);
  EXPECT_EQ(r.newton_step.size(), std::size_t(r.statistics.newton_iterations));  // one row per linear solve
  std::filesystem::remove_all(dir);
}

// /restart/time and dt_next in days cannot give every time in seconds back (7753360.672249263 s / 86400
// * 86400 is not 7753360.672249263), so version 4 keeps the exact seconds beside them, and the readers
// take those: the times a restart continues from are the ones written, bit for bit, from a version 4
// file and from the same file as version 3 wrote it (seconds only).
TEST(Layout4, RestartTimesComeBackExactlyInSeconds)
{
  const double time = 7753360.672249263, dt_next = 1612495.4359443, setup_dt = 3333.3333333333335;
  ASSERT_NE(time / units::day * units::day, time) << "not an example of a time days cannot hold";
  Fixture f;
  const auto path = tmpdir() / "exact_seconds.h5";
  const auto x = test::random_state(f.model.num_cells());
  {
    ResultsWriter w(path, f.cfg, {"cpu", "d", "c"}, f.grid, f.model, {1, 1});
    w.write_report(0.0, x);
    w.write_restart({0.0, 86400.0, {}, 0, 0});
    w.write_setup_replay({1, setup_dt, x, x});
    w.write_report(time, x);
    RestartRecord rec;
    rec.time = time, rec.dt_next = dt_next, rec.totals.steps = 3, rec.newton_rows = 7;
    w.write_restart(rec);
    w.commit({});
  }
  const auto v3 = tmpdir() / "exact_seconds_v3.h5";
  std::filesystem::copy_file(path, v3, std::filesystem::copy_options::overwrite_existing);
  test::rewrite_as_layout_3(v3);
  for (const auto& p : {path, v3}) {
    const h5::File file = h5::File::open_read(p);
    const std::int64_t version = read_layout_version(file.id(), p);
    SCOPED_TRACE(version);
    const RestartTimes t = read_restart_times(file.id(), version, p);
    EXPECT_EQ(t.time, (std::vector<double>{0.0, time}));
    EXPECT_EQ(t.dt_next, (std::vector<double>{86400.0, dt_next}));
    const auto setup = read_setup_replay(file.id(), version, p);
    ASSERT_TRUE(setup.has_value());
    EXPECT_EQ(setup->dt, setup_dt);
    EXPECT_EQ(setup->step, 1);
    EXPECT_EQ(h5::read_doubles(file.id(), "restart/newton_rows").values, (std::vector<double>{0, 7}));
    if (version == 4) {  // the day values are the /reports/time rows, for readers that want days
      EXPECT_EQ(h5::read_doubles(file.id(), "restart/time").values, h5::read_doubles(file.id(), "reports/time").values);
      EXPECT_EQ(h5::read_doubles(file.id(), "restart/dt_next").values,
                (std::vector<double>{1.0, dt_next / units::day}));
    }
  }
}
