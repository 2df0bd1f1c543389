// `blockres verify` end to end on a small quarter five-spot run (CPU): a run passes against its own
// baseline; one value perturbed by 1e-3 fails with exit 1 naming the field, report step and cell;
// mismatched grids and report steps, truncated, non-HDF5 and missing files are errors (exit 2);
// tolerances from --rtol/--atol and from case files, whose mistakes are named with file and line.
// The comparison is generic over the model: with a multicomponent-like test double, every field the
// files carry is compared, tolerances come by field name or group, and files of other models or
// other field lists are errors. A result of layout version 4 and one of version 3 (int64 counters
// and float64 ones, [r][1] and 1-D) compare as the same run, both ways.
#include "miniapp/io/json_file.hpp"
#include "miniapp/io/test/fake_model.hpp"
#include "miniapp/io/test/layout3_file.hpp"
#include "miniapp/verify/verify.hpp"
#include "verification/run_helpers.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <hdf5.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <regex>
#include <set>

using namespace blockres;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kSmall = {"grid.nx=7",         "grid.ny=5",          "grid.nz=3",
                                         "wells.PROD.i=7",    "wells.PROD.j=5",     "schedule.end_time=60",
                                         "schedule.report_interval=20"};

// One run shared by every test: its result file is the baseline the copies are compared with.
struct Fixture {
  fs::path dir, baseline;
};

const Fixture& fixture()
{
  static const Fixture f = [] {
    Fixture x;
    x.dir = test::fresh_dir("verify-test");
    const RunConfig cfg = load_deck(test::deck_path("quarter_five_spot.toml"), kSmall);
    x.baseline = run_simulation(cfg, Executor::create_cpu(), {x.dir / "base", "test", false, {}},
                                [](const std::string&) {})
                     .result_file;
    return x;
  }();
  static const struct Cleanup {
    fs::path dir;
    ~Cleanup()
    {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{f.dir};
  return f;
}

struct Outcome {
  int code = -1;
  std::string out, err;
};

Outcome verify(VerifyOptions o)
{
  Outcome r;
  r.code = run_verify(o, [&](const std::string& s) { r.out += s + "\n"; },
                      [&](const std::string& s) { r.err += s + "\n"; });
  return r;
}

VerifyOptions files(const fs::path& result, const fs::path& baseline)
{
  VerifyOptions o;
  o.input = result.string();
  o.baseline = baseline.string();
  return o;
}

fs::path copy_of_baseline(const std::string& name)
{
  const fs::path p = fixture().dir / name;
  fs::copy_file(fixture().baseline, p, fs::copy_options::overwrite_existing);
  return p;
}

// Multiplies element (row, col) of a 2-D dataset (or element row of a 1-D one) by (1 + factor),
// through the plain HDF5 API: the file stays a valid result file.
void perturb(const fs::path& file, const std::string& dataset, hsize_t row, hsize_t col, double factor)
{
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t ds = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  ASSERT_GE(ds, 0) << dataset;
  const hid_t space = H5Dget_space(ds);
  const int rank = H5Sget_simple_extent_ndims(space);
  const hsize_t start[2] = {row, col}, count[2] = {1, 1};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  const hid_t mem = H5Screate_simple(1, count, nullptr);
  double v = 0;
  ASSERT_GE(H5Dread(ds, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, &v), 0);
  (void)rank;
  v *= 1.0 + factor;
  ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, &v), 0);
  H5Sclose(mem), H5Sclose(space), H5Dclose(ds), H5Fclose(f);
}

fs::path write_text(const std::string& name, const std::string& text)
{
  const fs::path p = fixture().dir / name;
  std::ofstream(p) << text;
  return p;
}

