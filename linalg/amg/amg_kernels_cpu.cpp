// CPU reference kernels of the aggregation AMG (see amg_kernels.hpp). Every result is independent
// of the number of OpenMP threads: threads only split independent rows.
#include "linalg/amg/amg_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace blockres::amg::cpu {

namespace {

double diagonal(const CsrRef& A, index_t i)
{
  for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
    if (A.col_ind[p] == i) return A.values[p];
  return 0.0;
}

}  // namespace

void strength_graph(const CsrRef& A, index_t n_local, double theta, Csr& G)
{
  const index_t n = A.nrows;
  std::vector<double> d(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) d[i] = std::abs(diagonal(A, i));

  // Directed strong edges S (row i: j with w_ij >= theta), then G = max(S, S^T) by a merge of
  // the sorted rows of S and of its transpose.
  Csr S;
  S.nrows = S.ncols = n;
  S.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for (index_t i = 0; i < n; ++i) {
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      const index_t j = A.col_ind[p];
      if (j == i || j >= n_local || j >= n) continue;
      const double s = d[i] * d[j];
      if (!(s > 0.0)) continue;
      const double w = std::abs(A.values[p]) / std::sqrt(s);
      if (w >= theta && std::isfinite(w)) {
        S.col_ind.push_back(j);
        S.values.push_back(w);
      }
    }
    S.row_ptr[i + 1] = static_cast<index_t>(S.col_ind.size());
  }
  Csr St;
  std::vector<index_t> map;
  transpose_symbolic(ref(S), St, map);
  transpose_numeric(ref(S), map, St);

  G.nrows = G.ncols = n;
  G.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  G.col_ind.clear();
  G.values.clear();
  for (index_t i = 0; i < n; ++i) {
    index_t p = S.row_ptr[i], q = St.row_ptr[i];
    const index_t pe = S.row_ptr[i + 1], qe = St.row_ptr[i + 1];
    while (p < pe || q < qe) {
      if (q >= qe || (p < pe && S.col_ind[p] < St.col_ind[q])) {
        G.col_ind.push_back(S.col_ind[p]);
        G.values.push_back(S.values[p++]);
      } else if (p >= pe || St.col_ind[q] < S.col_ind[p]) {
        G.col_ind.push_back(St.col_ind[q]);
        G.values.push_back(St.values[q++]);
      } else {
        G.col_ind.push_back(S.col_ind[p]);
        G.values.push_back(std::max(S.values[p++], St.values[q++]));
      }
    }
    G.row_ptr[i + 1] = static_cast<index_t>(G.col_ind.size());
  }
}

index_t pairwise_match(const Csr& G, std::vector<index_t>& agg)
{
  const index_t n = G.nrows;
  agg.assign(static_cast<std::size_t>(n), -1);
  index_t nc = 0;
  for (index_t i = 0; i < n; ++i) {
    if (agg[i] >= 0) continue;
    index_t best_free = -1, best_any = -1;
    double w_free = -1.0, w_any = -1.0;
    for (index_t p = G.row_ptr[i]; p < G.row_ptr[i + 1]; ++p) {
      const index_t j = G.col_ind[p];
      const double w = G.values[p];
      if (agg[j] < 0) {
        if (w > w_free) w_free = w, best_free = j;
      } else if (w > w_any) {
        w_any = w, best_any = j;
      }
    }
    if (best_free >= 0) {
      agg[i] = agg[best_free] = nc++;
    } else if (best_any >= 0) {
      agg[i] = agg[best_any];
    } else {
      agg[i] = nc++;
    }
  }
  return nc;
}

