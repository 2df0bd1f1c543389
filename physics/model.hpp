// The interface every physics model implements (oil_water, multicomponent, ...): what the time
// loop, Newton, the linear-solver setup, the result writers and `verify` know of a model.
//
// A model owns its static data on one executor and works on the interleaved state vector x:
// block_size() unknowns per active cell, cell i at x[i*bs .. i*bs + bs). Unknown 0 is always the
// pressure [Pa] (CPR and the chops rely on it). The Jacobian is BSR with bs x bs blocks on
// pattern(): block (r, c) entry (a, v) = dR_a,r / dx_v,c, row-major.
//
// Everything a model reports (cell fields, per-equation norms, quantities in place, well rates)
// comes with a Quantity: its name in files and logs, its unit in files, and the factor from SI to
// that unit. Writers and `verify` are generic over these lists; a model's lists never change
// during a run.
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"
#include "physics/grid.hpp"

#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace blockres::physics {

struct Quantity {
  std::string name;         // file/log name: "pressure", "x_CO2", "water_rate", ...
  std::string unit;         // unit in the files: "bar", "1", "kg/day", ...
  double from_si = 1.0;     // value in `unit` = SI value * from_si
  std::string description;  // one line for documentation and `verify` listings
  std::string group;        // tolerance group in `verify` (e.g. "mass_fraction"); empty: the name itself
  bool in_results = true;   // false: VTK only (a derived field such as so = 1 - sw)
};

// Per-equation convergence norms (PHYSICS.md, "Newton and time stepping"), in equation order.
struct ConvergenceNorms {
  std::vector<double> cnv;  // max_i |R_e,i| dt / (V_p,i * scale_e,i)
  std::vector<double> mb;   // |sum_i R_e,i| dt / sum_i (V_p,i * scale_e,i)
  bool finite = true;
  double max_cnv() const;
  double max_mb() const;
};

// Newton update limits; each model uses those that apply to its unknowns.
struct UpdateLimits {
  double max_dp_rel = 0.3;  // |dp| <= max_dp_rel |p| per cell and iteration
  double max_ds = 0.2;      // saturations (oil_water)
  double max_dx = 0.2;      // mass fractions (multicomponent)
};

// A well as the writers and the log see it; geometry and controls stay in the model's input.
struct Completion {
  int i, j, k;
  index_t cell;  // active index
  double wi;     // well index [m^3]
  double depth;  // [m]
};
struct WellInfo {
  std::string name;
  bool injector = false;
  bool rate_control = false;  // control at the start of the run ("rate" or "bhp" in the files)
  int i = 0, j = 0;           // 0-based column
  std::vector<Completion> completions;
  double ref_depth = 0.0;     // BHP reference depth [m]
};

// A well's state after the last assembly: BHP, its rates in the order of well_rates() (SI,
// positive into the reservoir) and whether it is (now) under BHP control.
struct WellResult {
  double bhp = 0.0;  // [Pa]
  std::vector<double> rates;
  bool at_bhp = false;
};

// A well control switch (PHYSICS.md, wells). A well under rate control is decided in every
// assembly, from the state x of that Newton iteration: under rate control while some BHP within
// its limit meets the target (the BHP that does is bhp_needed), at the limit otherwise. A well that
// went from rate to BHP control in a time step stays at its limit until the step ends (it cannot
// flip back and forth within one step); at the start of the next step it returns to rate control
// as soon as the target is reachable within the limit again. A step attempt that is cut restarts
// from the controls the step started with.
struct WellSwitch {
  int well = 0;               // index in Model::wells()
  bool to_bhp = false;        // rate -> BHP control (true) or BHP -> rate control (false)
  bool reachable = false;     // some BHP meets the rate target at that state (bhp_needed is it)
  double bhp_needed = 0.0;    // [Pa], when reachable
  double bhp_limit = 0.0;     // [Pa]: the upper limit of an injector, the lower limit of a producer
};

class Model {
 public:
  virtual ~Model() = default;

  virtual std::string_view type() const = 0;  // the deck's model.type
  virtual int block_size() const = 0;
  virtual index_t num_cells() const = 0;
  virtual const BsrPattern& pattern() const = 0;

  virtual std::vector<std::string> unknown_names() const = 0;  // block_size() entries, "p" first
  virtual std::vector<std::string> equation_names() const = 0; // block_size() entries