// A complete, valid case file for the fixture's run; `extra` is appended (TOML) and `tol` replaces
// the pressure line of the same_backend table.
std::string case_text(const std::string& pressure_line = "pressure = { rel = 1e-9, abs = 1e-7 }",
                      const std::string& extra = "")
{
  std::string t = "description = \"test\"\ndeck = \"" + test::deck_path("quarter_five_spot.toml") +
                  "\"\noverrides = [";
  for (const auto& o : kSmall) t += "\"" + o + "\", ";
  t += "]\nbaseline = \"" + fixture().baseline.string() + "\"\n" + extra;
  for (const char* table : {"same_backend", "cross_backend"}) {
    t += std::string("[tolerance.") + table + "]\n";
    t += std::string(table) == "same_backend" ? pressure_line + "\n" : "pressure = { rel = 1e-5, abs = 1e-3 }\n";
    t += "sw = { rel = 0.0, abs = 1e-9 }\nwell_bhp = { rel = 1e-9, abs = 1e-7 }\n"
         "well_water_rate = { rel = 1e-8, abs = 1e-7 }\nwell_oil_rate = { rel = 1e-8, abs = 1e-7 }\n"
         "step_time = { rel = 1e-12, abs = 0.0 }\nstep_dt = { rel = 1e-12, abs = 0.0 }\n"
         "water_in_place = { rel = 1e-10, abs = 0.0 }\noil_in_place = { rel = 1e-10, abs = 0.0 }\n";
  }
  return t;
}

}  // namespace

TEST(Verify, ARunPassesAgainstItsOwnBaseline)
{
  const auto copy = copy_of_baseline("same.h5");
  const auto r = verify(files(copy, fixture().baseline));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verify: PASS"), std::string::npos) << r.out;
  // Every report step of both cell fields, three series per well and four per-step series.
  const Results res = read_results(fixture().baseline);
  const std::size_t expected = 2 * res.report_times.size() + 3 * res.well_names.size() + 4;
  EXPECT_NE(r.out.find(fmt::format("PASS ({} comparisons", expected)), std::string::npos) << r.out;
  std::vector<std::string> names;
  for (const auto& f : verified_fields(res)) names.push_back(f.name);
  EXPECT_EQ(names, (std::vector<std::string>{"pressure", "sw", "well_bhp", "well_water_rate", "well_oil_rate",
                                             "step_time", "step_dt", "water_in_place", "oil_in_place"}));
}

