// cuSPARSE baselines of `blockres bench isai`: ILU(0) factorisation (csrilu02 on the scalar CSR
// expansion, bsrilu02 on the BSR matrix) and the L and U triangular solves with its factors
// (cusparseSpSV on CSR, bsrsv2 on BSR), through the solver's own wrapper (CusparseIlu0,
// the scalar-view ILU(0)'s CUDA implementation since issue 31), on arrays of their own.
#pragma once

#include "linalg/array.hpp"
#include "linalg/bsr_matrix.hpp"

#include <memory>

namespace blockres::benchutil {

// One ILU(0) of the matrix A (BSR, bs >= 1) with cuSPARSE. block = false: the CSR expansion of
// kernels/spmv/bsr_to_csr.hpp (csrilu02 + SpSV); block = true: the BSR arrays as they are, row-major
// blocks (bsrilu02 + bsrsv2). The analysis phases run in the constructor (untimed); all calls
// are asynchronous on A's executor stream.
class CusparseIlu {
 public:
  CusparseIlu(const BsrMatrix& A, bool block);
  ~CusparseIlu();
  CusparseIlu(const CusparseIlu&) = delete;
  CusparseIlu& operator=(const CusparseIlu&) = delete;

  // Copies A's values into the factor storage (in the expansion's order for CSR).
  void load_values();
  // In-place ILU(0) of the loaded values.
  void factor();
  // Structural or numerical zero pivot reported by cuSPARSE after factor() (synchronises): -1
  // when none, else the scalar (CSR) or block (BSR) row.
  int zero_pivot();
  // z = U^{-1} L^{-1} r with the current factors; t is an intermediate of the same size.
  void solve(const Array<double>& r, Array<double>& t, Array<double>& z);
  // The factors in the scalar CSR expansion's order (for comparison with Ilu0Preconditioner).
  std::vector<double> factors_as_csr() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace blockres::benchutil