  // Initial state on the host (interleaved, block_size() per active cell).
  virtual std::vector<double> initial_state() const = 0;
  // Once per time step, from the state at its start (explicit well head densities).
  virtual void begin_step(const Vector& x0) = 0;
  // R(x) and J(x) of the backward-Euler step from x0 over dt; well results kept for well_results(). J: the values
  // of the Jacobian on pattern(), block k of the pattern at block k of J, or at block storage[k] after
  // set_block_storage(storage); at least pattern().nnzb() blocks of bs x bs.
  virtual void assemble(const Vector& x, const Vector& x0, double dt, Vector& R, Array<double>& J) = 0;
  // The same into a matrix on pattern() (whose blocks are in pattern order: not after set_block_storage).
  void assemble(const Vector& x, const Vector& x0, double dt, Vector& R, BsrMatrix& J)
  {
    if (J.nnzb() != pattern().nnzb() || J.block_size() != block_size())
      throw std::invalid_argument("Model::assemble: the matrix is not on the model's pattern");
    assemble(x, x0, dt, R, J.values());
  }
  // Where assemble() stores the pattern's blocks from now on: block k at block storage[k] of J (a permutation of
  // 0 .. pattern().nnzb() - 1, checked: std::invalid_argument otherwise; once: std::logic_error the second time).
  // A distributed run (issue 33) has the model
  // assemble straight into the distributed matrix, whose values hold the owned rows' blocks of owned columns, then
  // those of ghost columns, then the ghost cells' rows, rather than assemble a copy that would then be split.
  virtual void set_block_storage(std::span<const index_t> storage) = 0;
  virtual ConvergenceNorms convergence(const Vector& x, const Vector& R, double dt) const = 0;

  // The accumulation derivatives per cell, for true-IMPES CPR weights (linalg/preconditioners/cpr/cpr_preconditioner.hpp):
  // blocks (num_cells() * bs * bs, executor memory) receives for every cell i the bs x bs block
  //   C_i(a, v) = d(accumulation term of equation a of cell i) / d(unknown v of cell i)
  // row-major, with the Jacobian's equation order, sign and scaling (the accumulation term is the
  // residual's [m^{n+1} - m^n] / dt, so C_i is the accumulation's share of J's diagonal block
  // at the same x and dt; fluxes, wells and sources such as reactions are not in it). Computed on
  // the model's executor from x alone (x0 does not enter a derivative). Models without it keep the
  // defaults: has_accumulation_blocks() false, accumulation_blocks() throws std::logic_error.
  virtual bool has_accumulation_blocks() const { return false; }
  virtual void accumulation_blocks(const Vector& x, double dt, Vector& blocks) const
  {
    (void)x, (void)dt, (void)blocks;
    throw std::logic_error("model " + std::string(type()) + " does not provide accumulation blocks");
  }
  // x <- x - dx with the model's chops (documented by each model).
  virtual void update(Vector& x, const Vector& dx, const UpdateLimits& limits) const = 0;

  // Quantities in place (fluids or component masses), SI, in the order of in_place_quantities().
  virtual std::vector<double> in_place(const Vector& x) const = 0;
  virtual std::vector<Quantity> in_place_quantities() const = 0;

  // The control switches decided by the assemblies since the last call (WellSwitch), in order.
  virtual std::vector<WellSwitch> take_well_switches() { return {}; }
  // The time step just solved is accepted: its final controls are the next step's start (a well
  // held at its limit since a switch in this step may return to rate control in the next one).
  virtual void accept_step() {}

  virtual const std::vector<WellInfo>& wells() const = 0;
  virtual std::vector<WellResult> well_results() const = 0;
  virtual std::vector<Quantity> well_rates() const = 0;  // WellResult::rates, same order

  // Cell fields of a report step from a host copy of x: one vector per cell_fields() entry, one
  // value per active cell, in the Quantity's file unit (from_si already applied).
  virtual std::vector<Quantity> cell_fields() const = 0;
  virtual std::vector<std::vector<double>> cell_field_values(std::span<const double> x) const = 0;

  // One short line of a step's well results for the run log ("INJ 250.0 bar 100.0 m3/d").
  virtual std::string well_summary(const std::vector<WellResult>& results) const = 0;
};

}  // namespace blockres::physics
