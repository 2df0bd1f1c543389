// CPU reference kernels of the aggregation AMG (see amg_kernels.hpp). Every result is independent
// of the number of OpenMP threads: threads only split independent rows.
#include "kernels/amg/amg_kernels.hpp"
#include "kernels/parallel_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace blockres::amg::cpu {

using kernels::cpu::parallel_worth;

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
  transpose_numeric(S.values.data(), map.data(), S.nnz(), St.values.data());

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

index_t handshake_match(const CsrRef& G, index_t* agg)
{
  const index_t n = G.nrows;
  std::vector<index_t> mate(static_cast<std::size_t>(n), -1), choice(static_cast<std::size_t>(n), -1);
  for (int round = 0; round < max_match_rounds; ++round) {
#pragma omp parallel for schedule(static)
    for (index_t i = 0; i < n; ++i) {
      choice[i] = mate[i] >= 0 ? -1
                               : strongest_neighbour(G.row_ptr, G.col_ind, G.values, i,
                                                     [&](index_t j) { return mate[j] < 0; });
    }
    index_t matched = 0;
#pragma omp parallel for schedule(static) reduction(+ : matched)
    for (index_t i = 0; i < n; ++i) {
      const index_t c = choice[i];
      if (c >= 0 && choice[c] == i) mate[i] = c, ++matched;
    }
    if (matched == 0) break;
  }
  // Free nodes join the pair of their strongest matched neighbour (root: the pair's smaller row).
  std::vector<index_t> root(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < n; ++i) {
    if (mate[i] >= 0) {
      root[i] = std::min(i, mate[i]);
      continue;
    }
    const index_t best =
        strongest_neighbour(G.row_ptr, G.col_ind, G.values, i, [&](index_t j) { return mate[j] >= 0; });
    root[i] = best >= 0 ? std::min(best, mate[best]) : i;
  }
  // Aggregates numbered in the order of their roots.
  std::vector<index_t> number(static_cast<std::size_t>(n), -1);
  index_t nc = 0;
  for (index_t i = 0; i < n; ++i)
    if (root[i] == i) number[i] = nc++;
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < n; ++i) agg[i] = number[root[i]];
  return nc;
}

index_t mis2_aggregate(const CsrRef& G, index_t* agg, std::vector<index_t>* roots)
{
  const index_t n = G.nrows;
  // Tuples (state, priority, index) as one comparison: state out < undecided < in.
  std::vector<signed char> state(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) state[i] = G.row_ptr[i + 1] > G.row_ptr[i] ? mis_undecided : mis_out;
  std::vector<index_t> m1(static_cast<std::size_t>(n)), m2(static_cast<std::size_t>(n));
  auto better = [&](index_t a, index_t b) {  // is a's tuple larger than b's?
    return state[a] != state[b] ? state[a] > state[b] : mis_priority_greater(a, b);
  };
  for (;;) {
    index_t undecided = 0;
#pragma omp parallel for schedule(static)
    for (index_t i = 0; i < n; ++i) {
      index_t best = i;
      for (index_t p = G.row_ptr[i]; p < G.row_ptr[i + 1]; ++p)
        if (better(G.col_ind[p], best)) best = G.col_ind[p];
      m1[i] = best;
    }
#pragma omp parallel for schedule(static)
    for (index_t i = 0; i < n; ++i) {
      index_t best = m1[i];
      for (index_t p = G.row_ptr[i]; p < G.row_ptr[i + 1]; ++p)
        if (better(m1[G.col_ind[p]], best)) best = m1[G.col_ind[p]];
      m2[i] = best;
    }
#pragma omp parallel for schedule(static) reduction(+ : undecided)
    for (index_t i = 0; i < n; ++i) {
      if (state[i] != mis_undecided) continue;
      if (m2[i] == i) state[i] = mis_in;
      else if (state[m2[i]] == mis_in) state[i] = mis_out;
      else ++undecided;
    }
    if (undecided == 0) break;
  }
  // Roots numbered in row order; their neighbours join them; the rest join the aggregate of their
  // strongest aggregated neighbour.
  index_t nc = 0;
  if (roots) roots->clear();
  for (index_t i = 0; i < n; ++i) {
    agg[i] = state[i] == mis_in ? nc++ : -1;
    if (roots && state[i] == mis_in) roots->push_back(i);
  }
  std::vector<index_t> first(agg, agg + n);
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < n; ++i) {
    if (state[i] == mis_in) continue;
    for (index_t p = G.row_ptr[i]; p < G.row_ptr[i + 1]; ++p)
      if (state[G.col_ind[p]] == mis_in) {
        first[i] = agg[G.col_ind[p]];
        break;
      }
  }
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < n; ++i) {
    agg[i] = first[i];
    if (first[i] >= 0 || G.row_ptr[i + 1] == G.row_ptr[i]) continue;
    const index_t best =
        strongest_neighbour(G.row_ptr, G.col_ind, G.values, i, [&](index_t j) { return first[j] >= 0; });
    agg[i] = best >= 0 ? first[best] : -1;
  }
  return nc;
}