TEST(Verify, APerturbedPressureFailsNamingFieldStepAndCell)
{
  const Results base = read_results(fixture().baseline);
  std::mt19937 rng{std::random_device{}()};
  // A random active cell of a random report step after the initial one.
  const std::size_t report = 1 + rng() % (base.report_times.size() - 1);
  std::size_t cell = 0;
  do cell = rng() % base.active.size();
  while (!base.active[cell]);
  const auto bad = copy_of_baseline("perturbed_p.h5");
  perturb(bad, "reports/pressure", report, cell, 1e-3);
  const auto r = verify(files(bad, fixture().baseline));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::size_t i = cell % base.nx + 1, j = (cell / base.nx) % base.ny + 1, k = cell / (base.nx * base.ny) + 1;
  std::size_t active = 0;
  for (auto a : base.active) active += a != 0;
  const std::string where = fmt::format("FAIL pressure at report {} (t = {:g} d): 1 of {} value(s) outside", report,
                                        base.report_times[report], active);
  EXPECT_NE(r.out.find(where), std::string::npos) << "expected '" << where << "' in\n" << r.out;
  EXPECT_NE(r.out.find(fmt::format("worst at cell ({}, {}, {})", i, j, k)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verify: FAIL (1 of"), std::string::npos) << r.out;
  // The relative difference printed is the perturbation.
  const Comparison* c = nullptr;
  const VerifyReport rep = compare_results(read_results(bad), base, default_tolerances());
  for (const auto& x : rep.comparisons)
    if (!x.pass()) c = &x;
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(c->max_rel, 1e-3, 1e-12);
  EXPECT_EQ(c->max_rel_at, fmt::format("cell ({}, {}, {})", i, j, k));

  // A relative tolerance above the perturbation lets it pass; one for another field does not.
  auto o = files(bad, fixture().baseline);
  o.rtol = {"pressure=2e-3"};
  EXPECT_EQ(verify(o).code, 0);
  o.rtol = {"sw=2e-3"};
  EXPECT_EQ(verify(o).code, 1);
}

TEST(Verify, PerturbedSaturationAndWellRateFail)
{
  const auto bad_sw = copy_of_baseline("perturbed_sw.h5");
  perturb(bad_sw, "reports/sw", 2, 0, 1e-3);  // cell (1, 1, 1): the injector's, always active
  auto r = verify(files(bad_sw, fixture().baseline));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL sw at report 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worst at cell (1, 1, 1)"), std::string::npos) << r.out;

  const auto bad_q = copy_of_baseline("perturbed_q.h5");
  perturb(bad_q, "wells/oil_rate", 3, 1, 1e-3);  // the producer after the 4th step
  r = verify(files(bad_q, fixture().baseline));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL well_oil_rate at well PROD"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worst at step 4 (t = "), std::string::npos) << r.out;

  const auto bad_dt = copy_of_baseline("perturbed_dt.h5");
  perturb(bad_dt, "steps/dt", 0, 0, 1e-6);
  r = verify(files(bad_dt, fixture().baseline));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL step_dt at steps"), std::string::npos) << r.out;
}

TEST(Verify, MismatchedGridsAndReportStepsAreErrors)
{
  auto other = kSmall;
  other[0] = "grid.nx=8", other[3] = "wells.PROD.i=8";
  const RunConfig cfg = load_deck(test::deck_path("quarter_five_spot.toml"), other);
  const auto grid8 = run_simulation(cfg, Executor::create_cpu(), {fixture().dir / "nx8", "test", false, {}},
                                    [](const std::string&) {})
                         .result_file;
  auto r = verify(files(grid8, fixture().baseline));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("mismatched grids: result 8x5x3, baseline 7x5x3"), std::string::npos) << r.err;

  auto shorter = kSmall;
  shorter[5] = "schedule.end_time=40";
  const auto short_run = run_simulation(load_deck(test::deck_path("quarter_five_spot.toml"), shorter),
                                        Executor::create_cpu(), {fixture().dir / "short", "test", false, {}},
                                        [](const std::string&) {})
                             .result_file;
  r = verify(files(short_run, fixture().baseline));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("mismatched report steps: result has 3, baseline 4"), std::string::npos) << r.err;

  // A different reservoir on the same grid (another permeability seed) is a different model.
  auto seed = kSmall;
  seed.push_back("rock.kx.seed=7");
  const auto seeded = run_simulation(load_deck(test::deck_path("quarter_five_spot.toml"), seed),
                                     Executor::create_cpu(), {fixture().dir / "seed", "test", false, {}},
                                     [](const std::string&) {})
                          .result_file;
  r = verify(files(seeded, fixture().baseline));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("different models: static/permx"), std::string::npos) << r.err;
}

// The stored baselines are of layout versions 2 and 3 (the verify.* cases compare version 4 runs with
// them); here the same run in both versions, either as the baseline: identical, and the report says
// which versions met. A perturbed version 3 file fails: its values are what is compared.
TEST(Verify, Layout3AndLayout4FilesOfOneRunAreTheSame)
{
  const auto v3 = copy_of_baseline("layout3.h5");
  test::rewrite_as_layout_3(v3);
  for (const auto& [result, baseline] : {std::pair{fixture().baseline, v3}, std::pair{v3, fixture().baseline}}) {
    const auto r = verify(files(result, baseline));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(result == v3 ? "layout versions: result 3, baseline 4" : "layout versions: result 4, baseline 3"),
              std::string::npos)
        << r.out;
    const VerifyReport rep = compare_results(read_results(result), read_results(baseline), default_tolerances());
    EXPECT_TRUE(rep.pass());
    EXPECT_TRUE(rep.mismatches.empty());
    for (const auto& c : rep.comparisons) EXPECT_EQ(c.max_abs, 0.0) << c.field << " " << c.scope;
  }
  const auto perturbed = copy_of_baseline("layout3_perturbed.h5");
  test::rewrite_as_layout_3(perturbed);
  perturb(perturbed, "reports/pressure", 2, 0, 1e-3);
  const auto r = verify(files(perturbed, fixture().baseline));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("pressure"), std::string::npos) << r.out;
}

