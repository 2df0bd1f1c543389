// CUDA batched Gauss–Huard (BGH/BGHT), Gauss–Jordan inversion (BGJE) and block-diagonal GEMV
// against the CPU references: variable batches holding every size 1..32 (neighbouring blocks of
// different sizes share a warp), uniform batches of every size with 1, 33 and 1001 blocks,
// well/ill-conditioned, graded, zero-diagonal, singular and non-finite blocks, poisoned outputs,
// blocks larger than the declared max_size, argument checks. Label `gpu`.
#include "kernels/batched/batched_gh.hpp"
#include "kernels/batched/test/test_batched_gh_common.hpp"
#include "linalg/array.hpp"
#include "linalg/executor.hpp"

#include <gtest/gtest.h>

#include <memory>

#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

using namespace blockres;
using namespace blockres::test_gh;
using kernels::BatchLayout;
using kernels::GhStorage;
namespace kc = blockres::kernels::cpu;
namespace kg = blockres::kernels::cuda;

namespace {

constexpr GhStorage both_storages[] = {GhStorage::standard, GhStorage::transposed};
const char* to_string(GhStorage s) { return s == GhStorage::standard ? "BGH" : "BGHT"; }
const double nan_v = std::numeric_limits<double>::quiet_NaN();

template <class T>
Array<T> upload(const ExecPtr& gpu, const std::vector<T>& h)
{
  return Array<T>(gpu, std::span<const T>(h));
}

// Variable layouts carry a size index (issue 31 item 3: one launch per lane-group width on its own blocks),
// as block-Jacobi's do; the WithoutSizeIndex test turns it off for the whole-batch launches.
bool g_size_index = true;

// A batch in device memory: values and (for variable layouts) the offset arrays and the size index.
struct DeviceBatch {
  Array<double> values;
  Array<index_t> row_off;
  Array<size64_t> mat_off;
  std::vector<index_t> order;
  std::unique_ptr<kernels::BatchSizeIndex> by_size;
  Array<index_t> dorder;
  BatchLayout layout;

