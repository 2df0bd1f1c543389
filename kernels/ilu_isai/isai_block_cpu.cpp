// Block-view ISAI (kernels/ilu_isai/isai_block.hpp): the host pattern analysis S(|T_b|^k) on the block
// pattern and the CPU reference of the generation (the oracle of isai_block_cuda.cu).
//
// The reference solves each block column's m x m system densely (OpenMP over the block columns)
// with exactly the operation order of the CUDA kernels, so the two agree to rounding:
//   triangular kinds: column-oriented substitution, x_s = r_s / T_ss (in place of r_s), then
//     r_t -= T_ts x_s for the rows still to come (forward for unit_lower, where block j is J[0]; backward for upper,
//     where block j is the last of J);
//   general (and block_upper): Gaussian elimination with implicit partial pivoting: at step s the pivot is the row
//     with the largest |T(r, s)| among the rows not yet pivoted (compared by the bit pattern of
//     |T(r, s)|, so a NaN wins as on the device; the lowest row on ties); every other such row
//     r gets l = T(r, s) / T(p, s), T(r, u) -= l T(p, u) (u > s), R(r, :) -= l R(p, :); then back
//     substitution over the steps in reverse, x_s = R(p_s, :) / T(p_s, s) (in place),
//     R(t, :) -= T(t, s) x_s for the rows t pivoted before step s; X(s, :) = R(p_s, :).
// A zero or non-finite pivot marks the column (the smallest j + 1 is returned); its values are
// still written.
#include "kernels/ilu_isai/isai_block.hpp"

#include "kernels/ilu_isai/pattern_power.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace blockres::kernels {

namespace {

// Largest system (m = block rows * bs scalar rows) of the warp-per-column CUDA kernel.
constexpr index_t short_col_max = 32;

// What the analysis and the kernels rely on: block rows with sorted, unique, in-range block
// columns and a diagonal block; scalar indices (nrows * bs) that fit in index_t.
void check_block_pattern(index_t nrows, int bs, const index_t* row_ptr, const index_t* col_ind)
{
  const std::string fn = "isai_block_pattern: ";
  if (bs < 1) throw std::invalid_argument(fn + "block size must be >= 1, got " + std::to_string(bs));
  if (nrows < 0) throw std::invalid_argument(fn + "negative number of block rows " + std::to_string(nrows));
  if (size64_t(nrows) * bs > std::numeric_limits<index_t>::max())
    throw std::invalid_argument(fn + std::to_string(nrows) + " block rows of size " + std::to_string(bs) +
                                " have more than 2^31-1 scalar rows");
  if (nrows == 0) return;
  if (row_ptr == nullptr || col_ind == nullptr) throw std::invalid_argument(fn + "null row_ptr or col_ind array");
  check_square_pattern(nrows, row_ptr, col_ind, fn, true);
}

void check_values(const IsaiBlockPattern& p, const BlockValuesView<const double>& A, const char* fn)
{
  if (A.nrows != p.nrows || A.bs != p.bs)
    throw std::invalid_argument(std::string(fn) + ": A has " + std::to_string(A.nrows) + " block rows of size " +
                                std::to_string(A.bs) + ", the pattern " + std::to_string(p.nrows) + " of size " +
                                std::to_string(p.bs));
  if (A.storage != BlockStorage::bsr && A.storage != BlockStorage::scalar_rows)
    throw std::invalid_argument(std::string(fn) + ": unknown BlockStorage");
}

// Where scalar row a of block row R keeps its values in either storage: entry (a, c) of the
// row's k-th block (q = row_ptr[R] + k) is at base + k * block_stride + c. (The CUDA file has the
// same accessor.)
struct ScalarRowLayout {
  size64_t base, block_stride;
};
ScalarRowLayout scalar_row_layout(BlockStorage storage, const index_t* row_ptr, int bs, index_t R, int a)
{
  const size64_t first = row_ptr[R], len = row_ptr[R + 1] - row_ptr[R], bs2 = size64_t(bs) * bs;
  if (storage == BlockStorage::bsr) return {first * bs2 + size64_t(a) * bs, bs2};
  return {first * bs2 + size64_t(a) * len * bs, bs};
}

// Pivot order: the bit pattern of |v| (increasing with |v|, NaN above infinity).
std::uint64_t pivot_key(double v) { return std::bit_cast<std::uint64_t>(std::abs(v)); }

bool bad_pivot(double d) { return d == 0.0 || !std::isfinite(d); }

}  // namespace

