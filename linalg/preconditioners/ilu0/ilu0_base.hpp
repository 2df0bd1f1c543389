// What the scalar-view and the block-view ILU(0) share: their options, the structure of the last
// symbolic setup, the level schedule of both triangular solves, and what a caller may ask after setup.
#pragma once

#include "kernels/ilu_isai/ilu.hpp"
#include "kernels/ilu_isai/isai.hpp"
#include "linalg/array.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/preconditioners/preconditioner.hpp"

#include <cstdint>
#include <span>
#include <utility>

namespace blockres {

// M = U^{-1} L^{-1} with A ~ L U an ILU(0) of A (Ilu0Preconditioner: scalar view,
// BlockIlu0Preconditioner: block view; make_preconditioner(ExecPtr, const Ilu0Options&) picks one).
class Ilu0Base : public Preconditioner {
 public:
  // After setup: the entries of the factors and of the ISAI matrices (0 for exact solves), the
  // levels of the L and U solves, and the ISAI M of one factor (nullptr for exact solves).
  virtual size64_t factor_nnz() const = 0;
  virtual size64_t isai_nnz() const = 0;
  index_t lower_levels() const { return sched_.lower_levels(); }
  index_t upper_levels() const { return sched_.upper_levels(); }
  virtual const BsrMatrix* isai_matrix(kernels::Triangle tri) const = 0;
  // Runs the ISAI generation of both factors again from the current factors (asynchronous on CUDA), without
  // the factorisation: for timing it apart from the setup (bench isai, the bench suite). No-op without ISAI.
  virtual void regenerate_isai() = 0;

 protected:
  Ilu0Base(ExecPtr exec, Ilu0Options opt) : exec_(std::move(exec)), opt_(opt) {}

  // A's structure is not the one the last symbolic setup recorded (with keep_structure).
  bool new_structure(const BsrMatrix& A) const
  {
    return pattern_key_ != A.pattern_id() || nrows_ != A.nrows() || nnzb_ != A.nnzb() || bs_ != A.block_size();
  }
  void keep_structure(const BsrMatrix& A)
  {
    pattern_key_ = A.pattern_id();
    nrows_ = A.nrows();
    nnzb_ = A.nnzb();
    bs_ = A.block_size();
  }
  // The level schedule, and its row lists on the executor.
  void set_schedule(kernels::IluSchedule sched)
  {
    sched_ = std::move(sched);
    diag_ = Array<index_t>(exec_, std::span<const index_t>(sched_.diag));
    lower_rows_ = Array<index_t>(exec_, std::span<const index_t>(sched_.lower_rows));
    upper_rows_ = Array<index_t>(exec_, std::span<const index_t>(sched_.upper_rows));
  }

  ExecPtr exec_;
  Ilu0Options opt_;
  std::uint64_t pattern_key_ = 0;  // BsrMatrix::pattern_id() of the last symbolic setup
  index_t nrows_ = 0;
  index_t nnzb_ = -1;
  int bs_ = 0;
  kernels::IluSchedule sched_;
  Array<index_t> diag_, lower_rows_, upper_rows_;
  Array<int> info_;
};

}  // namespace blockres
