// Test helpers: random BSR patterns/values (empty rows, one long row, full diagonal) and
// comparisons with a relative tolerance.
#pragma once

#include "linalg/bsr_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

namespace blockres::test {

inline std::mt19937_64& rng()
{
  static std::mt19937_64 gen{std::random_device{}()};  // fresh seed per run
  return gen;
}

inline double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng()); }

// Square (or rectangular when ncols != nrows) pattern with ~avg blocks per row, some empty
// rows (when allow_empty), one row with many blocks, and the diagonal when square.
inline BsrPattern random_pattern(index_t nrows, index_t ncols, int avg, bool allow_empty = true)
{
  BsrPattern p;
  p.nrows = nrows;
  p.ncols = ncols;
  p.row_ptr.push_back(0);
  const index_t long_row = nrows > 0 ? static_cast<index_t>(rng()() % nrows) : 0;
  for (index_t r = 0; r < nrows; ++r) {
    std::set<index_t> cols;
    if (nrows == ncols) cols.insert(r);
    int n = (r == long_row) ? std::min<index_t>(ncols, 40 * avg) : static_cast<int>(rng()() % (2 * avg + 1));
    if (allow_empty && nrows != ncols && rng()() % 7 == 0) n = 0;
    for (int k = 0; k < n; ++k) cols.insert(static_cast<index_t>(rng()() % ncols));
    p.col_ind.insert(p.col_ind.end(), cols.begin(), cols.end());
    p.row_ptr.push_back(static_cast<index_t>(p.col_ind.size()));
  }
  return p;
}

inline std::vector<double> random_vector(size64_t n, double a = -1.0, double b = 1.0)
{
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = uniform(a, b);
  return v;
}

// Values with a dominant diagonal block so block-Jacobi and Krylov tests are well posed.
inline std::vector<double> random_values(const BsrPattern& p, int bs, double diag_shift)
{
  std::vector<double> v = random_vector(size64_t(p.nnzb()) * bs * bs);
  if (p.nrows == p.ncols)
    for (index_t r = 0; r < p.nrows; ++r) {
      const index_t k = p.find(r, r);
      for (int i = 0; i < bs; ++i) v[(size64_t(k) * bs + i) * bs + i] += diag_shift;
    }
  return v;
}

inline double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b)
{
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return den > 0 ? num / den : num;
}

// Two evaluations of the same sum of m products in a different order (or with and without FMA
// contraction) are each within gamma_m * S_i of the exact value, S_i = sum of |terms| (Higham,
// Thm 3.1), so they differ by at most 2 gamma_m S_i. Returns the worst |a_i - b_i| in units of that
// bound (<= 1 when the two agree to rounding); INFINITY on a non-finite entry. A norm-wise relative
// bound is wrong for such updates: it flakes whenever rounding at |terms| ~ 3 meets a result whose
// largest entry is ~ 1.
inline double rounding_units(const std::vector<double>& a, const std::vector<double>& b,
                             const std::vector<double>& sum_abs_terms, int m)
{
  const double u = std::numeric_limits<double>::epsilon() / 2, gamma = m * u / (1 - m * u);
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
    const double d = std::abs(a[i] - b[i]);
    if (d > 0) worst = std::max(worst, d / (2 * gamma * sum_abs_terms[i]));
  }
  return worst;
}

}  // namespace blockres::test

namespace blockres::test {

// 7-point convection–diffusion on an nx*ny*nz grid (upwind convection with cell Peclet
// number `peclet` along x, Dirichlet boundaries folded into the diagonal). For bs > 1 each
// cell carries bs coupled unknowns: off-diagonal blocks are coef * I, diagonal blocks add a
// fixed dense coupling, so the matrix is nonsymmetric and block-structured.
struct TestMatrix {
  BsrPattern pattern;
  std::vector<double> values;
  int bs;
};

// The matrix on executor e.
inline BsrMatrix upload(const ExecPtr& e, const TestMatrix& m)
{
  BsrMatrix A(e, m.bs, m.pattern);
  A.values().copy_from_host(m.values);
  return A;
}

inline TestMatrix convection_diffusion(int nx, int ny, int nz, int bs, double peclet)
{
  TestMatrix m;
  m.bs = bs;
  const index_t n = nx * ny * nz;
  m.pattern.nrows = m.pattern.ncols = n;
  m.pattern.row_ptr.push_back(0);
  auto id = [&](int i, int j, int k) { return static_cast<index_t>(i + nx * (j + ny * k)); };
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        std::vector<std::pair<index_t, double>> entries;  // (column, scalar coefficient)
        double diag = 6.0 + peclet;                        // diffusion 6, upwind outflow peclet
        if (i > 0) entries.push_back({id(i - 1, j, k), -1.0 - peclet});
        if (i + 1 < nx) entries.push_back({id(i + 1, j, k), -1.0});
        if (j > 0) entries.push_back({id(i, j - 1, k), -1.0});
        if (j + 1 < ny) entries.push_back({id(i, j + 1, k), -1.0});
        if (k > 0) entries.push_back({id(i, j, k - 1), -1.0});
        if (k + 1 < nz) entries.push_back({id(i, j, k + 1), -1.0});
        entries.push_back({id(i, j, k), diag});
        std::sort(entries.begin(), entries.end());
        for (const auto& [c, coef] : entries) {
          m.pattern.col_ind.push_back(c);
          for (int a = 0; a < bs; ++a)
            for (int b = 0; b < bs; ++b) {
              double v = (a == b) ? coef : 0.0;
              if (c == id(i, j, k) && a != b) v = 0.5 / (1 + std::abs(a - b)) * (a < b ? 1.0 : -0.5);
              m.values.push_back(v);
            }
        }
        m.pattern.row_ptr.push_back(static_cast<index_t>(m.pattern.col_ind.size()));
      }
  return m;
}

// Symmetric positive definite 7-point block Laplacian: off-diagonal blocks -I, diagonal blocks
// 6.5 I plus a small symmetric coupling (row sums of its magnitudes < 0.1, so the smallest
// eigenvalue stays above 0 for every grid).
inline TestMatrix spd_laplacian(int nx, int ny, int nz, int bs)
{
  TestMatrix m = convection_diffusion(nx, ny, nz, bs, 0.0);
  const std::size_t bb = static_cast<std::size_t>(bs) * bs;
  for (index_t r = 0; r < m.pattern.nrows; ++r)
    for (index_t p = m.pattern.row_ptr[r]; p < m.pattern.row_ptr[r + 1]; ++p) {
      if (m.pattern.col_ind[p] != r) continue;
      double* d = m.values.data() + static_cast<std::size_t>(p) * bb;
      for (int a = 0; a < bs; ++a)
        for (int b = 0; b < bs; ++b)
          d[a * bs + b] = a == b ? 6.5 : 0.2 / (bs * (1 + std::abs(a - b)));
    }
  return m;
}

}  // namespace blockres::test