void coarse_graph(const Csr& G, const std::vector<index_t>& agg, index_t nc, Csr& Gc)
{
  const index_t n = G.nrows;
  // Members of every aggregate, in increasing row order (counting sort).
  std::vector<index_t> start(static_cast<std::size_t>(nc) + 1, 0), members(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) ++start[agg[i] + 1];
  for (index_t c = 0; c < nc; ++c) start[c + 1] += start[c];
  {
    std::vector<index_t> next(start.begin(), start.end() - 1);
    for (index_t i = 0; i < n; ++i) members[next[agg[i]]++] = i;
  }
  Gc.nrows = Gc.ncols = nc;
  Gc.row_ptr.assign(static_cast<std::size_t>(nc) + 1, 0);
  Gc.col_ind.clear();
  Gc.values.clear();
  std::vector<index_t> pos(static_cast<std::size_t>(nc), -1);
  for (index_t I = 0; I < nc; ++I) {
    const std::size_t row_begin = Gc.col_ind.size();
    for (index_t m = start[I]; m < start[I + 1]; ++m) {
      const index_t i = members[m];
      for (index_t p = G.row_ptr[i]; p < G.row_ptr[i + 1]; ++p) {
        const index_t J = agg[G.col_ind[p]];
        if (J == I) continue;
        if (pos[J] < 0) {
          pos[J] = static_cast<index_t>(Gc.col_ind.size());
          Gc.col_ind.push_back(J);
          Gc.values.push_back(0.0);
        }
        Gc.values[pos[J]] += G.values[p];
      }
    }
    // Sort the row by column (values follow); reset the markers.
    const std::size_t len = Gc.col_ind.size() - row_begin;
    std::vector<std::pair<index_t, double>> row(len);
    for (std::size_t k = 0; k < len; ++k) row[k] = {Gc.col_ind[row_begin + k], Gc.values[row_begin + k]};
    std::sort(row.begin(), row.end());
    for (std::size_t k = 0; k < len; ++k) {
      Gc.col_ind[row_begin + k] = row[k].first;
      Gc.values[row_begin + k] = row[k].second;
      pos[row[k].first] = -1;
    }
    Gc.row_ptr[I + 1] = static_cast<index_t>(Gc.col_ind.size());
  }
}

void tentative_prolongation(const std::vector<index_t>& agg, index_t nc, Csr& P)
{
  const index_t n = static_cast<index_t>(agg.size());
  P.nrows = n;
  P.ncols = nc;
  P.row_ptr.resize(static_cast<std::size_t>(n) + 1);
  for (index_t i = 0; i <= n; ++i) P.row_ptr[i] = i;
  P.col_ind = agg;
  P.values.assign(static_cast<std::size_t>(n), 1.0);
}

void spgemm_symbolic(const CsrRef& A, const CsrRef& B, Csr& C)
{
  if (A.ncols != B.nrows) throw std::invalid_argument("amg::spgemm_symbolic: inner dimensions differ");
  C.nrows = A.nrows;
  C.ncols = B.ncols;
  C.row_ptr.assign(static_cast<std::size_t>(A.nrows) + 1, 0);
  C.col_ind.clear();
  std::vector<index_t> mark(static_cast<std::size_t>(B.ncols), -1);
  for (index_t i = 0; i < A.nrows; ++i) {
    const std::size_t row_begin = C.col_ind.size();
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      const index_t k = A.col_ind[p];
      for (index_t q = B.row_ptr[k]; q < B.row_ptr[k + 1]; ++q) {
        const index_t j = B.col_ind[q];
        if (mark[j] != i) {
          mark[j] = i;
          C.col_ind.push_back(j);
        }
      }
    }
    std::sort(C.col_ind.begin() + static_cast<std::ptrdiff_t>(row_begin), C.col_ind.end());
    C.row_ptr[i + 1] = static_cast<index_t>(C.col_ind.size());
  }
  C.values.assign(C.col_ind.size(), 0.0);
}

void spgemm_numeric(const CsrRef& A, const CsrRef& B, Csr& C)
{
  if (C.nrows != A.nrows || C.ncols != B.ncols) throw std::invalid_argument("amg::spgemm_numeric: C does not match A B");
  C.values.resize(C.col_ind.size());
#pragma omp parallel
  {
    // pos[j]: position of column j in the current row of C (rows are disjoint: no races).
    std::vector<index_t> pos(static_cast<std::size_t>(B.ncols), -1);
#pragma omp for schedule(static)
    for (index_t i = 0; i < A.nrows; ++i) {
      for (index_t c = C.row_ptr[i]; c < C.row_ptr[i + 1]; ++c) {
        pos[C.col_ind[c]] = c;
        C.values[c] = 0.0;
      }
      for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
        const double a = A.values[p];
        const index_t k = A.col_ind[p];
        for (index_t q = B.row_ptr[k]; q < B.row_ptr[k + 1]; ++q) C.values[pos[B.col_ind[q]]] += a * B.values[q];
      }
      for (index_t c = C.row_ptr[i]; c < C.row_ptr[i + 1]; ++c) pos[C.col_ind[c]] = -1;
    }
  }
}

