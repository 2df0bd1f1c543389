// ISAI pattern analysis S(|T|^k) (host) and the CPU references of the generation and of the
// triangle SpMV (the oracles for the CUDA versions in isai_cuda.cu).
#include "kernels/ilu_isai/isai.hpp"
#include "kernels/parallel_cpu.hpp"

#include "kernels/ilu_isai/pattern_power.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace blockres::kernels {

namespace {

// The largest column handled by one warp (kernel 1 of the CUDA generation); longer columns go to
// the block-per-column kernel with its system in global scratch.
constexpr index_t short_col_max = 32;

bool in_triangle(Triangle tri, index_t row, index_t col)
{
  return tri == Triangle::unit_lower ? col <= row : col >= row;
}

// Rejects what the pattern analysis and the kernels rely on: rows with sorted, unique, in-range
// columns and a diagonal entry.
void check_lu_pattern(index_t n, const index_t* row_ptr, const index_t* col)
{
  if (n < 0) throw std::invalid_argument("isai_pattern: negative dimension n = " + std::to_string(n));
  if (n > 0 && (row_ptr == nullptr || col == nullptr))
    throw std::invalid_argument("isai_pattern: null row_ptr or col array");
  if (n == 0) return;
  check_square_pattern(n, row_ptr, col, "isai_pattern: ", false);
}

}  // namespace

IsaiPattern isai_pattern(Triangle tri, index_t n, const index_t* lu_row_ptr, const index_t* lu_col, int power)
{
  if (power < 1) throw std::invalid_argument("isai_pattern: power must be >= 1, got " + std::to_string(power));
  check_lu_pattern(n, lu_row_ptr, lu_col);

  IsaiPattern p;
  p.tri = tri;
  p.power = power;
  p.n = n;
  p.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  p.col_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  p.short_bucket_ptr.assign(5, 0);
  if (n == 0) return p;

  PatternPower s = pattern_power(n, lu_row_ptr, lu_col, tri == Triangle::unit_lower ? PatternPart::lower : PatternPart::upper,
                                 power, std::numeric_limits<index_t>::max(), "isai_pattern");
  p.row_ptr = std::move(s.row_ptr);
  p.col = std::move(s.col);
  p.col_ptr = std::move(s.col_ptr);
  p.row_ind = std::move(s.row_ind);
  p.csr_pos = std::move(s.pos);

  // Split the columns by the kernel that generates them.
  ColumnSplit split = split_columns(p.col_ptr, 1, short_col_max);
  p.short_cols = std::move(split.short_cols);
  p.short_bucket_ptr = std::move(split.short_bucket_ptr);
  p.long_cols = std::move(split.long_cols);
  p.max_long_m = split.max_long_m;
  return p;
}

size64_t IsaiPattern::scratch_doubles() const
{
  const size64_t blocks = std::min<size64_t>(static_cast<size64_t>(long_cols.size()), isai_long_blocks);
  return blocks * max_long_m * max_long_m;
}

namespace cpu {

void isai_generate(const IsaiPattern& p, CsrView<const double> LU, double* m_val)
{
  if (LU.n != p.n)
    throw std::invalid_argument("cpu::isai_generate: LU has " + std::to_string(LU.n) + " rows, the pattern " +
                                std::to_string(p.n));
  const bool lower = p.tri == Triangle::unit_lower;
  const index_t n = p.n;
#pragma omp parallel
  {
    std::vector<double> A;  // T(J, J), row-major m x m
    std::vector<double> x;  // right-hand side e_j(J), overwritten by the solution
#pragma omp for schedule(dynamic, 64)
    for (index_t j = 0; j < n; ++j) {
      const index_t base = p.col_ptr[j];
      const index_t m = p.col_ptr[j + 1] - base;
      const index_t* J = p.row_ind.data() + base;
      A.assign(static_cast<std::size_t>(m) * m, 0.0);
      // Row a of the system: merge LU's sorted row J[a] with the sorted J, keeping the entries of
      // T's triangle (the unit diagonal of L is implied, whatever LU's diagonal holds).
      for (index_t a = 0; a < m; ++a) {
        const index_t r = J[a];
        double* row = A.data() + size64_t(a) * m;
        index_t q = LU.row_ptr[r];
        const index_t q_end = LU.row_ptr[r + 1];
        for (index_t b = 0; b < m && q < q_end;) {
          if (LU.col[q] < J[b]) {
            ++q;
          } else if (LU.col[q] > J[b]) {
            ++b;
          } else {
            if (in_triangle(p.tri, r, J[b])) row[b] = LU.val[q];
            ++q, ++b;
          }
        }
        if (lower) row[a] = 1.0;
      }
      // Column-oriented substitution: x_s = r_s / T_ss, then r_t -= T_ts x_s for the rows t still
      // to come (below s for L, where J[0] = j; above s for U, where J[m-1] = j).
      x.assign(static_cast<std::size_t>(m), 0.0);
      if (lower) {
        x[0] = 1.0;
        for (index_t s = 0; s < m; ++s) {
          const double xs = x[s] / A[size64_t(s) * m + s];
          x[s] = xs;
          for (index_t t = s + 1; t < m; ++t) x[t] -= A[size64_t(t) * m + s] * xs;
        }
      } else {
        x[m - 1] = 1.0;
        for (index_t s = m - 1; s >= 0; --s) {
          const double xs = x[s] / A[size64_t(s) * m + s];
          x[s] = xs;
          for (index_t t = 0; t < s; ++t) x[t] -= A[size64_t(t) * m + s] * xs;
        }
      }
      for (index_t a = 0; a < m; ++a) m_val[p.csr_pos[base + a]] = x[a];
    }
  }
}

void triangle_spmv(Triangle tri, CsrView<const double> LU, const double* x, double* y)
{
  // x and y must not alias: y_i is written while other rows still read x_i.
  const bool lower = tri == Triangle::unit_lower;
#pragma omp parallel for schedule(static) if (parallel_worth(size64_t(LU.row_ptr[LU.n])))
  for (index_t i = 0; i < LU.n; ++i) {
    double sum = 0.0;
    for (index_t q = LU.row_ptr[i]; q < LU.row_ptr[i + 1]; ++q) {
      const index_t c = LU.col[q];
      if (lower ? c < i : c >= i) sum += LU.val[q] * x[c];
    }
    y[i] = lower ? x[i] + sum : sum;
  }
}

}  // namespace cpu

}  // namespace blockres::kernels
