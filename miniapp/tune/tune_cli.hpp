// `blockres tune`'s command line (registered by main.cpp like every subcommand).
#pragma once

#include "miniapp/run/subcommand.hpp"

namespace blockres {

Subcommand register_tune(CLI::App& app, CommandContext& context);

}  // namespace blockres
