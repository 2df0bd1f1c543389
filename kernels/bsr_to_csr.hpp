// BSR -> scalar CSR expansion (every block entry becomes one CSR entry, zeros included), as
// the expanded-CSR baseline of the SpMV benchmark needs: CPU reference and CUDA version.
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// Scalar row r*bs+i holds, for each block k of block row r in order, the entries
// (col_ind[k]*bs + c, a_k(i, c)) for c = 0..bs-1. Outputs: csr_row_ptr (nrows*bs + 1),
// csr_col (nnzb*bs*bs), csr_val (nnzb*bs*bs); the CSR indices must fit in 32 bits.
namespace cpu {
void bsr_to_csr(const BsrView<const double>& A, index_t* csr_row_ptr, index_t* csr_col, double* csr_val);
}
namespace cuda {
void bsr_to_csr(stream_t s, const BsrView<const double>& A, index_t* csr_row_ptr, index_t* csr_col, double* csr_val);
}

}  // namespace blockres::kernels
