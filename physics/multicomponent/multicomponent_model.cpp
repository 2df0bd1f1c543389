// MulticomponentModel setup (faces with diffusion coefficients, wells, Jacobian pattern, uploads),
// initial state, quantities, and dispatch to the backend loops.
//
// Executor memory per active cell: static data 2 doubles (V_p,ref, depth) + 1 index (diagonal
// block) + per connection 2 doubles and 2 indices; scratch props_stride(nc) = 7 + 3 nc doubles
// (pass-1 records) + 2 doubles (reductions). The Jacobian (nnzb nc^2 doubles) and the vectors
// belong to the caller.
#include "physics/multicomponent/multicomponent_model.hpp"
#include "kernels/parallel_cpu.hpp"

#include "physics/multicomponent/multicomponent_kernels.hpp"
#include "physics/dispatch.hpp"
#include "physics/units.hpp"
#include "physics/wells.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

namespace blockres::physics {

using namespace multicomponent;

static_assert(int(control_rate) == int(WellControls::rate) && int(control_bhp) == int(WellControls::bhp) &&
                  int(control_rate_at_limit) == int(WellControls::rate_at_limit) &&
                  int(control_rate_held) == int(WellControls::rate_held),
              "the well kernels' control codes are WellControls'");
static_assert(int(well_injector) == int(WellArrays::injector) && int(well_producer) == int(WellArrays::producer),
              "the well kernels' kind codes are WellArrays'");

namespace {

}  // namespace

MulticomponentModel::MulticomponentModel(ExecPtr exec, const Grid& grid, const RockSpec& rock, bool gravity,
                                         const MulticomponentInput& input)
    : exec_(std::move(exec)), nc_(input.components.nc()), comps_(input.components), initial_(input.initial),
      well_specs_(input.wells)
{
  const int nc = nc_;
  if (nc < 1 || nc > max_components)
    throw std::invalid_argument(fmt::format("multicomponent: {} components (must be 1..{})", nc, max_components));
  const auto sized = [&](const std::vector<double>& v, std::size_t n, const char* what) {
    if (v.size() != n) throw std::invalid_argument(fmt::format("multicomponent: {} has {} values, expected {}", what, v.size(), n));
  };
  sized(comps_.density, nc, "density");
  sized(comps_.compressibility, nc, "compressibility");
  sized(comps_.viscosity, nc, "viscosity");
  if (comps_.reactions.empty()) comps_.reactions.assign(std::size_t(nc) * nc, 0.0);
  sized(comps_.reactions, std::size_t(nc) * nc, "reactions");
  if (initial_.composition.empty()) throw std::invalid_argument("multicomponent: no initial composition");
  if (initial_.composition.size() != 1 && initial_.composition.size() != std::size_t(grid.nz()))
    throw std::invalid_argument("multicomponent: initial composition must be one or one per layer");
  for (const auto& c : initial_.composition) sized(c, nc, "an initial composition");
  for (const auto& w : well_specs_)
    if (w.kind == WellKind::injector) sized(w.composition, nc, "an injected composition");

  // ---- parameters
  host_rho_ref_ = comps_.density;
  host_comp_ = comps_.compressibility;
  for (const double mu : comps_.viscosity) host_ln_mu_.push_back(std::log(mu));
  host_K_ = comps_.reactions;
  rho_ref_ = to_executor(exec_, host_rho_ref_);
  comp_ = to_executor(exec_, host_comp_);
  ln_mu_ = to_executor(exec_, host_ln_mu_);
  K_ = to_executor(exec_, host_K_);
  host_params_.nc = nc;
  host_params_.gravity = gravity ? units::standard_gravity : 0.0;
  host_params_.rock_compressibility = rock.compressibility;
  host_params_.rock_reference_pressure = rock.reference_pressure;
  host_params_.reference_pressure = comps_.reference_pressure;
  params_ = host_params_;
  host_params_.rho_ref = host_rho_ref_.data();
  host_params_.compressibility = host_comp_.data();
  host_params_.ln_mu = host_ln_mu_.data();
  host_params_.K = host_K_.data();
  params_.rho_ref = rho_ref_.data();
  params_.compressibility = comp_.data();
  params_.ln_mu = ln_mu_.data();
  params_.K = K_.data();

  // ---- wells
  {
    std::vector<const WellGeometry*> geo;
    std::vector<bool> rate;
    for (const auto& w : well_specs_) {
      geo.push_back(&w);
      rate.push_back(w.control == WellControlMode::rate);
    }
    wells_ = complete_wells(grid, rock, geo, rate);
  }

  // ---- faces: transmissibility and diffusion coefficient D_ij = phi_face D_m A / d, with
  // phi_face the arithmetic mean of the two porosities, A the shared face area and d the distance
  // between the cell centres. Faces of zero transmissibility are not in the grid, so they carry
  // no diffusion either.
  const index_t n = grid.num_active();
  const GridSpec& g = grid.spec();
  const Grid::CellFaces cf = grid.cell_faces();  // per cell in face order, as the assembly sums
  face_diff_.resize(grid.faces().size());
  const auto nfaces = static_cast<std::int64_t>(grid.faces().size());
#pragma omp parallel for schedule(static) if (kernels::cpu::parallel_worth(size64_t(nfaces)))
  for (std::int64_t f = 0; f < nfaces; ++f) {
    const auto& face = grid.faces()[std::size_t(f)];
    const index_t ga = grid.global_of_active(face.a), gb = grid.global_of_active(face.b);
    const int ia = int(ga % g.nx), ja = int((ga / g.nx) % g.ny), ka = int(ga / (index_t(g.nx) * g.ny));
    const int ib = int(gb % g.nx), jb = int((gb / g.nx) % g.ny), kb = int(gb / (index_t(g.nx) * g.ny));
    double area, dist;
    if (ia != ib)
      area = g.dy[ja] * g.dz[ka], dist = 0.5 * (g.dx[ia] + g.dx[ib]);
    else if (ja != jb)
      area = g.dx[ia] * g.dz[ka], dist = 0.5 * (g.dy[ja] + g.dy[jb]);
    else
      area = g.dx[ia] * g.dy[ja], dist = 0.5 * (g.dz[ka] + g.dz[kb]);
    const double phi_face = 0.5 * (rock.porosity[ga] + rock.porosity[gb]);
    face_diff_[std::size_t(f)] = phi_face * comps_.diffusion * area / dist;
  }

  // ---- Jacobian pattern: the cell, its neighbours, and for rate-controlled wells every pair of
  // completed cells (the implicit BHP couples them).
  pattern_ = jacobian_pattern(grid, cf, wells_);

  // ---- connection arrays with their Jacobian positions; blocks no face writes
  const CellConnections conn = cell_connections(grid, cf, pattern_);
  HostBuffer<double> nbr_diff(cf.face.size());
  std::vector<index_t> extra_ptr(static_cast<std::size_t>(n) + 1, 0), extra_block;
  // The CUDA assembly stages a row's faces in shared memory (multicomponent_cuda.cuh).
  for (index_t i = 0; i < n; ++i)
    if (cf.ptr[i + 1] - cf.ptr[i] > multicomponent::max_shared_faces)
      throw std::invalid_argument(fmt::format("multicomponent: cell {} has {} faces, more than the {} of a Cartesian grid",
                                              i, cf.ptr[i + 1] - cf.ptr[i], multicomponent::max_shared_faces));
  // A row's blocks that are neither the diagonal nor a face's (the wells' couplings): counted, then
  // listed, per row in parallel.
  const auto extra = [&](index_t i, index_t* out) {
    index_t m = 0;
    for (index_t b = pattern_.row_ptr[i]; b < pattern_.row_ptr[i + 1]; ++b) {
      const index_t c = pattern_.col_ind[b];
      const bool face = std::any_of(conn.cell.begin() + cf.ptr[i], conn.cell.begin() + cf.ptr[i + 1],
                                    [&](index_t j) { return j == c; });
      if (c != i && !face) {
        if (out) out[m] = b;
        ++m;
      }
    }
    return m;
  };
  const bool par = kernels::cpu::parallel_worth(size64_t(n));
#pragma omp parallel for schedule(static) if (par)
  for (index_t i = 0; i < n; ++i) {
    for (index_t q = cf.ptr[i]; q < cf.ptr[i + 1]; ++q) nbr_diff[q] = face_diff_[cf.face[q]];
    extra_ptr[i + 1] = extra(i, nullptr);
  }
  for (index_t i = 0; i < n; ++i) extra_ptr[i + 1] += extra_ptr[i];
  extra_block.resize(std::size_t(extra_ptr[n]));
#pragma omp parallel for schedule(static) if (par)
  for (index_t i = 0; i < n; ++i) extra(i, extra_block.data() + extra_ptr[i]);
  own_ = grid.ownership();
  host_pv_ref_ = grid.pore_volume_ref();
  host_depth_ = grid.depth();
  pv_ref_ = to_executor(exec_, host_pv_ref_);
  depth_ = to_executor(exec_, host_depth_);
  nbr_ptr_ = to_executor(exec_, cf.ptr);
  nbr_cell_ = to_executor(exec_, conn.cell);
  nbr_trans_ = to_executor(exec_, conn.trans);
  nbr_diff_ = to_executor(exec_, nbr_diff);
  nbr_block_ = to_executor(exec_, conn.block);
  diag_block_ = to_executor(exec_, conn.diag_block);
  extra_ptr_ = to_executor(exec_, extra_ptr);
  extra_block_ = to_executor(exec_, extra_block);
  mesh_ = Mesh{n,
               pv_ref_.data(),
               depth_.data(),
               nbr_ptr_.data(),
               nbr_cell_.data(),
               nbr_trans_.data(),
               nbr_diff_.data(),
               nbr_block_.data(),
               diag_block_.data(),
               extra_ptr_.data(),
               extra_block_.data()};
  props_ = Array<double>(exec_, std::max<size64_t>(1, size64_t(n) * props_stride(nc)));
  cell_scratch_ = Array<double>(exec_, std::max<size64_t>(1, 2 * size64_t(n)));

  // ---- well arrays: the shared ones and the injected composition of each injector
  std::vector<double> inj_comp;
  for (const auto& s : well_specs_)
    for (int k = 0; k < nc; ++k) inj_comp.push_back(s.kind == WellKind::injector ? s.composition[k] : 0.0);
  well_arrays_ = WellArrays(exec_, well_specs_, wells_, pattern_, well_scratch_per_completion, well_out_stride(nc));
  well_inj_comp_ = to_executor(exec_, inj_comp);
  well_arrays_.fill_view(wells_view_);
  wells_view_.ncompletion = well_arrays_.conn.completions();
  wells_view_.inj_comp = well_inj_comp_.data();

  double top = g.top;
  for (int k = 0; k < grid.nz(); ++k) {
    layer_top_.push_back(top);
    layer_depth_.push_back(grid.layer_depth(k));
    top += g.dz[k];
  }
  layer_top_.push_back(top);  // bottom of the grid
  cell_layer_.resize(std::size_t(n));
  for (index_t a = 0; a < n; ++a) cell_layer_[a] = int(grid.global_of_active(a) / (index_t(g.nx) * g.ny));
}

std::vector<std::string> MulticomponentModel::unknown_names() const
{
  std::vector<std::string> v{"p"};
  for (int k = 0; k + 1 < nc_; ++k) v.push_back("x_" + comps_.names[k]);
  return v;
}

std::vector<std::string> MulticomponentModel::equation_names() const { return comps_.names; }

std::vector<double> MulticomponentModel::initial_state() const
{
  const int nz = static_cast<int>(layer_depth_.size());
  const auto& comps = initial_.composition;
  auto layer_comp = [&](int k) -> const std::vector<double>& { return comps.size() == 1 ? comps[0] : comps[std::clamp(k, 0, nz - 1)]; };
  std::vector<double> layer_p(static_cast<std::size_t>(nz), initial_.pressure);
  if (initial_.hydrostatic && host_params_.gravity > 0.0) {
    // dp/dz = rho(p, composition at z) g from the datum, RK4 with steps of at most 0.5 m, the path
    // split at layer boundaries (the composition may jump there).
    auto layer_at = [&](double z) {
      int k = 0;
      while (k + 1 < nz && z >= layer_top_[k + 1]) ++k;
      return k;
    };
    auto integrate = [&](double p, double z0, double z1) {
      std::vector<double> pts{z0};
      for (int k = 1; k < nz; ++k)
        if ((layer_top_[k] - z0) * (layer_top_[k] - z1) < 0.0) pts.push_back(layer_top_[k]);
      pts.push_back(z1);
      if (z1 < z0) std::sort(pts.begin() + 1, pts.end() - 1, std::greater<>());
      else std::sort(pts.begin() + 1, pts.end() - 1);
      for (std::size_t s = 0; s + 1 < pts.size(); ++s) {
        const std::vector<double>& y = layer_comp(layer_at(0.5 * (pts[s] + pts[s + 1])));
        auto rhs = [&](double pp) { return mixture_density(host_params_, y.data(), pp) * host_params_.gravity; };
        const double dz = pts[s + 1] - pts[s];
        const int steps = std::max(1, static_cast<int>(std::ceil(std::abs(dz) / 0.5)));
        const double h = dz / steps;
        for (int q = 0; q < steps; ++q) {
          const double k1 = rhs(p), k2 = rhs(p + 0.5 * h * k1), k3 = rhs(p + 0.5 * h * k2), k4 = rhs(p + h * k3);
          p += h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4);
        }
      }
      return p;
    };
    for (int k = 0; k < nz; ++k) layer_p[k] = integrate(initial_.pressure, initial_.datum_depth, layer_depth_[k]);
  }
  const index_t n = mesh_.ncell;
  std::vector<double> x(static_cast<std::size_t>(n) * nc_);
  for (index_t a = 0; a < n; ++a) {
    const int k = cell_layer_[a];
    x[std::size_t(a) * nc_] = layer_p[k];
    const auto& y = layer_comp(k);
    for (int c = 0; c + 1 < nc_; ++c) x[std::size_t(a) * nc_ + 1 + c] = y[c];
  }
  return x;
}


