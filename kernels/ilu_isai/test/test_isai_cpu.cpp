// ISAI CPU references: the pattern S(|T|^k) against dense boolean matrix powers (tridiagonal,
// random, hub patterns, k = 1..4, both triangles), its CSC view / csr_pos / short-long split /
// scratch offsets, argument errors; the generation against hand values, against the
// defining property (T M - I)(i, j) = 0 on S (random factors with short and long columns, bands,
// wide stencils at k = 3), against T^{-1} for closed patterns (block-diagonal T, full triangles),
// its independence of LU's diagonal for L; the triangle SpMV against a dense product.
#include "kernels/ilu_isai/test/isai_test_util.hpp"
#include "kernels/ilu_isai/test/test_checks.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <numeric>
#include <string>
#include <utility>

using namespace blockres;
using namespace blockres::test_isai;
using namespace blockres::test_checks;
namespace kc = blockres::kernels::cpu;
using kernels::isai_pattern;

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();

IsaiPattern pattern_of(const Csr& A, Triangle tri, int k)
{
  return isai_pattern(tri, A.n, A.row_ptr.data(), A.col.data(), k);
}

// M for (A, tri, k), generated into a NaN-poisoned array (every entry must be written).
std::vector<double> generate(const Csr& A, const IsaiPattern& p)
{
  std::vector<double> m(static_cast<std::size_t>(p.nnz()), nan_v);
  kc::isai_generate(p, A.view(), m.data());
  return m;
}

// Everything the pattern promises about its CSC view, csr_pos, column split and scratch.
void check_pattern_views(const IsaiPattern& p, const std::string& what)
{
  const index_t n = p.n;
  ASSERT_NO_FATAL_FAILURE(check_csc_view(p, n, p.nnz(), p.csr_pos, what));
  for (index_t j = 0; j < n; ++j) {
    ASSERT_LT(p.col_ptr[j], p.col_ptr[j + 1]) << what << ": column " << j << " is empty";
    // The diagonal is J[0] for L and J[m-1] for U (the substitution's first unknown).
    const index_t diag_row = p.tri == Triangle::unit_lower ? p.row_ind[p.col_ptr[j]] : p.row_ind[p.col_ptr[j + 1] - 1];
    ASSERT_EQ(diag_row, j) << what;
  }
  // Long columns with one max_long_m^2 scratch slice per resident block.
  ASSERT_NO_FATAL_FAILURE(check_column_split(p, n, [&](index_t j) { return p.col_ptr[j + 1] - p.col_ptr[j]; }, what));
  const size64_t blocks = std::min<size64_t>(static_cast<size64_t>(p.long_cols.size()), kernels::isai_long_blocks);
  ASSERT_EQ(p.scratch_doubles(), blocks * p.max_long_m * p.max_long_m) << what;
}

}  // namespace

// ---- Pattern ------------------------------------------------------------------------------------

TEST(IsaiPatternCpu, TridiagonalPowersWidenTheBandByOne)
{
  // Tridiagonal LU: S(|L|^k) has the k subdiagonals below the diagonal, S(|U|^k) k superdiagonals.
  const index_t n = 9;
  const Csr A = band_lu(n, 1);
  for (Triangle tri : both_triangles)
    for (int k = 1; k <= 3; ++k) {
      const IsaiPattern p = pattern_of(A, tri, k);
      const std::string what = std::string(to_string(tri)) + " k=" + std::to_string(k);
      EXPECT_EQ(dense_of(p), bool_power(dense_pattern(A, tri), n, k)) << what;
      for (index_t i = 0; i < n; ++i) {
        const index_t lo = tri == Triangle::unit_lower ? std::max<index_t>(0, i - k) : i;
        const index_t hi = tri == Triangle::unit_lower ? i : std::min<index_t>(n - 1, i + k);
        std::vector<index_t> expect(static_cast<std::size_t>(hi - lo + 1));
        std::iota(expect.begin(), expect.end(), lo);
        EXPECT_EQ(std::vector<index_t>(p.col.begin() + p.row_ptr[i], p.col.begin() + p.row_ptr[i + 1]), expect)
            << what << " row " << i;
      }
      check_pattern_views(p, what);
      EXPECT_EQ(p.tri, tri);
      EXPECT_EQ(p.power, k);
      EXPECT_EQ(p.n, n);
    }
}

