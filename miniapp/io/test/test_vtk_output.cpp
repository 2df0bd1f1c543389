// VTK time series of `blockres run` read back with VTK's reader and compared with the HDF5 result; every model
// cell field in the .vtr (a test double's too); atomic commit.
#include "miniapp/io/fields.hpp"
#include "miniapp/io/h5.hpp"
#include "miniapp/io/test/fake_model.hpp"
#include "miniapp/io/vtk_output.hpp"
#include "physics/units.hpp"
#include "verification/run_helpers.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkDataSetAttributes.h>
#include <vtkNew.h>
#include <vtkRectilinearGrid.h>
#include <vtkUnsignedCharArray.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLRectilinearGridReader.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

using namespace blockres;
namespace fs = std::filesystem;

namespace {

constexpr int nx = 7, ny = 5, nz = 3;
const std::vector<double> kDx = {5.0, 10.0, 7.5, 10.0, 12.0, 8.0, 10.0}, kDz = {2.0, 4.0, 3.0};
constexpr double kTop = 2000.0;  // the deck's grid.top
// Cells made inactive (porosity 0), 1-based (i, j, k): away from the wells in columns (1,1) and (7,5).
const std::vector<std::array<int, 3>> kInactive = {{3, 2, 1}, {5, 4, 2}};

// quarter_five_spot on 7x5x3 cells of uneven sizes, 20 days, reports at 0, 10 and 20 days.
std::vector<std::string> small_case(std::vector<std::string> extra = {})
{
  std::vector<std::string> o = {"grid.nx=7",
                                "grid.ny=5",
                                "grid.nz=3",
                                "grid.dx=[5.0, 10.0, 7.5, 10.0, 12.0, 8.0, 10.0]",
                                "grid.dz=[2.0, 4.0, 3.0]",
                                "wells.PROD.i=7",
                                "wells.PROD.j=5",
                                "schedule.end_time=20",
                                "schedule.report_interval=10"};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

// A porosity file with the kInactive cells at 0; the override that reads it.
std::string porosity_override(const fs::path& dir)
{
  std::vector<double> phi(std::size_t(nx) * ny * nz, 0.2);
  for (const auto& [i, j, k] : kInactive) phi[std::size_t(i - 1 + nx * (j - 1 + ny * (k - 1)))] = 0.0;
  const fs::path file = dir / "porosity.h5";
  h5::File f = h5::File::create(file);
  h5::write_dataset(f.id(), "porosity", std::span<const double>(phi));
  f.close();
  return "rock.porosity={ file = \"" + file.string() + "\", dataset = \"porosity\" }";
}

struct SimRun {
  RunConfig cfg;
  RunOutcome outcome;
  std::vector<std::string> log;
};

SimRun run(const fs::path& out_dir, const std::vector<std::string>& overrides)
{
  SimRun r;
  r.cfg = load_deck(test::deck_path("quarter_five_spot.toml"), overrides);
  r.outcome = run_simulation(r.cfg, Executor::create_cpu(), {out_dir, "test", false, {}},
                             [&](const std::string& line) { r.log.push_back(line); });
  return r;
}

std::vector<std::string> listing(const fs::path& dir)
{
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Every value of a cell array equals the reference (NaN where the reference is NaN).
void expect_field(vtkDataArray* a, const std::vector<double>& ref, const std::string& what)
{
  ASSERT_NE(a, nullptr) << what << ": missing";
  ASSERT_EQ(a->GetNumberOfTuples(), vtkIdType(ref.size())) << what;
  ASSERT_EQ(a->GetNumberOfComponents(), 1) << what;
  int bad = 0;
  for (std::size_t c = 0; c < ref.size(); ++c) {
    const double v = a->GetComponent(vtkIdType(c), 0);
    const bool same = std::isnan(ref[c]) ? std::isnan(v) : v == ref[c];
    if (!same && bad++ < 5) ADD_FAILURE() << what << " cell " << c << ": " << v << " != " << ref[c];
  }
  EXPECT_EQ(bad, 0) << what;
}

struct PvdEntry {
  double time;
  std::string file;
};

std::vector<PvdEntry> read_pvd(const fs::path& pvd)
{
  vtkNew<vtkXMLDataParser> parser;
  parser->SetFileName(pvd.c_str());
  EXPECT_EQ(parser->Parse(), 1) << pvd;
  vtkXMLDataElement* root = parser->GetRootElement();
  std::vector<PvdEntry> entries;
  if (!root) return entries;
  EXPECT_STREQ(root->GetName(), "VTKFile");
  EXPECT_STREQ(root->GetAttribute("type"), "Collection");
  EXPECT_EQ(root->GetNumberOfNestedElements(), 1);
  vtkXMLDataElement* collection = root->GetNestedElement(0);
  EXPECT_STREQ(collection->GetName(), "Collection");
  for (int e = 0; e < collection->GetNumberOfNestedElements(); ++e) {
    vtkXMLDataElement* ds = collection->GetNestedElement(e);
    EXPECT_STREQ(ds->GetName(), "DataSet");
    const char* t = ds->GetAttribute("timestep");
    const char* f = ds->GetAttribute("file");
    EXPECT_TRUE(t && f);
    if (t && f) entries.push_back({std::strtod(t, nullptr), f});
  }
  return entries;
}

// The whole series of a finished run against its HDF5 file.
void check_series(const SimRun& run, bool expect_inactive)
{
  const fs::path dir = run.outcome.result_file.parent_path();
  const std::string name = run.cfg.output.name;
  const fs::path pvd = dir / (name + ".pvd");
  ASSERT_TRUE(fs::is_regular_file(pvd));
  EXPECT_FALSE(fs::exists(dir / (name + "_vtk.tmp")));
  EXPECT_FALSE(fs::exists(dir / (name + ".pvd.tmp")));
  EXPECT_NE(std::find(run.log.begin(), run.log.end(), "VTK time series written to " + pvd.string()), run.log.end());

  const Results res = read_results(run.outcome.result_file);
  const h5::File f = h5::File::open_read(run.outcome.result_file);
  const auto depth = h5::read_doubles(f.id(), "grid/depth").values;
  const auto active = h5::read_ints(f.id(), "grid/active");
  const std::size_t n = std::size_t(nx) * ny * nz;
  ASSERT_EQ(active.size(), n);
  std::vector<double> active_d(active.begin(), active.end());
  EXPECT_EQ(std::count(active.begin(), active.end(), 0), expect_inactive ? std::ptrdiff_t(kInactive.size()) : 0);

  const auto entries = read_pvd(pvd);
  ASSERT_EQ(entries.size(), res.report_times.size());
  ASSERT_EQ(res.report_times.size(), 3u);  // 0, 10, 20 days
  std::vector<std::string> expected_files;
  for (std::size_t r = 0; r < entries.size(); ++r) {
    SCOPED_TRACE("report " + std::to_string(r));
    EXPECT_EQ(entries[r].time, res.report_times[r]);  // exactly: the .pvd prints round-trip decimals
    EXPECT_EQ(entries[r].file, fmt::format("{0}_vtk/{0}_{1:04d}.vtr", name, r));
    const fs::path vtr = dir / entries[r].file;
    ASSERT_TRUE(fs::is_regular_file(vtr)) << vtr;
    expected_files.push_back(vtr.filename().string());

    vtkNew<vtkXMLRectilinearGridReader> reader;
    reader->SetFileName(vtr.c_str());
    reader->Update();
    ASSERT_EQ(reader->GetErrorCode(), 0ul);
    vtkRectilinearGrid* g = reader->GetOutput();
    int dims[3];
    g->GetDimensions(dims);
    EXPECT_EQ(dims[0], nx + 1);
    EXPECT_EQ(dims[1], ny + 1);
    EXPECT_EQ(dims[2], nz + 1);
    ASSERT_EQ(g->GetNumberOfCells(), vtkIdType(n));

    // x, y: cumulative cell sizes from 0; z: depth of the layer faces from grid.top down, with the
    // HDF5 file's cell-centre depths half-way between them.
    double x = 0;
    for (int i = 0; i <= nx; ++i) {
      EXPECT_DOUBLE_EQ(g->GetXCoordinates()->GetComponent(i, 0), x);
      if (i < nx) x += kDx[std::size_t(i)];
    }
    for (int j = 0; j <= ny; ++j) EXPECT_DOUBLE_EQ(g->GetYCoordinates()->GetComponent(j, 0), 10.0 * j);
    double z = kTop;
    for (int k = 0; k <= nz; ++k) {
      EXPECT_DOUBLE_EQ(g->GetZCoordinates()->GetComponent(k, 0), z);
      if (k < nz) {
        const double mid =
            0.5 * (g->GetZCoordinates()->GetComponent(k, 0) + g->GetZCoordinates()->GetComponent(k + 1, 0));
        EXPECT_NEAR(mid, depth[std::size_t(k) * nx * ny], 1e-9);
        z += kDz[std::size_t(k)];
      }
    }

    vtkCellData* cd = g->GetCellData();
    // Every field of the HDF5 file, bit for bit, and so = 1 - sw, which only VTK gets.
    for (const auto& field : res.cell_fields) expect_field(cd->GetArray(field.name.c_str()), field.rows[r], field.name);
    EXPECT_EQ(res.cell_fields.size(), 2u);
    std::vector<double> so(res.cell_field("sw").rows[r]);
    for (double& s : so) s = 1.0 - s;
    expect_field(cd->GetArray("so"), so, "so");
    ASSERT_NE(cd->GetScalars(), nullptr);
    EXPECT_STREQ(cd->GetScalars()->GetName(), "pressure");
    for (const char* s : {"porosity", "permx", "permy", "permz"})
      expect_field(cd->GetArray(s), h5::read_doubles(f.id(), std::string("static/") + s).values, s);
    expect_field(cd->GetArray("active"), active_d, "active");
    std::vector<double> ci(n), cj(n), ck(n);
    for (std::size_t c = 0; c < n; ++c)
      ci[c] = double(c % nx + 1), cj[c] = double(c / nx % ny + 1), ck[c] = double(c / (nx * ny) + 1);
    expect_field(cd->GetArray("i"), ci, "i");
    expect_field(cd->GetArray("j"), cj, "j");
    expect_field(cd->GetArray("k"), ck, "k");
    for (const char* s : {"active", "i", "j", "k"}) {
      ASSERT_NE(cd->GetArray(s), nullptr);
      EXPECT_EQ(cd->GetArray(s)->GetDataType(), VTK_TYPE_INT32) << s;
    }
    for (const char* s : {"pressure", "sw", "so", "porosity", "permx", "permy", "permz"})
      EXPECT_EQ(cd->GetArray(s)->GetDataType(), VTK_DOUBLE) << s;
    for (const auto& [i, j, k] : kInactive) {
      const std::size_t c = std::size_t(i - 1 + nx * (j - 1 + ny * (k - 1)));
      EXPECT_EQ(std::isnan(res.cell_field("pressure").rows[r][c]), expect_inactive) << "cell " << c;
    }

    // Inactive cells are hidden (blanked) through the ghost array, the others visible.
    vtkUnsignedCharArray* ghost = g->GetCellGhostArray();
    ASSERT_NE(ghost, nullptr);
    EXPECT_STREQ(ghost->GetName(), vtkDataSetAttributes::GhostArrayName());
    for (std::size_t c = 0; c < n; ++c) {
      EXPECT_EQ(ghost->GetValue(vtkIdType(c)), active[c] ? 0 : vtkDataSetAttributes::HIDDENCELL) << c;
      EXPECT_EQ(g->IsCellVisible(vtkIdType(c)) != 0, active[c] != 0) << c;
    }
    EXPECT_EQ(g->HasAnyBlankCells(), expect_inactive);
  }
  // Nothing else in the series directory.
  EXPECT_EQ(listing(dir / (name + "_vtk")), expected_files);
}

class VtkOutput : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir("vtk-output"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(VtkOutput, OnByDefault)
{
  EXPECT_TRUE(vtk_output_available());
  EXPECT_TRUE(load_deck(test::deck_path("quarter_five_spot.toml")).output.vtk);
}

TEST_F(VtkOutput, SeriesMatchesHdf5)
{
  const SimRun r = run(dir_ / "out", small_case());
  check_series(r, false);
  EXPECT_EQ(listing(dir_ / "out"), (std::vector<std::string>{"quarter_five_spot.h5", "quarter_five_spot.pvd",
                                                             "quarter_five_spot_vtk"}));
}

TEST_F(VtkOutput, InactiveCellsAreNaNAndHidden)
{
  const SimRun r = run(dir_ / "out", small_case({porosity_override(dir_), "output.name=holes"}));
  check_series(r, true);
}

TEST_F(VtkOutput, OffInTheDeck)
{
  const SimRun r = run(dir_ / "out", small_case({"output.vtk=false"}));
  EXPECT_EQ(listing(dir_ / "out"), std::vector<std::string>{"quarter_five_spot.h5"});
  for (const auto& line : r.log) EXPECT_EQ(line.find("VTK"), std::string::npos) << line;
}

// A second run over an existing output replaces the old series as a whole: here 2 reports
// instead of 3, so a stale third file would show.
TEST_F(VtkOutput, SecondRunReplacesTheSeries)
{
  run(dir_ / "out", small_case());
  run(dir_ / "out", small_case({"schedule.report_interval=20"}));
  const auto entries = read_pvd(dir_ / "out" / "quarter_five_spot.pvd");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].time, 20.0);
  EXPECT_EQ(listing(dir_ / "out" / "quarter_five_spot_vtk"),
            (std::vector<std::string>{"quarter_five_spot_0000.vtr", "quarter_five_spot_0001.vtr"}));
  EXPECT_EQ(listing(dir_ / "out"), (std::vector<std::string>{"quarter_five_spot.h5", "quarter_five_spot.pvd",
                                                             "quarter_five_spot_vtk"}));
}

// A simulation that throws (every linear solve fails, the first cut goes below dt_min) after the
// initial report was written leaves neither result file, nor .pvd, nor staging directory; an
// earlier complete series in the same place stays as it was.
TEST_F(VtkOutput, FailedRunLeavesNothing)
{
  const std::vector<std::string> failing = small_case(
      {"solver.linear.max_iterations=1", "solver.linear.tolerance=1e-14", "schedule.dt_initial=1",
       "schedule.dt_min=0.6"});
  EXPECT_THROW(run(dir_ / "fresh", failing), SimulationError);
  EXPECT_TRUE(fs::is_empty(dir_ / "fresh"));

  const SimRun good = run(dir_ / "kept", small_case());
  const auto before = listing(dir_ / "kept" / "quarter_five_spot_vtk");
  EXPECT_THROW(run(dir_ / "kept", failing), SimulationError);
  EXPECT_EQ(listing(dir_ / "kept"), (std::vector<std::string>{"quarter_five_spot.h5", "quarter_five_spot.pvd",
                                                              "quarter_five_spot_vtk"}));
  EXPECT_EQ(listing(dir_ / "kept" / "quarter_five_spot_vtk"), before);
  check_series(good, false);
}

// The writer on its own: nothing under the final names before commit(), and a writer destroyed
// without commit() removes its staging directory.
TEST_F(VtkOutput, WriterWithoutCommitRemovesItsStaging)
{
  physics::GridSpec gs;
  gs.nx = 3, gs.ny = 2, gs.nz = 2;
  gs.dx = {1, 2, 3}, gs.dy = {1, 1}, gs.dz = {1, 1};
  physics::RockSpec rock;
  rock.porosity.assign(12, 0.1);
  rock.kx = rock.ky = rock.kz = std::vector<double>(12, 100 * units::millidarcy);
  const physics::Grid grid(gs, rock);
  const test::FakeModel model(grid);
  const auto x = model.initial_state();
  {
    VtkSeriesWriter w(dir_, "case", grid, rock, model);
    w.write_report(0.0, x);
    w.write_report(86400.0, x);
    EXPECT_EQ(listing(dir_ / "case_vtk.tmp"), (std::vector<std::string>{"case_0000.vtr", "case_0001.vtr"}));
    EXPECT_EQ(listing(dir_), std::vector<std::string>{"case_vtk.tmp"});
  }
  EXPECT_TRUE(fs::is_empty(dir_));

  VtkSeriesWriter w(dir_, "case", grid, rock, model);
  w.write_report(0.0, x);
  w.commit();
  EXPECT_EQ(listing(dir_), (std::vector<std::string>{"case.pvd", "case_vtk"}));
  const auto entries = read_pvd(dir_ / "case.pvd");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].time, 0.0);
  EXPECT_TRUE(fs::is_regular_file(dir_ / entries[0].file));
}

