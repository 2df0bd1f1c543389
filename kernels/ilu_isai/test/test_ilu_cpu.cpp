// ILU(0) schedule and CPU references: hand-checked level sets (diagonal, tridiagonal, a 3 x 2
// grid), stencil levels against their closed form, the level definition on random patterns,
// rejected patterns naming the row; the factorisation against independent products (exact LU
// on closed patterns, (L U)(i, j) = a_ij on the pattern of stencils and random BSR expansions);
// the triangular solves by multiplying back, in place too; bad pivots reported by row.
#include "kernels/ilu_isai/ilu.hpp"
#include "kernels/ilu_isai/test/ilu_test_util.hpp"
#include "kernels/ilu_isai/test/test_checks.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

using namespace blockres;
using namespace blockres::test_ilu;
using blockres::test_checks::expect_invalid;
using kernels::IluSchedule;
using kernels::ilu_schedule;
namespace kc = blockres::kernels::cpu;

namespace {

IluSchedule schedule_of(const Csr& A) { return ilu_schedule(A.n, A.row_ptr.data(), A.col.data()); }

// Level of every row, read back from a schedule's (ptr, rows) pair; -1 for a row listed nowhere.
std::vector<index_t> levels_of(index_t n, const std::vector<index_t>& ptr, const std::vector<index_t>& rows)
{
  std::vector<index_t> level(static_cast<std::size_t>(n), -1);
  for (std::size_t l = 0; l + 1 < ptr.size(); ++l)
    for (index_t q = ptr[l]; q < ptr[l + 1]; ++q) level[rows[q]] = static_cast<index_t>(l);
  return level;
}

// Structural checks of one level set: ptr starts at 0 and ends at n, no empty level, each level
// ascending, every row exactly once.
void expect_well_formed(index_t n, const std::vector<index_t>& ptr, const std::vector<index_t>& rows,
                        const std::string& what)
{
  ASSERT_FALSE(ptr.empty()) << what;
  EXPECT_EQ(ptr.front(), 0) << what;
  EXPECT_EQ(ptr.back(), n) << what;
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(n)) << what;
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  for (std::size_t l = 0; l + 1 < ptr.size(); ++l) {
    EXPECT_LT(ptr[l], ptr[l + 1]) << what << " level " << l << " empty";
    for (index_t q = ptr[l]; q < ptr[l + 1]; ++q) {
      ASSERT_TRUE(rows[q] >= 0 && rows[q] < n) << what;
      ++seen[rows[q]];
      if (q > ptr[l]) {
        EXPECT_LT(rows[q - 1], rows[q]) << what << " level " << l << " not ascending";
      }
    }
  }
  for (index_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << what << " row " << i;
}

// The level definition checked row by row: level(i) = 1 + max level(k) over the dependencies k
// of row i (strictly lower columns for L, strictly upper for U), 0 without any.
void expect_levels_defined(const Csr& A, const IluSchedule& s, const std::string& what)
{
  expect_well_formed(A.n, s.lower_level_ptr, s.lower_rows, what + " lower");
  expect_well_formed(A.n, s.upper_level_ptr, s.upper_rows, what + " upper");
  const auto lower = levels_of(A.n, s.lower_level_ptr, s.lower_rows);
  const auto upper = levels_of(A.n, s.upper_level_ptr, s.upper_rows);
  for (index_t i = 0; i < A.n; ++i) {
    index_t lo = -1, up = -1;
    for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      const index_t j = A.col[p];
      if (j < i) lo = std::max(lo, lower[j]);
      if (j > i) up = std::max(up, upper[j]);
    }
    ASSERT_EQ(lower[i], lo + 1) << what << " row " << i;
    ASSERT_EQ(upper[i], up + 1) << what << " row " << i;
    ASSERT_EQ(s.diag[i], A.find(i, i)) << what << " row " << i;
  }
}

