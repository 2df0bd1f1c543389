// BSR -> scalar CSR expansion (every block entry becomes one CSR entry, zeros included), as
// the expanded-CSR baseline of the SpMV benchmark needs: CPU reference and CUDA version.
#pragma once

#include "kernels/common.hpp"

#include <string_view>

namespace blockres::kernels {

// The largest row count, column count and entry count that 32-bit indices (index_t, and
// CUSPARSE_INDEX_32I) address: 2^31 - 1.
inline constexpr size64_t max_int32_extent = 0x7fffffff;

// Throws std::overflow_error, one line naming `what` and the sizes, when the scalar view of a BSR
// matrix (nrows x ncols blocks of bs x bs, nnzb of them) does not fit 32-bit indices: more than
// 2^31 - 1 scalar rows (nrows * bs), columns (ncols * bs) or entries (nnzb * bs * bs). Every
// scalar CSR expansion (bsr_to_csr) and every cuSPARSE call with 32-bit indices checks it first.
void check_scalar_view_fits_int32(std::string_view what, size64_t nrows, size64_t ncols, int bs, size64_t nnzb);

// Scalar row r*bs+i holds, for each block k of block row r in order, the entries
// (col_ind[k]*bs + c, a_k(i, c)) for c = 0..bs-1. Outputs: csr_row_ptr (nrows*bs + 1),
// csr_col (nnzb*bs*bs), csr_val (nnzb*bs*bs). Both check check_scalar_view_fits_int32 first.
namespace cpu {
void bsr_to_csr(const BsrView<const double>& A, index_t* csr_row_ptr, index_t* csr_col, double* csr_val);
}
namespace cuda {
void bsr_to_csr(stream_t s, const BsrView<const double>& A, index_t* csr_row_ptr, index_t* csr_col, double* csr_val);
}

}  // namespace blockres::kernels
