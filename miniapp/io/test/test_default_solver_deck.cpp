// The default linear solver as a deck gets it: chosen per model and block size, filled into the resolved
// deck, partly overridden key by key, named in the run log; and decks without solver keys converging
// on both models (issue 29 item 2).
#include "input/test/deck_test_util.hpp"
#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi_options.hpp"
#include "linalg/preconditioners/cpr/cpr_options.hpp"
#include "linalg/preconditioners/default_solver.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "miniapp/io/deck.hpp"
#include "miniapp/io/test/tracer_deck.hpp"
#include "miniapp/run/simulator.hpp"
#include "verification/run_helpers.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace blockres {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path)
{
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string shipped(const std::string& name) { return test::deck_path(name); }

// `text` without its [solver...] tables (every line from a [solver...] header up to the next header
// of another table), so that no solver key is left.
std::string without_solver(const std::string& text)
{
  std::istringstream in(text);
  std::string out, line;
  bool in_solver = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') in_solver = line.rfind("[solver", 0) == 0;
    if (!in_solver) out += line + "\n";
  }
  return out;
}

class DefaultSolverDeck : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::fresh_dir("default-solver"); }
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
  // The shipped deck `name` without any solver key, written here.
  std::string bare(const std::string& name) const { return write(without_solver(read_file(shipped(name))), name); }
  fs::path dir_;
};

// The log line of a loaded deck's linear solver (its notes), "" if none.
std::string solver_line(const RunConfig& c)
{
  for (const std::string& n : c.notes)
    if (n.rfind("linear solver: ", 0) == 0) return n;
  return "";
}

// The default's second stage up to bs 8: block ILU(0), 1 factor sweep, ISAI(1) with 3 sweeps.
Ilu0Options block_ilu0_isai()
{
  Ilu0Options o;
  o.factor_view = IluFactorView::block, o.trisolve = TriangularSolve::isai, o.view = IsaiView::block;
  o.factor_sweeps = 1, o.sweeps = 3;
  return o;
}

// Issue 28 item 10: a 200-cell 1D tracer whose component T is absent at t = 0. BiCGSTAB with
// block-Jacobi (the built-in default before issue 29) fails its first solves here; the default now
// runs it through without a cut.
using blockres::test_decks::kTracerDeck;  // miniapp/io/test/tracer_deck.hpp

// The tracer deck with nc components C1 .. Cnc (the same properties): C1 injected into Cnc.
std::string tracer_deck(int nc)
{
  std::string names, initial, injected;
  for (int k = 1; k <= nc; ++k) {
    names += fmt::format("{}\"C{}\"", k > 1 ? ", " : "", k);
    initial += fmt::format("{}{}", k > 1 ? ", " : "", k == nc ? 1.0 : 0.0);
    injected += fmt::format("{}{}", k > 1 ? ", " : "", k == 1 ? 1.0 : 0.0);
  }
  std::string d = test_deck::edit(kTracerDeck, "names = [\"T\", \"W\"]", "names = [" + names + "]");
  d = test_deck::edit(d, "density = [1000.0, 1000.0]", "density = 1000.0");
  d = test_deck::edit(d, "viscosity = [0.5, 0.5]", "viscosity = 0.5");
  d = test_deck::edit(d, "composition = [0.0, 1.0]", "composition = [" + initial + "]");
  return test_deck::edit(d, "composition = [1.0, 0.0]", "composition = [" + injected + "]");
}

// The config holds the default of `traits` exactly: method, restart, limits, tolerance, preconditioner.
void expect_default(const RunConfig& c, const LinearSystemTraits& traits)
{
  const DefaultLinearSolver d = default_linear_solver(traits);
  EXPECT_EQ(c.linear.krylov.method, d.krylov.method);
  EXPECT_EQ(c.linear.krylov.restart, d.krylov.restart);
  EXPECT_EQ(c.linear.krylov.max_iterations, d.krylov.max_iterations);
  if (d.eta_max > 0.0) {  // inexact Newton: the first solve's term is eta_max (issue 30)
    EXPECT_EQ(c.linear.forcing.kind, ForcingKind::eisenstat_walker);
    EXPECT_EQ(c.linear.forcing.eta_max, d.eta_max);
    EXPECT_EQ(c.linear.krylov.rel_tol, d.eta_max);
  } else {
    EXPECT_EQ(c.linear.forcing.kind, ForcingKind::fixed);
    EXPECT_EQ(c.linear.krylov.rel_tol, d.krylov.rel_tol);
  }
  EXPECT_TRUE(c.linear.preconditioner == d.preconditioner) << solver_line(c);
}

