// Block ILU(0) preconditioner on the BSR block pattern (kernels/ilu_isai/ilu_block.hpp), applied by exact
// block-level-scheduled triangular solves or by the block-view ISAI of its factors.
#pragma once

#include "kernels/ilu_isai/ilu.hpp"
#include "kernels/ilu_isai/ilu_block.hpp"
#include "kernels/ilu_isai/isai.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/preconditioners/isai/isai_preconditioner.hpp"
#include "linalg/preconditioners/preconditioner.hpp"

#include <cstdint>
#include <memory>

namespace blockres {

// M = U^{-1} L^{-1} with A ~ L U the block ILU(0) of A (Ilu0Options::factor_view = block): L unit
// block lower, U block upper with dense diagonal blocks, both in A's BSR pattern, so the factors
// take exactly the memory of A's values plus one bs x bs inverse per block row, for every block
// size. The symbolic part (pattern copy, block level schedule, ISAI patterns, device workspace)
// runs once per matrix structure; the numeric part (copy of the values, factorisation, ISAI
// generation) on every setup. A singular diagonal block U_ii fails the setup with a message naming
// the block row. trisolve = isai needs view = block (the ISAI kinds unit_block_lower and
// block_upper on the BSR-stored factors) and sweeps = 0.
class BlockIlu0Preconditioner final : public Preconditioner {
 public:
  explicit BlockIlu0Preconditioner(ExecPtr exec, Ilu0Options opt = {});
  ~BlockIlu0Preconditioner() override;
  SetupStatus setup(const BsrMatrix& A) override;
  void apply(const Vector& r, Vector& z) const override;
  std::string name() const override;

  // After setup: the factors in A's BSR order (strictly lower blocks: L, diagonal and upper
  // blocks: U), the inverses of the diagonal blocks U_ii (row-major, block row order), the
  // entries of the factors and of the ISAI matrices (0 for exact solves), the block levels.
  BsrView<const double> factors() const;
  const Array<double>& diagonal_inverses() const { return dinv_; }
  size64_t factor_nnz() const { return lu_.size(); }
  size64_t isai_nnz() const;
  index_t lower_levels() const { return sched_.lower_levels(); }
  index_t upper_levels() const { return sched_.upper_levels(); }
  // The ISAI M of one factor (nullptr for exact solves).
  const BsrMatrix* isai_matrix(kernels::Triangle tri) const;

 private:
  void symbolic(const BsrMatrix& A);
  void triangular_apply(kernels::Triangle tri, const Vector& b, Vector& x) const;

  ExecPtr exec_;
  Ilu0Options opt_;
  std::uint64_t pattern_key_ = 0;  // BsrMatrix::pattern_id() of the last symbolic setup
  index_t nrows_ = 0;
  index_t nnzb_ = -1;
  int bs_ = 0;
  Array<index_t> row_ptr_, col_;  // A's block pattern (own copy: apply must not depend on A)
  Array<double> lu_, dinv_, workspace_;
  kernels::IluSchedule sched_;
  Array<index_t> diag_, lower_rows_, upper_rows_;
  Array<int> info_;
  // Iterative factorisation (opt_.factor_sweeps > 0): the sweep plan, its device arrays, the other
  // buffer of the Jacobi sweeps.
  kernels::BlockIluSweepPlan sweep_plan_;
  Array<size64_t> pair_ptr_;
  Array<index_t> pair_l_, pair_u_, row_of_, diag_next_;
  Array<double> lu2_;
  std::unique_ptr<IsaiMatrix> isai_lower_, isai_upper_;
  mutable Vector t_;
};

}  // namespace blockres
