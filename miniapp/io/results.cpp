// HDF5 result writer (temporary file + rename) and reader, layout version 4; versions 1 to 3 read too (results.hpp).
#include "miniapp/io/results.hpp"

#include "miniapp/io/fields.hpp"
#include "miniapp/io/version.hpp"
#include "physics/units.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <span>
#include <stdexcept>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

namespace blockres {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
using h5::Element;
constexpr Element f64 = Element::float64, i64 = Element::int64;
// /steps columns every model has, before the per-equation norms and the quantities in place.
const char* const step_fields[] = {"time", "dt", "newton_iterations", "linear_iterations", "cuts"};
const char* const step_units[] = {"day", "day", "1", "1", "1"};
constexpr Element step_elements[] = {f64, f64, i64, i64, i64};
// Datasets of /reports, /steps and /wells that are not model quantities: a model name must not take them.
const char* const fixed_reports[] = {"time", "fields"};
const char* const fixed_wells[] = {"names", "type", "control", "bhp", "at_bhp", "rates"};
const char* const rate_sign = "positive into the reservoir";
// /newton, in NewtonRecord order; every column is dimensionless; counts, indices, flags and codes int64.
const char* const newton_fields[] = {"step",    "attempt",          "iteration",        "linear_iterations",
                                     "forcing", "linear_reduction", "linear_converged", "linear_reason"};
constexpr Element newton_elements[] = {i64, i64, i64, i64, f64, f64, i64, i64};
// /newton's wall-clock split of each row's Newton iteration (s, float64; NaN where not measured, e.g.
// the history rows copied from a file written before they existed). Added without a layout version
// change: readers ignore them, and a file without them reads as before.
const char* const newton_time_fields[] = {"assembly_seconds", "setup_seconds", "solve_seconds", "wait_seconds"};
// /restart columns beside time, dt_next and state: RestartRecord's counters (int64) and times (the
// `_seconds` ones: wall-clock, in s), in this order.
const char* const restart_totals[] = {"steps", "cuts", "newton_iterations", "linear_iterations",
                                      "max_linear_iterations", "newton_rows", "cuts_without_progress",
                                      "wall_seconds", "assembly_seconds", "linear_setup_seconds",
                                      "linear_solve_seconds", "spmv_seconds", "precond_apply_seconds",
                                      "orthogonalization_seconds", "linear_other_seconds"};
constexpr std::size_t restart_counters = 7;  // the first seven of restart_totals
// /well_switches, in WellSwitchRecord order, with their units and elements.
const char* const well_switch_fields[] = {"step", "attempt", "iteration", "time", "well", "to_bhp", "bhp_needed", "bhp_limit"};
const char* const well_switch_units[] = {"1", "1", "1", "day", "1", "1", "bar", "bar"};
constexpr Element well_switch_elements[] = {i64, i64, i64, f64, i64, i64, f64, f64};
// /wells/at_bhp in the padding column of a run without wells (the float64 series hold NaN there).
constexpr double no_well_flag = -1.0;
static_assert(std::size(step_elements) == std::size(step_fields));
static_assert(std::size(newton_elements) == std::size(newton_fields));
static_assert(std::size(well_switch_elements) == std::size(well_switch_fields));
// /newton/linear_reason codes: the position in this list (names as the enumerators, for the file's
// `codes` attribute; to_string(SolveReason) gives log phrases).
constexpr std::pair<SolveReason, const char*> solve_reasons[] = {{SolveReason::converged, "converged"},
                                                                 {SolveReason::max_iterations, "max_iterations"},
                                                                 {SolveReason::breakdown, "breakdown"},
                                                                 {SolveReason::not_finite, "not_finite"}};

double reason_code(SolveReason r)
{
  for (std::size_t c = 0; c < std::size(solve_reasons); ++c)
    if (solve_reasons[c].first == r) return double(c);
  return -1.0;
}

std::string utc_now()
{
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void set_units(hid_t obj, const char* u) { h5::write_attribute(obj, "units", std::string(u)); }

void dataset_with_units(hid_t loc, const std::string& name, const std::vector<double>& v, const char* u,
                        std::vector<hsize_t> dims = {})
{
  h5::write_dataset(loc, name, v, std::move(dims));
  h5::Id ds(H5Dopen2(loc, name.c_str(), H5P_DEFAULT));
  set_units(ds, u);
}

std::string effective_group(const physics::Quantity& q) { return q.group.empty() ? q.name : q.group; }

// Model names become dataset names: none empty, none with an HDF5 path separator, none "." (the
// current group), none twice in one group and none taken by a fixed dataset of that group.
void check_names(const std::vector<std::string>& names, std::span<const char* const> fixed, const std::string& what)
{
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    if (n.empty() || n.find('/') != std::string::npos || n == ".")
      throw std::invalid_argument(fmt::format("result file: the model's {} name '{}' cannot be a dataset name", what, n));
    for (const char* f : fixed)
      if (n == f) throw std::invalid_argument(fmt::format("result file: the model's {} '{}' takes a fixed dataset's name", what, n));
    for (std::size_t j = 0; j < i; ++j)
      if (names[j] == n) throw std::invalid_argument(fmt::format("result file: the model's {} '{}' appears twice", what, n));
  }
}

void describe_quantity(hid_t obj, const physics::Quantity& q)
{
  h5::write_attribute(obj, "units", q.unit);
  h5::write_attribute(obj, "group", effective_group(q));
  h5::write_attribute(obj, "description", q.description);
}

}  // namespace

