// Result files: the HDF5 layout written by `blockres run` (atomically) and a reader for it.
//
// The layout (groups, datasets, units, attributes, versions) is documented in
// verification/hdf5_layout.md; keep that file in step with the writer and the reader here.
// Layout version 4 in short (fields on the full nx*ny*nz grid, i fastest, NaN in inactive cells,
// a `units` attribute on every numeric dataset; counters, indices and flags int64, the rest float64;
// simulated times in days, wall-clock times in s; per-cell and per-well series always 2-D): root
// attributes (layout_version, provenance, model, block_size), /unknowns, /provenance (deck, resolved
// deck), /grid, /static, /reports (time and one dataset per model cell field listed in
// /reports/fields; row 0 the initial state), /steps (norms per equation, quantities in place),
// /wells (bhp, at_bhp, one dataset per rate in /wells/rates), /newton (one row per linear solve),
// /well_switches (one row per well control switch), /restart (what a restart needs), /statistics.
// The writer and the reader know no model: the names, units and groups come from physics::Model
// (writer) and from the file's lists (reader).
#pragma once

#include "miniapp/io/config.hpp"
#include "miniapp/io/h5.hpp"
#include "physics/grid.hpp"
#include "physics/model.hpp"

#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blockres {

inline constexpr std::int64_t results_layout_version = 4;
inline constexpr std::int64_t results_oldest_readable_version = 1;

struct Provenance {
  std::string backend, device, command_line;
  int threads = 0;             // CPU threads of the run and why (miniapp/run/threads.hpp)
  std::string threads_reason;
  std::string bsrmv_tuning;    // where the CUDA SpMV configurations come from (KernelTuning::source)
  int ranks = 1;               // MPI ranks of the run (issue 33)
  std::string partition;       // how the grid was split among them (empty on one rank)
};

// One accepted time step (a row of /steps and /wells).
struct StepRecord {
  double time = 0, dt = 0;  // [s]
  int newton_iterations = 0, linear_iterations = 0, cuts = 0;
  physics::ConvergenceNorms norms;         // per equation, model.equation_names() order
  std::vector<double> in_place;            // SI, model.in_place_quantities() order
  std::vector<physics::WellResult> wells;  // model.wells() order; rates SI in model.well_rates() order
};

// One Newton iteration's linear solve (a row of /newton).
struct NewtonRecord {
  int step = 0, attempt = 0, iteration = 0;
  int linear_iterations = 0;
  double forcing = 0;           // relative tolerance of the solve
  double linear_reduction = 0;  // residual / initial_residual at exit
  bool linear_converged = false;
  SolveReason linear_reason = SolveReason::max_iterations;
  // Wall-clock seconds of this Newton iteration's parts (issue 30 item 4; NaN when not measured):
  // assembly (with the convergence norms), preconditioner setup, Krylov solve, and of those the
  // time the host waited for the device's queued work at the end of the setup and of the solve.
  double assembly_seconds = std::numeric_limits<double>::quiet_NaN();
  double setup_seconds = std::numeric_limits<double>::quiet_NaN();
  double solve_seconds = std::numeric_limits<double>::quiet_NaN();
  double wait_seconds = std::numeric_limits<double>::quiet_NaN();
};

// A well control switch (a row of /well_switches): the step being attempted (1-based), the attempt
// (0 = first try), the Newton iteration whose assembly decided it, the end time of the attempted step.
struct WellSwitchRecord {
  int step = 0, attempt = 0, iteration = 0;
  double time = 0;  // [s]
  physics::WellSwitch change;
};

struct RunStatistics {
  int steps = 0, cuts = 0, newton_iterations = 0, linear_iterations = 0;  // whole history (restarts included)
  double wall_seconds = 0, assembly_seconds = 0, linear_setup_seconds = 0, linear_solve_seconds = 0;
  int max_linear_iterations = 0;  // of one linear solve
  // linear_solve_seconds split by KrylovSolver's profile; other = the rest of it.
  double spmv_seconds = 0, precond_apply_seconds = 0, orthogonalization_seconds = 0, linear_other_seconds = 0;
  std::string linear_method, preconditioner, forcing;
  std::string bsrmv_configs;  // the SpMV configuration per block size the run used (describe_bsrmv_plans)
  // This run's linear iterations (not a restart's history): the bytes one moved at least on average
  // (KrylovProfile::bytes; 0 when the preconditioner states none) and the device-to-device copy
  // bandwidth measured at start-up (CUDA; 0 on the CPU or when not measured), for their ratio.
  double linear_bytes_per_iteration = 0, copy_gb_per_s = 0;
};

// What the time loop needs beyond the state to continue from a report row exactly as the run
// that wrote it (a row of /restart, see verification/hdf5_layout.md).
struct RestartRecord {
  double time = 0;             // [s], exact (/restart/time_seconds; /restart/time holds it in days)
  double dt_next = 0;          // [s], the step size the controller tries next
  RunStatistics totals;        // counters and times of the whole history so far
  int newton_rows = 0;         // rows of /newton so far
  int cuts_without_progress = 0;
};