void MulticomponentModel::begin_step(const Vector& x0)
{
  well_arrays_.controls.begin_attempt();
  BLOCKRES_PHYSICS_DISPATCH(exec_, cpu::prepare_wells(params_, wells_view_, x0.data()),
                       cuda::prepare_wells(exec_->stream(), params_, wells_view_, x0.data()));
}

void MulticomponentModel::set_block_storage(std::span<const index_t> storage)
{
  check_block_storage(storage, pattern_.nnzb(), blocks_moved_);
  move_block_positions(nbr_block_, storage);
  move_block_positions(diag_block_, storage);
  move_block_positions(extra_block_, storage);
  well_arrays_.conn.move_blocks(storage);
  blocks_moved_ = true;
}

void MulticomponentModel::assemble(const Vector& x, const Vector& x0, double dt, Vector& R, Array<double>& J)
{
  const size64_t nrow = size64_t(mesh_.ncell) * nc_;
  if (J.size() < size64_t(pattern_.nnzb()) * nc_ * nc_ || R.size() != nrow || x.size() != nrow || x0.size() != nrow)
    throw std::invalid_argument("MulticomponentModel::assemble: Jacobian values or vectors do not match the model");
  double* props = props_.data();
#if BLOCKRES_HAVE_CUDA
  if (exec_->is_cuda()) {
    cuda::cell_props(exec_->stream(), params_, mesh_, x.data(), x0.data(), props);
    cuda::assemble_cells(exec_->stream(), params_, mesh_, x.data(), x0.data(), props, dt, R.data(), J.data());
    cuda::assemble_wells(exec_->stream(), params_, mesh_, wells_view_, x.data(), props, R.data(), J.data());
  } else
#endif
  {
    cpu::cell_props(params_, mesh_, x.data(), x0.data(), props);
    cpu::assemble_cells(params_, mesh_, x.data(), x0.data(), props, dt, R.data(), J.data());
    cpu::assemble_wells(params_, mesh_, wells_view_, x.data(), props, R.data(), J.data());
  }
  if (!well_arrays_.controls.any_rate_well()) return;
  const auto h = well_arrays_.out.to_host();  // a few values per well
  const int stride = well_out_stride(nc_);
  std::vector<WellControls::Outcome> outcome(wells_.size());
  for (std::size_t w = 0; w < outcome.size(); ++w) {
    const double* o = h.data() + w * stride;
    outcome[w] = {o[1] != 0.0, o[3 + nc_] != 0.0, o[4 + nc_]};
  }
  well_arrays_.controls.after_assembly(outcome);
}

