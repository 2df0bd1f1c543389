// Result files: the HDF5 layout written by `blockres run` (atomically) and a reader for it.
//
// The layout (groups, datasets, units, attributes, versions) is documented in
// verification/hdf5_layout.md; keep that file in step with the writer and the reader here.
// Layout version 2 in short (fields on the full nx*ny*nz grid, i fastest, NaN in inactive cells,
// a `units` attribute on every numeric dataset): root attributes (layout_version, provenance),
// /provenance (deck, resolved deck), /grid, /static, /reports (time, pressure, sw; row 0 the
// initial state), /steps, /wells, /newton (one row per linear solve), /statistics.
#pragma once

#include "miniapp/config.hpp"
#include "miniapp/h5.hpp"
#include "physics/grid.hpp"
#include "physics/oil_water_model.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace blockres {

inline constexpr std::int64_t results_layout_version = 2;
inline constexpr std::int64_t results_oldest_readable_version = 1;

struct Provenance {
  std::string backend, device, command_line;
};

struct StepRecord {
  double time = 0, dt = 0;  // [s]
  int newton_iterations = 0, linear_iterations = 0, cuts = 0;
  physics::ConvergenceNorms norms;
  std::array<double, 2> in_place{};  // surface m3
  std::vector<physics::WellResult> wells;
};

// One Newton iteration's linear solve (a row of /newton).
struct NewtonRecord {
  int step = 0, attempt = 0, iteration = 0;
  int linear_iterations = 0;
  double forcing = 0;           // relative tolerance of the solve
  double linear_reduction = 0;  // residual / initial_residual at exit
  bool linear_converged = false;
  SolveReason linear_reason = SolveReason::max_iterations;
};

struct RunStatistics {
  int steps = 0, cuts = 0, newton_iterations = 0, linear_iterations = 0;
  double wall_seconds = 0, assembly_seconds = 0, linear_setup_seconds = 0, linear_solve_seconds = 0;
  int max_linear_iterations = 0;  // of one linear solve
  // linear_solve_seconds split by KrylovSolver's profile; other = the rest of it.
  double spmv_seconds = 0, precond_apply_seconds = 0, orthogonalization_seconds = 0, linear_other_seconds = 0;
  std::string linear_method, preconditioner, forcing;
};

// Writes <dir>/<name>.h5 through <dir>/<name>.h5.tmp: nothing appears under the final name
// until commit(); a writer destroyed without commit removes its temporary file.
class ResultsWriter {
 public:
  ResultsWriter(const std::filesystem::path& final_path, const RunConfig& cfg, const Provenance& prov,
                const physics::Grid& grid, const physics::OilWaterModel& model,
                std::array<double, 2> initial_in_place);
  ~ResultsWriter();
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  // State x: interleaved (p [Pa], S_w) per active cell.
  void write_report(double time, const std::vector<double>& x);
  void write_step(const StepRecord& step);
  void write_newton(const NewtonRecord& rec);
  void commit(const RunStatistics& stats);
  const std::filesystem::path& final_path() const { return final_; }

 private:
  std::filesystem::path final_, temp_;
  const physics::Grid& grid_;
  std::optional<h5::File> file_;
  h5::Id reports_, steps_, wells_, newton_;
  h5::Series rep_time_, rep_p_, rep_sw_;
  std::vector<h5::Series> step_series_, newton_series_;
  h5::Series w_bhp_, w_qw_, w_qo_, w_at_bhp_;
  bool committed_ = false;
};

// What tests and `verify` read back.
struct Results {
  std::int64_t layout_version = 0;
  std::string backend, device, model, deck_text, resolved_deck;
  int nx = 0, ny = 0, nz = 0;
  std::vector<double> dx, dy, dz;             // m
  std::vector<std::int64_t> active;           // [cell] 0/1
  std::vector<double> porosity, permx, permy, permz;  // [cell]; mD
  std::vector<double> report_times;          // day
  std::vector<std::vector<double>> pressure;  // [report][cell], bar
  std::vector<std::vector<double>> sw;
  std::vector<double> step_time, step_dt;     // day
  std::vector<double> newton_iterations, linear_iterations;
  std::vector<double> water_in_place, oil_in_place;
  double initial_water_in_place = 0, initial_oil_in_place = 0;
  std::vector<std::string> well_names;
  std::vector<std::vector<double>> well_bhp, well_water_rate, well_oil_rate;  // [step][well]
  // /newton, one entry per linear solve (empty for layout version 1).
  std::vector<double> newton_step, newton_attempt, newton_iteration, newton_linear_iterations, newton_forcing,
      newton_linear_reduction, newton_linear_converged, newton_linear_reason;
  RunStatistics statistics;  // /statistics (the version 2 additions stay zero/empty for version 1)
};

// Throws h5::Error with a clear message for missing, truncated or foreign files and for layout
// versions it does not know (older than results_oldest_readable_version or newer than this build's).
Results read_results(const std::filesystem::path& path);

}  // namespace blockres