TEST(IsaiPatternCpu, RandomPatternsMatchDenseBooleanPowers)
{
  const std::pair<std::string, Csr> cases[] = {
      {"random n=70", random_lu(70, 2, 6)},
      {"random+hubs n=120", random_lu(120, 2, 5, 50, 36)},  // columns longer than 32 at k = 1
      {"band 3 n=40", band_lu(40, 3)},
  };
  for (const auto& [label, A] : cases)
    for (Triangle tri : both_triangles)
      for (int k = 1; k <= 4; ++k) {
        const std::string what = label + " " + to_string(tri) + " k=" + std::to_string(k);
        const IsaiPattern p = pattern_of(A, tri, k);
        ASSERT_EQ(dense_of(p), bool_power(dense_pattern(A, tri), A.n, k)) << what;
        check_pattern_views(p, what);
        if (label.find("hubs") != std::string::npos) {
          EXPECT_FALSE(p.long_cols.empty()) << what;
          EXPECT_FALSE(p.short_cols.empty()) << what;
        }
      }
}

TEST(IsaiPatternCpu, KEqualOneIsThePatternOfT)
{
  const Csr A = random_lu(200, 3, 10, 60, 40);
  for (Triangle tri : both_triangles) {
    const IsaiPattern p = pattern_of(A, tri, 1);
    for (index_t i = 0; i < A.n; ++i) {
      std::vector<index_t> expect;
      for (index_t q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q)
        if (in_triangle(tri, i, A.col[q])) expect.push_back(A.col[q]);
      EXPECT_EQ(std::vector<index_t>(p.col.begin() + p.row_ptr[i], p.col.begin() + p.row_ptr[i + 1]), expect)
          << to_string(tri) << " row " << i;
    }
  }
}

TEST(IsaiPatternCpu, EmptyMatrix)
{
  const index_t row_ptr[] = {0};
  for (Triangle tri : both_triangles) {
    const IsaiPattern p = isai_pattern(tri, 0, row_ptr, nullptr, 2);
    EXPECT_EQ(p.nnz(), 0);
    EXPECT_EQ(p.scratch_doubles(), 0);
    EXPECT_TRUE(p.short_cols.empty() && p.long_cols.empty());
    check_pattern_views(p, "n=0");
    kc::isai_generate(p, kernels::CsrView<const double>{0, row_ptr, nullptr, nullptr}, nullptr);  // nothing to do
  }
}

TEST(IsaiPatternCpu, RejectsBadPowerAndPatterns)
{
  const Csr A = band_lu(5, 1);
  for (Triangle tri : both_triangles) {
    expect_invalid([&] { pattern_of(A, tri, 0); }, "power");
    expect_invalid([&] { pattern_of(A, tri, -2); }, "power");
    expect_invalid([&] { isai_pattern(tri, -1, A.row_ptr.data(), A.col.data(), 1); }, "negative dimension");
  }
  // Row 3 without its diagonal: (3, 2) (3, 4).
  {
    const std::vector<index_t> rp{0, 2, 5, 8, 10, 12}, col{0, 1, 0, 1, 2, 1, 2, 3, 2, 4, 3, 4};
    expect_invalid([&] { isai_pattern(Triangle::upper, 5, rp.data(), col.data(), 1); }, "row 3 has no diagonal");
  }
  // Row 2 unsorted, then duplicated, then out of range.
  {
    const std::vector<index_t> rp{0, 2, 5, 8, 11, 13};
    std::vector<index_t> col{0, 1, 0, 1, 2, 2, 1, 3, 2, 3, 4, 3, 4};
    const auto analyse = [&] { isai_pattern(Triangle::unit_lower, 5, rp.data(), col.data(), 1); };
    expect_invalid(analyse, "row 2: columns not sorted");
    col[5] = 1, col[6] = 2, col[7] = 2;  // row 2: 1 2 2
    expect_invalid(analyse, "row 2: columns not sorted or not unique");
    col[7] = 5;  // row 2: 1 2 5
    expect_invalid(analyse, "row 2: column 5 out of range");
    col[7] = 3;  // row 2: 1 2 3, the valid pattern again
    EXPECT_NO_THROW(isai_pattern(Triangle::unit_lower, 5, rp.data(), col.data(), 1));
  }
}

