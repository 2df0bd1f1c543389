// `blockres verify`: field-by-field comparison of a result with a baseline, case files, baseline
// regeneration. Exit codes: 0 pass, 1 fail, 2 error.
#include "miniapp/verify/verify.hpp"

#include "miniapp/run/backend.hpp"
#include "miniapp/io/deck.hpp"
#include "miniapp/io/destination.hpp"
#include "miniapp/io/json_file.hpp"
#include "input/quote.hpp"
#include "miniapp/run/simulator.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace blockres {

namespace fs = std::filesystem;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// "a, b, c", or "none".
std::string join(const std::vector<std::string>& names)
{
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? std::string("none") : s;
}

// The names --rtol/--atol and case files accept: every field, then every group that is not a field's name.
std::string known_names(std::span<const VerifiedField> fields)
{
  std::vector<std::string> names, groups;
  for (const auto& f : fields) names.push_back(f.name);
  for (const auto& f : fields)
    if (std::find(names.begin(), names.end(), f.group) == names.end() &&
        std::find(groups.begin(), groups.end(), f.group) == groups.end())
      groups.push_back(f.group);
  return groups.empty() ? fmt::format("fields: {}", join(names))
                        : fmt::format("fields: {}; groups: {}", join(names), join(groups));
}

bool is_known(std::span<const VerifiedField> fields, const std::string& name)
{
  return std::any_of(fields.begin(), fields.end(),
                     [&](const VerifiedField& f) { return f.name == name || f.group == name; });
}

// Compares r against b entry by entry; `where(i)` names entry i.
template <class Where>
void compare_values(Comparison& c, std::span<const double> r, std::span<const double> b, const Where& where)
{
  const FieldTolerance& t = c.tolerance;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double x = r[i], y = b[i];
    if (std::isnan(x) && std::isnan(y)) continue;  // inactive cell, or a missing value in both
    ++c.compared;
    double d = std::abs(x - y), ratio;
    if (!std::isfinite(x) || !std::isfinite(y)) {
      d = (x == y) ? 0.0 : inf;  // +-Inf in both with the same sign is equal; NaN in one is not
      ratio = d == 0.0 ? 0.0 : inf;
    } else {
      const double allowed = t.abs + t.rel * std::abs(y);
      ratio = d == 0.0 ? 0.0 : (allowed > 0.0 ? d / allowed : inf);
    }
    if (ratio > 1.0) ++c.failed;
    if (d > c.max_abs || (c.max_abs_at.empty() && d > 0)) c.max_abs = d, c.max_abs_at = where(i);
    if (y != 0.0 && std::isfinite(y)) {
      const double rel = d / std::abs(y);
      if (rel > c.max_rel) c.max_rel = rel, c.max_rel_at = where(i);
    }
    if (ratio > c.worst || (c.worst_at.empty() && ratio > 0))
      c.worst = ratio, c.worst_at = where(i), c.worst_result = x, c.worst_baseline = y;
  }
}

std::string cell_name(const Results& r, std::size_t c)
{
  const std::size_t nx = std::size_t(r.nx), nxy = nx * std::size_t(r.ny);
  return fmt::format("cell ({}, {}, {})", c % nx + 1, (c / nx) % std::size_t(r.ny) + 1, c / nxy + 1);
}

std::string step_name(const Results& b, std::size_t s)
{
  return fmt::format("step {} (t = {:.6g} d)", s + 1, s < b.step_time.size() ? b.step_time[s] : NAN);
}

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)); }

// The two files must carry the same fields (e.g. the same components) in the same units.
void check_same_fields(const Results& r, const Results& b)
{
  const auto rf = verified_fields(r), bf = verified_fields(b);
  auto find = [](const std::vector<VerifiedField>& v, const std::string& name) -> const VerifiedField* {
    for (const auto& f : v)
      if (f.name == name) return &f;
    return nullptr;
  };
  std::vector<std::string> only_r, only_b;
  for (const auto& f : rf)
    if (!find(bf, f.name)) only_r.push_back(f.name);
  for (const auto& f : bf)
    if (!find(rf, f.name)) only_b.push_back(f.name);
  if (!only_r.empty() || !only_b.empty())
    throw VerifyError(fmt::format("different fields (model '{}'): only in the result: {}; only in the baseline: {}",
                                  b.model, join(only_r), join(only_b)));
  for (const auto& f : bf) {
    const VerifiedField* o = find(rf, f.name);
    if (o->unit != f.unit)
      throw VerifyError(fmt::format("different units of field '{}': result '{}', baseline '{}'", f.name, o->unit,
                                    f.unit));
  }
}

