// CPU reference BSR SpMV (the oracle for the CUDA kernels), row balancing, segment reduction.
#include "kernels/spmv/bsrmv.hpp"
#include "kernels/parallel_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace blockres::kernels {

std::string_view to_string(BsrmvKernel k)
{
  switch (k) {
    case BsrmvKernel::small: return "small";
    case BsrmvKernel::medium: return "medium";
    case BsrmvKernel::staged: return "staged";
    case BsrmvKernel::wide: return "wide";
    case BsrmvKernel::large: return "large";
  }
  return "?";
}

std::string describe(const BsrmvConfig& c)
{
  switch (c.kernel) {
    case BsrmvKernel::small:
      return fmt::format("small(warps={}, unroll={}, rows_per_warp={})", c.warps, c.unroll, c.rows_per_warp);
    case BsrmvKernel::medium:
    case BsrmvKernel::staged:
      return fmt::format("{}(groups={}, arrays={}, unroll={}{})", to_string(c.kernel), c.groups, c.arrays, c.unroll,
                         c.clamped ? ", clamped" : "");
    case BsrmvKernel::wide: return fmt::format("wide(warps={}, unroll={})", c.warps, c.unroll);
    case BsrmvKernel::large:
      return fmt::format("large(warps={}, unroll={}, row_split={})", c.warps, c.unroll, c.row_split);
  }
  return "?";
}

BalancedRows balance_rows(const index_t* row_ptr, index_t nrows, index_t max_blocks)
{
  if (max_blocks < 1) throw std::invalid_argument("balance_rows: max_blocks must be >= 1");
  BalancedRows b;
  b.seg_ptr.reserve(static_cast<std::size_t>(nrows) + 1);
  b.row_ptr.push_back(row_ptr[0]);
  b.seg_ptr.push_back(0);
  for (index_t r = 0; r < nrows; ++r) {
    // An empty row keeps one (empty) segment, so every row has a partial result to reduce.
    index_t k = row_ptr[r];
    do {
      k = std::min(row_ptr[r + 1], k + max_blocks);
      b.row_ptr.push_back(k);
    } while (k < row_ptr[r + 1]);
    b.seg_ptr.push_back(static_cast<index_t>(b.row_ptr.size() - 1));
  }
  return b;
}

namespace cpu {

void bsrmv(const BsrView<const double>& A, double alpha, const double* x, double beta, double* y)
{
  const int bs = A.bs;
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(A.nnzb()) * bs * bs))
  for (index_t r = 0; r < A.nrows; ++r) {
    for (int i = 0; i < bs; ++i) {
      double sum = 0.0;
      for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
        const double* blk = A.values + size64_t(k) * bs * bs + size64_t(i) * bs;
        const double* xc = x + size64_t(A.col_ind[k]) * bs;
        for (int j = 0; j < bs; ++j) sum += blk[j] * xc[j];
      }
      double& out = y[size64_t(r) * bs + i];
      out = (beta == 0.0) ? alpha * sum : alpha * sum + beta * out;
    }
  }
}

void segment_reduce(index_t nrows, int bs, const index_t* seg_ptr, const double* partial, double alpha, double beta,
                    double* y)
{
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(seg_ptr[nrows]) * bs))
  for (index_t r = 0; r < nrows; ++r)
    for (int i = 0; i < bs; ++i) {
      double s = 0.0;
      for (index_t g = seg_ptr[r]; g < seg_ptr[r + 1]; ++g) s += partial[size64_t(g) * bs + i];
      double& out = y[size64_t(r) * bs + i];
      out = beta == 0.0 ? alpha * s : alpha * s + beta * out;
    }
}

}  // namespace cpu

}  // namespace blockres::kernels
