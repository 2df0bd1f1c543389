// Deck loader: TOML deck + --set overrides -> validated RunConfig in SI units, and the resolved deck.
#include "miniapp/deck.hpp"

#include "miniapp/h5.hpp"
#include "miniapp/quote.hpp"
#include "physics/grid.hpp"
#include "physics/units.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::string_view kSetPrefix = "--set ";  // source path of nodes that came from an override
constexpr std::size_t kMaxReportTimes = 1'000'000;

// ---- TOML text ---------------------------------------------------------------------------------

// The resolved deck: TOML++'s own formatter (keys sorted, floats printed to round-trip).
std::string to_toml(const toml::table& t)
{
  std::ostringstream os;
  os << toml::toml_formatter{t};
  return os.str();
}

// The offending value as it appears in a message: one line, cut short.
std::string render(const toml::node& n)
{
  std::ostringstream os;
  n.visit([&](auto&& v) { os << v; });
  std::string s = os.str();
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s.size() <= 80 ? s : s.substr(0, 76) + " ...";
}

// ---- Messages ------------------------------------------------------------------------------------

bool has_source(const toml::source_region& s) { return s.begin.line > 0 && s.path; }

std::string place(const toml::source_region& s)
{
  if (s.path->starts_with(kSetPrefix)) return *s.path;  // a line/column within "v = ..." means nothing
  return fmt::format("{}:{}:{}", *s.path, s.begin.line, s.begin.column);
}

std::size_t edit_distance(std::string_view a, std::string_view b)
{
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      diag = std::exchange(row[j], std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])}));
  }
  return row[b.size()];
}

// Closed or open interval; every number must also be finite.
struct Range {
  double lo = -kInf, hi = kInf;
  bool lo_open = false, hi_open = false;

  bool contains(double v) const { return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi); }
  std::string describe() const
  {
    if (hi == kInf) return fmt::format("must be {} {}", lo_open ? ">" : ">=", lo);
    if (lo == -kInf) return fmt::format("must be {} {}", hi_open ? "<" : "<=", hi);
    return fmt::format("must be in {}{}, {}{}", lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
  }
};
constexpr Range any{};
constexpr Range above(double lo) { return {lo, kInf, true, false}; }
constexpr Range at_least(double lo) { return {lo, kInf, false, false}; }
constexpr Range between(double lo, double hi, bool lo_open = false, bool hi_open = false)
{
  return {lo, hi, lo_open, hi_open};
}
constexpr Range unit_interval{0.0, 1.0};

double to_double(const toml::node& n)
{
  return n.is_integer() ? double(n.as_integer()->get()) : n.as_floating_point()->get();
}

struct Deck {
  std::string path;  // as given
  fs::path dir;      // relative property files live here
};

// One TOML table of the deck with its dotted key path: typed, range-checked access that fills
// defaults into the table (so the resolved deck shows them) and reports errors with the
// location of the offending node.
class Section {
 public:
  Section(const Deck& deck, toml::table& t, std::string path, std::string suffix = {})
      : deck_(&deck), t_(&t), path_(std::move(path)), suffix_(std::move(suffix))
  {
  }

  const Deck& deck() const { return *deck_; }
  toml::table& table() const { return *t_; }
  // Dotted path of key k ("" is the table itself), with the well's name where there is one.
  std::string key(std::string_view k) const { return join(k) + suffix_; }
  std::string join(std::string_view k) const
  {
    if (k.empty()) return path_;
    return path_.empty() ? std::string(k) : fmt::format("{}.{}", path_, k);
  }
  // The node's location; for a node without one (a default) the table's, else the deck's start.
  std::string where(const toml::node* n) const
  {
    if (n && has_source(n->source())) return place(n->source());
    if (has_source(t_->source())) return place(t_->source());
    return deck_->path + ":1:1";
  }