void transpose_symbolic(const CsrRef& A, Csr& R, std::vector<index_t>& map)
{
  const index_t nnz = A.nnz();
  R.nrows = A.ncols;
  R.ncols = A.nrows;
  R.row_ptr.assign(static_cast<std::size_t>(A.ncols) + 1, 0);
  for (index_t p = 0; p < nnz; ++p) ++R.row_ptr[A.col_ind[p] + 1];
  for (index_t c = 0; c < A.ncols; ++c) R.row_ptr[c + 1] += R.row_ptr[c];
  R.col_ind.resize(static_cast<std::size_t>(nnz));
  map.resize(static_cast<std::size_t>(nnz));
  std::vector<index_t> next(R.row_ptr.begin(), R.row_ptr.end() - 1);
  // Rows of A in increasing order: every row of R comes out sorted.
  for (index_t i = 0; i < A.nrows; ++i)
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      const index_t q = next[A.col_ind[p]]++;
      R.col_ind[q] = i;
      map[q] = p;
    }
  R.values.assign(static_cast<std::size_t>(nnz), 0.0);
}

void transpose_numeric(const CsrRef& A, const std::vector<index_t>& map, Csr& R)
{
  R.values.resize(map.size());
  const index_t nnz = static_cast<index_t>(map.size());
#pragma omp parallel for schedule(static)
  for (index_t q = 0; q < nnz; ++q) R.values[q] = A.values[map[q]];
}

void smoothed_prolongation(const CsrRef& A, const CsrRef& P0, double omega, Csr& P)
{
  spgemm_numeric(A, P0, P);  // P = A P0
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < A.nrows; ++i) {
    const double d = diagonal(A, i);
    const double s = d != 0.0 ? -omega / d : 0.0;
    const index_t a = P0.col_ind[P0.row_ptr[i]];  // P0 has one entry (value 1) per row
    for (index_t p = P.row_ptr[i]; p < P.row_ptr[i + 1]; ++p)
      P.values[p] = s * P.values[p] + (P.col_ind[p] == a ? 1.0 : 0.0);
  }
}

double jacobi_radius_bound(const CsrRef& A)
{
  double rho = 0.0;
  for (index_t i = 0; i < A.nrows; ++i) {
    double sum = 0.0, d = 0.0;
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      sum += std::abs(A.values[p]);
      if (A.col_ind[p] == i) d = std::abs(A.values[p]);
    }
    if (d > 0.0) rho = std::max(rho, sum / d);
  }
  return rho;
}

index_t jacobi_scaling(const CsrRef& A, double omega, bool l1, double* dinv)
{
  index_t bad = 0;
  for (index_t i = 0; i < A.nrows; ++i) {
    double s = 0.0;
    if (l1) {
      // l1-Jacobi (Baker, Falgout, Kolev, Yang): diagonal plus the off-diagonal magnitudes of
      // the row; convergent for SPD A without damping. The sign of a_ii is kept.
      double d = 0.0;
      for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
        if (A.col_ind[p] == i) d = A.values[p];
        else s += std::abs(A.values[p]);
      }
      s = d >= 0.0 ? d + s : d - s;
      dinv[i] = 1.0 / s;
    } else {
      s = diagonal(A, i);
      dinv[i] = omega / s;
    }
    if (!(s != 0.0) || !std::isfinite(dinv[i])) {
      if (bad == 0) bad = i + 1;
      dinv[i] = 0.0;
    }
  }
  return bad;
}

void spmv(const CsrRef& A, double alpha, const double* x, double beta, double* y)
{
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < A.nrows; ++i) {
    double s = 0.0;
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) s += A.values[p] * x[A.col_ind[p]];
    y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
  }
}

void jacobi_sweep(const CsrRef& A, const double* dinv, const double* b, const double* x_in, double* x_out)
{
  if (!x_in) {
#pragma omp parallel for schedule(static)
    for (index_t i = 0; i < A.nrows; ++i) x_out[i] = dinv[i] * b[i];
    return;
  }
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < A.nrows; ++i) {
    double s = b[i];
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) s -= A.values[p] * x_in[A.col_ind[p]];
    x_out[i] = x_in[i] + dinv[i] * s;
  }
}

void residual(const CsrRef& A, const double* b, const double* x, double* r)
{
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < A.nrows; ++i) {
    double s = b[i];
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) s -= A.values[p] * x[A.col_ind[p]];
    r[i] = s;
  }
}

}  // namespace blockres::amg::cpu
