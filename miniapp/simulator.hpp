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

struct RunOptions {
  std::filesystem::path output_dir = "output";
  std::string command_line;
  bool verbose = false;                  // one log line per Newton iteration
  std::filesystem::path jacobian_path;   // when set: the last assembled Jacobian, as HDF5 /jacobian
};

// Runs the configured simulation on `exec` and writes the result file atomically to
// <output_dir>/<cfg.output.name>.h5. `log` receives every line of the run log.
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

// Writes A (host copy) to `path` atomically: group /jacobian with attributes block_size,
// block_rows and datasets row_ptr, col_ind, values (row-major blocks).
void write_jacobian(const std::filesystem::path& path, const BsrMatrix& A);

}  // namespace blockres