// Structural checks: the two files must describe the same model, grid, active cells, reservoir,
// report times and wells, or no field-by-field comparison means anything.
void check_comparable(const Results& r, const Results& b)
{
  if (r.model != b.model)
    throw VerifyError(fmt::format("different models: result '{}', baseline '{}'", r.model, b.model));
  check_same_fields(r, b);
  if (r.nx != b.nx || r.ny != b.ny || r.nz != b.nz)
    throw VerifyError(fmt::format("mismatched grids: result {}x{}x{}, baseline {}x{}x{}", r.nx, r.ny, r.nz, b.nx,
                                  b.ny, b.nz));
  const std::pair<const char*, const std::vector<double>*> sizes[] = {{"dx", &r.dx}, {"dy", &r.dy}, {"dz", &r.dz}};
  const std::vector<double>* bsizes[] = {&b.dx, &b.dy, &b.dz};
  for (int a = 0; a < 3; ++a)
    for (std::size_t i = 0; i < sizes[a].second->size(); ++i)
      if (!close((*sizes[a].second)[i], (*bsizes[a])[i], 1e-12))
        throw VerifyError(fmt::format("mismatched grids: {}[{}] is {} m in the result, {} m in the baseline",
                                      sizes[a].first, i + 1, (*sizes[a].second)[i], (*bsizes[a])[i]));
  for (std::size_t c = 0; c < r.active.size(); ++c)
    if (r.active[c] != b.active[c])
      throw VerifyError(fmt::format("mismatched grids: {} is {} in the result and {} in the baseline",
                                    cell_name(r, c), r.active[c] ? "active" : "inactive",
                                    b.active[c] ? "active" : "inactive"));
  const std::pair<const char*, const std::vector<double>*> rock[] = {
      {"porosity", &r.porosity}, {"permx", &r.permx}, {"permy", &r.permy}, {"permz", &r.permz}};
  const std::vector<double>* brock[] = {&b.porosity, &b.permx, &b.permy, &b.permz};
  for (int a = 0; a < 4; ++a)
    for (std::size_t c = 0; c < rock[a].second->size(); ++c)
      if (!close((*rock[a].second)[c], (*brock[a])[c], 1e-12))
        throw VerifyError(fmt::format("different models: static/{} at {} is {} in the result, {} in the baseline",
                                      rock[a].first, cell_name(r, c), (*rock[a].second)[c], (*brock[a])[c]));
  if (r.report_times.size() != b.report_times.size())
    throw VerifyError(fmt::format("mismatched report steps: result has {}, baseline {} (including the initial state)",
                                  r.report_times.size(), b.report_times.size()));
  for (std::size_t k = 0; k < r.report_times.size(); ++k)
    if (!close(r.report_times[k], b.report_times[k], 1e-12) &&
        std::abs(r.report_times[k] - b.report_times[k]) > 1e-12)
      throw VerifyError(fmt::format("mismatched report steps: report {} is at t = {} d in the result, {} d in the "
                                    "baseline",
                                    k, r.report_times[k], b.report_times[k]));
  if (r.well_names != b.well_names) {
    auto names = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
      return s.empty() ? std::string("none") : s;
    };
    throw VerifyError(fmt::format("different wells: result [{}], baseline [{}]", names(r.well_names),
                                  names(b.well_names)));
  }
}

// Lines of the resolved decks that differ; the [output] table is left out (where and in which
// formats a run writes does not change its results).
std::vector<std::string> deck_differences(const std::string& a, const std::string& b)
{
  auto lines = [](const std::string& text) {
    std::multiset<std::string> out;
    std::istringstream in(text);
    std::string line, section;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] == '[') section = line;
      if (section == "[output]") continue;
      out.insert(section + " " + line);
    }
    return out;
  };
  const auto la = lines(a), lb = lines(b);
  std::vector<std::string> diff;
  std::set_symmetric_difference(la.begin(), la.end(), lb.begin(), lb.end(), std::back_inserter(diff));
  return diff;
}

}  // namespace

std::vector<VerifiedField> verified_fields(const Results& r)
{
  std::vector<VerifiedField> out;
  auto what = [](const QuantityInfo& q, const std::string& fallback) {
    return q.description.empty() ? fallback : q.description;
  };
  for (const auto& f : r.cell_fields)
    out.push_back({f.name, f.unit, what(f, "cell " + f.name + " at every report step"), f.group});
  out.push_back({"well_bhp", "bar", "bottom-hole pressure of every well after every time step", "well_bhp"});
  for (const auto& q : r.well_rates) {
    // A rate without a group of its own is compared (and given a tolerance) as well_<name>.
    const std::string name = "well_" + q.name;
    out.push_back({name, q.unit, what(q, q.name + " of every well after every time step"),
                   q.group == q.name ? name : q.group});
  }
  out.push_back({"step_time", "day", "end time of every time step", "step_time"});
  out.push_back({"step_dt", "day", "length of every time step", "step_dt"});
  for (const auto& q : r.in_place)
    out.push_back({q.name, q.unit, what(q, q.name + " after every time step"), q.group});
  return out;
}

