// Deck reader of the multicomponent model: [components], [initial] and the model's [[wells]] keys
// (inputs/README.md, "Model multicomponent"), validated and converted to SI.
#include "physics/well_deck.hpp"
#include "physics/model_registry.hpp"
#include "physics/multicomponent/multicomponent_model.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace blockres::physics::multicomponent {

namespace {

using deck::above;
using deck::any;
using deck::at_least;
using deck::Range;
using deck::Section;
using deck::unit_interval;

// Tolerance of "sums to 1" for compositions and of "columns sum to 0" (relative to max |K|) for K.
constexpr double composition_tolerance = 1e-10;
constexpr double reaction_tolerance = 1e-10;

bool is_identifier(const std::string& s)
{
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (s.empty() || !alpha(s[0])) return false;
  for (const char c : s)
    if (!alpha(c) && !digit(c) && c != '_') return false;
  return true;
}

const toml::array& array_of(const Section& s, const toml::node& n, std::string_view k, std::size_t size,
                            std::string_view what)
{
  const toml::array* a = n.as_array();
  if (!a) s.bad(n, k, fmt::format("must be {}", what));
  if (a->size() != size) s.bad(n, k, fmt::format("must have {} values, one per component (has {})", size, a->size()));
  return *a;
}

// A number for every component or an array of nc numbers; `def` when absent (nullopt: required).
std::vector<double> per_component(Section& s, std::string_view k, int nc, Range r, std::optional<double> def,
                                  double scale)
{
  const toml::node* n = s.find(k);
  if (!n && !def) s.missing(k);
  if (!n || n->is_number()) return std::vector<double>(std::size_t(nc), (def ? s.number(k, *def, r) : s.number(k, r)) * scale);
  const toml::array& a = array_of(s, *n, k, std::size_t(nc), "a number or an array of numbers, one per component");
  std::vector<double> v;
  for (int c = 0; c < nc; ++c) v.push_back(s.number(a[std::size_t(c)], fmt::format("{}[{}]", k, c), r) * scale);
  return v;
}

// nc mass fractions in [0, 1] summing to 1 within composition_tolerance.
std::vector<double> composition(const Section& s, const toml::node& n, const std::string& k, int nc)
{
  const toml::array& a = array_of(s, n, k, std::size_t(nc), "an array of mass fractions, one per component");
  std::vector<double> v;
  double sum = 0.0;
  for (int c = 0; c < nc; ++c) {
    v.push_back(s.number(a[std::size_t(c)], fmt::format("{}[{}]", k, c), unit_interval));
    sum += v.back();
  }
  if (!(std::abs(sum - 1.0) <= composition_tolerance))
    s.bad(n, k, fmt::format("mass fractions must sum to 1 within {:g} (they sum to {:.17g})", composition_tolerance, sum));
  return v;
}

ComponentsSpec read_components(Section c, std::vector<std::string>& notes)
{
  c.only({"names", "density", "compressibility", "viscosity", "reference_pressure", "diffusion", "reactions"});
  ComponentsSpec s;
  const toml::node& names = c.require("names");
  const toml::array* a = names.as_array();
  if (!a) c.bad(names, "names", "must be an array of component names");
  if (a->empty() || a->size() > std::size_t(max_components))
    c.bad(names, "names", fmt::format("must name 1 to {} components (has {})", max_components, a->size()));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const std::string k = fmt::format("names[{}]", i);
    const std::string name = c.text((*a)[i], k);
    if (!is_identifier(name))
      c.bad((*a)[i], k, "must be an identifier ([A-Za-z][A-Za-z0-9_]*): it names fields such as x_<name>");
    if (!seen.insert(name).second) c.bad((*a)[i], k, "duplicate component name");
    s.names.push_back(name);
  }
  const int nc = s.nc();
  s.density = per_component(c, "density", nc, above(0), std::nullopt, 1.0);
  s.compressibility = per_component(c, "compressibility", nc, at_least(0), 0.0, units::per_bar);
  s.viscosity = per_component(c, "viscosity", nc, above(0), std::nullopt, units::centipoise);
  if (!c.given("reference_pressure") &&
      std::any_of(s.compressibility.begin(), s.compressibility.end(), [](double v) { return v > 0.0; }))
    notes.push_back(physics::default_reference_pressure_note(c.key("reference_pressure"), "the component densities"));
  s.reference_pressure = c.number("reference_pressure", 1.01325, any) * units::bar;
  s.diffusion = c.number("diffusion", 0.0, at_least(0)) / units::day;
  s.reactions.assign(std::size_t(nc) * nc, 0.0);
  if (const toml::node* n = c.find("reactions")) {
    const toml::array* rows = n->as_array();
    if (!rows) c.bad(*n, "reactions", "must be an array of nc rows of nc rates (K[k][l], 1/day)");
    if (rows->size() != std::size_t(nc))
      c.bad(*n, "reactions", fmt::format("must have {} rows, one per component (has {})", nc, rows->size()));
    std::vector<const toml::node*> node(static_cast<std::size_t>(nc) * nc);
    double big = 0.0;
    for (int k = 0; k < nc; ++k) {
      const std::string rk = fmt::format("reactions[{}]", k);
      const toml::array* row = (*rows)[std::size_t(k)].as_array();
      if (!row) c.bad((*rows)[std::size_t(k)], rk, "must be an array of nc rates [1/day]");
      if (row->size() != std::size_t(nc))
        c.bad((*rows)[std::size_t(k)], rk, fmt::format("must have {} values, one per component (has {})", nc, row->size()));
      for (int l = 0; l < nc; ++l) {
        const toml::node& e = (*row)[std::size_t(l)];
        const std::string key = fmt::format("reactions[{}][{}]", k, l);
        const double v = c.number(e, key, any);
        if (k != l && v < 0.0)
          c.bad(e, key, fmt::format("off-diagonal rates must be >= 0 (K[k][l] is the rate from component '{}' to '{}')",
                                    s.names[l], s.names[k]));
        s.reactions[std::size_t(k) * nc + l] = v;
        node[std::size_t(k) * nc + l] = &e;
        big = std::max(big, std::abs(v));
      }
    }
    for (int l = 0; l < nc; ++l) {
      double sum = 0.0;
      for (int k = 0; k < nc; ++k) sum += s.reactions[std::size_t(k) * nc + l];
      if (std::abs(sum) > reaction_tolerance * big)
        c.bad(*node[std::size_t(l) * nc + l], fmt::format("reactions[{}][{}]", l, l),
              fmt::format("column {} of the rate matrix sums to {:.6g} 1/day, not 0 (mass conservation: the diagonal "
                          "must be minus the sum of the column's off-diagonal rates, within {:g} max|K|)",
                          l, sum, reaction_tolerance));
    }
    for (double& v : s.reactions) v /= units::day;
  }
  return s;
}

