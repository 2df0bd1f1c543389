// The deck's TOML sections as typed, range-checked readers that report errors with the file, line
// and dotted key: the bottom input library (toml++ and fmt only), used by the run deck reader
// (miniapp/io/deck.cpp), the models' deck readers (physics/<model>/) and the preconditioners'
// option readers (linalg/preconditioners/<name>/).
#pragma once

#include "input/error.hpp"
#include "input/names.hpp"
#include "input/quote.hpp"

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
  if (const auto* f = n.as_floating_point()) {  // as written: 0.9, not TOML++'s round-trip 0.90000000000000002
    std::string s = fmt::format("{}", f->get());
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // a float stays one (2.0; inf and nan as they are)
    return s;
  }
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
    return choice(n, k, std::span<const std::string_view>(options.begin(), options.size()));
  }
  std::string choice(const toml::node& n, std::string_view k, std::span<const std::string_view> options) const
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
  std::string choice(std::string_view k, std::string def, std::span<const std::string_view> options)
  {
    return choice(with_default(k, std::move(def)), k, options);
  }
  // An enum value by its name in the enum's table (input/names.hpp); the default filled in by name.
  template <class E, std::size_t N>
  E choice(std::string_view k, E def, const NameTable<E, N>& names)
  {
    return *names.find(choice(k, std::string(names.name(def)), names.names()));
  }
  // Keys that apply only to another choice (another type, method, ...) are an inconsistency, not
  // something to ignore: the first of `keys` present (from the file or --set) is an error.
  void reject(std::initializer_list<std::string_view> keys, std::string_view what) const
  {
    for (const std::string_view k : keys)
      if (const toml::node* n = find(k)) bad(*n, k, fmt::format("only applies to {}", what));
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

}  // namespace blockres::deck