TEST(Verify, TruncatedForeignAndMissingFilesAreErrors)
{
  const auto truncated = copy_of_baseline("truncated.h5");
  fs::resize_file(truncated, fs::file_size(truncated) / 2);
  auto r = verify(files(truncated, fixture().baseline));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("truncated.h5"), std::string::npos) << r.err;

  // ... as a baseline too, and the message names it as the baseline.
  r = verify(files(fixture().baseline, truncated));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("baseline " + truncated.string()), std::string::npos) << r.err;

  const auto text = write_text("not_hdf5.h5", "this is not an HDF5 file\n");
  r = verify(files(text, fixture().baseline));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not_hdf5.h5"), std::string::npos) << r.err;

  r = verify(files(fixture().dir / "no_such.h5", fixture().baseline));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no_such.h5: no such file"), std::string::npos) << r.err;

  // A valid HDF5 file whose well series lost a row (inconsistent, e.g. edited by hand): an error
  // naming the dataset, never an out-of-range read.
  const auto short_wells = copy_of_baseline("short_wells.h5");
  {
    const hid_t f = H5Fopen(short_wells.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t ds = H5Dopen2(f, "wells/bhp", H5P_DEFAULT);
    hsize_t dims[2];
    const hid_t space = H5Dget_space(ds);
    H5Sget_simple_extent_dims(space, dims, nullptr);
    dims[0] -= 1;
    ASSERT_GE(H5Dset_extent(ds, dims), 0);
    H5Sclose(space), H5Dclose(ds), H5Fclose(f);
  }
  r = verify(files(short_wells, fixture().baseline));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("dataset 'wells/bhp' has"), std::string::npos) << r.err;

  // An HDF5 file that is not a result file.
  const fs::path foreign = fixture().dir / "foreign.h5";
  H5Fclose(H5Fcreate(foreign.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  r = verify(files(foreign, fixture().baseline));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not a blockres result file"), std::string::npos) << r.err;

  // No result is written anywhere by a failed comparison: the fixture directory holds only inputs.
  VerifyOptions none;
  none.baseline = fixture().baseline.string();
  r = verify(none);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nothing to verify"), std::string::npos) << r.err;
}

TEST(Verify, BadTolerancesAreErrors)
{
  auto o = files(fixture().baseline, fixture().baseline);
  o.rtol = {"presure=1e-3"};
  auto r = verify(o);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--rtol presure=1e-3: unknown field 'presure'"), std::string::npos) << r.err;
  o.rtol = {"pressure=-1"};
  r = verify(o);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is not a non-negative number"), std::string::npos) << r.err;
  o.rtol = {};
  o.atol = {"abc"};
  EXPECT_EQ(verify(o).code, 2);
}

TEST(Verify, DeckRunsThenCompares)
{
  // A deck given as the input runs first (here: the fixture's deck with its overrides) and passes.
  VerifyOptions o;
  o.input = test::deck_path("quarter_five_spot.toml");
  o.overrides = kSmall;
  o.baseline = fixture().baseline.string();
  o.backend = "cpu";
  auto r = verify(o);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("  | done:"), std::string::npos) << "the run log is shown: " << r.out;

  // --set on a result file is a usage error; so is --backend.
  o.input = fixture().baseline.string();
  EXPECT_EQ(verify(o).code, 2);
  o.overrides.clear();
  EXPECT_EQ(verify(o).code, 2);

  // A run that fails (the time step cut below dt_min) is a verification failure, not an error.
  o.input = test::deck_path("quarter_five_spot.toml");
  o.overrides = kSmall;
  o.overrides.push_back("solver.newton.max_iterations=1");
  o.overrides.push_back("schedule.dt_min=0.5");
  r = verify(o);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("the run did not complete"), std::string::npos) << r.out;
}