ConvergenceNorms MulticomponentModel::convergence(const Vector& x, const Vector& R, double dt) const
{
  std::vector<double> t(static_cast<std::size_t>(num_norm_terms(nc_)));
  multicomponent::Mesh owned = mesh_;  // the owned cells (a distributed run's ghosts are another rank's)
  owned.ncell = own_.owned;
  BLOCKRES_PHYSICS_DISPATCH(exec_, cpu::norm_terms(params_, owned, x.data(), R.data(), t.data()),
                       cuda::norm_terms(exec_->stream(), params_, owned, x.data(), R.data(), t.data(),
                                        exec_->reduction_workspace(), Executor::reduction_workspace_doubles,
                                        cell_scratch_.data()));
  own_.comm->max(std::span<double>(t.data(), std::size_t(nc_)));  // CNV maxima, then the sums
  own_.comm->sum(std::span<double>(t.data() + nc_, t.size() - std::size_t(nc_)));
  ConvergenceNorms c;
  c.cnv.resize(std::size_t(nc_));
  c.mb.resize(std::size_t(nc_));
  for (int k = 0; k < nc_; ++k) {
    c.cnv[k] = dt * t[k];
    c.mb[k] = dt * std::abs(t[nc_ + k]) / t[2 * nc_];
    c.finite = c.finite && std::isfinite(c.cnv[k]) && std::isfinite(c.mb[k]);
  }
  return c;
}

