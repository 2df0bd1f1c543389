// OilWaterModel setup (wells, Jacobian pattern, uploads) and dispatch to the backend loops.
#include "physics/oil_water/oil_water_model.hpp"

#include "physics/oil_water/oil_water_kernels.hpp"
#include "physics/dispatch.hpp"
#include "physics/units.hpp"
#include "physics/wells.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

namespace blockres::physics {

static_assert(cuda::reduction_workspace_doubles <= static_cast<int>(Executor::reduction_workspace_doubles),
              "the executor's reduction workspace is too small for the model's reductions");
static_assert(int(control_rate) == int(WellControls::rate) && int(control_bhp) == int(WellControls::bhp) &&
                  int(control_rate_at_limit) == int(WellControls::rate_at_limit) &&
                  int(control_rate_held) == int(WellControls::rate_held),
              "the well kernels' control codes are WellControls'");
static_assert(int(well_injector) == int(WellArrays::injector) && int(well_producer) == int(WellArrays::producer),
              "the well kernels' kind codes are WellArrays'");

namespace {

PhaseParams phase_params(const PhaseSpec& s)
{
  PhaseParams p;
  p.surface_density = s.surface_density;
  p.inv_fvf_ref = 1.0 / s.fvf_ref;
  p.compressibility = s.compressibility;
  p.reference_pressure = s.reference_pressure;
  p.inv_viscosity = 1.0 / s.viscosity;
  return p;
}

}  // namespace

OilWaterModel::OilWaterModel(ExecPtr exec, const Grid& grid, const RockSpec& rock, const FluidSpec& fluid,
                             const std::vector<WellSpec>& wells, bool gravity, const InitialSpec& initial)
    : exec_(std::move(exec)), initial_(initial), well_specs_(wells)
{
  // ---- parameters
  host_params_.water = phase_params(fluid.water);
  host_params_.oil = phase_params(fluid.oil);
  host_params_.rock_compressibility = rock.compressibility;
  host_params_.rock_reference_pressure = rock.reference_pressure;
  host_params_.gravity = gravity ? units::standard_gravity : 0.0;
  const auto& rp = fluid.relperm;
  host_params_.relperm.kind = rp.kind == RelpermSpec::Kind::table ? relperm_table : relperm_corey;
  host_params_.relperm.swc = rp.swc, host_params_.relperm.sor = rp.sor;
  host_params_.relperm.nw = rp.nw, host_params_.relperm.no = rp.no;
  host_params_.relperm.krw_max = rp.krw_max, host_params_.relperm.kro_max = rp.kro_max;
  if (rp.kind == RelpermSpec::Kind::table) {
    if (rp.table.size() < 8 || rp.table.size() % 4 != 0)
      throw std::invalid_argument("relperm table needs at least two rows of (S_w, k_rw, k_ro, P_cow)");
    host_params_.relperm.table = rp.table.data();
    host_params_.relperm.nrows = static_cast<int>(rp.table.size() / 4);
    relperm_table_ = to_executor(exec_, rp.table);
  }
  params_ = host_params_;
  params_.relperm.table = relperm_table_.data();

  // ---- wells: completions (active cells of the column), well indices, no shared cells
  const index_t n = grid.num_active();
  {
    std::vector<const WellGeometry*> geo;
    std::vector<bool> rate;
    for (const auto& w : well_specs_) geo.push_back(&w), rate.push_back(w.control == WellControlMode::rate);
    wells_ = complete_wells(grid, rock, geo, rate);
  }

  // ---- Jacobian pattern: the cell, its TPFA neighbours, and for rate-controlled wells
  // every pair of completed cells (the implicit BHP couples them).
  const Grid::CellFaces cf = grid.cell_faces();  // per cell in face order, as the assembly sums
  pattern_ = jacobian_pattern(grid, cf, wells_);

  // ---- connection arrays with their Jacobian positions
  const CellConnections conn = cell_connections(grid, cf, pattern_);
  pv_ref_ = to_executor(exec_, grid.pore_volume_ref());
  depth_ = to_executor(exec_, grid.depth());
  nbr_ptr_ = to_executor(exec_, cf.ptr);
  nbr_cell_ = to_executor(exec_, conn.cell);
  nbr_trans_ = to_executor(exec_, conn.trans);
  nbr_block_ = to_executor(exec_, conn.block);
  diag_block_ = to_executor(exec_, conn.diag_block);
  row_ptr_ = to_executor(exec_, pattern_.row_ptr);
  mesh_ = MeshView{n,
                   pv_ref_.data(),
                   depth_.data(),
                   nbr_ptr_.data(),
                   nbr_cell_.data(),
                   nbr_trans_.data(),
                   nbr_block_.data(),
                   diag_block_.data(),
                   row_ptr_.data()};
  if (exec_->is_cuda()) {  // each cell's face properties once per assembly (88 or 104 bytes a cell)
    face_props_ = Array<double>(exec_, size64_t(n) * face_props_stored(host_params_));
    mesh_.face_props = face_props_.data();
  }

  // ---- well arrays: the shared ones and the phase weights of each rate target
  std::vector<double> weight;
  for (const auto& s : well_specs_) {
    weight.push_back(s.target == RateTarget::oil ? 0.0 : 1.0);
    weight.push_back(s.target == RateTarget::water ? 0.0 : 1.0);
  }
  well_arrays_ = WellArrays(exec_, well_specs_, wells_, pattern_, well_scratch_per_completion, well_out_per_well);
  well_weight_ = to_executor(exec_, weight);
  well_arrays_.fill_view(wells_view_);
  wells_view_.weight = well_weight_.data();
  own_ = grid.ownership();
  for (int k = 0; k < grid.nz(); ++k) grid_layer_depth_.push_back(grid.layer_depth(k));
  cell_layer_.resize(std::size_t(n));
  for (index_t a = 0; a < n; ++a) cell_layer_[a] = grid.global_of_active(a) / (grid.nx() * grid.ny());
}

std::vector<double> OilWaterModel::initial_state(const InitialSpec& init) const
{
  const index_t n = mesh_.ncell;
  std::vector<double> layer_p(grid_layer_depth_.size(), init.pressure);
  if (init.hydrostatic && host_params_.gravity > 0.0) {
    // dp/dz = rho_o(p) g from the datum, RK4 with steps of at most 0.5 m.
    auto rhs = [&](double p) { return host_params_.oil.surface_density * inv_fvf(host_params_.oil, p) * host_params_.gravity; };
    for (std::size_t k = 0; k < grid_layer_depth_.size(); ++k) {
      const double dz_total = grid_layer_depth_[k] - init.datum_depth;
      const int steps = std::max(1, static_cast<int>(std::ceil(std::abs(dz_total) / 0.5)));
      const double h = dz_total / steps;
      double p = init.pressure;
      for (int s = 0; s < steps; ++s) {
        const double k1 = rhs(p), k2 = rhs(p + 0.5 * h * k1), k3 = rhs(p + 0.5 * h * k2), k4 = rhs(p + h * k3);
        p += h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4);
      }
      layer_p[k] = p;
    }
  }
  std::vector<double> x(std::size_t(n) * 2);
  for (index_t a = 0; a < n; ++a) {
    x[2 * a] = layer_p[cell_layer_[a]];
    x[2 * a + 1] = init.sw;
  }
  return x;
}