TEST(Verify, CaseFilesGiveDeckBaselineAndTolerances)
{
  const auto good = write_text("good_case.toml", case_text());
  VerifyOptions o;
  o.case_file = good.string();
  o.backend = "cpu";
  auto r = verify(o);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("same_backend policy of " + good.string()), std::string::npos) << r.out;

  // The case's tolerances apply to a result file given with it: a pressure tolerance above a 1e-3
  // perturbation passes it.
  const auto bad = copy_of_baseline("perturbed_case.h5");
  perturb(bad, "reports/pressure", 1, 0, 1e-3);
  const auto loose = write_text("loose_case.toml", case_text("pressure = { rel = 2e-3, abs = 0.0 }"));
  o = VerifyOptions{};
  o.case_file = loose.string();
  o.input = bad.string();
  EXPECT_EQ(verify(o).code, 0);
  o.case_file = good.string();
  EXPECT_EQ(verify(o).code, 1);

  // Mistakes in a case file name the file, the line and the key.
  struct Bad {
    std::string text, expect;
  };
  const Bad cases[] = {
      {case_text("pressure = { rel = 1e-9, abs = 1e-7 }", "colour = \"red\"\n"), "colour: unknown key"},
      {case_text("pressure = { rel = -1e-9, abs = 1e-7 }"), "tolerance.same_backend.pressure.rel: must be a non-negative"},
      {case_text("pressure = { rel = 1e-9 }"), "tolerance.same_backend.pressure.abs: missing"},
      {case_text("presure = { rel = 1e-9, abs = 1e-7 }"), "tolerance.same_backend.presure: unknown field"},
      {"deck = \"x.toml\"\nbaseline = \"y.h5\"\n", "tolerance.same_backend: missing table"},
      {"deck = [1\n", "bad_case.toml:"},
  };
  for (const auto& c : cases) {
    const auto p = write_text("bad_case.toml", c.text);
    o = VerifyOptions{};
    o.case_file = p.string();
    r = verify(o);
    EXPECT_EQ(r.code, 2) << c.expect;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("bad_case\\.toml:[0-9]+:[0-9]+: "))) << r.err;
  }
}

