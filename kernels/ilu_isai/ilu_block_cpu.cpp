// CPU references of block ILU(0) (kernels/ilu_isai/ilu_block.hpp): sequential block-row-order code with
// the documented accumulation order, the baseline the CUDA versions are checked against.
#include "kernels/ilu_isai/ilu_block.hpp"
#include "kernels/parallel_cpu.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace blockres::kernels::cpu {

namespace {

template <class T>
void check(const IluSchedule& s, const BsrView<T>& A, const char* what)
{
  if (A.nrows != A.ncols)
    throw std::invalid_argument(std::string(what) + ": the matrix is not square (" + std::to_string(A.nrows) + " x " +
                                std::to_string(A.ncols) + " blocks)");
  if (s.n != A.nrows)
    throw std::invalid_argument(std::string(what) + ": schedule for " + std::to_string(s.n) +
                                " block rows but the matrix has " + std::to_string(A.nrows));
  if (A.bs < 1) throw std::invalid_argument(std::string(what) + ": block size " + std::to_string(A.bs) + " < 1");
}

}  // namespace

bool block_ilu0_invert(int bs, double* w, double* work)
{
  const int n = bs;
  double* row_s = work;      // n: pivot row divided by the pivot
  double* col_s = work + n;  // n: column s before the step
  double* perm = work + 2 * n;
  double max_abs = 0.0;
  for (size64_t e = 0; e < size64_t(n) * n; ++e) max_abs = std::max(max_abs, std::isfinite(w[e]) ? std::abs(w[e]) : INFINITY);
  bool bad = !(max_abs < INFINITY);
  const double tiny = n * DBL_EPSILON * max_abs;
  for (int s = 0; s < n; ++s) {
    int p = s;
    double best = std::abs(w[size64_t(s) * n + s]);
    for (int r = s + 1; r < n; ++r)
      if (std::abs(w[size64_t(r) * n + s]) > best) best = std::abs(w[size64_t(r) * n + s]), p = r;
    perm[s] = p;
    if (p != s)
      for (int c = 0; c < n; ++c) std::swap(w[size64_t(s) * n + c], w[size64_t(p) * n + c]);
    const double piv = w[size64_t(s) * n + s];
    if (piv == 0.0 || !std::isfinite(piv) || std::abs(piv) <= tiny) bad = true;
    const double rinv = 1.0 / piv;
    for (int c = 0; c < n; ++c) row_s[c] = (c == s ? 1.0 : w[size64_t(s) * n + c]) * rinv;
    for (int r = 0; r < n; ++r) col_s[r] = w[size64_t(r) * n + s];
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        double& v = w[size64_t(r) * n + c];
        v = r == s ? row_s[c] : (c == s ? 0.0 : v) - col_s[r] * row_s[c];
      }
  }
  for (int r = 0; r < n; ++r)
    for (int s = n - 1; s >= 0; --s) {
      const int p = static_cast<int>(perm[s]);
      if (p != s) std::swap(w[size64_t(r) * n + s], w[size64_t(r) * n + p]);
    }
  return !bad;
}

