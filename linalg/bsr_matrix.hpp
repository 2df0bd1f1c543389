// BSR matrix in an executor's memory: structure uploaded once, values rewritten every Newton step.
#pragma once

#include "kernels/spmv/bsrmv.hpp"
#include "linalg/array.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace blockres {

// Host-side sparsity pattern (block rows, sorted block columns, one diagonal block per row
// for square matrices).
struct BsrPattern {
  index_t nrows = 0;
  index_t ncols = 0;
  std::vector<index_t> row_ptr;  // nrows + 1
  std::vector<index_t> col_ind;  // nnzb
  index_t nnzb() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
  // Position of block (r, c) in col_ind, or -1 when it is not in the pattern.
  index_t find(index_t r, index_t c) const;
  // Throws std::invalid_argument naming the defect (unsorted row, column out of range, ...).
  void validate() const;
};

// How the CUDA SpMV runs on a matrix (planned once per structure).
enum class SpmvBalance { automatic, off, on };
struct SpmvOptions {
  // Balanced rows (KSPARSE): block rows longer than segment_blocks are split and the partial
  // results reduced. automatic: on when the longest row is over 8x the mean and over 64 blocks.
  SpmvBalance balance = SpmvBalance::automatic;
  index_t segment_blocks = 0;  // 0: 4x the mean row length, at least 8
  // default: the executor's tuning (a tuning cache measured on this device), else the built-in rule
  std::optional<kernels::BsrmvConfig> config;
};

class BsrMatrix {
 public:
  BsrMatrix(ExecPtr exec, int bs, const BsrPattern& pattern, const SpmvOptions& spmv = {});
  // The same on values the caller provides (e.g. a view of a larger buffer that another part shares: a distributed
  // matrix's diag and offd parts in the one buffer a model assembles into): exactly nnzb * bs * bs of them, in
  // exec's memory (std::invalid_argument otherwise).
  BsrMatrix(ExecPtr exec, int bs, const BsrPattern& pattern, Array<double> values, const SpmvOptions& spmv = {});

  index_t nrows() const { return nrows_; }
  index_t ncols() const { return ncols_; }
  index_t nnzb() const { return nnzb_; }
  int block_size() const { return bs_; }
  size64_t scalar_rows() const { return size64_t(nrows_) * bs_; }
  const Executor& exec() const { return values_.exec(); }
  const ExecPtr& exec_ptr() const { return values_.exec_ptr(); }

  // The identity of this matrix's structure (row_ptr, col_ind, block size), which never changes
  // after construction: unique in the process (every constructed matrix draws a new one; copies and
  // moves keep it). Symbolic set-ups are cached by it, never by the address of row_ptr, which a
  // freed matrix hands on to the next one allocated.
  std::uint64_t pattern_id() const { return pattern_id_; }

  const Array<index_t>& row_ptr() const { return row_ptr_; }
  const Array<index_t>& col_ind() const { return col_ind_; }
  // diag_pos()[r] = position of block (r, r); requires a square pattern with full diagonal.
  const Array<index_t>& diag_pos() const { return diag_pos_; }
  Array<double>& values() { return values_; }
  const Array<double>& values() const { return values_; }

  BsrView<const double> view() const { return {nrows_, ncols_, bs_, row_ptr_.data(), col_ind_.data(), values_.data()}; }
  BsrView<double> mutable_view() { return {nrows_, ncols_, bs_, row_ptr_.data(), col_ind_.data(), values_.data()}; }

  // Re-plans the SpMV for this structure (kernel configuration, balancing).
  void set_spmv_options(const SpmvOptions& options);
  bool spmv_balanced() const { return balanced_; }
  index_t spmv_segments() const { return balanced_ ? nseg_ : nrows_; }
  const kernels::BsrmvConfig& spmv_config() const { return config_; }
  double mean_row_blocks() const { return nrows_ ? double(nnzb_) / nrows_ : 0.0; }
  index_t max_row_blocks() const { return max_row_; }

  // y = alpha*A*x + beta*y (beta == 0: y is not read).
  void apply(double alpha, const Array<double>& x, double beta, Array<double>& y) const;
  // The bytes such a product moves at least: values, column indices and row pointers once, x once,
  // y written (and read when reads_y: beta != 0).
  double spmv_bytes(bool reads_y) const
  {
    const double vec = 8.0 * double(bs_);
    return double(nnzb_) * (8.0 * double(bs_) * bs_ + 4.0) + 4.0 * (double(nrows_) + 1.0) + vec * double(ncols_) +
           vec * double(nrows_) * (reads_y ? 2.0 : 1.0);
  }

 private:
  index_t nrows_, ncols_, nnzb_;
  int bs_;
  std::uint64_t pattern_id_;
  index_t max_row_ = 0;
  Array<index_t> row_ptr_, col_ind_, diag_pos_;
  Array<double> values_;
  // SpMV plan
  kernels::BsrmvConfig config_;
  bool balanced_ = false;
  index_t nseg_ = 0;
  Array<index_t> seg_row_ptr_, seg_ptr_;
  mutable Array<double> partial_;
};

// y = alpha*A*x + beta*y on A's executor (beta == 0: y is not read).
inline void spmv(const BsrMatrix& A, double alpha, const Array<double>& x, double beta, Array<double>& y)
{
  A.apply(alpha, x, beta, y);
}

}  // namespace blockres