TEST(Verify, RegenerateNeedsACaseAndWritesTheBaselineAtomically)
{
  VerifyOptions o;
  o.regenerate = true;
  auto r = verify(o);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--regenerate needs --case"), std::string::npos) << r.err;

  // A case pointing at a fresh baseline path: regenerate writes it, then verify passes against it.
  const fs::path fresh = fixture().dir / "regen" / "base.h5";
  std::string text = case_text();
  const std::string old_line = "baseline = \"" + fixture().baseline.string() + "\"";
  text.replace(text.find(old_line), old_line.size(), "baseline = \"" + fresh.string() + "\"");
  const auto c = write_text("regen_case.toml", text);
  o.case_file = c.string();
  o.backend = "cuda";
  EXPECT_EQ(verify(o).code, 2) << "baselines come from the CPU backend";
  o.backend = "auto";
  o.overrides = {"schedule.end_time=40"};
  r = verify(o);
  EXPECT_EQ(r.code, 2) << "a baseline is the case as written";
  EXPECT_NE(r.err.find("put overrides into the case file"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(fresh));
  o.overrides.clear();
  o.backend = "auto";
  r = verify(o);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_FALSE(fs::exists(fresh.string() + ".tmp"));
  EXPECT_EQ(read_results(fresh).backend, "cpu");
  o = VerifyOptions{};
  o.case_file = c.string();
  o.backend = "cpu";
  EXPECT_EQ(verify(o).code, 0);
}

// ---- generic over the model: a multicomponent-like test double -------------------------------

namespace {

struct FakeRun {
  physics::GridSpec gs;
  physics::RockSpec rock;
  std::optional<physics::Grid> grid;
  FakeRun()
  {
    gs.nx = 4, gs.ny = 3, gs.nz = 2;
    gs.dx = {1, 2, 3, 4}, gs.dy = {1, 1, 2}, gs.dz = {1, 2};
    rock.porosity.assign(24, 0.2);
    rock.porosity[5] = 0.0;
    rock.kx = rock.ky = rock.kz = std::vector<double>(24, 100 * units::millidarcy);
    grid.emplace(gs, rock);
  }
  // A result file of the test double: reports at 0 and 1 day, three steps.
  fs::path write(const std::string& name, const std::vector<std::string>& components = {"N2", "CO2", "C1"},
                 const std::string& type = "fake_multicomponent") const
  {
    const test::FakeModel model(*grid, components, type);
    RunConfig cfg;
    cfg.grid = gs, cfg.rock = rock;
    cfg.deck_text = cfg.resolved_toml = "[model]\n";
    const fs::path path = fixture().dir / "fake" / name;
    const std::size_t nc = components.size();
    ResultsWriter w(path, cfg, {"cpu", "d", "c", 1, "test"}, *grid, model, std::vector<double>(nc, 100.0));
    auto x = model.initial_state();
    w.write_report(0.0, x);
    for (int s = 1; s <= 3; ++s) {
      StepRecord st;
      st.time = 28800.0 * s, st.dt = 28800.0, st.newton_iterations = 2;
      st.norms.cnv = st.norms.mb = std::vector<double>(nc, 1e-9);
      for (std::size_t c = 0; c < nc; ++c) st.in_place.push_back(100.0 + double(c + s));
      std::vector<double> q(nc);
      for (std::size_t c = 0; c < nc; ++c) q[c] = (1.0 + double(c)) / 86400;
      st.wells = {{250e5 + s, q, false}, {150e5 - s, std::vector<double>(nc, -0.5 / 86400), true}};
      w.write_step(st);
    }
    for (std::size_t i = 0; i < x.size(); i += nc) x[i] *= 1.05, x[i + 1] *= 1.1;
    w.write_report(86400.0, x);
    w.commit({});
    return path;
  }
};

const FakeRun& fake()
{
  static const FakeRun f;
  return f;
}

}  // namespace

TEST(VerifyGeneric, EveryFieldTheFilesCarryIsCompared)
{
  const auto base = read_results(fake().write("base.h5"));
  const auto fields = verified_fields(base);
  std::vector<std::string> names, groups;
  for (const auto& f : fields) names.push_back(f.name), groups.push_back(f.group);
  EXPECT_EQ(names, (std::vector<std::string>{"pressure", "density", "x_N2", "x_CO2", "x_C1", "well_bhp",
                                             "well_N2_rate", "well_CO2_rate", "well_C1_rate", "step_time", "step_dt",
                                             "N2_in_place", "CO2_in_place", "C1_in_place"}));
  EXPECT_EQ(groups, (std::vector<std::string>{"pressure", "density", "mass_fraction", "mass_fraction",
                                              "mass_fraction", "well_bhp", "well_mass_rate", "well_mass_rate",
                                              "well_mass_rate", "step_time", "step_dt", "mass_in_place",
                                              "mass_in_place", "mass_in_place"}));
  EXPECT_EQ(fields[7].unit, "kg/day");

  // Against itself with the built-in policy (the multicomponent groups): everything passes;
  // 2 reports x 5 cell fields, 2 wells x (bhp + 3 rates), step_time, step_dt, 3 in place.
  const VerifyReport rep = compare_results(base, base, default_tolerances());
  EXPECT_TRUE(rep.pass());
  EXPECT_EQ(rep.comparisons.size(), 2u * 5 + 2 * 4 + 2 + 3);
  for (const auto& c : rep.comparisons)
    if (c.field == "x_CO2") {
      EXPECT_EQ(c.tolerance.rel, 1e-8);  // the mass_fraction group's
      EXPECT_EQ(c.tolerance.abs, 1e-9);
      EXPECT_EQ(c.unit, "1");
    }

  // One mass fraction perturbed by 1e-3 fails, named with its report step and cell; a rate too.
  const auto bad = fixture().dir / "fake" / "bad.h5";
  fs::copy_file(fixture().dir / "fake" / "base.h5", bad, fs::copy_options::overwrite_existing);
  perturb(bad, "reports/x_CO2", 1, 2, 1e-3);    // cell (3, 1, 1)
  perturb(bad, "wells/C1_rate", 2, 1, 1e-3);    // PROD after step 3
  perturb(bad, "steps/N2_in_place", 0, 0, 1e-3);
  const auto r = verify(files(bad, fixture().dir / "fake" / "base.h5"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL x_CO2 at report 1 (t = 1 d)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worst at cell (3, 1, 1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL well_C1_rate at well PROD"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kg/day"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL N2_in_place at steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verify: FAIL (3 of 23 comparisons"), std::string::npos) << r.out;
}

TEST(VerifyGeneric, TolerancesByNameThenGroup)
{
  const auto base_path = fake().write("tol_base.h5");
  const auto bad = fixture().dir / "fake" / "tol_bad.h5";
  fs::copy_file(base_path, bad, fs::copy_options::overwrite_existing);
  perturb(bad, "reports/x_CO2", 1, 0, 1e-3);
  const Results b = read_results(base_path), r = read_results(bad);
  const auto fields = verified_fields(b);

  Tolerances tol = default_tolerances();
  EXPECT_FALSE(compare_results(r, b, tol).pass());
  // A field's own entry wins over its group's ...
  tol["x_CO2"] = {2e-3, 0.0};
  EXPECT_TRUE(compare_results(r, b, tol).pass());
  // ... and the group's applies to every field of the group without one.
  tol.erase("x_CO2");
  tol["mass_fraction"] = {2e-3, 0.0};
  EXPECT_TRUE(compare_results(r, b, tol).pass());

  // --rtol takes a group name (every field of the group) or a field name.
  tol = default_tolerances();
  apply_tolerance_option(tol, "mass_fraction=2e-3", true, fields);
  EXPECT_EQ(tol.at("x_N2").rel, 2e-3);
  EXPECT_EQ(tol.at("x_N2").abs, 1e-9);  // the other part stays the group's
  EXPECT_TRUE(compare_results(r, b, tol).pass());
  tol = default_tolerances();
  apply_tolerance_option(tol, "x_CO2=2e-3", true, fields);
  EXPECT_EQ(tol.at("mass_fraction").rel, 1e-8) << "a field's option leaves its group alone";
  EXPECT_TRUE(compare_results(r, b, tol).pass());
  apply_tolerance_option(tol, "x_CO2=0", true, fields);
  EXPECT_FALSE(compare_results(r, b, tol).pass());

  // Names the files do not have are errors that list those they have.
  for (const char* option : {"x_Ar=1e-3", "sw=1e-3", "saturation=1"}) {
    try {
      apply_tolerance_option(tol, option, true, fields);
      ADD_FAILURE() << "no error for " << option;
    } catch (const VerifyError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("unknown field"), std::string::npos) << msg;
      EXPECT_NE(msg.find("fields: pressure, density, x_N2"), std::string::npos) << msg;
      EXPECT_NE(msg.find("groups: mass_fraction, well_mass_rate, mass_in_place"), std::string::npos) << msg;
    }
  }
  auto o = files(bad, base_path);
  o.rtol = {"x_Ar=1"};
  auto out = verify(o);
  EXPECT_EQ(out.code, 2);
  EXPECT_NE(out.err.find("--rtol x_Ar=1: unknown field 'x_Ar'"), std::string::npos) << out.err;
  o.rtol = {"mass_fraction=2e-3"};
  EXPECT_EQ(verify(o).code, 0) << verify(o).out;

  // A field with neither its name nor its group in the table is an error naming both.
  tol = default_tolerances();
  tol.erase("density");
  try {
    compare_results(r, b, tol);
    ADD_FAILURE() << "no error without a density tolerance";
  } catch (const VerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("no tolerance for field 'density'"), std::string::npos) << e.what();
  }
  tol = default_tolerances();
  tol.erase("mass_fraction");
  try {
    compare_results(r, b, tol);
    ADD_FAILURE() << "no error without a mass_fraction tolerance";
  } catch (const VerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("no tolerance for field 'x_N2' (nor for its group 'mass_fraction')"),
              std::string::npos)
        << e.what();
  }

  // The JSON report gives every compared field the tolerance it got (and names no other field).
  o.rtol = {};
  o.json_path = (fixture().dir / "fake" / "report.json").string();
  EXPECT_EQ(verify(o).code, 1);
  const Json json = read_json_file(o.json_path);  // a malformed report fails here
  EXPECT_EQ(json.at("pass"), false);
  const Json& used = json.at("tolerances");
  std::set<std::string> compared;
  for (const Json& c : json.at("comparisons")) compared.insert(c.at("field").get<std::string>());
  for (const char* field : {"x_C1", "well_CO2_rate"}) {
    ASSERT_TRUE(used.contains(field)) << field << ": " << used.dump(2);
    EXPECT_TRUE(used.at(field).at("rel").is_number()) << field;
    EXPECT_TRUE(used.at(field).at("abs").is_number()) << field;
    EXPECT_EQ(compared.count(field), 1u) << field;
  }
  EXPECT_EQ(used.at("x_C1").at("rel"), default_tolerances().at("mass_fraction").rel);
  EXPECT_EQ(used.at("x_C1").at("abs"), default_tolerances().at("mass_fraction").abs);
  EXPECT_FALSE(used.contains("well_oil_rate")) << "only the fields compared: " << used.dump(2);
  EXPECT_EQ(compared.count("well_oil_rate"), 0u) << "only the fields compared";
  for (const auto& [field, t] : used.items()) EXPECT_EQ(compared.count(field), 1u) << field << " was not compared";
}

TEST(VerifyGeneric, OtherModelsAndFieldListsAreErrors)
{
  const auto base = fake().write("list_base.h5");
  // Other components: the difference is named.
  const auto other = fake().write("list_other.h5", {"N2", "CO2", "H2S"});
  auto r = verify(files(other, base));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("different fields (model 'fake_multicomponent'): only in the result: x_H2S, well_H2S_rate, "
                       "H2S_in_place; only in the baseline: x_C1, well_C1_rate, C1_in_place"),
            std::string::npos)
      << r.err;
  // Fewer components.
  const auto fewer = fake().write("list_fewer.h5", {"N2", "CO2"});
  r = verify(files(fewer, base));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("only in the result: none; only in the baseline: x_C1"), std::string::npos) << r.err;
  // Another model.
  const auto model = fake().write("list_model.h5", {"N2", "CO2", "C1"}, "other_model");
  r = verify(files(model, base));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("different models: result 'other_model', baseline 'fake_multicomponent'"), std::string::npos)
      << r.err;
  // An oil_water result against this baseline.
  r = verify(files(fixture().baseline, base));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("different models: result 'oil_water'"), std::string::npos) << r.err;
}

