// The multicomponent model (PHYSICS.md, "Model multicomponent"): nc = 1..64 components of one
// liquid phase with kinetic reactions, diffusion and wells, on one executor: static data uploaded
// once, then residual/Jacobian assembly, norms, Newton updates and masses in place there.
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"
#include "physics/grid.hpp"
#include "physics/model.hpp"
#include "physics/model_registry.hpp"
#include "physics/multicomponent/multicomponent_local.hpp"
#include "physics/spec.hpp"
#include "physics/well_controls.hpp"
#include "physics/wells.hpp"

#include <string>
#include <vector>

namespace blockres::physics {

// The components and their properties, SI units.
struct ComponentsSpec {
  std::vector<std::string> names;       // nc identifiers
  std::vector<double> density;          // at reference_pressure [kg/m^3]
  std::vector<double> compressibility;  // [1/Pa]
  std::vector<double> viscosity;        // [Pa s]
  double reference_pressure = 1.01325e5;  // [Pa]
  double diffusion = 0.0;               // molecular diffusion coefficient D_m [m^2/s]
  std::vector<double> reactions;        // nc x nc row-major rate matrix K [1/s] (columns sum to 0)
  int nc() const { return static_cast<int>(names.size()); }
};

struct MulticomponentInitial {
  bool hydrostatic = false;   // hydrostatic equilibrium from (datum_depth, pressure)
  double pressure = 1.0e7;    // uniform pressure or the datum pressure [Pa]
  double datum_depth = 0.0;   // [m]
  // One composition (nc fractions summing to 1) for every cell, or one per layer (nz of them).
  std::vector<std::vector<double>> composition;
};

// A multicomponent well: the shared geometry and its controls.
struct MulticomponentWellSpec : WellGeometry {
  WellControlMode control = WellControlMode::bhp;
  double rate = 0.0;  // total mass rate magnitude [kg/s] (rate control)
  double bhp = 0.0;   // setpoint (bhp control) or limit (rate control: upper for injectors, lower for producers) [Pa]
  std::vector<double> composition;  // injected mass fractions (injectors), nc summing to 1
};

// The model's deck input ([components], [initial], [[wells]]), SI units.
struct MulticomponentInput : ModelInput {
  ComponentsSpec components;
  MulticomponentInitial initial;
  std::vector<MulticomponentWellSpec> wells;
  std::vector<const WellGeometry*> well_geometries() const override
  {
    std::vector<const WellGeometry*> g;
    for (const auto& w : wells) g.push_back(&w);
    return g;
  }
};

class MulticomponentModel final : public Model {
 public:
  // Throws std::invalid_argument for inconsistent input (sizes, a well without active cells, ...).
  MulticomponentModel(ExecPtr exec, const Grid& grid, const RockSpec& rock, bool gravity,
                      const MulticomponentInput& input);

  std::string_view type() const override { return "multicomponent"; }
  int block_size() const override { return nc_; }
  index_t num_cells() const override { return mesh_.ncell; }
  const BsrPattern& pattern() const override { return pattern_; }
  std::vector<std::string> unknown_names() const override;   // p, x_<name> for the first nc-1
  std::vector<std::string> equation_names() const override;  // the component names

