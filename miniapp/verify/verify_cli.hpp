// `blockres verify`: its command line, registered on main's CLI11 app.
#pragma once

#include "miniapp/run/subcommand.hpp"

namespace blockres {

// Adds `verify` to `app`. Its action returns verify's own exit codes (0 pass, 1 fail, 2 error, an
// error's message printed through context.error) and never throws; a bad command line exits 2.
Subcommand register_verify(CLI::App& app, CommandContext& context);

}  // namespace blockres
