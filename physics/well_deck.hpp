// The [[wells]] keys every model shares, read through the deck's typed sections (input/section.hpp):
// geometry, completions and the checks across wells; a model adds its own control keys.
#pragma once

#include "input/section.hpp"
#include "physics/spec.hpp"
#include "physics/units.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace blockres::deck {

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
