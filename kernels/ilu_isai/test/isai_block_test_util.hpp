// Test helpers for the block-view ISAI: block patterns (3D 7-point stencils, random bands with hub
// rows/columns, dense, block-diagonal), BSR values that make every principal submatrix of the
// kinds' T well conditioned (and a variant that needs pivoting), the scalar_rows storage built
// independently of the code under test, the residual (T M - I) on S_b computed from A and M
// alone, dense boolean powers, and column-normwise differences.
#pragma once

#include "kernels/ilu_isai/isai_block.hpp"
#include "kernels/ilu_isai/test/isai_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace blockres::test_isai_block {

using kernels::BlockStorage;
using kernels::BlockValuesView;
using kernels::IsaiBlockPattern;
using kernels::IsaiKind;

// The random source (one printed, replayable seed per run), uniform draws, dense boolean pattern
// powers and the count of non-finite values of the scalar-view ISAI tests.
using test_isai::BoolMatrix;
using test_isai::bool_power;
using test_isai::count_non_finite;
using test_isai::rng;
using test_isai::uniform;

constexpr IsaiKind all_kinds[] = {IsaiKind::unit_lower, IsaiKind::upper, IsaiKind::general};
constexpr BlockStorage both_storages[] = {BlockStorage::bsr, BlockStorage::scalar_rows};
inline const char* to_string(IsaiKind k)
{
  return k == IsaiKind::unit_lower ? "unit_lower" : k == IsaiKind::upper ? "upper" : "general";
}
inline const char* to_string(BlockStorage s) { return s == BlockStorage::bsr ? "bsr" : "scalar_rows"; }
// Block (R, C) in the kind's triangle.
inline bool in_kind(IsaiKind k, index_t R, index_t C)
{
  return k == IsaiKind::unit_lower ? C <= R : k == IsaiKind::upper ? C >= R : true;
}

// ---- Block patterns (every block row holds its diagonal block) --------------------------------

struct BlockPattern {
  index_t nb = 0;
  std::vector<index_t> row_ptr{0}, col;
};

inline BlockPattern from_rows(const std::vector<std::set<index_t>>& rows)
{
  BlockPattern P;
  P.nb = static_cast<index_t>(rows.size());
  for (index_t r = 0; r < P.nb; ++r) {
    P.col.push_back(r);  // the diagonal block, whatever the caller listed
    P.col.insert(P.col.end(), rows[r].begin(), rows[r].end());
    std::sort(P.col.begin() + P.row_ptr.back(), P.col.end());
    P.col.erase(std::unique(P.col.begin() + P.row_ptr.back(), P.col.end()), P.col.end());
    P.row_ptr.push_back(static_cast<index_t>(P.col.size()));
  }
  return P;
}

// 7-point stencil on nx x ny x nz cells (block row x + nx (y + ny z)).
inline BlockPattern stencil_pattern(index_t nx, index_t ny, index_t nz)
{
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(nx) * ny * nz);
  const auto id = [&](index_t x, index_t y, index_t z) { return x + nx * (y + ny * z); };
  for (index_t z = 0; z < nz; ++z)
    for (index_t y = 0; y < ny; ++y)
      for (index_t x = 0; x < nx; ++x) {
        auto& r = rows[id(x, y, z)];
        if (x > 0) r.insert(id(x - 1, y, z));
        if (x + 1 < nx) r.insert(id(x + 1, y, z));
        if (y > 0) r.insert(id(x, y - 1, z));
        if (y + 1 < ny) r.insert(id(x, y + 1, z));
        if (z > 0) r.insert(id(x, y, z - 1));
        if (z + 1 < nz) r.insert(id(x, y, z + 1));
      }
  return from_rows(rows);
}

// `per_side` random blocks within `window` on each side of the diagonal per block row, plus
// symmetric hub blocks (i, h), (h, i) for |i - h| <= hub_len at every hub_every-th block h
// (hub_every = 0: none): long block rows and columns in an otherwise short pattern.
inline BlockPattern random_pattern(index_t nb, int per_side, index_t window, index_t hub_every = 0, index_t hub_len = 0)
{
  const auto band = test_isai::random_band_with_hubs(nb, per_side, window, hub_every, hub_len);
  std::vector<std::set<index_t>> rows(band.size());
  for (std::size_t i = 0; i < band.size(); ++i) rows[i].insert(band[i].begin(), band[i].end());
  return from_rows(rows);
}

// Every block within `w` of the diagonal (w >= nb: dense).
inline BlockPattern band_pattern(index_t nb, index_t w)
{
  std::vector<std::set<index_t>> rows(static_cast<std::size_t>(nb));
  for (index_t i = 0; i < nb; ++i)
    for (index_t c = std::max<index_t>(0, i - w); c <= std::min<index_t>(nb - 1, i + w); ++c) rows[i].insert(c);
  return from_rows(rows);
}

// ---- Values ------------------------------------------------------------------------------------

