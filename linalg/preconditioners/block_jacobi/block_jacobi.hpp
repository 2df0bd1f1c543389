// Block-Jacobi on the batched dense kernels: M = blockdiag(D_g) over the natural BSR diagonal
// blocks, the scalar diagonal, or agglomerated blocks.
#pragma once

#include "kernels/batched/batched.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi_options.hpp"
#include "linalg/preconditioners/preconditioner.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blockres {

// M = blockdiag(D_g) over the Jacobi blocks D_g. The symbolic part (grouping, extraction map,
// storage) runs once per matrix structure; the numeric part (extract, factor) on every setup.
// A block whose factorisation fails (info != 0, kernels/batched/batched.hpp) fails the setup with a
// message naming it; nothing is applied silently.
class BlockJacobiPreconditioner final : public Preconditioner {
 public:
  explicit BlockJacobiPreconditioner(ExecPtr exec, BlockJacobiOptions opt = {});
  SetupStatus setup(const BsrMatrix& A) override;
  void apply(const Vector& r, Vector& z) const override;
  std::uint64_t launch_epoch() const override;
  double apply_bytes() const override;
  double setup_bytes() const override;
  std::string name() const override;

  index_t num_blocks() const { return layout_.count; }
  int largest_block() const { return layout_.max_size; }
  // First scalar row of every Jacobi block and one past the last (num_blocks() + 1 entries).
  std::vector<index_t> block_offsets() const;

 private:
  void symbolic(const BsrMatrix& A);

  ExecPtr exec_;
  BlockJacobiOptions opt_;
  std::uint64_t pattern_key_ = 0;  // BsrMatrix::pattern_id() of the last symbolic setup
  index_t nrows_ = 0;
  index_t nnzb_ = -1;
  int bs_ = 0;
  enum class Mode { scalar, natural, agglomerated } mode_ = Mode::natural;
  BlockFactorization fact_;  // opt_.factorization, with automatic resolved by the first setup
  kernels::BatchLayout layout_;
  Array<index_t> row_off_;
  Array<size64_t> mat_off_;
  // Agglomerated blocks on CUDA: layout_.by_size points here (on the heap, so a moved preconditioner keeps
  // it), its order (device) in size_order_.
  std::unique_ptr<kernels::BatchSizeIndex> size_index_;
  Array<index_t> size_order_;
  Array<index_t> src_;        // extraction map: BSR block position ...
  Array<size64_t> dst_off_;   // ... to the offset of its (0, 0) entry in factors_
  Array<int> ld_;             // ... with that Jacobi block's leading dimension
  Array<double> factors_;
  Array<float> factors32_;  // StoragePrecision::fp32: the inverses in fp32 (what apply reads)
  Array<index_t> piv_;
  Array<int> info_;
  Array<index_t> counter_;
};

}  // namespace blockres