  [[noreturn]] void fail(const toml::node* n, std::string_view k, std::string_view what,
                         const std::optional<std::string>& got) const
  {
    std::string msg = fmt::format("{}: {}: {}", where(n), key(k), what);
    if (got) msg += fmt::format(" (got {})", *got);
    throw InputError(msg);
  }
  [[noreturn]] void bad(const toml::node& n, std::string_view k, std::string_view what) const
  {
    fail(&n, k, what, render(n));
  }
  [[noreturn]] void missing(std::string_view k, std::string_view what = "missing required key") const
  {
    fail(nullptr, k, what, std::nullopt);
  }
  bool given(std::string_view k) const
  {
    const toml::node* n = t_->get(k);
    return n && has_source(n->source());
  }

  // Rejects the first key (in file order) not in `known`, suggesting the closest known one.
  void only(std::initializer_list<std::string_view> known) const
  {
    const toml::key* first = nullptr;
    const toml::node* first_node = nullptr;
    auto position = [](const toml::key& k, const toml::node& n) {
      const toml::source_region& s = has_source(k.source()) ? k.source() : n.source();
      return s.begin.line > 0 ? std::pair(s.begin.line, s.begin.column) : std::pair(~0u, ~0u);
    };
    for (auto&& [k, v] : *t_) {
      if (std::find(known.begin(), known.end(), k.str()) != known.end()) continue;
      if (!first || position(k, v) < position(*first, *first_node)) first = &k, first_node = &v;
    }
    if (!first) return;
    std::string what = "unknown key";
    std::size_t best = std::max<std::size_t>(2, first->str().size() / 3) + 1;
    for (const std::string_view c : known)
      if (const std::size_t d = edit_distance(first->str(), c); d < best)
        best = d, what = fmt::format("unknown key, did you mean '{}'?", c);
    // The key's own position where toml++ has one: for a [table] that is its header line.
    const std::string loc = has_source(first->source()) ? place(first->source()) : where(first_node);
    throw InputError(fmt::format("{}: {}: {} (got {})", loc, key(first->str()), what, render(*first_node)));
  }

  toml::node* find(std::string_view k) const { return t_->get(k); }
  toml::node& require(std::string_view k, std::string_view what = "missing required key") const
  {
    if (toml::node* n = t_->get(k)) return *n;
    missing(k, what);
  }
  template <class T>
  toml::node& with_default(std::string_view k, T def)
  {
    if (toml::node* n = t_->get(k)) return *n;
    return t_->insert(k, std::move(def)).first->second;
  }

  // Typed readers of a node that belongs to key k (k may carry an element index: "dx[3]").
  double number(const toml::node& n, std::string_view k, Range r = any, std::string_view label = {}) const
  {
    const std::string prefix = label.empty() ? std::string() : std::string(label) + " ";
    if (!n.is_number()) bad(n, k, prefix + "must be a number");
    const double v = to_double(n);
    if (!std::isfinite(v)) bad(n, k, prefix + "must be a finite number");
    if (!r.contains(v)) bad(n, k, prefix + r.describe());
    return v;
  }
  std::int64_t integer64(const toml::node& n, std::string_view k, Range r = any) const
  {
    if (!n.is_integer()) bad(n, k, "must be an integer");
    const std::int64_t v = n.as_integer()->get();
    if (!r.contains(double(v))) bad(n, k, r.describe());
    return v;
  }
  int integer(const toml::node& n, std::string_view k, Range r = any) const
  {
    const std::int64_t v = integer64(n, k, r);
    if (v > std::numeric_limits<int>::max() || v < std::numeric_limits<int>::min()) bad(n, k, "is too large");
    return int(v);
  }
  std::string text(const toml::node& n, std::string_view k) const
  {
    if (!n.is_string()) bad(n, k, "must be a string");
    return n.as_string()->get();
  }
  std::string choice(const toml::node& n, std::string_view k, std::initializer_list<std::string_view> options) const
  {
    const std::string s = text(n, k);
    if (std::find(options.begin(), options.end(), s) != options.end()) return s;
    std::string list;
    for (const std::string_view o : options) list += (list.empty() ? "" : ", ") + quote_literal(o);
    bad(n, k, options.size() == 1 ? "must be " + list : "must be one of " + list);
  }