// A BSR matrix in host memory: block q's entry (a, c) at bsr[(q bs + a) bs + c].
struct BlockMatrix {
  BlockPattern P;
  int bs = 1;
  std::vector<double> bsr;
  double& at(index_t q, int a, int c) { return bsr[(size64_t(q) * bs + a) * bs + c]; }
  double at(index_t q, int a, int c) const { return bsr[(size64_t(q) * bs + a) * bs + c]; }
  // The scalar_rows storage: scalar row R bs + a lists the blocks of block row R in order, bs
  // entries each (the bsr_to_csr expansion), written here from the definition.
  std::vector<double> scalar_rows() const
  {
    std::vector<double> v;
    v.reserve(bsr.size());
    for (index_t R = 0; R < P.nb; ++R)
      for (int a = 0; a < bs; ++a)
        for (index_t q = P.row_ptr[R]; q < P.row_ptr[R + 1]; ++q)
          for (int c = 0; c < bs; ++c) v.push_back(at(q, a, c));
    return v;
  }
  // View of `values` (bsr, or the result of scalar_rows()) in the given storage.
  BlockValuesView<const double> view(const std::vector<double>& values, BlockStorage s) const
  {
    return {P.nb, bs, P.row_ptr.data(), P.col.data(), values.data(), s};
  }
  index_t nnzb() const { return P.row_ptr.back(); }
};

// Values that keep every principal submatrix of each kind's T well conditioned. Per scalar row
// i: strictly lower entries uniform with |sum| <= 0.5 (||L(J,J)^{-1}||_inf <= 2); diagonal
// +-[1.5, 2.5]; strictly upper entries with sum of |.| <= |d| / 2 (D^{-1} U(J,J) = I + N,
// ||N||_inf <= 1/2). The whole row then has off-diagonal sum <= 0.5 + |d| / 2 <= |d| - 0.25:
// strictly row diagonally dominant, so every A(J, J) of the general kind is as well. The
// diagonal holds U's values (never 1), so the unit diagonal of L must be implied.
inline BlockMatrix dominant_values(BlockPattern P, int bs)
{
  BlockMatrix A{std::move(P), bs, {}};
  A.bsr.assign(static_cast<std::size_t>(A.nnzb()) * bs * bs, 0.0);
  for (index_t R = 0; R < A.P.nb; ++R)
    for (int a = 0; a < bs; ++a) {
      const index_t i = R * bs + a, len = (A.P.row_ptr[R + 1] - A.P.row_ptr[R]) * bs;
      index_t nlower = 0;
      for (index_t q = A.P.row_ptr[R]; q < A.P.row_ptr[R + 1]; ++q)
        for (int c = 0; c < bs; ++c) nlower += A.P.col[q] * bs + c < i;
      const index_t nupper = len - nlower - 1;
      const double d = (uniform(0, 1) < 0.5 ? -1.0 : 1.0) * uniform(1.5, 2.5);
      for (index_t q = A.P.row_ptr[R]; q < A.P.row_ptr[R + 1]; ++q)
        for (int c = 0; c < bs; ++c) {
          const index_t k = A.P.col[q] * bs + c;
          A.at(q, a, c) = k < i ? uniform(-0.5, 0.5) / double(nlower)
                          : k > i ? uniform(-0.5, 0.5) * std::abs(d) / double(nupper)
                                  : d;
        }
    }
  return A;
}

// General-kind values whose scalar diagonal is exactly zero (bs >= 2): in every scalar row
// (R, a) the dominant entry +-[1.5, 2.5] sits at (R, (a + 1) % bs) of the diagonal block, the
// others sum to at most 1 in magnitude. Every A(J, J) is a row permutation of a strictly
// diagonally dominant matrix: nonsingular, but elimination without row exchanges meets a zero
// pivot at its first step.
inline BlockMatrix shifted_dominant_values(BlockPattern P, int bs)
{
  BlockMatrix A{std::move(P), bs, {}};
  A.bsr.assign(static_cast<std::size_t>(A.nnzb()) * bs * bs, 0.0);
  for (index_t R = 0; R < A.P.nb; ++R)
    for (int a = 0; a < bs; ++a) {
      const index_t nother = (A.P.row_ptr[R + 1] - A.P.row_ptr[R]) * bs - 2;
      for (index_t q = A.P.row_ptr[R]; q < A.P.row_ptr[R + 1]; ++q)
        for (int c = 0; c < bs; ++c) {
          const bool diag_block = A.P.col[q] == R;
          A.at(q, a, c) = diag_block && c == a                  ? 0.0
                          : diag_block && c == (a + 1) % bs     ? (uniform(0, 1) < 0.5 ? -1.0 : 1.0) * uniform(1.5, 2.5)
                                                                : uniform(-1.0, 1.0) / double(std::max<index_t>(1, nother));
        }
    }
  return A;
}

// ---- Pattern references ------------------------------------------------------------------------


// T_b: the blocks of P in the kind's triangle.
inline BoolMatrix dense_kind_pattern(const BlockPattern& P, IsaiKind kind)
{
  const std::size_t n = static_cast<std::size_t>(P.nb);
  BoolMatrix B(n * n, 0);
  for (index_t r = 0; r < P.nb; ++r)
    for (index_t q = P.row_ptr[r]; q < P.row_ptr[r + 1]; ++q)
      if (in_kind(kind, r, P.col[q])) B[r * n + P.col[q]] = 1;
  return B;
}