  DeviceBatch(const ExecPtr& gpu, const Batch& B) : values(upload(gpu, B.values))
  {
    layout = B.layout();
    if (!B.uniform) {
      row_off = upload(gpu, B.row_off);
      mat_off = upload(gpu, B.mat_off);
      layout.row_off = row_off.data();
      layout.mat_off = mat_off.data();
      if (g_size_index) {
        by_size = std::make_unique<kernels::BatchSizeIndex>(kernels::sort_by_size(B.count(), B.row_off.data(), order));
        dorder = upload(gpu, order);
        by_size->order = dorder.data();
        layout.by_size = by_size.get();
      }
    }
  }
};

// Block-normwise max |x - y| / max |y| of two batch-shaped arrays (matrices or vectors).
double max_block_rel_diff(const Batch& B, const std::vector<double>& x, const std::vector<double>& y, bool matrices)
{
  double worst = 0.0;
  for (index_t k = 0; k < B.count(); ++k) {
    const int n = B.sizes[k];
    const size64_t off = matrices ? B.mat_off[k] : B.row_off[k];
    worst = std::max(worst, rel_diff(matrices ? n * n : n, x.data() + off, y.data() + off));
  }
  return worst;
}

std::vector<double> rhs(const Batch& B)
{
  std::vector<double> b(static_cast<std::size_t>(B.rows()));
  for (auto& e : b) e = uniform();
  return b;
}

// Everything the GPU computes for one batch, downloaded.
struct GpuResult {
  std::vector<double> factors, x;
  std::vector<index_t> perm;
  std::vector<int> info;
};

GpuResult gpu_gauss_huard(const ExecPtr& gpu, const Batch& B, GhStorage s, const std::vector<double>& b)
{
  DeviceBatch D(gpu, B);
  // Poisoned outputs: every entry must be written.
  Array<index_t> perm = upload(gpu, std::vector<index_t>(B.rows(), -12345));
  Array<int> info = upload(gpu, std::vector<int>(B.count(), -777));
  Array<double> db = upload(gpu, b);
  Array<double> x = upload(gpu, std::vector<double>(b.size(), nan_v));
  kg::gauss_huard_factor(gpu->stream(), D.layout, D.values.data(), perm.data(), info.data(), s);
  kg::gauss_huard_solve(gpu->stream(), D.layout, D.values.data(), perm.data(), s, db.data(), x.data());
  gpu->synchronize();
  return {D.values.to_host(), x.to_host(), perm.to_host(), info.to_host()};
}

GpuResult gpu_gauss_jordan(const ExecPtr& gpu, const Batch& B, const std::vector<double>& b)
{
  DeviceBatch D(gpu, B);
  Array<int> info = upload(gpu, std::vector<int>(B.count(), -777));
  Array<double> db = upload(gpu, b);
  Array<double> x = upload(gpu, std::vector<double>(b.size(), nan_v));
  kg::gauss_jordan_invert(gpu->stream(), D.layout, D.values.data(), info.data());
  kg::block_diag_gemv(gpu->stream(), D.layout, D.values.data(), db.data(), x.data());
  gpu->synchronize();
  return {D.values.to_host(), x.to_host(), {}, info.to_host()};
}

// Variable batches for every lane-group width (1..3 -> 4 lanes, 1..8 -> 8, 5..16 -> 16,
// 17..32 and 1..32 -> 32) and uniform batches of every size with 1, 33 and 1001 blocks.
std::vector<std::pair<std::string, Batch>> gpu_batches(bool all_counts)
{
  std::vector<std::pair<std::string, Batch>> out;
  out.emplace_back("variable 1..32", variable_batch(1, 32, 3, 41));
  out.emplace_back("variable 1..3", variable_batch(1, 3, 20, 7));
  out.emplace_back("variable 1..8", variable_batch(1, 8, 10, 3));
  out.emplace_back("variable 5..16", variable_batch(5, 16, 5, 1));
  out.emplace_back("variable 17..32", variable_batch(17, 32, 3, 1));
  for (int n = 1; n <= 32; ++n)
    for (index_t count : {1, 33, 1001})
      if (all_counts || count == 33)
        out.emplace_back("uniform " + std::to_string(n) + " x" + std::to_string(count), uniform_batch(n, count));
  return out;
}

}  // namespace