void MulticomponentModel::accumulation_blocks(const Vector& x, double dt, Vector& C) const
{
  const size64_t nrow = size64_t(mesh_.ncell) * nc_;
  if (x.size() != nrow || C.size() != nrow * nc_)
    throw std::invalid_argument("MulticomponentModel::accumulation_blocks: vector sizes do not match the model");
  // The records at x (x0 := x: its old-mass slots are not used by a derivative).
  double* props = props_.data();
  BLOCKRES_PHYSICS_DISPATCH(exec_,
      (cpu::cell_props(params_, mesh_, x.data(), x.data(), props),
       cpu::accumulation_blocks(params_, mesh_, x.data(), props, dt, C.data())),
      (cuda::cell_props(exec_->stream(), params_, mesh_, x.data(), x.data(), props),
       cuda::accumulation_blocks(exec_->stream(), params_, mesh_, x.data(), props, dt, C.data())));
}

void MulticomponentModel::update(Vector& x, const Vector& dx, const UpdateLimits& limits) const
{
  BLOCKRES_PHYSICS_DISPATCH(exec_, cpu::update(nc_, mesh_.ncell, x.data(), dx.data(), limits.max_dx, limits.max_dp_rel),
                       cuda::update(exec_->stream(), nc_, mesh_.ncell, x.data(), dx.data(), limits.max_dx,
                                    limits.max_dp_rel));
}