const FieldTolerance* find_tolerance(const Tolerances& tol, const VerifiedField& field)
{
  if (const auto it = tol.find(field.name); it != tol.end()) return &it->second;
  if (const auto it = tol.find(field.group); it != tol.end()) return &it->second;
  return nullptr;
}

Tolerances default_tolerances()
{
  // The same-backend policy of verification/README.md; keep the two in step. oil_water by field,
  // multicomponent by group (its pressure is the shared entry).
  return {{"pressure", {1e-9, 1e-6}},        {"sw", {1e-8, 1e-9}},
          {"well_bhp", {1e-9, 1e-6}},        {"well_water_rate", {1e-7, 1e-6}},
          {"well_oil_rate", {1e-7, 1e-6}},   {"step_time", {1e-12, 0.0}},
          {"step_dt", {1e-12, 0.0}},         {"water_in_place", {1e-9, 0.0}},
          {"oil_in_place", {1e-9, 0.0}},     {"density", {1e-9, 1e-6}},
          {"mass_fraction", {1e-8, 1e-9}},   {"well_mass_rate", {1e-7, 1e-6}},
          {"mass_in_place", {1e-9, 0.0}}};
}

void apply_tolerance_option(Tolerances& tol, const std::string& option, bool relative,
                            std::span<const VerifiedField> fields)
{
  const char* flag = relative ? "--rtol" : "--atol";
  const auto eq = option.find('=');
  const std::string name = eq == std::string::npos ? std::string() : option.substr(0, eq);
  const std::string text = eq == std::string::npos ? option : option.substr(eq + 1);
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !std::isfinite(v) || v < 0)
    throw VerifyError(fmt::format("{} {}: '{}' is not a non-negative number", flag, option, text));
  auto set = [&](FieldTolerance& t) { (relative ? t.rel : t.abs) = v; };
  if (name.empty()) {
    for (auto& [n, t] : tol) set(t);
    return;
  }
  if (!is_known(fields, name))
    throw VerifyError(fmt::format("{} {}: unknown field '{}' ({})", flag, option, name, known_names(fields)));
  // Every field of that name or group gets an entry of its own (from the one it used so far), so
  // the option applies to it whichever entry it came from; the group's entry, if any, follows.
  for (const auto& f : fields)
    if (f.name == name || f.group == name) {
      const FieldTolerance* t = find_tolerance(tol, f);
      FieldTolerance own = t ? *t : FieldTolerance{};
      set(own);
      tol[f.name] = own;
    }
  if (const auto it = tol.find(name); it != tol.end()) set(it->second);
}

bool VerifyReport::pass() const { return mismatches.empty() && failed_comparisons() == 0; }

std::size_t VerifyReport::failed_comparisons() const
{
  return static_cast<std::size_t>(std::count_if(comparisons.begin(), comparisons.end(),
                                                [](const Comparison& c) { return !c.pass(); }));
}

