// Aggregation algebraic multigrid for scalar (bs = 1) matrices: options, hierarchy statistics and
// AmgPreconditioner (one V-cycle per apply). CPU backend now; the CUDA twin follows the same
// structure (linalg/amg/amg_kernels.hpp lists the kernels it needs).
#pragma once

#include "linalg/amg/amg_kernels.hpp"
#include "linalg/amg/amg_options.hpp"
#include "linalg/preconditioner.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace blockres {

struct AmgLevelStatistics {
  index_t rows = 0;
  index_t nnz = 0;
};

struct AmgStatistics {
  std::vector<AmgLevelStatistics> levels;  // finest first
  double operator_complexity = 0.0;        // sum of nnz over levels / nnz of A
  double grid_complexity = 0.0;            // sum of rows over levels / rows of A
  bool coarsest_direct = true;             // false: the coarsest level (> 512 rows) is smoothed only
  int full_setups = 0;                     // symbolic + numeric
  int numeric_setups = 0;                  // numeric only (structure reused)
  int kept_setups = 0;                     // setup() calls that kept the hierarchy (refresh_interval)
  std::string to_string() const;           // a one-line-per-level table
};

namespace amg {

struct Level {
  Csr A;                   // the operator (empty on level 0: the finest is the caller's matrix)
  std::vector<index_t> agg;  // aggregate of every row (not on the coarsest level)
  Csr P0;                  // piecewise-constant prolongation (smoothed aggregation only)
  Csr P, R;                // prolongation and restriction R = P^T
  std::vector<index_t> r_map;  // R.values[q] = P.values[r_map[q]]
  Csr AP;                  // A P (Galerkin intermediate)
  double sa_omega = 0.0;   // smoothed aggregation damping of this level
  std::vector<double> dinv;  // smoother scaling
  mutable std::vector<double> x, b, r, t;  // cycle work vectors
};

}  // namespace amg

// M^{-1} = one V-cycle with zero initial guess: pre-smoothing, residual restricted by R = P^T,
// the coarse problem (recursively; the coarsest solved by LU), the prolongated correction,
// post-smoothing. With symmetric A, equal pre/post sweeps and a symmetric smoother the cycle is
// a symmetric operator (usable by CG).
// The finest level is read from the matrix given to setup(), which must stay alive, with the
// same values, while the preconditioner is applied.
class AmgPreconditioner final : public Preconditioner {
 public:
  explicit AmgPreconditioner(ExecPtr exec, AmgOptions opt = {});
  // Full setup when the structure is new (or reuse_structure is off), refresh_numeric otherwise.
  SetupStatus setup(const BsrMatrix& A) override;
  // Recomputes the values (P for smoothed aggregation, Galerkin operators, smoother scalings,
  // coarse LU) on the hierarchy's existing aggregates and patterns. A must have the structure of
  // the last full setup (throws std::invalid_argument otherwise).
  SetupStatus refresh_numeric(const BsrMatrix& A);
  // Strength, aggregation, patterns and values from scratch.
  SetupStatus setup_full(const BsrMatrix& A);
  void apply(const Vector& r, Vector& z) const override;
  std::string name() const override;

  const AmgOptions& options() const { return opt_; }
  const AmgStatistics& statistics() const { return stats_; }
  int num_levels() const { return static_cast<int>(levels_.size()); }
  const amg::Level& level(int l) const { return levels_.at(static_cast<std::size_t>(l)); }
  // The operator of level l (level 0: the matrix of the last setup).
  amg::CsrRef level_operator(int l) const;

 private:
  bool same_structure(const BsrMatrix& A) const;
  void check_matrix(const BsrMatrix& A) const;
  void numeric_level(int l);  // values of level l + 1's operator and level l's transfer data
  SetupStatus finish_numeric();  // smoothers of every level and the coarse factorisation
  void update_statistics();
  void cycle(int l) const;

  ExecPtr exec_;
  AmgOptions opt_;
  amg::CsrRef fine_;  // the last setup's matrix
  std::vector<index_t> key_row_ptr_, key_col_ind_;  // structure of the last full setup
  std::vector<amg::Level> levels_;
  // Coarsest level: dense LU (row-major, one-block batch layout).
  std::vector<double> coarse_lu_;
  std::vector<index_t> coarse_piv_;
  bool coarse_direct_ = false;
  AmgStatistics stats_;
  int since_refresh_ = 0;  // setup() calls since the last full or numeric setup
};

}  // namespace blockres