// The inputs of the run's first preconditioner setup (/restart/setup_*): a restart before which it
// happened repeats it, so a preconditioner that keeps structure across setups (AMG aggregates)
// continues with the same structure as the uninterrupted run.
struct SetupReplay {
  int step = 0;                  // the 1-based time step whose attempt made the setup
  double dt = 0;                 // [s]
  std::vector<double> x, x0;     // the Newton iterate and the step's start state (host, interleaved)
};

// /restart/time and /restart/dt_next of every row in seconds, exact, from a file of layout version
// `version` (as read_layout_version gave it): version 4 keeps them in days with the exact seconds in
// time_seconds and dt_next_seconds, version 3 in seconds. Throws h5::Error (naming `path`) when the
// datasets are missing or of different lengths.
struct RestartTimes {
  std::vector<double> time, dt_next;  // [s]
};
RestartTimes read_restart_times(hid_t file, std::int64_t version, const std::filesystem::path& path);
// The file's first preconditioner setup (/restart/setup_*; dt in s, exact, as above), if it has one.
std::optional<SetupReplay> read_setup_replay(hid_t file, std::int64_t version, const std::filesystem::path& path);

// Writes <dir>/<name>.h5 through <dir>/<name>.h5.tmp: nothing appears under the final name
// until commit(); a writer destroyed without commit removes its temporary file.
// `grid` and `model` must outlive the writer. Throws std::invalid_argument when the model's names
// cannot be dataset names (empty, with '/' or '.', or taken by a fixed dataset of their group).
// The grid's depth and active flags and the /static rock fields (compressed: the bulk of a large
// grid's file creation) are written by the constructor (now) or by write_static() (later: e.g. as
// the first job of a background writer, so that the time loop starts without waiting for them;
// `cfg` must then outlive the writer, and write_static() come before any checkpoint or commit).
enum class StaticFields { now, later };

class ResultsWriter {
 public:
  ResultsWriter(const std::filesystem::path& final_path, const RunConfig& cfg, const Provenance& prov,
                const physics::Grid& grid, const physics::Model& model,
                const std::vector<double>& initial_in_place /* SI, model.in_place_quantities() order */,
                StaticFields static_fields = StaticFields::now);
  // The deferred static fields (StaticFields::later), once.
  void write_static();
  ~ResultsWriter();
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  // time [s]; x: host copy of the interleaved state (model.block_size() per active cell); the
  // fields are model.cell_field_values(x), those with Quantity::in_results.
  void write_report(double time, const std::vector<double>& x);
  void write_step(const StepRecord& step);
  void write_newton(const NewtonRecord& rec);
  // One row of /restart for the report row just written (its state went with write_report).
  void write_restart(const RestartRecord& rec);
  void write_setup_replay(const SetupReplay& replay);  // at most once
  // Root attributes restart_file, restart_report, restart_time (day): where this run continued from.
  void set_restart_source(const std::string& file, std::size_t report, double time);
  // Copies rows 0..report of /reports and /restart, the first `steps` rows of /steps and /wells and
  // the first `newton_rows` of /newton from `source` (a result of the same deck, checked by the
  // caller); with `replay`, also its /restart/setup_* datasets. Call before any other row is written.
  void copy_history(const std::filesystem::path& source, std::size_t report, std::size_t steps,
                    std::size_t newton_rows, bool replay);
  // The result so far as a complete result file at `path` (with /statistics = `stats`), written to
  // `path`.tmp and renamed over `path`.
  void write_checkpoint(const std::filesystem::path& path, const RunStatistics& stats);
  void write_well_switch(const WellSwitchRecord& rec);
  void commit(const RunStatistics& stats);
  const std::filesystem::path& final_path() const { return final_; }

 private:
  // One row of /restart/time, dt_next (days) and their exact seconds; time and dt_next in s.
  void append_restart_times(double time, double dt_next);

  void require_static(const char* what) const;

  std::filesystem::path final_, temp_;
  const RunConfig* static_cfg_ = nullptr;  // set while the static fields wait for write_static()
  const physics::Grid& grid_;
  const physics::Model& model_;
  std::vector<std::size_t> report_fields_;  // positions in model.cell_fields() of those with in_results
  std::vector<double> in_place_scale_, rate_scale_;  // from_si of the in-place quantities and well rates
  std::size_t num_equations_ = 0, num_wells_ = 0;
  std::optional<h5::File> file_;
  h5::Id reports_, steps_, wells_, newton_;
  h5::Series rep_time_;
  std::vector<h5::Series> rep_fields_, step_series_, newton_series_, newton_times_, w_rates_;
  h5::Id switches_;
  std::vector<h5::Series> switch_series_;  // /well_switches, in well_switch_fields order
  h5::Series w_bhp_, w_at_bhp_;
  std::vector<std::string> field_names_, step_names_, rate_names_;  // dataset names of the series above
  h5::Id restart_;
  h5::Series rs_time_, rs_dt_, rs_time_seconds_, rs_dt_seconds_, rs_state_;
  std::vector<h5::Series> rs_totals_;  // restart_totals order
  bool replay_written_ = false;
  bool committed_ = false;
};

