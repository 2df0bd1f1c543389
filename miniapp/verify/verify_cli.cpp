// `blockres verify`: its options (miniapp/verify/verify.hpp's VerifyOptions) and its action.
#include "miniapp/verify/verify_cli.hpp"

#include "miniapp/verify/verify.hpp"

#include <CLI/CLI.hpp>

#include <memory>

namespace blockres {

Subcommand register_verify(CLI::App& app, CommandContext& context)
{
  auto o = std::make_shared<VerifyOptions>();
  auto* verify = app.add_subcommand(
      "verify",
      "compare a result with a stored HDF5 baseline field by field (exit 0 pass, 1 fail, 2 error): "
      "'verify RESULT.h5 --baseline BASE.h5', 'verify DECK.toml --baseline BASE.h5' (runs the deck first) or "
      "'verify --case CASE.toml' (deck, overrides, baseline and tolerances of a verification case)");
  add_threads_option(*verify, context);
  verify->add_option("input", o->input, "result file (.h5) or deck (.toml) to run; default: the case's deck");
  verify->add_option("--baseline", o->baseline, "baseline result file (default: the case's baseline)");
  verify->add_option("--case", o->case_file, "verification case file (verification/cases/*.toml)");
  // One value per occurrence: `--rtol 1e-3 RESULT.h5` must not take RESULT.h5 as a second tolerance.
  verify->add_option("--rtol", o->rtol, "relative tolerance, FIELD=VALUE or VALUE for every field (repeatable)")
      ->allow_extra_args(false);
  verify->add_option("--atol", o->atol, "absolute tolerance in the field's unit, FIELD=VALUE or VALUE (repeatable)")
      ->allow_extra_args(false);
  verify->add_option("--partition", o->partition,
                     "several ranks (mpirun -np N blockres verify ...): the deck run's process grid PxxPyxPz, e.g. 1x1x2 "
                     "(0: the partitioner's choice for that axis)");
  verify->add_option("--backend", o->backend, "backend of the deck run: auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  verify->add_option("--set", o->overrides, "override a deck key of the deck run: --set dotted.key=value (repeatable)")
      ->allow_extra_args(false);
  verify->add_option("--output", o->output_dir, "keep the deck run's result in this directory (default: discarded)");
  verify->add_option("--json", o->json_path, "also write the comparison as JSON to this file");
  verify->add_flag("--regenerate", o->regenerate,
                   "run the case's deck on the CPU backend and replace its baseline (on purpose only; prints the "
                   "differences to the old baseline first)");
  return {verify,
          [o, &context] {
            o->command_line = context.command_line;
            return run_verify(*o, context.log, context.error);  // 2 after an error line
          },
          2};
}

}  // namespace blockres