VerifyReport compare_results(const Results& r, const Results& b, const Tolerances& tol)
{
  check_comparable(r, b);
  std::map<std::string, VerifiedField> fields;
  for (const auto& f : verified_fields(b)) {
    if (!find_tolerance(tol, f))
      throw VerifyError(f.group == f.name
                            ? fmt::format("no tolerance for field '{}'", f.name)
                            : fmt::format("no tolerance for field '{}' (nor for its group '{}')", f.name, f.group));
    fields.emplace(f.name, f);
  }
  VerifyReport rep;
  auto start = [&](const std::string& field, std::string scope) {
    const VerifiedField& f = fields.at(field);
    Comparison c;
    c.field = field, c.unit = f.unit, c.scope = std::move(scope), c.tolerance = *find_tolerance(tol, f);
    return c;
  };

  // Cell fields at every report step.
  for (std::size_t k = 0; k < b.report_times.size(); ++k) {
    const std::string scope = fmt::format("report {} (t = {:.6g} d)", k, b.report_times[k]);
    for (const auto& bf : b.cell_fields) {
      Comparison c = start(bf.name, scope);
      c.report = static_cast<int>(k);
      compare_values(c, r.cell_field(bf.name).rows[k], bf.rows[k], [&](std::size_t i) { return cell_name(b, i); });
      rep.comparisons.push_back(std::move(c));
    }
  }

  // Time-step series: only when both runs took the same number of steps.
  if (r.step_time.size() != b.step_time.size()) {
    rep.mismatches.push_back(fmt::format("time steps: the result took {} steps, the baseline {}; the per-step series "
                                         "(wells, step_time, step_dt, in place) are not compared",
                                         r.step_time.size(), b.step_time.size()));
  } else {
    const std::size_t nw = b.well_names.size();
    auto compare_well_series = [&](const std::string& field, const std::vector<std::vector<double>>& rs,
                                   const std::vector<std::vector<double>>& bs) {
      for (std::size_t w = 0; w < nw; ++w) {
        Comparison c = start(field, "well " + b.well_names[w]);
        c.well = b.well_names[w];
        std::vector<double> rv, bv;
        for (std::size_t s = 0; s < b.step_time.size(); ++s) rv.push_back(rs[s][w]), bv.push_back(bs[s][w]);
        compare_values(c, rv, bv, [&](std::size_t s) { return step_name(b, s); });
        rep.comparisons.push_back(std::move(c));
      }
    };
    compare_well_series("well_bhp", r.well_bhp, b.well_bhp);
    for (const auto& q : b.well_rates) compare_well_series("well_" + q.name, r.well_rate(q.name).rows, q.rows);
    auto compare_steps = [&](const std::string& field, const std::vector<double>& rv, const std::vector<double>& bv) {
      Comparison c = start(field, "steps");
      compare_values(c, rv, bv, [&](std::size_t s) { return step_name(b, s); });
      rep.comparisons.push_back(std::move(c));
    };
    compare_steps("step_time", r.step_time, b.step_time);
    compare_steps("step_dt", r.step_dt, b.step_dt);
    for (const auto& q : b.in_place) compare_steps(q.name, r.in_place_series(q.name).values, q.values);
  }

  // Layout versions read into the same Results (hdf5_layout.md): a difference is no mismatch, but
  // the report says which files met (a version 4 result against a version 3 baseline, say).
  if (r.layout_version != b.layout_version)
    rep.notes.push_back(fmt::format("layout versions: result {}, baseline {} (read alike)", r.layout_version,
                                    b.layout_version));
  if (r.backend != b.backend || r.device != b.device)
    rep.notes.push_back(fmt::format("backends: result {} ({}), baseline {} ({})", r.backend, r.device, b.backend,
                                    b.device));
  rep.notes.push_back(fmt::format("iterations: result {} steps, {} cuts, {} Newton, {} linear; baseline {} steps, {} "
                                  "cuts, {} Newton, {} linear",
                                  r.statistics.steps, r.statistics.cuts, r.statistics.newton_iterations,
                                  r.statistics.linear_iterations, b.statistics.steps, b.statistics.cuts,
                                  b.statistics.newton_iterations, b.statistics.linear_iterations));
  const auto dd = deck_differences(r.resolved_deck, b.resolved_deck);
  if (!dd.empty()) {
    std::string lines;
    for (std::size_t i = 0; i < std::min<std::size_t>(dd.size(), 6); ++i) lines += "\n    " + dd[i];
    rep.notes.push_back(fmt::format("the resolved decks differ in {} line(s) ([output] ignored):{}{}",
                                    dd.size(), lines, dd.size() > 6 ? "\n    ..." : ""));
  }
  return rep;
}

// ---- case files ----------------------------------------------------------------------------

namespace {

// "file:line:column" of a place in a case file. A key missing from the top-level table has no place
// of its own: name the file's start, as the deck loader does.
std::string place(const fs::path& file, const toml::source_region& where)
{
  const auto line = where.begin.line > 0 ? where.begin.line : 1, column = where.begin.line > 0 ? where.begin.column : 1;
  return fmt::format("{}:{}:{}", file.string(), line, column);
}

[[noreturn]] void case_error(const fs::path& file, const toml::source_region& where, const std::string& key,
                             const std::string& what)
{
  throw VerifyError(fmt::format("{}: {}: {}", place(file, where), key, what));
}

void only_keys(const fs::path& file, const toml::table& t, const std::string& prefix,
               std::initializer_list<std::string_view> allowed)
{
  for (const auto& [k, v] : t)
    if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
      case_error(file, v.source(), prefix + std::string(k.str()), "unknown key");
}

// The names are checked later, against the baseline's fields (check_case_tolerances); `where` gets
// the place of the table and of every entry.
Tolerances read_tolerance_table(const fs::path& file, const toml::table& root, const std::string& name,
                                std::map<std::string, std::string>& where)
{
  const std::string key = "tolerance." + name;
  const toml::node* node = root.at_path(key).node();
  if (!node) case_error(file, root.source(), key, "missing table (every case states both tolerance policies)");
  const toml::table* t = node->as_table();
  if (!t) case_error(file, node->source(), key, "must be a table");
  where[name] = place(file, t->source());
  Tolerances tol;
  for (const auto& [k, v] : *t) {
    const std::string fk = key + "." + std::string(k.str());
    where[name + "." + std::string(k.str())] = place(file, v.source());
    const toml::table* ft = v.as_table();
    if (!ft) case_error(file, v.source(), fk, "must be an inline table { rel = ..., abs = ... }");
    only_keys(file, *ft, fk + ".", {"rel", "abs"});
    FieldTolerance out;
    for (const char* part : {"rel", "abs"}) {
      const toml::node* pv = ft->get(part);
      if (!pv) case_error(file, ft->source(), fk + "." + part, "missing");
      const auto d = pv->value<double>();
      if (!d || !std::isfinite(*d) || *d < 0)
        case_error(file, pv->source(), fk + "." + part, "must be a non-negative number");
      (std::string_view(part) == "rel" ? out.rel : out.abs) = *d;
    }
    tol[std::string(k.str())] = out;
  }
  return tol;
}

}  // namespace