// Every shipped deck resolves to the solver it is meant to have: the default for its model and block
// size. The nc = 32 and 64 decks are GPU-sized: loading them here is the check that they parse and resolve.
TEST_F(DefaultSolverDeck, ShippedDecksResolveToTheDefault)
{
  struct Case {
    const char* deck;
    int bs;
    const char* second;
  };
  for (const Case& k : {Case{"buckley_leverett.toml", 2, "ilu0"}, Case{"quarter_five_spot.toml", 2, "ilu0"},
                        Case{"quarter_five_spot_60x60x20.toml", 2, "ilu0"}, Case{"multicomponent_3.toml", 3, "ilu0"},
                        Case{"multicomponent_8.toml", 8, "ilu0"}, Case{"multicomponent_16.toml", 16, "block_jacobi"},
                        Case{"multicomponent_32.toml", 32, "block_jacobi"},
                        Case{"multicomponent_64.toml", 64, "block_jacobi"}}) {
    SCOPED_TRACE(k.deck);
    const RunConfig c = load_deck(shipped(k.deck));
    expect_default(c, {.block_size = k.bs, .pressure_unknown = true, .compressible = true});
    EXPECT_EQ(options_as<CprOptions>(c.linear.preconditioner).weights, CprWeights::true_impes);
    EXPECT_EQ(options_as<CprOptions>(c.linear.preconditioner).second.type, k.second);
    EXPECT_NE(solver_line(c).find(fmt::format("the default for model {} at block size {}", c.model, k.bs)),
              std::string::npos)
        << solver_line(c);
  }
  const RunConfig q = load_deck(shipped("quarter_five_spot_60x60x20.toml"));
  EXPECT_EQ(options_as<CprOptions>(q.linear.preconditioner).second, (PreconditionerSpec{"ilu0", block_ilu0_isai()}));
}

// The deck's active cells decide the second stage with the block size: the 60x60x20 deck (144k unknowns)
// keeps block ILU(0)/ISAI, the same deck at 60x60x25 (180k) gets block-Jacobi and says why.
TEST_F(DefaultSolverDeck, LargeGridsGetBlockJacobi)
{
  const RunConfig big = load_deck(shipped("quarter_five_spot_60x60x20.toml"), {"grid.nz=25"});
  expect_default(big, {.block_size = 2, .pressure_unknown = true, .compressible = true, .cells = 90000});
  EXPECT_EQ(options_as<CprOptions>(big.linear.preconditioner).second.type, "block_jacobi");
  EXPECT_NE(solver_line(big).find("block-Jacobi second stage above 160000 unknowns (180000 here)"), std::string::npos)
      << solver_line(big);
  const RunConfig small = load_deck(shipped("quarter_five_spot_60x60x20.toml"));
  EXPECT_NE(solver_line(small).find("(144000 here)"), std::string::npos) << solver_line(small);
}