MulticomponentInitial read_initial(Section i, int nc, const GridSpec& grid)
{
  i.only({"pressure", "datum_depth", "composition"});
  MulticomponentInitial s;
  s.pressure = i.number("pressure", above(0)) * units::bar;
  if (const auto d = i.opt_number("datum_depth")) s.hydrostatic = true, s.datum_depth = *d;
  const toml::node& n = i.require("composition");
  const toml::array* a = n.as_array();
  if (a && !a->empty() && (*a)[0].is_array()) {  // one row per layer
    if (a->size() != std::size_t(grid.nz))
      i.bad(n, "composition", fmt::format("per layer must have nz = {} rows (has {})", grid.nz, a->size()));
    for (std::size_t k = 0; k < a->size(); ++k)
      s.composition.push_back(composition(i, (*a)[k], fmt::format("composition[{}]", k), nc));
  } else {
    s.composition.push_back(composition(i, n, "composition", nc));
  }
  return s;
}

constexpr std::string_view well_keys[] = {"control", "rate", "bhp", "composition"};

}  // namespace

std::shared_ptr<const ModelInput> read_deck(deck::Section& top, const GridSpec& grid, const RockSpec& rock)
{
  auto in = std::make_shared<MulticomponentInput>();
  in->components = read_components(top.sub("components", true), in->notes);
  const int nc = in->components.nc();
  in->initial = read_initial(top.sub("initial", true), nc, grid);
  in->wells = deck::read_wells<MulticomponentWellSpec>(
      top, grid, rock, well_keys, [&](Section& w, MulticomponentWellSpec& s) {
        const bool injector = s.kind == WellKind::injector;
        const bool rate = w.choice("control", {"rate", "bhp"}) == "rate";
        s.control = rate ? WellControlMode::rate : WellControlMode::bhp;
        if (rate) w.require("rate", "missing required key (for control = \"rate\")");
        // A rate on a BHP-controlled well would be silently ignored: refused (bhp on a rate well
        // applies: it is the well's BHP limit).
        if (const toml::node* n = w.find("rate"); n && !rate)
          w.bad(*n, "rate",
                "does not apply to a well under control = \"bhp\" (set control = \"rate\" to control the rate)");
        s.rate = w.opt_number("rate", above(0)).value_or(0.0) / units::day;
        s.bhp = w.number("bhp", above(0)) * units::bar;
        if (injector) {
          s.composition = composition(w, w.require("composition", "missing required key (an injector's composition)"),
                                      "composition", nc);
        } else if (const toml::node* n = w.find("composition")) {
          w.bad(*n, "composition", "is only for injectors (a producer produces the cells' fluid)");
        }
      });
  return in;
}

}  // namespace blockres::physics::multicomponent
