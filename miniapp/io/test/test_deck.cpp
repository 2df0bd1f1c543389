// Unit tests of the deck loader: SI values, defaults, properties, overrides, round trip, error messages.
#include "input/test/deck_test_util.hpp"
#include "miniapp/io/deck.hpp"
#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"
#include "linalg/preconditioners/cpr/cpr_options.hpp"
#include "linalg/preconditioners/default_solver.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/preconditioners/isai/isai_options.hpp"
#include "physics/oil_water/oil_water_model.hpp"
#include "miniapp/io/h5.hpp"
#include "physics/units.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace blockres {
namespace {

// The oil_water model's own tables of a loaded deck.
const physics::OilWaterInput& ow(const RunConfig& c)
{
  return dynamic_cast<const physics::OilWaterInput&>(*c.model_input);
}


namespace fs = std::filesystem;
namespace u = units;
using test_deck::edit;
using test_deck::expect_error_message;
using test_deck::line_of;

// A valid deck exercising most forms: per-axis arrays, per-layer and constant properties,
// both well controls, an explicit well index, end_time + report_interval.
const std::string kDeck = R"(title = "unit test deck"

[model]
type = "oil_water"

[grid]
nx = 4
ny = 3
nz = 2
dx = [10.0, 20.0, 30.0, 40.0]
dy = 5
dz = [1.0, 2.0]
top = 1000.0

[rock]
porosity = [0.2, 0.3]
kx = 100.0
kz = 10
compressibility = 1e-5

[fluid.water]
surface_density = 1000.0
viscosity = 0.5
compressibility = 4e-5

[fluid.oil]
surface_density = 800.0
viscosity = 2.0
fvf = 1.2

[fluid.relperm]
swc = 0.1
sor = 0.2
nw = 3

[initial]
pressure = 200.0
sw = 0.1

[[wells]]
name = "INJ"
type = "injector"
i = 1
j = 1
control = "rate"
rate = 100.0
bhp = 400.0

[[wells]]
name = "PROD"
type = "producer"
i = 4
j = 3
k_top = 2
k_bottom = 2
control = "bhp"
bhp = 150.0
well_index = [50.0]

[schedule]
end_time = 100.0
report_interval = 30.0
dt_initial = 0.5
)";

