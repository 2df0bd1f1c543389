// Block-sparse matrix-vector product y = alpha*A*x + beta*y: CPU reference and CUDA version.
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// A is BSR (see BsrView); x has ncols*bs entries, y has nrows*bs entries.
// beta == 0: y is write-only (not read), so garbage or NaN in y does not leak into the result.
namespace cpu {
void bsrmv(const BsrView<const double>& A, double alpha, const double* x, double beta, double* y);
}

namespace cuda {
// First version: one thread per scalar row. Issue 3 replaces it with the KSPARSE design.
void bsrmv(stream_t s, const BsrView<const double>& A, double alpha, const double* x, double beta, double* y);
}

}  // namespace blockres::kernels