std::vector<double> MulticomponentModel::in_place(const Vector& x) const
{
  std::vector<double> t(static_cast<std::size_t>(nc_));
  multicomponent::Mesh owned = mesh_;
  owned.ncell = own_.owned;
  BLOCKRES_PHYSICS_DISPATCH(exec_, cpu::in_place(params_, owned, x.data(), t.data()),
                       cuda::in_place(exec_->stream(), params_, owned, x.data(), t.data(), exec_->reduction_workspace(),
                                      Executor::reduction_workspace_doubles, cell_scratch_.data()));
  own_.comm->sum(t);
  return t;
}

std::vector<Quantity> MulticomponentModel::in_place_quantities() const
{
  std::vector<Quantity> q;
  for (const auto& name : comps_.names)
    q.push_back({name + "_in_place", "kg", 1.0, fmt::format("mass of component {} in place", name), "mass_in_place"});
  return q;
}

std::vector<WellResult> MulticomponentModel::well_results() const
{
  const auto h = well_arrays_.out.to_host();
  const int stride = well_out_stride(nc_);
  std::vector<WellResult> r(wells_.size());
  for (std::size_t w = 0; w < r.size(); ++w) {
    const double* o = h.data() + w * stride;
    r[w].bhp = o[0];
    r[w].at_bhp = o[1] != 0.0;
    r[w].rates.assign(o + 3, o + 3 + nc_);
  }
  return r;
}

