// Block ILU(0) preconditioner on the BSR block pattern (kernels/ilu_isai/ilu_block.hpp), applied by exact
// block-level-scheduled triangular solves or by the block-view ISAI of its factors.
#pragma once

#include "kernels/ilu_isai/ilu_block.hpp"
#include "linalg/preconditioners/ilu0/ilu0_base.hpp"
#include "linalg/preconditioners/isai/isai_preconditioner.hpp"

#include <memory>

namespace blockres {

// M = U^{-1} L^{-1} with A ~ L U the block ILU(0) of A (Ilu0Options::factor_view = block): L unit
// block lower, U block upper with dense diagonal blocks, both in A's BSR pattern, so the factors
// take exactly the memory of A's values plus one bs x bs inverse per block row, for every block
// size. The symbolic part (pattern copy, block level schedule, ISAI patterns, device workspace)
// runs once per matrix structure; the numeric part (copy of the values, factorisation, ISAI
// generation) on every setup. A singular diagonal block U_ii fails the setup with a message naming
// the block row. trisolve = isai needs view = block (the ISAI kinds unit_block_lower and
// block_upper on the BSR-stored factors); its sweeps x <- x + M (b - T x) use the factors in place
// (kernels/ilu_isai/ilu_block.hpp: block_triangle_residual) and the ISAI's BSR SpMV.
class BlockIlu0Preconditioner final : public Ilu0Base {
 public:
  explicit BlockIlu0Preconditioner(ExecPtr exec, Ilu0Options opt = {});
  ~BlockIlu0Preconditioner() override;
  SetupStatus setup(const BsrMatrix& A) override;
  void apply(const Vector& r, Vector& z) const override;
  std::uint64_t launch_epoch() const override;
  double apply_bytes() const override;
  std::string name() const override;

  size64_t factor_nnz() const override { return lu_.size(); }
  size64_t isai_nnz() const override;
  const BsrMatrix* isai_matrix(kernels::Triangle tri) const override;
  // The block ISAI generation (block substitution) again from the current factors (setup runs it too).
  void regenerate_isai() override;
  // After setup: the factors in A's BSR order (strictly lower blocks: L, diagonal and upper
  // blocks: U) and the inverses of the diagonal blocks U_ii (row-major, block row order); the
  // levels are block levels.
  BsrView<const double> factors() const;
  const Array<double>& diagonal_inverses() const { return dinv_; }

 private:
  void symbolic(const BsrMatrix& A);
  void triangular_apply(kernels::Triangle tri, const Vector& b, Vector& x) const;

  Array<index_t> row_ptr_, col_;  // A's block pattern (own copy: apply must not depend on A)
  Array<double> lu_, dinv_, workspace_;
  // Iterative factorisation (opt_.factor_sweeps > 0): the sweep plan, its device arrays, the other
  // buffer of the Jacobi sweeps.
  kernels::BlockIluSweepPlan sweep_plan_;
  Array<size64_t> pair_ptr_;
  Array<index_t> pair_l_, pair_u_, row_of_, diag_next_;
  Array<double> lu2_;
  // storage = fp32: the factors' and the ISAI matrices' values as fp32 copies (setup), read by apply.
  Array<float> lu32_, m32_lower_, m32_upper_;
  std::unique_ptr<IsaiMatrix> isai_lower_, isai_upper_;
  mutable Vector t_, w_;  // w_: the sweeps' residual (isai with sweeps > 0 only)
  index_t lower_blocks_ = 0;  // blocks strictly below the diagonal (apply_bytes)
};

}  // namespace blockres
