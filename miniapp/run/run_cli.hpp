// `blockres run DECK`: its command line, registered on main's CLI11 app.
#pragma once

#include "miniapp/run/subcommand.hpp"

namespace blockres {

// Adds `run` to `app`; its action loads the deck (with --set and --output), picks the backend and
// runs the simulation to <output>/<name>.h5 (0 on success; errors are thrown).
Subcommand register_run(CLI::App& app, CommandContext& context);

}  // namespace blockres