// The general sparse matrices the factorisation and solves are checked on.
std::vector<std::pair<std::string, Csr>> sparse_matrices()
{
  std::vector<std::pair<std::string, Csr>> out;
  out.emplace_back("2D 5-point 7x9", dominant(stencil_2d_pattern(7, 9)));
  out.emplace_back("2D 5-point 31x33", dominant(stencil_2d_pattern(31, 33)));
  out.emplace_back("3D 7-point 9x7x5", dominant(stencil_3d_pattern(9, 7, 5)));
  out.emplace_back("random scalar 501", dominant(random_pattern(501, 4)));
  for (int bs = 1; bs <= 4; ++bs) {
    out.emplace_back("random BSR bs " + std::to_string(bs), dominant(random_bsr_pattern(203, bs, 3)));
    out.emplace_back("banded random BSR bs " + std::to_string(bs), dominant(random_bsr_pattern(301, bs, 4, 6)));
  }
  return out;
}

Csr factored(const Csr& A, const IluSchedule& s, int* info)
{
  Csr F = A;
  *info = kc::ilu0_factor(s, F.view());
  return F;
}

}  // namespace

TEST(IluScheduleCpu, DiagonalHasOneLevelTridiagonalHasN)
{
  const Csr D = diagonal_pattern(5);
  const IluSchedule sd = schedule_of(D);
  EXPECT_EQ(sd.n, 5);
  EXPECT_EQ(sd.lower_levels(), 1);
  EXPECT_EQ(sd.upper_levels(), 1);
  EXPECT_EQ(sd.lower_rows, (std::vector<index_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(sd.upper_rows, (std::vector<index_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(sd.diag, (std::vector<index_t>{0, 1, 2, 3, 4}));

  // Tridiagonal: row i waits for row i-1 (L) and row i+1 (U): one row per level.
  const index_t n = 6;
  const IluSchedule st = schedule_of(tridiagonal_pattern(n));
  EXPECT_EQ(st.lower_levels(), n);
  EXPECT_EQ(st.upper_levels(), n);
  EXPECT_EQ(st.lower_level_ptr, (std::vector<index_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(st.upper_level_ptr, (std::vector<index_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(st.lower_rows, (std::vector<index_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(st.upper_rows, (std::vector<index_t>{5, 4, 3, 2, 1, 0}));
  // Rows {0,1}, {0,1,2}, ..., {4,5}: diagonal at 0, 3, 6, 9, 12, 15.
  EXPECT_EQ(st.diag, (std::vector<index_t>{0, 3, 6, 9, 12, 15}));
}

TEST(IluScheduleCpu, HandCheckedThreeByTwoGrid)
{
  // 5-point stencil on a 3 x 2 grid, row x + 3 y:   3 4 5
  //                                                 0 1 2
  // Rows: 0 {0,1,3}  1 {0,1,2,4}  2 {1,2,5}  3 {0,3,4}  4 {1,3,4,5}  5 {2,4,5}.
  // L levels x + y: 0 | 1 3 | 2 4 | 5;  U levels (2 - x) + (1 - y): 5 | 2 4 | 1 3 | 0.
  const Csr A = stencil_2d_pattern(3, 2);
  ASSERT_EQ(A.col, (std::vector<index_t>{0, 1, 3, 0, 1, 2, 4, 1, 2, 5, 0, 3, 4, 1, 3, 4, 5, 2, 4, 5}));
  const IluSchedule s = schedule_of(A);
  EXPECT_EQ(s.diag, (std::vector<index_t>{0, 4, 8, 11, 15, 19}));
  EXPECT_EQ(s.lower_level_ptr, (std::vector<index_t>{0, 1, 3, 5, 6}));
  EXPECT_EQ(s.lower_rows, (std::vector<index_t>{0, 1, 3, 2, 4, 5}));
  EXPECT_EQ(s.upper_level_ptr, (std::vector<index_t>{0, 1, 3, 5, 6}));
  EXPECT_EQ(s.upper_rows, (std::vector<index_t>{5, 2, 4, 1, 3, 0}));
}

TEST(IluScheduleCpu, StencilLevelsAreGridDiagonals)
{
  // On an nx x ny x nz stencil the L level of (x, y, z) is x + y + z, the U level the distance
  // to the far corner.
  for (auto [nx, ny, nz] : {std::tuple{7, 5, 1}, std::tuple{1, 9, 1}, std::tuple{4, 3, 6}}) {
    const Csr A = stencil_3d_pattern(nx, ny, nz);
    const IluSchedule s = schedule_of(A);
    const std::string what = std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
    EXPECT_EQ(s.lower_levels(), nx + ny + nz - 2) << what;
    EXPECT_EQ(s.upper_levels(), nx + ny + nz - 2) << what;
    expect_well_formed(A.n, s.lower_level_ptr, s.lower_rows, what);
    expect_well_formed(A.n, s.upper_level_ptr, s.upper_rows, what);
    const auto lower = levels_of(A.n, s.lower_level_ptr, s.lower_rows);
    const auto upper = levels_of(A.n, s.upper_level_ptr, s.upper_rows);
    for (index_t z = 0; z < nz; ++z)
      for (index_t y = 0; y < ny; ++y)
        for (index_t x = 0; x < nx; ++x) {
          const index_t i = x + nx * (y + ny * z);
          EXPECT_EQ(lower[i], x + y + z) << what << " row " << i;
          EXPECT_EQ(upper[i], (nx - 1 - x) + (ny - 1 - y) + (nz - 1 - z)) << what << " row " << i;
        }
  }
}

TEST(IluScheduleCpu, RandomPatternsFollowTheLevelDefinition)
{
  expect_levels_defined(random_pattern(1, 0), schedule_of(random_pattern(1, 0)), "n 1");
  for (int rep = 0; rep < 3; ++rep) {
    const Csr R = random_pattern(400, 5);
    expect_levels_defined(R, schedule_of(R), "random scalar");
    for (int bs = 1; bs <= 4; ++bs) {
      const Csr B = random_bsr_pattern(97, bs, 3);
      expect_levels_defined(B, schedule_of(B), "random BSR bs " + std::to_string(bs));
      const Csr C = random_bsr_pattern(97, bs, 3, 4);
      expect_levels_defined(C, schedule_of(C), "banded BSR bs " + std::to_string(bs));
    }
  }
}

TEST(IluScheduleCpu, EmptyMatrix)
{
  const std::vector<index_t> row_ptr{0};
  const IluSchedule s = ilu_schedule(0, row_ptr.data(), nullptr);
  EXPECT_EQ(s.n, 0);
  EXPECT_EQ(s.lower_levels(), 0);
  EXPECT_EQ(s.upper_levels(), 0);
  EXPECT_TRUE(s.diag.empty());
  EXPECT_TRUE(s.lower_rows.empty());
  EXPECT_TRUE(s.upper_rows.empty());
}

TEST(IluScheduleCpu, InvalidPatternsNameTheRow)
{
  // Missing diagonal in row 17 of a tridiagonal pattern.
  Csr A = tridiagonal_pattern(20);
  {
    Csr B = A;
    B.col.erase(B.col.begin() + B.find(17, 17));
    for (index_t i = 18; i <= B.n; ++i) --B.row_ptr[i];
    expect_invalid([&] { schedule_of(B); }, "ILU(0): row 17 has no diagonal entry");
  }
  {  // Row 3 {2, 3, 4} -> {3, 2, 4}: unsorted.
    Csr B = A;
    std::swap(B.col[B.row_ptr[3]], B.col[B.row_ptr[3] + 1]);
    expect_invalid([&] { schedule_of(B); }, "row 3 has unsorted");
  }
  {  // Row 5 {4, 5, 6} -> {4, 5, 5}: duplicate.
    Csr B = A;
    B.col[B.row_ptr[5] + 2] = 5;
    expect_invalid([&] { schedule_of(B); }, "row 5 has unsorted or duplicate");
  }
  {  // Row 19 {18, 19} -> {18, 19, 20}: column n.
    Csr B = A;
    B.col.push_back(20);
    ++B.row_ptr[20];
    expect_invalid([&] { schedule_of(B); }, "row 19 has column 20 out of range");
  }
  {  // Row 0 {0, 1} -> {-1, 1}: negative column.
    Csr B = A;
    B.col[0] = -1;
    expect_invalid([&] { schedule_of(B); }, "row 0 has column -1 out of range");
  }
  {  // Decreasing row_ptr at row 8.
    Csr B = A;
    B.row_ptr[9] = B.row_ptr[8] - 1;
    expect_invalid([&] { schedule_of(B); }, "row 8 has a negative length");
  }
  expect_invalid([&] { ilu_schedule(-1, A.row_ptr.data(), A.col.data()); }, "negative matrix size");
}

TEST(Ilu0Cpu, ClosedPatternsGiveTheExactLu)
{
  // No fill outside these patterns, so ILU(0) is the LU factorisation: L U = A everywhere.
  std::vector<std::pair<std::string, Csr>> cases;
  for (index_t n : {1, 2, 9, 24}) cases.emplace_back("dense " + std::to_string(n), dominant(dense_pattern(n)));
  cases.emplace_back("tridiagonal 57", dominant(tridiagonal_pattern(57)));
  cases.emplace_back("block diagonal", dominant(block_diagonal_pattern({1, 3, 2, 5, 4, 1})));
  for (int bs = 1; bs <= 4; ++bs)  // BSR with only diagonal blocks: block-diagonal scalar pattern
    cases.emplace_back("BSR diagonal blocks bs " + std::to_string(bs), dominant(random_bsr_pattern(11, bs, 0)));
  for (const auto& [what, A] : cases) {
    const IluSchedule s = schedule_of(A);
    int info = -1;
    const Csr F = factored(A, s, &info);
    EXPECT_EQ(info, 0) << what;
    EXPECT_LE(full_residual(A, F), 1e-12) << what;
  }
}

TEST(Ilu0Cpu, GeneralPatternsReproduceAOnThePattern)
{
  for (const auto& [what, A] : sparse_matrices()) {
    const IluSchedule s = schedule_of(A);
    int info = -1;
    const Csr F = factored(A, s, &info);
    EXPECT_EQ(info, 0) << what;
    EXPECT_LE(pattern_residual(A, F), 1e-12) << what;
  }
  // These patterns are not closed: L U has fill outside the pattern (the test above is not the
  // exact-LU test in disguise).
  const Csr A = dominant(stencil_2d_pattern(5, 4));
  int info = -1;
  const Csr F = factored(A, schedule_of(A), &info);
  EXPECT_GT(full_residual(A, F), 1e-3);
}

TEST(Ilu0Cpu, TriangularSolvesInvertTheFactors)
{
  for (const auto& [what, A] : sparse_matrices()) {
    const IluSchedule s = schedule_of(A);
    int info = -1;
    const Csr F = factored(A, s, &info);
    ASSERT_EQ(info, 0) << what;
    const std::vector<double> b = random_vector(A.n);
    const double nan_v = std::numeric_limits<double>::quiet_NaN();

    std::vector<double> y(b.size(), nan_v);
    kc::ilu0_lower_solve(s, F.cview(), b.data(), y.data());
    EXPECT_LE(rel_diff(lower_times(F, y), b), 1e-12) << what << " L";
    std::vector<double> y_in_place = b;  // x aliasing b: the same operations, the same bits
    kc::ilu0_lower_solve(s, F.cview(), y_in_place.data(), y_in_place.data());
    EXPECT_EQ(y_in_place, y) << what << " L in place";

    std::vector<double> x(b.size(), nan_v);
    kc::ilu0_upper_solve(s, F.cview(), b.data(), x.data());
    EXPECT_LE(rel_diff(upper_times(F, x), b), 1e-12) << what << " U";
    std::vector<double> x_in_place = b;
    kc::ilu0_upper_solve(s, F.cview(), x_in_place.data(), x_in_place.data());
    EXPECT_EQ(x_in_place, x) << what << " U in place";
  }
}

TEST(Ilu0Cpu, BadPivotsReportTheFirstRow)
{
  {
    // Tridiagonal, off-diagonals 1, diagonal (2, 2.5, 2.5, 0.5, 2): u_00 = 2, l = 1/2 and
    // u_ii = a_ii - 1/2 give u_11 = u_22 = 2, u_33 = 0 (exact in binary): info = 3 + 1, although
    // row 4 (u_44 = 2 - 1/0) is bad too. Rows 0..2 are still correct.
    Csr A = tridiagonal_pattern(5);
    const double d[] = {2, 2.5, 2.5, 0.5, 2};
    for (index_t i = 0; i < A.n; ++i)
      for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) A.val[p] = A.col[p] == i ? d[i] : 1.0;
    const IluSchedule s = schedule_of(A);
    int info = -1;
    const Csr F = factored(A, s, &info);
    EXPECT_EQ(info, 4);
    EXPECT_EQ(F.at(3, 3), 0.0);
    for (index_t i = 0; i < 3; ++i) EXPECT_EQ(F.at(i, i), 2.0) << "row " << i;
  }
  {
    // 2D stencil with rows nx - 1 (L level nx - 1) and nx (L level 1) zeroed: both pivots are
    // exactly 0; the first row is nx - 1 although row nx comes first in level order.
    const index_t nx = 9, ny = 6;
    Csr A = dominant(stencil_2d_pattern(nx, ny));
    for (index_t r : {nx - 1, nx})
      for (index_t p = A.row_ptr[r]; p < A.row_ptr[r + 1]; ++p) A.val[p] = 0.0;
    int info = -1;
    factored(A, schedule_of(A), &info);
    EXPECT_EQ(info, nx);
  }
  {
    // Zero a_00: the very first pivot.
    Csr A = dominant(random_pattern(30, 3));
    A.val[A.find(0, 0)] = 0.0;
    int info = -1;
    factored(A, schedule_of(A), &info);
    EXPECT_EQ(info, 1);
  }
  {
    // A NaN (and, separately, an infinity) on the diagonal of row 6 of a diagonal matrix.
    for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
      Csr A = dominant(diagonal_pattern(10));
      A.val[6] = bad;
      int info = -1;
      factored(A, schedule_of(A), &info);
      EXPECT_EQ(info, 7);
    }
  }
}

TEST(Ilu0Cpu, CheckPivotsOfFactorsGivesTheFactorisationsInfo)
{
  // ilu0_check_pivots on finished factors (what the cuSPARSE path checks) reports the row ilu0_factor
  // reported while factoring: dominant matrices (0) and the bad pivots above, each at its own row.
  std::vector<Csr> cases{dominant(stencil_2d_pattern(7, 5)), dominant(random_pattern(101, 4)),
                         dominant(random_bsr_pattern(55, 3, 3))};
  {
    Csr A = tridiagonal_pattern(5);
    const double d[] = {2, 2.5, 2.5, 0.5, 2};
    for (index_t i = 0; i < A.n; ++i)
      for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) A.val[p] = A.col[p] == i ? d[i] : 1.0;
    cases.push_back(A);
  }
  {
    Csr A = dominant(stencil_2d_pattern(9, 6));  // row 17 all zero: its l_ik are 0, so u_17,17 = 0 exactly
    for (index_t p = A.row_ptr[17]; p < A.row_ptr[18]; ++p) A.val[p] = 0.0;
    cases.push_back(A);
  }
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()}) {
    Csr A = dominant(stencil_2d_pattern(9, 6));
    A.val[A.find(17, 17)] = bad;
    cases.push_back(A);
  }
  int bad_cases = 0;
  for (const Csr& A : cases) {
    const IluSchedule s = schedule_of(A);
    int info = -1;
    const Csr F = factored(A, s, &info);
    EXPECT_EQ(kc::ilu0_check_pivots(F.n, s.diag.data(), F.val.data()), info);
    bad_cases += info != 0;
  }
  EXPECT_EQ(bad_cases, 4);  // the tridiagonal case, the zero row and the two poisoned pivots
  EXPECT_EQ(kc::ilu0_check_pivots(0, nullptr, nullptr), 0);
}

TEST(Ilu0Cpu, EmptyMatrixAndMismatchedSchedule)
{
  Csr E;  // n = 0
  const IluSchedule s0 = schedule_of(E);
  EXPECT_EQ(kc::ilu0_factor(s0, E.view()), 0);
  EXPECT_NO_THROW(kc::ilu0_lower_solve(s0, E.cview(), nullptr, nullptr));
  EXPECT_NO_THROW(kc::ilu0_upper_solve(s0, E.cview(), nullptr, nullptr));

  Csr A = dominant(tridiagonal_pattern(4));
  std::vector<double> b(4, 1.0), x(4);
  EXPECT_THROW(kc::ilu0_factor(s0, A.view()), std::invalid_argument);
  EXPECT_THROW(kc::ilu0_lower_solve(s0, A.cview(), b.data(), x.data()), std::invalid_argument);
  EXPECT_THROW(kc::ilu0_upper_solve(s0, A.cview(), b.data(), x.data()), std::invalid_argument);
}
