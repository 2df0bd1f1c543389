// Block-view ISAI CPU reference: the pattern S(|T_b|^k) against dense boolean powers (stencils,
// random, hub and band patterns, k = 1..4, every kind), its CSC view / bsr_pos / short-long split /
// max_long_m, bad input; the generation against the defining property (T M - I) = 0 on S_b (every
// kind, bs 1..8, 12, 33, k = 1..3, both storages, short and long columns), against the scalar
// view kernels/ilu_isai/isai.hpp on the bsr_to_csr expansion (triangular kinds), against A^{-1} for closed
// patterns, hand values, pivoting through zero diagonals, singular systems and their info.
#include "kernels/spmv/bsr_to_csr.hpp"
#include "kernels/ilu_isai/isai.hpp"
#include "kernels/ilu_isai/test/isai_block_test_util.hpp"
#include "kernels/ilu_isai/test/test_checks.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>

using namespace blockres;
using namespace blockres::test_isai_block;
using namespace blockres::test_checks;
namespace kc = blockres::kernels::cpu;
using kernels::isai_block_pattern;

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();

IsaiBlockPattern pattern_of(const BlockPattern& P, IsaiKind kind, int bs, int k)
{
  return isai_block_pattern(kind, P.nb, bs, P.row_ptr.data(), P.col.data(), k);
}

// M generated into a NaN-poisoned array (every value must be written); info returned through `info`.
std::vector<double> generate(const IsaiBlockPattern& p, BlockValuesView<const double> A, int* info = nullptr)
{
  std::vector<double> m(static_cast<std::size_t>(p.nnzb()) * p.bs * p.bs, nan_v);
  const int i = kc::isai_block_generate(p, A, m.data());
  if (info) *info = i;
  return m;
}

// Everything the pattern promises about its CSC view, bsr_pos and column split.
void check_pattern_views(const IsaiBlockPattern& p, const std::string& what)
{
  const index_t n = p.nrows;
  ASSERT_NO_FATAL_FAILURE(check_csc_view(p, n, p.nnzb(), p.bsr_pos, what));
  for (index_t j = 0; j < n; ++j) {
    // Block j is J[0] for unit_lower and the last of J for upper (the substitutions start there).
    const auto first = p.row_ind.begin() + p.col_ptr[j], last = p.row_ind.begin() + p.col_ptr[j + 1];
    ASSERT_TRUE(std::find(first, last, j) != last) << what << ": no diagonal block in column " << j;
    if (p.kind == IsaiKind::unit_lower) {
      ASSERT_EQ(*first, j) << what;
    }
    if (p.kind == IsaiKind::upper) {
      ASSERT_EQ(*(last - 1), j) << what;
    }
  }
  // The split is at m = 32 scalar rows.
  const auto scalar_rows = [&](index_t j) { return (p.col_ptr[j + 1] - p.col_ptr[j]) * p.bs; };
  ASSERT_NO_FATAL_FAILURE(check_column_split(p, n, scalar_rows, what));
  index_t max_short = 0;
  for (index_t j : p.short_cols) {
    const index_t m = scalar_rows(j);
    ASSERT_LE(m, 32) << what;
    max_short = std::max(max_short, m);
  }
  ASSERT_EQ(p.max_short_m, max_short) << what;
}

// (label, pattern, bs, largest power) of the residual tests: sizes chosen so the dense systems stay
// small enough for a CPU test; the hub patterns give long columns beside short ones.
struct Case {
  std::string label;
  BlockPattern P;
  int bs, max_k;
};
std::vector<Case> residual_cases()
{
  std::vector<Case> out;
  for (int bs : {1, 2, 3, 4, 5, 8}) {
    out.push_back({"stencil 5x4x3", stencil_pattern(5, 4, 3), bs, 3});
    out.push_back({"random+hubs 70", random_pattern(70, 1, 4, 35, 12), bs, 2});
  }
  out.push_back({"stencil 5x4x3", stencil_pattern(5, 4, 3), 7, 3});
  out.push_back({"stencil 5x3x3", stencil_pattern(5, 3, 3), 12, 2});
  out.push_back({"stencil 3x3x3", stencil_pattern(3, 3, 3), 33, 2});
  out.push_back({"block diagonal 9", band_pattern(9, 0), 33, 2});
  return out;
}

}  // namespace