void coarse_graph(const CsrRef& G, const index_t* agg, index_t nc, Csr& Gc)
{
  const index_t n = G.nrows;
  // Members of every aggregate, in increasing row order (counting sort).
  std::vector<index_t> start(static_cast<std::size_t>(nc) + 1, 0), members(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i)
    if (agg[i] >= 0) ++start[agg[i] + 1];
  for (index_t c = 0; c < nc; ++c) start[c + 1] += start[c];
  {
    std::vector<index_t> next(start.begin(), start.end() - 1);
    for (index_t i = 0; i < n; ++i)
      if (agg[i] >= 0) members[next[agg[i]]++] = i;
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
        if (J == I || J < 0) continue;
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

void tentative_prolongation(const index_t* agg, index_t n, index_t nc, Csr& P)
{
  P.nrows = n;
  P.ncols = nc;
  P.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  P.col_ind.clear();
  for (index_t i = 0; i < n; ++i) {
    if (agg[i] >= 0) P.col_ind.push_back(agg[i]);
    P.row_ptr[i + 1] = static_cast<index_t>(P.col_ind.size());
  }
  P.values.assign(P.col_ind.size(), 1.0);
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

void spgemm_numeric(const CsrRef& A, const CsrRef& B, const CsrRef& C, double* c_values)
{
  if (C.nrows != A.nrows || C.ncols != B.ncols) throw std::invalid_argument("amg::spgemm_numeric: C does not match A B");
#pragma omp parallel
  {
    // pos[j]: position of column j in the current row of C (rows are disjoint: no races).
    std::vector<index_t> pos(static_cast<std::size_t>(B.ncols), -1);
#pragma omp for schedule(static)
    for (index_t i = 0; i < A.nrows; ++i) {
      for (index_t c = C.row_ptr[i]; c < C.row_ptr[i + 1]; ++c) {
        pos[C.col_ind[c]] = c;
        c_values[c] = 0.0;
      }
      for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
        const double a = A.values[p];
        const index_t k = A.col_ind[p];
        for (index_t q = B.row_ptr[k]; q < B.row_ptr[k + 1]; ++q) c_values[pos[B.col_ind[q]]] += a * B.values[q];
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

void transpose_numeric(const double* a_values, const index_t* map, index_t nnz, double* r_values)
{
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(nnz)))
  for (index_t q = 0; q < nnz; ++q) r_values[q] = a_values[map[q]];
}

void smoothed_prolongation(const CsrRef& A, const index_t* agg, double omega, const CsrRef& P, double* p_values)
{
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(A.nnz()) + A.nrows))
  for (index_t i = 0; i < A.nrows; ++i) {
    const double d = diagonal(A, i);
    const double s = d != 0.0 ? -omega / d : 0.0;
    for (index_t p = P.row_ptr[i]; p < P.row_ptr[i + 1]; ++p)
      p_values[p] = s * p_values[p] + (P.col_ind[p] == agg[i] ? 1.0 : 0.0);
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

namespace {

template <class V>
void spmv_t(const CsrRefT<V>& A, double alpha, const double* x, double beta, double* y)
{
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(A.nnz()) + A.nrows))
  for (index_t i = 0; i < A.nrows; ++i) {
    double s = 0.0;
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) s += double(A.values[p]) * x[A.col_ind[p]];
    y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
  }
}

template <class V>
void jacobi_sweep_t(const CsrRefT<V>& A, const double* dinv, const double* b, const double* x_in, double* x_out)
{
  if (!x_in) {
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(A.nnz()) + A.nrows))
    for (index_t i = 0; i < A.nrows; ++i) x_out[i] = dinv[i] * b[i];
    return;
  }
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(A.nnz()) + A.nrows))
  for (index_t i = 0; i < A.nrows; ++i) {
    double s = b[i];
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) s -= double(A.values[p]) * x_in[A.col_ind[p]];
    x_out[i] = x_in[i] + dinv[i] * s;
  }
}

