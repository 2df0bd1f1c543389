// The registry of physics models: the one place that lists them. A model lives in its own folder
// (physics/<model>/) and adds one line to physics/model_registry.cpp; the deck loader, the time
// loop, the writers and `verify` reach it only through this entry and the Model interface.
#pragma once

#include "linalg/executor.hpp"
#include "linalg/preconditioners/default_solver.hpp"
#include "physics/grid.hpp"
#include "physics/model.hpp"
#include "physics/spec.hpp"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace blockres::deck {
class Section;  // input/section.hpp
}

namespace blockres::physics {

// A model's own deck input resolved to SI (fluid or components, initial state, wells, ...).
struct ModelInput {
  virtual ~ModelInput() = default;
  // Defaults worth a word in the run log (a reference pressure left at 1 atm where it matters);
  // the resolved deck shows their values.
  std::vector<std::string> notes;
  // The wells' geometry (a distributed run makes every cell a well completes a ghost cell of every rank, so that
  // each rank evaluates every well from the same state; issue 33).
  virtual std::vector<const WellGeometry*> well_geometries() const = 0;
};

// The log line for a reference pressure left at its default (issue 28 item 11): `key` the dotted
// key, `of_what` what it refers (pore volume, a phase's FVF, the component densities).
inline std::string default_reference_pressure_note(std::string_view key, std::string_view of_what)
{
  return std::string(key) + " not given: the default 1.01325 bar (1 atm) is the reference pressure of " +
         std::string(of_what) + " (set it to the pressure the data refer to)";
}

struct ModelEntry {
  std::string_view name;  // the deck's model.type
  // Top-level deck tables the model reads itself, besides title, model, grid, rock, schedule,
  // solver and output (e.g. "fluid", "initial", "wells").
  std::span<const std::string_view> sections;
  // Reads and validates those tables from the deck's top level; throws InputError naming
  // file:line:key (miniapp/io/deck.hpp).
  std::shared_ptr<const ModelInput> (*read_deck)(deck::Section& top, const GridSpec& grid, const RockSpec& rock);
  // Builds the model on `exec`; throws std::invalid_argument for input that only the grid can
  // reveal as inconsistent (e.g. a well without an active completion).
  std::unique_ptr<Model> (*create)(ExecPtr exec, const Grid& grid, const RockSpec& rock, bool gravity,
                                   const ModelInput& input);
  // The linear system the model makes from this input, as the default linear solver is chosen from
  // it (linalg/preconditioners/default_solver.hpp): block size, whether unknown 0 is a pressure, and
  // whether anything is compressible. The deck loader asks before it defaults [solver.linear].
  LinearSystemTraits (*linear_system)(const ModelInput& input, const RockSpec& rock);
};

std::span<const ModelEntry> registered_models();
// nullptr when no model of that name is registered (the deck reader, which names file and line).
const ModelEntry* find_model(std::string_view name);
// The model of that name; InputError naming the registered models when there is none. Everything
// past the deck reader (the time loop, the benches) looks a RunConfig's model up here.
const ModelEntry& model_entry(std::string_view name);

}  // namespace blockres::physics
