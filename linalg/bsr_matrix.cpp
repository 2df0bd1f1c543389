// BSR matrix setup (pattern checks, diagonal positions) and the SpMV dispatch.
#include "linalg/bsr_matrix.hpp"

#include "kernels/bsrmv.hpp"

#include <algorithm>
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

BsrMatrix::BsrMatrix(ExecPtr exec, int bs, const BsrPattern& p)
    : nrows_(p.nrows), ncols_(p.ncols), nnzb_(p.nnzb()), bs_(bs)
{
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
  values_ = Array<double>(exec, size64_t(nnzb_) * bs * bs);
}

void spmv(const BsrMatrix& A, double alpha, const Array<double>& x, double beta, Array<double>& y)
{
  if (x.size() != size64_t(A.ncols()) * A.block_size() || y.size() != A.scalar_rows())
    throw std::invalid_argument("spmv: vector sizes do not match the matrix");
  if (A.exec().is_cuda()) {
#if BLOCKRES_HAVE_CUDA
    kernels::cuda::bsrmv(A.exec().stream(), A.view(), alpha, x.data(), beta, y.data());
#endif
  } else {
    kernels::cpu::bsrmv(A.view(), alpha, x.data(), beta, y.data());
  }
}

}  // namespace blockres