// ---- Pattern ------------------------------------------------------------------------------------

TEST(IsaiBlockPatternCpu, MatchesDenseBooleanPowers)
{
  const std::pair<std::string, BlockPattern> cases[] = {
      {"stencil 5x4x3", stencil_pattern(5, 4, 3)},
      {"random 70", random_pattern(70, 2, 6)},
      {"random+hubs 90", random_pattern(90, 1, 5, 45, 20)},
      {"band 2 n=31", band_pattern(31, 2)},
      {"single block", band_pattern(1, 0)},
  };
  for (const auto& [label, P] : cases)
    for (IsaiKind kind : all_kinds)
      for (int k = 1; k <= 4; ++k)
        for (int bs : {1, 3, 8}) {
          const std::string what = label + " " + to_string(kind) + " k=" + std::to_string(k) + " bs=" + std::to_string(bs);
          const IsaiBlockPattern p = pattern_of(P, kind, bs, k);
          ASSERT_EQ(dense_of(p), bool_power(dense_kind_pattern(P, kind), P.nb, k)) << what;
          check_pattern_views(p, what);
          EXPECT_EQ(p.kind, kind);
          EXPECT_EQ(p.power, k);
          EXPECT_EQ(p.bs, bs);
          EXPECT_EQ(p.nrows, P.nb);
        }
  // The hub pattern has long and short columns at bs = 1 already.
  const IsaiBlockPattern p = pattern_of(cases[2].second, IsaiKind::general, 1, 1);
  EXPECT_FALSE(p.long_cols.empty());
  EXPECT_FALSE(p.short_cols.empty());
}

TEST(IsaiBlockPatternCpu, KEqualOneIsTheKindsTriangleOfThePattern)
{
  const BlockPattern P = random_pattern(120, 3, 10, 40, 15);
  for (IsaiKind kind : all_kinds) {
    const IsaiBlockPattern p = pattern_of(P, kind, 2, 1);
    for (index_t i = 0; i < P.nb; ++i) {
      std::vector<index_t> expect;
      for (index_t q = P.row_ptr[i]; q < P.row_ptr[i + 1]; ++q)
        if (in_kind(kind, i, P.col[q])) expect.push_back(P.col[q]);
      EXPECT_EQ(std::vector<index_t>(p.col.begin() + p.row_ptr[i], p.col.begin() + p.row_ptr[i + 1]), expect)
          << to_string(kind) << " block row " << i;
    }
  }
}

TEST(IsaiBlockPatternCpu, EmptyMatrix)
{
  const index_t row_ptr[] = {0};
  for (IsaiKind kind : all_kinds) {
    const IsaiBlockPattern p = isai_block_pattern(kind, 0, 4, row_ptr, nullptr, 2);
    EXPECT_EQ(p.nnzb(), 0);
    EXPECT_EQ(p.max_long_m, 0);
    EXPECT_EQ(p.max_short_m, 0);
    EXPECT_TRUE(p.short_cols.empty() && p.long_cols.empty());
    check_pattern_views(p, "n=0");
    EXPECT_EQ(kc::isai_block_generate(p, {0, 4, row_ptr, nullptr, nullptr, BlockStorage::bsr}, nullptr), 0);
  }
}