  // Required (no default) and defaulted forms.
  double number(std::string_view k, Range r = any) { return number(require(k), k, r); }
  double number(std::string_view k, double def, Range r) { return number(with_default(k, def), k, r); }
  std::optional<double> opt_number(std::string_view k, Range r = any)
  {
    if (const toml::node* n = find(k)) return number(*n, k, r);
    return std::nullopt;
  }
  int integer(std::string_view k, Range r) { return integer(require(k), k, r); }
  int integer(std::string_view k, std::int64_t def, Range r) { return integer(with_default(k, def), k, r); }
  std::string text(std::string_view k) { return text(require(k), k); }
  std::string text(std::string_view k, std::string def) { return text(with_default(k, std::move(def)), k); }
  std::string choice(std::string_view k, std::initializer_list<std::string_view> options)
  {
    return choice(require(k), k, options);
  }
  std::string choice(std::string_view k, std::string def, std::initializer_list<std::string_view> options)
  {
    return choice(with_default(k, std::move(def)), k, options);
  }
  bool flag(std::string_view k, bool def)
  {
    const toml::node& n = with_default(k, def);
    if (!n.is_boolean()) bad(n, k, "must be true or false");
    return n.as_boolean()->get();
  }
  // A sub-table; an optional one that is absent is created so its defaults can be filled in.
  Section sub(std::string_view k, bool required)
  {
    toml::node& n = required ? require(k, "missing required table") : with_default(k, toml::table{});
    if (!n.is_table()) bad(n, k, "must be a table");
    return Section(*deck_, *n.as_table(), join(k));
  }

 private:
  const Deck* deck_;
  toml::table* t_;
  std::string path_, suffix_;
};

std::string non_empty(const Section& s, std::string_view k, std::string v)
{
  if (v.empty()) s.bad(s.require(k), k, "must not be empty");
  return v;
}

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
  // Cell indices are 32-bit throughout the solver.
  if (const std::int64_t n = std::int64_t(s.nx) * s.ny * s.nz; n > std::numeric_limits<std::int32_t>::max())
    g.fail(g.find("nz"), "", fmt::format("nx * ny * nz = {} cells is more than the supported 2^31 - 1", n),
           std::nullopt);
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

std::vector<double> read_lognormal(Section& p, const GridSpec& g)
{
  p.only({"mean_log", "std_log", "correlation_length", "seed"});
  const double mean_log = p.number("mean_log");
  const double std_log = p.number("std_log", at_least(0));
  const double corr = p.number("correlation_length", 1.0, at_least(0));
  const std::int64_t seed = p.integer64(p.require("seed"), "seed", at_least(0));
  return physics::lognormal_field(g.nx, g.ny, g.nz, mean_log, std_log, corr, static_cast<unsigned long long>(seed));
}

// A property (see inputs/README.md) as one value per cell in natural order, checked against r.
std::vector<double> read_property(Section& rock, std::string_view k, const GridSpec& g, Range r)
{
  const std::size_t layer = std::size_t(g.nx) * g.ny, n = layer * g.nz;
  toml::node& node = rock.require(k);
  if (node.is_number()) return std::vector<double>(n, rock.number(node, k, r));
  if (const toml::array* a = node.as_array()) {
    if (a->size() != std::size_t(g.nz))
      rock.bad(node, k, fmt::format("must have nz = {} values, one per layer (has {})", g.nz, a->size()));
    std::vector<double> v(n);
    for (std::size_t z = 0; z < a->size(); ++z)
      std::fill_n(v.begin() + std::ptrdiff_t(z * layer), layer, rock.number((*a)[z], fmt::format("{}[{}]", k, z), r));
    return v;
  }
  toml::table* t = node.as_table();
  if (!t)
    rock.bad(node, k, "must be a number, an array of nz numbers, an inline table {file, dataset} or "
                      "{mean_log, std_log, correlation_length, seed}");
  Section p(rock.deck(), *t, rock.join(k));
  const bool from_file = t->contains("file") || t->contains("dataset");
  std::vector<double> v = from_file ? read_property_file(p, g) : read_lognormal(p, g);
  for (std::size_t c = 0; c < n; ++c)
    if (!std::isfinite(v[c]) || !r.contains(v[c]))
      rock.fail(&node, k,
                fmt::format("cell ({}, {}, {}) {}", c % g.nx + 1, c / g.nx % g.ny + 1, c / layer + 1,
                            std::isfinite(v[c]) ? r.describe() : "must be finite"),
                fmt::format("{}", v[c]));
  return v;
}

