// `blockres plot`'s command line (registered by main.cpp like every subcommand): pictures of result
// files and bench suite reports, drawn by the Python script blockres_plot.py beside the executable.
#pragma once

#include "miniapp/run/subcommand.hpp"

namespace blockres {

// Adds `plot` to `app`. Its action runs `python3 blockres_plot.py ARGS...` (no shell) and returns the
// script's exit code (0, or 1 after one `error: ...` line); a missing python3 or script is one line, exit 1.
Subcommand register_plot(CLI::App& app, CommandContext& context);

}  // namespace blockres
