// Deck loader: TOML deck + --set overrides -> validated RunConfig in SI units, and the resolved deck.
#include "miniapp/io/deck.hpp"
#include "input/section.hpp"

#include "miniapp/io/h5.hpp"
#include "input/quote.hpp"
#include "kernels/common.hpp"
#include "linalg/preconditioners/default_solver.hpp"
#include "physics/grid.hpp"
#include "physics/model_registry.hpp"
#include "physics/units.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace blockres {
namespace {

namespace fs = std::filesystem;
using physics::GridSpec;
using physics::RockSpec;
using namespace deck;

constexpr std::size_t kMaxReportTimes = 1'000'000;

// ---- Overrides -----------------------------------------------------------------------------------

std::string trim(std::string_view s)
{
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::optional<std::size_t> as_index(const std::string& seg)
{
  const bool digits = std::all_of(seg.begin(), seg.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (seg.empty() || seg.size() > 9 || !digits) return std::nullopt;
  return std::stoul(seg);
}

// Parsing "v = <value>" with the override as source path gives a node that carries its origin,
// so later validation messages can name the --set instead of a line of the deck.
toml::table parse_override_value(const std::string& value, const std::string& source)
{
  try {
    toml::table t = toml::parse(std::string_view("v = " + value), std::string_view(source));
    if (t.size() == 1 && t.contains("v")) return t;
  } catch (const toml::parse_error&) {
  }
  return toml::parse(std::string_view("v = " + quote_literal(value)), std::string_view(source));  // a bare word
}

void apply_override(toml::table& root, const std::string& text)
{
  const std::string source = std::string(kSetPrefix) + text;
  auto error = [&](std::string_view what) { return InputError(fmt::format("{}: {}", source, what)); };
  const auto eq = text.find('=');
  if (eq == std::string::npos) throw error("expected dotted.key=value");
  const std::string key = trim(std::string_view(text).substr(0, eq));
  if (key.empty()) throw error("empty key");
  std::vector<std::string> segs;
  for (std::size_t b = 0;;) {
    const auto e = key.find('.', b);
    segs.push_back(trim(std::string_view(key).substr(b, e == std::string::npos ? std::string::npos : e - b)));
    if (segs.back().empty()) throw error(fmt::format("empty segment in key '{}'", key));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  toml::table value = parse_override_value(trim(std::string_view(text).substr(eq + 1)), source);
  toml::node& v = *value.get("v");

  toml::node* cur = &root;
  std::string walked;
  for (std::size_t s = 0; s < segs.size(); ++s) {
    const std::string& seg = segs[s];
    const bool last = s + 1 == segs.size();
    if (toml::table* t = cur->as_table()) {
      if (last) {
        v.visit([&](auto&& x) { t->insert_or_assign(seg, std::move(x)); });
        return;
      }
      if (!t->contains(seg)) {
        // A new table with the override's source, so an unknown one is reported against it.
        toml::table made = toml::parse(std::string_view("v = {}"), std::string_view(source));
        made.get_as<toml::table>("v")->is_inline(false);
        t->insert(seg, std::move(*made.get_as<toml::table>("v")));
      }
      cur = t->get(seg);
    } else if (toml::array* a = cur->as_array()) {
      std::optional<std::size_t> idx = as_index(seg);
      if (!idx && walked == "wells") {
        std::string names;
        for (std::size_t w = 0; w < a->size() && !idx; ++w) {
          const auto name = (*a)[w].as_table() ? (*(*a)[w].as_table())["name"].value<std::string>() : std::nullopt;
          if (name == seg) idx = w;
          if (name) names += (names.empty() ? "" : ", ") + *name;
        }
        if (!idx) throw error(fmt::format("unknown well name '{}' (the wells are: {})", seg, names));
      }
      if (!idx) throw error(fmt::format("'{}' is an array: address its elements by 0-based index", walked));
      if (*idx >= a->size())
        throw error(fmt::format("index {} out of range: '{}' has {} elements", *idx, walked, a->size()));
      if (last) {
        v.visit([&](auto&& x) { a->replace(a->cbegin() + std::ptrdiff_t(*idx), std::move(x)); });
        return;
      }
      cur = a->get(*idx);
    } else {
      throw error(fmt::format("'{}' is a value, not a table", walked));
    }
    walked += (walked.empty() ? "" : ".") + seg;
  }
}

// ---- Sections of the deck ------------------------------------------------------------------------

std::vector<double> axis_sizes(Section& g, std::string_view k, int n, std::string_view count)
{
  const toml::node& node = g.require(k);
  if (node.is_number()) return std::vector<double>(std::size_t(n), g.number(node, k, above(0)));
  const toml::array* a = node.as_array();
  if (!a) g.bad(node, k, fmt::format("must be a number or an array of {} numbers", count));
  if (a->size() != std::size_t(n))
    g.bad(node, k, fmt::format("must have {} = {} values (has {})", count, n, a->size()));
  std::vector<double> v;
  for (std::size_t i = 0; i < a->size(); ++i) v.push_back(g.number((*a)[i], fmt::format("{}[{}]", k, i), above(0)));
  return v;
}

GridSpec read_grid(Section g)
{
  g.only({"nx", "ny", "nz", "dx", "dy", "dz", "top", "gravity"});
  GridSpec s;
  s.nx = g.integer("nx", at_least(1));
  s.ny = g.integer("ny", at_least(1));
  s.nz = g.integer("nz", at_least(1));
  // Before anything is sized by it: the cell count and the Jacobian's blocks (one per cell and two per
  // connection on a full grid; its row offsets are index_t too) must fit index_t (kernels/common.hpp).
  // Each count is at most 2^31 - 1, so nx * ny fits 64 bits; the third factor is checked by division
  // first, so three large counts cannot wrap to a small (or zero) product.
  constexpr std::int64_t max_index = std::numeric_limits<index_t>::max();
  const std::int64_t layer = std::int64_t(s.nx) * s.ny;
  const auto too_many = [&](std::string_view what) {
    g.fail(g.find("nx"), "",
           fmt::format("nx * ny * nz = {} * {} * {} (about {:.3g}) {}; a cell index is a signed 32-bit integer (at "
                       "most {}): give smaller grid.nx, grid.ny or grid.nz",
                       s.nx, s.ny, s.nz, double(layer) * double(s.nz), what, max_index),
           std::nullopt);
  };
  if (layer > max_index / s.nz) too_many("cells are too many");
  const std::int64_t cells = layer * s.nz;
  const std::int64_t connections =
      std::int64_t(s.nx - 1) * s.ny * s.nz + std::int64_t(s.nx) * (s.ny - 1) * s.nz + layer * (s.nz - 1);
  if (cells + 2 * connections > max_index)
    too_many(fmt::format("cells make a Jacobian of {} blocks, too many", cells + 2 * connections));
  s.dx = axis_sizes(g, "dx", s.nx, "nx");
  s.dy = axis_sizes(g, "dy", s.ny, "ny");
  s.dz = axis_sizes(g, "dz", s.nz, "nz");
  s.top = g.number("top", 0.0, any);
  s.gravity = g.flag("gravity", true);
  return s;
}

std::vector<double> read_property_file(Section& p, const GridSpec& g)
{
  p.only({"file", "dataset"});
  const std::string file = non_empty(p, "file", p.text("file"));
  const std::string dataset = non_empty(p, "dataset", p.text("dataset"));
  const fs::path path = fs::path(file).is_relative() ? p.deck().dir / file : fs::path(file);
  h5::DoubleData d;
  try {
    const h5::File f = h5::File::open_read(path);
    d = h5::read_doubles(f.id(), dataset);
  } catch (const h5::Error& e) {
    p.fail(p.find("file"), "", fmt::format("cannot read dataset '{}' from file '{}': {}", dataset, file, e.what()),
           std::nullopt);
  }
  const bool flat = d.dims.size() == 1 && d.dims[0] == hsize_t(g.nx) * g.ny * g.nz;
  const bool shaped = d.dims == std::vector<hsize_t>{hsize_t(g.nz), hsize_t(g.ny), hsize_t(g.nx)};
  if (!flat && !shaped) {
    std::string shape;
    for (const hsize_t x : d.dims) shape += (shape.empty() ? "" : ", ") + std::to_string(x);
    p.fail(p.find("dataset"), "",
           fmt::format("dataset '{}' in file '{}' has shape [{}]; expected nx*ny*nz = {} values or shape "
                       "[nz][ny][nx] = [{}][{}][{}]",
                       dataset, file, shape, std::size_t(g.nx) * g.ny * g.nz, g.nz, g.ny, g.nx),
           std::nullopt);
  }
  // The resolved deck must load from wherever it is stored, so it names the file absolutely.
  if (fs::path(file).is_relative()) p.table().insert_or_assign("file", fs::absolute(path).lexically_normal().string());
  return std::move(d.values);
}

// The standardised noise of the last log-normal property read (kx, ky and kz usually share a seed and a
// correlation length, and then the same noise: made once per rock section).
struct NormalFieldCache {
  double correlation_length = -1.0;
  unsigned long long seed = 0;
  std::vector<double> g;
};

std::vector<double> read_lognormal(Section& p, const GridSpec& g, NormalFieldCache& cache)
{
  p.only({"mean_log", "std_log", "correlation_length", "seed"});
  const double mean_log = p.number("mean_log");
  const double std_log = p.number("std_log", at_least(0));
  const double corr = p.number("correlation_length", 1.0, at_least(0));
  const auto seed = static_cast<unsigned long long>(p.integer64(p.require("seed"), "seed", at_least(0)));
  if (cache.g.empty() || cache.correlation_length != corr || cache.seed != seed) {
    cache.g = physics::standard_normal_field(g.nx, g.ny, g.nz, corr, seed);
    cache.correlation_length = corr, cache.seed = seed;
  }
  return physics::lognormal_field(cache.g, mean_log, std_log);
}

// A property (see inputs/README.md) as one value per cell in natural order, checked against r.
std::vector<double> read_property(Section& rock, std::string_view k, const GridSpec& g, Range r,
                                  NormalFieldCache& cache)
{
  const std::size_t layer = std::size_t(g.nx) * g.ny, n = layer * g.nz;
  toml::node& node = rock.require(k);
  if (node.is_number()) return std::vector<double>(n, rock.number(node, k, r));
  if (const toml::array* a = node.as_array()) {
    // One value per cell, i fastest, then j, then k (ECLIPSE's PORO/PERMX order). With nx = ny = 1
    // this is also one per layer: the two readings agree.
    if (a->size() == n && n != std::size_t(g.nz)) {
      std::vector<double> v(n);
      for (std::size_t c = 0; c < n; ++c)
        v[c] = rock.number((*a)[c], fmt::format("{}[{}]", k, c), r,
                           fmt::format("cell ({}, {}, {})", c % g.nx + 1, c / g.nx % g.ny + 1, c / layer + 1));
      return v;
    }
    if (a->size() != std::size_t(g.nz))
      rock.bad(node, k,
               fmt::format("must have nz = {} values (one per layer) or nx*ny*nz = {} values (one per cell, i "
                           "fastest, then j, then k); has {}",
                           g.nz, n, a->size()));
    std::vector<double> v(n);
    for (std::size_t z = 0; z < a->size(); ++z)
      std::fill_n(v.begin() + std::ptrdiff_t(z * layer), layer, rock.number((*a)[z], fmt::format("{}[{}]", k, z), r));
    return v;
  }
  toml::table* t = node.as_table();
  if (!t)
    rock.bad(node, k, "must be a number, an array of nz or nx*ny*nz numbers, an inline table {file, dataset} or "
                      "{mean_log, std_log, correlation_length, seed}");
  Section p(rock.deck(), *t, rock.join(k));
  const bool from_file = t->contains("file") || t->contains("dataset");
  std::vector<double> v = from_file ? read_property_file(p, g) : read_lognormal(p, g, cache);
  for (std::size_t c = 0; c < n; ++c)
    if (!std::isfinite(v[c]) || !r.contains(v[c]))
      rock.fail(&node, k,
                fmt::format("cell ({}, {}, {}) {}", c % g.nx + 1, c / g.nx % g.ny + 1, c / layer + 1,
                            std::isfinite(v[c]) ? r.describe() : "must be finite"),
                fmt::format("{}", v[c]));
  return v;
}

RockSpec read_rock(Section r, const GridSpec& g, std::vector<std::string>& notes)
{
  r.only({"porosity", "permeability", "kx", "ky", "kz", "compressibility", "reference_pressure"});
  RockSpec s;
  NormalFieldCache cache;  // one grid: the key is the correlation length and the seed
  s.porosity = read_property(r, "porosity", g, unit_interval, cache);
  if (std::all_of(s.porosity.begin(), s.porosity.end(), [](double p) { return p == 0.0; }))
    r.bad(r.require("porosity"), "porosity", "every cell has porosity 0, so no cell is active");
  if (const toml::node* perm = r.find("permeability")) {
    for (const std::string_view k : {"kx", "ky", "kz"})
      if (const toml::node* n = r.find(k))
        r.bad(*n, k, fmt::format("cannot be combined with rock.permeability ({})", place(perm->source())));
    s.kx = read_property(r, "permeability", g, at_least(0), cache);
    s.ky = s.kz = s.kx;
  } else {
    r.require("kx", "missing required key (give kx or permeability)");
    s.kx = read_property(r, "kx", g, at_least(0), cache);
    for (auto [k, field] : {std::pair{"ky", &s.ky}, std::pair{"kz", &s.kz}}) {
      if (r.find(k)) {
        *field = read_property(r, k, g, at_least(0), cache);
      } else {
        r.find("kx")->visit([&](auto&& x) { r.table().insert(k, x); });  // a copy: the default is kx
        *field = s.kx;
      }
    }
  }
  for (auto* k : {&s.kx, &s.ky, &s.kz})
    for (double& v : *k) v *= units::millidarcy;
  s.compressibility = r.number("compressibility", 0.0, at_least(0)) * units::per_bar;
  if (s.compressibility > 0.0 && !r.given("reference_pressure"))
    notes.push_back(physics::default_reference_pressure_note(r.key("reference_pressure"), "the pore volume"));
  s.reference_pressure = r.number("reference_pressure", 1.01325, any) * units::bar;
  return s;
}

// One entry of schedule.tstep: a length in days, or ECLIPSE's repeat count "N*length" as a string.
// Appends the lengths [day] to `steps`.
void read_tstep_entry(Section& s, const toml::node& n, const std::string& k, std::vector<double>& steps)
{
  const auto too_many = [&](std::size_t count) {
    if (count > kMaxReportTimes - std::min(steps.size(), kMaxReportTimes))
      s.bad(n, k, fmt::format("gives more than {} report steps", kMaxReportTimes));
  };
  if (!n.is_string()) {
    const double length = s.number(n, k, above(0));
    too_many(1);
    steps.push_back(length);
    return;
  }
  const std::string text = trim(n.as_string()->get());
  const auto star = text.find('*');
  std::size_t count = 0;
  double length = 0;
  bool ok = star != std::string::npos && star > 0;
  if (ok) {
    const std::string c = trim(std::string_view(text).substr(0, star)), v = trim(std::string_view(text).substr(star + 1));
    const auto [cp, cec] = std::from_chars(c.data(), c.data() + c.size(), count);
    const auto [vp, vec] = std::from_chars(v.data(), v.data() + v.size(), length);
    ok = !c.empty() && !v.empty() && cec == std::errc() && cp == c.data() + c.size() && vec == std::errc() &&
         vp == v.data() + v.size();
  }
  if (!ok)
    s.bad(n, k, fmt::format("must be a step length in days or a string \"N*length\" (N steps of that length, as in "
                            "ECLIPSE's TSTEP: \"10*30\"); got {}",
                            quote_literal(text)));
  if (count < 1) s.bad(n, k, fmt::format("repeat count of {} must be >= 1", quote_literal(text)));
  if (!(std::isfinite(length) && length > 0))
    s.bad(n, k, fmt::format("step length of {} must be > 0", quote_literal(text)));
  too_many(count);
  steps.insert(steps.end(), count, length);
}

ScheduleConfig read_schedule(Section s)
{
  s.only({"report_times", "tstep", "end_time", "report_interval", "dt_initial", "dt_max", "dt_min"});
  ScheduleConfig c;
  const toml::node* times = s.find("report_times");
  const toml::node* end = s.find("end_time");
  const toml::node* tstep = s.find("tstep");
  // Three ways to give the report times; exactly one of them.
  if (tstep) {
    for (const std::string_view k : {"report_times", "end_time", "report_interval"})
      if (const toml::node* other = s.find(k))
        s.bad(*other, k, fmt::format("cannot be combined with schedule.tstep ({})", place(tstep->source())));
    const toml::array* a = tstep->as_array();
    if (!a || a->empty())
      s.bad(*tstep, "tstep", "must be a non-empty array of report step lengths in days (numbers, or \"N*length\")");
    std::vector<double> steps;  // [day]
    for (std::size_t n = 0; n < a->size(); ++n) read_tstep_entry(s, (*a)[n], fmt::format("tstep[{}]", n), steps);
    // Report times are the running sums in days, so tstep = [10, 10] and report_times = [10, 20] agree.
    double t = 0;
    for (std::size_t n = 0; n < steps.size(); ++n) {
      const double next = t + steps[n];
      if (!(next > t) || !std::isfinite(next))
        s.bad(*tstep, "tstep",
              fmt::format("step {} ({} d) does not advance the time past {} d", n + 1, steps[n], t));
      t = next;
      c.report_times.push_back(t * units::day);
    }
  } else if (times) {
    if (end) s.bad(*end, "end_time", "cannot be combined with schedule.report_times");
    if (const toml::node* n = s.find("report_interval"))
      s.bad(*n, "report_interval", "is only allowed with end_time, not with report_times");
    const toml::array* a = times->as_array();
    if (!a || a->empty()) s.bad(*times, "report_times", "must be a non-empty array of times");
    for (std::size_t n = 0; n < a->size(); ++n) {
      const std::string k = fmt::format("report_times[{}]", n);
      const double t = s.number((*a)[n], k, above(0)) * units::day;
      if (!c.report_times.empty() && t <= c.report_times.back())
        s.bad((*a)[n], k, fmt::format("must be greater than the previous time {}", to_double((*a)[n - 1])));
      c.report_times.push_back(t);
    }
  } else {
    if (!end) s.missing("report_times", "missing required key (give report_times, end_time or tstep)");
    const double t_end = s.number(*end, "end_time", above(0));
    const double interval = s.number("report_interval", t_end, above(0));
    if (t_end / interval > double(kMaxReportTimes))
      s.bad(s.require("report_interval"), "report_interval",
            fmt::format("gives more than {} report times", kMaxReportTimes));
    // k * interval rather than a running sum, and no report a rounding error short of the end.
    for (std::size_t k = 1; double(k) * interval < t_end * (1.0 - 1e-9); ++k)
      c.report_times.push_back(double(k) * interval * units::day);
    c.report_times.push_back(t_end * units::day);
  }
  const double dt_initial = s.number("dt_initial", 1.0, above(0));
  const double dt_max = s.number("dt_max", 30.0, above(0));
  const double dt_min = s.number("dt_min", 1e-6, above(0));
  // Blame the key the user wrote; the other side of the comparison may be a default.
  if (dt_max < dt_initial) {
    if (s.given("dt_max")) s.bad(s.require("dt_max"), "dt_max", fmt::format("must be >= dt_initial = {}", dt_initial));
    s.bad(s.require("dt_initial"), "dt_initial", fmt::format("must be <= dt_max = {}", dt_max));
  }
  if (dt_min > dt_initial) {
    if (s.given("dt_min")) s.bad(s.require("dt_min"), "dt_min", fmt::format("must be <= dt_initial = {}", dt_initial));
    s.bad(s.require("dt_initial"), "dt_initial", fmt::format("must be >= dt_min = {}", dt_min));
  }
  c.dt_initial = dt_initial * units::day;
  c.dt_max = dt_max * units::day;
  c.dt_min = dt_min * units::day;
  return c;
}

// The run log's line on the linear solver: what it is, and whether it is the default for the model's
// system (linalg/preconditioners/default_solver.hpp) or the deck's own choice (then the default is named
// beside it, so that a deck written before issue 29 shows what it would get without its settings).
std::string linear_solver_note(const LinearConfig& linear, const DefaultLinearSolver& def, std::string_view model,
                               int block_size)
{
  const KrylovConfig& k = linear.krylov;
  const bool restarted = k.method == KrylovMethod::gmres || k.method == KrylovMethod::fgmres;
  const bool is_default = k.method == def.krylov.method && (!restarted || k.restart == def.krylov.restart) &&
                          (k.method != KrylovMethod::idr || k.idr_s == def.krylov.idr_s) &&
                          linear.preconditioner == def.preconditioner;
  constexpr std::string_view where = "inputs/README.md, 'Default linear solver'";
  if (is_default)
    return fmt::format("linear solver: {}, the default for model {} at block size {}: {} ({})", def.description, model,
                       block_size, def.reason, where);
  return fmt::format("linear solver: {}, as the deck sets it (the default for model {} at block size {} is {}: {})",
                     describe_linear_solver(k, linear.preconditioner), model, block_size, def.description, where);
}

// [solver]: Newton's keys, and the linear solver's, each key the deck leaves out taking the default for
// the model's system (`system`, from the model's registry entry): a deck that gives only `tolerance`
// keeps the default method and preconditioner, one that gives only `method` the default preconditioner.
// The line for the run log goes to `notes`.
void read_solver(Section s, std::string_view model, const LinearSystemTraits& system, NewtonConfig& newton,
                 LinearConfig& linear, std::vector<std::string>& notes)
{
  s.only({"newton", "linear"});
  Section n = s.sub("newton", false);
  n.only({"max_iterations", "tol_cnv", "tol_mb", "max_dsw", "max_dx", "max_dp_rel", "cut_factor", "growth_factor",
          "target_iterations", "predict_failure"});
  newton.max_iterations = n.integer("max_iterations", 12, at_least(1));
  newton.tol_cnv = n.number("tol_cnv", 1e-3, above(0));
  newton.tol_mb = n.number("tol_mb", 1e-7, above(0));
  newton.max_dsw = n.number("max_dsw", 0.2, between(0, 1, true, false));
  // Only the multicomponent model uses it; not filled into an oil_water resolved deck.
  newton.max_dx = n.opt_number("max_dx", between(0, 1, true, false)).value_or(newton.max_dx);
  newton.max_dp_rel = n.number("max_dp_rel", 0.3, above(0));
  newton.cut_factor = n.number("cut_factor", 0.5, between(0, 1, true, true));
  newton.growth_factor = n.number("growth_factor", 2.0, at_least(1));
  newton.target_iterations = n.integer("target_iterations", 0, at_least(0));
  newton.predict_failure = n.flag("predict_failure", false);

  Section l = s.sub("linear", false);
  l.only({"method", "tolerance", "tolerance_reference", "forcing", "eta_min", "eta_max", "eta_initial",
          "max_iterations", "restart", "orthogonalization", "gram_schmidt", "idr_s", "preconditioner"});
  // Keys that apply to another method or forcing are an inconsistency, not something to ignore.
  const DefaultLinearSolver def = default_linear_solver(system);
  const KrylovMethod method = l.choice("method", def.krylov.method, krylov_method_names);
  linear.krylov.method = method;
  const bool restarted = method == KrylovMethod::gmres || method == KrylovMethod::fgmres;
  if (!restarted) l.reject({"restart", "orthogonalization", "gram_schmidt"}, "method = \"gmres\" or \"fgmres\"");
  if (method != KrylovMethod::idr) l.reject({"idr_s"}, "method = \"idr\"");
  if (restarted) {
    linear.krylov.restart = l.integer("restart", def.krylov.restart, at_least(1));
    linear.krylov.orthogonalization =
        l.choice("orthogonalization", def.krylov.orthogonalization, orthogonalization_names);
    if (linear.krylov.orthogonalization != Orthogonalization::cgs2)
      l.reject({"gram_schmidt"}, "orthogonalization = \"cgs2\"");
    linear.krylov.gemv = l.choice("gram_schmidt", def.krylov.gemv, gram_schmidt_names);
  }
  if (method == KrylovMethod::idr) linear.krylov.idr_s = l.integer("idr_s", def.krylov.idr_s, between(1, max_idr_s));
  linear.krylov.max_iterations = l.integer("max_iterations", def.krylov.max_iterations, at_least(1));
  linear.krylov.reference =
      l.choice("tolerance_reference", ToleranceReference::initial_residual, tolerance_reference_names);

  auto& fc = linear.forcing;
  // Inexact Newton where the default solver has it (issue 30: def.eta_max > 0), unless the deck gives
  // `tolerance`, which asks for the fixed forcing; the Newton test (CNV, MB) is the same either way
  // (inputs/README.md, "Inexact Newton").
  const bool ew_default = def.eta_max > 0.0 && !l.given("tolerance");
  fc.kind = l.choice("forcing", ew_default ? ForcingKind::eisenstat_walker : ForcingKind::fixed, forcing_kind_names);
  const bool ew = fc.kind == ForcingKind::eisenstat_walker;
  if (!ew) {
    l.reject({"eta_min", "eta_max", "eta_initial"}, "forcing = \"eisenstat_walker\"");
    linear.krylov.rel_tol = l.number("tolerance", def.krylov.rel_tol, between(0, 1, true, true));
  } else {
    // The forcing terms replace the fixed tolerance; KrylovConfig::rel_tol is set per solve.
    l.reject({"tolerance"}, "forcing = \"fixed\" (eisenstat_walker chooses it per solve within [eta_min, eta_max])");
    const Range open_unit = between(0, 1, true, true);
    fc.eta_min = l.number("eta_min", 1e-6, open_unit);
    fc.eta_max = l.number("eta_max", def.eta_max > 0.0 ? def.eta_max : 0.1, open_unit);
    // Blame the key the user wrote; the other side of the comparison may be a default.
    if (fc.eta_min > fc.eta_max) {
      if (l.given("eta_min"))
        l.bad(l.require("eta_min"), "eta_min", fmt::format("must be <= eta_max = {}", fc.eta_max));
      l.bad(l.require("eta_max"), "eta_max", fmt::format("must be >= eta_min = {}", fc.eta_min));
    }
    fc.eta_initial = l.number("eta_initial", fc.eta_max, between(fc.eta_min, fc.eta_max));
    linear.krylov.rel_tol = fc.eta_initial;
  }
  Section p = l.sub("preconditioner", false);
  // The deck's type, or the default's; a table naming the default's type (e.g. only `type = "cpr"` and
  // `weights`) takes the default's values for the keys it leaves out, another type its own defaults.
  const PreconditionerSpec defaults[] = {def.preconditioner};
  linear.preconditioner = read_preconditioner(p, defaults, PreconditionerRole::solver);
  notes.push_back(linear_solver_note(linear, def, model, system.block_size));
}

#if BLOCKRES_HAVE_VTK
constexpr bool kVtkBuilt = true;
#else
constexpr bool kVtkBuilt = false;
#endif

// Why `name` cannot name the run's files (<name>.h5, <name>.checkpoint.h5, <name>.pvd, <name>_vtk/,
// <name>.lock and their .tmp twins) in the output directory; empty when it can. Names are kept to a
// portable set so that a quote or a space typed into --set cannot reach a file name unnoticed.
std::string output_name_problem(const std::string& name)
{
  constexpr std::size_t max_length = 200;  // NAME.checkpoint.h5.tmp stays well inside NAME_MAX (255)
  if (name == "." || name == "..") return "must be a file name, not '.' or '..'";
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
    return "must be a file name, not a path (no '/' or '\\')";
  if (name.size() > max_length) return fmt::format("is {} characters long; at most {} are allowed", name.size(), max_length);
  for (const char ch : name) {
    const auto u = static_cast<unsigned char>(ch);
    if (!(std::isalnum(u) && u < 128) && ch != '_' && ch != '-' && ch != '.' && ch != '+')
      return fmt::format("may hold only letters A-Z a-z, digits, '_', '-', '.' and '+' (has {})",
                         u < 32 || u >= 127 ? fmt::format("byte 0x{:02x}", unsigned(u)) : fmt::format("'{}'", ch));
  }
  if (name.front() == '.' || name.front() == '-')
    return "must not start with '.' or '-' (a hidden file, or a name that reads as an option)";
  return {};
}

OutputConfig read_output(Section o, const std::string& deck_path)
{
  o.only({"directory", "name", "vtk", "checkpoint", "background_writer"});
  OutputConfig c;
  c.directory = non_empty(o, "directory", o.text("directory", "output"));
  const bool named = o.given("name");
  c.name = non_empty(o, "name", o.text("name", fs::path(deck_path).stem().string()));
  if (const std::string why = output_name_problem(c.name); !why.empty())
    o.bad(o.require("name"), "name",
          named ? why : fmt::format("{} (the default is the deck's file name; set output.name)", why));
  // On by default where this build can write VTK. Asked for in a build without it, it is an error
  // rather than a silent no-op: the user expects files that would never appear.
  c.vtk = o.flag("vtk", kVtkBuilt);
  if (c.vtk && !kVtkBuilt)
    o.bad(o.require("vtk"), "vtk",
          "VTK output is not available: this blockres was built without VTK (BLOCKRES_VTK=OFF or VTK not found)");
  c.checkpoint = o.flag("checkpoint", false);
  c.background_writer = o.flag("background_writer", true);
  return c;
}

std::string read_text(const std::string& path)
{
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(fmt::format("{}: cannot read the deck: no such file", path));
  if (fs::is_directory(path, ec)) throw InputError(fmt::format("{}: cannot read the deck: it is a directory", path));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!(in && text << in.rdbuf()) && fs::file_size(path, ec) != 0)
    throw InputError(fmt::format("{}: cannot read the deck", path));
  return text.str();
}

}  // namespace

RunConfig load_deck(const std::string& path, const std::vector<std::string>& overrides)
{
  RunConfig cfg;
  cfg.deck_path = path;
  cfg.deck_text = read_text(path);
  toml::table root;
  try {
    root = toml::parse(std::string_view(cfg.deck_text), std::string_view(path));
  } catch (const toml::parse_error& e) {
    const toml::source_position at = e.source().begin;
    throw InputError(fmt::format("{}:{}:{}: {}", path, at.line, at.column, e.description()));
  }
  for (const std::string& o : overrides) apply_override(root, o);

  const Deck deck{path, fs::path(path).parent_path()};
  Section top(deck, root, "");
  Section model = top.sub("model", true);
  model.only({"type"});
  std::vector<std::string_view> names;
  for (const auto& m : physics::registered_models()) names.push_back(m.name);
  const toml::node& type_node = model.require("type");
  cfg.model = model.text(type_node, "type");
  const physics::ModelEntry* entry = physics::find_model(cfg.model);
  if (!entry) {
    std::string list;
    for (const auto n : names) list += (list.empty() ? "" : ", ") + quote_literal(n);
    model.bad(type_node, "type", (names.size() == 1 ? "must be " : "must be one of ") + list);
  }
  std::vector<std::string_view> known = {"title", "model", "grid", "rock", "schedule", "solver", "output"};
  known.insert(known.end(), entry->sections.begin(), entry->sections.end());
  top.only(known);
  top.text("title", "");
  cfg.grid = read_grid(top.sub("grid", true));
  cfg.rock = read_rock(top.sub("rock", true), cfg.grid, cfg.notes);
  cfg.model_input = entry->read_deck(top, cfg.grid, cfg.rock);
  cfg.schedule = read_schedule(top.sub("schedule", true));
  // The model's input is read by now: the linear solver's defaults follow the system it makes.
  LinearSystemTraits system = entry->linear_system(*cfg.model_input, cfg.rock);
  system.cells = std::count_if(cfg.rock.porosity.begin(), cfg.rock.porosity.end(), [](double p) { return p > 0.0; });
  read_solver(top.sub("solver", false), cfg.model, system, cfg.newton, cfg.linear, cfg.notes);
  cfg.output = read_output(top.sub("output", false), path);
  cfg.resolved_toml = to_toml(root);
  return cfg;
}

}  // namespace blockres
