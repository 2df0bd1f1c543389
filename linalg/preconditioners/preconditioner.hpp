// The Preconditioner interface: numeric setup per matrix values, application per Krylov iteration.
// The preconditioners live one per folder beside this file and are made by name through the
// registry (linalg/preconditioners/registry.hpp).
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace blockres {

// The hint of a setup failure on a zero scalar pivot (point Jacobi, scalar ILU(0)): a cell block
// can be regular while one of its diagonal entries is 0 (the pressure derivative of a component
// absent at t = 0), and the preconditioners that factor whole cell blocks handle it.
inline constexpr const char* zero_pivot_hint =
    "a zero scalar pivot inside a regular cell block (e.g. a component absent at t = 0 has a zero pressure "
    "derivative) is handled by preconditioners that factor whole cell blocks: [solver.linear.preconditioner] "
    "type = \"ilu0\" with factor_view = \"block\" (block ILU(0)), or type = \"cpr\" (with method = \"fgmres\"); "
    "type = \"block_jacobi\" (natural cell blocks) sets up too";

struct SetupStatus {
  bool ok = true;
  std::string message;  // why setup failed (e.g. singular diagonal blocks), empty when ok
  std::string hint;     // what to use instead, if known: for the run's final message, not every cut's line
};

class Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  // Numeric setup for the current values of A (the structure must not change between calls).
  virtual SetupStatus setup(const BsrMatrix& A) = 0;
  // z = M^{-1} r; z and r must not alias.
  virtual void apply(const Vector& r, Vector& z) const = 0;
  virtual std::string name() const = 0;
  // True when apply() is a copy: the solvers then use r itself and skip the copy.
  virtual bool is_identity() const { return false; }
  // Seconds spent in the parts of setup and apply since construction, for preconditioners made of
  // parts (CPR: weights, each stage's setup and apply); empty for the others. Waits for the work
  // queued so far.
  struct ProfileEntry {
    std::string part;
    double seconds = 0.0;
  };
  virtual std::vector<ProfileEntry> profile() const { return {}; }

  // Model data. A preconditioner that builds on the model's accumulation blocks (CPR with true-IMPES
  // weights) says so; the time loop then hands it C before the first setup: nrows * bs * bs values,
  // cell r's bs x bs block row-major at r * bs * bs (row = equation, column = unknown), on A's
  // executor, as physics::Model::accumulation_blocks fills them. C is not copied: every later setup
  // reads it, so it must stay alive and hold the blocks of the state the matrix given to that setup
  // was assembled at. The others take no blocks: set_accumulation_blocks throws
  // std::invalid_argument.
  virtual bool needs_accumulation_blocks() const { return false; }

  // Feedback from the time loop, for preconditioners that may keep parts of their setup (AMG with
  // refresh_growth): a time step (or its retry after a cut) begins; the Krylov solve that used the
  // last setup took `iterations` and converged or not. Composites (CPR) pass both to their stages.
  virtual void note_new_step() {}
  virtual void note_solve(int iterations, bool converged)
  {
    (void)iterations;
    (void)converged;
  }
  virtual void set_accumulation_blocks(const Vector& C)
  {
    (void)C;
    throw std::invalid_argument(name() + " takes no accumulation blocks");
  }
};

}  // namespace blockres
