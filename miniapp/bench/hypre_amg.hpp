// hypre BoomerAMG as a Preconditioner on the CPU executor: the quality peer of `blockres bench amg`
// (built only with BLOCKRES_WITH_HYPRE; hypre needs MPI, used here as one process on MPI_COMM_SELF).
#pragma once

#include "linalg/preconditioners/preconditioner.hpp"

#include <memory>
#include <string>
#include <vector>

namespace blockres {

// The BoomerAMG configuration used (fixed, so runs compare; written into the bench report).
struct HypreAmgSettings {
  int coarsen_type = 10;           // HMIS
  int interp_type = 6;             // extended+i
  int p_max_elements = 4;          // interpolation truncation: at most 4 entries per row of P
  double strong_threshold = 0.5;   // hypre's recommendation for 3D problems
  int agg_num_levels = 0;          // no aggressive coarsening
  int relax_down = 13, relax_up = 14;  // l1 Gauss-Seidel forward down, backward up: a symmetric V-cycle (CG)
  int relax_coarse = 9;            // Gaussian elimination on the coarsest level
  int num_sweeps = 1;
  int max_coarse_size = 9;         // hypre's default
  std::string describe() const;
};

struct HypreLevel {
  long long rows = 0, nnz = 0;
};

// M^{-1} = one BoomerAMG V-cycle from a zero initial guess (HYPRE_BoomerAMGSolve with max_iter 1, tol 0).
// setup(A) = set_matrix(A) (copy into a hypre IJ/ParCSR matrix) + setup_amg() (HYPRE_BoomerAMGSetup on a
// fresh solver), so the bench can time the two separately. A: block size 1 on the CPU executor.
class HypreBoomerAmg final : public Preconditioner {
 public:
  explicit HypreBoomerAmg(HypreAmgSettings settings = {});
  ~HypreBoomerAmg() override;
  SetupStatus setup(const BsrMatrix& A) override;
  void apply(const Vector& r, Vector& z) const override;
  std::string name() const override;

  void set_matrix(const BsrMatrix& A);
  SetupStatus setup_amg();

  // After setup_amg(): the hierarchy (finest first) and its complexities.
  const std::vector<HypreLevel>& levels() const { return levels_; }
  double operator_complexity() const;
  double grid_complexity() const;

  // hypre's version ("2.26.0") and whether it runs threaded.
  static std::string version();
  static int threads();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  HypreAmgSettings settings_;
  std::vector<HypreLevel> levels_;
};

}  // namespace blockres