TEST(VerifyGeneric, CaseFilesTakeGroupsAndNameUnknownEntries)
{
  const auto base = fake().write("case_base.h5");
  auto text = [&](const std::string& extra_line, const std::string& fraction_line) {
    std::string t = "description = \"fake\"\ndeck = \"unused.toml\"\nbaseline = \"" + base.string() + "\"\n";
    for (const char* table : {"same_backend", "cross_backend"}) {
      t += std::string("[tolerance.") + table + "]\n";
      t += "pressure = { rel = 1e-9, abs = 1e-7 }\ndensity = { rel = 1e-9, abs = 1e-6 }\n";
      t += fraction_line + "\n";
      t += "well_bhp = { rel = 1e-9, abs = 1e-7 }\nwell_mass_rate = { rel = 1e-8, abs = 1e-7 }\n"
           "step_time = { rel = 1e-12, abs = 0.0 }\nstep_dt = { rel = 1e-12, abs = 0.0 }\n"
           "mass_in_place = { rel = 1e-10, abs = 0.0 }\n" + extra_line + "\n";
    }
    return t;
  };
  auto o = VerifyOptions{};
  o.input = base.string();
  o.case_file = write_text("fake_case.toml", text("", "mass_fraction = { rel = 1e-8, abs = 1e-9 }")).string();
  auto r = verify(o);
  EXPECT_EQ(r.code, 0) << r.out << r.err;

  // Per-component entries instead of the group serve as well.
  o.case_file = write_text("fake_case.toml", text("x_C1 = { rel = 0.0, abs = 1e-9 }",
                                                  "x_N2 = { rel = 0.0, abs = 1e-9 }\nx_CO2 = { rel = 0.0, abs = 1e-9 }"))
                    .string();
  r = verify(o);
  EXPECT_EQ(r.code, 0) << r.out << r.err;

  // An entry that names neither a field nor a group of the files, and a field without a tolerance.
  o.case_file = write_text("bad_case.toml", text("x_Ar = { rel = 0.0, abs = 1e-9 }",
                                                 "mass_fraction = { rel = 1e-8, abs = 1e-9 }"))
                    .string();
  r = verify(o);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("tolerance.same_backend.x_Ar: unknown field (fields: pressure"), std::string::npos) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("bad_case\\.toml:[0-9]+:[0-9]+: "))) << r.err;
  o.case_file = write_text("bad_case.toml", text("", "x_N2 = { rel = 1e-8, abs = 1e-9 }")).string();
  r = verify(o);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("tolerance.same_backend.x_CO2: missing (every field needs a tolerance, by its name or its "
                       "group 'mass_fraction')"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("bad_case\\.toml:[0-9]+:[0-9]+: "))) << r.err;
}