class DeckTest : public ::testing::Test {
 protected:
  void SetUp() override
  {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("blockres_test_deck_" + test + "_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override
  {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& text, const std::string& name = "case.toml") const
  {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  // The message of the InputError that loading `text` with `overrides` throws ("" if none).
  std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) const
  {
    const std::string path = write(text);
    return test_deck::input_error_of(text, [&] { load_deck(path, overrides); });
  }

  // Loading `text` fails with a message naming `key` at line `line` of the deck.
  void expect_error(const std::string& text, const std::string& key, int line,
                    const std::vector<std::string>& overrides = {}) const
  {
    expect_error_message(error_of(text, overrides), (dir_ / "case.toml").string(), line, key);
  }

  // As expect_error, for a deck made by replacing `from` with `to`; the error is expected on the
  // line holding `at` (default: the first line of `to`).
  void expect_edit_error(const std::string& from, const std::string& to, const std::string& key,
                         const std::string& at = {}) const
  {
    const std::string text = edit(kDeck, from, to);
    SCOPED_TRACE("edit: " + from + " -> " + to);
    expect_error(text, key, line_of(text, at.empty() ? to : at));
  }

  fs::path dir_;
};

void expect_same(const RunConfig& a, const RunConfig& b)
{
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.grid.nx, b.grid.nx);
  EXPECT_EQ(a.grid.ny, b.grid.ny);
  EXPECT_EQ(a.grid.nz, b.grid.nz);
  EXPECT_EQ(a.grid.dx, b.grid.dx);
  EXPECT_EQ(a.grid.dy, b.grid.dy);
  EXPECT_EQ(a.grid.dz, b.grid.dz);
  EXPECT_EQ(a.grid.top, b.grid.top);
  EXPECT_EQ(a.grid.gravity, b.grid.gravity);
  EXPECT_EQ(a.rock.porosity, b.rock.porosity);
  EXPECT_EQ(a.rock.kx, b.rock.kx);
  EXPECT_EQ(a.rock.ky, b.rock.ky);
  EXPECT_EQ(a.rock.kz, b.rock.kz);
  EXPECT_EQ(a.rock.compressibility, b.rock.compressibility);
  EXPECT_EQ(a.rock.reference_pressure, b.rock.reference_pressure);
  for (auto [pa, pb] : {std::pair{&ow(a).fluid.water, &ow(b).fluid.water}, std::pair{&ow(a).fluid.oil, &ow(b).fluid.oil}}) {
    EXPECT_EQ(pa->surface_density, pb->surface_density);
    EXPECT_EQ(pa->fvf_ref, pb->fvf_ref);
    EXPECT_EQ(pa->compressibility, pb->compressibility);
    EXPECT_EQ(pa->reference_pressure, pb->reference_pressure);
    EXPECT_EQ(pa->viscosity, pb->viscosity);
  }
  const auto &ra = ow(a).fluid.relperm, &rb = ow(b).fluid.relperm;
  EXPECT_EQ(ra.kind, rb.kind);
  EXPECT_EQ(ra.swc, rb.swc);
  EXPECT_EQ(ra.sor, rb.sor);
  EXPECT_EQ(ra.nw, rb.nw);
  EXPECT_EQ(ra.no, rb.no);
  EXPECT_EQ(ra.krw_max, rb.krw_max);
  EXPECT_EQ(ra.kro_max, rb.kro_max);
  EXPECT_EQ(ra.table, rb.table);
  EXPECT_EQ(ow(a).initial.hydrostatic, ow(b).initial.hydrostatic);
  EXPECT_EQ(ow(a).initial.pressure, ow(b).initial.pressure);
  EXPECT_EQ(ow(a).initial.datum_depth, ow(b).initial.datum_depth);
  EXPECT_EQ(ow(a).initial.sw, ow(b).initial.sw);
  ASSERT_EQ(ow(a).wells.size(), ow(b).wells.size());
  for (std::size_t w = 0; w < ow(a).wells.size(); ++w) {
    const auto &wa = ow(a).wells[w], &wb = ow(b).wells[w];
    EXPECT_EQ(wa.name, wb.name);
    EXPECT_EQ(wa.kind, wb.kind);
    EXPECT_EQ(wa.i, wb.i);
    EXPECT_EQ(wa.j, wb.j);
    EXPECT_EQ(wa.k_top, wb.k_top);
    EXPECT_EQ(wa.k_bottom, wb.k_bottom);
    EXPECT_EQ(wa.control, wb.control);
    EXPECT_EQ(wa.target, wb.target);
    EXPECT_EQ(wa.rate, wb.rate);
    EXPECT_EQ(wa.bhp, wb.bhp);
    EXPECT_EQ(wa.radius, wb.radius);
    EXPECT_EQ(wa.skin, wb.skin);
    EXPECT_EQ(wa.well_index, wb.well_index);
    EXPECT_EQ(wa.ref_depth, wb.ref_depth);
  }
  EXPECT_EQ(a.schedule.report_times, b.schedule.report_times);
  EXPECT_EQ(a.schedule.dt_initial, b.schedule.dt_initial);
  EXPECT_EQ(a.schedule.dt_max, b.schedule.dt_max);
  EXPECT_EQ(a.schedule.dt_min, b.schedule.dt_min);
  EXPECT_EQ(a.newton.max_iterations, b.newton.max_iterations);
  EXPECT_EQ(a.newton.tol_cnv, b.newton.tol_cnv);
  EXPECT_EQ(a.newton.tol_mb, b.newton.tol_mb);
  EXPECT_EQ(a.newton.max_dsw, b.newton.max_dsw);
  EXPECT_EQ(a.newton.max_dp_rel, b.newton.max_dp_rel);
  EXPECT_EQ(a.newton.cut_factor, b.newton.cut_factor);
  EXPECT_EQ(a.newton.growth_factor, b.newton.growth_factor);
  EXPECT_EQ(a.newton.target_iterations, b.newton.target_iterations);
  EXPECT_EQ(a.linear.krylov.method, b.linear.krylov.method);
  EXPECT_EQ(a.linear.krylov.rel_tol, b.linear.krylov.rel_tol);
  EXPECT_EQ(a.linear.krylov.max_iterations, b.linear.krylov.max_iterations);
  EXPECT_EQ(a.linear.krylov.restart, b.linear.krylov.restart);
  EXPECT_EQ(a.linear.krylov.idr_s, b.linear.krylov.idr_s);
  EXPECT_EQ(a.linear.krylov.reference, b.linear.krylov.reference);
  EXPECT_EQ(a.linear.forcing.kind, b.linear.forcing.kind);
  EXPECT_EQ(a.linear.forcing.eta_min, b.linear.forcing.eta_min);
  EXPECT_EQ(a.linear.forcing.eta_max, b.linear.forcing.eta_max);
  EXPECT_EQ(a.linear.forcing.eta_initial, b.linear.forcing.eta_initial);
  EXPECT_EQ(a.linear.preconditioner, b.linear.preconditioner);  // the type and every option
  EXPECT_EQ(a.output.directory, b.output.directory);
  EXPECT_EQ(a.output.name, b.output.name);
}

// ---- valid decks -------------------------------------------------------------------------------

TEST_F(DeckTest, FullDeckInSiUnits)
{
  const std::string path = write(kDeck, "my_case.toml");
  const RunConfig c = load_deck(path);
  EXPECT_EQ(c.deck_path, path);
  EXPECT_EQ(c.deck_text, kDeck);
  EXPECT_EQ(c.model, "oil_water");

  EXPECT_EQ(c.grid.nx, 4);
  EXPECT_EQ(c.grid.ny, 3);
  EXPECT_EQ(c.grid.nz, 2);
  EXPECT_EQ(c.grid.dx, (std::vector<double>{10, 20, 30, 40}));
  EXPECT_EQ(c.grid.dy, (std::vector<double>{5, 5, 5}));
  EXPECT_EQ(c.grid.dz, (std::vector<double>{1, 2}));
  EXPECT_EQ(c.grid.top, 1000.0);
  EXPECT_TRUE(c.grid.gravity);

  // Per-layer porosity, constant kx, ky defaulting to kx, kz given, all per cell in natural order.
  ASSERT_EQ(c.rock.porosity.size(), 24u);
  EXPECT_EQ(c.rock.porosity[0], 0.2);
  EXPECT_EQ(c.rock.porosity[11], 0.2);
  EXPECT_EQ(c.rock.porosity[12], 0.3);
  EXPECT_EQ(c.rock.porosity[23], 0.3);
  ASSERT_EQ(c.rock.kx.size(), 24u);
  EXPECT_DOUBLE_EQ(c.rock.kx[5], 100.0 * 9.869233e-16);
  EXPECT_EQ(c.rock.ky, c.rock.kx);
  EXPECT_DOUBLE_EQ(c.rock.kz[23], 10.0 * 9.869233e-16);
  EXPECT_DOUBLE_EQ(c.rock.compressibility, 1e-10);  // 1e-5 / bar
  EXPECT_DOUBLE_EQ(c.rock.reference_pressure, 101325.0);

  EXPECT_EQ(ow(c).fluid.water.surface_density, 1000.0);
  EXPECT_DOUBLE_EQ(ow(c).fluid.water.viscosity, 0.5e-3);
  EXPECT_DOUBLE_EQ(ow(c).fluid.water.compressibility, 4e-10);
  EXPECT_EQ(ow(c).fluid.water.fvf_ref, 1.0);
  EXPECT_DOUBLE_EQ(ow(c).fluid.oil.viscosity, 2e-3);
  EXPECT_EQ(ow(c).fluid.oil.fvf_ref, 1.2);
  EXPECT_EQ(ow(c).fluid.oil.compressibility, 0.0);
  EXPECT_EQ(ow(c).fluid.relperm.kind, physics::RelpermSpec::Kind::corey);
  EXPECT_EQ(ow(c).fluid.relperm.swc, 0.1);
  EXPECT_EQ(ow(c).fluid.relperm.sor, 0.2);
  EXPECT_EQ(ow(c).fluid.relperm.nw, 3.0);
  EXPECT_EQ(ow(c).fluid.relperm.no, 2.0);
  EXPECT_EQ(ow(c).fluid.relperm.kro_max, 1.0);

  EXPECT_FALSE(ow(c).initial.hydrostatic);
  EXPECT_DOUBLE_EQ(ow(c).initial.pressure, 200e5);
  EXPECT_EQ(ow(c).initial.sw, 0.1);

  ASSERT_EQ(ow(c).wells.size(), 2u);
  const auto& inj = ow(c).wells[0];
  EXPECT_EQ(inj.name, "INJ");
  EXPECT_EQ(inj.kind, physics::WellKind::injector);
  EXPECT_EQ(inj.i, 0);
  EXPECT_EQ(inj.j, 0);
  EXPECT_EQ(inj.k_top, 0);
  EXPECT_EQ(inj.k_bottom, 1);  // default: every layer
  EXPECT_EQ(inj.control, physics::WellControlMode::rate);
  EXPECT_EQ(inj.target, physics::RateTarget::water);
  EXPECT_DOUBLE_EQ(inj.rate, 100.0 / 86400.0);
  EXPECT_DOUBLE_EQ(inj.bhp, 400e5);
  EXPECT_EQ(inj.radius, 0.1);
  EXPECT_EQ(inj.skin, 0.0);
  EXPECT_TRUE(inj.well_index.empty());
  EXPECT_FALSE(inj.ref_depth.has_value());
  const auto& prod = ow(c).wells[1];
  EXPECT_EQ(prod.kind, physics::WellKind::producer);
  EXPECT_EQ(prod.i, 3);
  EXPECT_EQ(prod.j, 2);
  EXPECT_EQ(prod.k_top, 1);
  EXPECT_EQ(prod.k_bottom, 1);
  EXPECT_EQ(prod.control, physics::WellControlMode::bhp);
  EXPECT_EQ(prod.target, physics::RateTarget::liquid);
  EXPECT_DOUBLE_EQ(prod.bhp, 150e5);
  ASSERT_EQ(prod.well_index.size(), 1u);
  EXPECT_DOUBLE_EQ(prod.well_index[0], 50.0 * 9.869233e-16);

  EXPECT_EQ(c.schedule.report_times, (std::vector<double>{30 * u::day, 60 * u::day, 90 * u::day, 100 * u::day}));
  EXPECT_EQ(c.schedule.dt_initial, 0.5 * u::day);
  EXPECT_EQ(c.schedule.dt_max, 30 * u::day);
  EXPECT_DOUBLE_EQ(c.schedule.dt_min, 1e-6 * u::day);

  EXPECT_EQ(c.newton.max_iterations, 12);
  EXPECT_EQ(c.newton.tol_cnv, 1e-3);
  EXPECT_EQ(c.newton.tol_mb, 1e-7);
  EXPECT_EQ(c.newton.max_dsw, 0.2);
  EXPECT_EQ(c.newton.cut_factor, 0.5);
  EXPECT_EQ(c.newton.target_iterations, 0);  // the iteration-count controller is off by default
  EXPECT_FALSE(c.newton.predict_failure);     // so is the failure prediction
  // The default linear solver of oil_water (block size 2, compressible): FGMRES(30) + CPR (issue 29).
  EXPECT_EQ(c.linear.krylov.method, KrylovMethod::fgmres);
  EXPECT_EQ(c.linear.forcing.kind, ForcingKind::eisenstat_walker);  // inexact Newton (issue 30)
  EXPECT_EQ(c.linear.krylov.rel_tol, 0.01);                          // its first term
  EXPECT_EQ(c.linear.krylov.max_iterations, 1000);
  EXPECT_EQ(c.linear.krylov.restart, 30);
  EXPECT_EQ(c.linear.preconditioner.type, "cpr");
  EXPECT_EQ(c.output.directory, "output");
  EXPECT_EQ(c.output.name, "my_case");  // the deck's stem
}

TEST_F(DeckTest, ResolvedDeckShowsDefaults)
{
  const RunConfig c = load_deck(write(kDeck));
  const toml::table t = toml::parse(c.resolved_toml);
  EXPECT_EQ(t.at_path("schedule.dt_max").value<double>(), 30.0);
  EXPECT_EQ(t.at_path("schedule.dt_min").value<double>(), 1e-6);
  EXPECT_EQ(t.at_path("solver.newton.max_iterations").value<int64_t>(), 12);
  EXPECT_EQ(t.at_path("solver.linear.method").value<std::string>(), "fgmres");  // the model's default (issue 29)
  EXPECT_EQ(t.at_path("solver.linear.preconditioner.type").value<std::string>(), "cpr");
  EXPECT_EQ(t.at_path("wells[1].rate_target").value<std::string>(), "liquid");
  EXPECT_EQ(t.at_path("wells[0].k_bottom").value<int64_t>(), 2);
  EXPECT_EQ(t.at_path("wells[0].radius").value<double>(), 0.1);
  EXPECT_EQ(t.at_path("output.name").value<std::string>(), "case");
  EXPECT_EQ(t.at_path("output.directory").value<std::string>(), "output");
  EXPECT_EQ(t.at_path("fluid.relperm.kro_max").value<double>(), 1.0);
  EXPECT_EQ(t.at_path("grid.gravity").value<bool>(), true);
  EXPECT_EQ(t.at_path("rock.ky").value<double>(), 100.0);
  EXPECT_EQ(t.at_path("rock.reference_pressure").value<double>(), 1.01325);
  EXPECT_FALSE(t.at_path("wells[0].ref_depth"));  // no default to show
}

// Issue 28 item 11: a reference pressure left at its default (1.01325 bar) is filled into the
// resolved deck and noted for the run log where it matters (a compressibility > 0): here the rock
// and the water phase; oil has no compressibility, so its default p_ref changes nothing and is not
// noted. Given keys are not noted and keep their values.
TEST_F(DeckTest, DefaultReferencePressuresAreNoted)
{
  const RunConfig c = load_deck(write(kDeck));
  const toml::table t = toml::parse(c.resolved_toml);
  EXPECT_EQ(t.at_path("rock.reference_pressure").value<double>(), 1.01325);
  EXPECT_EQ(t.at_path("fluid.water.reference_pressure").value<double>(), 1.01325);
  EXPECT_EQ(t.at_path("fluid.oil.reference_pressure").value<double>(), 1.01325);
  ASSERT_EQ(c.notes.size(), 2u);  // the rock's reference pressure, then the linear solver's line
  EXPECT_NE(c.notes[0].find("rock.reference_pressure not given: the default 1.01325 bar (1 atm)"), std::string::npos)
      << c.notes[0];
  EXPECT_EQ(c.notes[1].rfind("linear solver: ", 0), 0u) << c.notes[1];
  ASSERT_EQ(c.model_input->notes.size(), 1u);
  EXPECT_NE(c.model_input->notes[0].find("fluid.water.reference_pressure not given"), std::string::npos)
      << c.model_input->notes[0];

  const RunConfig g = load_deck(write(kDeck), {"rock.reference_pressure=150", "fluid.water.reference_pressure=150"});
  ASSERT_EQ(g.notes.size(), 1u);  // the linear solver's line only
  EXPECT_EQ(g.notes[0].rfind("linear solver: ", 0), 0u) << g.notes[0];
  EXPECT_TRUE(g.model_input->notes.empty());
  EXPECT_DOUBLE_EQ(g.rock.reference_pressure, 150e5);
}

TEST_F(DeckTest, ResolvedDeckRoundTrips)
{
  const RunConfig a = load_deck(write(kDeck), {"wells.PROD.skin=1.5", "solver.newton.max_iterations=7"});
  const RunConfig b = load_deck(write(a.resolved_toml, "resolved.toml"));
  expect_same(a, b);
  EXPECT_EQ(b.resolved_toml, a.resolved_toml);
  EXPECT_EQ(ow(b).wells[1].skin, 1.5);
  EXPECT_EQ(b.newton.max_iterations, 7);
}

TEST_F(DeckTest, RoundTripWithFieldsAndTables)
{
  std::vector<double> poro(24);
  for (std::size_t c = 0; c < poro.size(); ++c) poro[c] = 0.1 + 0.01 * double(c);
  {
    h5::File f = h5::File::create(dir_ / "poro.h5");
    h5::write_dataset(f.id(), "phi", std::span<const double>(poro));
    f.close();
  }
  std::string text = edit(kDeck, "porosity = [0.2, 0.3]", R"(porosity = { file = "poro.h5", dataset = "phi" })");
  text = edit(text, "kx = 100.0", "kx = { mean_log = 4.0, std_log = 1.0, correlation_length = 2.5, seed = 9 }");
  text = edit(text, "[fluid.relperm]\nswc = 0.1\nsor = 0.2\nnw = 3",
              "[fluid.relperm]\ntype = \"table\"\n"
              "table = [[0.0, 0.0, 1.0, 0.5], [0.7, 0.4, 0.1, 0.1], [1.0, 1.0, 0.0, 0.0]]");
  text = edit(text, "sw = 0.1", "sw = 0.1\ndatum_depth = 1001.5");
  text = edit(text, "end_time = 100.0\nreport_interval = 30.0", "report_times = [1, 2.5, 10]");
  const RunConfig a = load_deck(write(text));
  EXPECT_EQ(a.rock.porosity, poro);
  EXPECT_EQ(ow(a).fluid.relperm.kind, physics::RelpermSpec::Kind::table);
  EXPECT_EQ(ow(a).fluid.relperm.table, (std::vector<double>{0.0, 0.0, 1.0, 0.5e5, 0.7, 0.4, 0.1, 0.1e5, 1, 1, 0, 0}));
  EXPECT_TRUE(ow(a).initial.hydrostatic);
  EXPECT_EQ(ow(a).initial.datum_depth, 1001.5);
  EXPECT_EQ(a.schedule.report_times, (std::vector<double>{1 * u::day, 2.5 * u::day, 10 * u::day}));

  // The resolved deck names the property file absolutely, so it loads from anywhere.
  fs::create_directories(dir_ / "elsewhere");
  const RunConfig b = load_deck(write(a.resolved_toml, "elsewhere/resolved.toml"));
  expect_same(a, b);
}

TEST_F(DeckTest, Hdf5Properties)
{
  // 3-D [nz][ny][nx] kx and 1-D ky in a sub-folder, addressed relative to the deck's folder.
  std::vector<double> kx(24), ky(24);
  for (std::size_t c = 0; c < 24; ++c) kx[c] = 1.0 + double(c), ky[c] = 100.0 - double(c);
  fs::create_directories(dir_ / "data");
  {
    h5::File f = h5::File::create(dir_ / "data" / "perm.h5");
    h5::write_dataset(f.id(), "kx", std::span<const double>(kx), {2, 3, 4});
    h5::write_dataset(f.id(), "ky", std::span<const double>(ky));
    f.close();
  }
  std::string text = edit(kDeck, "kx = 100.0",
                          "kx = { file = \"data/perm.h5\", dataset = \"/kx\" }\n"
                          "ky = { file = \"data/perm.h5\", dataset = \"ky\" }");
  const RunConfig c = load_deck(write(text));
  ASSERT_EQ(c.rock.kx.size(), 24u);
  for (std::size_t i = 0; i < 24; ++i) {
    EXPECT_DOUBLE_EQ(c.rock.kx[i], kx[i] * u::millidarcy);
    EXPECT_DOUBLE_EQ(c.rock.ky[i], ky[i] * u::millidarcy);
  }
  // Cell (i=2, j=3, k=1) 1-based is index 1 + 4*2 = 9.
  EXPECT_DOUBLE_EQ(c.rock.kx[9], 10.0 * u::millidarcy);
}

TEST_F(DeckTest, LogNormalPropertyIsReproducible)
{
  const std::string lognormal = "kx = { mean_log = 4.6, std_log = 0.8, correlation_length = 2, seed = 7 }";
  const RunConfig a = load_deck(write(edit(kDeck, "kx = 100.0", lognormal)));
  const RunConfig b = load_deck(write(edit(kDeck, "kx = 100.0", lognormal)));
  const RunConfig c = load_deck(write(edit(kDeck, "kx = 100.0", lognormal)), {"rock.kx.seed=8"});
  ASSERT_EQ(a.rock.kx.size(), 24u);
  EXPECT_EQ(a.rock.kx, b.rock.kx);
  EXPECT_NE(a.rock.kx, c.rock.kx);
  EXPECT_EQ(a.rock.ky, a.rock.kx);  // ky defaults to the same field
  for (double k : a.rock.kx) EXPECT_GT(k, 0.0);
  double sum_log = 0.0;
  for (double k : a.rock.kx) sum_log += std::log(k / u::millidarcy);
  EXPECT_NEAR(sum_log / 24.0, 4.6, 1e-9);  // the field is normalised to mean_log exactly
  EXPECT_EQ(toml::parse(a.resolved_toml).at_path("rock.kx.correlation_length").value<double>(), 2.0);
}

TEST_F(DeckTest, PermeabilitySetsAllThree)
{
  const std::string text = edit(edit(kDeck, "kx = 100.0\n", "permeability = [50, 70]\n"), "kz = 10\n", "");
  const RunConfig c = load_deck(write(text));
  EXPECT_DOUBLE_EQ(c.rock.kx[0], 50 * u::millidarcy);
  EXPECT_DOUBLE_EQ(c.rock.kz[23], 70 * u::millidarcy);
  EXPECT_EQ(c.rock.kx, c.rock.ky);
  EXPECT_EQ(c.rock.kx, c.rock.kz);
  expect_same(c, load_deck(write(c.resolved_toml, "again.toml")));
}

TEST_F(DeckTest, ReportTimesFromEndTime)
{
  const auto times = [&](const std::string& end, const std::string& interval) {
    std::string text = edit(kDeck, "end_time = 100.0", "end_time = " + end);
    text = edit(text, "report_interval = 30.0", interval.empty() ? "" : "report_interval = " + interval);
    return load_deck(write(text)).schedule.report_times;
  };
  EXPECT_EQ(times("90", "30"), (std::vector<double>{30 * u::day, 60 * u::day, 90 * u::day}));  // no duplicate end
  EXPECT_EQ(times("100", ""), (std::vector<double>{100 * u::day}));
  const auto tenths = times("1.0", "0.1");  // 10 * 0.1 is not exactly 1: still ten reports
  ASSERT_EQ(tenths.size(), 10u);
  EXPECT_EQ(tenths.back(), 1.0 * u::day);
}

// ECLIPSE's TSTEP: report step lengths in days, a report after each; "N*length" repeats a length.
TEST_F(DeckTest, TstepGivesReportStepLengths)
{
  const auto times = [&](const std::string& tstep) {
    return load_deck(write(edit(kDeck, "end_time = 100.0\nreport_interval = 30.0", "tstep = " + tstep)))
        .schedule.report_times;
  };
  EXPECT_EQ(times("[1, 2, 5, 10]"), (std::vector<double>{1 * u::day, 3 * u::day, 8 * u::day, 18 * u::day}));
  EXPECT_EQ(times("[10, \"3*30\", 0.5]"),
            (std::vector<double>{10 * u::day, 40 * u::day, 70 * u::day, 100 * u::day, 100.5 * u::day}));
  EXPECT_EQ(times("[\" 2 * 0.25 \"]"), (std::vector<double>{0.25 * u::day, 0.5 * u::day}));
  // The running sums in days: the same report times as report_times with those sums.
  const RunConfig c = load_deck(write(edit(kDeck, "end_time = 100.0\nreport_interval = 30.0", "tstep = [0.1, 0.2, 0.3]")));
  const RunConfig r = load_deck(write(edit(kDeck, "end_time = 100.0\nreport_interval = 30.0",
                                           "report_times = [0.1, 0.30000000000000004, 0.6000000000000001]")));
  EXPECT_EQ(c.schedule.report_times, r.schedule.report_times);
  // The resolved deck keeps tstep (no end_time filled in) and loads to the same schedule.
  const toml::table resolved = toml::parse(c.resolved_toml);
  EXPECT_TRUE(resolved.at_path("schedule.tstep").is_array());
  EXPECT_FALSE(resolved.at_path("schedule.end_time"));
  expect_same(c, load_deck(write(c.resolved_toml, "resolved.toml")));
  // From the command line, in place of the deck's end_time and report_interval.
  const RunConfig o = load_deck(write(edit(kDeck, "end_time = 100.0\nreport_interval = 30.0", "tstep = [1]")),
                                {"schedule.tstep=[4, \"2*3\"]"});
  EXPECT_EQ(o.schedule.report_times, (std::vector<double>{4 * u::day, 7 * u::day, 10 * u::day}));
  EXPECT_NE(error_of(kDeck, {"schedule.tstep=[4]"}).find("schedule.end_time: cannot be combined with schedule.tstep"),
            std::string::npos);
}

TEST_F(DeckTest, TstepErrors)
{
  const std::string sched = "end_time = 100.0\nreport_interval = 30.0";
  // One way to give the report times: tstep with any of the others is an error at the other key.
  expect_edit_error(sched, "tstep = [1, 2]\nend_time = 100.0", "schedule.end_time", "end_time");
  expect_edit_error(sched, "tstep = [1, 2]\nreport_interval = 30.0", "schedule.report_interval", "report_interval");
  expect_edit_error(sched, "report_times = [1, 3]\ntstep = [1, 2]", "schedule.report_times", "report_times");
  EXPECT_NE(error_of(edit(kDeck, sched, "tstep = [1, 2]\nend_time = 100.0")).find("cannot be combined with schedule.tstep"),
            std::string::npos);
  // Lengths must be numbers > 0 (or "N*length" with N >= 1 and length > 0).
  expect_edit_error(sched, "tstep = [1, -2]", "schedule.tstep[1]");
  expect_edit_error(sched, "tstep = [1, 0]", "schedule.tstep[1]");
  expect_edit_error(sched, "tstep = [nan]", "schedule.tstep[0]");
  expect_edit_error(sched, "tstep = [true]", "schedule.tstep[0]");
  expect_edit_error(sched, "tstep = []", "schedule.tstep");
  expect_edit_error(sched, "tstep = 10", "schedule.tstep");
  expect_edit_error(sched, "tstep = [1, \"3x30\"]", "schedule.tstep[1]");
  expect_edit_error(sched, "tstep = [\"0*30\"]", "schedule.tstep[0]");
  expect_edit_error(sched, "tstep = [\"2*-1\"]", "schedule.tstep[0]");
  expect_edit_error(sched, "tstep = [\"2*\"]", "schedule.tstep[0]");
  expect_edit_error(sched, "tstep = [\"*2\"]", "schedule.tstep[0]");
  expect_edit_error(sched, "tstep = [\"2*1e400\"]", "schedule.tstep[0]");
  expect_edit_error(sched, "tstep = [\"1000000*1\", 1]", "schedule.tstep[1]");
  const std::string many = error_of(edit(kDeck, sched, "tstep = [\"1000001*1\"]"));
  EXPECT_NE(many.find("more than 1000000 report steps"), std::string::npos) << many;
  const std::string bad = error_of(edit(kDeck, sched, "tstep = [\"3x30\"]"));
  EXPECT_NE(bad.find("\"N*length\""), std::string::npos) << bad;
  // A step too short to change the sum (or a sum that overflows) is no report step.
  expect_edit_error(sched, "tstep = [1e20, 1]", "schedule.tstep");
  expect_edit_error(sched, "tstep = [1e308, 1e308]", "schedule.tstep");
}

// A property as one value per cell inline (ECLIPSE's PORO/PERMX), i fastest, then j, then k.
TEST_F(DeckTest, PerCellPropertiesInline)
{
  std::string poro, perm;
  for (int c = 0; c < 24; ++c) {
    poro += fmt::format("{}{}", c ? ", " : "", 0.1 + 0.01 * c);
    perm += fmt::format("{}{}", c ? ", " : "", 10 * (c + 1));
  }
  const std::string text =
      edit(edit(kDeck, "porosity = [0.2, 0.3]", "porosity = [" + poro + "]"), "kx = 100.0", "kx = [" + perm + "]");
  const RunConfig c = load_deck(write(text));
  ASSERT_EQ(c.rock.porosity.size(), 24u);
  for (std::size_t k = 0; k < 24; ++k) {
    EXPECT_EQ(c.rock.porosity[k], 0.1 + 0.01 * double(k)) << k;
    EXPECT_EQ(c.rock.kx[k], 10.0 * double(k + 1) * u::millidarcy) << k;
    EXPECT_EQ(c.rock.ky[k], c.rock.kx[k]) << k;  // ky defaults to kx
  }
  EXPECT_EQ(c.rock.kz, std::vector<double>(24, 10 * u::millidarcy));
  expect_same(c, load_deck(write(c.resolved_toml, "resolved.toml")));
  // The same through --set.
  const RunConfig o = load_deck(write(kDeck), {"rock.kx=[" + perm + "]"});
  EXPECT_EQ(o.rock.kx, c.rock.kx);
}

TEST_F(DeckTest, PerCellPropertyErrors)
{
  std::string values23, negative;
  for (int c = 0; c < 23; ++c) values23 += fmt::format("{}0.2", c ? ", " : "");
  for (int c = 0; c < 24; ++c) negative += fmt::format("{}{}", c ? ", " : "", c == 5 ? -1 : 100);
  // Neither nz nor nx*ny*nz values: the message names both counts.
  expect_edit_error("porosity = [0.2, 0.3]", "porosity = [" + values23 + "]", "rock.porosity");
  const std::string count = error_of(edit(kDeck, "porosity = [0.2, 0.3]", "porosity = [" + values23 + "]"));
  EXPECT_NE(count.find("must have nz = 2 values (one per layer) or nx*ny*nz = 24 values"), std::string::npos) << count;
  EXPECT_NE(count.find("has 23"), std::string::npos) << count;
  // A bad value names its index and its cell (i, j, k), 1-based.
  expect_edit_error("kx = 100.0", "kx = [" + negative + "]", "rock.kx[5]");
  const std::string neg = error_of(edit(kDeck, "kx = 100.0", "kx = [" + negative + "]"));
  EXPECT_NE(neg.find("rock.kx[5]: cell (2, 2, 1) must be >= 0"), std::string::npos) << neg;
  std::string high = "1.5";
  for (int c = 1; c < 24; ++c) high += ", 0.2";
  expect_edit_error("porosity = [0.2, 0.3]", "porosity = [" + high + "]", "rock.porosity[0]");
  std::string zeros = "0";
  for (int c = 1; c < 24; ++c) zeros += ", 0";
  expect_edit_error("porosity = [0.2, 0.3]", "porosity = [" + zeros + "]", "rock.porosity");
  std::string text = "\"a\"";
  for (int c = 1; c < 24; ++c) text += ", 0.2";
  expect_edit_error("porosity = [0.2, 0.3]", "porosity = [" + text + "]", "rock.porosity[0]");
}

TEST_F(DeckTest, Overrides)
{
  const RunConfig c = load_deck(write(kDeck), {
                                                  "initial.pressure=250",           // scalar
                                                  "solver.linear.method=gmres",     // bare word
                                                  "output.name = \"renamed\"",      // TOML string, spaces
                                                  "grid.dx.1=25",                   // array element
                                                  "wells.PROD.bhp=120",             // well by name
                                                  "wells.0.rate=200",               // well by index
                                                  "solver.newton.cut_factor=0.25",  // creates tables
                                                  "rock.porosity=[0.25, 0.35]",     // array value
                                                  "solver.newton.target_iterations=7",
                                                  "solver.newton.predict_failure=true",
                                              });
  EXPECT_DOUBLE_EQ(ow(c).initial.pressure, 250e5);
  EXPECT_EQ(c.linear.krylov.method, KrylovMethod::gmres);
  EXPECT_EQ(c.output.name, "renamed");
  EXPECT_EQ(c.grid.dx, (std::vector<double>{10, 25, 30, 40}));
  EXPECT_DOUBLE_EQ(ow(c).wells[1].bhp, 120e5);
  EXPECT_DOUBLE_EQ(ow(c).wells[0].rate, 200.0 / 86400.0);
  EXPECT_EQ(c.newton.cut_factor, 0.25);
  EXPECT_EQ(c.rock.porosity[0], 0.25);
  EXPECT_EQ(c.newton.target_iterations, 7);
  EXPECT_TRUE(c.newton.predict_failure);
  EXPECT_NE(error_of(kDeck, {"solver.newton.predict_failure=1"}).find("predict_failure"), std::string::npos);
  EXPECT_NE(error_of(kDeck, {"solver.newton.target_iterations=-1"}).find("target_iterations"), std::string::npos);
  EXPECT_NE(error_of(kDeck, {"solver.newton.target_iterations=2.5"}).find("target_iterations"), std::string::npos);
  EXPECT_EQ(c.deck_text, kDeck);  // the verbatim deck; the overrides are in resolved_toml
  const toml::table resolved = toml::parse(c.resolved_toml);
  EXPECT_EQ(resolved.at_path("solver.linear.method").value<std::string>(), "gmres");
  EXPECT_EQ(resolved.at_path("solver.newton.cut_factor").value<double>(), 0.25);
  expect_same(c, load_deck(write(c.resolved_toml, "resolved.toml")));
}

// ---- errors ------------------------------------------------------------------------------------

TEST_F(DeckTest, MessageFormat)
{
  const std::string path = (dir_ / "case.toml").string();
  EXPECT_EQ(error_of(edit(kDeck, "nx = 4", "nx = 4.0")),
            path + ":" + std::to_string(line_of(kDeck, "nx = 4")) + ":6: grid.nx: must be an integer (got 4.0)");
  EXPECT_EQ(error_of(edit(kDeck, "viscosity = 0.5", "viscosity = \"thick\"")),
            path + ":" + std::to_string(line_of(kDeck, "viscosity = 0.5")) +
                ":13: fluid.water.viscosity: must be a number (got 'thick')");
  EXPECT_EQ(error_of(kDeck, {"wells.PROD.bhp=-3"}),
            "--set wells.PROD.bhp=-3: wells[1].bhp (well 'PROD'): must be > 0 (got -3)");
}

TEST_F(DeckTest, MissingAndUnreadableDeck)
{
  const std::string missing = (dir_ / "nope.toml").string();
  try {
    load_deck(missing);
    ADD_FAILURE() << "no error for a missing deck";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_deck(dir_.string()), InputError);  // a directory
}

TEST_F(DeckTest, SyntaxError)
{
  const std::string text = edit(kDeck, "ny = 3", "ny = = 3");
  const std::string msg = error_of(text);
  EXPECT_EQ(msg.rfind((dir_ / "case.toml").string() + ":" + std::to_string(line_of(text, "ny = = 3")) + ":", 0), 0u)
      << msg;
}

TEST_F(DeckTest, UnknownKeys)
{
  expect_edit_error("nx = 4", "nx = 4\nnxx = 4", "grid.nxx", "nxx");
  expect_edit_error("bhp = 150.0", "bhp = 150.0\nrat = 3", "wells[1].rat (well 'PROD')", "rat = 3");
  expect_edit_error("kx = 100.0", "kx = { mean_log = 1, std_log = 1, seed = 1, corr = 2 }", "rock.kx.corr");
  expect_edit_error("[initial]", "[initials]", "initials");
  expect_edit_error("[fluid.relperm]", "[fluid.relperms]", "fluid.relperms");
  EXPECT_NE(error_of(edit(kDeck, "nx = 4", "nx = 4\nnz_ = 2")).find("did you mean"), std::string::npos);
}

TEST_F(DeckTest, MissingKeys)
{
  // Reported at the table that should hold the key, or line 1 for a missing top-level table.
  expect_error(edit(kDeck, "nx = 4\n", ""), "grid.nx", line_of(kDeck, "[grid]"));
  expect_error(edit(kDeck, "bhp = 400.0\n", ""), "wells[0].bhp (well 'INJ')", line_of(kDeck, "[[wells]]"));
  expect_error(edit(kDeck, "rate = 100.0\n", ""), "wells[0].rate (well 'INJ')", line_of(kDeck, "[[wells]]"));
  expect_error(edit(kDeck, "[initial]\npressure = 200.0\nsw = 0.1\n", ""), "initial", 1);
  expect_error(edit(kDeck, "kx = 100.0\n", ""), "rock.kx", line_of(kDeck, "[rock]"));
  const std::string no_times = edit(kDeck, "end_time = 100.0\nreport_interval = 30.0\n", "");
  expect_error(no_times, "schedule.report_times", line_of(no_times, "[schedule]"));
  const std::string no_table = edit(kDeck, "swc = 0.1\nsor = 0.2\nnw = 3", "type = \"table\"");
  expect_error(no_table, "fluid.relperm.table", line_of(no_table, "[fluid.relperm]"));
}

TEST_F(DeckTest, WrongTypes)
{
  expect_edit_error("ny = 3", "ny = \"three\"", "grid.ny");
  expect_edit_error("top = 1000.0", "top = true", "grid.top");
  expect_edit_error("type = \"injector\"", "type = 1", "wells[0].type (well 'INJ')");
  expect_edit_error("type = \"oil_water\"", "type = \"black_oil\"", "model.type");
  expect_edit_error("dy = 5", "dy = { a = 1 }", "grid.dy");
  expect_edit_error("porosity = [0.2, 0.3]", "porosity = \"high\"", "rock.porosity");
}

TEST_F(DeckTest, OutOfRange)
{
  expect_edit_error("nz = 2", "nz = 0", "grid.nz");
  expect_edit_error("dz = [1.0, 2.0]", "dz = [1.0, -2.0]", "grid.dz[1]");
  expect_edit_error("kx = 100.0", "kx = -5", "rock.kx");
  expect_edit_error("porosity = [0.2, 0.3]", "porosity = [0.2, 1.3]", "rock.porosity[1]");
  expect_edit_error("porosity = [0.2, 0.3]", "porosity = [0.0, 0.0]", "rock.porosity");
  expect_edit_error("kz = 10", "kz = nan", "rock.kz");
  expect_edit_error("sw = 0.1", "sw = 1.5", "initial.sw");
  expect_edit_error("pressure = 200.0", "pressure = 0", "initial.pressure");
  expect_edit_error("viscosity = 2.0", "viscosity = -1", "fluid.oil.viscosity");
  expect_edit_error("nw = 3", "nw = 0.5", "fluid.relperm.nw");
  expect_edit_error("dt_initial = 0.5", "dt_initial = 0.5\ndt_min = 0.6", "schedule.dt_min", "dt_min");
  expect_edit_error("dt_initial = 0.5", "dt_initial = 50", "schedule.dt_initial");  // > default dt_max 30
  expect_edit_error("sor = 0.2", "sor = 0.9", "fluid.relperm.sor");
  expect_edit_error("dt_initial = 0.5", "dt_initial = 0.5\n[solver.linear]\ntolerance = 1.0",
                    "solver.linear.tolerance", "tolerance");
}

// ILU(0) keys: read for type = "ilu0" only; keys of another preconditioner type, or ISAI keys
// with exact triangular solves, are errors naming the key and its line, never ignored.
TEST_F(DeckTest, Ilu0Preconditioner)
{
  const std::string pre = "dt_initial = 0.5\n[solver.linear.preconditioner]\n";
  const RunConfig c =
      load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"\ntrisolve = \"isai\"\nisai_power = 2\nsweeps = 3")));
  EXPECT_EQ(c.linear.preconditioner.type, "ilu0");
  EXPECT_EQ(options_as<Ilu0Options>(c.linear.preconditioner).trisolve, TriangularSolve::isai);
  EXPECT_EQ(options_as<Ilu0Options>(c.linear.preconditioner).isai_power, 2);
  EXPECT_EQ(options_as<Ilu0Options>(c.linear.preconditioner).sweeps, 3);
  const RunConfig e = load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"")));
  EXPECT_EQ(options_as<Ilu0Options>(e.linear.preconditioner).trisolve, TriangularSolve::exact);
  // The resolved deck of an ILU(0) run loads to the same configuration.
  const RunConfig r = load_deck(write(c.resolved_toml, "resolved.toml"));
  EXPECT_EQ(r.linear.preconditioner.type, "ilu0");
  EXPECT_EQ(options_as<Ilu0Options>(r.linear.preconditioner).isai_power, 2);
  EXPECT_EQ(options_as<Ilu0Options>(r.linear.preconditioner).sweeps, 3);

  const std::string k = "solver.linear.preconditioner.";
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\ntrisolve = \"isai\"\nisai_power = 4", k + "isai_power",
                    "isai_power");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\ntrisolve = \"isai\"\nsweeps = -1", k + "sweeps",
                    "sweeps");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\ntrisolve = \"ilut\"", k + "trisolve", "trisolve");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nsweeps = 2", k + "sweeps", "sweeps");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nmax_block_size = 16", k + "max_block_size",
                    "max_block_size");
  expect_edit_error("dt_initial = 0.5", pre + "trisolve = \"isai\"", k + "trisolve", "trisolve");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"none\"\nfactorization = \"lu\"", k + "factorization",
                    "factorization");
}

