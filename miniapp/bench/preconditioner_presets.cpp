// The benches' preconditioner presets (label -> deck snippet) and their reading through the registry.
#include "miniapp/bench/preconditioner_presets.hpp"

#include "input/error.hpp"
#include "input/quote.hpp"
#include "input/section.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "miniapp/io/config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <iterator>
#include <sstream>
#include <utility>

namespace blockres::bench {

namespace {

// The one table. block_jacobi's factorisation is the deck's default, automatic: Gauss-Jordan inverses
// while the largest Jacobi block has at most 32 rows, LU above. The _isai presets use ISAI(1) (isai_power's
// default); ilu0_isai asks for the block view of the ISAI, which a scalar-view ILU(0) does not default to.
constexpr PreconditionerPreset presets[] = {
    {"none", R"(type = "none")"},
    {"jacobi", R"(type = "jacobi")"},
    {"block_jacobi", R"(type = "block_jacobi")"},
    {"block_jacobi_lu", R"(type = "block_jacobi", factorization = "lu")"},
    {"ilu0", R"(type = "ilu0")"},
    {"ilu0_isai", R"(type = "ilu0", trisolve = "isai", isai_view = "block")"},
    {"bilu0", R"(type = "ilu0", factor_view = "block")"},
    {"bilu0_isai", R"(type = "ilu0", factor_view = "block", trisolve = "isai")"},
    {"isai", R"(type = "isai")"},
};

std::string value_text(const toml::node& n);

// The keys of a table as one line, "type" first, then in the table's (sorted) order.
std::string keys_text(const toml::table& t)
{
  std::string out;
  auto add = [&](std::string_view k, const toml::node& v) {
    out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", k, value_text(v));
  };
  if (const toml::node* type = t.get("type")) add("type", *type);
  for (auto&& [k, v] : t)
    if (k.str() != "type") add(k.str(), v);
  return out;
}

// A value as TOML text: strings double-quoted, floats in their shortest round-trip form (still a float),
// tables inline.
std::string value_text(const toml::node& n)
{
  if (const auto* s = n.as_string()) return quote_literal(s->get());
  if (const auto* f = n.as_floating_point()) {
    std::string s = fmt::format("{}", f->get());
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // "1" would read back as an integer
    return s;
  }
  if (const auto* t = n.as_table()) return "{ " + keys_text(*t) + " }";
  if (const auto* a = n.as_array()) {
    std::string s;
    for (const toml::node& e : *a) s += (s.empty() ? "" : ", ") + value_text(e);
    return "[" + s + "]";
  }
  std::ostringstream os;  // integers, booleans, dates
  n.visit([&](auto&& v) { os << toml::toml_formatter{v}; });
  return os.str();
}

// Reads a [solver.linear.preconditioner] table as the deck does (miniapp/io/deck.cpp).
PreconditionerSpec read_as_deck(deck::Section& table)
{
  const PreconditionerSpec defaults[] = {LinearConfig{}.preconditioner};
  return read_preconditioner(table, defaults, PreconditionerRole::solver);
}

}  // namespace

std::span<const PreconditionerPreset> preconditioner_presets() { return presets; }

std::vector<std::string> preconditioner_preset_labels()
{
  std::vector<std::string> labels;
  for (const auto& p : presets) labels.emplace_back(p.label);
  return labels;
}

std::string preconditioner_preset_list()
{
  std::string list;
  for (const auto& p : presets) list += fmt::format("{}{}", list.empty() ? "" : ", ", p.label);
  return list;
}

BenchPreconditioner read_bench_preconditioner(std::string label, std::string_view snippet)
{
  // Parsed as an inline table, so that a snippet stays on one line; messages name the preset (the source)
  // and the deck key.
  const deck::Deck source{fmt::format("bench preconditioner {}", quote_literal(label)), {}};
  toml::table doc;
  try {
    doc = toml::parse(std::string_view(fmt::format("preconditioner = {{ {} }}", snippet)), std::string_view(source.path));
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}: {} (in {})", source.path, e.description(), snippet));
  }
  toml::table& t = *doc["preconditioner"].as_table();
  deck::Section section(source, t, "solver.linear.preconditioner");
  PreconditionerSpec spec = read_as_deck(section);
  return {std::move(label), keys_text(t), std::move(spec)};
}

BenchPreconditioner preconditioner_preset(std::string_view label)
{
  const auto p = std::find_if(std::begin(presets), std::end(presets), [&](const auto& q) { return q.label == label; });
  if (p == std::end(presets))
    throw InputError(fmt::format("unknown preconditioner preset {} (the presets: {})", quote_literal(label),
                                 preconditioner_preset_list()));
  return read_bench_preconditioner(std::string(label), p->snippet);
}

BenchPreconditioner deck_preconditioner(const RunConfig& cfg)
{
  BenchPreconditioner d{"deck", {}, cfg.linear.preconditioner};
  // The resolved deck has the table with its defaults filled in (absent only in a RunConfig not read from a
  // deck, which then has no text to show).
  if (!cfg.resolved_toml.empty()) {
    const toml::table doc = toml::parse(std::string_view(cfg.resolved_toml), std::string_view(cfg.deck_path));
    if (const toml::table* t = doc.at_path("solver.linear.preconditioner").as_table()) d.toml = keys_text(*t);
  }
  return d;
}

std::string ilu0_isai_snippet(int power, IsaiView view)
{
  return fmt::format(R"(type = "ilu0", trisolve = "isai", isai_power = {}, isai_view = "{}")", power, to_string(view));
}

std::string isai_snippet(int power, IsaiView view)
{
  return fmt::format(R"(type = "isai", isai_power = {}, isai_view = "{}")", power, to_string(view));
}

bool symmetric_preconditioner(const PreconditionerSpec& spec)
{
  if (spec.type == "none" || spec.type == "jacobi" || spec.type == "block_jacobi") return true;
  if (spec.type == "ilu0") {
    const Ilu0Options& o = options_as<Ilu0Options>(spec);
    return o.trisolve == TriangularSolve::exact && o.factor_sweeps == 0;
  }
  return false;
}

}  // namespace blockres::bench
