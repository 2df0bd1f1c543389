// The aggregation AMG from a deck table, and made from its options.
#include "linalg/preconditioners/amg/amg_options.hpp"

#include "input/section.hpp"
#include "linalg/preconditioners/amg/amg.hpp"

namespace blockres {

AmgOptions read(deck::Section& p, const AmgOptions& defaults)
{
  using deck::between;
  AmgOptions a = defaults;
  a.aggregation = p.choice("aggregation", defaults.aggregation, amg_aggregation_names);
  if (a.aggregation != AmgAggregation::matching) p.reject({"aggregate_size"}, "aggregation = \"matching\"");
  if (a.aggregation == AmgAggregation::matching) {
    a.aggregate_size = p.integer("aggregate_size", defaults.aggregate_size, between(2, 8));
    if (a.aggregate_size != 2 && a.aggregate_size != 4 && a.aggregate_size != 8)
      p.bad(p.require("aggregate_size"), "aggregate_size", "must be 2, 4 or 8");
  }
  a.interpolation = p.choice("interpolation", defaults.interpolation, amg_interpolation_names);
  a.smoother = p.choice("smoother", defaults.smoother, amg_smoother_names);
  a.storage = p.choice("storage", defaults.storage, storage_precision_names);
  // fp32 taken from the defaults (the default solver's AMG) applies to the Jacobi smoothers only: a deck that
  // picks the ILU(0) smoother and says nothing about storage gets fp64.
  if (!p.given("storage") && a.smoother == AmgSmoother::ilu0) a.storage = StoragePrecision::fp64;
  if (a.storage == StoragePrecision::fp32 && a.smoother == AmgSmoother::ilu0) {  // blame the key the user wrote
    if (p.given("storage"))
      p.bad(p.require("storage"), "storage", "fp32 needs a Jacobi smoother (smoother = \"jacobi\" or \"l1_jacobi\")");
    p.bad(p.require("smoother"), "smoother", "ilu0 needs storage = \"fp64\"");
  }
  if (a.smoother != AmgSmoother::jacobi) p.reject({"jacobi_omega"}, "smoother = \"jacobi\"");
  else a.jacobi_omega = p.number("jacobi_omega", defaults.jacobi_omega, between(0, 2, true, true));
  if (a.smoother != AmgSmoother::ilu0) p.reject({"trisolve_sweeps"}, "smoother = \"ilu0\"");
  else a.trisolve_sweeps = p.integer("trisolve_sweeps", defaults.trisolve_sweeps, between(0, 16));
  a.theta = p.number("theta", defaults.theta, between(0, 1));
  a.pre_sweeps = p.integer("pre_sweeps", defaults.pre_sweeps, between(0, 10));
  a.post_sweeps = p.integer("post_sweeps", defaults.post_sweeps, between(0, 10));
  a.cycle = p.choice("cycle", defaults.cycle, amg_cycle_names);
  a.cycles = p.integer("cycles", defaults.cycles, between(1, 10));
  a.max_levels = p.integer("max_levels", defaults.max_levels, between(1, 50));
  a.max_coarse = p.integer("max_coarse", defaults.max_coarse, between(1, 512));
  a.gather_rows = p.integer("gather_rows", defaults.gather_rows, deck::at_least(1));
  a.refresh_interval = p.integer("refresh_interval", defaults.refresh_interval, deck::at_least(1));
  a.keep_interpolation = p.flag("keep_interpolation", defaults.keep_interpolation);
  a.refresh_growth = p.number("refresh_growth", defaults.refresh_growth, between(0, 10));
  // Likewise the default solver's adaptive reuse gives way to a refresh_interval the deck sets.
  if (!p.given("refresh_growth") && a.refresh_interval != 1) a.refresh_growth = 0.0;
  if (a.refresh_growth > 0 && a.refresh_interval != 1)
    p.bad(p.require("refresh_growth"), "refresh_growth",
          "refresh_growth (adaptive reuse) and refresh_interval > 1 (a fixed count) exclude each other");
  return a;
}

std::unique_ptr<Preconditioner> make_preconditioner(ExecPtr exec, const AmgOptions& opt)
{
  return std::make_unique<AmgPreconditioner>(std::move(exec), opt);
}

}  // namespace blockres