ResultsWriter::ResultsWriter(const std::filesystem::path& final_path, const RunConfig& cfg, const Provenance& prov,
                             const physics::Grid& grid, const physics::Model& model,
                             const std::vector<double>& initial_in_place, StaticFields static_fields)
    : final_(final_path), temp_(final_path.string() + ".tmp"), grid_(grid), model_(model)
{
  // The model's lists, checked before anything is created.
  const auto fields = model.cell_fields();
  const auto equations = model.equation_names();
  const auto in_place = model.in_place_quantities();
  const auto rates = model.well_rates();
  const auto unknowns = model.unknown_names();
  // (A distributed run's model holds one rank's cells: the writer sizes everything by the whole grid, and the
  // state rows it gets are gathered over the whole grid.)
  if (initial_in_place.size() != in_place.size())
    throw std::invalid_argument(fmt::format("result file: {} initial quantities in place, the model reports {}",
                                            initial_in_place.size(), in_place.size()));
  std::vector<std::string> field_names, in_place_names, rate_names, step_names(std::begin(step_fields),
                                                                                std::end(step_fields));
  for (std::size_t k = 0; k < fields.size(); ++k)
    if (fields[k].in_results) report_fields_.push_back(k), field_names.push_back(fields[k].name);
  for (const auto& q : in_place) in_place_names.push_back(q.name), in_place_scale_.push_back(q.from_si);
  for (const auto& q : rates) rate_names.push_back(q.name), rate_scale_.push_back(q.from_si);
  check_names(field_names, fixed_reports, "cell field");
  check_names(equations, {}, "equation");
  check_names(rate_names, fixed_wells, "well rate");
  for (const auto& e : equations) step_names.push_back("cnv_" + e);
  for (const auto& e : equations) step_names.push_back("mb_" + e);
  step_names.insert(step_names.end(), in_place_names.begin(), in_place_names.end());
  step_names.push_back("equations"), step_names.push_back("in_place");  // the lists
  check_names(step_names, {}, "quantity in place");
  num_equations_ = equations.size();
  num_wells_ = model.wells().size();
  field_names_ = field_names;
  step_names_.assign(step_names.begin(), step_names.end() - 2);  // the series, not the two lists
  rate_names_ = rate_names;

  if (final_.has_parent_path()) std::filesystem::create_directories(final_.parent_path());
  file_.emplace(h5::File::create(temp_));
  const hid_t f = file_->id();
  h5::write_attribute(f, "layout_version", results_layout_version);
  h5::write_attribute(f, "blockres_version", std::string(version_string()));
  h5::write_attribute(f, "git_commit", std::string(git_commit()));
  h5::write_attribute(f, "git_diff_sha256", std::string(git_diff_sha256()));
  h5::write_attribute(f, "backend", prov.backend);
  // The CPU threads and why (issue 20): the affinity mask, a cgroup quota, --threads or OMP_NUM_THREADS.
  h5::write_attribute(f, "threads", std::int64_t(prov.threads));
  h5::write_attribute(f, "threads_reason", prov.threads_reason);
  h5::write_attribute(f, "device", prov.device);
  h5::write_attribute(f, "bsrmv_tuning", prov.bsrmv_tuning);  // issue 29; bsrmv_configs: write_statistics
  // The ranks of a distributed run and its partition (issue 33): results differ from a serial run's by
  // round-off (the subdomain preconditioners, the order of the sums), as another backend's do.
  h5::write_attribute(f, "ranks", std::int64_t(prov.ranks));
  if (!prov.partition.empty()) h5::write_attribute(f, "partition", prov.partition);
  h5::write_attribute(f, "model", std::string(model.type()));
  h5::write_attribute(f, "block_size", std::int64_t(model.block_size()));
  h5::write_attribute(f, "created_utc", utc_now());
  h5::write_attribute(f, "deck_path", cfg.deck_path);
  h5::write_attribute(f, "command_line", prov.command_line);
  h5::write_string_list(f, "unknowns", unknowns);
  {
    h5::Id g = h5::create_group(f, "provenance");
    h5::write_string_dataset(g, "deck", cfg.deck_text);
    h5::write_string_dataset(g, "resolved_deck", cfg.resolved_toml);
  }
  {
    const auto& gs = grid.spec();
    h5::Id g = h5::create_group(f, "grid");
    h5::write_attribute(g, "nx", std::int64_t(gs.nx));
    h5::write_attribute(g, "ny", std::int64_t(gs.ny));
    h5::write_attribute(g, "nz", std::int64_t(gs.nz));
    h5::write_attribute(g, "top", gs.top);
    h5::write_attribute(g, "gravity", std::int64_t(gs.gravity));
    dataset_with_units(g, "dx", gs.dx, "m");
    dataset_with_units(g, "dy", gs.dy, "m");
    dataset_with_units(g, "dz", gs.dz, "m");
  }
  static_cfg_ = &cfg;
  if (static_fields == StaticFields::now) write_static();
  const auto n = static_cast<hsize_t>(grid.num_cells());
  reports_ = h5::create_group(f, "reports");
  rep_time_ = h5::Series(reports_, "time", h5::Shape::column, 1);
  set_units(rep_time_.id(), "day");
  h5::write_string_list(reports_, "fields", field_names);
  for (const std::size_t k : report_fields_) {
    rep_fields_.emplace_back(reports_, fields[k].name, h5::Shape::rows, n, f64, 1);  // [r][n], also for n = 1
    describe_quantity(rep_fields_.back().id(), fields[k]);
  }

  steps_ = h5::create_group(f, "steps");
  h5::write_string_list(steps_, "equations", equations);
  h5::write_string_list(steps_, "in_place", in_place_names);
  for (std::size_t k = 0; k < in_place.size(); ++k)
    h5::write_attribute(steps_, "initial_" + in_place[k].name, initial_in_place[k] * in_place[k].from_si);
  for (std::size_t k = 0; k < std::size(step_fields); ++k) {
    step_series_.emplace_back(steps_, step_fields[k], h5::Shape::column, 1, step_elements[k]);
    set_units(step_series_.back().id(), step_units[k]);
  }
  for (const char* norm : {"cnv_", "mb_"})
    for (const auto& e : equations) {
      step_series_.emplace_back(steps_, norm + e, h5::Shape::column, 1);
      set_units(step_series_.back().id(), "1");
    }
  for (const auto& q : in_place) {
    step_series_.emplace_back(steps_, q.name, h5::Shape::column, 1);
    describe_quantity(step_series_.back().id(), q);
  }

  newton_ = h5::create_group(f, "newton");
  for (std::size_t k = 0; k < std::size(newton_fields); ++k) {
    newton_series_.emplace_back(newton_, newton_fields[k], h5::Shape::column, 1, newton_elements[k]);
    set_units(newton_series_.back().id(), "1");
  }
  {
    // The file explains its own numbers.
    std::string codes;
    for (std::size_t c = 0; c < std::size(solve_reasons); ++c)
      codes += fmt::format("{}{} {}", c ? ", " : "", c, solve_reasons[c].second);
    h5::write_attribute(newton_series_.back().id(), "codes", codes);
  }
  for (const char* name : newton_time_fields) {
    newton_times_.emplace_back(newton_, name, h5::Shape::column, 1);
    set_units(newton_times_.back().id(), "s");
  }

  switches_ = h5::create_group(f, "well_switches");
  for (std::size_t k = 0; k < std::size(well_switch_fields); ++k) {
    switch_series_.emplace_back(switches_, well_switch_fields[k], h5::Shape::column, 1, well_switch_elements[k]);
    set_units(switch_series_.back().id(), well_switch_units[k]);
  }

  wells_ = h5::create_group(f, "wells");
  std::vector<std::string> names, types, controls;
  for (const auto& w : model.wells()) {
    names.push_back(w.name);
    types.push_back(w.injector ? "injector" : "producer");
    controls.push_back(w.rate_control ? "rate" : "bhp");
  }
  h5::write_string_list(wells_, "names", names);
  h5::write_string_list(wells_, "type", types);
  h5::write_string_list(wells_, "control", controls);
  h5::write_string_list(wells_, "rates", rate_names);
  const auto nw = static_cast<hsize_t>(std::max<std::size_t>(names.size(), 1));
  // [s][w], also for one well (and for none: the padding column).
  w_bhp_ = h5::Series(wells_, "bhp", h5::Shape::rows, nw);
  set_units(w_bhp_.id(), "bar");
  for (const auto& q : rates) {
    w_rates_.emplace_back(wells_, q.name, h5::Shape::rows, nw);
    describe_quantity(w_rates_.back().id(), q);
    h5::write_attribute(w_rates_.back().id(), "sign", std::string(rate_sign));
  }
  w_at_bhp_ = h5::Series(wells_, "at_bhp", h5::Shape::rows, nw, i64);
  set_units(w_at_bhp_.id(), "1");

  // What a restart from a report row needs (verification/hdf5_layout.md, /restart).
  restart_ = h5::create_group(f, "restart");
  h5::write_attribute(restart_, "description",
                      std::string("state and time-loop control at every report row, for blockres run --restart"));
  // Simulated times in days like every other (time = the /reports/time row), and the exact seconds
  // the time loop continues from: x / 86400 * 86400 is not always x in floating point.
  rs_time_ = h5::Series(restart_, "time", h5::Shape::column, 1);
  set_units(rs_time_.id(), "day");
  rs_dt_ = h5::Series(restart_, "dt_next", h5::Shape::column, 1);
  set_units(rs_dt_.id(), "day");
  rs_time_seconds_ = h5::Series(restart_, "time_seconds", h5::Shape::column, 1);
  set_units(rs_time_seconds_.id(), "s");
  rs_dt_seconds_ = h5::Series(restart_, "dt_next_seconds", h5::Shape::column, 1);
  set_units(rs_dt_seconds_.id(), "s");
  for (const h5::Series* s : {&rs_time_seconds_, &rs_dt_seconds_})
    h5::write_attribute(s->id(), "description",
                        std::string("exact, for blockres run --restart (the day value times 86400 may differ in "
                                    "the last bit)"));
  rs_state_ = h5::Series(restart_, "state", h5::Shape::rows,
                         static_cast<hsize_t>(grid.num_active()) * model.block_size(), f64, 1);
  set_units(rs_state_.id(), "SI");
  h5::write_attribute(rs_state_.id(), "description",
                      std::string("the state vector (unknowns of /unknowns per active cell, interleaved, SI) of every "
                                  "report row"));
  for (std::size_t k = 0; k < std::size(restart_totals); ++k) {
    rs_totals_.emplace_back(restart_, restart_totals[k], h5::Shape::column, 1, k < restart_counters ? i64 : f64);
    set_units(rs_totals_.back().id(), k < restart_counters ? "1" : "s");
  }
}