void OilWaterModel::begin_step(const Vector& x0)
{
  well_arrays_.controls.begin_attempt();
  BLOCKRES_PHYSICS_DISPATCH(exec_, cpu::prepare_wells(params_, wells_view_, x0.data()),
                            cuda::prepare_wells(exec_->stream(), params_, wells_view_, x0.data()));
}

void OilWaterModel::set_block_storage(std::span<const index_t> storage)
{
  check_block_storage(storage, pattern_.nnzb(), mesh_.block_pos != nullptr);
  move_block_positions(nbr_block_, storage);
  move_block_positions(diag_block_, storage);
  well_arrays_.conn.move_blocks(storage);
  block_pos_ = Array<index_t>(exec_, storage);
  mesh_.block_pos = block_pos_.data();
}

void OilWaterModel::assemble(const Vector& x, const Vector& x0, double dt, Vector& R, Array<double>& J)
{
  if (J.size() < size64_t(pattern_.nnzb()) * bs * bs || R.size() != size64_t(mesh_.ncell) * bs)
    throw std::invalid_argument("OilWaterModel::assemble: Jacobian values or residual do not match the model");
  BLOCKRES_PHYSICS_DISPATCH(exec_,
      cpu::assemble(params_, mesh_, wells_view_, x.data(), x0.data(), dt, R.data(), J.data()),
      cuda::assemble(exec_->stream(), params_, mesh_, wells_view_, x.data(), x0.data(), dt, R.data(), J.data()));
  if (!well_arrays_.controls.any_rate_well()) return;
  const auto h = well_arrays_.out.to_host();  // a few values per well
  std::vector<WellControls::Outcome> outcome(wells_.size());
  for (std::size_t w = 0; w < outcome.size(); ++w) {
    const double* o = h.data() + w * well_out_per_well;
    outcome[w] = {o[3] != 0.0, o[4] != 0.0, o[5]};
  }
  well_arrays_.controls.after_assembly(outcome);
}