IsaiBlockPattern isai_block_pattern(IsaiKind kind, index_t nrows, int bs, const index_t* row_ptr,
                                    const index_t* col_ind, int power)
{
  if (power < 1) throw std::invalid_argument("isai_block_pattern: power must be >= 1, got " + std::to_string(power));
  if (kind != IsaiKind::unit_lower && kind != IsaiKind::upper && kind != IsaiKind::general &&
      kind != IsaiKind::unit_block_lower && kind != IsaiKind::block_upper)
    throw std::invalid_argument("isai_block_pattern: unknown IsaiKind");
  check_block_pattern(nrows, bs, row_ptr, col_ind);

  IsaiBlockPattern p;
  p.kind = kind;
  p.power = power;
  p.bs = bs;
  p.nrows = nrows;
  p.row_ptr.assign(static_cast<std::size_t>(nrows) + 1, 0);
  p.col_ptr.assign(static_cast<std::size_t>(nrows) + 1, 0);
  p.short_bucket_ptr.assign(5, 0);
  if (nrows == 0) return p;

  // nnzb bounded so that bsr_pos and M's row pointers fit in 32 bits and M's nnzb bs^2 values in
  // 64-bit offsets.
  const size64_t max_blocks = std::min<size64_t>(std::numeric_limits<index_t>::max(),
                                                 std::numeric_limits<size64_t>::max() / (size64_t(bs) * bs));
  const PatternPart part = kind == IsaiKind::unit_lower || kind == IsaiKind::unit_block_lower ? PatternPart::lower
                           : kind == IsaiKind::upper || kind == IsaiKind::block_upper         ? PatternPart::upper
                                                                                              : PatternPart::all;
  PatternPower s = pattern_power(nrows, row_ptr, col_ind, part, power, max_blocks, "isai_block_pattern");
  p.row_ptr = std::move(s.row_ptr);
  p.col = std::move(s.col);
  p.col_ptr = std::move(s.col_ptr);
  p.row_ind = std::move(s.row_ind);
  p.bsr_pos = std::move(s.pos);

  // Split the block columns by the CUDA kernel that generates them (m fits in index_t: at most
  // nrows * bs scalar rows, checked above); short columns by the lane-group width W = 4, 8, 16, 32
  // of their launch (the smallest W >= m), so a few longer columns (a well's completions coupled
  // to each other) do not widen the groups of all the others.
  ColumnSplit split = split_columns(p.col_ptr, bs, short_col_max);
  p.short_cols = std::move(split.short_cols);
  p.short_bucket_ptr = std::move(split.short_bucket_ptr);
  p.long_cols = std::move(split.long_cols);
  p.max_short_m = split.max_short_m;
  p.max_long_m = split.max_long_m;
  return p;
}

void check_isai_substitute(const IsaiBlockPattern& p, const BlockValuesView<const double>& F, const double* dinv,
                      const char* fn)
{
  if (p.kind != IsaiKind::unit_block_lower && p.kind != IsaiKind::block_upper)
    throw std::invalid_argument(std::string(fn) + ": only the block ILU(0) factors' kinds (unit_block_lower, "
                                "block_upper) are block triangular");
  check_values(p, F, fn);
  if (F.storage != BlockStorage::bsr) throw std::invalid_argument(std::string(fn) + ": F must be in BSR storage");
  if (p.kind == IsaiKind::block_upper && dinv == nullptr && p.nrows > 0)
    throw std::invalid_argument(std::string(fn) + ": block_upper needs the inverted diagonal blocks (dinv)");
}

