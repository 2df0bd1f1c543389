// Batched LU on the GPU against the CPU reference: every size 1..32, every size 15..67 and a spread up to 512 in
// variable batches (with gaps between blocks), uniform batches with odd counts (1, 33, 1001), all
// block kinds including singular ones; outputs poisoned beforehand (x NaN, pivots -1, info -7).
// Checks: info equal, pivots equal up to the first ambiguous step, factors within 1e-12, solution
// backward error <= 100 n eps and within 1e-12 of the CPU's on well-conditioned blocks, gaps
// untouched, uniform and variable layouts of the same data bitwise equal; blocks too large for the
// device's shared memory refused with the largest size that fits. Label `gpu`.
#include "kernels/batched/batched_lu.hpp"
#include "kernels/batched/test/batched_lu_test_util.hpp"
#include "linalg/array.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <utility>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

using namespace blockres;
using namespace blockres::test_lu;

namespace {

const double eps = DBL_EPSILON;
const double nan_v = std::numeric_limits<double>::quiet_NaN();
const std::vector<Kind> all_kinds{Kind::random,     Kind::well_conditioned, Kind::zero_diagonal,
                                  Kind::ternary,    Kind::ill_conditioned,  Kind::zero_column,
                                  Kind::row_graded, Kind::duplicate_row,    Kind::col_graded};

const ExecPtr& gpu()
{
  static const ExecPtr g = Executor::create_cuda(0);
  return g;
}

struct Outcome {
  std::vector<double> lu, x;
  std::vector<index_t> piv;
  std::vector<int> info;
};

Outcome run_cpu(const Batch& B, const std::vector<double>& rhs)
{
  Outcome o{B.a, std::vector<double>(B.rows(), nan_v), std::vector<index_t>(B.rows(), -1),
            std::vector<int>(B.count(), -7)};
  kernels::cpu::lu_factor(B.layout(), o.lu.data(), o.piv.data(), o.info.data());
  kernels::cpu::lu_solve(B.layout(), o.lu.data(), o.piv.data(), rhs.data(), o.x.data());
  return o;
}

// Variable layouts carry a size index (issue 31 item 3: one launch per size class on its own blocks), as
// block-Jacobi's do; WithoutSizeIndex turns it off to test the whole-batch class launches as well.
bool g_size_index = true;

// Factor and solve on the device; the layout's offset arrays are copied to the device as well.
Outcome run_gpu(const Batch& B, const std::vector<double>& rhs)
{
  const ExecPtr& g = gpu();
  Array<double> a(g, std::span<const double>(B.a));
  Array<index_t> piv(g, std::span<const index_t>(std::vector<index_t>(B.rows(), -1)));
  Array<int> info(g, std::span<const int>(std::vector<int>(B.count(), -7)));
  Array<double> b(g, std::span<const double>(rhs));
  Array<double> x(g, std::span<const double>(std::vector<double>(B.rows(), nan_v)));
  Array<index_t> row_off;
  Array<size64_t> mat_off;
  kernels::BatchLayout L = B.layout();
  if (!B.uniform) {
    row_off = Array<index_t>(g, std::span<const index_t>(B.row_off));
    mat_off = Array<size64_t>(g, std::span<const size64_t>(B.mat_off));
    L.row_off = row_off.data();
    L.mat_off = mat_off.data();
  }
  std::vector<index_t> order;
  kernels::BatchSizeIndex by_size;
  Array<index_t> dorder;
  if (!B.uniform && g_size_index) {
    by_size = kernels::sort_by_size(B.count(), B.row_off.data(), order);
    dorder = Array<index_t>(g, std::span<const index_t>(order));
    by_size.order = dorder.data();
    L.by_size = &by_size;
  }
  kernels::cuda::lu_factor(g->stream(), L, a.data(), piv.data(), info.data());
  kernels::cuda::lu_solve(g->stream(), L, a.data(), piv.data(), b.data(), x.data());
  g->synchronize();
  return {a.to_host(), x.to_host(), piv.to_host(), info.to_host()};
}

double block_rel_diff(size64_t n2, const double* x, const double* y)
{
  double num = 0, den = 0;
  for (size64_t e = 0; e < n2; ++e) {
    if (!std::isfinite(x[e])) return INFINITY;
    num = std::max(num, std::abs(x[e] - y[e]));
    den = std::max(den, std::abs(y[e]));
  }
  return den > 0 ? num / den : num;
}

// Runs both backends on B and compares block by block; counts the blocks that factored.
void check(const Batch& B, const std::string& what, int* factored_out = nullptr)
{
  const auto rhs = random_rhs(B);
  const Outcome c = run_cpu(B, rhs), g = run_gpu(B, rhs);
  int factored = 0;
  for (index_t b = 0; b < B.count(); ++b) {
    const int n = B.sizes[b];
    const auto where = ::testing::Message() << what << ": block " << b << " n " << n << " " << name(B.kinds[b]);
    EXPECT_EQ(g.info[b], c.info[b]) << where;
    const index_t* gp = g.piv.data() + B.row_off[b];
    const index_t* cp = c.piv.data() + B.row_off[b];
    for (int k = 0; k < n; ++k) ASSERT_TRUE(gp[k] >= k && gp[k] < n) << where << " piv[" << k << "] " << gp[k];
    if (nonsingular(B.kinds[b])) {
      EXPECT_EQ(c.info[b], 0) << where;
    }
    if (c.info[b] != 0 || g.info[b] != 0) continue;
    ++factored;
    const double* a = B.block(B.a, b);
    const int clear = first_ambiguous_step(n, a);
    for (int k = 0; k < clear; ++k) ASSERT_EQ(gp[k], cp[k]) << where << " step " << k;
    if (clear == n) {
      EXPECT_LE(block_rel_diff(size64_t(n) * n, B.block(g.lu, b), B.block(c.lu, b)), 1e-12) << where;
    }
    const double* gx = g.x.data() + B.row_off[b];
    EXPECT_LE(backward_error(n, a, gx, rhs.data() + B.row_off[b]), 100 * n * eps) << where;
    if (B.kinds[b] == Kind::well_conditioned) {  // cond < 4
      EXPECT_LE(rel_diff(n, gx, c.x.data() + B.row_off[b]), 1e-12) << where;
    }
  }
  // Nothing outside the blocks is written (variable layouts leave sentinel gaps between them).
  for (index_t b = 0; b < B.count(); ++b)
    for (size64_t e = B.mat_off[b] + size64_t(B.sizes[b]) * B.sizes[b]; e < B.mat_off[b + 1]; ++e)
      ASSERT_EQ(g.lu[e], sentinel) << what << " gap after block " << b;
  if (factored_out) *factored_out = factored;
}

std::vector<Kind> cycle(std::size_t count, std::size_t shift = 0)
{
  std::vector<Kind> k;
  for (std::size_t i = 0; i < count; ++i) k.push_back(all_kinds[(i + shift) % all_kinds.size()]);
  return k;
}

}  // namespace

