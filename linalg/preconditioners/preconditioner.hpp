// The Preconditioner interface: numeric setup per matrix values, application per Krylov iteration.
// The preconditioners live one per folder beside this file and are made by name through the
// registry (linalg/preconditioners/registry.hpp).
#pragma once

#include "linalg/bsr_matrix.hpp"
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"

#include <cstdint>
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

// What a preconditioner's apply() launches depend on besides values: the addresses and sizes of
// the arrays it reads and writes, and the shapes of its launches (Preconditioner::launch_epoch).
// Two buffers that swap roles inside an application (a smoother's x and t) go in as a pair.
class LaunchKey {
 public:
  LaunchKey& add(std::uint64_t v)
  {
    h_ ^= v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2);
    return *this;
  }
  template <class T>
  LaunchKey& add(const Array<T>& a)
  {
    return add(reinterpret_cast<std::uintptr_t>(a.data())).add(static_cast<std::uint64_t>(a.size()));
  }
  template <class T>
  LaunchKey& add_pair(const Array<T>& a, const Array<T>& b)
  {
    const auto x = reinterpret_cast<std::uintptr_t>(a.data()), y = reinterpret_cast<std::uintptr_t>(b.data());
    return add(x < y ? x : y).add(x < y ? y : x).add(static_cast<std::uint64_t>(a.size() + b.size()));
  }
  LaunchKey& add(const BsrMatrix& m)
  {
    return add(m.row_ptr()).add(m.col_ind()).add(m.values()).add(static_cast<std::uint64_t>(m.block_size()));
  }
  std::uint64_t value() const { return h_ | 1; }  // never 0 (0 means "not tracked")

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

class Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  // Numeric setup for the current values of A (the structure must not change between calls).
  virtual SetupStatus setup(const BsrMatrix& A) = 0;
  // Distributed runs (issue 33), collective: the setup for a row-distributed matrix, after which apply() takes and
  // returns this rank's owned rows. The default sets up on the rank's owned x owned part (A.diag()): block-Jacobi
  // over the subdomains of the preconditioner (additive Schwarz, overlap 0), which is the whole matrix on one rank.
  // Preconditioners that couple subdomains override it (AMG: a distributed hierarchy; CPR: its pressure matrix and
  // residual across the halo). A failure is reported by this rank's status; the caller agrees on it across ranks.
  virtual SetupStatus setup_distributed(const dist::DistBsrMatrix& A) { return setup(A.diag()); }
  // z = M^{-1} r; z and r must not alias.
  virtual void apply(const Vector& r, Vector& z) const = 0;
  virtual std::string name() const = 0;
  // True when apply() is a copy: the solvers then use r itself and skip the copy.
  virtual bool is_identity() const { return false; }
  // After setup(): a number that stays the same across setups only while apply() queues the same
  // launches on the same arrays (a setup that rewrote values in place), so that a recording of
  // apply() (CPR's CUDA graph) stays valid; any reallocation or new shape changes it (a LaunchKey
  // over everything apply() touches). 0: not tracked, every setup counts as a change.
  virtual std::uint64_t launch_epoch() const { return 0; }
  // After setup(): the bytes one apply() moves at least (each matrix, factor or level operator read
  // once per pass over it, each vector once per pass), for the run log's and the bench's fraction
  // of the copy bandwidth; 0: not stated.
  virtual double apply_bytes() const { return 0.0; }
  // After setup(): the bytes one numeric setup moves at least, stated where it is not one pass over the
  // matrix (block-Jacobi touches only the blocks it inverts); 0: not stated.
  virtual double setup_bytes() const { return 0.0; }
  // Seconds spent in the parts of setup and apply since construction, for preconditioners made of
  // parts (CPR: weights, each stage's setup and apply); empty for the others. Waits for the work
  // queued so far.
  struct ProfileEntry {
    std::string part;
    double seconds = 0.0;
  };
  virtual std::vector<ProfileEntry> profile() const { return {}; }
  // After setup(): what the setups built and how often they rebuilt it, in one line for the run log (AMG:
  // its levels, complexities and refresh counts; composites: their stages'); empty when there is nothing
  // to say beyond name().
  virtual std::string setup_summary() const { return {}; }

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