TEST(IsaiBlockPatternCpu, RejectsBadInput)
{
  const BlockPattern P = band_pattern(5, 1);
  const auto analyse = [&](IsaiKind kind, index_t n, int bs, int k) {
    return [&P, kind, n, bs, k] { isai_block_pattern(kind, n, bs, P.row_ptr.data(), P.col.data(), k); };
  };
  for (IsaiKind kind : all_kinds) {
    expect_invalid(analyse(kind, 5, 2, 0), "power must be >= 1");
    expect_invalid(analyse(kind, 5, 2, -3), "power must be >= 1");
    expect_invalid(analyse(kind, 5, 0, 1), "block size must be >= 1");
    expect_invalid(analyse(kind, -1, 2, 1), "negative number of block rows");
    expect_invalid(analyse(kind, 1 << 20, 1 << 12, 1), "more than 2^31-1 scalar rows");
  }
  expect_invalid([] { isai_block_pattern(IsaiKind::general, 3, 1, nullptr, nullptr, 1); }, "null row_ptr");
  expect_invalid([] { isai_block_pattern(static_cast<IsaiKind>(7), 0, 1, nullptr, nullptr, 1); }, "unknown IsaiKind");
  {
    const std::vector<index_t> rp{1, 2, 3}, col{0, 1, 1};
    expect_invalid([&] { isai_block_pattern(IsaiKind::upper, 2, 1, rp.data(), col.data(), 1); }, "row_ptr[0] must be 0");
  }
  {
    const std::vector<index_t> rp{0, 2, 1, 3}, col{0, 1, 1, 2};
    expect_invalid([&] { isai_block_pattern(IsaiKind::upper, 3, 1, rp.data(), col.data(), 1); },
                   "block row 1: row_ptr decreases");
  }
  // Block row 3 without its diagonal block: (3, 2) (3, 4).
  {
    const std::vector<index_t> rp{0, 2, 5, 8, 10, 12}, col{0, 1, 0, 1, 2, 1, 2, 3, 2, 4, 3, 4};
    expect_invalid([&] { isai_block_pattern(IsaiKind::general, 5, 3, rp.data(), col.data(), 1); },
                   "block row 3 has no diagonal block");
  }
  // Block row 2 unsorted, then duplicated, then out of range, then valid.
  {
    const std::vector<index_t> rp{0, 2, 5, 8, 11, 13};
    std::vector<index_t> col{0, 1, 0, 1, 2, 2, 1, 3, 2, 3, 4, 3, 4};
    const auto run = [&] { isai_block_pattern(IsaiKind::unit_lower, 5, 2, rp.data(), col.data(), 2); };
    expect_invalid(run, "block row 2: block columns not sorted");
    col[5] = 1, col[6] = 2, col[7] = 2;
    expect_invalid(run, "block row 2: block columns not sorted or not unique (2 then 2)");
    col[7] = 5;
    expect_invalid(run, "block row 2: block column 5 out of range [0, 5)");
    col[7] = -1;
    expect_invalid(run, "block row 2: block column -1 out of range");
    col[7] = 3;
    EXPECT_NO_THROW(run());
  }
}

TEST(IsaiBlockGenerateCpu, RejectsValuesOfAnotherShape)
{
  const BlockMatrix A = dominant_values(band_pattern(6, 1), 3);
  const IsaiBlockPattern p = pattern_of(A.P, IsaiKind::general, 3, 1);
  std::vector<double> m(static_cast<std::size_t>(p.nnzb()) * 9);
  auto v = A.view(A.bsr, BlockStorage::bsr);
  v.bs = 2;
  expect_invalid([&] { kc::isai_block_generate(p, v, m.data()); }, "block rows of size 2, the pattern 6 of size 3");
  v.bs = 3, v.nrows = 5;
  expect_invalid([&] { kc::isai_block_generate(p, v, m.data()); }, "A has 5 block rows");
  v.nrows = 6, v.storage = static_cast<BlockStorage>(9);
  expect_invalid([&] { kc::isai_block_generate(p, v, m.data()); }, "unknown BlockStorage");
}

// ---- Generation ---------------------------------------------------------------------------------