TEST(BatchedLuGpu, EverySizeUpTo32InOneVariableBatch)
{
  std::vector<int> sizes;
  for (int rep = 0; rep < 3; ++rep)
    for (int n = 1; n <= 32; ++n) sizes.push_back(n);
  int factored = 0;
  check(make_batch(sizes, cycle(sizes.size()), false, 2), "sizes 1..32", &factored);
  EXPECT_GT(factored, 50);
}

// The warp solves (17..32 one row per lane, 33..64 two) in one variable batch: every size, blocks of
// both classes and of the register and blocked classes around them, shared memory sized to the
// largest block of each class.
TEST(BatchedLuGpu, EverySize17To64InOneVariableBatch)
{
  std::vector<int> sizes;
  for (int rep = 0; rep < 2; ++rep)
    for (int n = 15; n <= 67; ++n) sizes.push_back(n);
  int factored = 0;
  check(make_batch(sizes, cycle(sizes.size(), 3), false, 1), "sizes 15..67", &factored);
  EXPECT_GT(factored, 40);
}

TEST(BatchedLuGpu, SpreadUpTo512InOneVariableBatch)
{
  const std::vector<int> sizes{33, 47, 64, 100, 128, 255, 256, 333, 512, 1, 17, 200, 65, 129, 257, 34, 96, 160};
  for (std::size_t shift : {0, 4}) {
    int factored = 0;
    check(make_batch(sizes, cycle(sizes.size(), shift), false, 1), "spread to 512", &factored);
    EXPECT_GT(factored, 8);
  }
}

TEST(BatchedLuGpu, VariableBatchesWithoutSizeIndex)
{
  // The whole-batch class launches (a layout without by_size): every size 1..67 and a spread to 512.
  g_size_index = false;
  std::vector<int> sizes;
  for (int n = 1; n <= 67; ++n) sizes.push_back(n);
  for (int n : {100, 128, 200, 256, 333, 512}) sizes.push_back(n);
  int factored = 0;
  check(make_batch(sizes, cycle(sizes.size(), 2), false, 1), "sizes 1..67 and to 512, no size index", &factored);
  g_size_index = true;
  EXPECT_GT(factored, 40);
}

