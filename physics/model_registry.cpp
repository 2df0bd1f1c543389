// The list of physics models: one line per model (physics/model_registry.hpp).
#include "physics/model_registry.hpp"

#include "physics/multicomponent/multicomponent_model.hpp"
#include "physics/oil_water/oil_water_model.hpp"

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