int block_ilu0_factor(const IluSchedule& s, BsrView<double> A, double* dinv)
{
  check(s, A, "block_ilu0_factor");
  const int bs = A.bs;
  const size64_t bs2 = size64_t(bs) * bs;
  // pos[j] = position of block (i, j) in the current block row i, or -1 (the dense marker of the
  // IKJ variant; the CUDA version searches the row instead).
  std::vector<index_t> pos(static_cast<std::size_t>(A.nrows), -1);
  std::vector<double> tmp(static_cast<std::size_t>(bs2)), work(3 * static_cast<std::size_t>(bs));
  int info = 0;
  for (index_t i = 0; i < A.nrows; ++i) {
    const index_t rs = A.row_ptr[i], re = A.row_ptr[i + 1];
    for (index_t p = rs; p < re; ++p) pos[A.col_ind[p]] = p;
    for (index_t p = rs; p < s.diag[i]; ++p) {  // strictly lower blocks, increasing k
      const index_t k = A.col_ind[p];
      double* l = A.values + size64_t(p) * bs2;
      const double* d = dinv + size64_t(k) * bs2;
      for (int r = 0; r < bs; ++r)
        for (int c = 0; c < bs; ++c) {
          double acc = 0.0;
          for (int m = 0; m < bs; ++m) acc += l[r * bs + m] * d[size64_t(m) * bs + c];
          tmp[size64_t(r) * bs + c] = acc;
        }
      std::copy(tmp.begin(), tmp.end(), l);
      for (index_t q = s.diag[k] + 1; q < A.row_ptr[k + 1]; ++q) {  // (k, j), j > k
        const index_t t = pos[A.col_ind[q]];
        if (t < 0) continue;
        const double* u = A.values + size64_t(q) * bs2;
        double* a = A.values + size64_t(t) * bs2;
        for (int r = 0; r < bs; ++r)
          for (int c = 0; c < bs; ++c) {
            double acc = 0.0;
            for (int m = 0; m < bs; ++m) acc += l[size64_t(r) * bs + m] * u[size64_t(m) * bs + c];
            a[size64_t(r) * bs + c] -= acc;
          }
      }
    }
    for (index_t p = rs; p < re; ++p) pos[A.col_ind[p]] = -1;
    double* d = dinv + size64_t(i) * bs2;
    std::copy_n(A.values + size64_t(s.diag[i]) * bs2, bs2, d);
    if (!block_ilu0_invert(bs, d, work.data()) && info == 0) info = i + 1;
  }
  return info;
}

void block_ilu0_lower_solve(const IluSchedule& s, BsrView<const double> LU, const double* b, double* x)
{
  check(s, LU, "block_ilu0_lower_solve");
  const int bs = LU.bs;
  const size64_t bs2 = size64_t(bs) * bs;
  std::vector<double> y(static_cast<std::size_t>(bs));
  // Row order: the x_k (k < i) are final when row i reads them, and b_i is read before x_i is
  // written, so x may alias b.
  for (index_t i = 0; i < LU.nrows; ++i) {
    for (int r = 0; r < bs; ++r) {
      double sum = 0.0;
      for (index_t p = LU.row_ptr[i]; p < s.diag[i]; ++p) {
        const double* l = LU.values + size64_t(p) * bs2 + size64_t(r) * bs;
        const double* xk = x + size64_t(LU.col_ind[p]) * bs;
        for (int c = 0; c < bs; ++c) sum += l[c] * xk[c];
      }
      y[r] = b[size64_t(i) * bs + r] - sum;
    }
    std::copy(y.begin(), y.end(), x + size64_t(i) * bs);
  }
}

void block_ilu0_upper_solve(const IluSchedule& s, BsrView<const double> LU, const double* dinv, const double* b,
                            double* x)
{
  check(s, LU, "block_ilu0_upper_solve");
  const int bs = LU.bs;
  const size64_t bs2 = size64_t(bs) * bs;
  std::vector<double> y(static_cast<std::size_t>(bs));
  for (index_t i = LU.nrows - 1; i >= 0; --i) {  // reverse order (same aliasing argument)
    for (int r = 0; r < bs; ++r) {
      double sum = 0.0;
      for (index_t p = s.diag[i] + 1; p < LU.row_ptr[i + 1]; ++p) {
        const double* u = LU.values + size64_t(p) * bs2 + size64_t(r) * bs;
        const double* xj = x + size64_t(LU.col_ind[p]) * bs;
        for (int c = 0; c < bs; ++c) sum += u[c] * xj[c];
      }
      y[r] = b[size64_t(i) * bs + r] - sum;
    }
    const double* d = dinv + size64_t(i) * bs2;
    for (int r = 0; r < bs; ++r) {
      double sum = 0.0;
      for (int c = 0; c < bs; ++c) sum += d[size64_t(r) * bs + c] * y[c];
      x[size64_t(i) * bs + r] = sum;
    }
  }
}

