// CPU references of batched Gauss–Huard (BGH/BGHT), Gauss–Jordan inversion (BGJE) and the
// block-diagonal GEMV: hand-computed values, backward stability on every size 1..32 in variable
// and uniform batches (well/ill-conditioned, graded, zero diagonal), singular and non-finite
// blocks reported in info without disturbing the others, the BGHT layout, argument checks.
#include "kernels/batched/test/test_batched_gh_common.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

using namespace blockres;
using namespace blockres::test_gh;
using kernels::BatchLayout;
using kernels::GhStorage;
namespace kc = blockres::kernels::cpu;

namespace {

constexpr GhStorage both_storages[] = {GhStorage::standard, GhStorage::transposed};
const char* to_string(GhStorage s) { return s == GhStorage::standard ? "BGH" : "BGHT"; }
const double nan_v = std::numeric_limits<double>::quiet_NaN();

// The batches every property is checked on: one variable batch holding every size 1..32 (three
// times, shuffled, plus random extras) and a uniform batch of each size.
std::vector<std::pair<std::string, Batch>> test_batches()
{
  std::vector<std::pair<std::string, Batch>> out;
  out.emplace_back("variable 1..32", variable_batch(1, 32, 3, 40));
  for (int n = 1; n <= 32; ++n) out.emplace_back("uniform " + std::to_string(n), uniform_batch(n, 7));
  return out;
}

// Right-hand sides b = A x_true with x_true random, per block.
std::vector<double> rhs_for(const Batch& B)
{
  std::vector<double> b(static_cast<std::size_t>(B.rows()));
  for (index_t k = 0; k < B.count(); ++k) {
    std::vector<double> xt(B.sizes[k]);
    for (auto& e : xt) e = uniform();
    matvec(B.sizes[k], B.block(k), xt.data(), b.data() + B.row_off[k]);
  }
  return b;
}

}  // namespace

TEST(BatchedGhCpu, HandValuesTwoByTwoNeedsPivoting)
{
  // A = [1 2; 3 4]: step 0 picks column 1 (|2| > |1|): D(:,0) = A(:,1), D(:,1) = A(:,0) reduced.
  //   row 0: pivot 2, A(0,0)/2 = 0.5;  row 1: 3 - 4 * 0.5 = 1 (pivot)  =>  D = [2 0.5; 4 1], perm {1, 0}.
  for (GhStorage s : both_storages) {  // for n = 2 the anti-transpose leaves U(0,1) in place
    Batch B = make_batch({2}, true);
    B.values = {1, 2, 3, 4};
    std::vector<index_t> perm(2, -1);
    int info = -7;
    kc::gauss_huard_factor(B.layout(), B.values.data(), perm.data(), &info, s);
    EXPECT_EQ(info, 0);
    EXPECT_EQ(B.values, (std::vector<double>{2, 0.5, 4, 1})) << to_string(s);
    EXPECT_EQ(perm, (std::vector<index_t>{1, 0}));
    const std::vector<double> b{5, 11};  // x = (1, 2)
    std::vector<double> x(2, nan_v);
    kc::gauss_huard_solve(B.layout(), B.values.data(), perm.data(), s, b.data(), x.data());
    EXPECT_EQ(x, (std::vector<double>{1, 2})) << to_string(s);
  }
}

