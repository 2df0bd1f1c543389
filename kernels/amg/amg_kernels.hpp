// Kernels of the aggregation AMG (strength, handshake matching, transfer operators, sparse
// products, smoothers): the CPU reference twins (cpu::, host memory) and the CUDA versions
// (cuda::, device memory, in amg_kernels_cuda.cu). The graph kernels (strength, matching, coarse
// graph) give the same bits on both backends; products and smoothers agree to rounding.
#pragma once

#include "kernels/common.hpp"

#include <cstdint>
#include <vector>

namespace blockres::amg {

// Scalar CSR matrix in host memory (sorted columns within a row): the CPU kernels' output.
struct Csr {
  index_t nrows = 0;
  index_t ncols = 0;
  std::vector<index_t> row_ptr;  // nrows + 1
  std::vector<index_t> col_ind;  // nnz
  std::vector<double> values;    // nnz (empty for a pattern-only matrix)
  index_t nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
};

// View of a CSR matrix in some executor's memory (the finest level is A's own storage, a bs = 1
// BsrMatrix, without a copy). nnz is stored so that device views need no read of row_ptr. V: the
// values' type; CsrRef32 is the fp32 storage of the cycle (StoragePrecision::fp32), whose kernels read
// fp32 values and compute in fp64 with fp64 vectors.
template <class V>
struct CsrRefT {
  index_t nrows = 0;
  index_t ncols = 0;
  const index_t* row_ptr = nullptr;
  const index_t* col_ind = nullptr;
  const V* values = nullptr;
  index_t nz = -1;  // < 0: read row_ptr[nrows] (host views only)
  index_t nnz() const { return nz >= 0 ? nz : row_ptr ? row_ptr[nrows] : 0; }
};
using CsrRef = CsrRefT<double>;
using CsrRef32 = CsrRefT<float>;
// The same matrix with other values (its fp32 copy).
template <class V, class W>
CsrRefT<V> with_values(const CsrRefT<W>& A, const V* values)
{
  return {A.nrows, A.ncols, A.row_ptr, A.col_ind, values, A.nz};
}
inline CsrRef ref(const Csr& A)
{
  return {A.nrows, A.ncols, A.row_ptr.data(), A.col_ind.data(), A.values.data(), A.nnz()};
}

// ---- the matching rule shared by both backends ----
// Edges of the strength graph are ordered by (weight, edge_hash): the hash of the unordered pair
// is a bijection of (min, max) packed in 64 bits, so no two edges tie and the strongest edge
// between two free nodes is always chosen by both (every handshake round matches at least one
// pair). The hash makes equal weights (uniform Poisson) break ties in a spatially random way,
// which keeps the number of rounds small (the smaller-index rule would match a 1D chain one pair
// per round).
// splitmix64's finaliser: a bijection of 64-bit words that mixes every input bit into every output bit.
BLOCKRES_HD std::uint64_t mix64(std::uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}
BLOCKRES_HD std::uint64_t edge_hash(index_t i, index_t j)
{
  const std::uint32_t a = static_cast<std::uint32_t>(i < j ? i : j), b = static_cast<std::uint32_t>(i < j ? j : i);
  return mix64((static_cast<std::uint64_t>(a) << 32) | b);
}
BLOCKRES_HD bool stronger(double w1, std::uint64_t h1, double w2, std::uint64_t h2)
{
  return w1 > w2 || (w1 == w2 && h1 > h2);
}

// Distance-2 maximal independent set: node states, and the priority order of the nodes (a hash
// of the index, so that equal rows are chosen in a spatially random but reproducible order).
constexpr signed char mis_out = -1, mis_undecided = 0, mis_in = 1;
BLOCKRES_HD std::uint64_t node_hash(index_t i)
{
  return mix64(static_cast<std::uint32_t>(i) + 0x9e3779b97f4a7c15ULL);
}
BLOCKRES_HD bool mis_priority_greater(index_t a, index_t b)
{
  const std::uint64_t ha = node_hash(a), hb = node_hash(b);
  return ha != hb ? ha > hb : a > b;
}

// The strongest neighbour j of node i in the weighted graph (row_ptr, col_ind, w), in the order of
// `stronger`, among those with eligible(j); -1 when there is none. The one rule of every matching
// and joining step, on both backends.
template <class Eligible>
BLOCKRES_HD index_t strongest_neighbour(const index_t* row_ptr, const index_t* col_ind, const double* w, index_t i,
                                        Eligible eligible)
{
  index_t best = -1;
  double wb = 0.0;
  std::uint64_t hb = 0;
  for (index_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) {
    const index_t j = col_ind[p];
    if (!eligible(j)) continue;
    const std::uint64_t h = edge_hash(i, j);
    if (best < 0 || stronger(w[p], h, wb, hb)) best = j, wb = w[p], hb = h;
  }
  return best;
}

// Handshake rounds before the remaining free nodes join a neighbouring aggregate.
constexpr int max_match_rounds = 32;

namespace cpu {

// ---- setup: strength and aggregation ----

// Symmetric weighted strength graph G of A (no diagonal): with w_ij = |a_ij| / sqrt(|a_ii a_jj|),
// i and j are strongly connected when max(w_ij, w_ji) >= theta; G's value is that maximum.
// Only columns < n_local are considered (aggregates stay inside the rows a process owns, so the
// MPI version can aggregate its partition independently). Rows with a zero diagonal have no
// strong connections.
void strength_graph(const CsrRef& A, index_t n_local, double theta, Csr& G);

// Parallel pairwise (handshake) matching on the weighted symmetric graph G:
//   rounds (at most max_match_rounds, until one matches nothing): every free node chooses its
//     strongest free neighbour (order of `stronger`); two nodes that chose each other are matched;
//   then every node still free joins the pair of its strongest matched neighbour, or stays a
//     singleton when it has none;
//   aggregates are numbered in the order of their smallest row (the pair's smaller row, or the
//     singleton's row).
// agg[i] (n entries) receives the aggregate of row i; returns the number of aggregates. The
// rounds read only the previous round's state, so the CUDA version gives the same aggregates.
index_t handshake_match(const CsrRef& G, index_t* agg);

// Aggregation around a distance-2 maximal independent set of G (Bell, Dalton, Olson 2012; the
// classical smoothed-aggregation phases of Vanek, Mandel, Brezina in parallel form):
//   MIS(2) by rounds of two max-propagations of the tuples (state, priority, index) over the
//     closed neighbourhoods: an undecided node that is the largest tuple within distance 2 enters
//     the set; one that sees a set member within distance 2 leaves;
//   every root is an aggregate (numbered in row order); its neighbours join it (roots are 3
//     apart, so the root is unique); every other node joins the aggregate of its strongest
//     neighbour that joined a root (order of `stronger`);
//   a node without strong connections is left out (agg = -1: a zero row of P; the smoother alone
//     treats it, as isolated nodes in smoothed aggregation).
// Returns the number of aggregates (and, when asked, their roots). The rounds read only the
// previous round's state, so the CUDA version gives the same aggregates.
index_t mis2_aggregate(const CsrRef& G, index_t* agg, std::vector<index_t>* roots = nullptr);

// The graph of the aggregates: Gc(I, J) = sum of G(i, j) over i in I, j in J, I != J (rows with
// agg < 0 left out), summed in
// the order of the fine rows i and, within a row, of G's entries (as the CUDA version's stable
// sort), so both backends give the same bits.
void coarse_graph(const CsrRef& G, const index_t* agg, index_t nc, Csr& Gc);

// ---- transfer operators and sparse products (symbolic once per structure, numeric every setup) ----

// Piecewise-constant prolongation P0(i, agg[i]) = 1: one entry per row, none where agg[i] < 0.
void tentative_prolongation(const index_t* agg, index_t n, index_t nc, Csr& P);

// C's pattern for C = A B (columns sorted); C.values is sized but not computed.
void spgemm_symbolic(const CsrRef& A, const CsrRef& B, Csr& C);
// c_values = (A B) on C's pattern from spgemm_symbolic. Each entry is summed in the order of A's
// row, then of B's rows, whatever the number of threads.
void spgemm_numeric(const CsrRef& A, const CsrRef& B, const CsrRef& C, double* c_values);

// R = A^T's pattern, and map: R.values[q] = A.values[map[q]] (transpose_numeric).
void transpose_symbolic(const CsrRef& A, Csr& R, std::vector<index_t>& map);
void transpose_numeric(const double* a_values, const index_t* map, index_t nnz, double* r_values);

// Smoothed aggregation: on entry p_values holds A P0 (P0 = tentative_prolongation(agg)) on P's
// pattern; on exit P = (I - omega D^-1 A) P0, i.e. p = [col == agg[i]] - omega / a_ii * p.
void smoothed_prolongation(const CsrRef& A, const index_t* agg, double omega, const CsrRef& P, double* p_values);

// Gershgorin bound on the spectral radius of D^-1 A: max_i sum_j |a_ij| / |a_ii| (row sums in
// entry order, as the CUDA version).
double jacobi_radius_bound(const CsrRef& A);

// ---- cycle ----

// dinv_i = omega / a_ii (damped Jacobi) or 1 / (a_ii +- sum_{j != i} |a_ij|) (l1-Jacobi). Returns
// the first row (+1) whose scaling is zero or not finite (its dinv is set to 0), 0 when all are
// usable.
index_t jacobi_scaling(const CsrRef& A, double omega, bool l1, double* dinv);

// The cycle's operations, each for fp64 values and for fp32 values (read as fp64: every product
// and sum in fp64, vectors fp64).
// y = alpha A x + beta y (beta == 0: y is not read).
void spmv(const CsrRef& A, double alpha, const double* x, double beta, double* y);
void spmv(const CsrRef32& A, double alpha, const double* x, double beta, double* y);

// One Jacobi sweep: x_out = x_in + dinv .* (b - A x_in) (x_in == nullptr: zero, x_out = dinv .* b).
// x_out must not alias x_in.
void jacobi_sweep(const CsrRef& A, const double* dinv, const double* b, const double* x_in, double* x_out);
void jacobi_sweep(const CsrRef32& A, const double* dinv, const double* b, const double* x_in, double* x_out);

// r = b - A x.
void residual(const CsrRef& A, const double* b, const double* x, double* r);
void residual(const CsrRef32& A, const double* b, const double* x, double* r);

// One Jacobi sweep from zero and its residual: x = dinv .* b, then r = b - A x (a V-cycle level's
// pre-smoothing with one sweep; the CUDA twin forms x_j = dinv_j b_j inside the residual's row sums
// instead of reading x back, one pass instead of two, same x bits). x and r must not alias b.
void smooth_zero_residual(const CsrRef& A, const double* dinv, const double* b, double* x, double* r);
void smooth_zero_residual(const CsrRef32& A, const double* dinv, const double* b, double* x, double* r);


// ---- ILU(0) smoother ----

// A's pattern with every row sorted by column: col_sorted[q] = A.col_ind[perm[q]], perm a
// permutation within each row (the identity where A's rows are sorted). The ILU(0) smoother
// factors on this pattern (kernels/ilu_isai/ilu_block.hpp needs sorted rows); its values are
// gathered through perm on every numeric setup. Host arrays.
void sorted_pattern(const CsrRef& A, std::vector<index_t>& col_sorted, std::vector<index_t>& perm);

// One Jacobi sweep of a triangular solve with the ILU(0) factors of a matrix stored on its CSR
// pattern LU (L strictly lower with a unit diagonal implied, U the diagonal and upper entries;
// columns in any order) and dinv_i = 1 / u_ii:
//   lower:  y_i = b_i - sum_{j < i} lu_ij x_j             (x == nullptr: y_i = b_i)
//   upper:  y_i = dinv_i (b_i - sum_{j > i} lu_ij x_j)    (x == nullptr: y_i = dinv_i b_i)
// k sweeps after the start are exact on the rows whose dependency chain is shorter than k and
// approximate the solve elsewhere (Anzt, Chow, Dongarra: iterative sparse triangular solves): a
// parallel alternative to the level-scheduled solves. y must not alias x or b.
void ilu_jacobi_sweep(const CsrRef& LU, const double* dinv, bool upper, const double* b, const double* x, double* y);

}  // namespace cpu
}  // namespace blockres::amg
