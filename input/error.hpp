// The error every input reader throws for bad user input (deck, property file, --set, command line).
#pragma once

#include <stdexcept>

namespace blockres {

// Bad user input. The message is complete and names the place: "<file>:<line>:<column>:
// <dotted.key>: <what is wrong>" (or "--set <text>: ..." for an override); main prints it as is
// and exits with code 1.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace blockres
