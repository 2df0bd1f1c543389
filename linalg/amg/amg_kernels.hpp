// CPU reference kernels of the aggregation AMG (strength, pairwise matching, transfer operators,
// sparse products, smoothers): the oracle a CUDA twin with the same signatures is tested against.
#pragma once

#include "kernels/common.hpp"

#include <vector>

namespace blockres::amg {

// Scalar CSR matrix in host memory (sorted columns within a row). Level operators, P, R and the
// strength graph of the hierarchy are stored this way on the CPU backend.
struct Csr {
  index_t nrows = 0;
  index_t ncols = 0;
  std::vector<index_t> row_ptr;  // nrows + 1
  std::vector<index_t> col_ind;  // nnz
  std::vector<double> values;    // nnz (empty for a pattern-only matrix)
  index_t nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
};

// Read-only view of a CSR matrix, so that the finest level can be A's own storage (a bs = 1
// BsrMatrix) without a copy.
struct CsrRef {
  index_t nrows = 0;
  index_t ncols = 0;
  const index_t* row_ptr = nullptr;
  const index_t* col_ind = nullptr;
  const double* values = nullptr;
  index_t nnz() const { return row_ptr ? row_ptr[nrows] : 0; }
};
inline CsrRef ref(const Csr& A) { return {A.nrows, A.ncols, A.row_ptr.data(), A.col_ind.data(), A.values.data()}; }

namespace cpu {

// ---- setup: strength and aggregation (symbolic, on the values of the setup that builds them) ----

// Symmetric weighted strength graph G of A (no diagonal): with w_ij = |a_ij| / sqrt(|a_ii a_jj|),
// i and j are strongly connected when max(w_ij, w_ji) >= theta; G's value is that maximum.
// Only columns < n_local are considered (aggregates stay inside the rows a process owns, so the
// MPI version can aggregate its partition independently). Rows with a zero diagonal have no
// strong connections.
void strength_graph(const CsrRef& A, index_t n_local, double theta, Csr& G);

// One pass of pairwise matching on the weighted graph G: rows in increasing order; an
// unaggregated row is paired with its strongest unaggregated neighbour (ties: the smaller
// column); a row whose neighbours are all aggregated already joins the aggregate of its strongest
// neighbour; a row without neighbours stays a singleton. agg[i] receives the aggregate of row i
// (numbered in order of creation); returns the number of aggregates.
index_t pairwise_match(const Csr& G, std::vector<index_t>& agg);

// The graph of the aggregates: Gc(I, J) = sum of G(i, j) over i in I, j in J, I != J.
void coarse_graph(const Csr& G, const std::vector<index_t>& agg, index_t nc, Csr& Gc);

// ---- transfer operators and sparse products (symbolic once per structure, numeric every setup) ----

// Piecewise-constant prolongation P0(i, agg[i]) = 1: one entry per row.
void tentative_prolongation(const std::vector<index_t>& agg, index_t nc, Csr& P);

// C's pattern for C = A B (columns sorted); C.values is sized but not computed.
void spgemm_symbolic(const CsrRef& A, const CsrRef& B, Csr& C);
// C = A B on C's pattern from spgemm_symbolic. Each entry is summed in the order of A's row, then
// of B's rows, whatever the number of threads.
void spgemm_numeric(const CsrRef& A, const CsrRef& B, Csr& C);

// R = A^T's pattern, and map: R.values[q] = A.values[map[q]] (transpose_numeric).
void transpose_symbolic(const CsrRef& A, Csr& R, std::vector<index_t>& map);
void transpose_numeric(const CsrRef& A, const std::vector<index_t>& map, Csr& R);

// Smoothed aggregation: P = (I - omega D^-1 A) P0 with P0 = tentative_prolongation(agg) on the
// pattern of A P0 (P.values: symbolic by spgemm_symbolic(A, P0)).
void smoothed_prolongation(const CsrRef& A, const CsrRef& P0, double omega, Csr& P);

// Gershgorin bound on the spectral radius of D^-1 A: max_i sum_j |a_ij| / |a_ii|.
double jacobi_radius_bound(const CsrRef& A);

// ---- cycle ----

// dinv_i = omega / a_ii (damped Jacobi) or 1 / sum_j |a_ij| (l1-Jacobi). Returns the first row
// (+1) whose scaling is zero or not finite, 0 when all are usable.
index_t jacobi_scaling(const CsrRef& A, double omega, bool l1, double* dinv);

// y = alpha A x + beta y (beta == 0: y is not read).
void spmv(const CsrRef& A, double alpha, const double* x, double beta, double* y);

// One Jacobi sweep: x_out = x_in + dinv .* (b - A x_in) (x_in == nullptr: zero, x_out = dinv .* b).
// x_out must not alias x_in.
void jacobi_sweep(const CsrRef& A, const double* dinv, const double* b, const double* x_in, double* x_out);

// r = b - A x.
void residual(const CsrRef& A, const double* b, const double* x, double* r);

}  // namespace cpu
}  // namespace blockres::amg
