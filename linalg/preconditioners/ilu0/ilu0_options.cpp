// ILU(0) from a deck table, and made from its options (scalar or block view).
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"

#include "input/section.hpp"
#include "linalg/preconditioners/ilu0/block_ilu_preconditioner.hpp"
#include "linalg/preconditioners/ilu0/ilu_preconditioner.hpp"

namespace blockres {

Ilu0Options read(deck::Section& p, const Ilu0Options& defaults)
{
  using deck::between;
  Ilu0Options o = defaults;
  o.factor_view = p.choice("factor_view", defaults.factor_view, ilu_factor_view_names);
  o.trisolve = p.choice("trisolve", defaults.trisolve, triangular_solve_names);
  const bool block = o.factor_view == IluFactorView::block;
  o.implementation = p.choice("implementation", defaults.implementation, ilu_implementation_names);
  if (block && o.implementation == IluImplementation::cusparse)
    p.bad(p.require("implementation"), "implementation",
          "\"cusparse\" needs factor_view = \"scalar\" (cuSPARSE has no block ILU(0) with pivoted diagonal blocks)");
  if (!block) p.reject({"factor_sweeps"}, "factor_view = \"block\"");
  if (block) o.factor_sweeps = p.integer("factor_sweeps", defaults.factor_sweeps, between(0, max_factor_sweeps));
  if (!block || o.trisolve != TriangularSolve::isai) {
    p.reject({"storage"}, "factor_view = \"block\" and trisolve = \"isai\" (fp32 copies of the block factors and their ISAI)");
    o.storage = StoragePrecision::fp64;  // also where the defaults had fp32
  }
  if (o.trisolve != TriangularSolve::isai) {
    p.reject({"isai_power", "isai_view", "sweeps"}, "trisolve = \"isai\"");
    return o;
  }
  o.isai_power = p.integer("isai_power", defaults.isai_power, between(1, max_isai_power));
  o.view = p.choice("isai_view", block ? IsaiView::block : defaults.view, isai_view_names);
  o.sweeps = p.integer("sweeps", defaults.sweeps, between(0, max_isai_sweeps));
  if (block && o.view != IsaiView::block)
    p.bad(p.require("isai_view"), "isai_view", "must be \"block\" with factor_view = \"block\"");
  if (block) o.storage = p.choice("storage", defaults.storage, storage_precision_names);
  return o;
}

std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const Ilu0Options& opt)
{
  if (opt.factor_view == IluFactorView::block) return std::make_unique<BlockIlu0Preconditioner>(std::move(exec), opt);
  return std::make_unique<Ilu0Preconditioner>(std::move(exec), opt);
}

}  // namespace blockres