void ResultsWriter::write_static()
{
  if (!static_cfg_) throw std::logic_error("result file: the static fields were written already");
  const RunConfig& cfg = *static_cfg_;
  const physics::Grid& grid = grid_;
  const hid_t f = file_->id();
  {
    const auto& gs = grid.spec();
    h5::Id g(H5Gopen2(f, "grid", H5P_DEFAULT));
    std::vector<double> depth(static_cast<std::size_t>(grid.num_cells()));
    std::vector<std::int32_t> active(depth.size());
    for (index_t c = 0; c < grid.num_cells(); ++c) {
      depth[c] = grid.layer_depth(static_cast<int>(c / (gs.nx * gs.ny)));
      active[c] = grid.active_index(c) >= 0;
    }
    dataset_with_units(g, "depth", depth, "m");
    h5::write_dataset(g, "active", active);
  }
  {
    h5::Id g = h5::create_group(f, "static");
    auto mD = [](const std::vector<double>& k) {
      std::vector<double> v(k);
      for (auto& e : v) e /= units::millidarcy;
      return v;
    };
    dataset_with_units(g, "porosity", cfg.rock.porosity, "1");
    dataset_with_units(g, "permx", mD(cfg.rock.kx), "mD");
    dataset_with_units(g, "permy", mD(cfg.rock.ky), "mD");
    dataset_with_units(g, "permz", mD(cfg.rock.kz), "mD");
    std::vector<double> pv(static_cast<std::size_t>(grid.num_cells()), 0.0);
    for (index_t a = 0; a < grid.num_active(); ++a) pv[grid.global_of_active(a)] = grid.pore_volume_ref()[a];
    dataset_with_units(g, "pore_volume", pv, "m3");
  }
  static_cfg_ = nullptr;
}

void ResultsWriter::require_static(const char* what) const
{
  if (static_cfg_) throw std::logic_error(fmt::format("result file: {} before write_static()", what));
}

ResultsWriter::~ResultsWriter()
{
  if (committed_) return;
  file_.reset();  // closes every handle the file still has open
  std::error_code ec;
  std::filesystem::remove(temp_, ec);
}

void ResultsWriter::write_report(double time, const std::vector<double>& x)
{
  const std::size_t expected = std::size_t(grid_.num_active()) * std::size_t(model_.block_size());
  if (x.size() != expected)
    throw std::invalid_argument(fmt::format("ResultsWriter::write_report: state has {} values, expected {}",
                                            x.size(), expected));
  auto values = model_.cell_field_values(x);
  if (values.size() != model_.cell_fields().size())
    throw std::logic_error(fmt::format("model '{}': cell_field_values gives {} fields, cell_fields lists {}",
                                       model_.type(), values.size(), model_.cell_fields().size()));
  const double t = time / units::day;
  rep_time_.append(std::span<const double>(&t, 1));
  // Every field row and the state at once: their chunks are compressed together (h5::Series::append_rows).
  // Each field goes to the full grid in place (report_fields_ are distinct): one field more in memory.
  std::vector<h5::Series*> series;
  std::vector<std::span<const double>> rows;
  for (std::size_t f = 0; f < report_fields_.size(); ++f) {
    auto& v = values[report_fields_[f]];
    v = full_grid_values(grid_, v);
    series.push_back(&rep_fields_[f]);
    rows.emplace_back(v);
  }
  series.push_back(&rs_state_);
  rows.emplace_back(x);
  h5::Series::append_rows(series, rows);
}