TEST(BatchedGhCpu, HandValuesThreeByThreeBothStorages)
{
  // A = [4 2 3; 2 5 2; 1 2 4], no column exchange, every operation exact in binary:
  //   step 0: pivot 4; row 0 -> (., 0.5, 0.75)
  //   step 1: row 1 -> (., 5 - 2*0.5, 2 - 2*0.75) = (., 4, 0.5); pivot 4; 0.5/4 = 0.125;
  //           row 0 col 2: 0.75 - 0.5*0.125 = 0.6875
  //   step 2: 4 - (1*0.6875 + 2*0.125) = 3.0625
  // D = [4 0.5 0.6875; 2 4 0.125; 1 2 3.0625]; BGHT keeps L and stores U(n-1-j, n-1-i) at (i, j > i).
  const std::vector<double> A{4, 2, 3, 2, 5, 2, 1, 2, 4};
  const std::vector<double> standard{4, 0.5, 0.6875, 2, 4, 0.125, 1, 2, 3.0625};
  const std::vector<double> transposed{4, 0.125, 0.6875, 2, 4, 0.5, 1, 2, 3.0625};
  for (GhStorage s : both_storages) {
    Batch B = make_batch({3}, false);
    B.values = A;
    std::vector<index_t> perm(3, -1);
    int info = -7;
    kc::gauss_huard_factor(B.layout(), B.values.data(), perm.data(), &info, s);
    EXPECT_EQ(info, 0);
    EXPECT_EQ(B.values, s == GhStorage::standard ? standard : transposed) << to_string(s);
    EXPECT_EQ(perm, (std::vector<index_t>{0, 1, 2}));
    const std::vector<double> b{17, 18, 17};  // x = (1, 2, 3)
    std::vector<double> x(3, nan_v);
    kc::gauss_huard_solve(B.layout(), B.values.data(), perm.data(), s, b.data(), x.data());
    for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(x[i], i + 1.0) << to_string(s);
  }
}

TEST(BatchedGhCpu, TransposedStorageIsTheAntiTransposeOfTheUpperPart)
{
  Batch B = variable_batch(1, 32, 2, 10);
  fill_batch(B, Kind::random);
  Batch T = B;
  std::vector<index_t> pb(B.rows()), pt(B.rows());
  std::vector<int> ib(B.count()), it(B.count());
  kc::gauss_huard_factor(B.layout(), B.values.data(), pb.data(), ib.data(), GhStorage::standard);
  kc::gauss_huard_factor(T.layout(), T.values.data(), pt.data(), it.data(), GhStorage::transposed);
  EXPECT_EQ(pb, pt);
  EXPECT_EQ(ib, it);
  for (index_t k = 0; k < B.count(); ++k) {
    const int n = B.sizes[k];
    const double *s = B.block(k), *t = T.block(k);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const double expect = j <= i ? s[i * n + j] : s[(n - 1 - j) * n + (n - 1 - i)];
        ASSERT_EQ(t[i * n + j], expect) << "block " << k << " n " << n << " (" << i << "," << j << ")";
      }
  }
}

TEST(BatchedGhCpu, BackwardStableOnEverySizeAndKind)
{
  // ||A x - b|| / (||A|| ||x||) <= 100 n eps, cond up to 1e10 included (GH with column pivoting is
  // backward stable like LU with partial pivoting).
  int blocks = 0;
  for (auto& [label, B0] : test_batches())
    for (Kind kind : all_kinds)
      for (GhStorage s : both_storages) {
        Batch B = B0;
        fill_batch(B, kind);
        const Batch A = B;
        const auto b = rhs_for(B);
        std::vector<index_t> perm(B.rows(), -1);
        std::vector<int> info(B.count(), -7);
        kc::gauss_huard_factor(B.layout(), B.values.data(), perm.data(), info.data(), s);
        std::vector<double> x(b.size(), nan_v);
        kc::gauss_huard_solve(B.layout(), B.values.data(), perm.data(), s, b.data(), x.data());
        for (index_t k = 0; k < B.count(); ++k) {
          const int n = B.sizes[k];
          ASSERT_EQ(info[k], 0) << label << " " << to_string(kind) << " block " << k << " n " << n;
          ASSERT_TRUE(is_permutation(n, perm.data() + B.row_off[k]));
          const double be = backward_error(n, A.block(k), x.data() + B.row_off[k], b.data() + B.row_off[k]);
          ASSERT_LE(be, stable_bound(n)) << label << " " << to_string(kind) << " " << to_string(s) << " block " << k
                                         << " n " << n;
          ++blocks;
        }
      }
  std::printf("%d block solves checked\n", blocks);
}