TEST(IsaiBlockGenerateCpu, HandValuesBs2)
{
  // Two blocks, pattern [[D0, B], [C, D1]] with bs = 2; T_b of unit_lower: [[D0, .], [C, D1]].
  // k = 1, unit_lower: M(0,0) = L(D0)^{-1} (unit lower part of D0), M(1,1) = L(D1)^{-1},
  // M(1,0) = -L(D1)^{-1} C L(D0)^{-1}; C's 2 x 2 values enter fully (off the diagonal blocks).
  const BlockMatrix A = dominant_values(band_pattern(2, 1), 2);
  const double l0 = A.at(0, 1, 0), l1 = A.at(3, 1, 0);  // strictly lower entries of D0, D1
  const double c00 = A.at(2, 0, 0), c01 = A.at(2, 0, 1), c10 = A.at(2, 1, 0), c11 = A.at(2, 1, 1);
  const IsaiBlockPattern p = pattern_of(A.P, IsaiKind::unit_lower, 2, 1);
  ASSERT_EQ(p.nnzb(), 3);
  int info = -1;
  const auto m = generate(p, A.view(A.bsr, BlockStorage::bsr), &info);
  EXPECT_EQ(info, 0);
  const auto block = [&](index_t pos, int a, int c) { return m[pos * 4 + a * 2 + c]; };
  // Block positions in M's BSR order: row 0: (0,0); row 1: (1,0), (1,1).
  EXPECT_EQ(block(0, 0, 0), 1.0);
  EXPECT_EQ(block(0, 0, 1), 0.0);  // outside the triangle: exactly 0
  EXPECT_EQ(block(0, 1, 0), -l0);
  EXPECT_EQ(block(0, 1, 1), 1.0);
  EXPECT_EQ(block(2, 0, 0), 1.0);
  EXPECT_EQ(block(2, 0, 1), 0.0);
  EXPECT_EQ(block(2, 1, 0), -l1);
  EXPECT_EQ(block(2, 1, 1), 1.0);
  // M(1,0) = -L1^{-1} C L0^{-1}, L0^{-1} = [1 0; -l0 1], L1^{-1} = [1 0; -l1 1].
  const double y00 = c00 - c01 * l0, y01 = c01, y10 = c10 - c11 * l0, y11 = c11;  // C L0^{-1}
  const double ref[2][2] = {{-y00, -y01}, {-(y10 - l1 * y00), -(y11 - l1 * y01)}};
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 2; ++c) EXPECT_NEAR(block(1, a, c), ref[a][c], 1e-15 * 8) << a << ", " << c;
}

TEST(IsaiBlockGenerateCpu, GeneralBs1DenseTwoByTwo)
{
  // A = [a b; c d] with the dense pattern: M = A^{-1} (|c| > |a|: the first pivot is row 1).
  BlockMatrix A{band_pattern(2, 1), 1, {0.5, 2.0, -3.0, 1.25}};
  const IsaiBlockPattern p = pattern_of(A.P, IsaiKind::general, 1, 1);
  int info = -1;
  const auto m = generate(p, A.view(A.bsr, BlockStorage::bsr), &info);
  EXPECT_EQ(info, 0);
  const double det = 0.5 * 1.25 - 2.0 * -3.0;
  const double inv[4] = {1.25 / det, -2.0 / det, 3.0 / det, 0.5 / det};
  for (int e = 0; e < 4; ++e) EXPECT_NEAR(m[e], inv[e], 1e-15 * std::abs(inv[e])) << e;
}

TEST(IsaiBlockGenerateCpu, ResidualVanishesOnPattern)
{
  size64_t nshort[3] = {}, nlong[3] = {};  // per kind: both generation paths must be covered
  for (const Case& c : residual_cases()) {
    const BlockMatrix A = dominant_values(c.P, c.bs);
    const std::vector<double> rows = A.scalar_rows();
    for (IsaiKind kind : all_kinds)
      for (int k = 1; k <= c.max_k; ++k) {
        const std::string what = c.label + " bs=" + std::to_string(c.bs) + " " + to_string(kind) + " k=" + std::to_string(k);
        const IsaiBlockPattern p = pattern_of(c.P, kind, c.bs, k);
        nshort[int(kind)] += p.short_cols.size(), nlong[int(kind)] += p.long_cols.size();
        int info_bsr = -1, info_rows = -1;
        const auto m = generate(p, A.view(A.bsr, BlockStorage::bsr), &info_bsr);
        const auto m_rows = generate(p, A.view(rows, BlockStorage::scalar_rows), &info_rows);
        EXPECT_EQ(info_bsr, 0) << what;
        EXPECT_EQ(info_rows, 0) << what;
        ASSERT_EQ(count_non_finite(m), 0u) << what;
        EXPECT_EQ(m_rows, m) << what << ": the storages must give the same M";
        EXPECT_LE(max_pattern_residual(A, kind, p, m), 1e-12)
            << what << " (" << p.short_cols.size() << " short, " << p.long_cols.size() << " long columns)";
      }
  }
  for (IsaiKind kind : all_kinds) {
    EXPECT_GT(nshort[int(kind)], 100) << to_string(kind);
    EXPECT_GT(nlong[int(kind)], 100) << to_string(kind);
  }
}