TEST(BatchedGhGpu, MatchesCpuOnWellConditionedBlocks)
{
  auto gpu = Executor::create_cuda(0);
  for (auto& [label, B0] : gpu_batches(true)) {
    Batch B = B0;
    fill_batch(B, Kind::well_conditioned);
    const auto b = rhs(B);
    for (GhStorage s : both_storages) {
      const std::string what = label + " " + to_string(s);
      Batch F = B;
      std::vector<index_t> perm(F.rows());
      std::vector<int> info(F.count());
      kc::gauss_huard_factor(F.layout(), F.values.data(), perm.data(), info.data(), s);
      std::vector<double> x(b.size());
      kc::gauss_huard_solve(F.layout(), F.values.data(), perm.data(), s, b.data(), x.data());

      const GpuResult g = gpu_gauss_huard(gpu, B, s, b);
      ASSERT_EQ(g.info, info) << what;
      ASSERT_EQ(g.perm, perm) << what;  // pivots are unambiguous on random well-conditioned blocks
      ASSERT_LE(max_block_rel_diff(F, g.factors, F.values, true), 1e-12) << what << " factors";
      ASSERT_LE(max_block_rel_diff(F, g.x, x, false), 1e-12) << what << " solution";
    }
    // Gauss–Jordan inverse, its application, and the GEMV alone on the CPU's inverse.
    Batch G = B;
    std::vector<int> info(G.count());
    kc::gauss_jordan_invert(G.layout(), G.values.data(), info.data());
    std::vector<double> x(b.size());
    kc::block_diag_gemv(G.layout(), G.values.data(), b.data(), x.data());
    const GpuResult g = gpu_gauss_jordan(gpu, B, b);
    ASSERT_EQ(g.info, info) << label << " GJE";
    ASSERT_LE(max_block_rel_diff(G, g.factors, G.values, true), 1e-12) << label << " GJE inverse";
    ASSERT_LE(max_block_rel_diff(G, g.x, x, false), 1e-12) << label << " GJE applied";

    DeviceBatch inv(gpu, G);
    Array<double> db = upload(gpu, b);
    Array<double> y = upload(gpu, std::vector<double>(b.size(), nan_v));
    kg::block_diag_gemv(gpu->stream(), inv.layout, inv.values.data(), db.data(), y.data());
    ASSERT_LE(gemv_error_ratio(G, G.values, b, y.to_host(), x), 1.0) << label << " gemv";

    // fp32 inverses (block-Jacobi's fp32 storage) against the CPU's GEMV on the same fp32 values.
    std::vector<float> g32(G.values.size());
    for (std::size_t k = 0; k < g32.size(); ++k) g32[k] = static_cast<float>(G.values[k]);
    Batch R = G;  // the rounded inverses in fp64, for the error bound
    for (std::size_t k = 0; k < g32.size(); ++k) R.values[k] = double(g32[k]);
    std::vector<double> x32(b.size(), nan_v);
    kc::block_diag_gemv(G.layout(), g32.data(), b.data(), x32.data());
    Array<float> d32 = upload(gpu, g32);
    y = upload(gpu, std::vector<double>(b.size(), nan_v));
    kg::block_diag_gemv(gpu->stream(), inv.layout, d32.data(), db.data(), y.data());
    ASSERT_LE(gemv_error_ratio(R, R.values, b, y.to_host(), x32), 1.0) << label << " fp32 gemv";
  }
}

TEST(BatchedGhGpu, VariableBatchesWithoutSizeIndex)
{
  // The whole-batch launch at the batch's largest width (a layout without by_size): every variable batch
  // of gpu_batches, factors, solutions and inverses against the CPU as in MatchesCpuOnWellConditionedBlocks.
  auto gpu = Executor::create_cuda(0);
  g_size_index = false;
  int checked = 0;
  for (auto& [what, B] : gpu_batches(false)) {
    if (B.uniform) continue;
    fill_batch(B, Kind::well_conditioned);
    const auto b = rhs(B);
    for (GhStorage s : both_storages) {
      Batch F = B;
      std::vector<index_t> perm(static_cast<std::size_t>(B.rows()));
      std::vector<int> info(static_cast<std::size_t>(B.count()));
      kc::gauss_huard_factor(F.layout(), F.values.data(), perm.data(), info.data(), s);
      std::vector<double> x(b.size());
      kc::gauss_huard_solve(F.layout(), F.values.data(), perm.data(), s, b.data(), x.data());
      const GpuResult g = gpu_gauss_huard(gpu, B, s, b);
      EXPECT_EQ(g.info, info) << what;
      EXPECT_EQ(g.perm, perm) << what;
      EXPECT_LE(max_block_rel_diff(B, g.x, x, false), 1e-12) << what << " " << to_string(s);
      ++checked;
    }
    Batch I = B;
    std::vector<int> info(static_cast<std::size_t>(B.count()));
    kc::gauss_jordan_invert(I.layout(), I.values.data(), info.data());
    const GpuResult g = gpu_gauss_jordan(gpu, B, b);
    EXPECT_EQ(g.info, info) << what;
    EXPECT_LE(max_block_rel_diff(B, g.factors, I.values, true), 1e-12) << what << " inverse";
  }
  g_size_index = true;
  EXPECT_EQ(checked, 10);
}

