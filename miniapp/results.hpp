// Result files: the HDF5 layout written by `blockres run` (atomically) and a reader for it.
//
// Layout version 1 (all fields on the full nx*ny*nz grid in natural order, i fastest;
// NaN in inactive cells; every dataset carries a `units` attribute):
//   /                      attrs layout_version, blockres_version, git_commit, backend, device,
//                          model, created_utc, deck_path, command_line
//   /provenance/deck            deck text verbatim
//   /provenance/resolved_deck   deck with overrides applied and defaults filled in (TOML)
//   /grid                  attrs nx, ny, nz, top, gravity; dx[nx], dy[ny], dz[nz] (m),
//                          depth[n] (m, cell centres), active[n] (0/1)
//   /static                porosity, permx, permy, permz (mD), pore_volume (m3, reference)
//   /reports               time[r] (day); pressure[r][n] (bar); sw[r][n]; row 0 is the initial state
//   /steps                 time (day, end of step), dt (day), newton_iterations, linear_iterations,
//                          cuts, cnv_water, cnv_oil, mb_water, mb_oil, water_in_place, oil_in_place
//                          (surface m3); attrs initial_water_in_place, initial_oil_in_place
//   /wells                 names[w], type[w], control[w]; bhp[s][w] (bar), water_rate[s][w],
//                          oil_rate[s][w] (surface m3/day, positive = into the reservoir),
//                          at_bhp[s][w] (1 when BHP-controlled)
//   /statistics            attrs steps, cuts, newton_iterations, linear_iterations,
//                          wall_seconds, assembly_seconds, linear_setup_seconds, linear_solve_seconds
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

inline constexpr std::int64_t results_layout_version = 1;

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

struct RunStatistics {
  int steps = 0, cuts = 0, newton_iterations = 0, linear_iterations = 0;
  double wall_seconds = 0, assembly_seconds = 0, linear_setup_seconds = 0, linear_solve_seconds = 0;
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
  void commit(const RunStatistics& stats);
  const std::filesystem::path& final_path() const { return final_; }

 private:
  std::filesystem::path final_, temp_;
  const physics::Grid& grid_;
  std::optional<h5::File> file_;
  h5::Id reports_, steps_, wells_;
  h5::Series rep_time_, rep_p_, rep_sw_;
  std::vector<h5::Series> step_series_;
  h5::Series w_bhp_, w_qw_, w_qo_, w_at_bhp_;
  bool committed_ = false;
};

// What tests and `verify` read back.
struct Results {
  std::int64_t layout_version = 0;
  std::string backend, device, model, deck_text, resolved_deck;
  int nx = 0, ny = 0, nz = 0;
  std::vector<double> report_times;          // day
  std::vector<std::vector<double>> pressure;  // [report][cell], bar
  std::vector<std::vector<double>> sw;
  std::vector<double> step_time, step_dt;     // day
  std::vector<double> newton_iterations, linear_iterations;
  std::vector<double> water_in_place, oil_in_place;
  double initial_water_in_place = 0, initial_oil_in_place = 0;
  std::vector<std::string> well_names;
  std::vector<std::vector<double>> well_bhp, well_water_rate, well_oil_rate;  // [step][well]
};

// Throws h5::Error with a clear message for missing, truncated or foreign files.
Results read_results(const std::filesystem::path& path);

}  // namespace blockres