void check_case_tolerances(const CaseFile& c, std::span<const VerifiedField> fields)
{
  for (const auto& [name, tol] : {std::pair<const char*, const Tolerances*>{"same_backend", &c.same_backend},
                                  std::pair<const char*, const Tolerances*>{"cross_backend", &c.cross_backend}}) {
    auto where = [&](const std::string& key) {
      const auto it = c.where.find(key);
      return it != c.where.end() ? it->second : c.path.string();
    };
    for (const auto& [key, t] : *tol)
      if (!is_known(fields, key))
        throw VerifyError(fmt::format("{}: tolerance.{}.{}: unknown field ({})", where(std::string(name) + "." + key),
                                      name, key, known_names(fields)));
    for (const auto& f : fields)
      if (!find_tolerance(*tol, f))
        throw VerifyError(fmt::format("{}: tolerance.{}.{}: missing (every field needs a tolerance, by its name{})",
                                      where(name), name, f.name,
                                      f.group == f.name ? std::string() : " or its group '" + f.group + "'"));
  }
}

CaseFile load_case(const fs::path& path)
{
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw VerifyError(fmt::format("{}: cannot read the case file: no such file", path.string()));
  toml::table root;
  try {
    root = toml::parse_file(path.string());
  } catch (const toml::parse_error& e) {
    throw VerifyError(fmt::format("{}:{}:{}: {}", path.string(), e.source().begin.line, e.source().begin.column,
                                  e.description()));
  }
  only_keys(path, root, "", {"description", "deck", "overrides", "baseline", "tolerance"});
  CaseFile c;
  c.path = path;
  const fs::path dir = path.parent_path();
  auto text = [&](const char* key, bool required) -> std::string {
    const toml::node* n = root.get(key);
    if (!n) {
      if (required) case_error(path, root.source(), key, "missing");
      return {};
    }
    const auto s = n->value<std::string>();
    if (!s || s->empty()) case_error(path, n->source(), key, "must be a non-empty string");
    return *s;
  };
  c.description = text("description", false);
  c.deck = (dir / text("deck", true)).lexically_normal();
  c.baseline = (dir / text("baseline", true)).lexically_normal();
  if (const toml::node* n = root.get("overrides")) {
    const toml::array* a = n->as_array();
    if (!a) case_error(path, n->source(), "overrides", "must be an array of \"dotted.key=value\" strings");
    for (const auto& e : *a) {
      const auto s = e.value<std::string>();
      if (!s || s->find('=') == std::string::npos)
        case_error(path, e.source(), "overrides", "every entry must be a \"dotted.key=value\" string");
      c.overrides.push_back(*s);
    }
  }
  if (const toml::node* n = root.get("tolerance")) {
    if (!n->as_table()) case_error(path, n->source(), "tolerance", "must be a table");
    only_keys(path, *n->as_table(), "tolerance.", {"same_backend", "cross_backend"});
  }
  c.same_backend = read_tolerance_table(path, root, "same_backend", c.where);
  c.cross_backend = read_tolerance_table(path, root, "cross_backend", c.where);
  return c;
}

// ---- the command ---------------------------------------------------------------------------

