// CPU reference of the BSR -> CSR expansion.
#include "kernels/spmv/bsr_to_csr.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace blockres::kernels {

void check_scalar_view_fits_int32(std::string_view what, size64_t nrows, size64_t ncols, int bs, size64_t nnzb)
{
  const size64_t rows = nrows * bs, cols = ncols * bs, entries = nnzb * bs * bs;  // < 2^63 for int32 inputs
  if (rows <= max_int32_extent && cols <= max_int32_extent && entries <= max_int32_extent) return;
  throw std::overflow_error(fmt::format(
      "{}: the scalar view of {} x {} blocks of {}x{} ({} blocks) has {} rows, {} columns and {} entries "
      "(nnzb x bs x bs), more than the {} that 32-bit indices address",
      what, nrows, ncols, bs, bs, nnzb, rows, cols, entries, max_int32_extent));
}

}  // namespace blockres::kernels

namespace blockres::kernels::cpu {

void bsr_to_csr(const BsrView<const double>& A, index_t* csr_row_ptr, index_t* csr_col, double* csr_val)
{
  check_scalar_view_fits_int32("bsr_to_csr", A.nrows, A.ncols, A.bs, A.nnzb());
  const int bs = A.bs;
  const size64_t bb = size64_t(bs) * bs;
  for (index_t r = 0; r < A.nrows; ++r) {
    const index_t kb = A.row_ptr[r], len = A.row_ptr[r + 1] - kb;
    for (int i = 0; i < bs; ++i) {
      const size64_t start = size64_t(kb) * bb + size64_t(i) * len * bs;
      csr_row_ptr[size64_t(r) * bs + i] = static_cast<index_t>(start);
      for (index_t q = 0; q < len; ++q)
        for (int c = 0; c < bs; ++c) {
          const size64_t out = start + size64_t(q) * bs + c;
          csr_col[out] = A.col_ind[kb + q] * bs + c;
          csr_val[out] = A.values[size64_t(kb + q) * bb + size64_t(i) * bs + c];
        }
    }
  }
  csr_row_ptr[size64_t(A.nrows) * bs] = static_cast<index_t>(size64_t(A.nnzb()) * bb);
}

}  // namespace blockres::kernels::cpu