TEST(IsaiBlockGenerateCpu, TriangularKindsEqualTheScalarView)
{
  // On the bsr_to_csr expansion (dense blocks) the scalar pattern S(|T|^k) is the expansion of S_b
  // restricted to the triangle, and M agrees on it; the block M's entries outside it (the other
  // triangle of the diagonal blocks) are exactly 0.
  struct TriCase {
    std::string label;
    BlockPattern P;
    int bs;
  };
  const TriCase cases[] = {
      {"stencil 5x4x3", stencil_pattern(5, 4, 3), 1}, {"stencil 5x4x3", stencil_pattern(5, 4, 3), 3},
      {"stencil 3x3x5", stencil_pattern(3, 3, 5), 5}, {"random+hubs 70", random_pattern(70, 1, 4, 35, 12), 2},
      {"random 40", random_pattern(40, 2, 5), 4},     {"band 1 n=9", band_pattern(9, 1), 12},
  };
  for (const auto& c : cases) {
    const BlockMatrix A = dominant_values(c.P, c.bs);
    const index_t n = c.P.nb * c.bs;
    const size64_t bs2 = size64_t(c.bs) * c.bs;
    std::vector<index_t> csr_row_ptr(static_cast<std::size_t>(n) + 1), csr_col(A.bsr.size());
    std::vector<double> csr_val(A.bsr.size());
    const BsrView<const double> bsr{c.P.nb, c.P.nb, c.bs, c.P.row_ptr.data(), c.P.col.data(), A.bsr.data()};
    kc::bsr_to_csr(bsr, csr_row_ptr.data(), csr_col.data(), csr_val.data());
    ASSERT_EQ(csr_val, A.scalar_rows()) << c.label << ": scalar_rows differs from bsr_to_csr";
    const kernels::CsrView<const double> LU{n, csr_row_ptr.data(), csr_col.data(), csr_val.data()};

    for (IsaiKind kind : {IsaiKind::unit_lower, IsaiKind::upper})
      for (int k = 1; k <= 3; ++k) {
        const std::string what = c.label + " bs=" + std::to_string(c.bs) + " " + to_string(kind) + " k=" + std::to_string(k);
        const kernels::Triangle tri = kind == IsaiKind::unit_lower ? kernels::Triangle::unit_lower : kernels::Triangle::upper;
        const kernels::IsaiPattern ps = kernels::isai_pattern(tri, n, csr_row_ptr.data(), csr_col.data(), k);
        std::vector<double> ms(static_cast<std::size_t>(ps.nnz()), nan_v);
        kc::isai_generate(ps, LU, ms.data());
        const IsaiBlockPattern p = pattern_of(c.P, kind, c.bs, k);
        const auto m = generate(p, A.view(A.bsr, BlockStorage::bsr));

        // Block M at scalar (i, col): its block (i / bs, col / bs) in S_b, or none.
        const auto block_value = [&](index_t i, index_t col, bool& found) {
          const index_t R = i / c.bs, C = col / c.bs;
          const auto first = p.col.begin() + p.row_ptr[R], last = p.col.begin() + p.row_ptr[R + 1];
          const auto it = std::lower_bound(first, last, C);
          found = it != last && *it == C;
          return found ? m[(it - p.col.begin()) * bs2 + (i % c.bs) * c.bs + col % c.bs] : 0.0;
        };
        // Every scalar entry within the block pattern, column-normwise relative to the scalar M.
        std::vector<double> diff(static_cast<std::size_t>(n), 0.0), scale(static_cast<std::size_t>(n), 0.0);
        for (index_t i = 0; i < n; ++i)
          for (index_t e = ps.row_ptr[i]; e < ps.row_ptr[i + 1]; ++e) {
            bool found = false;
            const double v = block_value(i, ps.col[e], found);
            ASSERT_TRUE(found) << what << ": scalar entry (" << i << ", " << ps.col[e] << ") outside S_b";
            diff[ps.col[e]] = std::max(diff[ps.col[e]], std::abs(v - ms[e]));
            scale[ps.col[e]] = std::max(scale[ps.col[e]], std::abs(ms[e]));
          }
        for (index_t col = 0; col < n; ++col) ASSERT_LE(diff[col], 1e-12 * scale[col]) << what << " column " << col;
        // Every block entry outside the scalar pattern is exactly 0, and the counts agree.
        size64_t inside = 0;
        for (index_t R = 0; R < c.P.nb; ++R)
          for (index_t e = p.row_ptr[R]; e < p.row_ptr[R + 1]; ++e)
            for (int a = 0; a < c.bs; ++a)
              for (int cc = 0; cc < c.bs; ++cc) {
                const index_t i = R * c.bs + a, col = p.col[e] * c.bs + cc;
                const auto first = ps.col.begin() + ps.row_ptr[i], last = ps.col.begin() + ps.row_ptr[i + 1];
                if (std::binary_search(first, last, col)) {
                  ++inside;
                } else {
                  ASSERT_EQ(m[e * bs2 + a * c.bs + cc], 0.0) << what << ": block entry (" << i << ", " << col
                                                               << ") outside the scalar pattern is not 0";
                }
              }
        EXPECT_EQ(inside, ps.nnz()) << what;
      }
  }
}