TEST(BatchedGhGpu, BackwardStableOnEveryKind)
{
  // The GPU's own results against the stability bounds (pivots may legitimately differ from the
  // CPU's on graded and ill-conditioned blocks, where near-ties exist).
  auto gpu = Executor::create_cuda(0);
  int blocks = 0;
  for (auto& [label, B0] : gpu_batches(false))
    for (Kind kind : all_kinds) {
      Batch B = B0;
      fill_batch(B, kind);
      std::vector<double> b(static_cast<std::size_t>(B.rows()));
      for (index_t k = 0; k < B.count(); ++k) {  // b = A x_true
        std::vector<double> xt(B.sizes[k]);
        for (auto& e : xt) e = uniform();
        matvec(B.sizes[k], B.block(k), xt.data(), b.data() + B.row_off[k]);
      }
      const std::string what = label + " " + to_string(kind);
      for (GhStorage s : both_storages) {
        const GpuResult g = gpu_gauss_huard(gpu, B, s, b);
        for (index_t k = 0; k < B.count(); ++k) {
          const int n = B.sizes[k];
          ASSERT_EQ(g.info[k], 0) << what << " block " << k;
          ASSERT_TRUE(is_permutation(n, g.perm.data() + B.row_off[k])) << what << " block " << k;
          ASSERT_LE(backward_error(n, B.block(k), g.x.data() + B.row_off[k], b.data() + B.row_off[k]), stable_bound(n))
              << what << " " << to_string(s) << " block " << k << " n " << n;
          ++blocks;
        }
      }
      const GpuResult g = gpu_gauss_jordan(gpu, B, b);
      std::vector<double> y_ref(b.size());  // the CPU GEMV of the GPU's inverse
      kc::block_diag_gemv(B.layout(), g.factors.data(), b.data(), y_ref.data());
      ASSERT_LE(gemv_error_ratio(B, g.factors, b, g.x, y_ref), 1.0) << what << " gemv";
      const bool well = kind == Kind::well_conditioned || kind == Kind::permuted_diagonal;
      for (index_t k = 0; k < B.count(); ++k) {
        const int n = B.sizes[k];
        ASSERT_EQ(g.info[k], 0) << what << " GJE block " << k;
        ASSERT_LE(inverse_residual(n, B.block(k), g.factors.data() + B.mat_off[k]), stable_bound(n))
            << what << " GJE block " << k << " n " << n;
        if (well) {  // an applied inverse is backward stable only while cond(A) is small
          ASSERT_LE(backward_error(n, B.block(k), g.x.data() + B.row_off[k], b.data() + B.row_off[k]), stable_bound(n))
              << what << " GJE applied block " << k << " n " << n;
        }
      }
    }
  std::printf("%d GPU block solves checked\n", blocks);
}

TEST(BatchedGhGpu, SingularBlocksReportedOthersUnaffected)
{
  auto gpu = Executor::create_cuda(0);
  // Variable batches (lo < hi) and uniform ones (lo == hi: 4, 9 and 13 rows go through the lane factor, 16 through
  // the group factor), 97 blocks each so that the lane factor's last group of a warp is partial.
  for (auto [lo, hi] : {std::pair{1, 32}, std::pair{1, 8}, std::pair{9, 16}, std::pair{4, 4}, std::pair{9, 9},
                        std::pair{13, 13}, std::pair{16, 16}}) {
    Batch B = lo < hi ? variable_batch(lo, hi, 8, 0) : uniform_batch(lo, 97);
    std::vector<int> expect(B.count(), 0);
    const Singular kinds[] = {Singular::zero_column, Singular::zero_row, Singular::duplicate_rows_exact,
                              Singular::duplicate_rows};
    for (index_t k = 0; k < B.count(); ++k) {
      if (k % 3 == 1)
        expect[k] = make_singular(kinds[(k / 3) % 4], B.sizes[k], B.block(k));
      else
        fill_block(Kind::well_conditioned, B.sizes[k], B.block(k));
    }
    const auto b = rhs(B);
    for (GhStorage s : both_storages) {
      const GpuResult g = gpu_gauss_huard(gpu, B, s, b);
      for (index_t k = 0; k < B.count(); ++k) {
        const int n = B.sizes[k];
        ASSERT_EQ(g.info[k], expect[k]) << to_string(s) << " block " << k << " n " << n;
        ASSERT_TRUE(is_permutation(n, g.perm.data() + B.row_off[k])) << "block " << k;
        if (expect[k] == 0) {
          ASSERT_LE(backward_error(n, B.block(k), g.x.data() + B.row_off[k], b.data() + B.row_off[k]), stable_bound(n));
        }
      }
    }
    const GpuResult g = gpu_gauss_jordan(gpu, B, b);
    for (index_t k = 0; k < B.count(); ++k) {
      ASSERT_EQ(g.info[k], expect[k]) << "GJE block " << k << " n " << B.sizes[k];
      if (expect[k] == 0) {
        ASSERT_LE(inverse_residual(B.sizes[k], B.block(k), g.factors.data() + B.mat_off[k]), stable_bound(B.sizes[k]));
      }
    }
  }
}