// Without [solver]: the model's default, filled into the resolved deck, which loads back to it.
TEST_F(DefaultSolverDeck, NoSolverKeysGiveTheModelsDefaultInTheResolvedDeck)
{
  const RunConfig ow = load_deck(bare("quarter_five_spot.toml"));
  expect_default(ow, {.block_size = 2, .pressure_unknown = true, .compressible = true});
  const toml::table t = toml::parse(ow.resolved_toml);
  EXPECT_EQ(t.at_path("solver.linear.method").value<std::string>(), "fgmres");
  EXPECT_EQ(t.at_path("solver.linear.restart").value<int64_t>(), 30);
  EXPECT_EQ(t.at_path("solver.linear.max_iterations").value<int64_t>(), 1000);
  EXPECT_EQ(t.at_path("solver.linear.forcing").value<std::string>(), "eisenstat_walker");
  EXPECT_EQ(t.at_path("solver.linear.eta_max").value<double>(), 0.01);
  EXPECT_FALSE(t.at_path("solver.linear.tolerance"));
  EXPECT_EQ(t.at_path("solver.linear.preconditioner.type").value<std::string>(), "cpr");
  EXPECT_EQ(t.at_path("solver.linear.preconditioner.weights").value<std::string>(), "true_impes");
  EXPECT_EQ(t.at_path("solver.linear.preconditioner.pressure.type").value<std::string>(), "amg");
  EXPECT_EQ(t.at_path("solver.linear.preconditioner.second.type").value<std::string>(), "ilu0");
  EXPECT_EQ(t.at_path("solver.linear.preconditioner.second.factor_view").value<std::string>(), "block");
  EXPECT_EQ(t.at_path("solver.linear.preconditioner.second.trisolve").value<std::string>(), "isai");
  EXPECT_EQ(t.at_path("solver.linear.preconditioner.second.isai_view").value<std::string>(), "block");
  const RunConfig back = load_deck(write(ow.resolved_toml, "resolved.toml"));
  expect_default(back, {.block_size = 2, .pressure_unknown = true, .compressible = true});
  EXPECT_EQ(solver_line(back), solver_line(ow));

  const RunConfig mc = load_deck(bare("multicomponent_16.toml"));
  expect_default(mc, {.block_size = 16, .pressure_unknown = true, .compressible = true});
  const toml::table m = toml::parse(mc.resolved_toml);
  EXPECT_EQ(m.at_path("solver.linear.preconditioner.second.type").value<std::string>(), "block_jacobi");
  EXPECT_EQ(m.at_path("solver.linear.preconditioner.second.factorization").value<std::string>(), "automatic");
  EXPECT_EQ(solver_line(mc),
            "linear solver: FGMRES(30) + CPR(true_impes; pressure: AMG in fp32; second stage: block-Jacobi), the default for "
            "model multicomponent at block size 16: CPR for the pressure unknown; block-Jacobi second stage above "
            "block size 8, where block ILU(0)/ISAI's setup costs more than its fewer iterations save "
            "(inputs/README.md, 'Default linear solver')");
  // The block size is the deck's number of components: 1, and 8 and 9 on either side of the threshold.
  for (const int nc : {1, 8, 9}) {
    SCOPED_TRACE(nc);
    const RunConfig c = load_deck(write(tracer_deck(nc), "nc.toml"));
    expect_default(c, {.block_size = nc, .pressure_unknown = true, .compressible = true});
    EXPECT_EQ(options_as<CprOptions>(c.linear.preconditioner).second.type, nc <= 8 ? "ilu0" : "block_jacobi");
    EXPECT_NE(solver_line(c).find(fmt::format("the default for model multicomponent at block size {}:", nc)),
              std::string::npos)
        << solver_line(c);
  }
}

// Nothing compressible: true-IMPES weights do not exist, so the default takes quasi-IMPES.
TEST_F(DefaultSolverDeck, IncompressibleDeckGetsQuasiImpes)
{
  const RunConfig c = load_deck(bare("buckley_leverett.toml"), {"rock.compressibility=0.0", "fluid.water.compressibility=0.0",
                                                                "fluid.oil.compressibility=0.0"});
  expect_default(c, {.block_size = 2, .pressure_unknown = true, .compressible = false});
  EXPECT_EQ(options_as<CprOptions>(c.linear.preconditioner).weights, CprWeights::quasi_impes);
  EXPECT_NE(solver_line(c).find("quasi-IMPES weights: nothing is compressible"), std::string::npos) << solver_line(c);
  // One compressible phase is enough for true-IMPES.
  const RunConfig w = load_deck(bare("buckley_leverett.toml"), {"rock.compressibility=0.0", "fluid.oil.compressibility=0.0"});
  EXPECT_EQ(options_as<CprOptions>(w.linear.preconditioner).weights, CprWeights::true_impes);
}

