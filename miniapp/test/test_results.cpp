// Result files: round trip through the writer and reader (fields, steps, wells, /newton and
// /statistics), atomic commit (nothing under the final name before commit, no temporary left
// after an abandoned run), clear errors for missing, foreign and truncated files and for
// unknown layout versions; version 1 files stay readable.
#include "miniapp/results.hpp"
#include "physics/test/model_fixture.hpp"

#include <gtest/gtest.h>

#include <fstream>
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
    st.time = 86400.0 * 2, st.dt = 86400.0 * 2, st.newton_iterations = 3, st.linear_iterations = 17;
    st.in_place = {1.25, 2.75};
    st.wells = {{250e5, 100.0 / 86400, 0.0, false}, {150e5, -40.0 / 86400, -60.0 / 86400, true}, {190e5, 0, -1.0 / 86400, true}};
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
  EXPECT_EQ(r.nx, 5);
  EXPECT_EQ(r.report_times, (std::vector<double>{0.0, 2.0}));
  ASSERT_EQ(r.pressure.size(), 2u);
  // Field values land on the full grid at their global index, in bar; inactive cells are NaN.
  for (index_t a = 0; a < n; ++a) {
    const auto g = f.grid.global_of_active(a);
    EXPECT_DOUBLE_EQ(r.pressure[1][g], x1[2 * a] / 1e5);
    EXPECT_DOUBLE_EQ(r.sw[0][g], x0[2 * a + 1]);
  }
  for (index_t g = 0; g < f.grid.num_cells(); ++g) {
    if (f.grid.active_index(g) < 0) {
      EXPECT_TRUE(std::isnan(r.pressure[0][g]));
    }
  }
  EXPECT_EQ(r.step_dt, (std::vector<double>{2.0}));
  EXPECT_EQ(r.linear_iterations, (std::vector<double>{17.0}));
  EXPECT_EQ(r.initial_water_in_place, 1.5);
  EXPECT_EQ(r.oil_in_place, (std::vector<double>{2.75}));
  EXPECT_EQ(r.well_names, (std::vector<std::string>{"INJ", "PROD", "P2"}));
  ASSERT_EQ(r.well_bhp.size(), 1u);
  EXPECT_DOUBLE_EQ(r.well_bhp[0][0], 250.0);
  EXPECT_DOUBLE_EQ(r.well_water_rate[0][0], 100.0);
  EXPECT_DOUBLE_EQ(r.well_oil_rate[0][1], -60.0);

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
// this build does not know are rejected with a message that names the version.
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