void ResultsWriter::write_step(const StepRecord& s)
{
  if (s.norms.cnv.size() != num_equations_ || s.norms.mb.size() != num_equations_ ||
      s.in_place.size() != in_place_scale_.size() || s.wells.size() != num_wells_)
    throw std::invalid_argument(fmt::format("ResultsWriter::write_step: {} / {} norms, {} in place, {} wells; the "
                                            "model has {} equations, {} quantities in place, {} wells",
                                            s.norms.cnv.size(), s.norms.mb.size(), s.in_place.size(), s.wells.size(),
                                            num_equations_, in_place_scale_.size(), num_wells_));
  std::vector<double> values = {s.time / units::day, s.dt / units::day, double(s.newton_iterations),
                                double(s.linear_iterations), double(s.cuts)};
  values.insert(values.end(), s.norms.cnv.begin(), s.norms.cnv.end());
  values.insert(values.end(), s.norms.mb.begin(), s.norms.mb.end());
  for (std::size_t k = 0; k < s.in_place.size(); ++k) values.push_back(s.in_place[k] * in_place_scale_[k]);
  for (std::size_t k = 0; k < step_series_.size(); ++k) step_series_[k].append(std::span<const double>(&values[k], 1));

  const std::size_t nw = std::max<std::size_t>(s.wells.size(), 1);
  std::vector<double> bhp(nw, nan), at(nw, no_well_flag);
  std::vector<std::vector<double>> q(rate_scale_.size(), std::vector<double>(nw, nan));
  for (std::size_t w = 0; w < s.wells.size(); ++w) {
    const auto& wr = s.wells[w];
    if (wr.rates.size() != rate_scale_.size())
      throw std::invalid_argument(fmt::format("ResultsWriter::write_step: well {} has {} rates, the model lists {}",
                                              w, wr.rates.size(), rate_scale_.size()));
    bhp[w] = wr.bhp / units::bar;
    at[w] = wr.at_bhp ? 1.0 : 0.0;
    for (std::size_t k = 0; k < rate_scale_.size(); ++k) q[k][w] = wr.rates[k] * rate_scale_[k];
  }
  w_bhp_.append(bhp);
  for (std::size_t k = 0; k < w_rates_.size(); ++k) w_rates_[k].append(q[k]);
  w_at_bhp_.append(at);
}

void ResultsWriter::write_newton(const NewtonRecord& n)
{
  const double values[] = {double(n.step),      double(n.attempt),  double(n.iteration),
                           double(n.linear_iterations), n.forcing, n.linear_reduction,
                           n.linear_converged ? 1.0 : 0.0, reason_code(n.linear_reason)};
  static_assert(std::size(values) == std::size(newton_fields));
  for (std::size_t k = 0; k < newton_series_.size(); ++k)
    newton_series_[k].append(std::span<const double>(&values[k], 1));
  const double times[] = {n.assembly_seconds, n.setup_seconds, n.solve_seconds, n.wait_seconds};
  static_assert(std::size(times) == std::size(newton_time_fields));
  for (std::size_t k = 0; k < newton_times_.size(); ++k) newton_times_[k].append(std::span<const double>(&times[k], 1));
}

void ResultsWriter::write_well_switch(const WellSwitchRecord& r)
{
  const auto& c = r.change;
  const double values[] = {double(r.step), double(r.attempt), double(r.iteration), r.time / units::day,
                           double(c.well), c.to_bhp ? 1.0 : 0.0, c.reachable ? c.bhp_needed / units::bar : nan,
                           c.bhp_limit / units::bar};
  static_assert(std::size(values) == std::size(well_switch_fields));
  for (std::size_t k = 0; k < switch_series_.size(); ++k)
    switch_series_[k].append(std::span<const double>(&values[k], 1));
}

namespace {

void write_statistics(hid_t file, const RunStatistics& st)
{
  {
    h5::Id g = h5::create_group(file, "statistics");
    h5::write_attribute(g, "steps", std::int64_t(st.steps));
    h5::write_attribute(g, "cuts", std::int64_t(st.cuts));
    h5::write_attribute(g, "newton_iterations", std::int64_t(st.newton_iterations));
    h5::write_attribute(g, "linear_iterations", std::int64_t(st.linear_iterations));
    h5::write_attribute(g, "wall_seconds", st.wall_seconds);
    h5::write_attribute(g, "assembly_seconds", st.assembly_seconds);
    h5::write_attribute(g, "linear_setup_seconds", st.linear_setup_seconds);
    h5::write_attribute(g, "linear_solve_seconds", st.linear_solve_seconds);
    h5::write_attribute(g, "max_linear_iterations", std::int64_t(st.max_linear_iterations));
    h5::write_attribute(g, "spmv_seconds", st.spmv_seconds);
    h5::write_attribute(g, "precond_apply_seconds", st.precond_apply_seconds);
    h5::write_attribute(g, "orthogonalization_seconds", st.orthogonalization_seconds);
    h5::write_attribute(g, "linear_other_seconds", st.linear_other_seconds);
    h5::write_attribute(g, "linear_method", st.linear_method);
    h5::write_attribute(g, "preconditioner", st.preconditioner);
    h5::write_attribute(g, "forcing", st.forcing);
    h5::write_attribute(g, "linear_bytes_per_iteration", st.linear_bytes_per_iteration);
    h5::write_attribute(g, "copy_bandwidth_gb_per_s", st.copy_gb_per_s);
  }
  // Beside bsrmv_tuning at the root; known only once the run has built its matrices (issue 29).
  h5::write_attribute(file, "bsrmv_configs", st.bsrmv_configs);
}

std::vector<double> restart_totals_row(const RestartRecord& r)
{
  const RunStatistics& t = r.totals;
  const std::vector<double> v = {double(t.steps), double(t.cuts), double(t.newton_iterations),
                                 double(t.linear_iterations), double(t.max_linear_iterations), double(r.newton_rows),
                                 double(r.cuts_without_progress), t.wall_seconds, t.assembly_seconds,
                                 t.linear_setup_seconds, t.linear_solve_seconds, t.spmv_seconds,
                                 t.precond_apply_seconds, t.orthogonalization_seconds, t.linear_other_seconds};
  if (v.size() != std::size(restart_totals)) throw std::logic_error("restart_totals_row: columns out of step");
  return v;
}

}  // namespace