TEST(BatchedLuGpu, VariableBatchesWithOddCounts)
{
  for (index_t count : {1, 33, 1001}) {
    std::vector<int> sizes;
    for (index_t b = 0; b < count; ++b) sizes.push_back(1 + int(rng()() % (b % 50 == 7 ? 160 : 40)));
    check(make_batch(sizes, cycle(sizes.size(), std::size_t(count)), false, int(count % 3)),
          "variable count " + std::to_string(count));
  }
}

TEST(BatchedLuGpu, UniformBatchesEverySizeClass)
{
  // Every size to 25 (each of the lane solves, uniform 4..24, and its neighbours), then each register class's ends.
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 31, 32})
    for (index_t count : {1, 33, 1001})
      check(make_batch(std::vector<int>(count, n), cycle(count, n), true),
            "uniform n " + std::to_string(n) + " count " + std::to_string(count));
  for (int n : {33, 40, 41, 47, 48, 56, 57, 64, 65, 96, 97, 100, 128, 129, 200, 256, 257, 333, 512})  // every class's ends
    for (index_t count : {1, 33})
      check(make_batch(std::vector<int>(count, n), cycle(count, n), true),
            "uniform n " + std::to_string(n) + " count " + std::to_string(count));
}

TEST(BatchedLuGpu, UniformAndVariableLayoutsGiveIdenticalResults)
{
  // Same data through the uniform kernels (the lane solves at 4..24, the exact-size register kernels), the
  // variable layout with a size index (the class kernels, each on its own blocks) and without one (the class
  // kernels over the whole batch); the blocked sizes go through the same kernel every way.
  for (int n : {3, 5, 13, 16, 17, 20, 21, 22, 24, 25, 32, 40, 64, 300}) {
    Batch U = make_batch(std::vector<int>(9, n), cycle(9), true);
    Batch V = U;
    V.uniform = false;
    const auto rhs = random_rhs(U);
    const Outcome gu = run_gpu(U, rhs), gv = run_gpu(V, rhs);
    g_size_index = false;
    const Outcome gw = run_gpu(V, rhs);
    g_size_index = true;
    for (const auto& [go, how] : {std::pair{&gv, "variable, size index"}, std::pair{&gw, "variable, no size index"}}) {
      const std::string what = "n " + std::to_string(n) + " " + how;
      EXPECT_EQ(gu.info, go->info) << what;
      EXPECT_EQ(gu.piv, go->piv) << what;
      EXPECT_EQ(0, std::memcmp(gu.lu.data(), go->lu.data(), gu.lu.size() * sizeof(double))) << what;
      EXPECT_EQ(0, std::memcmp(gu.x.data(), go->x.data(), gu.x.size() * sizeof(double))) << what;
      for (index_t b = 0, shown = 0; b < U.count() && shown < 4; ++b)  // which blocks differ, for the log
        for (index_t r = U.row_off[b]; r < U.row_off[b + 1]; ++r)
          if (std::memcmp(&gu.x[r], &go->x[r], sizeof(double)) != 0) {
            ADD_FAILURE() << what << ": block " << b << " (" << name(U.kinds[b]) << ", info " << gu.info[b]
                          << ") row " << r - U.row_off[b] << ": uniform " << std::hexfloat << gu.x[r] << ", "
                          << how << " " << go->x[r] << std::defaultfloat;
            ++shown;
            break;
          }
    }
  }
}

TEST(BatchedLuGpu, InvalidArgumentsThrowAndEmptyBatchesDoNothing)
{
  kernels::BatchLayout L;
  L.count = 1;
  for (int bad : {0, -3, 513}) {
    L.uniform = bad > 0 ? bad : 0;
    L.max_size = bad;
    EXPECT_THROW(kernels::cuda::lu_factor(gpu()->stream(), L, nullptr, nullptr, nullptr), std::invalid_argument);
    EXPECT_THROW(kernels::cuda::lu_solve(gpu()->stream(), L, nullptr, nullptr, nullptr, nullptr),
                 std::invalid_argument);
  }
  L.uniform = 0;
  L.max_size = 4;  // variable layout without offset arrays
  EXPECT_THROW(kernels::cuda::lu_factor(gpu()->stream(), L, nullptr, nullptr, nullptr), std::invalid_argument);
  L.count = 0;
  EXPECT_NO_THROW(kernels::cuda::lu_factor(gpu()->stream(), L, nullptr, nullptr, nullptr));
  EXPECT_NO_THROW(kernels::cuda::lu_solve(gpu()->stream(), L, nullptr, nullptr, nullptr, nullptr));
  gpu()->synchronize();
}