// ---- Generation ---------------------------------------------------------------------------------

TEST(IsaiGenerateCpu, HandValuesOnBidiagonalFactors)
{
  // L = [1; a 1; 0 b 1]: k = 1 gives M(1,0) = -a, M(2,1) = -b; k = 2 adds M(2,0) = a b.
  // U = [u0 v0 0; 0 u1 v1; 0 0 u2]: k = 1 gives M(i,i) = 1/u_i, M(i,i+1) = -v_i / (u_i u_{i+1}).
  const Csr A = band_lu(3, 1);  // rows {0,1}, {0,1,2}, {1,2}
  const double a = A.val[2], b = A.val[5], u0 = A.val[0], v0 = A.val[1], u1 = A.val[3], v1 = A.val[4], u2 = A.val[6];
  const auto entry = [](const IsaiPattern& p, const std::vector<double>& m, index_t i, index_t j) {
    for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e)
      if (p.col[e] == j) return m[e];
    ADD_FAILURE() << "(" << i << ", " << j << ") not in the pattern";
    return nan_v;
  };
  // U's values take a few roundings: a relative 1e-14 (about 50 ulp) bound.
  const auto near = [](double x, double ref) { EXPECT_NEAR(x, ref, 1e-14 * std::abs(ref)); };
  for (int k = 1; k <= 2; ++k) {
    const IsaiPattern pl = pattern_of(A, Triangle::unit_lower, k);
    const auto ml = generate(A, pl);
    for (index_t i = 0; i < 3; ++i) EXPECT_EQ(entry(pl, ml, i, i), 1.0);
    EXPECT_EQ(entry(pl, ml, 1, 0), -a);
    EXPECT_EQ(entry(pl, ml, 2, 1), -b);
    EXPECT_EQ(pl.nnz(), k == 1 ? 5 : 6);
    if (k == 2) {
      EXPECT_EQ(entry(pl, ml, 2, 0), a * b);  // 0 - b * (-a): one rounding, as a * b
    }

    const IsaiPattern pu = pattern_of(A, Triangle::upper, k);
    const auto mu = generate(A, pu);
    near(entry(pu, mu, 0, 0), 1 / u0);
    near(entry(pu, mu, 1, 1), 1 / u1);
    near(entry(pu, mu, 2, 2), 1 / u2);
    near(entry(pu, mu, 0, 1), -v0 / (u0 * u1));
    near(entry(pu, mu, 1, 2), -v1 / (u1 * u2));
    if (k == 2) near(entry(pu, mu, 0, 2), v0 * v1 / (u0 * u1 * u2));
  }
}

TEST(IsaiGenerateCpu, ResidualVanishesOnPatternShortColumns)
{
  for (index_t n : {1, 7, 400})
    for (int k = 1; k <= 3; ++k) {
      const Csr A = random_lu(n, 2, 6);
      for (Triangle tri : both_triangles) {
        const std::string what = "n=" + std::to_string(n) + " " + to_string(tri) + " k=" + std::to_string(k);
        const IsaiPattern p = pattern_of(A, tri, k);
        const auto m = generate(A, p);
        ASSERT_EQ(count_non_finite(m), 0u) << what;
        EXPECT_LE(max_pattern_residual(A, tri, p, m), 1e-12) << what;
      }
    }
}

TEST(IsaiGenerateCpu, ResidualVanishesOnPatternWithLongColumns)
{
  struct Case {
    std::string label;
    Csr A;
    int k;
  };
  const Case cases[] = {
      {"random+hubs n=600 k=1", random_lu(600, 2, 6, 90, 45), 1},
      {"random+hubs n=600 k=2", random_lu(600, 2, 6, 90, 45), 2},
      {"random+hubs n=600 k=3", random_lu(600, 2, 6, 90, 45), 3},
      {"band 40 n=150 k=1", band_lu(150, 40), 1},
      {"band 40 n=150 k=2", band_lu(150, 40), 2},
      {"wide stencil n=500 k=3", random_lu(500, 4, 20), 3},
  };
  for (const auto& c : cases)
    for (Triangle tri : both_triangles) {
      const std::string what = c.label + " " + to_string(tri);
      const IsaiPattern p = pattern_of(c.A, tri, c.k);
      ASSERT_FALSE(p.long_cols.empty()) << what;
      ASSERT_FALSE(p.short_cols.empty()) << what;
      const auto m = generate(c.A, p);
      ASSERT_EQ(count_non_finite(m), 0u) << what;
      EXPECT_LE(max_pattern_residual(c.A, tri, p, m), 1e-12) << what;
    }
}

