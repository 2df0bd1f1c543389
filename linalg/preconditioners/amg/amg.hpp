// Aggregation algebraic multigrid for scalar (bs = 1) matrices: options, hierarchy statistics and
// AmgPreconditioner (one V-cycle per apply), on the CPU and the CUDA backend. One setup driver
// and one cycle (amg_preconditioner.cpp) call the backend's operations (amg_ops.hpp): the CPU
// reference kernels (amg_kernels_cpu.cpp) or their CUDA twins with cuSPARSE SpGEMM for the
// Galerkin products (amg_kernels_cuda.cu).
#pragma once

#include "kernels/amg/amg_kernels.hpp"
#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/array.hpp"
#include "linalg/preconditioners/preconditioner.hpp"

#include <array>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <cstdint>
#include <vector>

namespace blockres {

struct AmgLevelStatistics {  // 64-bit: a distributed hierarchy's global counts pass 2^31 (nnz above ~300M cells)
  std::int64_t rows = 0;
  std::int64_t nnz = 0;
};

struct AmgStatistics {
  std::vector<AmgLevelStatistics> levels;  // finest first
  double operator_complexity = 0.0;        // sum of nnz over levels / nnz of A
  double grid_complexity = 0.0;            // sum of rows over levels / rows of A
  bool coarsest_direct = true;             // false: the coarsest level (> 512 rows) is smoothed only
  int full_setups = 0;                     // symbolic + numeric
  int numeric_setups = 0;                  // numeric only (structure reused)
  int kept_setups = 0;                     // setup() calls that kept the hierarchy (refresh_interval,
                                           // refresh_growth)
  int growth_refreshes = 0;                // refresh_growth: refreshes forced by iteration growth or a
                                           // failed solve within a time step
  int plain_fallbacks = 0;                 // levels of the current hierarchy given a plain P because a
                                           // smoothed product was too large for the backend
  bool numeric_graph = false;              // the last numeric re-setup ran as a recorded CUDA graph
  std::string to_string() const;           // a one-line-per-level table
};

namespace amg {

// Scalar CSR matrix in an executor's memory (columns sorted on the CPU; the cuSPARSE products'
// column order on the CUDA backend: no kernel relies on sorted columns).
struct Matrix {
  index_t nrows = 0;
  index_t ncols = 0;
  Array<index_t> row_ptr, col_ind;
  Array<double> values;
  index_t nnz() const { return static_cast<index_t>(col_ind.size()); }
  CsrRef ref() const { return {nrows, ncols, row_ptr.data(), col_ind.data(), values.data(), nnz()}; }
};

// A matrix as the cycle reads it: A with its fp64 values, or (v32 set) with the fp32 copy of its
// values at v32 instead.
struct CycleRef {
  CsrRef A;
  const float* v32 = nullptr;
  CycleRef(const CsrRef& a) : A(a) {}  // NOLINT: implicit, an fp64 operator is a cycle operator
  CycleRef(const CsrRef& a, const float* values32) : A(a), v32(values32) {}
  // f(the CsrRef or CsrRef32 to compute with)
  template <class F>
  void visit(F&& f) const
  {
    if (v32) f(with_values(A, v32));
    else f(A);
  }
};

class Ops;            // the backend's operations (amg_ops.hpp)
class DistHierarchy;  // the hierarchy of a distributed run (amg_distributed.hpp)

// A sparse product the backend cannot form (cuSPARSE "insufficient resources"); the setup then
// gives that level a plain (piecewise-constant) prolongation.
struct ProductTooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A backend's saved state of one sparse product or transpose (symbolic once, numeric many times).
struct Plan {
  virtual ~Plan() = default;
};

struct Level {
  Matrix A;                  // the operator (empty on level 0: the finest is the caller's matrix)
  Array<index_t> agg;        // aggregate of every row (not on the coarsest level)
  Matrix P0;                 // piecewise-constant prolongation (smoothed aggregation only)
  Matrix P, R;               // prolongation and restriction R = P^T
  Matrix AP;                 // A P (Galerkin intermediate)
  std::unique_ptr<Plan> ap0_plan, ap_plan, rap_plan, r_plan;  // A P0 (smoothed), A P, R (A P), P^T
  bool smoothed = false;     // smoothed-aggregation P on this level (else piecewise constant)
  bool p_ready = false;      // P and R hold values (keep_interpolation: not recomputed)
  Array<double> dinv;        // smoother scaling (Jacobi smoothers)
  Array<float> A32, P32, R32;  // StoragePrecision::fp32: the values of A (not on level 0), P and R in fp32
  std::unique_ptr<Plan> ilu; // ILU(0) smoother: pattern, schedule, factors (Ops::ilu_symbolic)
  mutable Array<double> x, b, r, t;  // cycle work vectors
};

// A host copy of one level (tests, diagnostics): rows of every matrix sorted by column.
struct HostLevel {
  Csr A, P, R;
  std::vector<index_t> agg;
  std::vector<double> dinv;
  double sa_omega = 0.0;
};

}  // namespace amg

// M^{-1} = one V-cycle with zero initial guess: pre-smoothing, residual restricted by R = P^T,
// the coarse problem (recursively; the coarsest solved by LU), the prolongated correction,
// post-smoothing (AmgOptions::cycle = w visits each coarse level twice; cycles > 1 repeats the
// cycle from the last result). With symmetric A, equal pre/post sweeps and a symmetric smoother the cycle is
// a symmetric operator (usable by CG).
// The finest level is read from the matrix given to setup(), which must stay alive, with the
// same values, while the preconditioner is applied. Matrix and vectors live on the executor the
// preconditioner was made for (CPU or CUDA); the setup runs there too.
class AmgPreconditioner final : public Preconditioner {
 public:
  explicit AmgPreconditioner(ExecPtr exec, AmgOptions opt = {});
  ~AmgPreconditioner() override;
  // Full setup when the structure is new, refresh_numeric otherwise (every refresh_interval calls).
  SetupStatus setup(const BsrMatrix& A) override;
  // Several ranks: the distributed hierarchy (amg_distributed.hpp), with the same reuse (refresh_interval,
  // refresh_growth) as setup(); apply() then takes the owned rows. One rank, or the ILU(0) smoother (not
  // distributed): setup(A.diag()), this rank's own hierarchy of its subdomain.
  SetupStatus setup_distributed(const dist::DistBsrMatrix& A) override;
  // Recomputes the values (P for smoothed aggregation, Galerkin operators, smoother scalings,
  // coarse LU) on the hierarchy's existing aggregates and patterns. A must have the structure of
  // the last full setup (throws std::invalid_argument otherwise).
  SetupStatus refresh_numeric(const BsrMatrix& A);
  // Strength, aggregation, patterns and values from scratch.
  SetupStatus setup_full(const BsrMatrix& A);
  void apply(const Vector& r, Vector& z) const override;
  std::string name() const override;
  void note_new_step() override;
  std::uint64_t launch_epoch() const override;
  // The cycles' passes as cycle() makes them (not stated with the ILU(0) smoother: 0).
  double apply_bytes() const override;
  void note_solve(int iterations, bool converged) override;

