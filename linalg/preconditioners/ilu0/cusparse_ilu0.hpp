// cuSPARSE's scalar ILU(0) and its exact triangular solves on arrays the caller owns, in two forms:
// csrilu02 + SpSV on the CSR expansion, bsrilu02 + bsrsv2 on the BSR storage itself (the same factors in
// block order: cuSPARSE's diagonal blocks are LU-factored without pivoting, which is what the scalar view
// computes). The CUDA implementation of the scalar-view ILU(0) (Ilu0Preconditioner) wherever it was
// measured faster than the project's level-scheduled kernels (issue 31 item 5: at every
// block size measured; the BSR form for exact solves at block sizes 3..8, where it was faster again;
// inputs/README.md "implementation"), and `blockres bench isai`'s library baseline.
//
// The same algorithm as kernels/ilu_isai/ilu.hpp (IKJ ILU(0) without pivoting, fill restricted to A's
// pattern, L unit lower in the strictly lower entries, U in the diagonal and upper ones), so the two
// implementations agree to rounding (their accumulation orders differ). csrilu02 flags only exact zero
// pivots: Ilu0Preconditioner checks every pivot for zero or non-finite values itself
// (kernels::cuda::ilu0_check_pivots), so both implementations report the same row.
// csrilu02, bsrilu02 and bsrsv2 are deprecated in CUDA 13 (and still shipped; cuSPARSE has no
// generic-API ILU(0)): the CPU backend and `implementation = "blockres"` keep the project's own kernels.
#pragma once

#include "kernels/common.hpp"
#include "kernels/ilu_isai/isai.hpp"  // Triangle
#include "linalg/executor.hpp"

#include <memory>

namespace blockres {

class CusparseIlu0 {
 public:
  // csr: csrilu02 + SpSV on a scalar CSR matrix of `rows` rows and `nnz` entries (bs ignored);
  // bsr: bsrilu02 + bsrsv2 on `rows` x `rows` blocks of bs x bs, row-major blocks, `nnz` blocks.
  enum class Form { csr, bsr };
  // On the CUDA executor e (its stream runs every call): 32-bit indices, zero-based, (block) columns sorted
  // and unique in each row with the diagonal present (kernels::ilu_schedule's checks), every value index
  // below 2^31. The arrays must outlive this object; the analysis of the factorisation and of both
  // triangular solves runs here, once per pattern, with whatever `val` holds (only the pattern counts).
  CusparseIlu0(const ExecPtr& e, Form form, index_t rows, index_t nnz, int bs, const index_t* row_ptr,
               const index_t* col, double* val);
  ~CusparseIlu0();
  CusparseIlu0(const CusparseIlu0&) = delete;
  CusparseIlu0& operator=(const CusparseIlu0&) = delete;

  // In place ILU(0) of val, asynchronous; the triangular solves then use the new factors.
  void factor();
  // x = L^{-1} b (tri = unit_lower) or x = U^{-1} b (tri = upper) with the last factors; x must not alias b.
  // Asynchronous; no allocation, so it may be recorded into a CUDA graph.
  void solve(kernels::Triangle tri, const double* b, double* x) const;
  // The structural or numerical (exactly zero) pivot cuSPARSE reported for the last factor(): its scalar
  // row (csr) or block row (bsr), -1 when none. Synchronises the stream.
  int zero_pivot() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace blockres