// ISAI view of the ILU(0) factors, the general ISAI (type = "isai") and IDR(s): values, defaults,
// the resolved deck, and keys that do not apply are errors naming the key.
TEST_F(DeckTest, IsaiPreconditionerAndIdr)
{
  const std::string pre = "dt_initial = 0.5\n[solver.linear.preconditioner]\n";
  const RunConfig c = load_deck(
      write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"\ntrisolve = \"isai\"\nisai_view = \"block\"")));
  EXPECT_EQ(options_as<Ilu0Options>(c.linear.preconditioner).view, IsaiView::block);
  const RunConfig d =
      load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"\ntrisolve = \"isai\"")));
  EXPECT_EQ(options_as<Ilu0Options>(d.linear.preconditioner).view, IsaiView::scalar);
  const RunConfig g = load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"isai\"\nisai_power = 2")));
  EXPECT_EQ(g.linear.preconditioner.type, "isai");
  EXPECT_EQ(options_as<IsaiOptions>(g.linear.preconditioner).power, 2);
  EXPECT_EQ(options_as<IsaiOptions>(g.linear.preconditioner).view, IsaiView::block);
  const RunConfig r = load_deck(write(g.resolved_toml, "resolved.toml"));
  EXPECT_EQ(r.linear.preconditioner.type, "isai");
  EXPECT_EQ(options_as<IsaiOptions>(r.linear.preconditioner).power, 2);

  const std::string lin = "dt_initial = 0.5\n[solver.linear]\n";
  const RunConfig i = load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "method = \"idr\"\nidr_s = 6")));
  EXPECT_EQ(i.linear.krylov.method, KrylovMethod::idr);
  EXPECT_EQ(i.linear.krylov.idr_s, 6);
  const RunConfig i4 = load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "method = \"idr\"")));
  EXPECT_EQ(i4.linear.krylov.idr_s, 4);

  const std::string k = "solver.linear.preconditioner.";
  expect_edit_error("dt_initial = 0.5", pre + "type = \"isai\"\nisai_power = 0", k + "isai_power", "isai_power");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"isai\"\nisai_view = \"row\"", k + "isai_view", "isai_view");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"isai\"\nsweeps = 1", k + "sweeps", "sweeps");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"isai\"\ntrisolve = \"isai\"", k + "trisolve", "trisolve");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nisai_view = \"block\"", k + "isai_view",
                    "isai_view");
  expect_edit_error("dt_initial = 0.5", pre + "isai_power = 1", k + "isai_power", "isai_power");
  expect_edit_error("dt_initial = 0.5", lin + "idr_s = 4", "solver.linear.idr_s", "idr_s");
  expect_edit_error("dt_initial = 0.5", lin + "method = \"idr\"\nidr_s = 0", "solver.linear.idr_s", "idr_s");
}