  const AmgOptions& options() const { return opt_; }
  const AmgStatistics& statistics() const { return stats_; }
  // The distributed hierarchy of the last setup_distributed on several ranks, else nullptr.
  const amg::DistHierarchy* distributed() const { return dist_.get(); }
  // "4 levels (72000, 5519, 431, 33 rows), operator complexity 1.31, grid complexity 1.08; 45 full setups,
  // 52 value refreshes, 174 setups kept (7 refreshes within a time step)": those after growth or a failed solve.
  std::string setup_summary() const override;
  int num_levels() const { return static_cast<int>(levels_.size()); }
  const amg::Level& level(int l) const { return levels_.at(static_cast<std::size_t>(l)); }
  // The operator of level l (level 0: the matrix of the last setup), in the executor's memory.
  amg::CsrRef level_operator(int l) const;
  // Host copies of level l's operator, transfer operators, aggregates and smoother scaling.
  amg::HostLevel level_host(int l) const;

 private:
  // setup() on the structure of the last full setup: keep the hierarchy, or refresh its values (refresh_interval,
  // refresh_growth); counts the kept setups and growth refreshes.
  enum class Reuse { keep, refresh };
  Reuse reuse_decision();
  bool same_structure(const BsrMatrix& A) const;
  void check_matrix(const BsrMatrix& A) const;
  void numeric_level(int l);  // values of level l + 1's operator and level l's transfer data
  void queue_finish();         // smoothers of every level and the coarse factorisation (no wait)
  SetupStatus read_status();   // waits for the setup, reads every level's status at once
  void update_statistics();
  void cycle(int l, bool zero_guess) const;  // one cycle on level l (from x = 0, or from L.x)
  double cycle_bytes(int l, bool zero_guess) const;  // the bytes cycle(l, zero_guess) moves
  void cycles() const;                        // the apply's opt_.cycles cycles on level 0
  // StoragePrecision::fp32: the fp32 copies of the finest operator's values (every setup) and of every
  // level's operator and transfer operators (full and numeric setups), queued on the backend.
  void narrow_fine();
  void narrow_levels();
  // Level l's operator, and a transfer operator (P or R with its fp32 copy), in the cycle's storage.
  amg::CycleRef cycle_operator(int l) const;
  amg::CycleRef cycle_transfer(const amg::Matrix& M, const Array<float>& m32) const;

  ExecPtr exec_;
  AmgOptions opt_;
  std::unique_ptr<amg::Ops> ops_;
  amg::CsrRef fine_;  // the last setup's matrix
  Array<float> fine32_;  // StoragePrecision::fp32: its values in fp32
  Array<index_t> key_row_ptr_, key_col_ind_;  // structure of the last full setup
  std::vector<amg::Level> levels_;
  // Coarsest level: dense LU (row-major, one-block batch layout) and, on CUDA from
  // amg::coarse_inverse_min_rows rows, the explicit inverse the cycle multiplies by (else empty).
  Array<double> coarse_lu_;
  Array<index_t> coarse_piv_;
  Array<double> coarse_inv_;
  bool coarse_direct_ = false;
  // Device-side results of the numeric setup: the Jacobi radius bound of every smoothed level
  // (its damping 4 / (3 rho) is computed where it is used) and, read with one copy at the end of
  // every setup, each level's first bad smoother row and the coarse LU's info.
  Array<double> rho_;
  Array<index_t> status_;
  // The recorded numeric re-setup (CUDA graph) and the fine matrix arrays it was recorded for.
  std::array<const void*, 3> numeric_key_{};
  bool numeric_graph_usable_ = true;  // false after a recording failed
  mutable std::uint64_t cycle_epoch_ = 0;  // launch_epoch() when the cycle graph was recorded
  AmgStatistics stats_;
  int since_refresh_ = 0;  // setup() calls since the last full or numeric setup
  // refresh_growth: a time step began since the last setup (true until the loop says otherwise:
  // without its feedback every setup refreshes); iterations of the first solve after the last
  // refresh (-1: none yet) and of the last solve, and whether the last solve failed.
  bool new_step_ = true;
  int base_iterations_ = -1, last_iterations_ = -1;
  bool last_failed_ = false;
  bool feedback_ = false;  // note_solve was called since the last setup
  std::unique_ptr<amg::DistHierarchy> dist_;  // several ranks (setup_distributed)
};

}  // namespace blockres