// A file VTK cannot write is an exception naming it; the wrong state size is one too.
TEST_F(VtkOutput, WriteErrorsNameTheFile)
{
  physics::GridSpec gs;
  gs.nx = 2, gs.ny = 1, gs.nz = 1;
  gs.dx = {1, 1}, gs.dy = {1}, gs.dz = {1};
  physics::RockSpec rock;
  rock.porosity.assign(2, 0.1);
  rock.kx = rock.ky = rock.kz = std::vector<double>(2, 100 * units::millidarcy);
  const physics::Grid grid(gs, rock);
  const test::FakeModel model(grid);  // 3 unknowns per cell
  VtkSeriesWriter w(dir_, "case", grid, rock, model);
  fs::remove_all(dir_ / "case_vtk.tmp");  // VTK cannot open a file in a directory that is gone
  try {
    w.write_report(0.0, std::vector<double>(6, 1.0));
    ADD_FAILURE() << "no error writing into a missing directory";
  } catch (const VtkError& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "case_vtk.tmp" / "case_0000.vtr").string()), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    std::printf("%s\n", e.what());
  }
  EXPECT_THROW(w.write_report(0.0, std::vector<double>(4, 1.0)), std::invalid_argument);
}

// A model the writer knows nothing of: every one of its cell fields is a cell array of the .vtr
// (those kept out of the HDF5 file included), in the model's order, the first the active scalars,
// with the model's values on the full grid (NaN in the inactive cell); the static fields follow.
TEST_F(VtkOutput, EveryModelFieldIsInTheSeries)
{
  physics::GridSpec gs;
  gs.nx = 3, gs.ny = 2, gs.nz = 2;
  gs.dx = {1, 2, 3}, gs.dy = {1, 1}, gs.dz = {1, 1};
  physics::RockSpec rock;
  rock.porosity.assign(12, 0.1);
  rock.porosity[7] = 0.0;
  rock.kx = rock.ky = rock.kz = std::vector<double>(12, 100 * units::millidarcy);
  const physics::Grid grid(gs, rock);
  const test::FakeModel model(grid, {"N2", "CO2", "C1", "H2S"});
  auto x = model.initial_state();
  x[1] += 0.01;  // not uniform
  {
    VtkSeriesWriter w(dir_, "fake", grid, rock, model);
    w.write_report(0.0, x);
    w.commit();
  }
  vtkNew<vtkXMLRectilinearGridReader> reader;
  reader->SetFileName((dir_ / "fake_vtk" / "fake_0000.vtr").c_str());
  reader->Update();
  ASSERT_EQ(reader->GetErrorCode(), 0ul);
  vtkCellData* cd = reader->GetOutput()->GetCellData();
  const auto fields = model.cell_fields();
  const auto values = model.cell_field_values(x);
  ASSERT_EQ(fields.size(), 7u);  // pressure, density, 4 fractions, x_sum
  for (std::size_t f = 0; f < fields.size(); ++f) {
    SCOPED_TRACE(fields[f].name);
    expect_field(cd->GetArray(fields[f].name.c_str()), full_grid_values(grid, values[f]), fields[f].name);
    EXPECT_EQ(std::string(cd->GetArrayName(int(f))), fields[f].name) << "the model's order";
  }
  EXPECT_TRUE(std::isnan(cd->GetArray("x_H2S")->GetComponent(7, 0)));
  ASSERT_NE(cd->GetScalars(), nullptr);
  EXPECT_STREQ(cd->GetScalars()->GetName(), "pressure");
  for (const char* s : {"porosity", "permx", "permy", "permz", "active", "i", "j", "k"})
    EXPECT_NE(cd->GetArray(s), nullptr) << s;
  EXPECT_EQ(cd->GetNumberOfArrays(), int(fields.size()) + 9);  // + static fields + vtkGhostType
}

}  // namespace
