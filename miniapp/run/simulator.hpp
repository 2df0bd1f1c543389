// Time loop and Newton solver of `blockres run`, backend-neutral (the executor decides where
// the state, the Jacobian and every kernel live).
#pragma once

#include "linalg/distributed/communicator.hpp"
#include "miniapp/io/config.hpp"
#include "miniapp/io/results.hpp"
#include "physics/partition.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

namespace blockres {

// The simulation itself failed (time step cut below dt_min): exit code 1, no result file.
struct SimulationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunOutcome {
  RunStatistics stats;
  std::filesystem::path result_file;
};

// Named wall-clock laps of a start-up, in order: `blockres run` times the deck and the backend, then
// run_simulation continues the same list (RunOptions::startup_before) with its own parts.
class StartupLaps {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StartupLaps(std::vector<std::pair<std::string, double>> earlier = {}, Clock::time_point start = Clock::now())
      : laps_(std::move(earlier)), start_(start)
  {
  }
  // Ends a lap begun at the last lap (or at the start) and names it.
  void lap(std::string what)
  {
    const auto now = Clock::now();
    laps_.emplace_back(std::move(what), std::chrono::duration<double>(now - start_).count());
    start_ = now;
  }
  const std::vector<std::pair<std::string, double>>& laps() const { return laps_; }
  std::vector<std::pair<std::string, double>> take() { return std::move(laps_); }

 private:
  std::vector<std::pair<std::string, double>> laps_;
  Clock::time_point start_;
};

struct RunOptions {
  RunOptions() = default;
  RunOptions(std::filesystem::path dir, std::string command, bool verbose_log = false,
             std::filesystem::path jacobian = {})
      : output_dir(std::move(dir)), command_line(std::move(command)), verbose(verbose_log),
        jacobian_path(std::move(jacobian))
  {
  }
  std::filesystem::path output_dir = "output";
  std::string command_line;
  bool verbose = false;                  // one log line per Newton iteration
  std::filesystem::path jacobian_path;   // when set: the last assembled Jacobian, as HDF5 /jacobian
  std::filesystem::path restart_file;    // when set: continue from a report row of this result file
  long restart_report = -1;              // that row (< 0: its last)
  // Start-up work the caller did before run_simulation (blockres run: reading the deck with its rock
  // property fields, starting the backend), in seconds: the first start-up parts of the run log, and part
  // of the run's start-up and wall time.
  std::vector<std::pair<std::string, double>> startup_before;
  // The ranks of a distributed run (issue 33; null: one rank) and how to split the grid among them.
  dist::CommPtr comm;
  physics::PartitionSpec partition;
};

// Runs the configured simulation on `exec` and writes the result file atomically to
// <output_dir>/<cfg.output.name>.h5. `log` receives every line of the run log.
//
// Restart (options.restart_file): the run continues from report row options.restart_report of that
// file (miniapp/run/restart.hpp checks the deck against it; RestartError otherwise) with its state,
// time, next step size and counters, and the preconditioner's first setup repeated when it came
// before that row; the new file holds the file's history up to the row plus the continuation.
// Checkpoints (cfg.output.checkpoint): after every report row the result so far is written to
// <output_dir>/<name>.checkpoint.h5 (atomically); removed once the final file is in place.
// Interruption: when interrupt_signal() (miniapp/run/run_control.hpp) becomes non-zero the current step
// is abandoned, the temporaries removed, and Interrupted thrown with the restart hint.
// The output name is locked for the run (OutputLock: OutputBusy when another live run has it).
RunOutcome run_simulation(const RunConfig& cfg, ExecPtr exec, const RunOptions& options,
                          const std::function<void(const std::string&)>& log);

// Factor on the next time step after a successful step that took `newton_iterations` (> 0):
// nc.growth_factor, or with nc.target_iterations > 0 target / iterations within
// [nc.cut_factor, nc.growth_factor] (an iteration-count controller). A step that needed no
// Newton iteration grows by growth_factor.
double time_step_growth(const NewtonConfig& nc, int newton_iterations);

// Newton iterations a solve is predicted to need from its MB norms so far (mb[k] = the largest
// phase/component MB norm before update k, k = 0..it): with k = it >= 4, mb[k] > tol_mb and a
// steady decrease mb[k] < mb[k-1] < mb[k-2], the contraction rho = sqrt(mb[k] / mb[k-2])
// extrapolated linearly, k + log(tol_mb / mb[k]) / log(rho); 0 when there is nothing to predict
// (too few iterations, MB met, or a norm that rose: the usual non-monotone start of a converging
// solve). Newton converges faster than this once in its quadratic basin, so the prediction is
// pessimistic; with nc.predict_failure a solve is abandoned when it exceeds 2 x max_iterations.
double predict_newton_iterations(const NewtonConfig& nc, const std::vector<double>& mb);

// A wall-clock duration for the run log: "<1s", "42s", "4m05s", "2h03m"; "?" when not finite or negative.
std::string format_duration(double seconds);

// The progress part of a step line, "t   100.0000 / 365.0000 d  27.4%  ~1m05s left": simulated time t
// of t_end [s], and the wall time left at the pace of this run so far (wall_seconds since the time
// loop began at simulated time t_start; a restart starts it at the restart point).
std::string describe_progress(double t, double t_end, double t_start, double wall_seconds);

// Writes A (host copy) to `path` atomically: group /jacobian with attributes block_size,
// block_rows and datasets row_ptr, col_ind, values (row-major blocks).
void write_jacobian(const std::filesystem::path& path, const BsrMatrix& A);

}  // namespace blockres
