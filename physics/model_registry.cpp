// The list of physics models: one line per model (physics/model_registry.hpp).
#include "physics/model_registry.hpp"

#include "input/error.hpp"
#include "physics/multicomponent/multicomponent_model.hpp"
#include "physics/oil_water/oil_water_model.hpp"

#include <fmt/format.h>

#include <string>

namespace blockres::physics {

namespace {
const ModelEntry registry[] = {
    oil_water::model_entry(),
    multicomponent::model_entry(),
};
}  // namespace

std::span<const ModelEntry> registered_models() { return registry; }

const ModelEntry* find_model(std::string_view name)
{
  for (const auto& m : registry)
    if (m.name == name) return &m;
  return nullptr;
}

const ModelEntry& model_entry(std::string_view name)
{
  if (const ModelEntry* m = find_model(name)) return *m;
  std::string names;
  for (const auto& m : registry) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", m.name);
  throw InputError(fmt::format("model.type: unknown model '{}' (registered: {})", name, names));
}

double ConvergenceNorms::max_cnv() const
{
  double m = 0.0;
  for (const double v : cnv) m = v > m ? v : m;
  return m;
}

double ConvergenceNorms::max_mb() const
{
  double m = 0.0;
  for (const double v : mb) m = v > m ? v : m;
  return m;
}

}  // namespace blockres::physics