TEST(BatchedGhGpu, NonFiniteAndZeroBlocksReported)
{
  auto gpu = Executor::create_cuda(0);
  const double inf = std::numeric_limits<double>::infinity();
  Batch B = make_batch({3, 3, 3, 1, 3}, false);
  B.values = {nan_v, 1, 0, 0, 1, 0, 0, 0, 1,  //
              1, 0, 0, 0, inf, 0, 0, 0, 1,    //
              1, 0, 0, 0, 1, 0, 0, 0, 1,      //
              0,                              //
              0, 0, 0, 0, 0, 0, 0, 0, 0};
  const std::vector<int> expect{1, 1, 0, 1, 1};
  const auto b = rhs(B);
  EXPECT_EQ(gpu_gauss_huard(gpu, B, GhStorage::standard, b).info, expect);
  EXPECT_EQ(gpu_gauss_huard(gpu, B, GhStorage::transposed, b).info, expect);
  EXPECT_EQ(gpu_gauss_jordan(gpu, B, b).info, expect);
}

TEST(BatchedGhGpu, BlockLargerThanMaxSizeIsFlaggedNotTouched)
{
  // The kernels cannot throw: a block larger than the declared max_size gets info -1, NaN
  // outputs, and its matrix is left alone; the other blocks are unaffected. Block 1 is larger
  // than max_size: beyond the lane group (12 > 8, 33 > 32) or within it (14 > 12 with 16 lanes,
  // 20 > 17 with 32 lanes; the run-time loop kernels of the solve).
  auto gpu = Executor::create_cuda(0);
  struct Case {
    int max_size;
    std::vector<int> sizes;
  };
  for (const Case& cs : {Case{8, {3, 12, 5, 8, 2}}, Case{12, {3, 14, 5, 12, 2}}, Case{17, {3, 20, 16, 17, 2}},
                         Case{32, {3, 33, 31, 32, 2}}}) {
    Batch B = make_batch(cs.sizes, false);
    fill_batch(B, Kind::well_conditioned);
    const auto b = rhs(B);
    const int big = B.sizes[1];
    const std::string what = "max_size " + std::to_string(cs.max_size);
    for (GhStorage s : both_storages) {
      DeviceBatch D(gpu, B);
      D.layout.max_size = cs.max_size;
      Array<index_t> perm = upload(gpu, std::vector<index_t>(B.rows(), 0));
      Array<int> info = upload(gpu, std::vector<int>(B.count(), 99));
      Array<double> db = upload(gpu, b);
      Array<double> x = upload(gpu, std::vector<double>(b.size(), 0.0));
      kg::gauss_huard_factor(gpu->stream(), D.layout, D.values.data(), perm.data(), info.data(), s);
      kg::gauss_huard_solve(gpu->stream(), D.layout, D.values.data(), perm.data(), s, db.data(), x.data());
      const auto hinfo = info.to_host();
      const auto hx = x.to_host();
      const auto hv = D.values.to_host();
      EXPECT_EQ(hinfo, (std::vector<int>{0, -1, 0, 0, 0})) << what;
      for (int i = 0; i < big; ++i) EXPECT_TRUE(std::isnan(hx[B.row_off[1] + i])) << what;
      for (int e = 0; e < big * big; ++e) ASSERT_EQ(hv[B.mat_off[1] + e], B.values[B.mat_off[1] + e]) << what;
      for (index_t k : {0, 2, 3, 4})
        EXPECT_LE(backward_error(B.sizes[k], B.block(k), hx.data() + B.row_off[k], b.data() + B.row_off[k]),
                  stable_bound(B.sizes[k]))
            << what << " block " << k;
    }
    DeviceBatch D(gpu, B);
    D.layout.max_size = cs.max_size;
    Array<int> info = upload(gpu, std::vector<int>(B.count(), 99));
    Array<double> db = upload(gpu, b);
    Array<double> y = upload(gpu, std::vector<double>(b.size(), 0.0));
    kg::gauss_jordan_invert(gpu->stream(), D.layout, D.values.data(), info.data());
    kg::block_diag_gemv(gpu->stream(), D.layout, D.values.data(), db.data(), y.data());
    EXPECT_EQ(info.to_host(), (std::vector<int>{0, -1, 0, 0, 0})) << what;
    const auto hy = y.to_host();
    const auto hv = D.values.to_host();
    for (int i = 0; i < big; ++i) EXPECT_TRUE(std::isnan(hy[B.row_off[1] + i])) << what;
    for (int e = 0; e < big * big; ++e) ASSERT_EQ(hv[B.mat_off[1] + e], B.values[B.mat_off[1] + e]) << what;
    for (index_t k : {0, 2, 3, 4})
      EXPECT_LE(backward_error(B.sizes[k], B.block(k), hy.data() + B.row_off[k], b.data() + B.row_off[k]),
                stable_bound(B.sizes[k]))
          << what << " block " << k;
  }
}