// factor_view of ILU(0): scalar (default) or block; block ISAI only with block factors; keys of
// the wrong value, type or preconditioner are errors naming the key.
TEST_F(DeckTest, IluFactorView)
{
  const std::string pre = "dt_initial = 0.5\n[solver.linear.preconditioner]\n";
  const RunConfig d = load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"")));
  EXPECT_EQ(options_as<Ilu0Options>(d.linear.preconditioner).factor_view, IluFactorView::scalar);
  const RunConfig b = load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_view = \"block\"")));
  EXPECT_EQ(options_as<Ilu0Options>(b.linear.preconditioner).factor_view, IluFactorView::block);
  const RunConfig r = load_deck(write(b.resolved_toml, "resolved.toml"));
  EXPECT_EQ(options_as<Ilu0Options>(r.linear.preconditioner).factor_view, IluFactorView::block);
  // Block factors with ISAI: the block view is the default.
  const RunConfig i = load_deck(
      write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_view = \"block\"\ntrisolve = \"isai\"")));
  EXPECT_EQ(options_as<Ilu0Options>(i.linear.preconditioner).view, IsaiView::block);

  // The iterative block factorisation: factor_sweeps, default 0, kept in the resolved deck.
  EXPECT_EQ(options_as<Ilu0Options>(b.linear.preconditioner).factor_sweeps, 0);
  const RunConfig f = load_deck(
      write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_view = \"block\"\nfactor_sweeps = 3")));
  EXPECT_EQ(options_as<Ilu0Options>(f.linear.preconditioner).factor_sweeps, 3);
  EXPECT_EQ(
      options_as<Ilu0Options>(load_deck(write(f.resolved_toml, "resolved_f.toml")).linear.preconditioner).factor_sweeps,
      3);

  const std::string k = "solver.linear.preconditioner.";
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_sweeps = 2", k + "factor_sweeps",
                    "factor_sweeps");  // scalar factor view
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_view = \"block\"\nfactor_sweeps = 65",
                    k + "factor_sweeps", "factor_sweeps");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"block_jacobi\"\nfactor_sweeps = 1", k + "factor_sweeps",
                    "factor_sweeps");
  // Whose code factors (issue 31 item 5): automatic by default, kept in the resolved deck; cuSPARSE only
  // for the scalar view; anything else names the key.
  EXPECT_EQ(options_as<Ilu0Options>(d.linear.preconditioner).implementation, IluImplementation::automatic);
  const RunConfig c = load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"\nimplementation = \"cusparse\"")));
  EXPECT_EQ(options_as<Ilu0Options>(c.linear.preconditioner).implementation, IluImplementation::cusparse);
  EXPECT_EQ(options_as<Ilu0Options>(load_deck(write(c.resolved_toml, "resolved_c.toml")).linear.preconditioner)
                .implementation,
            IluImplementation::cusparse);
  const RunConfig o = load_deck(write(
      edit(kDeck, "dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_view = \"block\"\nimplementation = \"blockres\"")));
  EXPECT_EQ(options_as<Ilu0Options>(o.linear.preconditioner).implementation, IluImplementation::blockres);
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_view = \"block\"\nimplementation = \"cusparse\"",
                    k + "implementation", "implementation");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nimplementation = \"cublas\"", k + "implementation",
                    "implementation");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"block_jacobi\"\nimplementation = \"cusparse\"",
                    k + "implementation", "implementation");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_view = \"blocks\"", k + "factor_view",
                    "factor_view");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_view = 1", k + "factor_view", "factor_view");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"isai\"\nfactor_view = \"block\"", k + "factor_view",
                    "factor_view");
  expect_edit_error("dt_initial = 0.5", pre + "factor_view = \"block\"", k + "factor_view", "factor_view");
  expect_edit_error("dt_initial = 0.5",
                    pre + "type = \"ilu0\"\nfactor_view = \"block\"\ntrisolve = \"isai\"\nisai_view = \"scalar\"",
                    k + "isai_view", "isai_view");
  expect_edit_error("dt_initial = 0.5",
                    pre + "type = \"ilu0\"\nfactor_view = \"block\"\ntrisolve = \"isai\"\nsweeps = 17", k + "sweeps",
                    "sweeps");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nfactor_view = \"block\"\nsweeps = 2", k + "sweeps",
                    "sweeps");
}

