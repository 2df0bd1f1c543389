// Restart data of a result file (/restart) read back, and the checks that a deck may continue it.
#include "miniapp/run/restart.hpp"

#include "miniapp/io/h5.hpp"
#include "physics/units.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace blockres {

namespace {

namespace fs = std::filesystem;

// A resolved deck as dotted key -> value: numbers compare as numbers (100 and 100.0 are the same
// rate), everything else by its TOML text. Arrays of tables with a `name` are keyed by the name.
struct FlatValue {
  bool number = false;
  double value = 0;
  std::string text;
  bool operator==(const FlatValue& o) const
  {
    return number == o.number && (number ? value == o.value : text == o.text);
  }
};
using FlatDeck = std::map<std::string, FlatValue>;

std::string render(const toml::node& n)
{
  std::ostringstream os;
  n.visit([&](auto&& v) { os << v; });
  std::string s = os.str();
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

void flatten(const toml::node& n, const std::string& key, FlatDeck& out)
{
  if (const toml::table* t = n.as_table()) {
    for (const auto& [k, v] : *t) flatten(v, key.empty() ? std::string(k.str()) : key + "." + std::string(k.str()), out);
    return;
  }
  if (const toml::array* a = n.as_array()) {
    const bool named = !a->empty() && std::all_of(a->begin(), a->end(), [](const toml::node& e) {
      return e.is_table() && e.as_table()->get_as<std::string>("name");
    });
    const bool tables = !a->empty() && std::all_of(a->begin(), a->end(), [](const toml::node& e) { return e.is_table(); });
    if (named || tables) {
      for (std::size_t i = 0; i < a->size(); ++i) {
        const toml::table& t = *(*a)[i].as_table();
        flatten(t, named ? key + "." + **t.get_as<std::string>("name") : fmt::format("{}[{}]", key, i), out);
      }
      return;
    }
  }
  FlatValue v;
  if (const auto d = n.value<double>(); d && n.is_number()) {
    v.number = true;
    v.value = *d;
  }
  v.text = v.number ? fmt::format("{}", v.value) : render(n);  // shortest text that reads back the same
  out[key] = v;
}

bool changeable(const std::string& key)
{
  const std::string top = key.substr(0, key.find_first_of(".["));
  return std::any_of(std::begin(restart_changeable_sections), std::end(restart_changeable_sections),
                     [&](const char* s) { return top == s; });
}

FlatDeck flat_deck(const std::string& text, const std::string& what)
{
  toml::table t;
  try {
    t = toml::parse(std::string_view(text), std::string_view(what));
  } catch (const toml::parse_error& e) {
    throw RestartError(fmt::format("{}: the resolved deck is not valid TOML: {}", what, e.description()));
  }
  FlatDeck out;
  flatten(t, "", out);
  return out;
}

std::string days(double seconds) { return fmt::format("{:g} d", seconds / units::day); }

}  // namespace

std::vector<std::string> restart_deck_differences(const std::string& file_toml, const std::string& deck_toml)
{
  const FlatDeck a = flat_deck(file_toml, "restart file"), b = flat_deck(deck_toml, "deck");
  std::vector<std::string> out;
  for (const auto& [k, v] : a) {
    if (changeable(k)) continue;
    const auto it = b.find(k);
    if (it == b.end())
      out.push_back(fmt::format("{}: {} in the restart file, not set here", k, v.text));
    else if (!(it->second == v))
      out.push_back(fmt::format("{}: {} in the restart file, {} here", k, v.text, it->second.text));
  }
  for (const auto& [k, v] : b)
    if (!changeable(k) && !a.count(k)) out.push_back(fmt::format("{}: not in the restart file, {} here", k, v.text));
  std::sort(out.begin(), out.end());
  return out;
}

RestartPoint read_restart_point(const fs::path& file, long report, const RunConfig& cfg, const physics::Grid& grid,
                                const physics::Model& model)
{
  const std::string name = file.string();
  auto error = [&](const std::string& what) { return RestartError(fmt::format("--restart {}: {}", name, what)); };
  try {
    const h5::File f = h5::File::open_read(file);
    const hid_t id = f.id();
    if (H5Aexists(id, "layout_version") <= 0) throw error("not a blockres result file (no layout_version attribute)");
    // A version this build does not know may hold anything under the names read below: refused, as verify refuses it.
    const std::int64_t version = read_layout_version(id, file);
    // Files from before restarts existed hold the fields in file units only (bar, days, NaN-padded
    // grids): not the exact state, so they are refused rather than continued approximately.
    if (!h5::exists(id, "restart/time") || !h5::exists(id, "restart/state"))
      throw error("holds no restart data (written by a blockres without restart support); it cannot be "
                  "restarted: rerun the deck");

    // ---- the same problem: model, keys, static properties
    const std::string file_model = h5::read_string_attribute(id, "model");
    if (file_model != cfg.model)
      throw error(fmt::format("model.type: '{}' in the restart file, '{}' here", file_model, cfg.model));
    const auto diff = restart_deck_differences(h5::read_string_dataset(id, "provenance/resolved_deck"),
                                               cfg.resolved_toml);
    if (!diff.empty())
      throw error(fmt::format("the deck changes {}{}; a restart may change only the schedule after the restart "
                              "point, solver and output keys",
                              diff.front(), diff.size() > 1 ? fmt::format(" (and {} more keys)", diff.size() - 1) : ""));
    const int bs = static_cast<int>(h5::read_int_attribute(id, "block_size"));
    if (bs != model.block_size())
      throw error(fmt::format("{} unknowns per cell in the restart file, {} here", bs, model.block_size()));
    auto same_static = [&](const char* ds, const std::vector<double>& mine, double scale, const char* key) {
      const auto theirs = h5::read_doubles(id, std::string("static/") + ds).values;
      bool same = theirs.size() == mine.size();
      for (std::size_t c = 0; same && c < mine.size(); ++c) same = theirs[c] == mine[c] / scale;
      if (!same) throw error(fmt::format("{}: the values differ from the restart file's /static/{} (property file "
                                         "changed?)", key, ds));
    };
    same_static("porosity", cfg.rock.porosity, 1.0, "rock.porosity");
    same_static("permx", cfg.rock.kx, units::millidarcy, "rock.kx");
    same_static("permy", cfg.rock.ky, units::millidarcy, "rock.ky");
    same_static("permz", cfg.rock.kz, units::millidarcy, "rock.kz");

    // ---- the report row
    // The exact times: in seconds under time/dt_next in version 3, under *_seconds in version 4
    // (read_restart_times; time/dt_next hold them in days there).
    std::vector<std::string> series = {"restart/time", "restart/dt_next", "restart/state", "restart/steps",
                                       "restart/newton_rows", "reports/time"};
    if (version >= 4) series.insert(series.end(), {"restart/time_seconds", "restart/dt_next_seconds"});
    hsize_t rows = ~hsize_t(0);
    for (const auto& s : series) rows = std::min(rows, h5::exists(id, s) ? h5::dataset_rows(id, s) : hsize_t(0));
    if (rows == 0) throw error("holds no report with restart data");
    if (report >= static_cast<long>(rows))
      throw error(fmt::format("--restart-report {}: the file has report rows 0 to {}", report, rows - 1));
    RestartPoint p;
    p.file = file;
    p.report = report < 0 ? std::size_t(rows - 1) : std::size_t(report);
    const RestartTimes restart_times = read_restart_times(id, version, file);
    const auto& times = restart_times.time;  // [s], exact
    p.time = times[p.report];
    p.history_times.assign(times.begin(), times.begin() + std::ptrdiff_t(p.report) + 1);
    auto scalar = [&](const char* ds) { return h5::read_row(id, std::string("restart/") + ds, p.report).at(0); };
    RestartRecord& r = p.record;
    r.time = p.time;
    r.dt_next = restart_times.dt_next[p.report];
    r.newton_rows = int(scalar("newton_rows"));
    r.cuts_without_progress = int(scalar("cuts_without_progress"));
    RunStatistics& t = r.totals;
    t.steps = int(scalar("steps"));
    t.cuts = int(scalar("cuts"));
    t.newton_iterations = int(scalar("newton_iterations"));
    t.linear_iterations = int(scalar("linear_iterations"));
    t.max_linear_iterations = int(scalar("max_linear_iterations"));
    t.wall_seconds = scalar("wall_seconds");
    t.assembly_seconds = scalar("assembly_seconds");
    t.linear_setup_seconds = scalar("linear_setup_seconds");
    t.linear_solve_seconds = scalar("linear_solve_seconds");
    t.spmv_seconds = scalar("spmv_seconds");
    t.precond_apply_seconds = scalar("precond_apply_seconds");
    t.orthogonalization_seconds = scalar("orthogonalization_seconds");
    t.linear_other_seconds = scalar("linear_other_seconds");
    if (h5::dataset_rows(id, "steps/time") < hsize_t(t.steps) || h5::dataset_rows(id, "newton/step") < hsize_t(r.newton_rows))
      throw error(fmt::format("report row {} counts {} steps and {} linear solves, more than /steps and /newton hold",
                              p.report, t.steps, r.newton_rows));
    const std::size_t n = std::size_t(grid.num_active()) * std::size_t(model.block_size());
    p.state = h5::read_row(id, "restart/state", p.report);
    p.initial = h5::read_row(id, "restart/state", 0);
    if (p.state.size() != n)
      throw error(fmt::format("the restart state has {} values, this deck's model {} ({} active cells x {})",
                              p.state.size(), n, grid.num_active(), model.block_size()));
    if (!std::all_of(p.state.begin(), p.state.end(), [](double v) { return std::isfinite(v); }))
      throw error(fmt::format("the state of report row {} is not finite", p.report));

    // ---- the schedule: the same report times up to the restart point, and one after it
    const auto& rt = cfg.schedule.report_times;  // rt[k - 1] is report row k
    for (std::size_t k = 1; k <= p.report; ++k) {
      if (k > rt.size())
        throw error(fmt::format("schedule: the deck's last report ({}) comes before the restart point (report {}, "
                                "t = {}); the report times up to it must stay as they were",
                                days(rt.back()), p.report, days(p.time)));
      if (std::abs(rt[k - 1] - times[k]) > 1e-12 * times[k])
        throw error(fmt::format("schedule: report {} is at {} in the deck, at {} in the restart file; the report "
                                "times up to the restart point (report {}) must stay as they were",
                                k, days(rt[k - 1]), days(times[k]), p.report));
    }
    if (rt.size() <= p.report) {
      const bool by_end = cfg.resolved_toml.find("end_time") != std::string::npos;
      throw error(fmt::format("{}: the deck ends at {}, the restart point (report {}) is at {}: nothing to run; give "
                              "a later end",
                              by_end ? "schedule.end_time" : "schedule.report_times", days(rt.back()), p.report,
                              days(p.time)));
    }

    // ---- the first preconditioner setup, when it came before the restart point
    if (auto s = read_setup_replay(id, version, file); s && s->step <= t.steps) {
      if (s->x.size() != n || s->x0.size() != n) throw error("/restart/setup_x or setup_x0 has the wrong size");
      p.setup = std::move(s);
      p.replay_setup = true;
    }
    return p;
  } catch (const h5::Error& e) {
    throw error(e.what());
  }
}

}  // namespace blockres