TEST(BatchedGjeCpu, HandValues)
{
  Batch B = make_batch({2, 3, 1}, false);
  B.values = {1, 2, 3, 4, /**/ 0, 1, 2, 1, 0, 3, 4, -3, 8, /**/ -4};
  std::vector<int> info(3, -7);
  kc::gauss_jordan_invert(B.layout(), B.values.data(), info.data());
  EXPECT_EQ(info, (std::vector<int>{0, 0, 0}));
  const std::vector<double> inv{-2, 1, 1.5, -0.5, /**/ -4.5, 7, -1.5, -2, 4, -1, 1.5, -2, 0.5, /**/ -0.25};
  for (std::size_t e = 0; e < inv.size(); ++e) EXPECT_NEAR(B.values[e], inv[e], 1e-14) << e;
  // y = blockdiag(inv) x
  const std::vector<double> x{1, 1, /**/ 1, 0, 2, /**/ 8};
  std::vector<double> y(6, nan_v);
  kc::block_diag_gemv(B.layout(), inv.data(), x.data(), y.data());
  EXPECT_EQ(y, (std::vector<double>{-1, 1, -7.5, -4, 2.5, -2}));
}

TEST(BatchedGjeCpu, InverseResidualOnEverySizeAndKind)
{
  // ||A X - I|| / (||A|| ||X||) <= 100 n eps for every kind, cond 1e10 included.
  for (auto& [label, B0] : test_batches())
    for (Kind kind : all_kinds) {
      Batch B = B0;
      fill_batch(B, kind);
      const Batch A = B;
      std::vector<int> info(B.count(), -7);
      kc::gauss_jordan_invert(B.layout(), B.values.data(), info.data());
      for (index_t k = 0; k < B.count(); ++k) {
        ASSERT_EQ(info[k], 0) << label << " " << to_string(kind) << " block " << k;
        ASSERT_LE(inverse_residual(B.sizes[k], A.block(k), B.block(k)), stable_bound(B.sizes[k]))
            << label << " " << to_string(kind) << " block " << k << " n " << B.sizes[k];
      }
    }
}

TEST(BatchedGjeCpu, AppliedInverseBackwardStableWhenWellConditioned)
{
  // x = X b is backward stable only while cond(A) is small (the error of an explicit inverse
  // applied to b = A x_true grows like cond(A) eps); checked for cond <= 100.
  for (auto& [label, B0] : test_batches())
    for (Kind kind : {Kind::well_conditioned, Kind::permuted_diagonal}) {
      Batch B = B0;
      fill_batch(B, kind);
      const Batch A = B;
      const auto b = rhs_for(B);
      std::vector<int> info(B.count(), -7);
      kc::gauss_jordan_invert(B.layout(), B.values.data(), info.data());
      std::vector<double> x(b.size(), nan_v);
      kc::block_diag_gemv(B.layout(), B.values.data(), b.data(), x.data());
      for (index_t k = 0; k < B.count(); ++k) {
        const int n = B.sizes[k];
        ASSERT_EQ(info[k], 0);
        ASSERT_LE(backward_error(n, A.block(k), x.data() + B.row_off[k], b.data() + B.row_off[k]), stable_bound(n))
            << label << " " << to_string(kind) << " block " << k << " n " << n;
      }
    }
}

TEST(BatchedGjeCpu, IllConditionedForwardErrorWithinConditionBound)
{
  // cond 1e10: ||x - x_true|| / ||x_true|| <= 100 n eps cond_inf(A), cond_inf from the computed inverse.
  Batch B = variable_batch(1, 32, 3, 0);
  fill_batch(B, Kind::ill_conditioned);
  const Batch A = B;
  std::vector<double> xt(static_cast<std::size_t>(B.rows())), b(xt.size()), x(xt.size(), nan_v);
  for (auto& e : xt) e = uniform();
  for (index_t k = 0; k < B.count(); ++k) matvec(B.sizes[k], A.block(k), xt.data() + B.row_off[k], b.data() + B.row_off[k]);
  std::vector<int> info(B.count(), -7);
  kc::gauss_jordan_invert(B.layout(), B.values.data(), info.data());
  kc::block_diag_gemv(B.layout(), B.values.data(), b.data(), x.data());
  for (index_t k = 0; k < B.count(); ++k) {
    const int n = B.sizes[k];
    ASSERT_EQ(info[k], 0);
    const double cond = static_cast<double>(norm_inf(n, A.block(k)) * norm_inf(n, B.block(k)));
    EXPECT_LE(rel_diff(n, x.data() + B.row_off[k], xt.data() + B.row_off[k]), stable_bound(n) * cond)
        << "block " << k << " n " << n << " cond " << cond;
  }
}