// CPR: stage tables with the keys of a preconditioner (defaults: the default linear solver's CPR, here AMG
// on the pressure and block ILU(0)/ISAI on the system; an ILU(0) second stage factors in the block view),
// AMG keys only with type amg, no cpr inside cpr, and the resolved deck loading to the same configuration.
TEST_F(DeckTest, CprAndAmg)
{
  const std::string pre = "dt_initial = 0.5\n[solver.linear.preconditioner]\n";
  const RunConfig d = load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"cpr\"")));
  EXPECT_EQ(d.linear.preconditioner.type, "cpr");
  const CprOptions& c = options_as<CprOptions>(d.linear.preconditioner);
  // The keys the table leaves out take the default linear solver's values (oil_water, block size 2,
  // compressible: true-IMPES, AMG, block ILU(0)/ISAI); a CPR table in a deck of a model whose default is
  // not CPR would take the struct's.
  EXPECT_EQ(c.weights, CprWeights::true_impes);
  EXPECT_EQ(c.pressure.type, "amg");
  EXPECT_EQ(c.second.type, "ilu0");
  EXPECT_EQ(d.linear.preconditioner,
            default_linear_solver({.block_size = 2, .pressure_unknown = true, .compressible = true}).preconditioner);
  EXPECT_EQ(c.pressure, options_as<CprOptions>(default_linear_solver({.block_size = 2, .pressure_unknown = true,
                                                                      .compressible = true})
                                                     .preconditioner)
                            .pressure);  // AMG, W-cycle
  EXPECT_EQ(options_as<AmgOptions>(c.pressure).cycle, AmgCycle::w);
  const RunConfig i = load_deck(write(edit(kDeck, "dt_initial = 0.5",
                                           pre + "type = \"cpr\"\n[solver.linear.preconditioner.second]\ntype = \"ilu0\"")));
  EXPECT_EQ(options_as<Ilu0Options>(options_as<CprOptions>(i.linear.preconditioner).second).factor_view,
            IluFactorView::block);

  const RunConfig a = load_deck(write(edit(kDeck, "dt_initial = 0.5",
                                           pre + "type = \"cpr\"\n[solver.linear.preconditioner.pressure]\n"
                                                 "type = \"amg\"\naggregation = \"matching\"\naggregate_size = 4\nsmoother = \"l1_jacobi\"\n"
                                                 "[solver.linear.preconditioner.second]\ntype = \"block_jacobi\"")));
  const CprOptions& ca = options_as<CprOptions>(a.linear.preconditioner);
  EXPECT_EQ(ca.pressure.type, "amg");
  EXPECT_EQ(options_as<AmgOptions>(ca.pressure).aggregation, AmgAggregation::matching);
  EXPECT_EQ(options_as<AmgOptions>(ca.pressure).aggregate_size, 4);
  EXPECT_EQ(options_as<AmgOptions>(c.pressure).aggregation, AmgAggregation::mis2);
  EXPECT_EQ(options_as<AmgOptions>(ca.pressure).smoother, AmgSmoother::l1_jacobi);
  EXPECT_EQ(ca.second.type, "block_jacobi");
  const RunConfig r = load_deck(write(a.resolved_toml, "resolved.toml"));
  const CprOptions& cr = options_as<CprOptions>(r.linear.preconditioner);
  EXPECT_EQ(cr.pressure.type, "amg");
  EXPECT_EQ(options_as<AmgOptions>(cr.pressure).aggregate_size, 4);
  EXPECT_EQ(cr.second.type, "block_jacobi");

  const std::string k = "solver.linear.preconditioner.";
  expect_edit_error("dt_initial = 0.5", pre + "type = \"cpr\"\n[solver.linear.preconditioner.pressure]\ntype  =  \"cpr\"",
                    k + "pressure.type", "type  =  \"cpr\"");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\n[solver.linear.preconditioner.pressure]\ntype = \"amg\"",
                    k + "pressure", "[solver.linear.preconditioner.pressure]");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\naggregate_size = 4", k + "aggregate_size",
                    "aggregate_size");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"amg\"\naggregation = \"matching\"\naggregate_size = 3",
                    k + "aggregate_size", "aggregate_size");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"amg\"\naggregate_size = 4", k + "aggregate_size",
                    "aggregate_size");  // mis2 aggregation: no size to choose
  expect_edit_error("dt_initial = 0.5", pre + "type = \"amg\"\naggregation = \"pairs\"", k + "aggregation",
                    "aggregation");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"cpr\"\nweights = \"impes\"", k + "weights", "weights =");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"ilu0\"\nweights = \"true_impes\"", k + "weights",
                    "weights =");

  // Quasi-IMPES weights, kept by the resolved deck; the default (this deck is compressible) is true-IMPES.
  const RunConfig t = load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"cpr\"\nweights = \"quasi_impes\"")));
  EXPECT_EQ(options_as<CprOptions>(t.linear.preconditioner).weights, CprWeights::quasi_impes);
  EXPECT_EQ(toml::parse(t.resolved_toml).at_path("solver.linear.preconditioner.weights").value<std::string>(),
            "quasi_impes");
  EXPECT_EQ(options_as<CprOptions>(load_deck(write(t.resolved_toml, "resolved.toml")).linear.preconditioner).weights,
            CprWeights::quasi_impes);
  EXPECT_EQ(toml::parse(d.resolved_toml).at_path("solver.linear.preconditioner.weights").value<std::string>(),
            "true_impes");
}