template <class V>
void residual_t(const CsrRefT<V>& A, const double* b, const double* x, double* r)
{
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(A.nnz()) + A.nrows))
  for (index_t i = 0; i < A.nrows; ++i) {
    double s = b[i];
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) s -= double(A.values[p]) * x[A.col_ind[p]];
    r[i] = s;
  }
}

}  // namespace

void spmv(const CsrRef& A, double alpha, const double* x, double beta, double* y) { spmv_t(A, alpha, x, beta, y); }
void spmv(const CsrRef32& A, double alpha, const double* x, double beta, double* y) { spmv_t(A, alpha, x, beta, y); }

void jacobi_sweep(const CsrRef& A, const double* dinv, const double* b, const double* x_in, double* x_out)
{
  jacobi_sweep_t(A, dinv, b, x_in, x_out);
}
void jacobi_sweep(const CsrRef32& A, const double* dinv, const double* b, const double* x_in, double* x_out)
{
  jacobi_sweep_t(A, dinv, b, x_in, x_out);
}

void residual(const CsrRef& A, const double* b, const double* x, double* r) { residual_t(A, b, x, r); }
void residual(const CsrRef32& A, const double* b, const double* x, double* r) { residual_t(A, b, x, r); }

void smooth_zero_residual(const CsrRef& A, const double* dinv, const double* b, double* x, double* r)
{
  jacobi_sweep(A, dinv, b, nullptr, x);  // the two steps of the V-cycle before the fusion: same bits
  residual(A, b, x, r);
}
void smooth_zero_residual(const CsrRef32& A, const double* dinv, const double* b, double* x, double* r)
{
  jacobi_sweep(A, dinv, b, nullptr, x);
  residual(A, b, x, r);
}

void sorted_pattern(const CsrRef& A, std::vector<index_t>& col_sorted, std::vector<index_t>& perm)
{
  const index_t nnz = A.nnz();
  col_sorted.resize(static_cast<std::size_t>(nnz));
  perm.resize(static_cast<std::size_t>(nnz));
  for (index_t i = 0; i < A.nrows; ++i) {
    const index_t b = A.row_ptr[i], e = A.row_ptr[i + 1];
    for (index_t p = b; p < e; ++p) perm[p] = p;
    std::sort(perm.begin() + b, perm.begin() + e, [&](index_t p, index_t q) { return A.col_ind[p] < A.col_ind[q]; });
    for (index_t p = b; p < e; ++p) col_sorted[p] = A.col_ind[perm[p]];
  }
}

void ilu_jacobi_sweep(const CsrRef& LU, const double* dinv, bool upper, const double* b, const double* x, double* y)
{
  const index_t n = LU.nrows;
  if (!x) {
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(n)))
    for (index_t i = 0; i < n; ++i) y[i] = upper ? dinv[i] * b[i] : b[i];
    return;
  }
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(LU.nnz()) + n))
  for (index_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (index_t p = LU.row_ptr[i]; p < LU.row_ptr[i + 1]; ++p) {
      const index_t j = LU.col_ind[p];
      if (upper ? j > i : j < i) s += LU.values[p] * x[j];
    }
    y[i] = upper ? dinv[i] * (b[i] - s) : b[i] - s;
  }
}

}  // namespace blockres::amg::cpu