// Keys the deck gives win; every other key takes the default.
TEST_F(DefaultSolverDeck, KeysTheDeckGivesWinTheRestIsTheDefault)
{
  const std::string deck = bare("quarter_five_spot.toml");
  const LinearSystemTraits ow{.block_size = 2, .pressure_unknown = true, .compressible = true};
  const DefaultLinearSolver d = default_linear_solver(ow);

  // Only the tolerance: the default method and preconditioner, the deck's tolerance.
  const RunConfig tol = load_deck(deck, {"solver.linear.tolerance=1e-6"});
  EXPECT_EQ(tol.linear.forcing.kind, ForcingKind::fixed);  // a tolerance asks for the fixed forcing
  EXPECT_EQ(tol.linear.krylov.rel_tol, 1e-6);
  EXPECT_EQ(tol.linear.krylov.method, KrylovMethod::fgmres);
  EXPECT_EQ(tol.linear.krylov.max_iterations, 1000);
  EXPECT_TRUE(tol.linear.preconditioner == d.preconditioner);
  EXPECT_NE(solver_line(tol).find(", the default for model oil_water at block size 2:"), std::string::npos)
      << solver_line(tol);

  // Only the method: the default preconditioner and limits; restart does not apply to BiCGSTAB.
  const RunConfig bicg = load_deck(deck, {"solver.linear.method=bicgstab"});
  EXPECT_EQ(bicg.linear.krylov.method, KrylovMethod::bicgstab);
  EXPECT_EQ(bicg.linear.krylov.max_iterations, 1000);
  EXPECT_EQ(bicg.linear.forcing.kind, ForcingKind::eisenstat_walker);  // the default forcing: no tolerance given
  EXPECT_EQ(bicg.linear.krylov.rel_tol, 0.01);
  EXPECT_TRUE(bicg.linear.preconditioner == d.preconditioner);
  EXPECT_FALSE(toml::parse(bicg.resolved_toml).at_path("solver.linear.restart"));
  EXPECT_EQ(solver_line(bicg),
            "linear solver: BiCGSTAB + CPR(true_impes; pressure: AMG W-cycle in fp32; second stage: block ILU(0)/ISAI (1 "
            "factor sweep, 3 ISAI sweeps)), as the deck sets it (the default for model oil_water at block size 2 is "
            "FGMRES(30) + CPR(true_impes; pressure: AMG W-cycle in fp32; second stage: block ILU(0)/ISAI (1 factor sweep, 3 "
            "ISAI sweeps)): inputs/README.md, 'Default linear solver')");

  // Only the restart: it applies to the default method.
  EXPECT_EQ(load_deck(deck, {"solver.linear.restart=50"}).linear.krylov.restart, 50);

  // Only the preconditioner's type: that type with its own defaults, the default method.
  const RunConfig bj = load_deck(deck, {"solver.linear.preconditioner.type=block_jacobi"});
  EXPECT_EQ(bj.linear.krylov.method, KrylovMethod::fgmres);
  EXPECT_EQ(bj.linear.preconditioner, (PreconditionerSpec{"block_jacobi", BlockJacobiOptions{}}));
  EXPECT_NE(solver_line(bj).find("linear solver: FGMRES(30) + block-Jacobi, as the deck sets it"), std::string::npos)
      << solver_line(bj);
  const RunConfig ilu = load_deck(deck, {"solver.linear.preconditioner.type=ilu0"});
  EXPECT_EQ(ilu.linear.preconditioner, (PreconditionerSpec{"ilu0", Ilu0Options{}}));  // ilu0's own defaults

  // The default's type with one key: the default's values for the others (the second stage included).
  const RunConfig quasi = load_deck(deck, {"solver.linear.preconditioner.weights=quasi_impes"});
  const CprOptions& q = options_as<CprOptions>(quasi.linear.preconditioner);
  EXPECT_EQ(q.weights, CprWeights::quasi_impes);
  EXPECT_EQ(q.second, (PreconditionerSpec{"ilu0", block_ilu0_isai()}));
  EXPECT_NE(solver_line(quasi).find("CPR(quasi_impes; pressure: AMG W-cycle in fp32; second stage: block ILU(0)/ISAI (1 factor "
                                    "sweep, 3 ISAI sweeps)), as the deck sets it"),
            std::string::npos)
      << solver_line(quasi);
  const RunConfig second_bj = load_deck(deck, {"solver.linear.preconditioner.second.type=block_jacobi"});
  EXPECT_EQ(options_as<CprOptions>(second_bj.linear.preconditioner).weights, CprWeights::true_impes);
  EXPECT_EQ(options_as<CprOptions>(second_bj.linear.preconditioner).second.type, "block_jacobi");

  // A deck that writes out the default is told so.
  const RunConfig same = load_deck(deck, {"solver.linear.method=fgmres", "solver.linear.preconditioner.type=cpr"});
  EXPECT_NE(solver_line(same).find(", the default for model oil_water at block size 2:"), std::string::npos)
      << solver_line(same);
  // Bad values of the keys a deck gives are still errors naming them.
  const std::string msg =
      test_deck::input_error_of(deck, [&] { load_deck(deck, {"solver.linear.method=bicgstab", "solver.linear.restart=20"}); });
  EXPECT_NE(msg.find("solver.linear.restart: only applies to method = \"gmres\" or \"fgmres\""), std::string::npos) << msg;
}