RockSpec read_rock(Section r, const GridSpec& g)
{
  r.only({"porosity", "permeability", "kx", "ky", "kz", "compressibility", "reference_pressure"});
  RockSpec s;
  s.porosity = read_property(r, "porosity", g, unit_interval);
  if (std::all_of(s.porosity.begin(), s.porosity.end(), [](double p) { return p == 0.0; }))
    r.bad(r.require("porosity"), "porosity", "every cell has porosity 0, so no cell is active");
  if (const toml::node* perm = r.find("permeability")) {
    for (const std::string_view k : {"kx", "ky", "kz"})
      if (const toml::node* n = r.find(k))
        r.bad(*n, k, fmt::format("cannot be combined with rock.permeability ({})", place(perm->source())));
    s.kx = read_property(r, "permeability", g, at_least(0));
    s.ky = s.kz = s.kx;
  } else {
    r.require("kx", "missing required key (give kx or permeability)");
    s.kx = read_property(r, "kx", g, at_least(0));
    for (auto [k, field] : {std::pair{"ky", &s.ky}, std::pair{"kz", &s.kz}}) {
      if (r.find(k)) {
        *field = read_property(r, k, g, at_least(0));
      } else {
        r.find("kx")->visit([&](auto&& x) { r.table().insert(k, x); });  // a copy: the default is kx
        *field = s.kx;
      }
    }
  }
  for (auto* k : {&s.kx, &s.ky, &s.kz})
    for (double& v : *k) v *= units::millidarcy;
  s.compressibility = r.number("compressibility", 0.0, at_least(0)) * units::per_bar;
  s.reference_pressure = r.number("reference_pressure", 1.01325, any) * units::bar;
  return s;
}

physics::PhaseSpec read_phase(Section p)
{
  p.only({"surface_density", "viscosity", "fvf", "compressibility", "reference_pressure"});
  physics::PhaseSpec s;
  s.surface_density = p.number("surface_density", above(0));
  s.viscosity = p.number("viscosity", above(0)) * units::centipoise;
  s.fvf_ref = p.number("fvf", 1.0, above(0));
  s.compressibility = p.number("compressibility", 0.0, at_least(0)) * units::per_bar;
  s.reference_pressure = p.number("reference_pressure", 1.01325, any) * units::bar;
  return s;
}

