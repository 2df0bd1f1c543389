// The ISAI preconditioner from a deck table, and made from its options.
#include "linalg/preconditioners/isai/isai_options.hpp"

#include "input/section.hpp"
#include "linalg/preconditioners/isai/isai_preconditioner.hpp"

namespace blockres {

IsaiOptions read(deck::Section& p, const IsaiOptions& defaults)
{
  IsaiOptions o = defaults;
  o.power = p.integer("isai_power", defaults.power, deck::between(1, max_isai_power));
  o.view = p.choice("isai_view", defaults.view, isai_view_names);
  return o;
}

std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const IsaiOptions& opt)
{
  return std::make_unique<IsaiPreconditioner>(std::move(exec), opt);
}

}  // namespace blockres