TEST(IsaiBlockGenerateCpu, ClosedPatternsGiveTheInverse)
{
  // Dense block patterns (k = 1) and block-diagonal ones: S_b is closed and M = T^{-1}, so T M = I
  // holds in full (checked on every scalar entry, not only on S_b).
  struct ClosedCase {
    std::string label;
    BlockPattern P;
    int bs;
  };
  const ClosedCase cases[] = {
      {"dense 40 bs=1", band_pattern(40, 40), 1},     // one long column each
      {"dense 5 bs=3", band_pattern(5, 5), 3},        // m = 15: short
      {"dense 9 bs=4", band_pattern(9, 9), 4},        // m = 36: long
      {"block diagonal 7 bs=5", band_pattern(7, 0), 5},
  };
  for (const auto& c : cases) {
    const BlockMatrix A = dominant_values(c.P, c.bs);
    const index_t n = c.P.nb * c.bs;
    for (IsaiKind kind : all_kinds) {
      const std::string what = c.label + " " + to_string(kind);
      const IsaiBlockPattern p = pattern_of(c.P, kind, c.bs, 1);
      const auto m = generate(p, A.view(A.bsr, BlockStorage::bsr));
      // Dense T and M (scalar, row-major), then T M - I everywhere.
      std::vector<double> T(size64_t(n) * n, 0.0), M(size64_t(n) * n, 0.0);
      for (index_t R = 0; R < c.P.nb; ++R) {
        for (index_t q = c.P.row_ptr[R]; q < c.P.row_ptr[R + 1]; ++q)
          if (in_kind(kind, R, c.P.col[q]))
            for (int a = 0; a < c.bs; ++a)
              for (int b = 0; b < c.bs; ++b)
                T[size64_t(R * c.bs + a) * n + c.P.col[q] * c.bs + b] = kind_entry(kind, A, R, q, a, b);
        for (index_t e = p.row_ptr[R]; e < p.row_ptr[R + 1]; ++e)
          for (int a = 0; a < c.bs; ++a)
            for (int b = 0; b < c.bs; ++b)
              M[size64_t(R * c.bs + a) * n + p.col[e] * c.bs + b] = m[(size64_t(e) * c.bs + a) * c.bs + b];
      }
      double worst = 0.0;
      for (index_t i = 0; i < n; ++i)
        for (index_t col = 0; col < n; ++col) {
          double s = i == col ? -1.0 : 0.0;
          for (index_t l = 0; l < n; ++l) s += T[size64_t(i) * n + l] * M[size64_t(l) * n + col];
          worst = std::max(worst, std::abs(s));
        }
      EXPECT_LE(worst, 1e-13) << what;
    }
  }
}