physics::RelpermSpec read_relperm(Section r)
{
  static constexpr std::string_view corey[] = {"swc", "sor", "nw", "no", "krw_max", "kro_max"};
  r.only({"type", "swc", "sor", "nw", "no", "krw_max", "kro_max", "table"});
  physics::RelpermSpec s;
  if (r.choice("type", "corey", {"corey", "table"}) == "corey") {
    if (const toml::node* n = r.find("table")) r.bad(*n, "table", "is only allowed with type = \"table\"");
    s.swc = r.number("swc", 0.0, between(0, 1, false, true));
    s.sor = r.number("sor", 0.0, between(0, 1, false, true));
    if (s.swc + s.sor >= 1.0) {
      const std::string_view k = r.given("sor") ? "sor" : "swc";
      r.bad(r.require(k), k, fmt::format("swc + sor must be < 1 (swc = {}, sor = {})", s.swc, s.sor));
    }
    s.nw = r.number("nw", 2.0, at_least(1));
    s.no = r.number("no", 2.0, at_least(1));
    s.krw_max = r.number("krw_max", 1.0, between(0, 1, true, false));
    s.kro_max = r.number("kro_max", 1.0, between(0, 1, true, false));
    return s;
  }
  s.kind = physics::RelpermSpec::Kind::table;
  for (const std::string_view k : corey)
    if (const toml::node* n = r.find(k)) r.bad(*n, k, "is a Corey parameter, not allowed with type = \"table\"");
  const toml::node& t = r.require("table", "missing required key (for type = \"table\")");
  const toml::array* rows = t.as_array();
  if (!rows) r.bad(t, "table", "must be an array of [S_w, k_rw, k_ro, P_cow] rows");
  if (rows->size() < 2) r.bad(t, "table", "must have at least 2 rows");
  for (std::size_t i = 0; i < rows->size(); ++i) {
    const toml::node& row = (*rows)[i];
    const std::string k = fmt::format("table[{}]", i);
    if (!row.is_array() || row.as_array()->size() != 4)
      r.bad(row, k, "must be a row of 4 numbers [S_w, k_rw, k_ro, P_cow]");
    const toml::array& a = *row.as_array();
    const double sw = r.number(a[0], k, unit_interval, "S_w");
    if (i > 0 && sw <= s.table[s.table.size() - 4])
      r.bad(a[0], k, fmt::format("S_w must be strictly increasing (previous row has {})", s.table[s.table.size() - 4]));
    const double krw = r.number(a[1], k, unit_interval, "k_rw"), kro = r.number(a[2], k, unit_interval, "k_ro");
    s.table.insert(s.table.end(), {sw, krw, kro, r.number(a[3], k, any, "P_cow") * units::bar});
  }
  return s;
}

physics::FluidSpec read_fluid(Section f)
{
  f.only({"water", "oil", "relperm"});
  physics::FluidSpec s;
  s.water = read_phase(f.sub("water", true));
  s.oil = read_phase(f.sub("oil", true));
  s.relperm = read_relperm(f.sub("relperm", false));
  return s;
}

physics::InitialSpec read_initial(Section i)
{
  i.only({"pressure", "datum_depth", "sw"});
  physics::InitialSpec s;
  s.pressure = i.number("pressure", above(0)) * units::bar;
  if (const auto d = i.opt_number("datum_depth")) s.hydrostatic = true, s.datum_depth = *d;
  s.sw = i.number("sw", unit_interval);
  return s;
}

physics::WellSpec read_well(Section& w, const GridSpec& g)
{
  w.only({"name", "type", "i", "j", "k_top", "k_bottom", "control", "rate", "rate_target", "bhp", "radius", "skin",
          "well_index", "ref_depth"});
  physics::WellSpec s;
  s.name = non_empty(w, "name", w.text("name"));
  const bool injector = w.choice("type", {"injector", "producer"}) == "injector";
  s.kind = injector ? physics::WellKind::injector : physics::WellKind::producer;
  s.i = w.integer("i", between(1, g.nx)) - 1;
  s.j = w.integer("j", between(1, g.ny)) - 1;
  s.k_top = w.integer("k_top", 1, between(1, g.nz)) - 1;
  s.k_bottom = w.integer("k_bottom", g.nz, between(1, g.nz)) - 1;
  if (s.k_bottom < s.k_top)
    w.bad(w.require("k_bottom"), "k_bottom", fmt::format("must be >= k_top = {}", s.k_top + 1));
  const bool rate = w.choice("control", {"rate", "bhp"}) == "rate";
  s.control = rate ? physics::WellControlMode::rate : physics::WellControlMode::bhp;
  if (rate) w.require("rate", "missing required key (for control = \"rate\")");
  s.rate = w.opt_number("rate", above(0)).value_or(0.0) * units::m3_per_day;
  const std::string target = w.choice("rate_target", injector ? "water" : "liquid", {"water", "oil", "liquid"});
  if (injector && target != "water")
    w.bad(w.require("rate_target"), "rate_target", "must be \"water\" for an injector (it injects water)");
  s.target = target == "water" ? physics::RateTarget::water
             : target == "oil" ? physics::RateTarget::oil
                               : physics::RateTarget::liquid;
  s.bhp = w.number("bhp", above(0)) * units::bar;
  s.radius = w.number("radius", 0.1, above(0));
  s.skin = w.number("skin", 0.0, any);
  if (const toml::node* n = w.find("well_index")) {
    const std::size_t layers = std::size_t(s.k_bottom - s.k_top + 1);
    const toml::array* a = n->as_array();
    if (!a) w.bad(*n, "well_index", "must be an array of numbers, one per completed layer");
    if (a->size() != layers)
      w.bad(*n, "well_index", fmt::format("must have k_bottom - k_top + 1 = {} values (has {})", layers, a->size()));
    for (std::size_t l = 0; l < layers; ++l)
      s.well_index.push_back(w.number((*a)[l], fmt::format("well_index[{}]", l), at_least(0)) * units::millidarcy);
  }
  s.ref_depth = w.opt_number("ref_depth");
  return s;
}