// The default's AMG (fp32 storage, adaptive reuse) gives way to the AMG keys a deck sets that exclude
// them: the ILU(0) smoother gets fp64 storage, a refresh_interval no adaptive reuse; asked for
// explicitly, the combination is still an error naming the key.
TEST_F(DefaultSolverDeck, DefaultAmgStorageAndReuseGiveWayToTheDecksSmootherAndInterval)
{
  const std::string deck = bare("quarter_five_spot.toml");
  const auto amg = [](const RunConfig& c) { return options_as<AmgOptions>(options_as<CprOptions>(c.linear.preconditioner).pressure); };
  const AmgOptions def = amg(load_deck(deck, {}));
  EXPECT_EQ(def.storage, StoragePrecision::fp32);
  EXPECT_EQ(def.refresh_growth, default_amg_refresh_growth);
  EXPECT_EQ(def.smoother, AmgSmoother::jacobi);

  const AmgOptions ilu = amg(load_deck(deck, {"solver.linear.preconditioner.pressure.smoother=ilu0"}));
  EXPECT_EQ(ilu.smoother, AmgSmoother::ilu0);
  EXPECT_EQ(ilu.storage, StoragePrecision::fp64);
  EXPECT_EQ(ilu.refresh_growth, default_amg_refresh_growth);

  const AmgOptions every3 = amg(load_deck(deck, {"solver.linear.preconditioner.pressure.refresh_interval=3"}));
  EXPECT_EQ(every3.refresh_interval, 3);
  EXPECT_EQ(every3.refresh_growth, 0.0);
  EXPECT_EQ(every3.storage, StoragePrecision::fp32);

  const std::string msg = test_deck::input_error_of(deck, [&] {
    load_deck(deck, {"solver.linear.preconditioner.pressure.smoother=ilu0", "solver.linear.preconditioner.pressure.storage=fp32"});
  });
  EXPECT_NE(msg.find("solver.linear.preconditioner.pressure.storage"), std::string::npos) << msg;
  const std::string msg2 = test_deck::input_error_of(deck, [&] {
    load_deck(deck, {"solver.linear.preconditioner.pressure.refresh_interval=3",
                     "solver.linear.preconditioner.pressure.refresh_growth=0.3"});
  });
  EXPECT_NE(msg2.find("solver.linear.preconditioner.pressure.refresh_growth"), std::string::npos) << msg2;
}

struct RunOutcomeLog {
  RunStatistics stats;
  std::vector<std::string> log;
};

// Runs a loaded deck on the CPU, returning its statistics and log lines (throws what the run throws).
RunOutcomeLog run(const RunConfig& cfg, const fs::path& dir)
{
  RunOutcomeLog r;
  const auto out = run_simulation(cfg, Executor::create_cpu(), {dir / "out", "test", false, {}},
                                  [&](const std::string& line) { r.log.push_back(line); });
  r.stats = out.stats;
  return r;
}

