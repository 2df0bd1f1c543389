// CPR from a deck table (its stages through the registry), and made from its options.
#include "linalg/preconditioners/cpr/cpr_options.hpp"

#include "input/section.hpp"
#include "linalg/preconditioners/cpr/cpr_preconditioner.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"

namespace blockres {

CprOptions read(deck::Section& p, const CprOptions& defaults)
{
  CprOptions c = defaults;
  c.weights = p.choice("weights", defaults.weights, cpr_weights_names);
  deck::Section pressure = p.sub("pressure", false);
  const PreconditionerSpec pressure_defaults[] = {defaults.pressure};
  c.pressure = read_preconditioner(pressure, pressure_defaults, PreconditionerRole::cpr_stage);
  // A second stage sees A's bs x bs blocks: ILU(0) there factors them as blocks (any block size,
  // factors in A's own storage) unless the table asks for the scalar view.
  deck::Section second = p.sub("second", false);
  const PreconditionerSpec second_defaults[] = {defaults.second,
                                                {"ilu0", Ilu0Options{.factor_view = IluFactorView::block}}};
  c.second = read_preconditioner(second, second_defaults, PreconditionerRole::cpr_stage);
  c.graph = p.flag("graph", defaults.graph);
  return c;
}

std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const CprOptions& opt)
{
  return std::make_unique<CprPreconditioner>(std::move(exec), opt);
}

}  // namespace blockres
