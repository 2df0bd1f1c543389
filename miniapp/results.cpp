// HDF5 result writer (temporary file + rename) and reader, layout version 2 (results.hpp).
#include "miniapp/results.hpp"

#include "miniapp/fields.hpp"
#include "miniapp/version.hpp"
#include "physics/units.hpp"

#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace blockres {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
const char* const step_fields[] = {"time", "dt", "newton_iterations", "linear_iterations", "cuts",
                                   "cnv_water", "cnv_oil", "mb_water", "mb_oil", "water_in_place", "oil_in_place"};
const char* const step_units[] = {"day", "day", "1", "1", "1", "1", "1", "1", "1", "surface m3", "surface m3"};
// /newton, in NewtonRecord order; every column is dimensionless.
const char* const newton_fields[] = {"step",    "attempt",          "iteration",        "linear_iterations",
                                     "forcing", "linear_reduction", "linear_converged", "linear_reason"};
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

}  // namespace

ResultsWriter::ResultsWriter(const std::filesystem::path& final_path, const RunConfig& cfg, const Provenance& prov,
                             const physics::Grid& grid, const physics::OilWaterModel& model,
                             std::array<double, 2> initial_in_place)
    : final_(final_path), temp_(final_path.string() + ".tmp"), grid_(grid)
{
  if (final_.has_parent_path()) std::filesystem::create_directories(final_.parent_path());
  file_.emplace(h5::File::create(temp_));
  const hid_t f = file_->id();
  h5::write_attribute(f, "layout_version", results_layout_version);
  h5::write_attribute(f, "blockres_version", std::string(version_string()));
  h5::write_attribute(f, "git_commit", std::string(git_commit()));
  h5::write_attribute(f, "backend", prov.backend);
  h5::write_attribute(f, "device", prov.device);
  h5::write_attribute(f, "model", cfg.model);
  h5::write_attribute(f, "created_utc", utc_now());
  h5::write_attribute(f, "deck_path", cfg.deck_path);
  h5::write_attribute(f, "command_line", prov.command_line);
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
  const auto n = static_cast<hsize_t>(grid.num_cells());
  reports_ = h5::create_group(f, "reports");
  rep_time_ = h5::Series(reports_, "time", 1);
  rep_p_ = h5::Series(reports_, "pressure", n, 1);
  rep_sw_ = h5::Series(reports_, "sw", n, 1);
  set_units(rep_time_.id(), "day");
  set_units(rep_p_.id(), "bar");
  set_units(rep_sw_.id(), "1");

  steps_ = h5::create_group(f, "steps");
  h5::write_attribute(steps_, "initial_water_in_place", initial_in_place[0]);
  h5::write_attribute(steps_, "initial_oil_in_place", initial_in_place[1]);
  for (std::size_t k = 0; k < std::size(step_fields); ++k) {
    step_series_.emplace_back(steps_, step_fields[k], 1);
    set_units(step_series_.back().id(), step_units[k]);
  }

  newton_ = h5::create_group(f, "newton");
  for (const char* name : newton_fields) {
    newton_series_.emplace_back(newton_, name, 1);
    set_units(newton_series_.back().id(), "1");
  }
  {
    // The file explains its own numbers.
    std::string codes;
    for (std::size_t c = 0; c < std::size(solve_reasons); ++c)
      codes += fmt::format("{}{} {}", c ? ", " : "", c, solve_reasons[c].second);
    h5::write_attribute(newton_series_.back().id(), "codes", codes);
  }

  wells_ = h5::create_group(f, "wells");
  std::vector<std::string> names, types, controls;
  for (const auto& w : model.wells()) {
    names.push_back(w.spec.name);
    types.push_back(w.spec.kind == physics::WellKind::injector ? "injector" : "producer");
    controls.push_back(w.spec.control == physics::WellControlMode::rate ? "rate" : "bhp");
  }
  h5::write_string_list(wells_, "names", names);
  h5::write_string_list(wells_, "type", types);
  h5::write_string_list(wells_, "control", controls);
  const auto nw = static_cast<hsize_t>(std::max<std::size_t>(names.size(), 1));
  w_bhp_ = h5::Series(wells_, "bhp", nw);
  w_qw_ = h5::Series(wells_, "water_rate", nw);
  w_qo_ = h5::Series(wells_, "oil_rate", nw);
  w_at_bhp_ = h5::Series(wells_, "at_bhp", nw);
  set_units(w_bhp_.id(), "bar");
  set_units(w_qw_.id(), "surface m3/day, positive into the reservoir");
  set_units(w_qo_.id(), "surface m3/day, positive into the reservoir");
  set_units(w_at_bhp_.id(), "1");
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
  const double t = time / units::day;
  rep_time_.append(std::span<const double>(&t, 1));
  rep_p_.append(full_grid_field(grid_, x, 0, 2, 1.0 / units::bar));
  rep_sw_.append(full_grid_field(grid_, x, 1, 2, 1.0));
}