// A run converged without a cut caused by the linear solver, and its log names the default.
void expect_converged_with_default(const RunOutcomeLog& r, const std::string& model, int bs)
{
  const RunStatistics& s = r.stats;
  fmt::print("{}, block size {}: {} steps, {} cuts, {} Newton, {} linear iterations ({:.1f} per Newton, {} at most)\n",
             model, bs, s.steps, s.cuts, s.newton_iterations, s.linear_iterations,
             s.newton_iterations ? double(s.linear_iterations) / double(s.newton_iterations) : 0.0, s.max_linear_iterations);
  for (const std::string& line : r.log)
    EXPECT_FALSE(line.find("cut:") != std::string::npos && line.find("linear solver") != std::string::npos) << line;
  EXPECT_EQ(r.stats.cuts, 0);
  EXPECT_GT(r.stats.steps, 0);
  const std::string want = fmt::format("the default for model {} at block size {}", model, bs);
  EXPECT_TRUE(std::any_of(r.log.begin(), r.log.end(), [&](const std::string& l) {
    return l.rfind("linear solver: ", 0) == 0 && l.find(want) != std::string::npos;
  })) << "no line 'linear solver: ... " << want << "' in the run log";
  // Comfortably inside the default's 1000-iteration cap on every solve.
  EXPECT_LE(r.stats.max_linear_iterations, 100);
}

TEST_F(DefaultSolverDeck, TracerWithAnAbsentComponentConvergesWithTheDefault)
{
  const RunConfig cfg = load_deck(write(kTracerDeck, "tracer.toml"));
  expect_default(cfg, {.block_size = 2, .pressure_unknown = true, .compressible = true});
  expect_converged_with_default(run(cfg, dir_), "multicomponent", 2);
  // The former built-in default on the same deck: linear failures from t = 0 (the reason for the change).
  const RunConfig old = load_deck(write(kTracerDeck, "tracer.toml"),
                                  {"solver.linear.method=bicgstab", "solver.linear.max_iterations=500",
                                   "solver.linear.preconditioner.type=block_jacobi", "schedule.dt_min=0.05"});
  EXPECT_THROW(run(old, dir_ / "old"), SimulationError);
}

// The shipped 1D multicomponent deck on 200 cells (A and B absent at t = 0), no solver keys at all.
TEST_F(DefaultSolverDeck, MulticomponentTracer200CellsConvergesWithoutSolverKeys)
{
  const std::string deck = bare("multicomponent_3.toml");
  ASSERT_EQ(read_file(deck).find("[solver"), std::string::npos);
  const RunConfig cfg = load_deck(deck, {"grid.nx=200", "wells.PROD.i=200", "output.vtk=false"});
  expect_converged_with_default(run(cfg, dir_), "multicomponent", 3);
}

// Oil–water without solver keys: the quarter five-spot on a small grid (true-IMPES) and the
// incompressible Buckley–Leverett deck (quasi-IMPES).
TEST_F(DefaultSolverDeck, OilWaterConvergesWithoutSolverKeys)
{
  const RunConfig qfs = load_deck(bare("quarter_five_spot.toml"),
                                  {"grid.nx=10", "grid.ny=10", "grid.nz=3", "wells.PROD.i=10", "wells.PROD.j=10",
                                   "schedule.end_time=360", "output.vtk=false"});
  expect_converged_with_default(run(qfs, dir_ / "qfs"), "oil_water", 2);
  const RunConfig bl = load_deck(bare("buckley_leverett.toml"),
                                 {"rock.compressibility=0.0", "fluid.water.compressibility=0.0",
                                  "fluid.oil.compressibility=0.0", "schedule.end_time=150", "output.vtk=false"});
  EXPECT_EQ(options_as<CprOptions>(bl.linear.preconditioner).weights, CprWeights::quasi_impes);
  expect_converged_with_default(run(bl, dir_ / "bl"), "oil_water", 2);
}

}  // namespace
}  // namespace blockres
