// BSR matrix setup (pattern checks, diagonal positions) and the SpMV dispatch.
#include "linalg/bsr_matrix.hpp"

#include "kernels/spmv/bsrmv.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace blockres {

index_t BsrPattern::find(index_t r, index_t c) const
{
  const auto b = col_ind.begin() + row_ptr[r], e = col_ind.begin() + row_ptr[r + 1];
  const auto it = std::lower_bound(b, e, c);
  return (it != e && *it == c) ? static_cast<index_t>(it - col_ind.begin()) : -1;
}

void BsrPattern::validate() const
{
  if (nrows < 0 || ncols < 0) throw std::invalid_argument("BsrPattern: negative dimension");
  if (row_ptr.size() != static_cast<std::size_t>(nrows) + 1 || row_ptr.front() != 0)
    throw std::invalid_argument("BsrPattern: row_ptr must have nrows+1 entries starting at 0");
  if (static_cast<std::size_t>(row_ptr.back()) != col_ind.size())
    throw std::invalid_argument("BsrPattern: row_ptr.back() != number of column indices");
  for (index_t r = 0; r < nrows; ++r) {
    if (row_ptr[r + 1] < row_ptr[r]) throw std::invalid_argument(fmt::format("BsrPattern: row_ptr decreases at row {}", r));
    for (index_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) {
      if (col_ind[k] < 0 || col_ind[k] >= ncols)
        throw std::invalid_argument(fmt::format("BsrPattern: column {} out of range in row {}", col_ind[k], r));
      if (k > row_ptr[r] && col_ind[k] <= col_ind[k - 1])
        throw std::invalid_argument(fmt::format("BsrPattern: columns not strictly increasing in row {}", r));
    }
  }
}

BsrMatrix::BsrMatrix(ExecPtr exec, int bs, const BsrPattern& p, const SpmvOptions& spmv_options)
    : BsrMatrix(exec, bs, p, Array<double>(), spmv_options)
{
}

BsrMatrix::BsrMatrix(ExecPtr exec, int bs, const BsrPattern& p, Array<double> values, const SpmvOptions& spmv_options)
    : nrows_(p.nrows), ncols_(p.ncols), nnzb_(p.nnzb()), bs_(bs)
{
  const bool given = values.exec_ptr() != nullptr;  // a default-constructed Array: allocate them here
  static std::atomic<std::uint64_t> next_pattern_id{1};  // 0: "no pattern" in the caches
  pattern_id_ = next_pattern_id.fetch_add(1, std::memory_order_relaxed);
  if (bs < 1) throw std::invalid_argument("BsrMatrix: block size must be >= 1");
  p.validate();
  row_ptr_ = Array<index_t>(exec, std::span<const index_t>(p.row_ptr));
  col_ind_ = Array<index_t>(exec, std::span<const index_t>(p.col_ind));
  if (nrows_ == ncols_) {
    std::vector<index_t> diag(static_cast<std::size_t>(nrows_), -1);
    bool full = true;
    for (index_t r = 0; r < nrows_; ++r) full = full && (diag[r] = p.find(r, r)) >= 0;
    if (full) diag_pos_ = Array<index_t>(exec, std::span<const index_t>(diag));
  }
  const size64_t nval = size64_t(nnzb_) * bs * bs;
  if (!given) {
    values_ = Array<double>(exec, nval);
  } else {
    if (values.size() != nval || &values.exec() != exec.get())
      throw std::invalid_argument(fmt::format("BsrMatrix: {} values given for {} blocks of {}x{}{}", values.size(), nnzb_,
                                              bs, bs, &values.exec() != exec.get() ? " (on another executor)" : ""));
    values_ = std::move(values);
  }
  for (index_t r = 0; r < nrows_; ++r) max_row_ = std::max(max_row_, p.row_ptr[r + 1] - p.row_ptr[r]);
  set_spmv_options(spmv_options);
}

void BsrMatrix::set_spmv_options(const SpmvOptions& o)
{
  if (!values_.exec().is_cuda()) return;  // the CPU reference needs no plan
#if BLOCKRES_HAVE_CUDA
  if (bs_ > 64) throw std::invalid_argument(fmt::format("BSR SpMV supports block sizes 1..64, not {}", bs_));
  // An explicit configuration first (benchmarks, tests), else what the executor's tuning cache
  // measured for this block size, else the built-in rule (keyed on the device's DRAM bandwidth per SM
  // and this matrix's mean blocks per block row; a cache entry is per block size only); the latter
  // two are recorded on the executor, so a run can say which configurations it used.
  const double mean = mean_row_blocks();
  if (o.config) {
    config_ = *o.config;
  } else {
    const Executor& e = values_.exec();
    config_ = e.tuning().bsrmv(bs_).value_or(kernels::cuda::bsrmv_rule(bs_, e.dram_gbps_per_sm(), mean));
    e.record_bsrmv_plan(bs_, config_);
  }
  balanced_ = o.balance == SpmvBalance::on ||
              (o.balance == SpmvBalance::automatic && max_row_ > 64 && double(max_row_) > 8.0 * mean);
  seg_row_ptr_ = {}, seg_ptr_ = {}, partial_ = {}, nseg_ = 0;
  if (!balanced_) return;
  const index_t seg = o.segment_blocks > 0 ? o.segment_blocks
                                           : std::max<index_t>(8, static_cast<index_t>(4.0 * std::ceil(mean)));
  const auto host_row_ptr = row_ptr_.to_host();
  const auto b = kernels::balance_rows(host_row_ptr.data(), nrows_, seg);
  const ExecPtr& e = values_.exec_ptr();
  seg_row_ptr_ = Array<index_t>(e, std::span<const index_t>(b.row_ptr));
  seg_ptr_ = Array<index_t>(e, std::span<const index_t>(b.seg_ptr));
  nseg_ = static_cast<index_t>(b.row_ptr.size()) - 1;
  partial_ = Array<double>(e, size64_t(nseg_) * bs_);
#else
  (void)o;
#endif
}

void BsrMatrix::apply(double alpha, const Array<double>& x, double beta, Array<double>& y) const
{
  if (x.size() != size64_t(ncols_) * bs_ || y.size() != scalar_rows())
    throw std::invalid_argument("spmv: vector sizes do not match the matrix");
  if (!values_.exec().is_cuda()) {
    kernels::cpu::bsrmv(view(), alpha, x.data(), beta, y.data());
    return;
  }
#if BLOCKRES_HAVE_CUDA
  const stream_t s = values_.exec().stream();
  if (!balanced_) {
    kernels::cuda::bsrmv(s, view(), alpha, x.data(), beta, y.data(), config_);
    return;
  }
  // Balanced: every segment is a row of its own; then sum the segments of each block row.
  const BsrView<const double> segments{nseg_, ncols_, bs_, seg_row_ptr_.data(), col_ind_.data(), values_.data()};
  kernels::cuda::bsrmv(s, segments, 1.0, x.data(), 0.0, partial_.data(), config_);
  kernels::cuda::segment_reduce(s, nrows_, bs_, seg_ptr_.data(), partial_.data(), alpha, beta, y.data());
#endif
}

}  // namespace blockres