TEST(BatchedGhGpu, GemvOfVariableLayoutsWithGapsAndEmptyBlocks)
{
  // The row-ordered GEMV of variable layouts (gemv_rows_kernel) on what block-Jacobi's agglomerated layouts may
  // hold: blocks of 0..32 rows (every tenth empty, and a run of 70 empty blocks, longer than a window of 32),
  // stored with NaN-filled gaps between them (a read outside a block poisons its row), 4001 blocks (the
  // search for a warp's first block runs several rounds), fp64 and fp32 inverses, with and without a size
  // index; every row of y poisoned first. Each row against the CPU reference within 4 n eps sum |a| |x|.
  auto gpu = Executor::create_cuda(0);
  const index_t count = 4001;
  std::vector<index_t> row_off{0};
  std::vector<size64_t> mat_off{0};
  for (index_t b = 0; b < count; ++b) {
    const int n = (b % 10 == 3 || (b >= 2000 && b < 2070)) ? 0 : uniform_int(1, 32);
    row_off.push_back(row_off.back() + n);
    mat_off.push_back(mat_off.back() + size64_t(n) * n + size64_t(b % 3));
  }
  std::vector<double> values(mat_off.back(), nan_v);
  for (index_t b = 0; b < count; ++b) {
    const size64_t n = size64_t(row_off[b + 1] - row_off[b]);
    for (size64_t e = 0; e < n * n; ++e) values[mat_off[b] + e] = uniform();
  }
  std::vector<float> values32(values.size());
  for (std::size_t k = 0; k < values.size(); ++k) values32[k] = static_cast<float>(values[k]);
  std::vector<double> x(std::size_t(row_off.back()));
  for (auto& v : x) v = uniform();
  BatchLayout H;
  H.count = count;
  H.row_off = row_off.data();
  H.mat_off = mat_off.data();
  H.max_size = 32;
  std::vector<double> want(x.size()), want32(x.size());
  kc::block_diag_gemv(H, values.data(), x.data(), want.data());
  kc::block_diag_gemv(H, values32.data(), x.data(), want32.data());

  Array<index_t> drow = upload(gpu, row_off);
  Array<size64_t> dmat = upload(gpu, mat_off);
  Array<double> dv = upload(gpu, values), dx = upload(gpu, x);
  Array<float> dv32 = upload(gpu, values32);
  std::vector<index_t> order;
  kernels::BatchSizeIndex ix = kernels::sort_by_size(count, row_off.data(), order);
  Array<index_t> dorder = upload(gpu, order);
  ix.order = dorder.data();
  for (bool indexed : {false, true})
    for (bool fp32 : {false, true}) {
      const std::string what = std::string(indexed ? "size index" : "no size index") + (fp32 ? ", fp32" : ", fp64");
      BatchLayout L = H;
      L.row_off = drow.data();
      L.mat_off = dmat.data();
      L.by_size = indexed ? &ix : nullptr;
      Array<double> y = upload(gpu, std::vector<double>(x.size(), nan_v));
      if (fp32) kg::block_diag_gemv(gpu->stream(), L, dv32.data(), dx.data(), y.data());
      else kg::block_diag_gemv(gpu->stream(), L, dv.data(), dx.data(), y.data());
      const std::vector<double> got = y.to_host();
      const std::vector<double>& ref = fp32 ? want32 : want;
      for (index_t b = 0; b < count; ++b) {
        const int n = row_off[b + 1] - row_off[b];
        for (int i = 0; i < n; ++i) {
          double mag = 0.0;
          for (int j = 0; j < n; ++j)
            mag += std::abs((fp32 ? double(values32[mat_off[b] + size64_t(i) * n + j]) : values[mat_off[b] + size64_t(i) * n + j]) *
                            x[std::size_t(row_off[b] + j)]);
          const std::size_t r = std::size_t(row_off[b] + i);
          ASSERT_TRUE(std::isfinite(got[r])) << what << ": block " << b << " row " << i;
          ASSERT_LE(std::abs(got[r] - ref[r]), 4.0 * n * std::numeric_limits<double>::epsilon() * mag)
              << what << ": block " << b << " row " << i;
        }
      }
    }
}

