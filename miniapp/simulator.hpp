// Time loop and Newton solver of `blockres run`, backend-neutral (the executor decides where
// the state, the Jacobian and every kernel live).
#pragma once

#include "miniapp/config.hpp"
#include "miniapp/results.hpp"

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

namespace blockres {

// The simulation itself failed (time step cut below dt_min): exit code 1, no result file.
struct SimulationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunOutcome {
  RunStatistics stats;
  std::filesystem::path result_file;
};

// Runs the configured simulation on `exec` and writes the result file atomically to
// <output_dir>/<cfg.output.name>.h5. `log` receives every line of the run log; `verbose`
// adds one line per Newton iteration.
RunOutcome run_simulation(const RunConfig& cfg, ExecPtr exec, const std::filesystem::path& output_dir,
                          const std::string& command_line, const std::function<void(const std::string&)>& log,
                          bool verbose = false);

}  // namespace blockres