std::vector<physics::WellSpec> read_wells(Section& top, const GridSpec& g, const RockSpec& rock)
{
  toml::node* node = top.find("wells");
  if (!node) return {};
  toml::array* a = node->as_array();
  if (!a) top.bad(*node, "wells", "must be an array of tables ([[wells]])");
  std::vector<physics::WellSpec> wells;
  for (std::size_t n = 0; n < a->size(); ++n) {
    const std::string label = fmt::format("wells[{}]", n);
    toml::table* t = (*a)[n].as_table();
    if (!t) top.bad((*a)[n], label, "must be a table");
    const auto name = (*t)["name"].value<std::string>();
    Section w(top.deck(), *t, label, name ? fmt::format(" (well '{}')", *name) : "");
    const physics::WellSpec s = read_well(w, g);
    for (std::size_t m = 0; m < n; ++m) {
      const physics::WellSpec& o = wells[m];
      if (o.name == s.name)
        w.bad(w.require("name"), "name", fmt::format("duplicate well name, also used by wells[{}]", m));
      if (o.i == s.i && o.j == s.j && std::max(o.k_top, s.k_top) <= std::min(o.k_bottom, s.k_bottom))
        w.fail(nullptr, "",
               fmt::format("completes cell ({}, {}, {}), which wells[{}] (well '{}') also completes", s.i + 1, s.j + 1,
                           std::max(o.k_top, s.k_top) + 1, m, o.name),
               std::nullopt);
    }
    bool active = false;
    for (int k = s.k_top; k <= s.k_bottom; ++k)
      active = active || rock.porosity[std::size_t(s.i) + std::size_t(g.nx) * (s.j + std::size_t(g.ny) * k)] > 0.0;
    if (!active) w.fail(nullptr, "", "has no active completion (every completed cell has porosity 0)", std::nullopt);
    wells.push_back(s);
  }
  return wells;
}