TEST(BatchedGhCpu, SingularBlocksReportedOthersUnaffected)
{
  // Every fourth block singular (exact constructions), the rest well conditioned.
  Batch B = variable_batch(1, 32, 4, 0);
  std::vector<int> expect(B.count(), 0);
  const Singular kinds[] = {Singular::zero_column, Singular::zero_row, Singular::duplicate_rows_exact,
                            Singular::duplicate_rows};
  for (index_t k = 0; k < B.count(); ++k) {
    if (k % 4 == 1)
      expect[k] = make_singular(kinds[(k / 4) % 4], B.sizes[k], B.block(k));
    else
      fill_block(Kind::well_conditioned, B.sizes[k], B.block(k));
  }
  const Batch A = B;
  const auto b = rhs_for(A);
  int singular = 0;
  for (int e : expect) singular += e != 0;
  ASSERT_GT(singular, 20);

  for (GhStorage s : both_storages) {
    Batch F = A;
    std::vector<index_t> perm(F.rows(), -1);
    std::vector<int> info(F.count(), -7);
    kc::gauss_huard_factor(F.layout(), F.values.data(), perm.data(), info.data(), s);
    std::vector<double> x(b.size(), nan_v);
    kc::gauss_huard_solve(F.layout(), F.values.data(), perm.data(), s, b.data(), x.data());  // must not throw
    for (index_t k = 0; k < F.count(); ++k) {
      const int n = F.sizes[k];
      ASSERT_EQ(info[k], expect[k]) << to_string(s) << " block " << k << " n " << n;
      ASSERT_TRUE(is_permutation(n, perm.data() + F.row_off[k])) << "block " << k;
      if (expect[k] == 0) {
        ASSERT_LE(backward_error(n, A.block(k), x.data() + F.row_off[k], b.data() + F.row_off[k]), stable_bound(n));
      }
    }
  }
  Batch G = A;
  std::vector<int> info(G.count(), -7);
  kc::gauss_jordan_invert(G.layout(), G.values.data(), info.data());
  for (index_t k = 0; k < G.count(); ++k) {
    ASSERT_EQ(info[k], expect[k]) << "GJE block " << k << " n " << G.sizes[k];
    if (expect[k] == 0) {
      ASSERT_LE(inverse_residual(G.sizes[k], A.block(k), G.block(k)), stable_bound(G.sizes[k]));
    }
  }
}

TEST(BatchedGhCpu, NonFiniteAndZeroBlocksReported)
{
  const double inf = std::numeric_limits<double>::infinity();
  Batch B = make_batch({3, 3, 3, 1, 3}, false);
  B.values = {nan_v, 1, 0, 0, 1, 0, 0, 0, 1,  // NaN ranks above everything: caught at step 1
              1, 0, 0, 0, inf, 0, 0, 0, 1,    // infinite entry
              1, 0, 0, 0, 1, 0, 0, 0, 1,      // identity: fine
              0,                              // 1x1 zero
              0, 0, 0, 0, 0, 0, 0, 0, 0};     // zero block
  const Batch A = B;
  std::vector<index_t> perm(B.rows());
  std::vector<int> info(B.count(), -7);
  kc::gauss_huard_factor(B.layout(), B.values.data(), perm.data(), info.data(), GhStorage::standard);
  EXPECT_EQ(info, (std::vector<int>{1, 1, 0, 1, 1}));
  B = A;
  kc::gauss_jordan_invert(B.layout(), B.values.data(), info.data());
  EXPECT_EQ(info, (std::vector<int>{1, 1, 0, 1, 1}));
}

