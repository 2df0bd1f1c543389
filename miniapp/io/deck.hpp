// Deck loading: TOML (TOML++) -> validated RunConfig in SI units, with --set overrides.
#pragma once

#include "input/error.hpp"
#include "miniapp/io/config.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace blockres {

// Loads `path`, applies `overrides` ("dotted.key=value", value parsed as TOML, bare words
// taken as strings), validates every key and converts to SI. Throws InputError.
RunConfig load_deck(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace blockres
