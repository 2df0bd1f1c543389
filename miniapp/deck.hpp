// Deck loading: TOML (TOML++) -> validated RunConfig in SI units, with --set overrides.
#pragma once

#include "miniapp/config.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace blockres {

// Bad user input (deck, property file, --set). The message is complete and names the
// place: "<file>:<line>:<column>: <dotted.key>: <what is wrong>" (or "--set <text>: ..."
// for an override); main prints it as is and exits with code 1.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Loads `path`, applies `overrides` ("dotted.key=value", value parsed as TOML, bare words
// taken as strings), validates every key and converts to SI. Throws InputError.
RunConfig load_deck(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace blockres
