// The oil_water model on one executor: static data uploaded once, then residual/Jacobian
// assembly, convergence norms, Newton updates and fluid in place, all on that executor.
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"
#include "physics/grid.hpp"
#include "physics/model.hpp"
#include "physics/model_registry.hpp"
#include "physics/oil_water/oil_water_local.hpp"
#include "physics/oil_water/oil_water_spec.hpp"
#include "physics/spec.hpp"
#include "physics/well_controls.hpp"
#include "physics/wells.hpp"

#include <string>
#include <vector>

namespace blockres::physics {

// The oil_water model's deck input (its [fluid], [initial] and [[wells]] tables), SI units.
struct OilWaterInput : ModelInput {
  FluidSpec fluid;
  InitialSpec initial;
  std::vector<WellSpec> wells;
  std::vector<const WellGeometry*> well_geometries() const override
  {
    std::vector<const WellGeometry*> g;
    for (const auto& w : wells) g.push_back(&w);
    return g;
  }
};

class OilWaterModel final : public Model {
 public:
  static constexpr int bs = 2;

  // Throws std::invalid_argument for inconsistent input (e.g. a well without active cells).
  OilWaterModel(ExecPtr exec, const Grid& grid, const RockSpec& rock, const FluidSpec& fluid,
                const std::vector<WellSpec>& wells, bool gravity, const InitialSpec& initial = {});

  std::string_view type() const override { return "oil_water"; }
  int block_size() const override { return bs; }
  index_t num_cells() const override { return mesh_.ncell; }
  const BsrPattern& pattern() const override { return pattern_; }
  std::vector<std::string> unknown_names() const override { return {"p", "sw"}; }
  std::vector<std::string> equation_names() const override { return {"water", "oil"}; }
  const std::vector<WellInfo>& wells() const override { return wells_; }
  const std::vector<WellSpec>& well_specs() const { return well_specs_; }
  const OilWaterParams& host_params() const { return host_params_; }
  // The connectivity the kernels read (executor memory; tests run the shared cell functions on it).
  const MeshView& mesh_view() const { return mesh_; }

  // Initial state (interleaved p_o, S_w per active cell) computed on the host.
  std::vector<double> initial_state() const override { return initial_state(initial_); }
  std::vector<double> initial_state(const InitialSpec& init) const;

  // Starts a step attempt: the well controls of the last accepted step (a cut attempt's switches
  // undone) and the explicit well head densities from x0.
  void begin_step(const Vector& x0) override;
  using Model::assemble;
  void assemble(const Vector& x, const Vector& x0, double dt, Vector& R, Array<double>& J) override;
  void set_block_storage(std::span<const index_t> storage) override;
  // CNV and MB per phase (water, oil), scaled by the average formation volume factor.
  ConvergenceNorms convergence(const Vector& x, const Vector& R, double dt) const override;
  // d(V_p S_a b_a)/d(p, S_w) / dt per cell (phase rows water, oil; columns p, S_w).
  bool has_accumulation_blocks() const override { return true; }
  void accumulation_blocks(const Vector& x, double dt, Vector& blocks) const override;
  // x <- x - dx with |dS_w| <= max_ds and |dp| <= max_dp_rel |p| per cell, S_w kept in [0, 1].
  void update(Vector& x, const Vector& dx, const UpdateLimits& limits) const override;
  // Fluid in place [surface m^3]: water, oil.
  std::vector<double> in_place(const Vector& x) const override;
  std::vector<Quantity> in_place_quantities() const override;
  // BHP and rates (water, oil; surface m^3/s) evaluated at the last assembled state.
  std::vector<WellSwitch> take_well_switches() override { return well_arrays_.controls.take_switches(); }
  void accept_step() override { well_arrays_.controls.accept_step(); }
  std::vector<WellResult> well_results() const override;
  std::vector<Quantity> well_rates() const override;
  // pressure [bar], sw, and for VTK only so = 1 - sw.
  std::vector<Quantity> cell_fields() const override;
  std::vector<std::vector<double>> cell_field_values(std::span<const double> x) const override;
  std::string well_summary(const std::vector<WellResult>& results) const override;

 private:
  ExecPtr exec_;
  OilWaterParams host_params_;  // relperm table pointer to host memory
  OilWaterParams params_;       // same, table pointer in executor memory
  InitialSpec initial_;
  BsrPattern pattern_;
  std::vector<WellSpec> well_specs_;
  std::vector<WellInfo> wells_;

  // Executor-resident static data
  Array<double> relperm_table_, pv_ref_, depth_, nbr_trans_;
  Array<double> face_props_;  // CUDA: face_props_stored per cell (MeshView::face_props)
  Array<index_t> nbr_ptr_, nbr_cell_, nbr_block_, diag_block_, row_ptr_;
  Array<index_t> block_pos_;  // after set_block_storage: the storage map (MeshView::block_pos)
  WellArrays well_arrays_;
  Array<double> well_weight_;  // 2 per well: which phase rates the target counts
  MeshView mesh_;
  Grid::Ownership own_;  // reductions over the owned cells, through own_.comm
  WellsView wells_view_;
  std::vector<double> grid_layer_depth_;  // for the initial state
  std::vector<int> cell_layer_;
};

namespace oil_water {
// The registry entry (physics/model_registry.cpp).
ModelEntry model_entry();
}  // namespace oil_water

}  // namespace blockres::physics