TEST(IsaiGenerateCpu, ClosedPatternsGiveTheExactInverse)
{
  // Block-diagonal T (blocks up to 40 > 32): S(|T|^k) is the blocks' triangles for every k and
  // M = T^{-1}. Tridiagonal with k = n - 1 and a dense matrix with k = 1: S is the full triangle.
  struct Case {
    std::string label;
    Csr A;
    std::vector<int> ks;
  };
  const Case cases[] = {
      {"block diagonal", block_diag_lu({1, 2, 3, 7, 16, 32, 33, 40, 5}), {1, 2, 3}},
      {"tridiagonal n=12", band_lu(12, 1), {11, 20}},
      {"dense n=45", band_lu(45, 44), {1, 2}},
  };
  for (const auto& c : cases)
    for (Triangle tri : both_triangles)
      for (int k : c.ks) {
        const std::string what = c.label + " " + to_string(tri) + " k=" + std::to_string(k);
        const std::size_t n = static_cast<std::size_t>(c.A.n);
        const IsaiPattern p = pattern_of(c.A, tri, k);
        const auto m = generate(c.A, p);
        const auto Tinv = dense_triangle_inverse(dense_triangle(c.A, tri), c.A.n, tri);
        // S is closed: T^{-1} vanishes exactly outside it (exact zeros of the substitution).
        const BoolMatrix S = dense_of(p);
        for (std::size_t e = 0; e < n * n; ++e)
          if (!S[e]) {
            ASSERT_EQ(Tinv[e], 0.0) << what << " entry " << e / n << ", " << e % n;
          }
        // M == T^{-1} on S, column-normwise.
        std::vector<double> col_diff(n, 0.0), col_scale(n, 0.0);
        for (index_t i = 0; i < c.A.n; ++i)
          for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e) {
            const std::size_t j = static_cast<std::size_t>(p.col[e]);
            col_diff[j] = std::max(col_diff[j], std::abs(m[e] - Tinv[i * n + j]));
            col_scale[j] = std::max(col_scale[j], std::abs(Tinv[i * n + j]));
          }
        for (std::size_t j = 0; j < n; ++j) ASSERT_LE(col_diff[j], 1e-12 * col_scale[j]) << what << " column " << j;
      }
}

TEST(IsaiGenerateCpu, UnitLowerIgnoresLuDiagonal)
{
  Csr A = random_lu(300, 3, 8, 100, 40);
  const IsaiPattern p = pattern_of(A, Triangle::unit_lower, 2);
  const auto m1 = generate(A, p);
  for (index_t i = 0; i < A.n; ++i)
    for (index_t q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q)
      if (A.col[q] == i) A.val[q] = uniform(-5.0, 5.0);
  EXPECT_EQ(generate(A, p), m1);
}

// ---- Triangle SpMV ------------------------------------------------------------------------------

TEST(IsaiTriangleSpmvCpu, MatchesDenseProduct)
{
  for (const Csr& A : {random_lu(1, 1, 1), random_lu(7, 2, 3), random_lu(300, 3, 10, 100, 40)})
    for (Triangle tri : both_triangles) {
      const std::size_t n = static_cast<std::size_t>(A.n);
      const auto x = random_vector(A.n);
      const auto T = dense_triangle(A, tri);
      const auto scale = abs_triangle_times(A, tri, x);
      std::vector<double> y(n, nan_v);
      kc::triangle_spmv(tri, A.view(), x.data(), y.data());
      for (std::size_t i = 0; i < n; ++i) {
        double ref = 0.0;
        for (std::size_t c = 0; c < n; ++c) ref += T[i * n + c] * x[c];
        ASSERT_LE(std::abs(y[i] - ref), 1e-12 * scale[i]) << to_string(tri) << " n=" << n << " row " << i;
      }
    }
}