TEST(BatchedGhGpu, InvalidArgumentsThrowBeforeLaunchAndEmptyBatchesAreNoOps)
{
  auto gpu = Executor::create_cuda(0);
  Batch B = uniform_batch(4, 3);
  fill_batch(B, Kind::random);
  DeviceBatch D(gpu, B);
  Array<index_t> perm(gpu, B.rows());
  Array<int> info(gpu, B.count());
  Array<double> x(gpu, B.rows()), y(gpu, B.rows());
  BatchLayout L = D.layout;
  L.max_size = L.uniform = 33;
  EXPECT_THROW(kg::gauss_huard_factor(gpu->stream(), L, D.values.data(), perm.data(), info.data(), GhStorage::standard),
               std::invalid_argument);
  EXPECT_THROW(kg::block_diag_gemv(gpu->stream(), L, D.values.data(), x.data(), y.data()), std::invalid_argument);
  L = D.layout;
  L.max_size = 0;
  EXPECT_THROW(kg::gauss_jordan_invert(gpu->stream(), L, D.values.data(), info.data()), std::invalid_argument);
  L = D.layout;
  L.uniform = 0;  // variable layout without offsets
  EXPECT_THROW(kg::gauss_huard_solve(gpu->stream(), L, D.values.data(), perm.data(), GhStorage::transposed, x.data(),
                                     y.data()),
               std::invalid_argument);
  L = D.layout;
  L.count = 0;
  EXPECT_NO_THROW(kg::gauss_huard_factor(gpu->stream(), L, D.values.data(), perm.data(), info.data(), GhStorage::standard));
  EXPECT_NO_THROW(kg::gauss_huard_solve(gpu->stream(), L, D.values.data(), perm.data(), GhStorage::standard, x.data(),
                                        y.data()));
  EXPECT_NO_THROW(kg::gauss_jordan_invert(gpu->stream(), L, D.values.data(), info.data()));
  EXPECT_NO_THROW(kg::block_diag_gemv(gpu->stream(), L, D.values.data(), x.data(), y.data()));
  gpu->synchronize();
}