TEST(IsaiBlockGenerateCpu, UnitLowerIgnoresTheDiagonalValues)
{
  BlockMatrix A = dominant_values(random_pattern(60, 2, 6, 30, 12), 3);
  const IsaiBlockPattern p = pattern_of(A.P, IsaiKind::unit_lower, 3, 2);
  const auto m1 = generate(p, A.view(A.bsr, BlockStorage::bsr));
  for (index_t R = 0; R < A.P.nb; ++R)
    for (index_t q = A.P.row_ptr[R]; q < A.P.row_ptr[R + 1]; ++q)
      if (A.P.col[q] == R)
        for (int a = 0; a < 3; ++a) A.at(q, a, a) = a == 1 ? 0.0 : uniform(-5.0, 5.0);
  int info = -1;
  EXPECT_EQ(generate(p, A.view(A.bsr, BlockStorage::bsr), &info), m1);
  EXPECT_EQ(info, 0);
}

TEST(IsaiBlockGenerateCpu, GeneralPivotsThroughZeroDiagonals)
{
  // Every scalar diagonal entry is 0: each system needs row exchanges from its first step.
  const std::pair<std::string, BlockPattern> patterns[] = {
      {"stencil 5x3x3", stencil_pattern(5, 3, 3)},
      {"random+hubs 70", random_pattern(70, 1, 4, 35, 12)},
  };
  for (const auto& [label, P] : patterns)
    for (int bs : {2, 3, 5})
      for (int k = 1; k <= 2; ++k) {
        const std::string what = label + " bs=" + std::to_string(bs) + " k=" + std::to_string(k);
        const BlockMatrix A = shifted_dominant_values(P, bs);
        const IsaiBlockPattern p = pattern_of(P, IsaiKind::general, bs, k);
        int info = -1;
        const auto m = generate(p, A.view(A.bsr, BlockStorage::bsr), &info);
        EXPECT_EQ(info, 0) << what;
        ASSERT_EQ(count_non_finite(m), 0u) << what;
        EXPECT_LE(max_pattern_residual(A, IsaiKind::general, p, m), 1e-12) << what;
        EXPECT_EQ(generate(p, A.view(A.scalar_rows(), BlockStorage::scalar_rows)), m) << what;
      }
}

TEST(IsaiBlockGenerateCpu, SingularSystemsReportTheSmallestColumn)
{
  // general: a zero block row r makes singular exactly the systems of the columns j with r in J,
  // i.e. the block columns of S_b's row r; upper: a zero diagonal entry in block row r gives a
  // zero pivot in every column j with r in J, the first being j = r.
  const BlockPattern P = random_pattern(70, 1, 4, 35, 12);
  for (int bs : {1, 3})
    for (index_t r : {0, 17, 35, 69}) {
      const std::string what = "bs=" + std::to_string(bs) + " row " + std::to_string(r);
      BlockMatrix A = dominant_values(P, bs);
      const IsaiBlockPattern pg = pattern_of(P, IsaiKind::general, bs, 1);
      const IsaiBlockPattern pu = pattern_of(P, IsaiKind::upper, bs, 1);
      BlockMatrix Z = A;
      for (index_t q = P.row_ptr[r]; q < P.row_ptr[r + 1]; ++q)
        for (int a = 0; a < bs; ++a)
          for (int c = 0; c < bs; ++c) Z.at(q, a, c) = 0.0;
      int info = -1;
      generate(pg, Z.view(Z.bsr, BlockStorage::bsr), &info);
      EXPECT_EQ(info, pg.col[pg.row_ptr[r]] + 1) << what << " general";
      generate(pg, Z.view(Z.scalar_rows(), BlockStorage::scalar_rows), &info);
      EXPECT_EQ(info, pg.col[pg.row_ptr[r]] + 1) << what << " general, scalar_rows";

      BlockMatrix D = A;
      for (index_t q = P.row_ptr[r]; q < P.row_ptr[r + 1]; ++q)
        if (P.col[q] == r) D.at(q, bs - 1, bs - 1) = 0.0;
      generate(pu, D.view(D.bsr, BlockStorage::bsr), &info);
      EXPECT_EQ(info, r + 1) << what << " upper";
      generate(pattern_of(P, IsaiKind::unit_lower, bs, 1), D.view(D.bsr, BlockStorage::bsr), &info);
      EXPECT_EQ(info, 0) << what << " unit_lower (unit diagonal implied)";
    }
}
