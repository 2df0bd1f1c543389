// The deck's TOML sections as typed, range-checked readers that report errors with the file, line
// and dotted key (shared by miniapp/deck.cpp and the models' own deck readers, physics/<model>/).
#pragma once

#include "miniapp/deck.hpp"
#include "miniapp/quote.hpp"
#include "physics/spec.hpp"
#include "physics/units.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace blockres::deck {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr std::string_view kSetPrefix = "--set ";  // source path of nodes that came from an override

// ---- TOML text ---------------------------------------------------------------------------------

// The resolved deck: TOML++'s own formatter (keys sorted, floats printed to round-trip).
inline std::string to_toml(const toml::table& t)
{
  std::ostringstream os;
  os << toml::toml_formatter{t};
  return os.str();
}

// The offending value as it appears in a message: one line, cut short.
inline std::string render(const toml::node& n)
{
  std::ostringstream os;
  n.visit([&](auto&& v) { os << v; });
  std::string s = os.str();
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s.size() <= 80 ? s : s.substr(0, 76) + " ...";
}

// ---- Messages ------------------------------------------------------------------------------------

inline bool has_source(const toml::source_region& s) { return s.begin.line > 0 && s.path; }

inline std::string place(const toml::source_region& s)
{
  if (s.path->starts_with(kSetPrefix)) return *s.path;  // a line/column within "v = ..." means nothing
  return fmt::format("{}:{}:{}", *s.path, s.begin.line, s.begin.column);
}

inline std::size_t edit_distance(std::string_view a, std::string_view b)
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

inline double to_double(const toml::node& n)
{
  return n.is_integer() ? double(n.as_integer()->get()) : n.as_floating_point()->get();
}

struct Deck {
  std::string path;  // as given
  std::filesystem::path dir;      // relative property files live here
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
  void only(std::initializer_list<std::string_view> known) const { only(std::span<const std::string_view>(known.begin(), known.size())); }
  void only(std::span<const std::string_view> known) const
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

inline std::string non_empty(const Section& s, std::string_view k, std::string v)
{
  if (v.empty()) s.bad(s.require(k), k, "must not be empty");
  return v;
}

// ---- Wells ---------------------------------------------------------------------------------------

inline constexpr std::string_view well_geometry_keys[] = {"name", "type", "i", "j", "k_top", "k_bottom", "radius",
                                                          "skin", "well_index", "ref_depth"};

// The keys every model's wells share (inputs/README.md, [[wells]]): name, type, column, layer range,
// radius, skin, explicit well indices, BHP reference depth.
inline void read_well_geometry(Section& w, const physics::GridSpec& g, physics::WellGeometry& s)
{
  s.name = non_empty(w, "name", w.text("name"));
  const bool injector = w.choice("type", {"injector", "producer"}) == "injector";
  s.kind = injector ? physics::WellKind::injector : physics::WellKind::producer;
  s.i = w.integer("i", between(1, g.nx)) - 1;
  s.j = w.integer("j", between(1, g.ny)) - 1;
  s.k_top = w.integer("k_top", 1, between(1, g.nz)) - 1;
  s.k_bottom = w.integer("k_bottom", g.nz, between(1, g.nz)) - 1;
  if (s.k_bottom < s.k_top)
    w.bad(w.require("k_bottom"), "k_bottom", fmt::format("must be >= k_top = {}", s.k_top + 1));
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
}

// Reads the deck's [[wells]] array into W (derived from physics::WellGeometry): the shared keys
// by read_well_geometry, the model's own keys (`model_keys`) by read_controls(Section&, W&).
// Checks across wells: unique names, no cell completed twice, an active completion in each.
template <class W, class ReadControls>
std::vector<W> read_wells(Section& top, const physics::GridSpec& g, const physics::RockSpec& rock,
                          std::span<const std::string_view> model_keys, ReadControls&& read_controls)
{
  toml::node* node = top.find("wells");
  if (!node) return {};
  toml::array* a = node->as_array();
  if (!a) top.bad(*node, "wells", "must be an array of tables ([[wells]])");
  std::vector<std::string_view> known(std::begin(well_geometry_keys), std::end(well_geometry_keys));
  known.insert(known.end(), model_keys.begin(), model_keys.end());
  std::vector<W> wells;
  for (std::size_t n = 0; n < a->size(); ++n) {
    const std::string label = fmt::format("wells[{}]", n);
    toml::table* t = (*a)[n].as_table();
    if (!t) top.bad((*a)[n], label, "must be a table");
    const auto name = (*t)["name"].value<std::string>();
    Section w(top.deck(), *t, label, name ? fmt::format(" (well '{}')", *name) : "");
    w.only(known);
    W s;
    read_well_geometry(w, g, s);
    read_controls(w, s);
    for (std::size_t m = 0; m < n; ++m) {
      const W& o = wells[m];
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
    wells.push_back(std::move(s));
  }
  return wells;
}

}  // namespace blockres::deck