void block_ilu_sweep(const BlockIluSweepPlan& p, BsrView<const double> A, const double* in, const double* dinv_in,
                     double* out, bool products)
{
  if (p.nrows != A.nrows || p.row_of.size() != static_cast<std::size_t>(A.row_ptr[A.nrows]))
    throw std::invalid_argument("block_ilu_sweep: the plan was made for another pattern");
  const int bs = A.bs;
  const size64_t bs2 = size64_t(bs) * bs;
  const index_t nnzb = A.row_ptr[A.nrows];
#pragma omp parallel if (parallel_worth(size64_t(nnzb) * bs2 * bs))
  {
    std::vector<double> S(static_cast<std::size_t>(bs2));
#pragma omp for schedule(static)
    for (index_t e = 0; e < nnzb; ++e) {
      const index_t i = p.row_of[e], j = A.col_ind[e];
      const double* a = A.values + size64_t(e) * bs2;
      std::copy(a, a + bs2, S.begin());
      if (products)
        for (size64_t q = p.pair_ptr[e]; q < p.pair_ptr[e + 1]; ++q) {
          const double* l = in + size64_t(p.pair_l[q]) * bs2;
          const double* u = in + size64_t(p.pair_u[q]) * bs2;
          for (int r = 0; r < bs; ++r)
            for (int c = 0; c < bs; ++c) {
              double acc = 0.0;
              for (int m = 0; m < bs; ++m) acc += l[r * bs + m] * u[size64_t(m) * bs + c];
              S[size64_t(r) * bs + c] -= acc;
            }
        }
      double* o = out + size64_t(e) * bs2;
      if (j < i) {
        const double* d = dinv_in + size64_t(j) * bs2;
        for (int r = 0; r < bs; ++r)
          for (int c = 0; c < bs; ++c) {
            double acc = 0.0;
            for (int m = 0; m < bs; ++m) acc += S[size64_t(r) * bs + m] * d[size64_t(m) * bs + c];
            o[size64_t(r) * bs + c] = acc;
          }
      } else {
        std::copy(S.begin(), S.end(), o);
      }
    }
  }
}

int block_ilu_invert_diagonal(const IluSchedule& s, BsrView<const double> LU, double* dinv)
{
  check(s, LU, "block_ilu_invert_diagonal");
  const int bs = LU.bs;
  const size64_t bs2 = size64_t(bs) * bs;
  int info = 0;
#pragma omp parallel if (parallel_worth(size64_t(LU.nrows) * bs2 * bs))
  {
    std::vector<double> work(3 * static_cast<std::size_t>(bs));
    int mine = 0;
#pragma omp for schedule(static)
    for (index_t i = 0; i < LU.nrows; ++i) {
      double* d = dinv + size64_t(i) * bs2;
      const double* u = LU.values + size64_t(s.diag[i]) * bs2;
      std::copy(u, u + bs2, d);
      if (!block_ilu0_invert(bs, d, work.data()) && (mine == 0 || i + 1 < mine)) mine = i + 1;
    }
#pragma omp critical
    if (mine != 0 && (info == 0 || mine < info)) info = mine;
  }
  return info;
}

