// Batched LU CPU reference: hand-computed factors (interchanges, first-index ties after a swap),
// every size 1..32 and a spread up to 512 in variable and uniform batches of well and ill
// conditioned blocks (backward error, P A = L U, naive long-double solve), exactly and numerically
// singular and non-finite blocks reported in info for the right block only, argument checks.
#include "kernels/batched/batched_lu.hpp"
#include "kernels/batched/test/batched_lu_test_util.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

using namespace blockres;
using namespace blockres::test_lu;
namespace cpu = blockres::kernels::cpu;

namespace {

const double eps = DBL_EPSILON;
const double nan_v = std::numeric_limits<double>::quiet_NaN();
const std::vector<Kind> solvable{Kind::random,      Kind::well_conditioned, Kind::zero_diagonal,
                                 Kind::ill_conditioned, Kind::row_graded,   Kind::col_graded};

struct Result {
  std::vector<double> lu, x, rhs;
  std::vector<index_t> piv;
  std::vector<int> info;
};

Result factor_and_solve(const Batch& B)
{
  Result r;
  r.lu = B.a;
  r.piv.assign(B.rows(), -1);
  r.info.assign(B.count(), -7);
  cpu::lu_factor(B.layout(), r.lu.data(), r.piv.data(), r.info.data());
  r.rhs = random_rhs(B);
  r.x.assign(B.rows(), nan_v);
  cpu::lu_solve(B.layout(), r.lu.data(), r.piv.data(), r.rhs.data(), r.x.data());
  return r;
}

// Every block of a batch of non-singular kinds: info 0, pivots in range, P A = L U, backward
// error <= 100 n eps, and the naive solve agrees on the well-conditioned (cond < 4) blocks.
void check_solvable(const Batch& B, const Result& r)
{
  for (index_t b = 0; b < B.count(); ++b) {
    const int n = B.sizes[b];
    const auto what = ::testing::Message() << "block " << b << " n " << n << " " << name(B.kinds[b]);
    ASSERT_EQ(r.info[b], 0) << what;
    const index_t* p = r.piv.data() + B.row_off[b];
    for (int k = 0; k < n; ++k) ASSERT_TRUE(p[k] >= k && p[k] < n) << what << " piv[" << k << "] " << p[k];
    const double* a = B.block(B.a, b);
    EXPECT_LE(factorization_error(n, a, B.block(r.lu, b), p), 100 * n * eps) << what;
    const double* x = r.x.data() + B.row_off[b];
    const double* rhs = r.rhs.data() + B.row_off[b];
    EXPECT_LE(backward_error(n, a, x, rhs), 100 * n * eps) << what;
    if (B.kinds[b] == Kind::well_conditioned) {
      const auto xr = naive_solve(n, a, rhs);
      // forward error <= cond * (both backward errors), cond < 4
      EXPECT_LE(rel_diff(n, x, xr.data()), 1000 * n * eps) << what;
    }
    if (B.kinds[b] == Kind::zero_diagonal && n > 1) {
      EXPECT_NE(p[0], 0) << what;  // a_00 = 0 must be swapped away
    }
  }
  // Gaps between blocks (variable layouts) are never written.
  for (index_t b = 0; b < B.count(); ++b)
    for (size64_t e = B.mat_off[b] + size64_t(B.sizes[b]) * B.sizes[b]; e < B.mat_off[b + 1]; ++e)
      ASSERT_EQ(r.lu[e], sentinel);
}

}  // namespace