void ResultsWriter::write_step(const StepRecord& s)
{
  const double values[] = {s.time / units::day,  s.dt / units::day, double(s.newton_iterations),
                           double(s.linear_iterations), double(s.cuts), s.norms.cnv[0], s.norms.cnv[1],
                           s.norms.mb[0], s.norms.mb[1], s.in_place[0], s.in_place[1]};
  for (std::size_t k = 0; k < step_series_.size(); ++k) step_series_[k].append(std::span<const double>(&values[k], 1));
  std::vector<double> bhp, qw, qo, at;
  for (const auto& w : s.wells) {
    bhp.push_back(w.bhp / units::bar);
    qw.push_back(w.q_water / units::m3_per_day);
    qo.push_back(w.q_oil / units::m3_per_day);
    at.push_back(w.at_bhp ? 1.0 : 0.0);
  }
  if (bhp.empty()) bhp = qw = qo = at = {nan};
  w_bhp_.append(bhp);
  w_qw_.append(qw);
  w_qo_.append(qo);
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
}

void ResultsWriter::commit(const RunStatistics& st)
{
  {
    h5::Id g = h5::create_group(file_->id(), "statistics");
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
  }
  // Close every dataset and group before the file, then make the result visible at once.
  rep_time_ = {}, rep_p_ = {}, rep_sw_ = {};
  step_series_.clear();
  newton_series_.clear();
  w_bhp_ = {}, w_qw_ = {}, w_qo_ = {}, w_at_bhp_ = {};
  reports_.reset(), steps_.reset(), wells_.reset(), newton_.reset();
  file_->close();
  file_.reset();
  std::filesystem::rename(temp_, final_);
  committed_ = true;
}

Results read_results(const std::filesystem::path& path)
{
  const h5::File file = h5::File::open_read(path);
  const hid_t f = file.id();
  Results r;
  if (H5Aexists(f, "layout_version") <= 0)
    throw h5::Error(fmt::format("'{}' is not a blockres result file (no layout_version attribute)", path.string()));
  r.layout_version = h5::read_int_attribute(f, "layout_version");
  if (r.layout_version < results_oldest_readable_version || r.layout_version > results_layout_version)
    throw h5::Error(fmt::format("'{}' has result layout version {}, which this blockres does not know (it reads "
                                "versions {} to {}{})",
                                path.string(), r.layout_version, results_oldest_readable_version,
                                results_layout_version,
                                r.layout_version > results_layout_version ? "; written by a newer blockres?" : ""));
  r.backend = h5::read_string_attribute(f, "backend");
  r.device = h5::read_string_attribute(f, "device");
  r.model = h5::read_string_attribute(f, "model");
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
  r.report_times = h5::read_doubles(f, "reports/time").values;
  r.pressure = rows("reports/pressure", n);
  r.sw = rows("reports/sw", n);
  r.step_time = h5::read_doubles(f, "steps/time").values;
  r.step_dt = h5::read_doubles(f, "steps/dt").values;
  r.newton_iterations = h5::read_doubles(f, "steps/newton_iterations").values;
  r.linear_iterations = h5::read_doubles(f, "steps/linear_iterations").values;
  r.water_in_place = h5::read_doubles(f, "steps/water_in_place").values;
  r.oil_in_place = h5::read_doubles(f, "steps/oil_in_place").values;
  {
    h5::Id g = h5::open_group(f, "steps");
    r.initial_water_in_place = h5::read_double_attribute(g, "initial_water_in_place");
    r.initial_oil_in_place = h5::read_double_attribute(g, "initial_oil_in_place");
  }
  r.well_names = h5::read_string_list(f, "wells/names");
  const std::size_t nw = std::max<std::size_t>(r.well_names.size(), 1);
  r.well_bhp = rows("wells/bhp", nw);
  r.well_water_rate = rows("wells/water_rate", nw);
  r.well_oil_rate = rows("wells/oil_rate", nw);
  // Series that describe the same rows must have as many: a reader (verify) indexes them together.
  auto same_rows = [&](std::size_t rows, std::size_t expected, const char* name, const char* of) {
    if (rows != expected)
      throw h5::Error(fmt::format("'{}': dataset '{}' has {} rows, '{}' {}", path.string(), name, rows, of, expected));
  };
  same_rows(r.pressure.size(), r.report_times.size(), "reports/pressure", "reports/time");
  same_rows(r.sw.size(), r.report_times.size(), "reports/sw", "reports/time");
  const std::size_t ns = r.step_time.size();
  same_rows(r.step_dt.size(), ns, "steps/dt", "steps/time");
  same_rows(r.newton_iterations.size(), ns, "steps/newton_iterations", "steps/time");
  same_rows(r.linear_iterations.size(), ns, "steps/linear_iterations", "steps/time");
  same_rows(r.water_in_place.size(), ns, "steps/water_in_place", "steps/time");
  same_rows(r.oil_in_place.size(), ns, "steps/oil_in_place", "steps/time");
  same_rows(r.well_bhp.size(), ns, "wells/bhp", "steps/time");
  same_rows(r.well_water_rate.size(), ns, "wells/water_rate", "steps/time");
  same_rows(r.well_oil_rate.size(), ns, "wells/oil_rate", "steps/time");
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
  return r;
}

}  // namespace blockres
