// ILU(0) preconditioner on the scalar view of a BSR matrix (kernels/ilu_isai/ilu.hpp; on CUDA by default
// cuSPARSE's csrilu02 and SpSV, cusparse_ilu0.hpp, Ilu0Options::implementation), applied either by
// exact (level-scheduled) triangular solves or by the ISAI of its factors (kernels/ilu_isai/isai.hpp) as
// two sparse matrix-vector products, optionally refined by fixed-point sweeps.
#pragma once

#include "linalg/preconditioners/ilu0/ilu0_base.hpp"
#include "linalg/preconditioners/isai/isai_preconditioner.hpp"

#include <memory>

namespace blockres {

// M = U^{-1} L^{-1} with A ~ L U the ILU(0) of A's scalar view (every BSR block entry one CSR
// entry, so it is block ILU(0) with LU-factored diagonal blocks). The symbolic part (CSR
// pattern, level schedule, ISAI patterns) runs once per matrix structure; the numeric part
// (values, factorisation, ISAI generation) on every setup. A zero or non-finite pivot fails the
// setup with a message naming the block row and component.
class CusparseIlu0;

class Ilu0Preconditioner final : public Ilu0Base {
 public:
  explicit Ilu0Preconditioner(ExecPtr exec, Ilu0Options opt = {});
  ~Ilu0Preconditioner() override;
  SetupStatus setup(const BsrMatrix& A) override;
  void apply(const Vector& r, Vector& z) const override;
  std::string name() const override;
  // On CUDA with cuSPARSE (implementation automatic or cusparse): says so, for the run log; else empty.
  std::string setup_summary() const override;

  size64_t factor_nnz() const override { return lu_val_.size(); }
  size64_t isai_nnz() const override;
  const BsrMatrix* isai_matrix(kernels::Triangle tri) const override;
  // After setup: the factors (L strictly lower with unit diagonal implied, U diagonal and upper)
  // in the scalar CSR expansion of A. With cuSPARSE's BSR form (exact solves at block sizes
  // cusparse_bsr_min_block_size..cusparse_bsr_max_block_size) the factors live in BSR order: call
  // refresh_csr_factors() first (it copies them into the CSR arrays; a no-op in the other forms).
  kernels::CsrView<const double> factors() const { return lu_view(); }
  void refresh_csr_factors();
  // The ISAI generation again from the current factors, without the expansion and factorisation.
  void regenerate_isai() override;

 private:
  void symbolic(const BsrMatrix& A);
  kernels::CsrView<const double> lu_view() const;
  void triangular_apply(kernels::Triangle tri, const Vector& b, Vector& x) const;

  index_t n_ = 0;  // scalar rows
  Array<index_t> lu_row_ptr_, lu_col_;
  Array<double> lu_val_;
  struct Isai;  // ISAI matrices of both factors (trisolve = isai, scalar view)
  std::unique_ptr<Isai> isai_lower_, isai_upper_;
  Array<index_t> block_row_ptr_, block_col_;                // block view: A's block pattern
  std::unique_ptr<IsaiMatrix> block_lower_, block_upper_;  //   and the ISAI matrices
  mutable Vector t_, w_;
  bool use_cusparse_ = false;               // CUDA with implementation cusparse or automatic:
  std::unique_ptr<CusparseIlu0> cusparse_;  //   csrilu02 (+ SpSV) on lu_*_, or (cusparse_bsr_: exact
  bool cusparse_bsr_ = false;               //   solves at bs 3..8) bsrilu02 + bsrsv2 on a copy of A's
  Array<double> bsr_val_;                   //   BSR storage, its factors in bsr_val_ and the position
  Array<index_t> pivot_pos_;                //   of every scalar pivot in them in pivot_pos_
};

}  // namespace blockres