void ResultsWriter::write_restart(const RestartRecord& r)
{
  if (rs_time_.rows() + 1 != rs_state_.rows())
    throw std::logic_error("ResultsWriter::write_restart: not right after write_report");
  append_restart_times(r.time, r.dt_next);
  const auto row = restart_totals_row(r);
  for (std::size_t k = 0; k < rs_totals_.size(); ++k) rs_totals_[k].append(std::span<const double>(&row[k], 1));
}

void ResultsWriter::append_restart_times(double time, double dt_next)
{
  const double time_days = time / units::day, dt_days = dt_next / units::day;  // as /reports/time
  rs_time_.append(std::span<const double>(&time_days, 1));
  rs_dt_.append(std::span<const double>(&dt_days, 1));
  rs_time_seconds_.append(std::span<const double>(&time, 1));
  rs_dt_seconds_.append(std::span<const double>(&dt_next, 1));
}

void ResultsWriter::write_setup_replay(const SetupReplay& r)
{
  if (replay_written_) return;
  h5::write_dataset(restart_, "setup_x", r.x);
  h5::write_dataset(restart_, "setup_x0", r.x0);
  h5::write_attribute(restart_, "setup_step", std::int64_t(r.step));
  h5::write_attribute(restart_, "setup_dt", r.dt / units::day);
  h5::write_attribute(restart_, "setup_dt_seconds", r.dt);  // exact, as /restart/time_seconds
  replay_written_ = true;
}

void ResultsWriter::set_restart_source(const std::string& file, std::size_t report, double time)
{
  const hid_t f = file_->id();
  h5::write_attribute(f, "restart_file", file);
  h5::write_attribute(f, "restart_report", std::int64_t(report));
  h5::write_attribute(f, "restart_time", time / units::day);
}

void ResultsWriter::copy_history(const std::filesystem::path& source, std::size_t report, std::size_t steps,
                                 std::size_t newton_rows, bool replay)
{
  if (rep_time_.rows() || step_series_.front().rows() || newton_series_.front().rows())
    throw std::logic_error("ResultsWriter::copy_history: rows were written before");
  const h5::File src = h5::File::open_read(source);
  const hid_t s = src.id();
  const std::int64_t version = read_layout_version(s, source);
  // Lists must match name for name: the rows are copied by dataset name.
  auto same_list = [&](const std::string& ds, const std::vector<std::string>& mine) {
    const auto theirs = h5::read_string_list(s, ds);
    if (theirs != mine)
      throw h5::Error(fmt::format("'{}': '{}' lists other names than this run's model", source.string(), ds));
  };
  same_list("reports/fields", field_names_);
  same_list("wells/rates", rate_names_);
  auto copy = [&](h5::Series& dst, const std::string& ds, std::size_t rows) {
    if (rows == 0) return;
    if (h5::dataset_rows(s, ds) < rows)
      throw h5::Error(fmt::format("'{}': dataset '{}' has fewer than {} rows", source.string(), ds, rows));
    if (dst.row_size() < 64) {  // small rows (steps, wells, /newton): the whole series at once
      const auto d = h5::read_doubles(s, ds);
      const std::size_t width = d.dims.size() == 2 ? std::size_t(d.dims[1]) : 1;
      if (width != dst.row_size())
        throw h5::Error(fmt::format("'{}': dataset '{}' has rows of {} values, this run {}", source.string(), ds,
                                    width, dst.row_size()));
      for (std::size_t r = 0; r < rows; ++r)
        dst.append(std::span<const double>(d.values.data() + r * width, width));
    } else {  // cell fields and states: row by row, never the whole history in memory
      for (std::size_t r = 0; r < rows; ++r) dst.append(h5::read_row(s, ds, r));
    }
  };
  const std::size_t nrep = report + 1;
  copy(rep_time_, "reports/time", nrep);
  for (std::size_t f = 0; f < rep_fields_.size(); ++f) copy(rep_fields_[f], "reports/" + field_names_[f], nrep);
  copy(rs_state_, "restart/state", nrep);
  {
    // In days and exact seconds, whatever the source's version keeps (3: seconds only).
    const RestartTimes times = read_restart_times(s, version, source);
    if (times.time.size() < nrep)
      throw h5::Error(fmt::format("'{}': /restart has fewer than {} rows", source.string(), nrep));
    for (std::size_t r = 0; r < nrep; ++r) append_restart_times(times.time[r], times.dt_next[r]);
  }
  for (std::size_t k = 0; k < rs_totals_.size(); ++k) copy(rs_totals_[k], std::string("restart/") + restart_totals[k], nrep);
  for (std::size_t k = 0; k < step_series_.size(); ++k) copy(step_series_[k], "steps/" + step_names_[k], steps);
  copy(w_bhp_, "wells/bhp", steps);
  for (std::size_t k = 0; k < w_rates_.size(); ++k) copy(w_rates_[k], "wells/" + rate_names_[k], steps);
  copy(w_at_bhp_, "wells/at_bhp", steps);
  for (std::size_t k = 0; k < newton_series_.size(); ++k)
    copy(newton_series_[k], std::string("newton/") + newton_fields[k], newton_rows);
  for (std::size_t k = 0; k < newton_times_.size(); ++k) {
    const std::string ds = std::string("newton/") + newton_time_fields[k];
    if (h5::exists(s, ds)) {
      copy(newton_times_[k], ds, newton_rows);
    } else {  // a file from before the split: its rows were not measured
      const double unknown = std::numeric_limits<double>::quiet_NaN();
      for (std::size_t r = 0; r < newton_rows; ++r) newton_times_[k].append(std::span<const double>(&unknown, 1));
    }
  }
  // Well control switches of the steps up to the restart point (those of later attempts happened
  // after the report). A file without /well_switches had none to copy.
  if (h5::exists(s, "well_switches")) {
    const auto step = h5::read_doubles(s, "well_switches/step").values;
    std::vector<std::vector<double>> cols;
    for (const char* name : well_switch_fields) {
      cols.push_back(h5::read_doubles(s, std::string("well_switches/") + name).values);
      if (cols.back().size() != step.size())
        throw h5::Error(fmt::format("'{}': dataset 'well_switches/{}' has {} rows, 'well_switches/step' {}",
                                    source.string(), name, cols.back().size(), step.size()));
    }
    for (std::size_t r = 0; r < step.size(); ++r)
      if (step[r] <= double(steps))
        for (std::size_t k = 0; k < switch_series_.size(); ++k)
          switch_series_[k].append(std::span<const double>(&cols[k][r], 1));
  }
  if (replay) {
    const auto setup = read_setup_replay(s, version, source);
    if (!setup) throw h5::Error(fmt::format("'{}': no /restart/setup_x to repeat", source.string()));
    write_setup_replay(*setup);
  }
}

