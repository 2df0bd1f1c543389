// Restart, checkpoints, clean interruption, the output lock and out-of-memory messages (issue 17):
// restarted runs against uninterrupted ones with `blockres verify`'s comparison, and the real
// `blockres` binary killed with SIGKILL, stopped with SIGTERM/SIGINT and starved of memory. Files of
// layout version 3 (seconds in /restart, float64 counters, 1-D one-cell series) restart as exactly
// as version 4 files.
#include "miniapp/io/test/layout3_file.hpp"
#include "miniapp/io/test/one_cell_deck.hpp"
#include "miniapp/run/restart.hpp"
#include "miniapp/run/run_control.hpp"
#include "miniapp/verify/verify.hpp"
#include "miniapp/io/vtk_output.hpp"
#include "verification/run_helpers.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace blockres;
namespace fs = std::filesystem;

namespace {

// 10x10x3 quarter five-spot with CPR (AMG on the pressure: the preconditioner that keeps its
// aggregates across setups), four reports.
const std::vector<std::string> small_qfs = {"grid.nx=10",          "grid.ny=10", "grid.nz=3",
                                            "wells.PROD.i=10",     "wells.PROD.j=10",
                                            "schedule.end_time=360", "schedule.report_interval=90",
                                            "output.vtk=false"};
// The nc = 8 CI variant (CPR with true-IMPES weights and block ILU(0)), four reports.
const std::vector<std::string> small_mc8 = {"grid.nx=10",          "grid.ny=10", "grid.nz=3",
                                            "wells.PROD.i=10",     "wells.PROD.j=10",
                                            "schedule.end_time=5", "schedule.report_interval=1.25",
                                            "output.vtk=false"};

std::string slurp(const fs::path& p);

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more)
{
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

fs::path run_to(const std::string& deck, const std::vector<std::string>& overrides, const fs::path& dir,
                const fs::path& restart = {}, long report = -1)
{
  return test::run_into(Executor::create_cpu(), deck, overrides, dir, restart, report);
}

// `blockres verify` with its same-backend default tolerances passes, the two runs took the same
// time steps, and (CPU) every compared value is identical.
void expect_same_run(const fs::path& result, const fs::path& baseline)
{
  const Results r = read_results(result), b = read_results(baseline);
  const VerifyReport rep = compare_results(r, b, default_tolerances());
  for (const auto& m : rep.mismatches) ADD_FAILURE() << m;
  EXPECT_TRUE(rep.pass()) << rep.failed_comparisons() << " comparisons failed";
  EXPECT_EQ(r.step_time.size(), b.step_time.size());
  EXPECT_EQ(r.statistics.steps, b.statistics.steps);
  EXPECT_EQ(r.statistics.newton_iterations, b.statistics.newton_iterations);
  EXPECT_EQ(r.statistics.linear_iterations, b.statistics.linear_iterations);
  EXPECT_EQ(r.newton_step.size(), b.newton_step.size());
  EXPECT_EQ(r.report_times, b.report_times);
  for (const auto& c : rep.comparisons) EXPECT_EQ(c.max_abs, 0.0) << c.field << " " << c.scope << ": not bit-identical";
}

std::string attribute(const fs::path& file, const char* name)
{
  const h5::File f = h5::File::open_read(file);
  if (H5Aexists(f.id(), name) <= 0) return "";
  H5T_class_t cls;
  {
    h5::Id a(H5Aopen(f.id(), name, H5P_DEFAULT));
    h5::Id t(H5Aget_type(a));
    cls = H5Tget_class(t);
  }
  if (cls == H5T_STRING) return h5::read_string_attribute(f.id(), name);
  if (cls == H5T_INTEGER) return std::to_string(h5::read_int_attribute(f.id(), name));
  return fmt::format("{}", h5::read_double_attribute(f.id(), name));
}

// ---- the real binary ----------------------------------------------------------------------------

struct Child {
  pid_t pid = -1;
  fs::path out, err;
};

Child spawn(const std::vector<std::string>& args, const fs::path& log_stem, const std::vector<std::string>& env = {})
{
  Child c;
  c.out = log_stem.string() + ".out";
  c.err = log_stem.string() + ".err";
  // Everything the child needs is made before fork: this process may have OpenMP threads, so the
  // child calls only async-signal-safe functions (open, dup2, execve) before the exec.
  std::vector<std::string> envs = env;
  envs.push_back("OMP_NUM_THREADS=1");
  for (char** e = environ; *e; ++e)
    if (!std::string_view(*e).starts_with("OMP_NUM_THREADS=") && !std::string_view(*e).starts_with("BLOCKRES_"))
      envs.emplace_back(*e);
  std::vector<char*> envp, argv;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string binary = BLOCKRES_BINARY;
  std::vector<std::string> argstore(args);
  argv.push_back(binary.data());
  for (auto& a : argstore) argv.push_back(a.data());
  argv.push_back(nullptr);
  c.pid = ::fork();
  if (c.pid == 0) {
    const int o = ::open(c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1), ::dup2(e, 2);
    ::execve(binary.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  return c;
}

int wait_exit(const Child& c)  // exit code, or 128 + signal when killed by one
{
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const fs::path& p)
{
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text)
{
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

std::vector<std::string> cli_overrides(const std::vector<std::string>& overrides)
{
  std::vector<std::string> a;
  for (const auto& o : overrides) a.push_back("--set"), a.push_back(o);
  return a;
}

// Report rows of a checkpoint as soon as one exists (0 while none); a checkpoint replaced while it
// is read is read as the old file (rename keeps the open inode).
std::size_t checkpoint_rows(const fs::path& p)
{
  std::error_code ec;
  if (!fs::exists(p, ec)) return 0;
  try {
    return read_results(p).report_times.size();
  } catch (const std::exception&) {
    return 0;
  }
}

// 30x30x5 quarter five-spot, nine reports of 60 days at most 10-day steps: seconds on one core, so
// a run can be stopped after its second report and well before its end.
const std::vector<std::string> long_qfs = {"schedule.end_time=540", "schedule.report_interval=60",
                                           "schedule.dt_max=10", "output.checkpoint=true"};

std::vector<fs::path> leftovers(const fs::path& dir, const std::string& name)
{
  std::vector<fs::path> out;
  for (const auto& p : output_temporaries(dir, name))
    if (fs::exists(p)) out.push_back(p);
  if (fs::exists(dir / (name + ".lock"))) out.push_back(dir / (name + ".lock"));
  return out;
}

}  // namespace

// ---- restart gives the uninterrupted run ------------------------------------------------------------

TEST(Restart, OilWaterFromMiddleReportIsTheUninterruptedRun)
{
  const auto dir = test::fresh_dir("restart-ow");
  const auto full = run_to("quarter_five_spot.toml", small_qfs, dir / "full");
  // A run that stops at 180 d, continued by a deck with the later end (its last report, the default).
  const auto half = run_to("quarter_five_spot.toml", with(small_qfs, {"schedule.end_time=180"}), dir / "half");
  const auto cont = run_to("quarter_five_spot.toml", small_qfs, dir / "cont", half);
  expect_same_run(cont, full);
  // From a middle report of the complete file (--restart-report 1).
  const auto mid = run_to("quarter_five_spot.toml", small_qfs, dir / "mid", full, 1);
  expect_same_run(mid, full);
  // Provenance: where it continued from; the history (rows 0..2) is in the file.
  EXPECT_EQ(attribute(cont, "restart_file"), half.string());
  EXPECT_EQ(attribute(cont, "restart_report"), "2");
  EXPECT_EQ(attribute(cont, "restart_time"), "180");
  EXPECT_EQ(attribute(mid, "restart_report"), "1");
  EXPECT_EQ(attribute(full, "restart_file"), "");
  EXPECT_EQ(read_results(cont).report_times.size(), 5u);
  // The VTK series of a restarted run is the whole series too, file for file the uninterrupted one's.
  if (vtk_output_available()) {
    const auto vfull = run_to("quarter_five_spot.toml", with(small_qfs, {"output.vtk=true"}), dir / "vfull");
    run_to("quarter_five_spot.toml", with(small_qfs, {"output.vtk=true"}), dir / "vcont", vfull, 2);
    const std::string name = "quarter_five_spot";
    std::vector<fs::path> files = {fs::path(name + ".pvd")};
    for (int r = 0; r < 5; ++r) files.push_back(fs::path(name + "_vtk") / fmt::format("{}_{:04d}.vtr", name, r));
    for (const auto& f : files) {
      ASSERT_TRUE(fs::exists(dir / "vcont" / f)) << f;
      EXPECT_EQ(slurp(dir / "vcont" / f), slurp(dir / "vfull" / f)) << f;
    }
  }
  fs::remove_all(dir);
}

TEST(Restart, MulticomponentFromMiddleReportIsTheUninterruptedRun)
{
  const auto dir = test::fresh_dir("restart-mc");
  const auto full = run_to("multicomponent_8.toml", small_mc8, dir / "full");
  const auto mid = run_to("multicomponent_8.toml", small_mc8, dir / "mid", full, 2);
  expect_same_run(mid, full);
  // The 1D reacting tracer (block-Jacobi, no preconditioner state), restarted twice in a chain.
  const std::vector<std::string> mc3 = {"output.vtk=false"};
  const auto full3 = run_to("multicomponent_3.toml", mc3, dir / "full3");
  const auto a = run_to("multicomponent_3.toml", with(mc3, {"schedule.end_time=40"}), dir / "a");
  const auto b = run_to("multicomponent_3.toml", with(mc3, {"schedule.end_time=80"}), dir / "b", a);
  const auto c = run_to("multicomponent_3.toml", mc3, dir / "c", b);
  expect_same_run(c, full3);
  EXPECT_EQ(attribute(c, "restart_report"), "4");
  fs::remove_all(dir);
}

// An injector whose BHP limit is reached runs under BHP control: restarted at a report where it
// does, the continuation's controls, BHPs and rates are the uninterrupted run's.
TEST(Restart, WellUnderBhpControlStaysAsInTheUninterruptedRun)
{
  const auto dir = test::fresh_dir("restart-bhp");
  const auto deck = with(small_qfs, {"wells.INJ.bhp=240"});
  const auto full = run_to("quarter_five_spot.toml", deck, dir / "full");
  const Results f = read_results(full);
  // Steps up to report 2 (t = 180 d) with the injector at its limit, and after it.
  std::size_t before = 0, after = 0;
  for (std::size_t k = 0; k < f.step_time.size(); ++k)
    (f.step_time[k] <= 180.0 ? before : after) += f.well_at_bhp[k][0] == 1.0;
  ASSERT_GT(before, 0u) << "the injector never reached its BHP limit before the restart point";
  ASSERT_GT(after, 0u);
  const auto cont = run_to("quarter_five_spot.toml", deck, dir / "cont", full, 2);
  expect_same_run(cont, full);
  EXPECT_EQ(read_results(cont).well_at_bhp, f.well_at_bhp);
  fs::remove_all(dir);
}

// The time-step and Newton controls of the shipped 60x60x20 deck (iteration-count step control,
// failure prediction) with Eisenstat–Walker forcing and the iterative block ILU(0) stage: the next
// step size comes from the file, the forcing terms restart with every step, so every report row is a
// restart point that reproduces the run.
TEST(Restart, StepControllerAndForcingCarryOver)
{
  const auto dir = test::fresh_dir("restart-ctl");
  const auto deck = with(small_qfs, {"solver.newton.target_iterations=3", "solver.newton.predict_failure=true",
                                     "solver.linear.forcing=\"eisenstat_walker\"", "schedule.dt_max=120",
                                     "solver.linear.preconditioner.weights=\"true_impes\"",
                                     "solver.linear.preconditioner.second.type=\"ilu0\"",
                                     "solver.linear.preconditioner.second.factor_sweeps=1"});
  const auto full = run_to("quarter_five_spot.toml", deck, dir / "full");
  const Results f = read_results(full);
  EXPECT_GT(f.step_time.size(), 4u);
  // The controls are in play: forcing terms vary, and some step grew by a factor other than 2.
  EXPECT_GT(std::set<double>(f.newton_forcing.begin(), f.newton_forcing.end()).size(), 2u);
  bool controlled = false;
  for (std::size_t k = 1; k < f.step_dt.size(); ++k)
    controlled |= f.step_dt[k] != f.step_dt[k - 1] && f.step_dt[k] != 2 * f.step_dt[k - 1];
  EXPECT_TRUE(controlled);
  for (long r = 1; r <= 3; ++r) {
    const auto cont = run_to("quarter_five_spot.toml", deck, dir / fmt::format("r{}", r), full, r);
    expect_same_run(cont, full);
  }
  fs::remove_all(dir);
}

// The restart may change the schedule after the restart point and solver keys: the continuation
// then runs with them (here a looser Newton tolerance), the history stays.
TEST(Restart, SolverKeysMayChange)
{
  const auto dir = test::fresh_dir("restart-solver");
  const auto full = run_to("quarter_five_spot.toml", small_qfs, dir / "full");
  const auto loose = run_to("quarter_five_spot.toml", with(small_qfs, {"solver.newton.tol_cnv=1e-2"}), dir / "loose",
                            full, 2);
  const Results r = read_results(loose), b = read_results(full);
  ASSERT_EQ(r.report_times, b.report_times);
  for (std::size_t k = 0; k <= 2; ++k)
    EXPECT_EQ(r.cell_field("pressure").rows[k], b.cell_field("pressure").rows[k]) << "history row " << k;
  fs::remove_all(dir);
}

namespace {

// Every numeric dataset of `a` is in `b` with the same type, shape and values (NaN equal to NaN),
// bit for bit, but the wall-clock times of /restart (*_seconds other than time_seconds and
// dt_next_seconds, the simulated times) and of /newton (*_seconds).
void expect_same_datasets(const fs::path& a, const fs::path& b)
{
  const h5::File fa = h5::File::open_read(a), fb = h5::File::open_read(b);
  std::vector<std::string> names;
  const auto visit = [](hid_t loc, const char* name, const H5L_info_t*, void* data) -> herr_t {
    h5::Id obj(H5Oopen(loc, name, H5P_DEFAULT));
    if (H5Iget_type(obj) == H5I_DATASET) static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  ASSERT_GE(H5Lvisit(fa.id(), H5_INDEX_NAME, H5_ITER_INC, visit, &names), 0);
  std::size_t compared = 0;
  for (const auto& ds : names) {
    const bool wall_clock = (ds.starts_with("restart/") && ds.ends_with("_seconds") && ds != "restart/time_seconds" &&
                             ds != "restart/dt_next_seconds") ||
                            (ds.starts_with("newton/") && ds.ends_with("_seconds"));
    const auto ta = h5::dataset_type(fa.id(), ds);
    if (wall_clock || ta.element_class == H5T_STRING) continue;
    ASSERT_TRUE(h5::exists(fb.id(), ds)) << ds;
    const auto tb = h5::dataset_type(fb.id(), ds);
    EXPECT_EQ(ta.element_class, tb.element_class) << ds;
    EXPECT_EQ(ta.dims, tb.dims) << ds;
    const auto va = h5::read_doubles(fa.id(), ds).values, vb = h5::read_doubles(fb.id(), ds).values;
    ASSERT_EQ(va.size(), vb.size()) << ds;
    for (std::size_t k = 0; k < va.size(); ++k)
      ASSERT_TRUE(va[k] == vb[k] || (std::isnan(va[k]) && std::isnan(vb[k]))) << ds << "[" << k << "]: " << va[k]
                                                                               << " vs " << vb[k];
    ++compared;
  }
  EXPECT_GT(compared, 50u);
}

}  // namespace

// output.background_writer (issue 30 item 3): the reports, steps, Newton rows, restart data and
// checkpoints written on the writer thread make the same file, bit for bit, as written in the loop,
// for both models (with checkpoints on, so every report also copies the file).
TEST(BackgroundWriter, ResultFilesAreTheSameWithAndWithoutIt)
{
  const auto dir = test::fresh_dir("restart-background-writer");
  for (const auto& [deck, base] : {std::pair{std::string("quarter_five_spot.toml"), small_qfs},
                                   std::pair{std::string("multicomponent_8.toml"), small_mc8}}) {
    const auto on = run_to(deck, with(base, {"output.checkpoint=true", "output.background_writer=true"}), dir / "on");
    const auto off = run_to(deck, with(base, {"output.checkpoint=true", "output.background_writer=false"}), dir / "off");
    expect_same_datasets(on, off);
    expect_same_run(on, off);
    EXPECT_EQ(read_results(on).report_times.size(), 5u) << deck;
  }
  fs::remove_all(dir);
}

// A version 3 file (the run's file rewritten as version 3 wrote it: /restart/time and dt_next in
// seconds, setup_dt in seconds, float64 counters) continues exactly as the version 4 file does, the
// restart time read in seconds from version 3 and from version 4's time_seconds (a day value times
// 86400 need not give the seconds back). The continuation is a version 4 file, its copied history
// too: restarted again from a report of that history, it is still the uninterrupted run.
TEST(Restart, FromALayout3FileIsTheContinuationOfTheLayout4File)
{
  const auto dir = test::fresh_dir("restart-v3");
  const auto full = run_to("quarter_five_spot.toml", small_qfs, dir / "full");
  const fs::path v3 = dir / "v3.h5";
  fs::copy_file(full, v3);
  test::rewrite_as_layout_3(v3);
  ASSERT_EQ(attribute(v3, "layout_version"), "3");
  {
    const h5::File f = h5::File::open_read(v3);
    ASSERT_FALSE(h5::exists(f.id(), "restart/time_seconds"));
    ASSERT_TRUE(h5::exists(f.id(), "restart/setup_x")) << "CPR with AMG: a first setup to repeat";
  }
  const auto from3 = run_to("quarter_five_spot.toml", small_qfs, dir / "from3", v3, 2);
  const auto from4 = run_to("quarter_five_spot.toml", small_qfs, dir / "from4", full, 2);
  expect_same_run(from3, full);
  expect_same_datasets(from3, from4);
  expect_same_datasets(from4, from3);
  EXPECT_EQ(attribute(from3, "layout_version"), "4");
  {
    const h5::File f = h5::File::open_read(from3), g = h5::File::open_read(full);
    EXPECT_EQ(h5::read_doubles(f.id(), "restart/time").values, h5::read_doubles(f.id(), "reports/time").values);
    EXPECT_EQ(h5::read_doubles(f.id(), "restart/time_seconds").values,
              h5::read_doubles(g.id(), "restart/time_seconds").values);
    h5::Id a = h5::open_group(f.id(), "restart"), b = h5::open_group(g.id(), "restart");
    EXPECT_EQ(h5::read_double_attribute(a, "setup_dt_seconds"), h5::read_double_attribute(b, "setup_dt_seconds"));
    EXPECT_EQ(h5::read_double_attribute(a, "setup_dt"), h5::read_double_attribute(b, "setup_dt"));
  }
  const auto again = run_to("quarter_five_spot.toml", small_qfs, dir / "again", from3, 1);
  expect_same_run(again, full);
  fs::remove_all(dir);
}

// One-cell grids: a version 3 file's 1-D report series (and, with one component, its 1-D
// /restart/state) restart into a version 4 file of [r][1] series, as the uninterrupted run.
TEST(Restart, OneCellLayout3FilesRestart)
{
  const auto dir = test::fresh_dir("restart-one-cell");
  for (const auto kind : {test::OneCell::oil_water_one_well, test::OneCell::one_component_one_well}) {
    const auto sub = dir / (kind == test::OneCell::oil_water_one_well ? "ow" : "mc1");
    const auto deck = test::write_one_cell_deck(kind, sub);
    const auto full = test::run_one_cell(deck, sub / "full");
    const fs::path v3 = sub / "v3.h5";
    fs::copy_file(full, v3);
    test::rewrite_as_layout_3(v3);
    {
      const h5::File f = h5::File::open_read(v3);
      ASSERT_EQ(h5::dataset_type(f.id(), "reports/pressure").dims.size(), 1u);
    }
    const auto cont = test::run_one_cell(deck, sub / "cont", {}, v3, 1);
    expect_same_run(cont, full);
    expect_same_datasets(cont, test::run_one_cell(deck, sub / "cont4", {}, full, 1));
    const h5::File f = h5::File::open_read(cont);
    EXPECT_EQ(h5::dataset_type(f.id(), "reports/pressure").dims, (std::vector<hsize_t>{3, 1}));
  }
  fs::remove_all(dir);
}

// ---- refused restarts ---------------------------------------------------------------------------------

TEST(Restart, ChangedGridFluidOrModelIsRefusedNamingTheKey)
{
  const auto dir = test::fresh_dir("restart-refused");
  const auto full = run_to("quarter_five_spot.toml", small_qfs, dir / "full");
  auto refused = [&](const std::string& deck, const std::vector<std::string>& overrides, const std::string& key) {
    try {
      run_to(deck, overrides, dir / "x", full, 2);
      ADD_FAILURE() << "restart with " << key << " changed was not refused";
    } catch (const RestartError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(full.string()), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir / "x" / "quarter_five_spot.h5"));
    EXPECT_TRUE(leftovers(dir / "x", "quarter_five_spot").empty());
  };
  refused("quarter_five_spot.toml", with(small_qfs, {"grid.nz=4"}), "grid.nz: 3 in the restart file, 4 here");
  refused("quarter_five_spot.toml", with(small_qfs, {"fluid.water.viscosity=0.5"}),
          "fluid.water.viscosity: 0.4 in the restart file, 0.5 here");
  refused("quarter_five_spot.toml", with(small_qfs, {"wells.INJ.rate=120"}), "wells.INJ.rate");
  refused("quarter_five_spot.toml", with(small_qfs, {"rock.porosity=0.25"}), "rock.porosity");
  refused("multicomponent_8.toml", small_mc8, "model.type: 'oil_water' in the restart file, 'multicomponent' here");
  // The schedule up to the restart point must stay; after it there must be something to run.
  refused("quarter_five_spot.toml", with(small_qfs, {"schedule.report_interval=60"}), "schedule: report 1 is at 60 d");
  refused("quarter_five_spot.toml", with(small_qfs, {"schedule.end_time=180"}), "schedule.end_time");
  fs::remove_all(dir);
}

TEST(Restart, BadRestartFilesAreOneLineErrors)
{
  const auto dir = test::fresh_dir("restart-bad");
  const auto full = run_to("quarter_five_spot.toml", small_qfs, dir / "full");
  auto refused = [&](const fs::path& file, long report, const std::string& what) {
    try {
      run_to("quarter_five_spot.toml", small_qfs, dir / "x", file, report);
      ADD_FAILURE() << "restart from " << file << " was not refused";
    } catch (const RestartError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  };
  refused(dir / "no_such.h5", -1, "does not exist");
  refused(fs::path(BLOCKRES_SOURCE_DIR) / "verification/bad_input/not_hdf5.h5", -1, "not an HDF5 file");
  // A result written before restarts existed (a stored layout 3 baseline, no /restart): refused, not approximated.
  refused(fs::path(BLOCKRES_SOURCE_DIR) / "verification/baselines/quarter_five_spot_gmres_ilu_ci.h5", -1,
          "holds no restart data");
  refused(full, 5, "--restart-report 5: the file has report rows 0 to 4");
  // A layout version this build does not know (issue 28): refused as verify refuses it, before its data is read.
  const fs::path v99 = dir / "layout_v99.h5";
  fs::copy_file(full, v99);
  {
    h5::File f = h5::File::open_rw(v99);
    H5Adelete(f.id(), "layout_version");
    h5::write_attribute(f.id(), "layout_version", std::int64_t(99));
  }
  refused(v99, -1, "has result layout version 99, which this blockres does not know");
  fs::remove_all(dir);
}

TEST(Restart, DeckDifferencesIgnoreScheduleSolverOutputAndKeyWellsByName)
{
  const std::string a = "title = 'a'\n[grid]\nnx = 10\ndx = 10.0\n[schedule]\nend_time = 10.0\n"
                        "[[wells]]\nname = 'INJ'\nrate = 100\n[[wells]]\nname = 'PROD'\nbhp = 150.0\n";
  const std::string b = "title = 'b'\n[grid]\nnx = 10\ndx = 10\n[schedule]\nend_time = 20.0\n[solver.newton]\n"
                        "tol_cnv = 0.1\n[output]\ncheckpoint = true\n"
                        "[[wells]]\nname = 'INJ'\nrate = 100.0\n[[wells]]\nname = 'PROD'\nbhp = 140.0\n";
  const auto d = restart_deck_differences(a, b);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "wells.PROD.bhp: 150 in the restart file, 140 here");
  EXPECT_TRUE(restart_deck_differences(a, a).empty());
}

// ---- checkpoints, SIGKILL, SIGTERM, SIGINT -------------------------------------------------------------

TEST(Checkpoint, RunKilledAfterItsSecondReportRestartsFromItsCheckpoint)
{
  const auto dir = test::fresh_dir("restart-kill");
  const auto args = cli_overrides(with(long_qfs, {"output.vtk=false"}));
  const std::string deck = test::deck_path("quarter_five_spot.toml");
  auto run_args = [&](const fs::path& out, std::vector<std::string> more = {}) {
    std::vector<std::string> a = {"run", deck, "--backend", "cpu", "--output", out.string()};
    a.insert(a.end(), args.begin(), args.end());
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const Child full = spawn(run_args(dir / "full"), dir / "full");
  ASSERT_EQ(wait_exit(full), 0) << slurp(full.err);

  const fs::path out = dir / "killed", ckpt = out / "quarter_five_spot.checkpoint.h5";
  const Child victim = spawn(run_args(out), dir / "victim");
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t rows = 0;
  while ((rows = checkpoint_rows(ckpt)) < 3 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(victim.pid, SIGKILL);
  ASSERT_EQ(wait_exit(victim), 128 + SIGKILL);
  rows = checkpoint_rows(ckpt);
  ASSERT_GE(rows, 3u) << "no checkpoint after the second report";
  ASSERT_LT(rows, read_results(dir / "full" / "quarter_five_spot.h5").report_times.size())
      << "the run finished before it was killed";
  EXPECT_FALSE(fs::exists(out / "quarter_five_spot.h5"));
  // The killed writer left its lock and result temporary: stale now, removed by the next run.
  EXPECT_TRUE(fs::exists(out / "quarter_five_spot.lock"));
  EXPECT_TRUE(fs::exists(out / "quarter_five_spot.h5.tmp"));

  const Child resumed = spawn(run_args(out, {"--restart", ckpt.string()}), dir / "resumed");
  ASSERT_EQ(wait_exit(resumed), 0) << slurp(resumed.err);
  const std::string log = slurp(resumed.out);
  EXPECT_NE(log.find("removed stale temporary"), std::string::npos) << log;
  EXPECT_NE(log.find(fmt::format("restart from report {}", rows - 1)), std::string::npos) << log;
  expect_same_run(out / "quarter_five_spot.h5", dir / "full" / "quarter_five_spot.h5");
  // Finished: the checkpoint is superseded by the result, no temporaries or lock remain.
  EXPECT_FALSE(fs::exists(ckpt));
  EXPECT_TRUE(leftovers(out, "quarter_five_spot").empty());
  fs::remove_all(dir);
}

// SIGKILL, and a rerun into the same output at once, while the killed process is still a zombie
// (not waited for: kill(pid, 0) still finds it): the kernel released its lock when it died, so the
// rerun takes the output and removes the dead run's temporaries (issue 28).
TEST(OutputLock, RerunAfterSigkillWhileTheKilledRunIsAZombieSucceeds)
{
  const auto dir = test::fresh_dir("restart-zombie");
  const fs::path out = dir / "run";
  auto run_args = [&](std::vector<std::string> more) {
    std::vector<std::string> a = {"run", test::deck_path("quarter_five_spot.toml"), "--backend", "cpu", "--output",
                                  out.string()};
    for (const auto& s : cli_overrides(with(long_qfs, more))) a.push_back(s);
    return a;
  };
  const Child victim = spawn(run_args({"output.vtk=false"}), dir / "victim");
  const auto t0 = std::chrono::steady_clock::now();
  while (slurp(victim.out).find("step     1") == std::string::npos &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(victim.pid, SIGKILL);
  // Dead (its files closed) but not reaped.
  const auto state = [&] {
    const std::string stat = slurp(fmt::format("/proc/{}/stat", victim.pid));
    const auto close = stat.rfind(')');
    return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
  };
  while (state() != 'Z' && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(state(), 'Z');
  ASSERT_EQ(::kill(victim.pid, 0), 0) << "the zombie should still be found by kill(pid, 0)";
  EXPECT_TRUE(fs::exists(out / "quarter_five_spot.lock"));
  EXPECT_TRUE(fs::exists(out / "quarter_five_spot.h5.tmp"));

  const Child rerun = spawn(run_args({"output.vtk=false", "schedule.end_time=60"}), dir / "rerun");
  EXPECT_EQ(wait_exit(rerun), 0) << slurp(rerun.err);
  EXPECT_NE(slurp(rerun.out).find("removed stale temporary"), std::string::npos) << slurp(rerun.out);
  EXPECT_TRUE(fs::exists(out / "quarter_five_spot.h5"));
  EXPECT_TRUE(leftovers(out, "quarter_five_spot").empty());
  EXPECT_EQ(wait_exit(victim), 128 + SIGKILL);
  fs::remove_all(dir);
}

TEST(Interrupt, SigtermLeavesNoTemporariesAndSaysWhereToRestart)
{
  const auto dir = test::fresh_dir("restart-term");
  const fs::path out = dir / "run", ckpt = out / "quarter_five_spot.checkpoint.h5";
  // VTK on where built: its staging directory must go too.
  std::vector<std::string> a = {"run", test::deck_path("quarter_five_spot.toml"), "--backend", "cpu", "--output",
                                out.string()};
  for (const auto& s : cli_overrides(with(long_qfs, {std::string(vtk_output_available() ? "output.vtk=true" : "output.vtk=false")})))
    a.push_back(s);
  const Child c = spawn(a, dir / "term");
  const auto t0 = std::chrono::steady_clock::now();
  while (checkpoint_rows(ckpt) < 2 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(c.pid, SIGTERM);
  ASSERT_EQ(wait_exit(c), 143) << slurp(c.err);
  const auto err = lines(slurp(c.err));
  ASSERT_EQ(err.size(), 1u) << slurp(c.err);
  EXPECT_TRUE(std::regex_search(err[0], std::regex("^blockres: interrupted by SIGTERM at t = [0-9.]+ d: restart from "
                                                   "report [0-9]+ \\(t = [0-9.]+ d\\): rerun the same command with "
                                                   "--restart .*quarter_five_spot[.]checkpoint[.]h5$")))
      << err[0];
  EXPECT_TRUE(leftovers(out, "quarter_five_spot").empty());
  EXPECT_FALSE(fs::exists(out / "quarter_five_spot.h5"));
  EXPECT_FALSE(fs::exists(out / "quarter_five_spot.pvd"));
  ASSERT_TRUE(fs::exists(ckpt));
  // The checkpoint named is a complete, restartable result file.
  const Results r = read_results(ckpt);
  EXPECT_GE(r.report_times.size(), 2u);
  EXPECT_EQ(attribute(ckpt, "checkpoint"), "1");

  // SIGINT without checkpoints: exit 130, nothing restartable, nothing left.
  const fs::path out2 = dir / "int";
  std::vector<std::string> b = {"run", test::deck_path("quarter_five_spot.toml"), "--backend", "cpu", "--output",
                                out2.string(), "--set", "output.vtk=false", "--set", "schedule.dt_max=10"};
  const Child d = spawn(b, dir / "int");
  const auto t1 = std::chrono::steady_clock::now();
  while (slurp(d.out).find("step     3") == std::string::npos &&
         std::chrono::steady_clock::now() - t1 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ::kill(d.pid, SIGINT);
  ASSERT_EQ(wait_exit(d), 130) << slurp(d.err);
  const auto err2 = lines(slurp(d.err));
  ASSERT_EQ(err2.size(), 1u) << slurp(d.err);
  EXPECT_NE(err2[0].find("interrupted by SIGINT"), std::string::npos) << err2[0];
  EXPECT_NE(err2[0].find("nothing to restart from (output.checkpoint is off)"), std::string::npos) << err2[0];
  EXPECT_TRUE(leftovers(out2, "quarter_five_spot").empty());
  EXPECT_FALSE(fs::exists(out2 / "quarter_five_spot.h5"));
  fs::remove_all(dir);
}

// ---- signal bursts (issue 28) ----------------------------------------------------------------------

namespace {
// Whether `pid` has a handler installed for `sig` (the SigCgt mask of /proc/<pid>/status): blockres
// has reached main. A signal before that meets the dynamic loader, before any blockres code or file.
bool catches(pid_t pid, int sig)
{
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string l; std::getline(in, l);)
    if (l.starts_with("SigCgt:")) return (std::stoull(l.substr(7), nullptr, 16) >> (sig - 1)) & 1ULL;
  return false;
}
}  // namespace

// Slurm, `timeout` and mpirun signal the process group: the same stop request arrives twice within
// microseconds. At random moments from the first instant blockres runs its own code (start-up, deck,
// set-up, time loop, report writing), two SIGTERMs within 1 ms are one clean stop: exit 143, one
// line, no temporaries and no lock.
TEST(Interrupt, SigtermBurstAtRandomMomentsIsOneCleanStop)
{
  const auto dir = test::fresh_dir("restart-burst");
  std::mt19937 rng(28);
  std::uniform_int_distribution<int> moment_us(0, 700000), gap_us(0, 1000);
  const std::string vtk = vtk_output_available() ? "output.vtk=true" : "output.vtk=false";
  for (int attempt = 0; attempt < 20; ++attempt) {
    const fs::path out = dir / fmt::format("run{}", attempt);
    std::vector<std::string> a = {"run", test::deck_path("quarter_five_spot.toml"), "--backend", "cpu", "--output",
                                  out.string()};
    for (const auto& s : cli_overrides(with(long_qfs, {vtk}))) a.push_back(s);
    // Early moments are the ones that used to exit silently: a third of the tries within 20 ms.
    const int delay_us = attempt % 3 == 0 ? moment_us(rng) / 35 : moment_us(rng);
    const int gap = gap_us(rng);
    const Child c = spawn(a, dir / fmt::format("burst{}", attempt));
    const auto t0 = std::chrono::steady_clock::now();
    while (!catches(c.pid, SIGTERM) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30))
      std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    ::kill(c.pid, SIGTERM);
    std::this_thread::sleep_for(std::chrono::microseconds(gap));
    ::kill(c.pid, SIGTERM);
    const std::string at = fmt::format("try {}: {} us after main, second signal {} us later", attempt, delay_us, gap);
    ASSERT_EQ(wait_exit(c), 143) << at << "\n" << slurp(c.err);
    const auto err = lines(slurp(c.err));
    ASSERT_EQ(err.size(), 1u) << at << "\n" << slurp(c.err);
    EXPECT_TRUE(err[0].starts_with("blockres: interrupted by SIGTERM ")) << at << "\n" << err[0];
    EXPECT_TRUE(leftovers(out, "quarter_five_spot").empty()) << at;
    EXPECT_FALSE(fs::exists(out / "quarter_five_spot.h5")) << at;
  }
  fs::remove_all(dir);
}

// The handlers themselves, in a child (fork: from here to _exit only async-signal-safe calls):
// repeats within interrupt_burst_ms are ignored, a signal after it ends the process at once with
// its one line.
TEST(Interrupt, RepeatWithinTheBurstIsIgnoredALaterOneStopsAtOnce)
{
  const auto dir = test::fresh_dir("restart-second");
  const std::string err_path = (dir / "err").string();
  const pid_t p = ::fork();
  if (p == 0) {
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(e, 2);
    install_interrupt_handlers();
    ::kill(::getpid(), SIGINT);
    ::kill(::getpid(), SIGINT);
    ::kill(::getpid(), SIGINT);
    if (interrupt_signal() != SIGINT) ::_exit(3);  // the first was not recorded
    const timespec later{0, (interrupt_burst_ms + 100) * 1000000L};
    ::nanosleep(&later, nullptr);
    ::kill(::getpid(), SIGINT);  // deliberate: ends the process in the handler
    ::_exit(4);                  // survived it
  }
  int status = 0;
  ::waitpid(p, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << "3: first signal not recorded, 4: the later signal did not stop it";
  const auto err = lines(slurp(dir / "err"));
  ASSERT_EQ(err.size(), 1u) << slurp(dir / "err");
  EXPECT_TRUE(err[0].starts_with("blockres: second SIGINT: stopped at once")) << err[0];
  fs::remove_all(dir);
}

// ---- stale temporaries and the lock -------------------------------------------------------------------

namespace {
void touch(const fs::path& p)
{
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x";
}
pid_t dead_pid()
{
  const pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  ::waitpid(p, nullptr, 0);
  return p;
}
std::string host()
{
  char buf[256] = {0};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}
void write_lock(const fs::path& p, long pid, const std::string& host_name)
{
  std::ofstream(p) << pid << " " << host_name << "\n";
}
}  // namespace

TEST(OutputLock, StaleTemporariesOfADeadWriterAreRemovedALiveWritersAreNot)
{
  const auto dir = test::fresh_dir("restart-lock");
  const auto temps = output_temporaries(dir, "case");
  auto make_temps = [&] {
    for (const auto& p : temps) touch(p.extension() == ".tmp" && p.string().ends_with("_vtk.tmp") ? p / "case_0001.vtr" : p);
    touch(dir / "other.h5.tmp");  // another run's, of another name: never touched
  };
  // A dead writer's lock and temporaries: removed; the lock is then ours.
  make_temps();
  write_lock(dir / "case.lock", dead_pid(), host());
  {
    const OutputLock lock(dir, "case");
    for (const auto& p : temps) EXPECT_FALSE(fs::exists(p)) << p;
    EXPECT_EQ(lock.removed().size(), temps.size());
    EXPECT_EQ(slurp(dir / "case.lock").substr(0, std::to_string(::getpid()).size() + 1),
              std::to_string(::getpid()) + " ");
    // While we hold it, a second run into the same name is refused, our files untouched.
    EXPECT_THROW(OutputLock(dir, "case"), OutputBusy);
  }
  EXPECT_FALSE(fs::exists(dir / "case.lock"));
  EXPECT_TRUE(fs::exists(dir / "other.h5.tmp"));

  // A live writer's (another open file holding the flock, naming a child that sleeps): refused,
  // naming its pid; its files stay.
  make_temps();
  const pid_t live = ::fork();
  if (live == 0) {
    ::pause();
    ::_exit(0);
  }
  write_lock(dir / "case.lock", live, host());
  const int holder = ::open((dir / "case.lock").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);
  try {
    OutputLock lock(dir, "case");
    ADD_FAILURE() << "a live writer's lock was taken";
  } catch (const OutputBusy& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("pid {}", live)), std::string::npos) << e.what();
  }
  for (const auto& p : temps) EXPECT_TRUE(fs::exists(p)) << p;
  EXPECT_TRUE(fs::exists(dir / "case.lock"));
  // A writer on another host (a shared file system) holds it the same way: left alone as well.
  write_lock(dir / "case.lock", dead_pid(), "some-other-host.example");
  try {
    OutputLock lock(dir, "case");
    ADD_FAILURE() << "a lock held for another host was taken";
  } catch (const OutputBusy& e) {
    EXPECT_NE(std::string(e.what()).find("on host some-other-host.example"), std::string::npos) << e.what();
  }
  for (const auto& p : temps) EXPECT_TRUE(fs::exists(p)) << p;
  ::close(holder);

  // The pid and host are information only (issue 28): a lock file nobody holds is taken over even
  // when it names a live process that is not a blockres writer (a pid reused after a reboot), or
  // another host; the temporaries beside it are stale.
  write_lock(dir / "case.lock", live, host());
  {
    const OutputLock lock(dir, "case");
    for (const auto& p : temps) EXPECT_FALSE(fs::exists(p)) << p;
    EXPECT_EQ(slurp(dir / "case.lock"), fmt::format("{} {}\n", ::getpid(), host()));
  }
  make_temps();
  write_lock(dir / "case.lock", live, "some-other-host.example");
  {
    const OutputLock lock(dir, "case");
    for (const auto& p : temps) EXPECT_FALSE(fs::exists(p)) << p;
  }
  EXPECT_FALSE(fs::exists(dir / "case.lock"));
  ::kill(live, SIGKILL);
  ::waitpid(live, nullptr, 0);

  // Temporaries without any lock (an older blockres killed mid-run): stale. A run with VTK off
  // removes the stale VTK staging directory too.
  const fs::path vtk_tmp = dir / "quarter_five_spot_vtk.tmp";
  touch(vtk_tmp / "quarter_five_spot_0000.vtr");
  touch(dir / "quarter_five_spot.h5.tmp");
  run_to("quarter_five_spot.toml", with(small_qfs, {"schedule.end_time=90"}), dir);
  EXPECT_FALSE(fs::exists(vtk_tmp));
  EXPECT_FALSE(fs::exists(dir / "quarter_five_spot.h5.tmp"));
  EXPECT_TRUE(fs::exists(dir / "quarter_five_spot.h5"));
  EXPECT_TRUE(fs::exists(dir / "other.h5.tmp"));
  fs::remove_all(dir);
}

// ---- threads and exits without unwinding (issue 28) ----------------------------------------------------

// --threads 4096 and OMP_NUM_THREADS=100000 run, capped at the machine's CPUs with the log saying so;
// threads that cannot be created (here: a stack size no memory holds) end the run with a line naming
// the setting, before anything is written.
TEST(Threads, ExplicitCountsAreCappedAndAFailureToStartThemNamesTheSetting)
{
  const auto dir = test::fresh_dir("restart-threads");
  const long machine = std::max<long>(::sysconf(_SC_NPROCESSORS_ONLN), 1);
  auto args = [&](const fs::path& out, std::vector<std::string> more) {
    std::vector<std::string> a = {"run", test::deck_path("quarter_five_spot.toml"), "--backend", "cpu", "--output",
                                  out.string()};
    for (const auto& s : cli_overrides(with(small_qfs, {"schedule.end_time=90"}))) a.push_back(s);
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const std::string cap = fmt::format("capped at the machine's {} CPU{}", machine, machine == 1 ? "" : "s");
  const Child a = spawn(args(dir / "a", {"--threads", "4096"}), dir / "a");
  ASSERT_EQ(wait_exit(a), 0) << slurp(a.err);
  EXPECT_NE(slurp(a.out).find(fmt::format("threads: {} thread", machine)), std::string::npos) << slurp(a.out);
  EXPECT_NE(slurp(a.out).find("--threads 4096, " + cap), std::string::npos) << slurp(a.out);
  const Child b = spawn(args(dir / "b", {}), dir / "b", {"OMP_NUM_THREADS=100000"});
  ASSERT_EQ(wait_exit(b), 0) << slurp(b.err);
  EXPECT_NE(slurp(b.out).find("OMP_NUM_THREADS=100000, " + cap), std::string::npos) << slurp(b.out);

  if (machine < 2) GTEST_SKIP() << "one CPU: no OpenMP thread to fail to create";
  const Child c = spawn(args(dir / "c", {"--threads", "2"}), dir / "c", {"OMP_STACKSIZE=1000G"});
  EXPECT_EQ(wait_exit(c), 1) << slurp(c.err);
  const auto err = lines(slurp(c.err));
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.back(), "error: could not start 2 OpenMP threads (--threads 2): lower --threads or OMP_NUM_THREADS "
                        "(or OMP_STACKSIZE)") << slurp(c.err);
  EXPECT_FALSE(fs::exists(dir / "c"));  // nothing written
  fs::remove_all(dir);
}

// A run ended by exit() without unwinding (libgomp's fatal errors call exit(1)) or by std::terminate
// still removes its temporaries and lock. In a child (fork), which holds the lock and exits.
TEST(OutputLock, ExitAndTerminateWithoutUnwindingRemoveTheTemporaries)
{
  for (const bool terminate : {false, true}) {
    const auto dir = test::fresh_dir("restart-exit");
    const auto temps = output_temporaries(dir, "case");
    const pid_t p = ::fork();
    if (p == 0) {
      ::close(2);  // terminate's message is not this test's output
      new OutputLock(dir, "case");  // never destroyed: as if the frame holding it were never unwound
      for (const auto& t : temps) touch(t.string().ends_with("_vtk.tmp") ? t / "case_0001.vtr" : t);
      if (terminate) std::terminate();
      std::exit(1);
    }
    int status = 0;
    ::waitpid(p, &status, 0);
    if (terminate)
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << status;
    else
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
    for (const auto& t : temps) EXPECT_FALSE(fs::exists(t)) << t << (terminate ? " (terminate)" : " (exit)");
    EXPECT_FALSE(fs::exists(dir / "case.lock")) << (terminate ? "terminate" : "exit");
    fs::remove_all(dir);
  }
}

// ---- out of memory -----------------------------------------------------------------------------------

TEST(OutOfMemory, AllocationFailuresNameWhatAndTheBytes)
{
  const auto dir = test::fresh_dir("restart-oom");
  auto failing = [&](const std::string& limit, const std::vector<std::string>& overrides, const std::string& pattern) {
    std::vector<std::string> a = {"run", test::deck_path("quarter_five_spot.toml"), "--backend", "cpu", "--output",
                                  (dir / "out").string()};
    for (const auto& s : cli_overrides(overrides)) a.push_back(s);
    const Child c = spawn(a, dir / "oom", {"BLOCKRES_FAIL_ALLOC_ABOVE=" + limit});
    EXPECT_EQ(wait_exit(c), 1);
    const auto err = lines(slurp(c.err));
    ASSERT_EQ(err.size(), 1u) << slurp(c.err);
    EXPECT_TRUE(std::regex_search(err[0], std::regex(pattern))) << err[0];
    EXPECT_FALSE(fs::exists(dir / "out" / "quarter_five_spot.h5"));
    EXPECT_TRUE(leftovers(dir / "out", "quarter_five_spot").empty());
  };
  // A host std::vector (operator new): the deck's rock arrays of 100x100x10 cells, 800,000 bytes each.
  failing("300000",
          {"grid.nx=100", "grid.ny=100", "grid.nz=10", "wells.PROD.i=100", "wells.PROD.j=100", "output.vtk=false"},
          "^error: out of host memory: allocating the deck's grid and rock properties: 0[.]001 GB \\(800000 bytes\\) "
          "failed");
  // An executor array (host memory on the CPU backend; on CUDA the same path gives the bytes free) in the time loop:
  // the FGMRES(30) bases of the 30x30x5 deck growing from 8 to 16 vectors of 9,000 values, as a solve to a 1e-6
  // reduction passes 8 iterations.
  failing("1000000", {"output.vtk=false", "solver.linear.tolerance=1e-6"},
          "^error: host memory: allocating the Krylov vectors and bases: 0[.]001 GB \\(1152000 bytes\\) failed");
  fs::remove_all(dir);
}
