// Scalar test matrices of the AMG tests (CPU and GPU): finite-volume Poisson with coefficients and
// anisotropy, log-normal coefficient fields, random symmetric M-matrices.
#pragma once

#include "linalg/test/random_matrix.hpp"

#include <cmath>
#include <map>
#include <random>
#include <vector>

namespace blockres::test {

// 7-point finite-volume operator on an n^3 grid with cell coefficients k (harmonic face
// averages), anisotropy factors (ax, ay, az) and Dirichlet boundaries (half-cell distance) folded
// into the diagonal. k = 1, a = 1: the standard 7-point Poisson matrix (diagonal 6 + boundary terms).
inline TestMatrix fv_poisson(int nx, int ny, int nz, const std::vector<double>& k, double ax = 1, double ay = 1,
                            double az = 1)
{
  TestMatrix m;
  m.bs = 1;
  const index_t n = nx * ny * nz;
  m.pattern.nrows = m.pattern.ncols = n;
  m.pattern.row_ptr.push_back(0);
  auto id = [&](int i, int j, int kk) { return static_cast<index_t>(i + nx * (j + ny * kk)); };
  auto face = [&](index_t a, index_t b) { return 2.0 * k[a] * k[b] / (k[a] + k[b]); };
  for (int kk = 0; kk < nz; ++kk)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const index_t c = id(i, j, kk);
        std::map<index_t, double> row;
        double diag = 0.0;
        auto couple = [&](bool inside, int di, int dj, int dk, double a) {
          if (inside) {
            const double t = a * face(c, id(i + di, j + dj, kk + dk));
            row[id(i + di, j + dj, kk + dk)] = -t;
            diag += t;
          } else {
            diag += a * k[c];  // Dirichlet boundary face (k = 1: the standard 7-point stencil)
          }
        };
        couple(i > 0, -1, 0, 0, ax);
        couple(i + 1 < nx, 1, 0, 0, ax);
        couple(j > 0, 0, -1, 0, ay);
        couple(j + 1 < ny, 0, 1, 0, ay);
        couple(kk > 0, 0, 0, -1, az);
        couple(kk + 1 < nz, 0, 0, 1, az);
        row[c] = diag;
        for (const auto& [col, v] : row) {
          m.pattern.col_ind.push_back(col);
          m.values.push_back(v);
        }
        m.pattern.row_ptr.push_back(static_cast<index_t>(m.pattern.col_ind.size()));
      }
  return m;
}

inline std::vector<double> lognormal(index_t n, double std_log, unsigned seed)
{
  std::mt19937_64 g(seed);
  std::normal_distribution<double> d(0.0, std_log);
  std::vector<double> k(static_cast<std::size_t>(n));
  for (auto& v : k) v = std::exp(d(g));
  return k;
}

// Symmetric, weakly diagonally dominant random matrix with negative off-diagonals (an M-matrix).
inline TestMatrix random_spd(index_t n, int per_row, unsigned seed)
{
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<index_t> col(0, n - 1);
  std::uniform_real_distribution<double> val(0.1, 1.0);
  std::vector<std::map<index_t, double>> rows(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i)
    for (int e = 0; e < per_row; ++e) {
      const index_t j = col(g);
      if (j == i) continue;
      const double v = -val(g);
      rows[i][j] = v;
      rows[j][i] = v;
    }
  TestMatrix m;
  m.bs = 1;
  m.pattern.nrows = m.pattern.ncols = n;
  m.pattern.row_ptr.push_back(0);
  for (index_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (const auto& [j, v] : rows[i]) s += std::abs(v);
    rows[i][i] = s + 0.05 + 0.1 * val(g);
    for (const auto& [j, v] : rows[i]) {
      m.pattern.col_ind.push_back(j);
      m.values.push_back(v);
    }
    m.pattern.row_ptr.push_back(static_cast<index_t>(m.pattern.col_ind.size()));
  }
  return m;
}

}  // namespace blockres::test
