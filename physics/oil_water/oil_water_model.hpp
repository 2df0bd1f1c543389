// The oil_water model on one executor: static data uploaded once, then residual/Jacobian
// assembly, convergence norms, Newton updates and fluid in place, all on that executor.
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"
#include "physics/grid.hpp"
#include "physics/oil_water_local.hpp"
#include "physics/spec.hpp"

#include <array>
#include <string>
#include <vector>

namespace blockres::physics {

struct ConvergenceNorms {
  double cnv[num_phases] = {0, 0};  // max_i B_avg dt |R_a,i| / V_p,i
  double mb[num_phases] = {0, 0};   // B_avg dt |sum_i R_a,i| / sum_i V_p,i
  bool finite = true;
  double max_cnv() const { return cnv[0] > cnv[1] ? cnv[0] : cnv[1]; }
  double max_mb() const { return mb[0] > mb[1] ? mb[0] : mb[1]; }
};

struct WellResult {
  double bhp = 0.0;      // [Pa]
  double q_water = 0.0;  // surface [m^3/s], positive into the reservoir
  double q_oil = 0.0;
  bool at_bhp = false;   // BHP-controlled (by choice or because the rate limit was hit)
};

struct Completion {
  int i, j, k;
  index_t cell;  // active index
  double wi;     // [m^3]
  double depth;
};

struct WellInfo {
  WellSpec spec;
  std::vector<Completion> completions;
  double ref_depth;
};

class OilWaterModel {
 public:
  static constexpr int block_size = 2;

  // Throws std::invalid_argument for inconsistent input (e.g. a well without active cells).
  OilWaterModel(ExecPtr exec, const Grid& grid, const RockSpec& rock, const FluidSpec& fluid,
                const std::vector<WellSpec>& wells, bool gravity);

  index_t num_cells() const { return mesh_.ncell; }
  const BsrPattern& pattern() const { return pattern_; }
  const std::vector<WellInfo>& wells() const { return wells_; }
  const OilWaterParams& host_params() const { return host_params_; }

  // Initial state (interleaved p_o, S_w per active cell) computed on the host.
  std::vector<double> initial_state(const InitialSpec& init) const;

  // Once per time step, from the state at its start: well head densities (explicit).
  void begin_step(const Vector& x0);
  // R(x) and J(x) for the step from x0 over dt; well results are kept for well_results().
  void assemble(const Vector& x, const Vector& x0, double dt, Vector& R, BsrMatrix& J);
  ConvergenceNorms convergence(const Vector& x, const Vector& R, double dt) const;
  void update(Vector& x, const Vector& dx, double max_ds, double max_dp_rel) const;
  // Fluid in place [surface m^3]: water, oil.
  std::array<double, 2> in_place(const Vector& x) const;
  // BHP and rates evaluated at the last assembled state.
  std::vector<WellResult> well_results() const;

 private:
  ExecPtr exec_;
  OilWaterParams host_params_;  // relperm table pointer to host memory
  OilWaterParams params_;       // same, table pointer in executor memory
  BsrPattern pattern_;
  std::vector<WellInfo> wells_;

  // Executor-resident static data
  Array<double> relperm_table_, pv_ref_, depth_, nbr_trans_;
  Array<index_t> nbr_ptr_, nbr_cell_, nbr_block_, diag_block_, row_ptr_;
  Array<int> well_kind_, well_control_;
  Array<double> well_target_, well_bhp_, well_weight_, well_ref_depth_, well_head_density_;
  Array<index_t> comp_ptr_, comp_cell_, couple_ptr_, couple_block_;
  Array<double> comp_wi_, comp_depth_, well_scratch_, well_out_;
  MeshView mesh_;
  WellsView wells_view_;
  std::vector<double> grid_layer_depth_;  // for the initial state
  std::vector<int> cell_layer_;
};

}  // namespace blockres::physics