void ResultsWriter::write_checkpoint(const std::filesystem::path& path, const RunStatistics& stats)
{
  require_static("a checkpoint");
  if (committed_) throw std::logic_error("ResultsWriter::write_checkpoint after commit");
  file_->flush();  // the temporary file on disk is now a consistent image of everything written
  const std::filesystem::path tmp = path.string() + ".tmp";
  try {
    std::filesystem::copy_file(temp_, tmp, std::filesystem::copy_options::overwrite_existing);
    {
      h5::File copy = h5::File::open_rw(tmp);
      write_statistics(copy.id(), stats);
      h5::write_attribute(copy.id(), "checkpoint", std::int64_t(1));
      copy.close();
    }
    // On disk before it replaces the previous checkpoint: a crash of the node leaves one or the other.
    if (const int fd = ::open(tmp.c_str(), O_RDONLY); fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
    std::filesystem::rename(tmp, path);
  } catch (...) {
    std::error_code ec;  // the previous checkpoint stays; no half-written temporary
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

void ResultsWriter::commit(const RunStatistics& st)
{
  require_static("commit");
  write_statistics(file_->id(), st);
  // Close every dataset and group before the file, then make the result visible at once.
  rep_time_ = {};
  rep_fields_.clear();
  step_series_.clear();
  newton_series_.clear();
  newton_times_.clear();
  switch_series_.clear();
  switches_.reset();
  w_bhp_ = {}, w_at_bhp_ = {};
  w_rates_.clear();
  rs_time_ = {}, rs_dt_ = {}, rs_time_seconds_ = {}, rs_dt_seconds_ = {}, rs_state_ = {};
  rs_totals_.clear();
  reports_.reset(), steps_.reset(), wells_.reset(), newton_.reset(), restart_.reset();
  file_->close();
  file_.reset();
  std::filesystem::rename(temp_, final_);
  committed_ = true;
}

// ---- reading ---------------------------------------------------------------------------------

namespace {

template <class S>
const S& find_named(const std::vector<S>& list, std::string_view name, const char* what)
{
  for (const auto& s : list)
    if (s.name == name) return s;
  std::string known;
  for (const auto& s : list) known += (known.empty() ? "" : ", ") + s.name;
  throw std::out_of_range(fmt::format("the result file has no {} '{}' ({}: {})", what, name, what,
                                      known.empty() ? "none" : known));
}

// The quantities of a layout version 1 or 2 file: the oil_water model's, fixed (names, units and
// descriptions as in verification/hdf5_layout.md; each its own tolerance group).
struct Legacy {
  const char *name, *unit, *description;
};
constexpr Legacy legacy_fields[] = {{"pressure", "bar", "oil-phase pressure"}, {"sw", "1", "water saturation"}};
constexpr Legacy legacy_in_place[] = {{"water_in_place", "surface m3", "water in place"},
                                      {"oil_in_place", "surface m3", "oil in place"}};
constexpr Legacy legacy_rates[] = {{"water_rate", "surface m3/day", "surface water rate"},
                                   {"oil_rate", "surface m3/day", "surface oil rate"}};

std::vector<std::string> legacy_names(std::span<const Legacy> list)
{
  std::vector<std::string> out;
  for (const auto& l : list) out.emplace_back(l.name);
  return out;
}

}  // namespace

const Series& Results::cell_field(std::string_view name) const { return find_named(cell_fields, name, "cell field"); }
const Series& Results::well_rate(std::string_view name) const { return find_named(well_rates, name, "well rate"); }
const StepSeries& Results::in_place_series(std::string_view name) const
{
  return find_named(in_place, name, "quantity in place");
}
bool Results::has_cell_field(std::string_view name) const
{
  return std::any_of(cell_fields.begin(), cell_fields.end(), [&](const Series& s) { return s.name == name; });
}

std::int64_t read_layout_version(hid_t file, const std::filesystem::path& path)
{
  if (H5Aexists(file, "layout_version") <= 0)
    throw h5::Error(fmt::format("'{}' is not a blockres result file (no layout_version attribute)", path.string()));
  const std::int64_t version = h5::read_int_attribute(file, "layout_version");
  if (version < results_oldest_readable_version || version > results_layout_version)
    throw h5::Error(fmt::format("'{}' has result layout version {}, which this blockres does not know (it reads "
                                "versions {} to {}{})",
                                path.string(), version, results_oldest_readable_version, results_layout_version,
                                version > results_layout_version ? "; written by a newer blockres?" : ""));
  return version;
}

RestartTimes read_restart_times(hid_t file, std::int64_t version, const std::filesystem::path& path)
{
  // Version 3 kept /restart/time and dt_next in seconds; version 4 keeps them in days, beside the
  // exact seconds.
  const char* const time = version >= 4 ? "restart/time_seconds" : "restart/time";
  const char* const dt = version >= 4 ? "restart/dt_next_seconds" : "restart/dt_next";
  for (const char* ds : {time, dt})
    if (!h5::exists(file, ds)) throw h5::Error(fmt::format("'{}': no dataset '{}'", path.string(), ds));
  RestartTimes t;
  t.time = h5::read_doubles(file, time).values;
  t.dt_next = h5::read_doubles(file, dt).values;
  if (t.time.size() != t.dt_next.size())
    throw h5::Error(fmt::format("'{}': dataset '{}' has {} rows, '{}' {}", path.string(), dt, t.dt_next.size(), time,
                                t.time.size()));
  return t;
}

std::optional<SetupReplay> read_setup_replay(hid_t file, std::int64_t version, const std::filesystem::path& path)
{
  if (!h5::exists(file, "restart/setup_x")) return std::nullopt;
  h5::Id g = h5::open_group(file, "restart");
  const char* const dt = version >= 4 ? "setup_dt_seconds" : "setup_dt";  // version 3: setup_dt in s
  if (H5Aexists(g, dt) <= 0 || H5Aexists(g, "setup_step") <= 0)
    throw h5::Error(fmt::format("'{}': /restart/setup_x without the attributes setup_step and {}", path.string(), dt));
  SetupReplay r;
  r.step = static_cast<int>(h5::read_int_attribute(g, "setup_step"));
  r.dt = h5::read_double_attribute(g, dt);
  r.x = h5::read_doubles(file, "restart/setup_x").values;
  r.x0 = h5::read_doubles(file, "restart/setup_x0").values;
  return r;
}

Results read_results(const std::filesystem::path& path)
{
  const h5::File file = h5::File::open_read(path);
  const hid_t f = file.id();
  Results r;
  r.layout_version = read_layout_version(f, path);
  const bool v3 = r.layout_version >= 3;
  r.backend = h5::read_string_attribute(f, "backend");
  r.device = h5::read_string_attribute(f, "device");
  r.ranks = H5Aexists(f, "ranks") > 0 ? static_cast<int>(h5::read_int_attribute(f, "ranks")) : 1;
  r.model = h5::read_string_attribute(f, "model");
  if (v3) {
    r.block_size = static_cast<int>(h5::read_int_attribute(f, "block_size"));
    r.unknown_names = h5::read_string_list(f, "unknowns");
  } else {
    r.block_size = 2;
    r.unknown_names = {"p", "sw"};
  }
  r.deck_text = h5::read_string_dataset(f, "provenance/deck");
  r.resolved_deck = h5::read_string_dataset(f, "provenance/resolved_deck");
  {
    h5::Id g = h5::open_group(f, "grid");
    r.nx = static_cast<int>(h5::read_int_attribute(g, "nx"));
    r.ny = static_cast<int>(h5::read_int_attribute(g, "ny"));
    r.nz = static_cast<int>(h5::read_int_attribute(g, "nz"));
  }
  const std::size_t n = std::size_t(r.nx) * r.ny * r.nz;
  auto sized = [&](std::vector<double> v, const std::string& name, std::size_t expected) {
    if (v.size() != expected)
      throw h5::Error(fmt::format("'{}': dataset '{}' has {} values, expected {}", path.string(), name, v.size(),
                                  expected));
    return v;
  };
  r.dx = sized(h5::read_doubles(f, "grid/dx").values, "grid/dx", std::size_t(r.nx));
  r.dy = sized(h5::read_doubles(f, "grid/dy").values, "grid/dy", std::size_t(r.ny));
  r.dz = sized(h5::read_doubles(f, "grid/dz").values, "grid/dz", std::size_t(r.nz));
  r.active = h5::read_ints(f, "grid/active");
  if (r.active.size() != n)
    throw h5::Error(fmt::format("'{}': dataset 'grid/active' has {} values, expected {}", path.string(),
                                r.active.size(), n));
  r.porosity = sized(h5::read_doubles(f, "static/porosity").values, "static/porosity", n);
  r.permx = sized(h5::read_doubles(f, "static/permx").values, "static/permx", n);
  r.permy = sized(h5::read_doubles(f, "static/permy").values, "static/permy", n);
  r.permz = sized(h5::read_doubles(f, "static/permz").values, "static/permz", n);

  // A dataset a list names must be there: say so, rather than HDF5's "not found".
  auto listed = [&](const std::string& dataset, const std::string& list) {
    if (!h5::exists(f, dataset))
      throw h5::Error(fmt::format("'{}': dataset '{}' is listed in '{}' but missing", path.string(), dataset, list));
  };
  auto rows = [&](const std::string& name, std::size_t width) {
    const auto d = h5::read_doubles(f, name);
    const std::size_t nrow = d.dims.empty() ? 0 : d.dims[0];
    if (nrow * width != d.values.size())
      throw h5::Error(fmt::format("'{}': dataset '{}' has an unexpected shape", path.string(), name));
    std::vector<std::vector<double>> out(nrow);
    for (std::size_t i = 0; i < nrow; ++i)
      out[i].assign(d.values.begin() + i * width, d.values.begin() + (i + 1) * width);
    return out;
  };
  auto string_attribute = [&](const std::string& dataset, const char* name) {
    h5::Id ds(H5Dopen2(f, dataset.c_str(), H5P_DEFAULT));
    if (ds.get() < 0) throw h5::Error(fmt::format("'{}': cannot open dataset '{}'", path.string(), dataset));
    return H5Aexists(ds, name) > 0 ? h5::read_string_attribute(ds, name) : std::string();
  };
  // Name, unit, group and description of a v3 quantity dataset; the group defaults to the name.
  auto info = [&](QuantityInfo& q, const std::string& group, const std::string& name) {
    const std::string ds = group + "/" + name;
    q.name = name;
    q.unit = string_attribute(ds, "units");
    q.group = string_attribute(ds, "group");
    if (q.group.empty()) q.group = name;
    q.description = string_attribute(ds, "description");
  };
  auto legacy_info = [](QuantityInfo& q, const Legacy& l) {
    q.name = l.name, q.unit = l.unit, q.group = l.name, q.description = l.description;
  };

  r.report_times = h5::read_doubles(f, "reports/time").values;
  if (v3) {
    for (const auto& name : h5::read_string_list(f, "reports/fields")) {
      listed("reports/" + name, "reports/fields");
      Series s;
      info(s, "reports", name);
      s.rows = rows("reports/" + name, n);
      r.cell_fields.push_back(std::move(s));
    }
  } else {
    for (const auto& l : legacy_fields) {
      Series s;
      legacy_info(s, l);
      s.rows = rows(std::string("reports/") + l.name, n);
      r.cell_fields.push_back(std::move(s));
    }
  }

  r.step_time = h5::read_doubles(f, "steps/time").values;
  r.step_dt = h5::read_doubles(f, "steps/dt").values;
  r.newton_iterations = h5::read_doubles(f, "steps/newton_iterations").values;
  r.linear_iterations = h5::read_doubles(f, "steps/linear_iterations").values;
  r.cuts = h5::read_doubles(f, "steps/cuts").values;
  r.equation_names = v3 ? h5::read_string_list(f, "steps/equations") : std::vector<std::string>{"water", "oil"};
  for (const auto& e : r.equation_names)
    for (auto* norms : {&r.cnv, &r.mb}) {
      StepSeries s;
      s.name = s.group = e, s.unit = "1";
      const std::string ds = std::string("steps/") + (norms == &r.cnv ? "cnv_" : "mb_") + e;
      if (v3) listed(ds, "steps/equations");
      s.description = (norms == &r.cnv ? "CNV norm of equation " : "MB norm of equation ") + e;
      s.values = h5::read_doubles(f, ds).values;
      norms->push_back(std::move(s));
    }
  {
    h5::Id g = h5::open_group(f, "steps");
    const auto names = v3 ? h5::read_string_list(f, "steps/in_place") : legacy_names(legacy_in_place);
    for (std::size_t k = 0; k < names.size(); ++k) {
      StepSeries s;
      const std::string ds = "steps/" + names[k];
      if (v3) {
        listed(ds, "steps/in_place");
        info(s, "steps", names[k]);
      } else {
        legacy_info(s, legacy_in_place[k]);
      }
      s.values = h5::read_doubles(f, ds).values;
      s.initial = h5::read_double_attribute(g, "initial_" + names[k]);
      r.in_place.push_back(std::move(s));
    }
  }

  r.well_names = h5::read_string_list(f, "wells/names");
  if (h5::exists(f, "wells/type")) r.well_types = h5::read_string_list(f, "wells/type");
  if (h5::exists(f, "wells/control")) r.well_controls = h5::read_string_list(f, "wells/control");
  const std::size_t nw = std::max<std::size_t>(r.well_names.size(), 1);
  r.well_bhp = rows("wells/bhp", nw);
  if (h5::exists(f, "wells/at_bhp")) r.well_at_bhp = rows("wells/at_bhp", nw);
  if (r.well_names.empty())  // the padding column: NaN (version 3), -1 in version 4's int64
    for (auto& row : r.well_at_bhp) row.assign(row.size(), nan);
  {
    const auto names = v3 ? h5::read_string_list(f, "wells/rates") : legacy_names(legacy_rates);
    for (std::size_t k = 0; k < names.size(); ++k) {
      Series s;
      const std::string ds = "wells/" + names[k];
      if (v3) {
        listed(ds, "wells/rates");
        info(s, "wells", names[k]);
      } else {
        legacy_info(s, legacy_rates[k]);
      }
      s.rows = rows(ds, nw);
      r.well_rates.push_back(std::move(s));
    }
  }

  // Series that describe the same rows must have as many: a reader (verify) indexes them together.
  auto same_rows = [&](std::size_t rows, std::size_t expected, const std::string& name, const char* of) {
    if (rows != expected)
      throw h5::Error(fmt::format("'{}': dataset '{}' has {} rows, '{}' {}", path.string(), name, rows, of, expected));
  };
  for (const auto& s : r.cell_fields) same_rows(s.rows.size(), r.report_times.size(), "reports/" + s.name, "reports/time");
  const std::size_t ns = r.step_time.size();
  same_rows(r.step_dt.size(), ns, "steps/dt", "steps/time");
  same_rows(r.newton_iterations.size(), ns, "steps/newton_iterations", "steps/time");
  same_rows(r.linear_iterations.size(), ns, "steps/linear_iterations", "steps/time");
  same_rows(r.cuts.size(), ns, "steps/cuts", "steps/time");
  for (const auto& s : r.cnv) same_rows(s.values.size(), ns, "steps/cnv_" + s.name, "steps/time");
  for (const auto& s : r.mb) same_rows(s.values.size(), ns, "steps/mb_" + s.name, "steps/time");
  for (const auto& s : r.in_place) same_rows(s.values.size(), ns, "steps/" + s.name, "steps/time");
  same_rows(r.well_bhp.size(), ns, "wells/bhp", "steps/time");
  if (!r.well_at_bhp.empty()) same_rows(r.well_at_bhp.size(), ns, "wells/at_bhp", "steps/time");
  for (const auto& s : r.well_rates) same_rows(s.rows.size(), ns, "wells/" + s.name, "steps/time");
  {
    h5::Id g = h5::open_group(f, "statistics");
    auto& st = r.statistics;
    st.steps = int(h5::read_int_attribute(g, "steps"));
    st.cuts = int(h5::read_int_attribute(g, "cuts"));
    st.newton_iterations = int(h5::read_int_attribute(g, "newton_iterations"));
    st.linear_iterations = int(h5::read_int_attribute(g, "linear_iterations"));
    st.wall_seconds = h5::read_double_attribute(g, "wall_seconds");
    st.assembly_seconds = h5::read_double_attribute(g, "assembly_seconds");
    st.linear_setup_seconds = h5::read_double_attribute(g, "linear_setup_seconds");
    st.linear_solve_seconds = h5::read_double_attribute(g, "linear_solve_seconds");
    if (r.layout_version >= 2) {
      st.max_linear_iterations = int(h5::read_int_attribute(g, "max_linear_iterations"));
      st.spmv_seconds = h5::read_double_attribute(g, "spmv_seconds");
      st.precond_apply_seconds = h5::read_double_attribute(g, "precond_apply_seconds");
      st.orthogonalization_seconds = h5::read_double_attribute(g, "orthogonalization_seconds");
      st.linear_other_seconds = h5::read_double_attribute(g, "linear_other_seconds");
      st.linear_method = h5::read_string_attribute(g, "linear_method");
      st.preconditioner = h5::read_string_attribute(g, "preconditioner");
      st.forcing = h5::read_string_attribute(g, "forcing");
    }
  }
  if (r.layout_version >= 2) {
    std::vector<double>* columns[] = {&r.newton_step,    &r.newton_attempt,          &r.newton_iteration,
                                      &r.newton_linear_iterations, &r.newton_forcing, &r.newton_linear_reduction,
                                      &r.newton_linear_converged,  &r.newton_linear_reason};
    static_assert(std::size(columns) == std::size(newton_fields));
    for (std::size_t k = 0; k < std::size(columns); ++k) {
      *columns[k] = h5::read_doubles(f, std::string("newton/") + newton_fields[k]).values;
      if (columns[k]->size() != columns[0]->size())
        throw h5::Error(fmt::format("'{}': dataset 'newton/{}' has {} rows, 'newton/step' {}", path.string(),
                                    newton_fields[k], columns[k]->size(), columns[0]->size()));
    }
  }
  if (h5::exists(f, "well_switches")) {  // an addition within version 3 (hdf5_layout.md)
    std::vector<double>* columns[] = {&r.switch_step, &r.switch_attempt, &r.switch_iteration,  &r.switch_time,
                                      &r.switch_well, &r.switch_to_bhp,  &r.switch_bhp_needed, &r.switch_bhp_limit};
    static_assert(std::size(columns) == std::size(well_switch_fields));
    for (std::size_t k = 0; k < std::size(columns); ++k) {
      *columns[k] = h5::read_doubles(f, std::string("well_switches/") + well_switch_fields[k]).values;
      if (columns[k]->size() != columns[0]->size())
        throw h5::Error(fmt::format("'{}': dataset 'well_switches/{}' has {} rows, 'well_switches/step' {}",
                                    path.string(), well_switch_fields[k], columns[k]->size(), columns[0]->size()));
    }
  }
  return r;
}

}  // namespace blockres