TEST(BatchedLuGpu, BlocksTooLargeForTheDevicesSharedMemoryAreRefusedWithTheLargestThatFits)
{
  // sm_86 / sm_89 allow 101376 bytes per thread block: the 257..512 class's panel then holds at most
  // 432 rows. Played here through the test hook; the check is the one a real sm_86 meets.
  struct Restore {
    ~Restore() { kernels::cuda::set_lu_shared_limit_for_tests(0); }
  } restore;
  kernels::cuda::set_lu_shared_limit_for_tests(101376);
  for (int n : {433, 512}) {
    Batch B = make_batch(std::vector<int>(2, n), cycle(2), true);
    try {
      (void)run_gpu(B, random_rhs(B));
      ADD_FAILURE() << "n " << n << ": no refusal";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("101376 this GPU allows (blocks up to 432 rows fit)"), std::string::npos) << what;
      EXPECT_NE(what.find("blocks of up to " + std::to_string(n) + " rows need"), std::string::npos) << what;
    }
  }
  check(make_batch(std::vector<int>(3, 432), cycle(3), true), "uniform n 432 under the sm_86 limit");
  // A variable batch is refused by its largest block.
  Batch V = make_batch({40, 300, 500}, cycle(3), false);
  EXPECT_THROW((void)run_gpu(V, random_rhs(V)), std::runtime_error);
}

// lu_inverse on the device against the CPU reference on the same factors: the same bits (the same
// interchanges, fma updates and divisions in the same order), every entry written over a NaN-poisoned
// output; sizes 1 to 512 across the thread-count steps (1, 31, 32, 33, 65, 255, 256, 257, 329, 512),
// pivoting and ill-conditioned blocks; n outside 1..512 throws.
TEST(BatchedLuGpu, InverseMatchesTheCpuBitForBit)
{
  const ExecPtr& g = gpu();
  for (int n : {1, 31, 32, 33, 65, 255, 256, 257, 329, 512}) {
    for (Kind kind : {Kind::well_conditioned, Kind::random, Kind::zero_diagonal, Kind::ill_conditioned}) {
      if (n == 1 && kind == Kind::zero_diagonal) continue;
      const auto where = ::testing::Message() << "n " << n << " " << name(kind);
      const auto un = static_cast<std::size_t>(n);
      std::vector<double> lu(un * un);
      fill(kind, n, lu.data());
      std::vector<index_t> piv(un, -1);
      int info = -7;
      kernels::BatchLayout L;
      L.count = 1;
      L.uniform = L.max_size = n;
      kernels::cpu::lu_factor(L, lu.data(), piv.data(), &info);
      ASSERT_EQ(info, 0) << where;
      std::vector<double> ref(un * un, nan_v);
      kernels::cpu::lu_inverse(n, lu.data(), piv.data(), ref.data());
      Array<double> dlu(g, std::span<const double>(lu)), dinv(g, std::span<const double>(std::vector<double>(un * un, nan_v)));
      Array<index_t> dpiv(g, std::span<const index_t>(piv));
      kernels::cuda::lu_inverse(g->stream(), n, dlu.data(), dpiv.data(), dinv.data());
      const auto got = dinv.to_host();
      for (std::size_t e = 0; e < un * un; ++e) {
        ASSERT_FALSE(std::isnan(got[e])) << where << " entry " << e << " not written";
        ASSERT_EQ(got[e], ref[e]) << where << " entry (" << e / un << ", " << e % un << ")";
      }
    }
  }
  Array<double> one(g, std::span<const double>(std::vector<double>{1.0}));
  Array<index_t> p0(g, std::span<const index_t>(std::vector<index_t>{0}));
  EXPECT_THROW(kernels::cuda::lu_inverse(g->stream(), 0, one.data(), p0.data(), one.data()), std::invalid_argument);
  EXPECT_THROW(kernels::cuda::lu_inverse(g->stream(), kernels::batched_lu_max_size + 1, one.data(), p0.data(), one.data()),
               std::invalid_argument);
}
