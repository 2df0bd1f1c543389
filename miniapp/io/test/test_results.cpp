// Result files: round trip through the writer and reader (fields, steps, wells, /newton and
// /statistics) for the oil_water model and for a multicomponent-like test double, atomic commit
// (nothing under the final name before commit, no temporary left after an abandoned run), clear
// errors for missing, foreign, truncated and inconsistent files and for unknown layout versions;
// version 1 and 2 files (the stored baselines) stay readable.
#include "miniapp/io/results.hpp"
#include "miniapp/io/test/fake_model.hpp"
#include "physics/test/model_fixture.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <optional>
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
    w.write_newton({1, 0, 1, 7, 0.05, 0.04, true, SolveReason::converged});
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
// version 3 file is a version 2 file plus lists, so relabelled it reads as one.)
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
  EXPECT_EQ(r.layout_version, 3);
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
    h5::Series s(f.id(), "rows", r0.size(), 1);
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
