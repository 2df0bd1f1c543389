// Block-view ISAI matrices on an executor (kernels/ilu_isai/isai_block.hpp), and the general ISAI of A as
// a stand-alone preconditioner (deck: type = "isai").
#pragma once

#include "kernels/ilu_isai/isai_block.hpp"
#include "linalg/preconditioners/isai/isai_options.hpp"
#include "linalg/preconditioners/preconditioner.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace blockres {

// M of one ISAI (kind, power) of a matrix with the given square BSR pattern (host arrays): the
// pattern analysis runs once in the constructor; generate() computes M's values from the
// matrix's current values. M is a BSR matrix with the pattern's block size, applied by the SpMV.
class IsaiMatrix {
 public:
  IsaiMatrix(ExecPtr exec, kernels::IsaiKind kind, index_t nrows, int bs, const std::vector<index_t>& row_ptr,
             const std::vector<index_t>& col_ind, int power);
  // Values of the matrix (executor memory; its pattern is the constructor's). Asynchronous on
  // CUDA; the returned status (0, or j + 1 for the first block column j whose small system is
  // singular) is read only when check is true, which synchronises.
  int generate(kernels::BlockValuesView<const double> A, bool check = true);
  // The whole-block triangles of a block ILU(0) (kinds unit_block_lower, block_upper): M by block
  // substitution with the factorisation's inverted diagonal blocks dinv (executor memory, read for
  // block_upper; kernels::cpu::isai_block_substitute), one launch and no scratch; above
  // kernels::isai_substitute_max_bs generate(F, false). Asynchronous on CUDA, nothing checked (the
  // factorisation checked the diagonal blocks).
  void generate_factor(kernels::BlockValuesView<const double> F, const double* dinv);
  const BsrMatrix& M() const { return *M_; }
  const kernels::IsaiBlockPattern& pattern() const { return pattern_; }

 private:
  kernels::cuda::IsaiBlockDevicePattern device_pattern() const;
  ExecPtr exec_;
  kernels::IsaiBlockPattern pattern_;
  Array<index_t> col_ptr_, row_ind_, bsr_pos_, short_cols_, long_cols_;
  Array<double> scratch_;
  Array<int> info_;
  std::unique_ptr<BsrMatrix> M_;
};

// M ~ A^{-1} with (A M - I)(i, j) = 0 on S(|A|^k) (right ISAI, column by column with partial
// pivoting). view = block: the units are A's block columns and M has A's block size; view =
// scalar: the units are the scalar columns of A's CSR expansion and M is CSR. The pattern is
// analysed once per matrix structure; setup() only generates the values.
class IsaiPreconditioner final : public Preconditioner {
 public:
  explicit IsaiPreconditioner(ExecPtr exec, IsaiOptions opt = {});
  ~IsaiPreconditioner() override;
  SetupStatus setup(const BsrMatrix& A) override;
  void apply(const Vector& r, Vector& z) const override;
  std::string name() const override;
  // After setup: M (nullptr before).
  const IsaiMatrix* isai() const { return isai_.get(); }

 private:
  void symbolic(const BsrMatrix& A);

  ExecPtr exec_;
  IsaiOptions opt_;
  std::uint64_t pattern_key_ = 0;  // BsrMatrix::pattern_id() of the last symbolic setup
  index_t nrows_ = 0;
  index_t nnzb_ = -1;
  int bs_ = 0;
  Array<index_t> csr_row_ptr_, csr_col_;  // scalar view: A's CSR expansion
  Array<double> csr_val_;
  std::unique_ptr<IsaiMatrix> isai_;
};

}  // namespace blockres
