// `blockres run --restart`: reading a report row's restart data from a result file and checking that
// a deck may continue it.
#pragma once

#include "miniapp/io/config.hpp"
#include "miniapp/io/results.hpp"
#include "physics/grid.hpp"
#include "physics/model.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace blockres {

// The restart cannot be made: a missing or foreign file, a file without restart data, a report out
// of range, or a deck that changes what the history was computed with. The message names the file,
// the key or the option; exit code 1.
struct RestartError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RestartPoint {
  std::filesystem::path file;
  std::size_t report = 0;          // row of /reports (0: the initial state)
  double time = 0;                 // [s], exact
  std::vector<double> history_times;  // [s], exact: the times of report rows 0..report (VTK of the history)
  RestartRecord record;            // dt_next, totals, /newton rows, cuts without progress
  std::vector<double> state;       // the state of row `report` (host, interleaved, SI)
  std::vector<double> initial;     // the state of row 0 (its quantities in place head /steps)
  bool replay_setup = false;       // the file's first preconditioner setup precedes the restart point
  std::optional<SetupReplay> setup;
};

// Top-level deck sections a restart may change: the schedule after the restart point, the solver
// settings, the output and the title. Every other key must be as in the restart file.
inline constexpr const char* restart_changeable_sections[] = {"schedule", "solver", "output", "title"};

// Reads report row `report` (< 0: the last row with restart data) of `file` and checks that `cfg`
// (whose grid and model are `grid` and `model`) continues it: the same model, every key outside
// restart_changeable_sections as in the file's resolved deck, the same static properties, and the
// same report times up to the restart point with at least one after it. Throws RestartError.
RestartPoint read_restart_point(const std::filesystem::path& file, long report, const RunConfig& cfg,
                                const physics::Grid& grid, const physics::Model& model);

// Keys whose values differ between two resolved decks (TOML text), outside
// restart_changeable_sections: "key: A in the restart file, B here", first in key order. Arrays of
// tables with a `name` are keyed by it (`wells.INJ.rate`, as --set addresses them). Empty: none.
std::vector<std::string> restart_deck_differences(const std::string& file_toml, const std::string& deck_toml);

}  // namespace blockres