namespace cpu {

int isai_block_generate(const IsaiBlockPattern& p, BlockValuesView<const double> A, double* m_val)
{
  check_values(p, A, "cpu::isai_block_generate");
  const IsaiKind kind = p.kind;
  const int bs = p.bs;
  const size64_t bs2 = size64_t(bs) * bs;
  int info = std::numeric_limits<int>::max();
#pragma omp parallel reduction(min : info)
  {
    std::vector<double> T;               // T(J, J), row-major m x m
    std::vector<double> R;               // right-hand sides E_j, row-major m x bs, reduced in place
    std::vector<index_t> step_of, piv;   // pivot step of each row (general), pivot row of each step
#pragma omp for schedule(dynamic, 16)
    for (index_t j = 0; j < p.nrows; ++j) {
      const index_t base = p.col_ptr[j];
      const index_t nb = p.col_ptr[j + 1] - base;
      const index_t* J = p.row_ind.data() + base;
      const index_t m = nb * bs;
      T.assign(size64_t(m) * m, 0.0);
      R.assign(size64_t(m) * bs, 0.0);

      // Scalar row t = (block J[t / bs], row a = t % bs): merge the sorted block columns of block
      // row J[t / bs] with the sorted J; for each match copy the bs entries the kind's triangle
      // keeps (local scalar indices order like the global ones, J being sorted).
      for (index_t t = 0; t < m; ++t) {
        const index_t rb = J[t / bs];
        const int a = static_cast<int>(t % bs);
        const ScalarRowLayout lay = scalar_row_layout(A.storage, A.row_ptr, bs, rb, a);
        double* row = T.data() + size64_t(t) * m;
        const index_t q0 = A.row_ptr[rb], q1 = A.row_ptr[rb + 1];
        for (index_t q = q0, b = 0; q < q1 && b < nb;) {
          if (A.col_ind[q] < J[b]) {
            ++q;
          } else if (A.col_ind[q] > J[b]) {
            ++b;
          } else {
            const double* v = A.val + lay.base + (q - q0) * lay.block_stride;
            const index_t bt = t / bs;
            for (int c = 0; c < bs; ++c) {
              const index_t u = b * bs + c;
              bool keep = false;
              switch (kind) {
                case IsaiKind::general: keep = true; break;
                case IsaiKind::upper: keep = u >= t; break;
                case IsaiKind::unit_lower: keep = u < t; break;
                case IsaiKind::unit_block_lower: keep = b < bt; break;
                case IsaiKind::block_upper: keep = b >= bt; break;
              }
              if (keep) row[u] = v[c];
            }
            ++q, ++b;
          }
        }
        if (kind == IsaiKind::unit_lower || kind == IsaiKind::unit_block_lower) row[t] = 1.0;
        if (rb == j) R[size64_t(t) * bs + a] = 1.0;
      }

      bool bad = false;
      if (kind == IsaiKind::general || kind == IsaiKind::block_upper) {
        step_of.assign(static_cast<std::size_t>(m), -1);
        piv.resize(static_cast<std::size_t>(m));
        for (index_t s = 0; s < m; ++s) {
          index_t pr = -1;
          std::uint64_t best = 0;
          for (index_t r = 0; r < m; ++r)
            if (step_of[r] < 0 && (pr < 0 || pivot_key(T[size64_t(r) * m + s]) > best)) {
              pr = r;
              best = pivot_key(T[size64_t(r) * m + s]);
            }
          step_of[pr] = s;
          piv[s] = pr;
          const double* prow = T.data() + size64_t(pr) * m;
          const double d = prow[s];
          bad = bad || bad_pivot(d);
          for (index_t r = 0; r < m; ++r) {
            if (step_of[r] >= 0) continue;
            double* row = T.data() + size64_t(r) * m;
            const double l = row[s] * (1.0 / d);
            for (index_t u = s + 1; u < m; ++u) row[u] -= l * prow[u];
            for (int c = 0; c < bs; ++c) R[size64_t(r) * bs + c] -= l * R[size64_t(pr) * bs + c];
          }
        }
        for (index_t s = m - 1; s >= 0; --s) {
          const index_t pr = piv[s];
          const double d = T[size64_t(pr) * m + s];
          for (int c = 0; c < bs; ++c) {
            const double xs = R[size64_t(pr) * bs + c] *= 1.0 / d;
            for (index_t t = 0; t < m; ++t)
              if (step_of[t] < s) R[size64_t(t) * bs + c] -= T[size64_t(t) * m + s] * xs;
          }
        }
      } else {
        piv.resize(static_cast<std::size_t>(m));
        for (index_t s = 0; s < m; ++s) piv[s] = s;
        const bool lower = kind == IsaiKind::unit_lower || kind == IsaiKind::unit_block_lower;
        for (index_t k = 0; k < m; ++k) {
          const index_t s = lower ? k : m - 1 - k;
          const double d = T[size64_t(s) * m + s];
          bad = bad || bad_pivot(d);
          const index_t t0 = lower ? s + 1 : 0, t1 = lower ? m : s;
          for (int c = 0; c < bs; ++c) {
            const double xs = R[size64_t(s) * bs + c] *= 1.0 / d;
            for (index_t t = t0; t < t1; ++t) R[size64_t(t) * bs + c] -= T[size64_t(t) * m + s] * xs;
          }
        }
      }

      // X(s, :) = R(p_s, :) into M's block (J[s / bs], j), row s % bs.
      for (index_t s = 0; s < m; ++s)
        std::copy_n(R.data() + size64_t(piv[s]) * bs, bs, m_val + p.bsr_pos[base + s / bs] * bs2 + (s % bs) * bs);
      if (bad) info = std::min(info, j + 1);
    }
  }
  return info == std::numeric_limits<int>::max() ? 0 : info;
}


void isai_block_substitute(const IsaiBlockPattern& p, BlockValuesView<const double> F, const double* dinv,
                           double* m_val)
{
  check_isai_substitute(p, F, dinv, "cpu::isai_block_substitute");
  const bool upper = p.kind == IsaiKind::block_upper;
  const int bs = p.bs;
  const size64_t bs2 = size64_t(bs) * bs;
#pragma omp parallel
  {
    std::vector<double> G(bs2);
#pragma omp for schedule(dynamic, 64)
    for (index_t j = 0; j < p.nrows; ++j) {
      const index_t base = p.col_ptr[j], nb = p.col_ptr[j + 1] - base;
      const index_t* J = p.row_ind.data() + base;
      for (index_t k = 0; k < nb; ++k) {
        const index_t s = upper ? nb - 1 - k : k, R = J[s];
        const index_t b0 = upper ? s + 1 : 0, b1 = upper ? nb : s;  // the blocks of J already done
        double* XR = m_val + size64_t(p.bsr_pos[base + s]) * bs2;
        for (int a = 0; a < bs; ++a)
          for (int c = 0; c < bs; ++c) {
            double acc = R == j && a == c ? 1.0 : 0.0;
            for (index_t q = F.row_ptr[R], b = b0; q < F.row_ptr[R + 1] && b < b1;) {
              if (F.col_ind[q] < J[b]) {
                ++q;
              } else if (F.col_ind[q] > J[b]) {
                ++b;
              } else {
                const double* T = F.val + size64_t(q) * bs2 + size64_t(a) * bs;
                const double* X = m_val + size64_t(p.bsr_pos[base + b]) * bs2 + c;
                for (int kk = 0; kk < bs; ++kk) acc = std::fma(-T[kk], X[size64_t(kk) * bs], acc);
                ++q, ++b;
              }
            }
            (upper ? G[size64_t(a) * bs + c] : XR[size64_t(a) * bs + c]) = acc;
          }
        if (!upper) continue;
        const double* D = dinv + size64_t(R) * bs2;
        for (int a = 0; a < bs; ++a)
          for (int c = 0; c < bs; ++c) {
            double x = 0.0;
            for (int kk = 0; kk < bs; ++kk) x = std::fma(D[size64_t(a) * bs + kk], G[size64_t(kk) * bs + c], x);
            XR[size64_t(a) * bs + c] = x;
          }
      }
    }
  }
}

}  // namespace cpu

}  // namespace blockres::kernels