TEST(BatchedGhCpu, InvalidArgumentsThrow)
{
  Batch B = variable_batch(1, 8, 1, 0);
  fill_batch(B, Kind::random);
  std::vector<index_t> perm(B.rows());
  std::vector<int> info(B.count());
  std::vector<double> x(B.rows()), y(B.rows());
  auto factor = [&](BatchLayout L) { kc::gauss_huard_factor(L, B.values.data(), perm.data(), info.data(), GhStorage::standard); };
  BatchLayout L = B.layout();
  EXPECT_NO_THROW(factor(L));
  L.max_size = 0;
  EXPECT_THROW(factor(L), std::invalid_argument);
  L.max_size = 33;
  EXPECT_THROW(factor(L), std::invalid_argument);
  L.max_size = 7;  // a block of size 8 is larger
  EXPECT_THROW(factor(L), std::invalid_argument);
  L = B.layout();
  L.count = -1;
  EXPECT_THROW(factor(L), std::invalid_argument);
  L = B.layout();
  L.row_off = nullptr;
  EXPECT_THROW(factor(L), std::invalid_argument);
  BatchLayout U;
  U.count = 2, U.uniform = 4, U.max_size = 5;
  EXPECT_THROW(kc::gauss_jordan_invert(U, B.values.data(), info.data()), std::invalid_argument);
  U.max_size = 40, U.uniform = 40;
  EXPECT_THROW(kc::gauss_huard_solve(U, B.values.data(), perm.data(), GhStorage::transposed, x.data(), y.data()),
               std::invalid_argument);
  // A corrupt permutation is a programming error, not a numerical one.
  BatchLayout one;
  one.count = 1, one.uniform = 2, one.max_size = 2;
  const double f[4] = {1, 0, 0, 1};
  const index_t bad[2] = {0, 2};
  EXPECT_THROW(kc::gauss_huard_solve(one, f, bad, GhStorage::standard, x.data(), y.data()), std::invalid_argument);
  // Empty batches are fine.
  BatchLayout empty;
  empty.max_size = 1;
  EXPECT_NO_THROW(factor(empty));
}

TEST(BlockDiagGemvCpu, AnyBlockSize)
{
  // The CPU GEMV is not limited to 32: a 40 x 40 identity scaled by 3 next to a 1 x 1 block.
  Batch B = make_batch({40, 1}, false);
  for (int i = 0; i < 40; ++i) B.values[i * 40 + i] = 3.0;
  B.values[1600] = -2.0;
  std::vector<double> x(41), y(41, nan_v);
  for (int i = 0; i < 41; ++i) x[i] = i;
  kc::block_diag_gemv(B.layout(), B.values.data(), x.data(), y.data());
  for (int i = 0; i < 40; ++i) EXPECT_EQ(y[i], 3.0 * i);
  EXPECT_EQ(y[40], -80.0);
}

// fp32 inverses (block-Jacobi's fp32 storage): the GEMV reads them as fp64, so it gives the bits of
// the fp64 GEMV on the rounded values, on a variable batch of every size 1..40.
TEST(BlockDiagGemvCpu, Fp32InversesAreReadAsFp64)
{
  Batch B = variable_batch(1, 40, 2, 17);
  fill_batch(B, Kind::random);
  std::vector<float> v32(B.values.size());
  for (std::size_t k = 0; k < v32.size(); ++k) v32[k] = static_cast<float>(B.values[k]);
  Batch R = B;
  for (std::size_t k = 0; k < v32.size(); ++k) R.values[k] = double(v32[k]);
  const auto x = rhs_for(B);
  std::vector<double> y32(x.size(), nan_v), y64(x.size(), nan_v);
  kc::block_diag_gemv(B.layout(), v32.data(), x.data(), y32.data());
  kc::block_diag_gemv(R.layout(), R.values.data(), x.data(), y64.data());
  EXPECT_EQ(y32, y64);
}