// Krylov methods: every method name, `restart` for the restarted ones only (like idr_s for IDR),
// the tolerance reference, and the resolved deck loading to the same configuration.
TEST_F(DeckTest, KrylovMethods)
{
  const std::string lin = "dt_initial = 0.5\n[solver.linear]\n";
  const std::pair<const char*, KrylovMethod> methods[] = {{"bicgstab", KrylovMethod::bicgstab},
                                                          {"gmres", KrylovMethod::gmres},
                                                          {"fgmres", KrylovMethod::fgmres},
                                                          {"idr", KrylovMethod::idr},
                                                          {"cg", KrylovMethod::cg}};
  for (const auto& [name, method] : methods) {
    SCOPED_TRACE(name);
    const RunConfig c = load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "method = \"" + name + "\"")));
    EXPECT_EQ(c.linear.krylov.method, method);
    EXPECT_EQ(to_string(c.linear.krylov.method), name);
    EXPECT_EQ(c.linear.krylov.restart, 30);
    const toml::table t = toml::parse(c.resolved_toml);
    const bool restarted = method == KrylovMethod::gmres || method == KrylovMethod::fgmres;
    // Only the keys that apply get their default in the resolved deck (it must load again).
    const std::optional<int64_t> restart = t.at_path("solver.linear.restart").value<int64_t>();
    EXPECT_EQ(restart, restarted ? std::optional<int64_t>(30) : std::nullopt);
    EXPECT_EQ(t.at_path("solver.linear.tolerance_reference").value<std::string>(), "initial_residual");
    EXPECT_EQ(load_deck(write(c.resolved_toml, "resolved.toml")).linear.krylov.method, method);
  }
  const RunConfig f =
      load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "method = \"fgmres\"\nrestart = 50\n"
                                                             "tolerance_reference = \"rhs\"")));
  EXPECT_EQ(f.linear.krylov.restart, 50);
  EXPECT_EQ(f.linear.krylov.reference, ToleranceReference::rhs);
  const RunConfig d = load_deck(write(kDeck));
  EXPECT_EQ(d.linear.krylov.reference, ToleranceReference::initial_residual);
  EXPECT_EQ(load_deck(write(kDeck), {"solver.linear.tolerance_reference=rhs"}).linear.krylov.reference,
            ToleranceReference::rhs);

  const std::string k = "solver.linear.";
  for (const char* m : {"bicgstab", "idr", "cg"}) {
    SCOPED_TRACE(m);
    expect_edit_error("dt_initial = 0.5", lin + "method = \"" + m + "\"\nrestart = 20", k + "restart", "restart");
    EXPECT_NE(error_of(edit(kDeck, "dt_initial = 0.5", lin + "method = \"" + m + "\"\nrestart = 20"))
                  .find("only applies to method = \"gmres\" or \"fgmres\""),
              std::string::npos);
  }
  // restart alone applies to the default method (FGMRES for this oil_water deck, issue 29).
  EXPECT_EQ(load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "restart = 20"))).linear.krylov.restart, 20);
  expect_edit_error("dt_initial = 0.5", lin + "method = \"fgmres\"\nidr_s = 2", k + "idr_s", "idr_s");
  expect_edit_error("dt_initial = 0.5", lin + "method = \"gmres\"\nrestart = 0", k + "restart", "restart");
  // orthogonalization: gmres and fgmres only, cgs2 by default, dcgs2 on request, nothing else.
  expect_edit_error("dt_initial = 0.5", lin + "method = \"bicgstab\"\northogonalization = \"dcgs2\"",
                    k + "orthogonalization", "orthogonalization");
  expect_edit_error("dt_initial = 0.5", lin + "method = \"gmres\"\northogonalization = \"mgs\"",
                    k + "orthogonalization", "orthogonalization");
  EXPECT_EQ(load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "method = \"fgmres\""))).linear.krylov.orthogonalization,
            Orthogonalization::cgs2);
  EXPECT_EQ(load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "orthogonalization = \"dcgs2\"")))
                .linear.krylov.orthogonalization,
            Orthogonalization::dcgs2);
  // gram_schmidt: fused by default, cublas or own on request; only with gmres/fgmres and cgs2.
  EXPECT_EQ(load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "method = \"gmres\""))).linear.krylov.gemv,
            GemvKernel::fused);
  EXPECT_EQ(load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "gram_schmidt = \"cublas\""))).linear.krylov.gemv,
            GemvKernel::cublas);
  expect_edit_error("dt_initial = 0.5", lin + "gram_schmidt = \"mgs\"", k + "gram_schmidt", "gram_schmidt");
  expect_edit_error("dt_initial = 0.5", lin + "method = \"bicgstab\"\ngram_schmidt = \"own\"", k + "gram_schmidt",
                    "gram_schmidt");
  expect_edit_error("dt_initial = 0.5", lin + "orthogonalization = \"dcgs2\"\ngram_schmidt = \"own\"",
                    k + "gram_schmidt", "gram_schmidt");
  expect_edit_error("dt_initial = 0.5", lin + "method = \"minres\"", k + "method", "method");
  expect_edit_error("dt_initial = 0.5", lin + "method = \"CG\"", k + "method", "method");
  expect_edit_error("dt_initial = 0.5", lin + "tolerance_reference = \"b\"", k + "tolerance_reference",
                    "tolerance_reference");
  expect_edit_error("dt_initial = 0.5", lin + "tolerance_reference = 1", k + "tolerance_reference",
                    "tolerance_reference");
  // Switching the method from the command line away from a deck's restart names the deck's line.
  const std::string gm = edit(kDeck, "dt_initial = 0.5", lin + "method = \"gmres\"\nrestart = 40");
  expect_error(gm, k + "restart", line_of(gm, "restart"), {"solver.linear.method=cg"});
}