  std::vector<double> initial_state() const override;
  // Starts a step attempt: the well controls of the last accepted step (a cut attempt's switches
  // undone) and the explicit well head densities from x0.
  void begin_step(const Vector& x0) override;
  using Model::assemble;
  void assemble(const Vector& x, const Vector& x0, double dt, Vector& R, Array<double>& J) override;
  void set_block_storage(std::span<const index_t> storage) override;
  // CNV_k = max_i |R_k,i| dt / (V_p,i rho_i), MB_k = |sum_i R_k,i| dt / sum_i V_p,i rho_i.
  ConvergenceNorms convergence(const Vector& x, const Vector& R, double dt) const override;
  // d(V_p rho x_k)/du_v / dt per cell (reactions left out). Recomputes the pass-1 records at x into
  // the assembly's scratch (nothing reads them between assemblies).
  bool has_accumulation_blocks() const override { return true; }
  void accumulation_blocks(const Vector& x, double dt, Vector& blocks) const override;
  // x <- x - dx with |dp| <= max_dp_rel |p| and the composition chop of update_cell()
  // (multicomponent_local.hpp): every x_k in [0, 1], |dx_k| <= max_dx.
  void update(Vector& x, const Vector& dx, const UpdateLimits& limits) const override;
  std::vector<double> in_place(const Vector& x) const override;  // mass of each component [kg]
  std::vector<Quantity> in_place_quantities() const override;
  const std::vector<WellInfo>& wells() const override { return wells_; }
  std::vector<WellSwitch> take_well_switches() override { return well_arrays_.controls.take_switches(); }
  void accept_step() override { well_arrays_.controls.accept_step(); }
  std::vector<WellResult> well_results() const override;  // rates: one per component [kg/s]
  std::vector<Quantity> well_rates() const override;
  // pressure [bar], density [kg/m3], x_<name> per component.
  std::vector<Quantity> cell_fields() const override;
  std::vector<std::vector<double>> cell_field_values(std::span<const double> x) const override;
  std::string well_summary(const std::vector<WellResult>& results) const override;

  // Bytes one assembly moves at the least: Jacobian values and residual written, x and x0 read
  // (the per-cell property records, scratch_bytes(), come on top: written once, read per face).
  size64_t assembly_bytes() const;
  // Executor memory the model holds besides static data: per cell props_stride(nc) = 7 + 3 nc
  // doubles (pass-1 records) and 2 doubles (reduction scratch); per completion 8 doubles.
  size64_t scratch_bytes() const;

  const ComponentsSpec& components() const { return comps_; }
  const multicomponent::Params& host_params() const { return host_params_; }
  // The diffusion coefficient D_ij = phi_face D_m A / distance of each grid face (Grid::faces() order).
  const std::vector<double>& face_diffusion() const { return face_diff_; }

 private:
  ExecPtr exec_;
  int nc_;
  ComponentsSpec comps_;
  MulticomponentInitial initial_;
  std::vector<MulticomponentWellSpec> well_specs_;
  std::vector<WellInfo> wells_;
  BsrPattern pattern_;
  std::vector<double> face_diff_;
  std::vector<double> host_rho_ref_, host_comp_, host_ln_mu_, host_K_;
  multicomponent::Params host_params_;  // pointers to the host vectors above
  multicomponent::Params params_;       // same, pointers to executor memory
  std::vector<double> host_pv_ref_, host_depth_;
  std::vector<double> layer_depth_, layer_top_;  // for the initial state
  std::vector<int> cell_layer_;

  // Executor-resident data
  Array<double> rho_ref_, comp_, ln_mu_, K_;
  Array<double> pv_ref_, depth_, nbr_trans_, nbr_diff_;
  Array<index_t> nbr_ptr_, nbr_cell_, nbr_block_, diag_block_, extra_ptr_, extra_block_;
  WellArrays well_arrays_;
  Array<double> well_inj_comp_;  // nc per well: injected composition (injectors), 0 for producers
  mutable Array<double> props_, cell_scratch_;
  multicomponent::Mesh mesh_;
  Grid::Ownership own_;  // reductions over the owned cells, through own_.comm
  multicomponent::Wells wells_view_;
  bool blocks_moved_ = false;  // set_block_storage was called
};

namespace multicomponent {
// The registry entry (physics/model_registry.cpp): model.type = "multicomponent", reading the
// deck's [components], [initial] and [[wells]] tables.
ModelEntry model_entry();
// The deck reader behind model_entry() (multicomponent_deck.cpp); throws InputError.
std::shared_ptr<const ModelInput> read_deck(deck::Section& top, const GridSpec& grid, const RockSpec& rock);
}  // namespace multicomponent

}  // namespace blockres::physics