ConvergenceNorms OilWaterModel::convergence(const Vector& x, const Vector& R, double dt) const
{
  double t[num_norm_terms];
  MeshView owned = mesh_;  // the owned cells (a distributed run's ghosts are another rank's)
  owned.ncell = own_.owned;
  BLOCKRES_PHYSICS_DISPATCH(exec_, cpu::norm_terms(params_, owned, x.data(), R.data(), t),
                            cuda::norm_terms(exec_->stream(), params_, owned, x.data(), R.data(), t,
                                             exec_->reduction_workspace()));
  own_.comm->max(std::span<double>(t, 2));  // CNV maxima, then the sums
  own_.comm->sum(std::span<double>(t + 2, num_norm_terms - 2));
  ConvergenceNorms c;
  c.cnv.resize(num_phases), c.mb.resize(num_phases);
  const double ncell = static_cast<double>(own_.whole);
  for (int ph = 0; ph < num_phases; ++ph) {
    const double b_avg = t[5 + ph] / ncell;
    c.cnv[ph] = b_avg * dt * t[ph];
    c.mb[ph] = b_avg * dt * std::abs(t[2 + ph]) / t[4];
    c.finite = c.finite && std::isfinite(c.cnv[ph]) && std::isfinite(c.mb[ph]);
  }
  return c;
}

void OilWaterModel::accumulation_blocks(const Vector& x, double dt, Vector& C) const
{
  const size64_t n = size64_t(mesh_.ncell);
  if (x.size() != n * bs || C.size() != n * bs * bs)
    throw std::invalid_argument("OilWaterModel::accumulation_blocks: vector sizes do not match the model");
  BLOCKRES_PHYSICS_DISPATCH(exec_, cpu::accumulation_blocks(params_, mesh_, x.data(), dt, C.data()),
                            cuda::accumulation_blocks(exec_->stream(), params_, mesh_, x.data(), dt, C.data()));
}

void OilWaterModel::update(Vector& x, const Vector& dx, const UpdateLimits& lim) const
{
  BLOCKRES_PHYSICS_DISPATCH(exec_, cpu::update(mesh_.ncell, x.data(), dx.data(), lim.max_ds, lim.max_dp_rel),
                            cuda::update(exec_->stream(), mesh_.ncell, x.data(), dx.data(), lim.max_ds, lim.max_dp_rel));
}

std::vector<double> OilWaterModel::in_place(const Vector& x) const
{
  double t[2];
  MeshView owned = mesh_;
  owned.ncell = own_.owned;
  BLOCKRES_PHYSICS_DISPATCH(exec_, cpu::in_place(params_, owned, x.data(), t),
                            cuda::in_place(exec_->stream(), params_, owned, x.data(), t, exec_->reduction_workspace()));
  own_.comm->sum(std::span<double>(t, 2));
  return {t[0], t[1]};
}

std::vector<Quantity> OilWaterModel::in_place_quantities() const
{
  return {{"water_in_place", "surface m3", 1.0, "water in place after every time step", "", true},
          {"oil_in_place", "surface m3", 1.0, "oil in place after every time step", "", true}};
}

std::vector<WellResult> OilWaterModel::well_results() const
{
  const auto h = well_arrays_.out.to_host();
  std::vector<WellResult> r(wells_.size());
  for (std::size_t w = 0; w < r.size(); ++w) {
    const double* o = h.data() + w * well_out_per_well;
    r[w] = {o[0], {o[1], o[2]}, o[3] != 0.0};
  }
  return r;
}

std::vector<Quantity> OilWaterModel::well_rates() const
{
  return {{"water_rate", "surface m3/day", 1.0 / units::m3_per_day,
           "water rate of every well after every time step (positive into the reservoir)", "", true},
          {"oil_rate", "surface m3/day", 1.0 / units::m3_per_day,
           "oil rate of every well after every time step (positive into the reservoir)", "", true}};
}

std::vector<Quantity> OilWaterModel::cell_fields() const
{
  return {{"pressure", "bar", 1.0 / units::bar, "cell (oil) pressure at every report step", "", true},
          {"sw", "1", 1.0, "cell water saturation at every report step", "", true},
          {"so", "1", 1.0, "cell oil saturation 1 - sw", "", false}};
}

std::vector<std::vector<double>> OilWaterModel::cell_field_values(std::span<const double> x) const
{
  // Cell by cell: any whole number of cells (a rank's, or a distributed run's state gathered for the files).
  const std::size_t n = x.size() / bs;
  if (x.size() != n * bs)
    throw std::invalid_argument(fmt::format("oil_water: state has {} values, not {} per cell", x.size(), bs));
  std::vector<std::vector<double>> f(3, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i) {
    f[0][i] = x[bs * i] * (1.0 / units::bar);
    f[1][i] = x[bs * i + 1];
    f[2][i] = 1.0 - x[bs * i + 1];
  }
  return f;
}

std::string OilWaterModel::well_summary(const std::vector<WellResult>& wr) const
{
  std::string s;
  for (std::size_t w = 0; w < wr.size() && w < wells_.size(); ++w) {
    const double q = (wells_[w].injector ? 1.0 : -1.0) * (wr[w].rates[0] + wr[w].rates[1]) / units::m3_per_day;
    s += fmt::format("  {} {:.1f} bar {:.1f} m3/d", wells_[w].name, wr[w].bhp / units::bar, q);
  }
  return s;
}

}  // namespace blockres::physics