// Forcing terms: Eisenstat–Walker by default (eta_max 0.01), fixed where the deck gives `tolerance`
// (or names it); eta_min, eta_max and eta_initial; keys of the other forcing and an inverted range
// are errors naming the key.
TEST_F(DeckTest, ForcingTerms)
{
  const std::string lin = "dt_initial = 0.5\n[solver.linear]\n";
  const RunConfig d = load_deck(write(kDeck));
  EXPECT_EQ(d.linear.forcing.kind, ForcingKind::eisenstat_walker);
  EXPECT_EQ(d.linear.forcing.eta_min, 1e-6);
  EXPECT_EQ(d.linear.forcing.eta_max, 0.01);
  EXPECT_EQ(d.linear.forcing.eta_initial, 0.01);
  EXPECT_EQ(d.linear.krylov.rel_tol, 0.01);  // the first solve's term
  {
    const toml::table t = toml::parse(d.resolved_toml);
    EXPECT_EQ(t.at_path("solver.linear.forcing").value<std::string>(), "eisenstat_walker");
    EXPECT_EQ(t.at_path("solver.linear.eta_max").value<double>(), 0.01);
    EXPECT_FALSE(t.at_path("solver.linear.tolerance"));
    const RunConfig r = load_deck(write(d.resolved_toml, "resolved_default.toml"));  // the same solver again
    EXPECT_EQ(r.linear.forcing.kind, ForcingKind::eisenstat_walker);
    EXPECT_EQ(r.linear.forcing.eta_max, 0.01);
  }
  // A deck that gives a tolerance asks for the fixed forcing: in the deck or from the command line.
  for (const RunConfig& f : {load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "tolerance = 1e-4"))),
                             load_deck(write(kDeck), {"solver.linear.tolerance=1e-4"}),
                             load_deck(write(kDeck), {"solver.linear.forcing=\"fixed\""})}) {
    EXPECT_EQ(f.linear.forcing.kind, ForcingKind::fixed);
    EXPECT_EQ(f.linear.krylov.rel_tol, 1e-4);
    const toml::table t = toml::parse(f.resolved_toml);
    EXPECT_EQ(t.at_path("solver.linear.forcing").value<std::string>(), "fixed");
    EXPECT_EQ(t.at_path("solver.linear.tolerance").value<double>(), 1e-4);
    EXPECT_FALSE(t.at_path("solver.linear.eta_min"));
    EXPECT_EQ(load_deck(write(f.resolved_toml, "resolved_fixed.toml")).linear.forcing.kind, ForcingKind::fixed);
  }

  const RunConfig e = load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "forcing = \"eisenstat_walker\"")));
  EXPECT_EQ(e.linear.forcing.kind, ForcingKind::eisenstat_walker);
  EXPECT_EQ(e.linear.forcing.eta_min, 1e-6);
  EXPECT_EQ(e.linear.forcing.eta_max, 0.01);
  EXPECT_EQ(e.linear.forcing.eta_initial, 0.01);  // defaults to eta_max
  {
    const toml::table t = toml::parse(e.resolved_toml);
    EXPECT_EQ(t.at_path("solver.linear.forcing").value<std::string>(), "eisenstat_walker");
    EXPECT_EQ(t.at_path("solver.linear.eta_min").value<double>(), 1e-6);
    EXPECT_EQ(t.at_path("solver.linear.eta_max").value<double>(), 0.01);
    EXPECT_EQ(t.at_path("solver.linear.eta_initial").value<double>(), 0.01);
    EXPECT_FALSE(t.at_path("solver.linear.tolerance"));  // it would not load again
    const RunConfig r = load_deck(write(e.resolved_toml, "resolved.toml"));
    EXPECT_EQ(r.linear.forcing.kind, ForcingKind::eisenstat_walker);
    EXPECT_EQ(r.linear.forcing.eta_initial, 0.01);
  }
  // eta keys alone: the default forcing takes them
  const RunConfig m = load_deck(write(edit(kDeck, "dt_initial = 0.5", lin + "eta_max = 0.05")));
  EXPECT_EQ(m.linear.forcing.kind, ForcingKind::eisenstat_walker);
  EXPECT_EQ(m.linear.forcing.eta_max, 0.05);
  const RunConfig g = load_deck(write(edit(kDeck, "dt_initial = 0.5",
                                           lin + "forcing = \"eisenstat_walker\"\neta_min = 1e-5\neta_max = 0.5\n"
                                                 "eta_initial = 0.2")));
  EXPECT_EQ(g.linear.forcing.eta_min, 1e-5);
  EXPECT_EQ(g.linear.forcing.eta_max, 0.5);
  EXPECT_EQ(g.linear.forcing.eta_initial, 0.2);
  const RunConfig h = load_deck(write(kDeck), {"solver.linear.forcing=eisenstat_walker", "solver.linear.eta_max=0.3"});
  EXPECT_EQ(h.linear.forcing.eta_max, 0.3);
  EXPECT_EQ(h.linear.forcing.eta_initial, 0.3);
  const RunConfig same = load_deck(write(edit(kDeck, "dt_initial = 0.5",
                                              lin + "forcing = \"eisenstat_walker\"\neta_min = 0.01\neta_max = 0.01")));
  EXPECT_EQ(same.linear.forcing.eta_initial, 0.01);  // eta_min == eta_max: a fixed term by another name

  const std::string k = "solver.linear.";
  const std::string ew = lin + "forcing = \"eisenstat_walker\"\n";
  expect_edit_error("dt_initial = 0.5", lin + "forcing = \"ew\"", k + "forcing", "forcing");
  expect_edit_error("dt_initial = 0.5", ew + "tolerance = 1e-3", k + "tolerance", "tolerance");
  EXPECT_NE(error_of(edit(kDeck, "dt_initial = 0.5", ew + "tolerance = 1e-3"))
                .find("only applies to forcing = \"fixed\""),
            std::string::npos);
  for (const char* key : {"eta_min", "eta_max", "eta_initial"}) {
    SCOPED_TRACE(key);
    // fixed forcing: named, or asked for by a tolerance
    expect_edit_error("dt_initial = 0.5", lin + "tolerance = 1e-4\n" + key + " = 0.01", k + key, key);
    expect_edit_error("dt_initial = 0.5", lin + "forcing = \"fixed\"\n" + key + " = 0.01", k + key, key);
    EXPECT_NE(error_of(edit(kDeck, "dt_initial = 0.5", lin + "tolerance = 1e-4\n" + key + " = 0.01"))
                  .find("only applies to forcing = \"eisenstat_walker\""),
              std::string::npos);
  }
  // eta_min > eta_max: the key the user wrote is blamed.
  expect_edit_error("dt_initial = 0.5", ew + "eta_min = 0.5\neta_max = 0.1", k + "eta_min", "eta_min");
  expect_edit_error("dt_initial = 0.5", ew + "eta_min = 0.5", k + "eta_min", "eta_min");  // > default eta_max
  expect_edit_error("dt_initial = 0.5", ew + "eta_max = 1e-7", k + "eta_max", "eta_max");  // < default eta_min
  EXPECT_NE(error_of(edit(kDeck, "dt_initial = 0.5", ew + "eta_min = 0.5\neta_max = 0.1")).find("must be <= eta_max"),
            std::string::npos);
  expect_edit_error("dt_initial = 0.5", ew + "eta_min = 0", k + "eta_min", "eta_min");
  expect_edit_error("dt_initial = 0.5", ew + "eta_max = 1.0", k + "eta_max", "eta_max");
  expect_edit_error("dt_initial = 0.5", ew + "eta_max = \"big\"", k + "eta_max", "eta_max");
  expect_edit_error("dt_initial = 0.5", ew + "eta_initial = 0.5", k + "eta_initial", "eta_initial");  // > eta_max
  expect_edit_error("dt_initial = 0.5", ew + "eta_min = 1e-3\neta_initial = 1e-4", k + "eta_initial",
                    "eta_initial");
  // Switching to Eisenstat–Walker from the command line on a deck that sets a tolerance.
  const std::string tol = edit(kDeck, "dt_initial = 0.5", lin + "tolerance = 1e-6");
  expect_error(tol, k + "tolerance", line_of(tol, "tolerance"), {"solver.linear.forcing=eisenstat_walker"});
  EXPECT_EQ(error_of(kDeck, {"solver.linear.forcing=eisenstat_walker", "solver.linear.eta_min=0.5"}),
            "--set solver.linear.eta_min=0.5: solver.linear.eta_min: must be <= eta_max = 0.01 (got 0.5)");
}

// The rows of the largest Jacobi block of the preconditioner a run of c makes, set up on one 2x2
// block (-1: not block-Jacobi).
int jacobi_block_rows(const RunConfig& c)
{
  const ExecPtr e = Executor::create_cpu();
  auto M = make_preconditioner(e, c.linear.preconditioner);
  auto* bj = dynamic_cast<BlockJacobiPreconditioner*>(M.get());
  if (!bj) return -1;
  BsrPattern p;
  p.nrows = p.ncols = 1;
  p.row_ptr = {0, 1};
  p.col_ind = {0};
  BsrMatrix A(e, 2, p);
  A.values().copy_from_host(std::vector<double>{2.0, 1.0, 1.0, 2.0});
  EXPECT_TRUE(bj->setup(A).ok);
  return bj->largest_block();
}

// Point Jacobi: block-Jacobi on 1x1 blocks, with no block-Jacobi keys to set.
TEST_F(DeckTest, JacobiPreconditioner)
{
  const std::string pre = "dt_initial = 0.5\n[solver.linear.preconditioner]\n";
  const RunConfig c = load_deck(write(edit(kDeck, "dt_initial = 0.5", pre + "type = \"jacobi\"")));
  EXPECT_EQ(c.linear.preconditioner.type, "jacobi");
  EXPECT_EQ(jacobi_block_rows(c), 1);
  // block_jacobi: the natural 2x2 blocks
  EXPECT_EQ(jacobi_block_rows(load_deck(write(kDeck), {"solver.linear.preconditioner.type=block_jacobi"})), 2);
  const toml::table t = toml::parse(c.resolved_toml);
  EXPECT_EQ(t.at_path("solver.linear.preconditioner.type").value<std::string>(), "jacobi");
  EXPECT_FALSE(t.at_path("solver.linear.preconditioner.max_block_size"));
  const RunConfig r = load_deck(write(c.resolved_toml, "resolved.toml"));
  EXPECT_EQ(jacobi_block_rows(r), 1);
  EXPECT_EQ(jacobi_block_rows(load_deck(write(kDeck), {"solver.linear.preconditioner.type=jacobi"})), 1);

  const std::string k = "solver.linear.preconditioner.";
  expect_edit_error("dt_initial = 0.5", pre + "type = \"jacobi\"\nmax_block_size = 1", k + "max_block_size",
                    "max_block_size");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"jacobi\"\nfactorization = \"lu\"", k + "factorization",
                    "factorization");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"jacobi\"\ntrisolve = \"isai\"", k + "trisolve", "trisolve");
  expect_edit_error("dt_initial = 0.5", pre + "type = \"point_jacobi\"", k + "type", "type = \"point");
}

TEST_F(DeckTest, LognormalCellOutOfRange)
{
  // exp(0.5 + 0.1 g) > 1 in every cell: the first cell is named.
  const std::string text =
      edit(kDeck, "porosity = [0.2, 0.3]", "porosity = { mean_log = 0.5, std_log = 0.1, seed = 1 }");
  expect_error(text, "rock.porosity", line_of(text, "porosity = {"));
  EXPECT_NE(error_of(text).find("cell (1, 1, 1)"), std::string::npos) << error_of(text);
}