ScheduleConfig read_schedule(Section s)
{
  s.only({"report_times", "end_time", "report_interval", "dt_initial", "dt_max", "dt_min"});
  ScheduleConfig c;
  const toml::node* times = s.find("report_times");
  const toml::node* end = s.find("end_time");
  if (times && end) s.bad(*end, "end_time", "cannot be combined with schedule.report_times");
  if (times) {
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
    if (!end) s.missing("report_times", "missing required key (give report_times or end_time)");
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

void read_solver(Section s, NewtonConfig& newton, LinearConfig& linear)
{
  s.only({"newton", "linear"});
  Section n = s.sub("newton", false);
  n.only({"max_iterations", "tol_cnv", "tol_mb", "max_dsw", "max_dp_rel", "cut_factor", "growth_factor"});
  newton.max_iterations = n.integer("max_iterations", 12, at_least(1));
  newton.tol_cnv = n.number("tol_cnv", 1e-3, above(0));
  newton.tol_mb = n.number("tol_mb", 1e-7, above(0));
  newton.max_dsw = n.number("max_dsw", 0.2, between(0, 1, true, false));
  newton.max_dp_rel = n.number("max_dp_rel", 0.3, above(0));
  newton.cut_factor = n.number("cut_factor", 0.5, between(0, 1, true, true));
  newton.growth_factor = n.number("growth_factor", 2.0, at_least(1));

  Section l = s.sub("linear", false);
  l.only({"method", "tolerance", "tolerance_reference", "forcing", "eta_min", "eta_max", "eta_initial",
          "max_iterations", "restart", "idr_s", "preconditioner"});
  // Keys that apply to another method or forcing are an inconsistency, not something to ignore.
  auto reject = [&](std::initializer_list<const char*> keys, std::string_view what) {
    for (const char* k : keys)
      if (const toml::node* n = l.find(k)) l.bad(*n, k, fmt::format("only applies to {}", what));
  };
  const std::string method = l.choice("method", "bicgstab", {"bicgstab", "gmres", "fgmres", "idr", "cg"});
  linear.krylov.method = method == "gmres"    ? KrylovMethod::gmres
                         : method == "fgmres" ? KrylovMethod::fgmres
                         : method == "idr"    ? KrylovMethod::idr
                         : method == "cg"     ? KrylovMethod::cg
                                              : KrylovMethod::bicgstab;
  const bool restarted = method == "gmres" || method == "fgmres";
  if (!restarted) reject({"restart"}, "method = \"gmres\" or \"fgmres\"");
  if (method != "idr") reject({"idr_s"}, "method = \"idr\"");
  if (restarted) linear.krylov.restart = l.integer("restart", 30, at_least(1));
  if (method == "idr") linear.krylov.idr_s = l.integer("idr_s", 4, between(1, max_idr_s));
  linear.krylov.max_iterations = l.integer("max_iterations", 500, at_least(1));
  linear.krylov.reference = l.choice("tolerance_reference", "initial_residual", {"initial_residual", "rhs"}) == "rhs"
                                ? ToleranceReference::rhs
                                : ToleranceReference::initial_residual;

  const bool ew = l.choice("forcing", "fixed", {"fixed", "eisenstat_walker"}) == "eisenstat_walker";
  auto& fc = linear.forcing;
  fc.kind = ew ? ForcingKind::eisenstat_walker : ForcingKind::fixed;
  if (!ew) {
    reject({"eta_min", "eta_max", "eta_initial"}, "forcing = \"eisenstat_walker\"");
    linear.krylov.rel_tol = l.number("tolerance", 1e-4, between(0, 1, true, true));
  } else {
    // The forcing terms replace the fixed tolerance; KrylovConfig::rel_tol is set per solve.
    reject({"tolerance"}, "forcing = \"fixed\" (eisenstat_walker chooses it per solve within [eta_min, eta_max])");
    const Range open_unit = between(0, 1, true, true);
    fc.eta_min = l.number("eta_min", 1e-6, open_unit);
    fc.eta_max = l.number("eta_max", 0.1, open_unit);
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
  p.only({"type", "factorization", "max_block_size", "trisolve", "isai_power", "isai_view", "sweeps"});
  const std::string type = p.choice("type", "block_jacobi", {"block_jacobi", "jacobi", "ilu0", "isai", "none"});
  // Point Jacobi is block-Jacobi on 1x1 blocks (the scalar diagonal), with no choice to make.
  linear.preconditioner = type == "none"   ? PreconditionerType::none
                          : type == "ilu0" ? PreconditionerType::ilu0
                          : type == "isai" ? PreconditionerType::isai
                                           : PreconditionerType::block_jacobi;
  // Keys of another type are an inconsistency, not something to ignore silently. Only the keys
  // of the chosen type are read (and get their defaults in the resolved deck).
  auto only_for = [&](std::initializer_list<const char*> keys, bool applies, std::string_view what) {
    for (const char* k : keys)
      if (const toml::node* n = p.table().get(k); !applies && n)  // from the file or --set
        p.bad(*n, k, fmt::format("only applies to {}", what));
  };
  auto view = [&](IsaiView dflt) {
    const std::string v = p.choice("isai_view", std::string(to_string(dflt)), {"scalar", "block"});
    return v == "block" ? IsaiView::block : IsaiView::scalar;
  };
  only_for({"factorization", "max_block_size"}, type == "block_jacobi", "type = \"block_jacobi\"");
  only_for({"trisolve", "sweeps"}, type == "ilu0", "type = \"ilu0\"");
  only_for({"isai_power", "isai_view"}, type == "ilu0" || type == "isai", "type = \"ilu0\" or \"isai\"");
  if (type == "block_jacobi") {
    auto& bj = linear.preconditioner_options.block_jacobi;
    const std::string f =
        p.choice("factorization", "gauss_jordan", {"gauss_jordan", "gauss_huard", "gauss_huard_t", "lu"});
    bj.factorization = f == "lu"              ? BlockFactorization::lu
                       : f == "gauss_huard"   ? BlockFactorization::gauss_huard
                       : f == "gauss_huard_t" ? BlockFactorization::gauss_huard_t
                                              : BlockFactorization::gauss_jordan;
    bj.max_block_size = p.integer("max_block_size", 0, between(0, max_block_rows(bj.factorization)));
  }
  if (type == "jacobi") linear.preconditioner_options.block_jacobi.max_block_size = 1;
  if (type == "ilu0") {
    auto& ilu = linear.preconditioner_options.ilu0;
    ilu.trisolve = p.choice("trisolve", "exact", {"exact", "isai"}) == "isai" ? TriangularSolve::isai
                                                                              : TriangularSolve::exact;
    only_for({"isai_power", "isai_view", "sweeps"}, ilu.trisolve == TriangularSolve::isai, "trisolve = \"isai\"");
    if (ilu.trisolve == TriangularSolve::isai) {
      ilu.isai_power = p.integer("isai_power", 1, between(1, max_isai_power));
      ilu.view = view(Ilu0Options{}.view);
      ilu.sweeps = p.integer("sweeps", 0, between(0, max_isai_sweeps));
    }
  }
  if (type == "isai") {
    auto& isai = linear.preconditioner_options.isai;
    isai.power = p.integer("isai_power", 1, between(1, max_isai_power));
    isai.view = view(IsaiOptions{}.view);
  }
}

#if BLOCKRES_HAVE_VTK
constexpr bool kVtkBuilt = true;
#else
constexpr bool kVtkBuilt = false;
#endif

OutputConfig read_output(Section o, const std::string& deck_path)
{
  o.only({"directory", "name", "vtk"});
  OutputConfig c;
  c.directory = non_empty(o, "directory", o.text("directory", "output"));
  c.name = non_empty(o, "name", o.text("name", fs::path(deck_path).stem().string()));
  if (c.name.find('/') != std::string::npos) o.bad(o.require("name"), "name", "must be a file name, not a path");
  // On by default where this build can write VTK. Asked for in a build without it, it is an error
  // rather than a silent no-op: the user expects files that would never appear.
  c.vtk = o.flag("vtk", kVtkBuilt);
  if (c.vtk && !kVtkBuilt)
    o.bad(o.require("vtk"), "vtk",
          "VTK output is not available: this blockres was built without VTK (BLOCKRES_VTK=OFF or VTK not found)");
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
  top.only({"title", "model", "grid", "rock", "fluid", "initial", "wells", "schedule", "solver", "output"});
  top.text("title", "");
  Section model = top.sub("model", true);
  model.only({"type"});
  cfg.model = model.choice("type", {"oil_water"});
  cfg.grid = read_grid(top.sub("grid", true));
  cfg.rock = read_rock(top.sub("rock", true), cfg.grid);
  cfg.fluid = read_fluid(top.sub("fluid", true));
  cfg.initial = read_initial(top.sub("initial", true));
  cfg.wells = read_wells(top, cfg.grid, cfg.rock);
  cfg.schedule = read_schedule(top.sub("schedule", true));
  read_solver(top.sub("solver", false), cfg.newton, cfg.linear);
  cfg.output = read_output(top.sub("output", false), path);
  cfg.resolved_toml = to_toml(root);
  return cfg;
}

}  // namespace blockres
