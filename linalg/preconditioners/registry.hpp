// The registry of preconditioners: the one place that lists them. A preconditioner lives in its own
// folder (linalg/preconditioners/<name>/) with its Options struct (the only place its defaults
// live), read(deck::Section&, const Options& defaults) and make_preconditioner(ExecPtr, const
// Options&), and adds one line to registry.cpp; the deck, CPR's stages and the benches reach it by
// name through this header.
#pragma once

#include "linalg/executor.hpp"
#include "linalg/preconditioners/preconditioner.hpp"

#include <any>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace blockres::deck {
class Section;  // input/section.hpp
}

namespace blockres {

// A preconditioner chosen by its registry name, with that entry's options (Ilu0Options for "ilu0",
// ...): what a deck's preconditioner table resolves to and what CPR holds for each stage.
struct PreconditionerSpec {
  std::string type;
  std::any options;
};
// Same type and equal options (each Options struct compares with its defaulted operator==).
bool operator==(const PreconditionerSpec& a, const PreconditionerSpec& b);

// The entry's options; throws std::bad_any_cast when spec holds another entry's.
template <class Options>
const Options& options_as(const PreconditionerSpec& spec)
{
  return std::any_cast<const Options&>(spec.options);
}

struct PreconditionerEntry {
  std::string_view name;                   // the deck's type
  std::span<const std::string_view> keys;  // the deck keys it reads besides type
  bool cpr_stage = true;                   // may be a CPR stage (every preconditioner but CPR itself)
  // The folder's read(): fills its Options from a deck table, `defaults` (its Options) giving the
  // values of absent keys, which are filled into the table; throws InputError naming file:line:key.
  std::any (*read)(deck::Section& table, const std::any& defaults);
  std::unique_ptr<Preconditioner> (*create)(ExecPtr exec, const std::any& options);
  std::any (*defaults)();  // Options{}
  bool (*equal)(const std::any& a, const std::any& b);
};

std::span<const PreconditionerEntry> registered_preconditioners();
// nullptr when no preconditioner of that name is registered.
const PreconditionerEntry* find_preconditioner(std::string_view name);

// The entry's Options{}; throws std::invalid_argument for an unknown type.
PreconditionerSpec preconditioner_spec(std::string_view type);
// Throws std::invalid_argument for an unknown type or options of another entry.
std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const PreconditionerSpec& spec);

// Which preconditioners a table may name: every one, or the CPR stages.
enum class PreconditionerRole { solver, cpr_stage };

// Reads one preconditioner table ([solver.linear.preconditioner], or a CPR stage within it): the type
// among those the role allows, by default defaults[0].type; every key must be one of those
// preconditioners' (an unknown key is an error suggesting the closest) and one of the chosen type's
// (else an error naming the types it applies to); the chosen type's read() then takes the values of
// absent keys from the first spec of that type in `defaults`, else from its Options{}.
PreconditionerSpec read_preconditioner(deck::Section& table, std::span<const PreconditionerSpec> defaults,
                                       PreconditionerRole role);

}  // namespace blockres