namespace {

using Log = std::function<void(const std::string&)>;

// A temporary directory removed on scope exit (unless kept).
struct TempDir {
  fs::path path;
  bool keep = false;
  TempDir(const fs::path& p, bool k) : path(p), keep(k) {}
  ~TempDir()
  {
    if (!keep) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

// A new, empty directory of our own: never one that already exists (it is removed afterwards).
fs::path fresh_temp_dir()
{
  static std::atomic<int> counter{0};
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const auto d = fs::temp_directory_path() / fmt::format("blockres-verify-run-{}-{}-{:08x}",
                                                           static_cast<long>(::getpid()), counter++, rd());
    if (fs::create_directory(d)) return d;
  }
  throw VerifyError(fmt::format("cannot create a temporary directory in {}", fs::temp_directory_path().string()));
}

// The deck run's outcome: the result file, or the reason the run failed (a verification failure).
struct DeckRun {
  fs::path result_file;
  std::string failure;
};

DeckRun run_deck(const fs::path& deck, std::vector<std::string> overrides, const ExecPtr& exec,
                 const fs::path& out_dir, bool keep, const std::string& command_line, const Log& log,
                 const dist::CommPtr& comm = {}, const physics::PartitionSpec& partition = {})
{
  // A result that is compared and thrown away needs no VTK series.
  if (!keep) overrides.push_back("output.vtk=false");
  overrides.push_back("output.directory=" + quote_literal(out_dir.string()));
  const RunConfig cfg = load_deck(deck.string(), overrides);
  check_run_destinations(cfg, false, {});  // before the run, not after it
  log(fmt::format("verify: running {}{}", deck.string(), overrides.size() > (keep ? 1u : 2u) ? " with overrides:" : ""));
  for (std::size_t i = 0; i + 1 < overrides.size(); ++i)
    if (keep || i + 2 < overrides.size()) log("  --set " + overrides[i]);
  try {
    RunOptions ro(out_dir, command_line, false, {});
    ro.comm = comm;  // several ranks (issue 33): one distributed run, rank 0 writes the result
    ro.partition = partition;
    const auto outcome = run_simulation(cfg, exec, ro, [&](const std::string& line) { log("  | " + line); });
    return {outcome.result_file, {}};
  } catch (const SimulationError& e) {
    return {{}, fmt::format("the run of {} failed: {}", deck.string(), e.what())};
  }
}

std::string fmt_num(double v) { return std::isfinite(v) ? fmt::format("{:.3e}", v) : fmt::format("{}", v); }

void print_report(const VerifyReport& rep, const Log& log)
{
  log(fmt::format("{:<16} {:<26} {:>10} {:<24} {:>10} {:<24} {:>18}  {}", "field", "scope", "max |diff|", "at",
                  "max rel", "at", "tolerance rel/abs", "status"));
  for (const auto& c : rep.comparisons)
    log(fmt::format("{:<16} {:<26} {:>10} {:<24} {:>10} {:<24} {:>18}  {}", c.field, c.scope, fmt_num(c.max_abs),
                    c.max_abs_at.empty() ? "-" : c.max_abs_at, fmt_num(c.max_rel),
                    c.max_rel_at.empty() ? "-" : c.max_rel_at,
                    fmt::format("{:.0e}/{:.0e}", c.tolerance.rel, c.tolerance.abs),
                    c.pass() ? "ok" : fmt::format("FAIL ({} of {})", c.failed, c.compared)));
  for (const auto& n : rep.notes) log("note: " + n);
  for (const auto& c : rep.comparisons)
    if (!c.pass()) {
      log(fmt::format("FAIL {} at {}: {} of {} value(s) outside |diff| <= {:g} + {:g} |baseline|; worst at {}: "
                      "result {:.10g}, baseline {:.10g}, |diff| {}{}",
                      c.field, c.scope, c.failed, c.compared, c.tolerance.abs, c.tolerance.rel, c.worst_at,
                      c.worst_result, c.worst_baseline, fmt_num(std::abs(c.worst_result - c.worst_baseline)),
                      c.unit == "1" || c.unit.empty() ? "" : " " + c.unit));
    }
  for (const auto& m : rep.mismatches) log("FAIL " + m);
  if (rep.pass())
    log(fmt::format("verify: PASS ({} comparisons within tolerance)", rep.comparisons.size()));
  else
    log(fmt::format("verify: FAIL ({} of {} comparisons outside tolerance{})", rep.failed_comparisons(),
                    rep.comparisons.size(),
                    rep.mismatches.empty() ? "" : fmt::format("; {} run mismatch(es)", rep.mismatches.size())));
}

// `tolerances` holds the tolerance each compared field got (by its name or its group), by field name.
Json json_report(const VerifyReport& rep, const std::string& result, const std::string& baseline,
                 const std::string& policy, const Tolerances& tol, std::span<const VerifiedField> fields)
{
  Tolerances used;
  for (const auto& f : fields)
    if (const FieldTolerance* t = find_tolerance(tol, f)) used[f.name] = *t;
  Json j;
  j["result"] = result;
  j["baseline"] = baseline;
  j["policy"] = policy;
  j["pass"] = rep.pass();
  Json& tolerances = j["tolerances"] = Json::object();
  for (const auto& [name, t] : used) tolerances[name] = {{"rel", t.rel}, {"abs", t.abs}};
  Json& comparisons = j["comparisons"] = Json::array();
  for (const auto& c : rep.comparisons)
    comparisons.push_back({{"field", c.field},
                           {"scope", c.scope},
                           {"report", c.report},
                           {"well", c.well},
                           {"compared", c.compared},
                           {"failed", c.failed},
                           {"max_abs", c.max_abs},
                           {"max_abs_at", c.max_abs_at},
                           {"max_rel", c.max_rel},
                           {"max_rel_at", c.max_rel_at},
                           {"worst", c.worst},
                           {"worst_at", c.worst_at},
                           {"pass", c.pass()}});
  j["mismatches"] = rep.mismatches;
  j["notes"] = rep.notes;
  return j;
}

Results read_checked(const fs::path& path, const char* what)
{
  std::error_code ec;
  if (!fs::exists(path, ec)) throw VerifyError(fmt::format("{} {}: no such file", what, path.string()));
  try {
    return read_results(path);
  } catch (const h5::Error& e) {
    throw VerifyError(fmt::format("{} {}: {}", what, path.string(), e.what()));
  }
}

bool is_deck(const std::string& input) { return fs::path(input).extension() == ".toml"; }

int regenerate(const VerifyOptions& o, const CaseFile& c, const Log& log)
{
  if (!o.input.empty() || !o.baseline.empty())
    throw VerifyError("--regenerate takes the deck and the baseline from --case; give neither an input nor --baseline");
  if (o.backend == "cuda") throw VerifyError("--regenerate: baselines are produced by the CPU backend");
  if (!o.overrides.empty())
    throw VerifyError("--regenerate runs the case as written: put overrides into the case file, not --set");
  TempDir dir(o.output_dir.empty() ? fresh_temp_dir() : fs::path(o.output_dir), !o.output_dir.empty());
  const DeckRun run =
      run_deck(c.deck, c.overrides, choose_backend("cpu", log), dir.path, dir.keep, o.command_line, log);
  if (!run.failure.empty()) throw VerifyError(run.failure);
  std::error_code ec;
  if (fs::exists(c.baseline, ec)) {
    // Say what changes, so a regeneration on purpose is also a reviewed one.
    try {
      const VerifyReport rep = compare_results(read_results(run.result_file), read_results(c.baseline), c.same_backend);
      log(fmt::format("verify: the new baseline against the old one ({} comparison(s) outside the same-backend "
                      "tolerance{}):",
                      rep.failed_comparisons(), rep.mismatches.empty() ? "" : ", steps differ"));
      print_report(rep, log);
    } catch (const std::exception& e) {
      log(fmt::format("verify: the old baseline is not comparable with the new one: {}", e.what()));
    }
  }
  const fs::path tmp = c.baseline.string() + ".tmp";
  check_file_destination(c.baseline, "baseline", true);  // checked before the run too; a folder may appear meanwhile
  if (c.baseline.has_parent_path()) fs::create_directories(c.baseline.parent_path());
  fs::copy_file(run.result_file, tmp, fs::copy_options::overwrite_existing);
  fs::rename(tmp, c.baseline);
  log(fmt::format("verify: baseline {} regenerated on the CPU backend", c.baseline.string()));
  return 0;
}

}  // namespace

namespace {
int verify_here(const VerifyOptions& o, const Log& log, const Log& error, const dist::CommPtr& comm);
}  // namespace

// Several ranks from an MPI launcher (issue 33): every rank runs its part of the deck, rank 0 compares and says, and
// every rank returns rank 0's verdict. An error on one rank alone ends them all (exit code 2).
int run_verify(const VerifyOptions& o, const Log& log, const Log& error)
{
  const dist::CommPtr comm = dist::launcher_ranks() > 1 ? dist::world_communicator() : dist::serial_communicator();
  if (comm->size() == 1) return verify_here(o, log, error, comm);
  if (o.regenerate) {
    if (comm->rank() == 0) error("--regenerate: baselines come from one CPU process; run it without mpirun/srun");
    return 2;
  }
  const bool root = comm->rank() == 0;
  const Log quiet = [](const std::string&) {};
  const int code = verify_here(o, root ? log : quiet, [&](const std::string& e) {
    error(fmt::format("rank {}: {}", comm->rank(), e));
    comm->abort(2);
  }, comm);
  return comm->max(root ? code : 0);
}

namespace {
int verify_here(const VerifyOptions& o, const Log& log, const Log& error, const dist::CommPtr& comm)
{
  const bool root = comm->rank() == 0;
  try {
    std::optional<CaseFile> cs;
    if (!o.case_file.empty()) cs = load_case(o.case_file);
    // Destinations before any work: a directory in the way would otherwise fail the write at the end.
    if (!o.json_path.empty()) check_file_destination(o.json_path, "--json", true);
    if (o.regenerate) {
      if (!cs) throw VerifyError("--regenerate needs --case");
      check_file_destination(cs->baseline, "baseline", true);
      return regenerate(o, *cs, log);
    }
    const fs::path baseline_path = !o.baseline.empty() ? fs::path(o.baseline) : cs ? cs->baseline : fs::path();
    if (baseline_path.empty()) throw VerifyError("no baseline: give --baseline BASE.h5 or --case CASE.toml");
    if (o.input.empty() && !cs) throw VerifyError("nothing to verify: give RESULT.h5, DECK.toml or --case CASE.toml");
    const bool deck_input = o.input.empty() || is_deck(o.input);
    if (!deck_input && !o.overrides.empty()) throw VerifyError("--set applies to a deck, not to a result file");
    if (!deck_input && o.backend != "auto") throw VerifyError("--backend applies to a deck run, not to a result file");
    // The backend first: without the device asked for there is nothing to do (a GPU test skips).
    const ExecPtr exec = deck_input ? choose_backend(o.backend, log) : ExecPtr{};
    const Results baseline = read_checked(baseline_path, "baseline");
    // The tolerances' names against the baseline's fields, before a deck run that may take minutes.
    const std::vector<VerifiedField> fields = verified_fields(baseline);
    if (cs) check_case_tolerances(*cs, fields);
    {
      Tolerances scratch = default_tolerances();
      for (const auto& s : o.rtol) apply_tolerance_option(scratch, s, true, fields);
      for (const auto& s : o.atol) apply_tolerance_option(scratch, s, false, fields);
    }

    // The result: a file as given, or the run of a deck (the case's deck with its overrides).
    std::optional<TempDir> dir;
    fs::path result_path;
    if (deck_input) {
      std::vector<std::string> ov;
      fs::path deck;
      if (o.input.empty()) {
        deck = cs->deck, ov = cs->overrides;
      } else {
        deck = o.input;
      }
      ov.insert(ov.end(), o.overrides.begin(), o.overrides.end());
      dir.emplace(o.output_dir.empty() ? fresh_temp_dir() : fs::path(o.output_dir), !o.output_dir.empty());
      const DeckRun run = run_deck(deck, ov, exec, dir->path, dir->keep, o.command_line, log, comm,
                                   physics::parse_partition_spec(o.partition, "--partition"));
      if (!run.failure.empty()) {
        log("FAIL " + run.failure);
        log("verify: FAIL (the run did not complete; nothing compared)");
        return 1;
      }
      if (!root) return 0;  // rank 0 has the result and compares it
      result_path = run.result_file;
    } else {
      result_path = o.input;
    }
    const Results result = read_checked(result_path, "result");

    // Tolerances: the case's policy for this pair of backends (or the built-in default), then
    // --rtol / --atol on top.
    Tolerances tol = default_tolerances();
    std::string policy = "built-in same_backend default";
    if (cs) {
      // A run on another number of ranks differs by round-off as another backend's does (the subdomain
      // preconditioners, the order of the sums): the cross_backend policy (issue 33).
      const bool same_ranks = result.ranks == baseline.ranks;
      const bool same = result.backend == baseline.backend && same_ranks;
      tol = same ? cs->same_backend : cs->cross_backend;
      policy = fmt::format("{} policy of {}{}", same ? "same_backend" : "cross_backend", cs->path.string(),
                           same_ranks ? std::string()
                                      : fmt::format(" (the result ran on {} rank(s), the baseline on {})", result.ranks,
                                                    baseline.ranks));
    }
    for (const auto& s : o.rtol) apply_tolerance_option(tol, s, true, fields);
    for (const auto& s : o.atol) apply_tolerance_option(tol, s, false, fields);
    if (!o.rtol.empty() || !o.atol.empty()) policy += ", with --rtol/--atol";

    log(fmt::format("verify: result {} ({} backend, {}) against baseline {} ({} backend, {})", result_path.string(),
                    result.backend, result.device, baseline_path.string(), baseline.backend, baseline.device));
    log("tolerances: " + policy);
    const VerifyReport rep = compare_results(result, baseline, tol);
    print_report(rep, log);
    if (!o.json_path.empty())
      write_json_file(o.json_path, json_report(rep, result_path.string(), baseline_path.string(), policy, tol, fields));
    return rep.pass() ? 0 : 1;
  } catch (const VerifyError& e) {
    error(e.what());
  } catch (const InputError& e) {
    error(e.what());
  } catch (const BackendError& e) {
    error(e.what());
  } catch (const h5::Error& e) {
    error(fmt::format("HDF5: {}", e.what()));
  } catch (const std::exception& e) {
    error(e.what());
  }
  return 2;
}
}  // namespace

}  // namespace blockres