TEST(BatchedLuCpu, HandComputedFactors)
{
  // Step 0 takes row 2 (|4|); step 1 compares 0.75 (row 1) with 1 (row 0, now at position 2).
  // Second block: step 0 swaps rows 0 and 2; step 1 then ties |-3| (row 1, position 1) with |3|
  // (row 0, now position 2): the first position wins, as idamax after the interchange.
  std::vector<double> a{0, 1, 2, 1, 0, 3, 4, -3, 8,  //
                        1, 4, 1, 0, -3, 2, 2, 2, 1};
  const std::vector<index_t> row_off{0, 3, 6};
  const std::vector<size64_t> mat_off{0, 9, 18};
  kernels::BatchLayout L;
  L.count = 2, L.max_size = 3, L.row_off = row_off.data(), L.mat_off = mat_off.data();
  std::vector<index_t> piv(6, -1);
  std::vector<int> info(2, -7);
  cpu::lu_factor(L, a.data(), piv.data(), info.data());
  EXPECT_EQ(info, (std::vector<int>{0, 0}));
  EXPECT_EQ(piv, (std::vector<index_t>{2, 2, 2, 2, 1, 2}));
  EXPECT_EQ(a, (std::vector<double>{4, -3, 8, 0, 1, 2, 0.25, 0.75, -0.5,  //
                                    2, 2, 1, 0, -3, 2, 0.5, -1, 2.5}));
  // A x = b with x = (1, -2, 3) for each block.
  const std::vector<double> b{4, 10, 34, -4, 12, 1};
  std::vector<double> x(6, nan_v);
  cpu::lu_solve(L, a.data(), piv.data(), b.data(), x.data());
  EXPECT_EQ(x, (std::vector<double>{1, -2, 3, 1, -2, 3}));
}

TEST(BatchedLuCpu, EverySizeUpTo32InOneVariableBatch)
{
  std::vector<int> sizes;
  std::vector<Kind> kinds;
  for (int rep = 0; rep < 2; ++rep)
    for (int n = 1; n <= 32; ++n) {
      sizes.push_back(n);
      kinds.push_back(solvable[(n + rep * 3) % solvable.size()]);
    }
  const Batch B = make_batch(sizes, kinds, false, 3);
  check_solvable(B, factor_and_solve(B));
}

TEST(BatchedLuCpu, SpreadUpTo512InOneVariableBatch)
{
  const std::vector<int> sizes{33, 47, 64, 100, 128, 255, 256, 333, 512, 1, 17, 200};
  std::vector<Kind> kinds;
  for (std::size_t i = 0; i < sizes.size(); ++i) kinds.push_back(solvable[i % solvable.size()]);
  const Batch B = make_batch(sizes, kinds, false, 1);
  check_solvable(B, factor_and_solve(B));
}

TEST(BatchedLuCpu, UniformBatchesOfEveryKind)
{
  for (int n : {1, 2, 5, 16, 31, 32, 33, 64, 129}) {
    const Batch B = make_batch(std::vector<int>(2 * solvable.size() + 1, n), solvable, true);
    check_solvable(B, factor_and_solve(B));
  }
}

TEST(BatchedLuCpu, ExactlySingularBlocksAreReportedForThatBlockOnly)
{
  // Interleave singular blocks (zero column, duplicated row) with good ones, sizes 2..512.
  std::vector<int> sizes;
  std::vector<Kind> kinds;
  for (int n : {2, 3, 8, 17, 32, 33, 64, 150, 512}) {
    for (Kind k : {Kind::random, Kind::zero_column, Kind::well_conditioned, Kind::duplicate_row}) {
      sizes.push_back(n);
      kinds.push_back(k);
    }
  }
  const Batch B = make_batch(sizes, kinds, false);
  Result r;
  r.lu = B.a;
  r.piv.assign(B.rows(), -1);
  r.info.assign(B.count(), -7);
  cpu::lu_factor(B.layout(), r.lu.data(), r.piv.data(), r.info.data());
  for (index_t b = 0; b < B.count(); ++b) {
    const int n = B.sizes[b];
    const auto what = ::testing::Message() << "block " << b << " n " << n << " " << name(B.kinds[b]);
    if (B.kinds[b] == Kind::zero_column)
      EXPECT_EQ(r.info[b], n / 2 + 1) << what;  // column n/2 of the Schur complement stays exactly zero
    else if (B.kinds[b] == Kind::duplicate_row)
      EXPECT_GT(r.info[b], 0) << what;  // the copy is eliminated to an exact zero row
    else
      EXPECT_EQ(r.info[b], 0) << what;
    for (int k = 0; k < n; ++k) {  // even a failed block keeps its pivots inside the block
      const index_t p = r.piv[B.row_off[b] + k];
      ASSERT_TRUE(p >= k && p < n) << what;
    }
  }
}