// What tests and `verify` read back: generic over the model, names and units from the file. Every
// layout version reads into the same structure: counters as doubles (exact: they are integers far
// below 2^53), times in days, every per-cell and per-well series as rows (a version 3 file's 1-D
// series of a one-cell grid or one well give rows of one value).
constexpr double results_nan = std::numeric_limits<double>::quiet_NaN();

// A named quantity of the file: its dataset name, unit (the `units` attribute), tolerance group
// (never empty: the name itself when the model gives none) and one-line description.
struct QuantityInfo {
  std::string name, unit, group, description;
};
// Rows of a 2-D series: cell fields [report][cell], well rates [step][well].
struct Series : QuantityInfo {
  std::vector<std::vector<double>> rows;
};
// A per-step series ([step]), with its value at t = 0 where the file has one (quantities in place).
struct StepSeries : QuantityInfo {
  std::vector<double> values;
  double initial = results_nan;
};

struct Results {
  std::int64_t layout_version = 0;
  std::string backend, device, model, deck_text, resolved_deck;
  int ranks = 1;  // of the run that wrote it (attribute `ranks`; files without it: 1)
  int block_size = 0;
  std::vector<std::string> unknown_names, equation_names;
  int nx = 0, ny = 0, nz = 0;
  std::vector<double> dx, dy, dz;                     // m
  std::vector<std::int64_t> active;                   // [cell] 0/1
  std::vector<double> porosity, permx, permy, permz;  // [cell]; mD
  std::vector<double> report_times;                   // day
  std::vector<Series> cell_fields;                    // /reports/<name>: [report][cell], in file order
  std::vector<double> step_time, step_dt;             // day
  std::vector<double> newton_iterations, linear_iterations, cuts;
  std::vector<StepSeries> cnv, mb;                    // per equation (name = the equation), [step]
  std::vector<StepSeries> in_place;                   // /steps/<name>: [step], initial from the attribute
  std::vector<std::string> well_names, well_types, well_controls;
  std::vector<std::vector<double>> well_bhp, well_at_bhp;  // [step][well]; bar, 0/1 (NaN: no wells)
  std::vector<Series> well_rates;                          // /wells/<name>: [step][well]
  // /newton, one entry per linear solve (empty for layout version 1).
  std::vector<double> newton_step, newton_attempt, newton_iteration, newton_linear_iterations, newton_forcing,
      newton_linear_reduction, newton_linear_converged, newton_linear_reason;
  // /well_switches, one entry per well control switch (empty for files written before it existed).
  std::vector<double> switch_step, switch_attempt, switch_iteration, switch_time /* day */, switch_well,
      switch_to_bhp, switch_bhp_needed /* bar, NaN when no BHP met the target */, switch_bhp_limit /* bar */;
  RunStatistics statistics;  // /statistics (the version 2 additions stay zero/empty for version 1)

  // One quantity by name; std::out_of_range naming it and the ones the file has when absent.
  const Series& cell_field(std::string_view name) const;
  const Series& well_rate(std::string_view name) const;
  const StepSeries& in_place_series(std::string_view name) const;
  bool has_cell_field(std::string_view name) const;
};

// Throws h5::Error with a clear message for missing, truncated or foreign files, for layout
// versions it does not know (older than results_oldest_readable_version or newer than this
// build's) and for inconsistent files (a listed dataset missing, series of different lengths).
// Files of versions 1 and 2 (oil_water only) read into the same generic structure, with the
// names, units and groups of the oil_water model; versions 3 and 4 differ only in what read_results
// hides (element types, 1-D series of one value per row, /restart's units).
Results read_results(const std::filesystem::path& path);

// The root attribute layout_version of an open result file (`path` names it in messages). Throws
// h5::Error when it is missing or names a version this build does not read (results_oldest_readable_version
// to results_layout_version): every reader of result files (read_results, a restart) checks it first.
std::int64_t read_layout_version(hid_t file, const std::filesystem::path& path);

// The Jacobian file of `blockres run --write-jacobian` (/jacobian: block_size, block_rows, row_ptr,
// col_ind, values), read by `blockres bench ... --jacobian`. Files written before the root attribute
// layout_version existed hold version 1's layout; a reader refuses any other version.
inline constexpr std::int64_t jacobian_layout_version = 1;

}  // namespace blockres