std::vector<Quantity> MulticomponentModel::well_rates() const
{
  std::vector<Quantity> q;
  for (const auto& name : comps_.names)
    q.push_back({name + "_rate", "kg/day", units::day,
                 fmt::format("mass rate of component {} (positive into the reservoir)", name), "well_mass_rate"});
  return q;
}

std::vector<Quantity> MulticomponentModel::cell_fields() const
{
  std::vector<Quantity> q;
  q.push_back({"pressure", "bar", 1.0 / units::bar, "pressure", ""});
  q.push_back({"density", "kg/m3", 1.0, "mixture density", ""});
  for (const auto& name : comps_.names)
    q.push_back({"x_" + name, "1", 1.0, fmt::format("mass fraction of component {}", name), "mass_fraction"});
  return q;
}

std::vector<std::vector<double>> MulticomponentModel::cell_field_values(std::span<const double> x) const
{
  // Cell by cell: any whole number of cells (a rank's, or a distributed run's state gathered for the files).
  const auto n = static_cast<index_t>(x.size() / std::size_t(nc_));
  if (x.size() != std::size_t(n) * nc_) throw std::invalid_argument("MulticomponentModel::cell_field_values: size");
  std::vector<std::vector<double>> f(static_cast<std::size_t>(2 + nc_), std::vector<double>(std::size_t(n)));
  std::vector<double> y(static_cast<std::size_t>(nc_));
  for (index_t i = 0; i < n; ++i) {
    const double* xc = x.data() + std::size_t(i) * nc_;
    double s = 0.0;
    for (int k = 0; k + 1 < nc_; ++k) y[k] = xc[1 + k], s += xc[1 + k];
    y[nc_ - 1] = 1.0 - s;
    f[0][i] = xc[0] / units::bar;
    f[1][i] = mixture_density(host_params_, y.data(), xc[0]);
    for (int k = 0; k < nc_; ++k) f[2 + k][i] = y[k];
  }
  return f;
}

std::string MulticomponentModel::well_summary(const std::vector<WellResult>& results) const
{
  std::string s;
  for (std::size_t w = 0; w < results.size() && w < wells_.size(); ++w) {
    double q = 0.0;  // total mass rate, counted positive for what the well does (as oil_water's summary)
    for (const double r : results[w].rates) q += r;
    if (!wells_[w].injector) q = -q;
    s += fmt::format("  {} {:.1f} bar {:.1f} kg/d", wells_[w].name, results[w].bhp / units::bar, q * units::day);
  }
  return s;
}

size64_t MulticomponentModel::assembly_bytes() const
{
  const size64_t rows = size64_t(mesh_.ncell) * nc_;
  return (size64_t(pattern_.nnzb()) * nc_ * nc_ + rows + 2 * rows) * size64_t(sizeof(double));
}

size64_t MulticomponentModel::scratch_bytes() const
{
  return (size64_t(mesh_.ncell) * (props_stride(nc_) + 2) + well_arrays_.scratch.size()) * size64_t(sizeof(double));
}

namespace multicomponent {

namespace {
constexpr std::string_view sections[] = {"components", "initial", "wells"};

std::unique_ptr<Model> create(ExecPtr exec, const Grid& grid, const RockSpec& rock, bool gravity, const ModelInput& input)
{
  const auto* in = dynamic_cast<const MulticomponentInput*>(&input);
  if (!in) throw std::invalid_argument("multicomponent model: input of another model");
  return std::make_unique<MulticomponentModel>(std::move(exec), grid, rock, gravity, *in);
}

// nc unknowns per cell (p, x_1 .. x_{nc-1}); the accumulation blocks have a pressure column when the
// rock or any component is compressible.
LinearSystemTraits linear_system(const ModelInput& input, const RockSpec& rock)
{
  const auto* in = dynamic_cast<const MulticomponentInput*>(&input);
  if (!in) throw std::invalid_argument("multicomponent model: input of another model");
  bool compressible = rock.compressibility > 0;
  for (const double c : in->components.compressibility) compressible = compressible || c > 0;
  return {.block_size = in->components.nc(), .pressure_unknown = true, .compressible = compressible};
}
}  // namespace

ModelEntry model_entry() { return {"multicomponent", sections, &read_deck, &create, &linear_system}; }

}  // namespace multicomponent

}  // namespace blockres::physics