TEST(BatchedLuCpu, NumericallySingularAndNonFiniteBlocks)
{
  // Block sizes 4 and 40: diag(1, 1, t, 1, ...) with t at position 2, so info is 3 exactly when
  // |t| <= n eps max|A| (max|A| = 1). Then NaN, Inf and all-zero blocks.
  struct Case {
    int n;
    double t;
    int info;
  };
  const std::vector<Case> cases{{4, 1e-20, 3}, {4, 0.9 * 4 * eps, 3}, {4, 1.1 * 4 * eps, 0}, {4, 1e-13, 0},
                                {40, 0.9 * 40 * eps, 3}, {40, 1.1 * 40 * eps, 0}, {4, -0.0, 3}};
  std::vector<int> sizes;
  for (const auto& c : cases) sizes.push_back(c.n);
  for (int n : {4, 40}) sizes.insert(sizes.end(), {n, n, n});  // NaN, Inf, zero
  Batch B = make_batch(sizes, {Kind::random}, false);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    double* a = B.a.data() + B.mat_off[i];
    const int n = cases[i].n;
    std::fill(a, a + n * n, 0.0);
    for (int k = 0; k < n; ++k) a[k * n + k] = 1.0;
    a[2 * n + 2] = cases[i].t;
  }
  const index_t first_special = index_t(cases.size());
  for (int r = 0; r < 2; ++r) {
    const index_t b = first_special + 3 * r;
    const int n = B.sizes[b];
    B.a[B.mat_off[b] + 1 * n + 2] = nan_v;
    B.a[B.mat_off[b + 1] + 3 * n + 1] = std::numeric_limits<double>::infinity();
    std::fill(B.a.begin() + B.mat_off[b + 2], B.a.begin() + B.mat_off[b + 3], 0.0);
  }
  std::vector<double> lu = B.a;
  std::vector<index_t> piv(B.rows(), -1);
  std::vector<int> info(B.count(), -7);
  cpu::lu_factor(B.layout(), lu.data(), piv.data(), info.data());
  for (std::size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(info[i], cases[i].info) << "n " << cases[i].n << " t " << cases[i].t;
  for (int r = 0; r < 2; ++r) {
    const index_t b = first_special + 3 * r;
    EXPECT_GT(info[b], 0) << "NaN block n " << B.sizes[b];
    EXPECT_EQ(info[b + 1], 1) << "Inf block n " << B.sizes[b];  // n eps Inf: no pivot passes
    EXPECT_EQ(info[b + 2], 1) << "zero block n " << B.sizes[b];
  }
}

TEST(BatchedLuCpu, InvalidArgumentsThrow)
{
  std::vector<double> a(4, 1.0), x(2);
  std::vector<index_t> piv(2);
  std::vector<int> info(1);
  kernels::BatchLayout L;
  L.count = 1;
  L.uniform = 2;
  L.max_size = 2;
  EXPECT_NO_THROW(cpu::lu_factor(L, a.data(), piv.data(), info.data()));
  for (int bad : {0, -1, 513, 1000}) {
    kernels::BatchLayout M = L;
    M.uniform = 0;
    M.max_size = bad;
    const std::vector<index_t> ro{0, 2};
    const std::vector<size64_t> mo{0, 4};
    M.row_off = ro.data(), M.mat_off = mo.data();
    EXPECT_THROW(cpu::lu_factor(M, a.data(), piv.data(), info.data()), std::invalid_argument) << bad;
    EXPECT_THROW(cpu::lu_solve(M, a.data(), piv.data(), a.data(), x.data()), std::invalid_argument) << bad;
  }
  kernels::BatchLayout M = L;
  M.max_size = 3;  // uniform 2 but max_size 3
  EXPECT_THROW(cpu::lu_factor(M, a.data(), piv.data(), info.data()), std::invalid_argument);
  M = L;
  M.uniform = 0;  // variable without offsets
  EXPECT_THROW(cpu::lu_factor(M, a.data(), piv.data(), info.data()), std::invalid_argument);
  M = L;
  M.count = -1;
  EXPECT_THROW(cpu::lu_factor(M, a.data(), piv.data(), info.data()), std::invalid_argument);
  const std::vector<index_t> ro{0, 2};
  const std::vector<size64_t> mo{0, 4};
  M = L;
  M.uniform = 0, M.max_size = 1, M.row_off = ro.data(), M.mat_off = mo.data();  // block larger than max_size
  EXPECT_THROW(cpu::lu_factor(M, a.data(), piv.data(), info.data()), std::invalid_argument);
  M.count = 0;  // an empty batch is fine
  EXPECT_NO_THROW(cpu::lu_factor(M, a.data(), piv.data(), info.data()));
}