inline BoolMatrix dense_of(const IsaiBlockPattern& p)
{
  const std::size_t n = static_cast<std::size_t>(p.nrows);
  BoolMatrix S(n * n, 0);
  for (index_t i = 0; i < p.nrows; ++i)
    for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e) S[i * n + p.col[e]] = 1;
  return S;
}

// ---- Checks ------------------------------------------------------------------------------------

// T(i, k) of the kind for scalar entry (a, c) of A's block q = (R, C) (C in the kind's triangle).
inline double kind_entry(IsaiKind kind, const BlockMatrix& A, index_t R, index_t q, int a, int c)
{
  const index_t i = R * A.bs + a, k = A.P.col[q] * A.bs + c;
  if (kind == IsaiKind::general) return A.at(q, a, c);
  if (kind == IsaiKind::upper) return k >= i ? A.at(q, a, c) : 0.0;
  return k < i ? A.at(q, a, c) : k == i ? 1.0 : 0.0;
}

// max over the scalar entries (i, k) of the blocks of S_b of |(T M - I)(i, k)| / s_k, where s_k is
// the largest (|T| |M|)(i, k) + delta_ik over those entries of column k (>= 1: the diagonal entry
// is among them). T M is formed block row by block row from A's blocks and M's BSR arrays only.
inline double max_pattern_residual(const BlockMatrix& A, IsaiKind kind, const IsaiBlockPattern& p,
                                   const std::vector<double>& m)
{
  const int bs = A.bs;
  const size64_t bs2 = size64_t(bs) * bs;
  std::vector<double> res(m.size(), 0.0), mag(m.size(), 0.0);
  std::vector<index_t> pos(static_cast<std::size_t>(p.nrows), -1);  // block column -> entry of S_b row R
  for (index_t R = 0; R < p.nrows; ++R) {
    for (index_t e = p.row_ptr[R]; e < p.row_ptr[R + 1]; ++e) pos[p.col[e]] = e;
    for (index_t q = A.P.row_ptr[R]; q < A.P.row_ptr[R + 1]; ++q) {
      const index_t C = A.P.col[q];
      if (!in_kind(kind, R, C)) continue;
      for (index_t f = p.row_ptr[C]; f < p.row_ptr[C + 1]; ++f) {
        const index_t e = pos[p.col[f]];
        if (e < 0) continue;
        for (int a = 0; a < bs; ++a)
          for (int b = 0; b < bs; ++b) {
            const double t = kind_entry(kind, A, R, q, a, b);
            if (t == 0.0) continue;
            for (int c = 0; c < bs; ++c) {
              const double prod = t * m[f * bs2 + b * bs + c];
              res[e * bs2 + a * bs + c] += prod;
              mag[e * bs2 + a * bs + c] += std::abs(prod);
            }
          }
      }
    }
    for (index_t e = p.row_ptr[R]; e < p.row_ptr[R + 1]; ++e) {
      pos[p.col[e]] = -1;
      if (p.col[e] == R)
        for (int a = 0; a < bs; ++a) res[e * bs2 + a * bs + a] -= 1.0, mag[e * bs2 + a * bs + a] += 1.0;
    }
  }
  std::vector<double> scale(static_cast<std::size_t>(p.nrows) * bs, 0.0);
  for (index_t e = 0; e < p.nnzb(); ++e)
    for (int a = 0; a < bs; ++a)
      for (int c = 0; c < bs; ++c) {
        double& s = scale[size64_t(p.col[e]) * bs + c];
        s = std::max(s, mag[e * bs2 + a * bs + c]);
      }
  double worst = 0.0;
  for (index_t e = 0; e < p.nnzb(); ++e)
    for (int a = 0; a < bs; ++a)
      for (int c = 0; c < bs; ++c) {
        const double r = std::abs(res[e * bs2 + a * bs + c]) / scale[size64_t(p.col[e]) * bs + c];
        worst = std::isnan(r) ? std::numeric_limits<double>::infinity() : std::max(worst, r);
      }
  return worst;
}

// Column-normwise relative difference of two value arrays of M: max over scalar columns (j, c)
// of max |x - y| / max |y| over the column's entries; NaN anywhere gives infinity.
inline double max_column_rel_diff(const IsaiBlockPattern& p, const std::vector<double>& x, const std::vector<double>& y)
{
  const int bs = p.bs;
  const size64_t bs2 = size64_t(bs) * bs;
  double worst = 0.0;
  for (index_t j = 0; j < p.nrows; ++j)
    for (int c = 0; c < bs; ++c) {
      double diff = 0.0, scale = 0.0;
      for (index_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e)
        for (int a = 0; a < bs; ++a) {
          const size64_t k = p.bsr_pos[e] * bs2 + a * bs + c;
          const double d = std::abs(x[k] - y[k]);
          diff = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(diff, d);
          scale = std::max(scale, std::abs(y[k]));
        }
      worst = std::max(worst, diff / scale);
    }
  return worst;
}

}  // namespace blockres::test_isai_block