TEST_F(DeckTest, InconsistentCombinations)
{
  expect_edit_error("kz = 10", "kz = 10\npermeability = 3", "rock.kx", "kx = 100.0");
  expect_edit_error("sor = 0.2", "sor = 0.2\ntype = \"table\"", "fluid.relperm.swc", "swc = 0.1");
  expect_edit_error("end_time = 100.0", "report_times = [1.0]\nend_time = 100.0", "schedule.end_time", "end_time");
  expect_edit_error("report_interval = 30.0", "report_times = [1.0, 2.0]", "schedule.end_time", "end_time");
  expect_edit_error("dy = 5", "dy = [5, 5]", "grid.dy");
  expect_edit_error("porosity = [0.2, 0.3]", "porosity = [0.2, 0.3, 0.4]", "rock.porosity");
  expect_edit_error("end_time = 100.0\nreport_interval = 30.0", "report_times = [1.0, 5.0, 5.0]",
                    "schedule.report_times[2]");
  expect_edit_error("end_time = 100.0\nreport_interval = 30.0", "report_times = []", "schedule.report_times");
}

TEST_F(DeckTest, RelpermTable)
{
  const auto table = [&](const std::string& rows) {
    return edit(kDeck, "swc = 0.1\nsor = 0.2\nnw = 3", "type = \"table\"\ntable = " + rows);
  };
  std::string text = table("[[0.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]");
  expect_error(text, "fluid.relperm.table[1]", line_of(text, "table = "));
  text = table("[[0.5, 0.0, 1.0, 0.0], [0.5, 1.0, 0.0, 0.0]]");
  expect_error(text, "fluid.relperm.table[1]", line_of(text, "table = "));
  EXPECT_NE(error_of(text).find("strictly increasing"), std::string::npos);
  text = table("[[0.0, 0.0, 1.0, 0.0],\n  [1.2, 1.0, 0.0, 0.0]]");
  expect_error(text, "fluid.relperm.table[1]", line_of(text, "[1.2,"));
  text = table("[[0.0, 0.0, 1.5, 0.0], [1.0, 1.0, 0.0, 0.0]]");
  expect_error(text, "fluid.relperm.table[0]", line_of(text, "table = "));
  EXPECT_NE(error_of(text).find("k_ro must be in [0, 1]"), std::string::npos) << error_of(text);
  expect_error(edit(kDeck, "nw = 3", "nw = 3\ntable = [[0, 0, 1, 0], [1, 1, 0, 0]]"), "fluid.relperm.table",
               line_of(kDeck, "nw = 3") + 1);
}

TEST_F(DeckTest, WellErrors)
{
  expect_edit_error("i = 4", "i = 5", "wells[1].i (well 'PROD')");
  expect_edit_error("j = 3", "j = 0", "wells[1].j (well 'PROD')");
  expect_edit_error("k_bottom = 2", "k_bottom = 3", "wells[1].k_bottom (well 'PROD')");
  expect_edit_error("k_top = 2", "k_top = 2.0", "wells[1].k_top (well 'PROD')");
  expect_error(edit(kDeck, "name = \"PROD\"", "name = \"INJ\""), "wells[1].name (well 'INJ')",
               line_of(kDeck, "name = \"PROD\""));
  expect_edit_error("well_index = [50.0]", "well_index = [50.0, 60.0]", "wells[1].well_index (well 'PROD')");
  expect_edit_error("control = \"rate\"", "control = \"rate\"\nrate_target = \"oil\"",
                    "wells[0].rate_target (well 'INJ')", "rate_target");
  expect_edit_error("control = \"bhp\"", "control = \"pressure\"", "wells[1].control (well 'PROD')");
  expect_edit_error("bhp = 150.0", "bhp = -150.0", "wells[1].bhp (well 'PROD')");
  // Issue 28 item 9: a rate on a BHP-controlled well does not apply (it was ignored silently).
  expect_edit_error("control = \"bhp\"", "control = \"bhp\"\nrate = 50.0", "wells[1].rate (well 'PROD')",
                    "rate = 50.0");
  EXPECT_NE(error_of(edit(kDeck, "control = \"bhp\"", "control = \"bhp\"\nrate = 50.0"))
                .find("does not apply to a well under control = \"bhp\""),
            std::string::npos);

  // Two wells completing cell (4, 3, 2): reported at the second well's table.
  std::string text = edit(kDeck, "i = 1\nj = 1", "i = 4\nj = 3");
  text = edit(text, "k_top = 2\nk_bottom = 2", "k_top = 2");
  expect_error(text, "wells[1] (well 'PROD')", line_of(text, "[[wells]]\nname = \"PROD\""));
  // Overlap-free wells in the same column are fine.
  EXPECT_NO_THROW(load_deck(write(edit(kDeck, "i = 1\nj = 1", "i = 4\nj = 3\nk_bottom = 1"))));
  // A well whose only completion is inactive.
  expect_error(edit(kDeck, "porosity = [0.2, 0.3]", "porosity = [0.2, 0.0]"), "wells[1] (well 'PROD')",
               line_of(kDeck, "[[wells]]\nname = \"PROD\""));
}

TEST_F(DeckTest, PropertyFileErrors)
{
  const std::string text = edit(kDeck, "kx = 100.0", "kx = { file = \"perm.h5\", dataset = \"/kx\" }");
  const int line = line_of(text, "kx = {");
  expect_error(text, "rock.kx", line);  // no such file
  EXPECT_NE(error_of(text).find("perm.h5"), std::string::npos);

  std::ofstream(dir_ / "perm.h5") << "not HDF5 at all\n";
  expect_error(text, "rock.kx", line);
  EXPECT_NE(error_of(text).find("not an HDF5 file"), std::string::npos) << error_of(text);

  const std::vector<double> values(10, 1.0);
  {
    h5::File f = h5::File::create(dir_ / "perm.h5");
    h5::write_dataset(f.id(), "other", std::span<const double>(values));
    h5::write_dataset(f.id(), "kx", std::span<const double>(values), {2, 5});
    f.close();
  }
  expect_error(text, "rock.kx", line);  // wrong shape
  EXPECT_NE(error_of(text).find("[2, 5]"), std::string::npos) << error_of(text);
  const std::string missing = edit(text, "\"/kx\"", "\"/nope\"");
  expect_error(missing, "rock.kx", line);
  EXPECT_NE(error_of(missing).find("/nope"), std::string::npos) << error_of(missing);
}

TEST_F(DeckTest, OverrideErrors)
{
  const auto set_error = [&](const std::string& set) { return error_of(kDeck, {set}); };
  EXPECT_EQ(set_error("grid.nx").rfind("--set grid.nx: ", 0), 0u);
  EXPECT_EQ(set_error("=3").rfind("--set =3: empty key", 0), 0u);
  EXPECT_EQ(set_error("grid..nx=3").rfind("--set grid..nx=3: ", 0), 0u);
  EXPECT_NE(set_error("wells.5.rate=1").find("out of range"), std::string::npos);
  EXPECT_NE(set_error("wells.NOPE.rate=1").find("unknown well name 'NOPE' (the wells are: INJ, PROD)"),
            std::string::npos);
  EXPECT_NE(set_error("grid.nx.a=1").find("not a table"), std::string::npos);
  // Unknown keys and bad values from --set are caught by validation and name the --set.
  EXPECT_EQ(set_error("grid.nxx=3"), "--set grid.nxx=3: grid.nxx: unknown key, did you mean 'nx'? (got 3)");
  EXPECT_EQ(set_error("foo.bar=1").rfind("--set foo.bar=1: foo: unknown key", 0), 0u) << set_error("foo.bar=1");
  EXPECT_EQ(set_error("wells.INJ.rat=1").rfind("--set wells.INJ.rat=1: wells[0].rat (well 'INJ'): unknown key", 0),
            0u);
  EXPECT_EQ(set_error("solver.linear.method=minres"),
            "--set solver.linear.method=minres: solver.linear.method: must be one of \"bicgstab\", \"gmres\", "
            "\"fgmres\", \"idr\", \"cg\" (got 'minres')");
  EXPECT_EQ(set_error("fluid.relperm=5"), "--set fluid.relperm=5: fluid.relperm: must be a table (got 5)");
  // A consistent deck made inconsistent by --set: reported at the deck's line that no longer fits.
  const std::string dx_at = ":" + std::to_string(line_of(kDeck, "dx =")) + ":6: grid.dx: must have nx = 3 values";
  EXPECT_NE(set_error("grid.nx=3").find(dx_at), std::string::npos) << set_error("grid.nx=3");
}

// output.vtk: on by default in a build with VTK and off without it, shown in the resolved deck;
// a wrong type names the key; asking for VTK output from a build without VTK is an error naming it.
TEST_F(DeckTest, OutputVtk)
{
  const RunConfig c = load_deck(write(kDeck));
#if BLOCKRES_HAVE_VTK
  EXPECT_TRUE(c.output.vtk);
#else
  EXPECT_FALSE(c.output.vtk);
#endif
  EXPECT_EQ(toml::parse(c.resolved_toml).at_path("output.vtk").value<bool>(), c.output.vtk);
  EXPECT_EQ(load_deck(write(c.resolved_toml, "resolved.toml")).output.vtk, c.output.vtk);

  EXPECT_FALSE(load_deck(write(kDeck + "\n[output]\nvtk = false\n")).output.vtk);
  EXPECT_FALSE(load_deck(write(kDeck), {"output.vtk=false"}).output.vtk);

  const std::string yes = kDeck + "\n[output]\nvtk = \"yes\"\n";
  expect_error(yes, "output.vtk", line_of(yes, "vtk = "));
  EXPECT_NE(error_of(yes).find("output.vtk: must be true or false (got 'yes')"), std::string::npos) << error_of(yes);
  EXPECT_EQ(error_of(kDeck, {"output.vtk=yes"}), "--set output.vtk=yes: output.vtk: must be true or false (got 'yes')");

  const std::string on = kDeck + "\n[output]\nvtk = true\n";
#if BLOCKRES_HAVE_VTK
  EXPECT_TRUE(load_deck(write(on)).output.vtk);
#else
  expect_error(on, "output.vtk", line_of(on, "vtk = true"));
  EXPECT_NE(error_of(on).find("built without VTK"), std::string::npos) << error_of(on);
  const std::string set_on = error_of(kDeck, {"output.vtk=true"});
  EXPECT_EQ(set_on.rfind("--set output.vtk=true: output.vtk: VTK output is not available", 0), 0u) << set_on;
#endif
}

}  // namespace
}  // namespace blockres