// lu_inverse (one block): column j is lu_solve's x for b = e_j, bit for bit; A inv = I to the
// conditioning (well-conditioned blocks: ||A inv - I||_max <= 100 n eps; the others: each column's
// backward error as lu_solve's); sizes 1, 2, 7, 64, 65, 130, 329 and 512; pivoting kinds included.
TEST(BatchedLuCpu, InverseIsTheSolveOfEveryUnitVector)
{
  for (int n : {1, 2, 7, 64, 65, 130, 329, 512}) {
    for (Kind kind : {Kind::well_conditioned, Kind::random, Kind::zero_diagonal, Kind::ill_conditioned}) {
      if (n == 1 && kind == Kind::zero_diagonal) continue;
      const auto where = ::testing::Message() << "n " << n << " " << name(kind);
      const auto un = static_cast<std::size_t>(n);
      std::vector<double> a(un * un), lu;
      fill(kind, n, a.data());
      lu = a;
      std::vector<index_t> piv(un, -1);
      int info = -7;
      kernels::BatchLayout L;
      L.count = 1;
      L.uniform = L.max_size = n;
      cpu::lu_factor(L, lu.data(), piv.data(), &info);
      ASSERT_EQ(info, 0) << where;
      std::vector<double> inv(un * un, nan_v), e(un), x(un);
      cpu::lu_inverse(n, lu.data(), piv.data(), inv.data());
      double worst = 0.0;
      for (int j = 0; j < n; ++j) {
        std::fill(e.begin(), e.end(), 0.0);
        e[static_cast<std::size_t>(j)] = 1.0;
        cpu::lu_solve(L, lu.data(), piv.data(), e.data(), x.data());
        for (int i = 0; i < n; ++i) ASSERT_EQ(inv[i * un + j], x[i]) << where << " entry (" << i << ", " << j << ")";
        std::vector<double> col(un);
        for (int i = 0; i < n; ++i) col[i] = inv[i * un + j];
        EXPECT_LE(backward_error(n, a.data(), col.data(), e.data()), 100 * n * eps) << where << " column " << j;
        for (int i = 0; i < n && kind == Kind::well_conditioned; ++i) {
          long double s = 0;
          for (int k = 0; k < n; ++k) s += (long double)a[i * un + k] * inv[k * un + j];
          worst = std::max(worst, double(std::abs(s - (i == j ? 1.0L : 0.0L))));
        }
      }
      if (kind == Kind::well_conditioned) EXPECT_LE(worst, 100 * n * eps) << where;
    }
  }
  std::vector<double> lu(1, 1.0), inv(1);
  std::vector<index_t> piv(1, 0);
  EXPECT_THROW(cpu::lu_inverse(0, lu.data(), piv.data(), inv.data()), std::invalid_argument);
  EXPECT_THROW(cpu::lu_inverse(kernels::batched_lu_max_size + 1, lu.data(), piv.data(), inv.data()),
               std::invalid_argument);
}
