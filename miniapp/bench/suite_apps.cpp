// The bench suite's application section: the oil-water quarter five-spot and the multicomponent model at
// nc 3, 8, 16, 32 and 64, each a shipped deck on a grid and schedule set by the suite's size, run in-process
// on the suite's executor. Each run is checked against the stored baseline of its case and size
// (verification/bench_suite/baselines.json): a summary of its result file (time steps, quantities in place,
// well BHP and rates at every step, and the mean / min / max of every cell field at every report) compared
// with the cross-backend tolerances of verification/README.md.
#include "miniapp/bench/suite.hpp"

#include "input/quote.hpp"
#include "miniapp/io/deck.hpp"
#include "miniapp/io/json_file.hpp"
#include "miniapp/io/results.hpp"
#include "miniapp/run/simulator.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <stdexcept>

namespace blockres::suite {

namespace fs = std::filesystem;

namespace {

// One application case: a shipped deck and, per size, the grid (nx, ny, nz and cell sizes keeping the
// deck's domain proportions) and the producer moved to the far corner. The schedule is fixed per model: the
// oil-water case runs 3 steps of 0.25 day, the multicomponent cases 2 steps of 0.5 day (short enough that no
// size cuts a step: a cut is a different run, and the baselines' time steps must match exactly; with 1-day steps
// the 1M-cell oil-water case cut 6 times on the H200).
struct Grid {
  int nx, ny, nz;
  double dx, dy, dz;
};
struct AppCase {
  std::string name;
  std::string deck;  // under inputs/
  int components;    // 0: oil-water
  Grid small, medium, large;
};

const std::vector<AppCase>& app_cases()
{
  static const std::vector<AppCase> cases = {
      {"oil_water", "quarter_five_spot_60x60x20.toml", 0, {40, 40, 10, 7.5, 7.5, 2}, {100, 100, 20, 3, 3, 1},
       {200, 200, 25, 1.5, 1.5, 0.8}},
      {"multicomponent_nc3", "multicomponent_3.toml", 3, {30, 30, 10, 10, 10, 2}, {100, 100, 10, 10, 10, 4},
       {100, 100, 100, 10, 10, 0.4}},
      {"multicomponent_nc8", "multicomponent_8.toml", 8, {20, 20, 5, 10, 10, 4}, {60, 60, 10, 10, 10, 4},
       {100, 100, 100, 10, 10, 0.4}},
      {"multicomponent_nc16", "multicomponent_16.toml", 16, {15, 15, 5, 10, 10, 4}, {50, 50, 20, 10, 10, 2},
       {100, 100, 100, 10, 10, 0.4}},
      {"multicomponent_nc32", "multicomponent_32.toml", 32, {10, 10, 4, 10, 10, 2}, {50, 50, 20, 10, 10, 2},
       {100, 100, 20, 10, 10, 2}},
      {"multicomponent_nc64", "multicomponent_64.toml", 64, {8, 8, 3, 10, 10, 2}, {30, 30, 20, 10, 10, 2},
       {50, 50, 40, 10, 10, 2}},
  };
  return cases;
}

std::vector<std::string> case_overrides(const AppCase& c, const std::string& size)
{
  const Grid& g = size == "small" ? c.small : size == "medium" ? c.medium : c.large;
  std::vector<std::string> ov = {
      fmt::format("grid.nx={}", g.nx),        fmt::format("grid.ny={}", g.ny),      fmt::format("grid.nz={}", g.nz),
      fmt::format("grid.dx={}", g.dx),        fmt::format("grid.dy={}", g.dy),      fmt::format("grid.dz={}", g.dz),
      fmt::format("wells.PROD.i={}", g.nx),   fmt::format("wells.PROD.j={}", g.ny), "output.vtk=false",
      "output.checkpoint=false"};
  if (c.components == 0) {
    for (const char* s : {"schedule.dt_initial=0.25", "schedule.dt_max=0.25", "schedule.end_time=0.75",
                          "schedule.report_interval=0.75"})
      ov.emplace_back(s);
  } else {
    for (const char* s : {"schedule.dt_initial=0.5", "schedule.dt_max=0.5", "schedule.end_time=1", "schedule.report_interval=1"})
      ov.emplace_back(s);
  }
  // The linear tolerance the baselines were recorded with (the fixed 1e-4, the default before issue 30
  // made inexact Newton the default): the suite's work stays what it was, so reports stay comparable.
  ov.emplace_back("solver.linear.forcing=fixed");
  return ov;
}

// The source tree's file `rel` (inputs/..., verification/...): $BLOCKRES_SOURCE_DIR, else the tree this
// binary was built from.
fs::path source_file(const std::string& rel)
{
  const char* env = std::getenv("BLOCKRES_SOURCE_DIR");
  return fs::path(env && *env ? env : BLOCKRES_SUITE_SOURCE_DIR) / rel;
}

struct TempDir {
  fs::path path;
  TempDir()
  {
    static std::atomic<int> counter{0};
    std::random_device rd;
    for (int attempt = 0; attempt < 100 && path.empty(); ++attempt) {
      const auto d = fs::temp_directory_path() /
                     fmt::format("blockres-suite-{}-{}-{:08x}", static_cast<long>(::getpid()), counter++, rd());
      if (fs::create_directory(d)) path = d;
    }
    if (path.empty()) throw std::runtime_error("bench suite: cannot create a temporary directory");
  }
  ~TempDir()
  {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// The validity bound on the application runs' linear solver: iterations per Newton iteration (twice the
// project's target of 20 for its shipped decks); and no linear solve may fail.
constexpr double max_linear_per_newton = 40.0;

// ---- the summary of a result file and its comparison -------------------------------------------------
Json summary_of(const Results& r)
{
  Json s;
  s["model"] = r.model;
  s["steps"] = r.step_time.size();
  s["step_time"] = r.step_time;
  s["step_dt"] = r.step_dt;
  Json& ip = s["in_place"] = Json::object();
  for (const auto& q : r.in_place) ip[q.name] = {{"group", q.group}, {"values", q.values}};
  Json& bhp = s["well_bhp"] = Json::object();
  for (std::size_t w = 0; w < r.well_names.size(); ++w) {
    std::vector<double> v;
    for (const auto& row : r.well_bhp) v.push_back(row[w]);
    bhp[r.well_names[w]] = v;
  }
  Json& rates = s["well_rates"] = Json::object();
  for (const auto& q : r.well_rates) {
    Json wells = Json::object();
    for (std::size_t w = 0; w < r.well_names.size(); ++w) {
      std::vector<double> v;
      for (const auto& row : q.rows) v.push_back(row[w]);
      wells[r.well_names[w]] = v;
    }
    rates[q.name] = {{"group", q.group}, {"wells", wells}};
  }
  Json& fields = s["fields"] = Json::object();
  for (const auto& f : r.cell_fields) {
    std::vector<double> mean, lo, hi;
    for (const auto& row : f.rows) {
      double sum = 0, mn = INFINITY, mx = -INFINITY;
      std::size_t cnt = 0;
      for (double x : row)
        if (std::isfinite(x)) sum += x, mn = std::min(mn, x), mx = std::max(mx, x), ++cnt;
      mean.push_back(cnt ? sum / double(cnt) : 0.0), lo.push_back(mn), hi.push_back(mx);
    }
    fields[f.name] = {{"group", f.group}, {"mean", mean}, {"min", lo}, {"max", hi}};
  }
  double newton = 0, linear = 0;
  for (double x : r.newton_iterations) newton += x;
  for (double x : r.linear_iterations) linear += x;
  s["newton_iterations"] = newton;  // recorded, not compared (a backend may take other iterations)
  s["linear_iterations"] = linear;
  return s;
}

// The cross-backend policy of verification/README.md (rel, abs) by tolerance group; mass_in_place and
// well_mass_rate also get abs = rel x the step's total (their case files' reasoning: a component's mass
// agrees to the Newton tolerance relative to the total, not to its own).
struct Tol {
  double rel, abs;
};
const std::map<std::string, Tol>& policy()
{
  static const std::map<std::string, Tol> p = {
      {"pressure", {1e-5, 1e-3}},       {"sw", {0.0, 1e-4}},            {"well_bhp", {1e-5, 1e-3}},
      {"well_water_rate", {1e-4, 1e-3}}, {"well_oil_rate", {1e-4, 1e-3}}, {"water_rate", {1e-4, 1e-3}},
      {"oil_rate", {1e-4, 1e-3}},        {"step_time", {1e-12, 0.0}},   {"step_dt", {1e-12, 0.0}},
      {"water_in_place", {1e-6, 0.0}},   {"oil_in_place", {1e-6, 0.0}}, {"density", {1e-6, 1e-3}},
      {"mass_fraction", {0.0, 1e-4}},    {"well_mass_rate", {1e-4, 1e-2}}, {"mass_in_place", {1e-6, 0.1}},
  };
  return p;
}

struct Compared {
  std::size_t values = 0;
  std::vector<std::string> failures;
  double worst = 0.0;  // max |diff| / (abs + rel |baseline|)
  void value(const std::string& where, double got, double want, Tol t)
  {
    ++values;
    const double bound = t.abs + t.rel * std::abs(want);
    const double d = std::abs(got - want);
    const bool ok = (std::isnan(got) && std::isnan(want)) || (got == want) || d <= bound;
    if (bound > 0 && std::isfinite(d)) worst = std::max(worst, d / bound);
    if (!ok) {
      if (!(bound > 0)) worst = INFINITY;
      if (failures.size() < 8)
        failures.push_back(fmt::format("{}: {:.10g} against the baseline's {:.10g} (|diff| {:.3g} > {:.3g})", where, got,
                                       want, d, bound));
      else if (failures.size() == 8)
        failures.push_back("(more)");
    }
  }
  void missing(const std::string& what)
  {
    if (failures.size() < 9) failures.push_back(what);
  }
};

// j[key] for a const j without nlohmann's undefined behaviour on a missing key: null when j is not an object or
// has no such key (a malformed baselines file is then "a different number of values", never a crash).
const Json& at(const Json& j, const std::string& key)
{
  static const Json null_json;
  if (!j.is_object()) return null_json;
  const auto it = j.find(key);
  return it == j.end() ? null_json : *it;
}

// A string member's text ("" for anything else).
std::string str(const Json& j) { return j.is_string() ? j.get<std::string>() : std::string(); }

Tol tolerance_of(const std::string& group, Compared& c)
{
  const auto it = policy().find(group);
  if (it != policy().end()) return it->second;
  c.missing("no tolerance for the group " + group + " (the suite's policy table): not compared");
  return {0.0, 0.0};
}

void compare_series(const std::string& where, const Json& got, const Json& want, Tol t, Compared& c,
                    const std::vector<double>* scale = nullptr)
{
  if (!got.is_array() || !want.is_array() || got.size() != want.size()) {
    c.missing(where + ": a different number of values than the baseline");
    return;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i].is_number() ? got[i].get<double>() : NAN, w = want[i].is_number() ? want[i].get<double>() : NAN;
    Tol ti = t;
    if (scale) ti.abs = std::max(t.abs, t.rel * (*scale)[i]);
    c.value(fmt::format("{}[{}]", where, i), g, w, ti);
  }
}

Compared compare_summaries(const Json& got, const Json& want)
{
  Compared c;
  if (!want.is_object() || !at(want, "steps").is_number_integer()) {
    c.missing("the stored baseline is not a summary (no \"steps\"): regenerate it");
    return c;
  }
  if (got.value("steps", -1) != want.value("steps", -2)) {
    c.missing(fmt::format("time steps: {} against the baseline's {} (the run behaved differently)",
                          got.value("steps", -1), want.value("steps", -2)));
    return c;
  }
  compare_series("step_time", at(got, "step_time"), at(want, "step_time"), policy().at("step_time"), c);
  compare_series("step_dt", at(got, "step_dt"), at(want, "step_dt"), policy().at("step_dt"), c);
  // Totals per step of the mass groups, for their absolute tolerance.
  std::vector<double> mass_total(at(want, "step_time").size(), 0.0), rate_total(at(want, "step_time").size(), 0.0);
  for (const auto& [name, q] : at(want, "in_place").items())
    if (str(at(q, "group")) == "mass_in_place")
      for (std::size_t i = 0; i < mass_total.size() && i < at(q, "values").size(); ++i)
        if (at(q, "values")[i].is_number()) mass_total[i] += std::abs(at(q, "values")[i].get<double>());
  for (const auto& [name, q] : at(want, "well_rates").items())
    if (str(at(q, "group")) == "well_mass_rate")
      for (const auto& [w, v] : at(q, "wells").items())
        for (std::size_t i = 0; i < rate_total.size() && i < v.size(); ++i)
          if (v[i].is_number()) rate_total[i] += std::abs(v[i].get<double>());
  for (const auto& [name, q] : at(want, "in_place").items()) {
    if (!at(got, "in_place").contains(name)) {
      c.missing("in place: " + name + " missing");
      continue;
    }
    const std::string g = str(at(q, "group"));
    compare_series("in place " + name, at(at(at(got, "in_place"), name), "values"), at(q, "values"), tolerance_of(g, c), c,
                   g == "mass_in_place" ? &mass_total : nullptr);
  }
  for (const auto& [w, v] : at(want, "well_bhp").items()) {
    if (!at(got, "well_bhp").contains(w)) {
      c.missing("well " + w + " missing");
      continue;
    }
    compare_series("BHP of " + w, at(at(got, "well_bhp"), w), v, policy().at("well_bhp"), c);
  }
  for (const auto& [name, q] : at(want, "well_rates").items()) {
    if (!at(got, "well_rates").contains(name)) {
      c.missing("well rate " + name + " missing");
      continue;
    }
    const std::string g = str(at(q, "group"));
    const Tol t = tolerance_of(policy().count("well_" + g) ? "well_" + g : g, c);
    for (const auto& [w, v] : at(q, "wells").items())
      compare_series(name + " of " + w, at(at(at(at(got, "well_rates"), name), "wells"), w), v, t, c,
                     g == "well_mass_rate" ? &rate_total : nullptr);
  }
  for (const auto& [name, f] : at(want, "fields").items()) {
    if (!at(got, "fields").contains(name)) {
      c.missing("field " + name + " missing");
      continue;
    }
    const Tol t = tolerance_of(str(at(f, "group")), c);
    for (const char* stat : {"mean", "min", "max"})
      compare_series(fmt::format("{} of {}", stat, name), at(at(at(got, "fields"), name), stat), at(f, stat), t, c);
  }
  return c;
}

}  // namespace

void run_application_section(const ExecPtr& e, const SuiteOptions& opt, const std::string& size, Json& rows,
                             Json& score, Verdict& v, const Log& log)
{
  const fs::path baselines_path = opt.baselines_path.empty() ? source_file("verification/bench_suite/baselines.json")
                                                              : fs::path(opt.baselines_path);
  Json baselines;
  std::string baselines_problem;
  try {
    baselines = read_json_file(baselines_path.string());
    if (!baselines.is_object() || !baselines.contains("sizes"))
      baselines_problem = fmt::format("{} is not a bench suite baselines file (a JSON object with \"suite_version\" and "
                                      "\"sizes\")", baselines_path.string());
    else if (!baselines["suite_version"].is_number_integer() || baselines["suite_version"].get<int>() != suite_version)
      baselines_problem = fmt::format("{} holds baselines of suite version {}, this is {}", baselines_path.string(),
                                      baselines["suite_version"].dump(), suite_version);
  } catch (const std::exception& ex) {
    baselines_problem = ex.what();
  }
  if (opt.record_baselines.empty() && !baselines_problem.empty()) log("application baselines: " + baselines_problem);
  Json recorded;
  if (!opt.record_baselines.empty()) {
    std::error_code ec;
    if (fs::exists(opt.record_baselines, ec)) recorded = read_json_file(opt.record_baselines);
    recorded["suite_version"] = suite_version;
    recorded["note"] = "bench suite application baselines: `blockres bench --size SIZE --record-baselines FILE` wrote "
                       "each case's summary; the suite compares its runs with them (suite_apps.cpp)";
  }

  double log_sum = 0.0;
  int counted = 0;
  for (const AppCase& ac : app_cases()) {
    const auto overrides = case_overrides(ac, size);
    const fs::path deck = source_file("inputs/" + ac.deck);
    TempDir dir;
    auto ov = overrides;
    ov.push_back("output.directory=" + quote_literal(dir.path.string()));
    ov.push_back("output.name=\"suite_" + ac.name + "\"");
    std::vector<std::string> run_log;
    Json row = {{"case", ac.name}, {"deck", "inputs/" + ac.deck}, {"overrides", overrides},
                {"components", ac.components}};
    Json summary;
    RunStatistics st;
    std::string failure;
    long long cells = 0, linear_solves = 0, linear_failures = 0;
    try {
      const RunConfig cfg = load_deck(deck.string(), ov);
      const RunOutcome out = run_simulation(cfg, e, RunOptions(dir.path, opt.command_line),
                                            [&](const std::string& line) { run_log.push_back(line); });
      st = out.stats;
      const Results res = read_results(out.result_file);
      for (auto a : res.active) cells += a;
      for (double c : res.newton_linear_converged) ++linear_solves, linear_failures += c == 0.0;
      summary = summary_of(res);
    } catch (const std::exception& ex) {
      failure = ex.what();
    }
    const double loop_s = st.assembly_seconds + st.linear_setup_seconds + st.linear_solve_seconds;
    const int newton = st.newton_iterations;
    row["cells"] = cells;
    row["newton_iterations"] = newton;
    row["linear_iterations"] = st.linear_iterations;
    row["linear_iterations_per_newton"] = newton ? double(st.linear_iterations) / newton : 0.0;
    row["ms_per_newton"] = newton ? 1e3 * loop_s / newton : 0.0;
    row["split_seconds"] = {{"assembly", st.assembly_seconds},
                            {"setup", st.linear_setup_seconds},
                            {"solve", st.linear_solve_seconds},
                            {"wall", st.wall_seconds}};
    row["linear_solver"] = st.linear_method + " + " + st.preconditioner;
    row["linear_solves"] = linear_solves;
    row["linear_failures"] = linear_failures;
    const double fom = loop_s > 0 ? double(cells) * newton / loop_s : 0.0;
    row["figure_of_merit"] = {{"value", fom},
                              {"unit", "cell-Newton-iterations/s"},
                              {"definition", "active cells x Newton iterations / (assembly + linear setup + linear solve "
                                             "seconds): the Newton loop's own time, without start-up and output"}};
    row["figure_of_merit_per_component"] = {{"value", fom * std::max(ac.components, 2)},
                                            {"unit", "cell-unknown-Newton-iterations/s"}};
    // The check.
    bool pass = false;
    std::string detail;
    if (!failure.empty()) {
      detail = "the run failed: " + failure;
    } else if (!opt.record_baselines.empty()) {
      recorded["sizes"][size][ac.name] = {{"summary", summary},
                                          {"recorded_with", {{"backend", e->is_cuda() ? "cuda" : "cpu"},
                                                             {"device", e->device_name()},
                                                             {"overrides", overrides}}}};
      detail = "baseline recorded (not checked)";
    } else if (!baselines_problem.empty()) {
      detail = "no baseline: " + baselines_problem;
    } else if (!baselines.contains("sizes") || !baselines["sizes"].contains(size) ||
               !baselines["sizes"][size].contains(ac.name)) {
      detail = fmt::format("no stored baseline for {} at size {} in {}", ac.name, size, baselines_path.string());
    } else {
      const Json& base = baselines["sizes"][size][ac.name];
      if (at(at(base, "recorded_with"), "overrides") != Json(overrides)) {
        detail = "the stored baseline was recorded with other overrides (regenerate it)";
      } else {
        Json s = summary;
        if (poisoned("application") && s["step_dt"].size() > 0) s["step_dt"][0] = s["step_dt"][0].get<double>() * 2;
        const Compared cmp = compare_summaries(s, at(base, "summary"));
        pass = cmp.failures.empty();
        detail = pass ? fmt::format("{} values within the cross-backend tolerances (worst {:.2f} of its bound; baseline "
                                    "from {} {})",
                                    cmp.values, cmp.worst, str(at(at(base, "recorded_with"), "backend")),
                                    str(at(at(base, "recorded_with"), "device")))
                      : fmt::format("{} of the baseline's values outside the tolerances: {}", cmp.failures.size(),
                                    fmt::join(cmp.failures, "; "));
      }
    }
    // The solver's behaviour, a validity bound (not a speed target): every linear solve converged and at most
    // max_linear_per_newton iterations per Newton iteration (twice the project's target for its shipped decks).
    const double per_newton = row["linear_iterations_per_newton"].get<double>();
    if (failure.empty() && (linear_failures > 0 || per_newton > max_linear_per_newton)) {
      pass = false;
      detail += fmt::format("; solver out of its bounds: {} of {} linear solves failed, {:.1f} linear iterations per "
                            "Newton iteration (bound {})",
                            linear_failures, linear_solves, per_newton, max_linear_per_newton);
      if (!opt.record_baselines.empty()) v.check(false, fmt::format("application {}: {}", ac.name, detail));
    }
    row["check"] = {{"pass", pass}, {"what", detail}};
    if (opt.record_baselines.empty() || !failure.empty())
      v.check(pass, fmt::format("application {}: {}", ac.name, detail));
    if (!failure.empty())
      for (std::size_t i = run_log.size() > 20 ? run_log.size() - 20 : 0; i < run_log.size(); ++i) log("  | " + run_log[i]);
    log(fmt::format("{:<20} {:>8} cells: {} Newton, {:.1f} linear per Newton, {:.2f} ms per Newton, {:.4g} cell-Newton/s; "
                    "{}: {}",
                    ac.name, cells, newton, row["linear_iterations_per_newton"].get<double>(),
                    row["ms_per_newton"].get<double>(), fom, pass ? "ok" : "not verified", detail));
    if (fom > 0) log_sum += std::log(fom), ++counted;
    rows.push_back(std::move(row));
  }
  score = {{"value", counted ? std::exp(log_sum / counted) : 0.0},
           {"unit", "cell-Newton-iterations/s"},
           {"cases", counted},
           {"definition", "geometric mean of the application cases' figures of merit"}};
  if (!opt.record_baselines.empty()) {
    write_json_file(opt.record_baselines, recorded);
    log("application baselines of size " + size + " written to " + opt.record_baselines);
  }
}

}  // namespace blockres::suite
