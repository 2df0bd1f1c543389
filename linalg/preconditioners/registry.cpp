// The list of preconditioners: one line per preconditioner (linalg/preconditioners/registry.hpp), and
// the deck reader of a preconditioner table on top of it.
#include "linalg/preconditioners/registry.hpp"

#include "input/section.hpp"
#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi_options.hpp"
#include "linalg/preconditioners/cpr/cpr_options.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/preconditioners/isai/isai_options.hpp"
#include "linalg/preconditioners/none/none.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace blockres {

namespace {

// The entry of the preconditioner whose options are Options: its folder's read(deck::Section&, const
// Options&) and make_preconditioner(ExecPtr, const Options&), chosen by the Options type.
template <class Options>
PreconditionerEntry entry(std::string_view name, std::span<const std::string_view> keys, bool cpr_stage = true)
{
  return {name,
          keys,
          cpr_stage,
          [](deck::Section& table, const std::any& defaults) -> std::any {
            return read(table, std::any_cast<const Options&>(defaults));
          },
          [](ExecPtr exec, const std::any& options) {
            return make_preconditioner(std::move(exec), std::any_cast<const Options&>(options));
          },
          [] { return std::any(Options{}); },
          [](const std::any& a, const std::any& b) {
            const Options* x = std::any_cast<Options>(&a);
            const Options* y = std::any_cast<Options>(&b);
            return x && y && *x == *y;
          }};
}

// The order is the deck's: its list of types in messages, and the order keys are checked in.
const PreconditionerEntry registry[] = {
    entry<BlockJacobiOptions>("block_jacobi", block_jacobi_keys),
    entry<JacobiOptions>("jacobi", jacobi_keys),
    entry<Ilu0Options>("ilu0", ilu0_keys),
    entry<IsaiOptions>("isai", isai_keys),
    entry<AmgOptions>("amg", amg_keys),
    entry<CprOptions>("cpr", cpr_keys, /*cpr_stage=*/false),
    entry<NoneOptions>("none", none_keys),
};

const PreconditionerEntry& known(std::string_view type)
{
  if (const PreconditionerEntry* e = find_preconditioner(type)) return *e;
  throw std::invalid_argument(fmt::format("unknown preconditioner type \"{}\"", type));
}

}  // namespace

std::span<const PreconditionerEntry> registered_preconditioners() { return registry; }

const PreconditionerEntry* find_preconditioner(std::string_view name)
{
  for (const auto& e : registry)
    if (e.name == name) return &e;
  return nullptr;
}

bool operator==(const PreconditionerSpec& a, const PreconditionerSpec& b)
{
  if (a.type != b.type) return false;
  const PreconditionerEntry* e = find_preconditioner(a.type);
  return e ? e->equal(a.options, b.options) : !a.options.has_value() && !b.options.has_value();
}

PreconditionerSpec preconditioner_spec(std::string_view type)
{
  return {std::string(type), known(type).defaults()};
}

std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const PreconditionerSpec& spec)
{
  const PreconditionerEntry& e = known(spec.type);
  if (spec.options.type() != e.defaults().type())
    throw std::invalid_argument(fmt::format("preconditioner \"{}\": the options are not its own", spec.type));
  return e.create(std::move(exec), spec.options);
}

PreconditionerSpec read_preconditioner(deck::Section& p, std::span<const PreconditionerSpec> defaults,
                                       PreconditionerRole role)
{
  // The types this table may name, and every key of theirs (in registry order, after "type").
  std::vector<const PreconditionerEntry*> entries;
  std::vector<std::string_view> names, keys = {"type"};
  for (const auto& e : registry) {
    if (role == PreconditionerRole::cpr_stage && !e.cpr_stage) continue;
    entries.push_back(&e);
    names.push_back(e.name);
    for (const std::string_view k : e.keys)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  p.only(keys);
  const std::string type = p.choice("type", defaults.front().type, names);
  const PreconditionerEntry& chosen = known(type);
  // Keys of another type are an inconsistency, not something to ignore silently. Only the keys of
  // the chosen type are read (and get their defaults in the resolved deck).
  for (const std::string_view k : std::span(keys).subspan(1)) {
    if (std::find(chosen.keys.begin(), chosen.keys.end(), k) != chosen.keys.end()) continue;
    std::string owners;  // type = "ilu0" or "isai"
    std::size_t count = 0;
    for (const PreconditionerEntry* e : entries)
      if (std::find(e->keys.begin(), e->keys.end(), k) != e->keys.end())
        owners += fmt::format("{}\"{}\"", count++ == 0 ? "type = " : " or ", e->name);
    p.reject({k}, owners);
  }
  const auto d =
      std::find_if(defaults.begin(), defaults.end(), [&](const PreconditionerSpec& s) { return s.type == type; });
  return {type, chosen.read(p, d != defaults.end() ? d->options : chosen.defaults())};
}

}  // namespace blockres