namespace {

// Row (i, a) of a block row product over the blocks of row i that `take(j)` admits, in increasing
// position, columns increasing; values of type T (double or float) converted to double.
template <class T, class Take>
double block_row_sum(BsrView<const T> M, index_t i, int a, const double* x, Take take)
{
  const int bs = M.bs;
  const size64_t bs2 = size64_t(bs) * bs;
  double sum = 0.0;
  for (index_t p = M.row_ptr[i]; p < M.row_ptr[i + 1]; ++p) {
    const index_t j = M.col_ind[p];
    if (!take(j)) continue;
    const T* v = M.values + size64_t(p) * bs2 + size64_t(a) * bs;
    const double* xj = x + size64_t(j) * bs;
    for (int c = 0; c < bs; ++c) sum += double(v[c]) * xj[c];
  }
  return sum;
}

template <class T>
void triangle_residual(Triangle tri, BsrView<const T> LU, const double* b, const double* x, double* w)
{
  if (LU.nrows != LU.ncols || LU.bs < 1) throw std::invalid_argument("block_triangle_residual: LU is not square");
  const bool lower = tri == Triangle::unit_lower;
  const int bs = LU.bs;
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(LU.row_ptr[LU.nrows]) * bs * bs))
  for (index_t i = 0; i < LU.nrows; ++i)
    for (int a = 0; a < bs; ++a) {
      const double sum = block_row_sum(LU, i, a, x, [&](index_t j) { return lower ? j < i : j >= i; });
      const size64_t t = size64_t(i) * bs + a;
      w[t] = b[t] - (lower ? x[t] + sum : sum);
    }
}

}  // namespace

void block_triangle_residual(Triangle tri, BsrView<const double> LU, const double* b, const double* x, double* w)
{
  triangle_residual(tri, LU, b, x, w);
}

void block_triangle_residual(Triangle tri, BsrView<const float> LU, const double* b, const double* x, double* w)
{
  triangle_residual(tri, LU, b, x, w);
}

void bsr_gemv_fp32(BsrView<const float> M, const double* x, double beta, double* y)
{
  if (M.bs < 1) throw std::invalid_argument("bsr_gemv_fp32: block size below 1");
  const int bs = M.bs;
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(M.nnzb()) * bs * bs))
  for (index_t i = 0; i < M.nrows; ++i)
    for (int a = 0; a < bs; ++a) {
      const double sum = block_row_sum(M, i, a, x, [](index_t) { return true; });
      const size64_t t = size64_t(i) * bs + a;
      y[t] = beta == 0.0 ? sum : sum + beta * y[t];
    }
}

}  // namespace blockres::kernels::cpu

namespace blockres::kernels {

BlockIluSweepPlan block_ilu_sweep_plan(const IluSchedule& s, index_t nrows, const index_t* row_ptr,
                                       const index_t* col)
{
  if (s.n != nrows) throw std::invalid_argument("block_ilu_sweep_plan: schedule for another matrix");
  BlockIluSweepPlan p;
  p.nrows = nrows;
  const index_t nnzb = row_ptr[nrows];
  p.row_of.resize(static_cast<std::size_t>(nnzb));
  p.pair_ptr.assign(static_cast<std::size_t>(nnzb) + 1, 0);
  p.diag_next.assign(s.diag.begin(), s.diag.end());
  p.diag_next.push_back(nnzb);
  // Row by row, the IKJ loops of block_ilu0_factor: for (i, k), k < i increasing, and (k, j), j > k,
  // with (i, j) in row i at position t: the pair (position of (i, k), position of (k, j)) of t.
  std::vector<index_t> pos(static_cast<std::size_t>(nrows), -1);
  std::vector<std::vector<std::pair<index_t, index_t>>> row_pairs;
  for (index_t i = 0; i < nrows; ++i) {
    const index_t rs = row_ptr[i], re = row_ptr[i + 1];
    row_pairs.assign(static_cast<std::size_t>(re - rs), {});
    for (index_t t = rs; t < re; ++t) pos[col[t]] = t, p.row_of[t] = i;
    for (index_t q = rs; q < s.diag[i]; ++q) {
      const index_t k = col[q];
      for (index_t w = s.diag[k] + 1; w < row_ptr[k + 1]; ++w) {
        const index_t t = pos[col[w]];
        if (t >= 0) row_pairs[t - rs].emplace_back(q, w);
      }
    }
    for (index_t t = rs; t < re; ++t) {
      for (const auto& [l, u] : row_pairs[t - rs]) p.pair_l.push_back(l), p.pair_u.push_back(u);
      p.pair_ptr[t + 1] = p.pair_l.size();
      pos[col[t]] = -1;
    }
  }
  return p;
}

}  // namespace blockres::kernels
