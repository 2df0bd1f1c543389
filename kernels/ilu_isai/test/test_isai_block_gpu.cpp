// CUDA block-view ISAI generation against the CPU reference: every kind, bs 1..8, 12, 14, 16, 32,
// 33, k = 1..3, both storages, on odd-sized 3D stencils, random patterns with hub rows/columns
// (short and long block columns in one generation), block-diagonal and bidiagonal patterns
// (short columns of m = 32 with 1..4 warps per block) and a stencil with more long columns
// than the long kernel has blocks (scratch slices reused); NaN-poisoned M (every value must be
// written), info poisoned and checked; pivoting through zero diagonals, singular systems (info
// equal to the CPU's), regeneration into the same arrays, argument checks. Short columns packed
// 32 / W per warp: every kind with W = 4, 8, 16 (tridiagonal, block-diagonal and stencil patterns
// with bs 1..4, column counts that leave the last warp partly filled, columns of different m in
// one warp) and 32, checked to be covered; pivoting, pivot ties (Hadamard blocks, W = 4..32) and
// singular columns with small W. Label `gpu`.
#include "kernels/ilu_isai/isai_block.hpp"
#include "kernels/ilu_isai/test/device_test_util.hpp"
#include "kernels/ilu_isai/test/isai_block_test_util.hpp"
#include "linalg/array.hpp"
#include "linalg/executor.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

using namespace blockres;
using namespace blockres::test_device;
using namespace blockres::test_isai_block;
using kernels::isai_block_pattern;
namespace kc = blockres::kernels::cpu;
namespace kg = blockres::kernels::cuda;

namespace {

// A's pattern and values (both storages) in device memory.
struct DeviceMatrix {
  index_t nb;
  int bs;
  Array<index_t> row_ptr, col;
  Array<double> bsr, rows;
  explicit DeviceMatrix(const BlockMatrix& A)
      : nb(A.P.nb), bs(A.bs), row_ptr(upload(A.P.row_ptr)), col(upload(A.P.col)), bsr(upload(A.bsr)),
        rows(upload(A.scalar_rows()))
  {
  }
  BlockValuesView<const double> view(BlockStorage s) const
  {
    return {nb, bs, row_ptr.data(), col.data(), s == BlockStorage::bsr ? bsr.data() : rows.data(), s};
  }
};

// A pattern's device arrays and the view that points at them.
struct DevicePattern {
  Array<index_t> col_ptr, row_ind, bsr_pos, short_cols, long_cols;
  kg::IsaiBlockDevicePattern view;
  explicit DevicePattern(const IsaiBlockPattern& p)
      : col_ptr(upload(p.col_ptr)), row_ind(upload(p.row_ind)), bsr_pos(upload(p.bsr_pos)),
        short_cols(upload(p.short_cols)), long_cols(upload(p.long_cols))
  {
    view = {&p, col_ptr.data(), row_ind.data(), bsr_pos.data(), short_cols.data(), long_cols.data()};
  }
};


IsaiBlockPattern pattern_of(const BlockPattern& P, IsaiKind kind, int bs, int k)
{
  return isai_block_pattern(kind, P.nb, bs, P.row_ptr.data(), P.col.data(), k);
}

struct Result {
  std::vector<double> m;
  int info;
};

Result cpu_generate(const IsaiBlockPattern& p, const BlockMatrix& A)
{
  Result r{std::vector<double>(static_cast<std::size_t>(p.nnzb()) * p.bs * p.bs, nan_v), -7};
  r.info = kc::isai_block_generate(p, A.view(A.bsr, BlockStorage::bsr), r.m.data());
  return r;
}

// Generation into NaN-poisoned M and an info of -7, with freshly allocated scratch.
Result gpu_generate(const IsaiBlockPattern& p, const DevicePattern& dp, BlockValuesView<const double> dA)
{
  Array<double> scratch(gpu(), kg::isai_block_scratch_doubles(p));
  Array<double> m = upload(std::vector<double>(static_cast<std::size_t>(p.nnzb()) * p.bs * p.bs, nan_v));
  Array<int> info = upload(std::vector<int>{-7});
  kg::isai_block_generate(gpu()->stream(), dp.view, dA, m.data(), scratch.data(), info.data());
  gpu()->synchronize();
  return {m.to_host(), info.to_host()[0]};
}

// The generation of a nonsingular A on the GPU, in both storages: info 0, every value written and
// finite, equal to the CPU's `ref` and with a small pattern residual.
void expect_gpu_matches_cpu(const BlockMatrix& A, IsaiKind kind, const IsaiBlockPattern& p, const DevicePattern& dp,
                            const DeviceMatrix& dA, const Result& ref, const std::string& what)
{
  for (BlockStorage s : both_storages) {
    const Result g = gpu_generate(p, dp, dA.view(s));
    EXPECT_EQ(g.info, 0) << what << " " << to_string(s);
    ASSERT_EQ(count_non_finite(g.m), 0u) << what << " " << to_string(s);
    EXPECT_LE(max_column_rel_diff(p, g.m, ref.m), 1e-12) << what << " " << to_string(s);
    EXPECT_LE(max_pattern_residual(A, kind, p, g.m), 1e-12) << what << " " << to_string(s);
  }
}

struct Case {
  std::string label;
  BlockPattern P;
  int bs, max_k;
  bool mixed;  // short and long columns at every k and kind
};
std::vector<Case> gpu_cases()
{
  std::vector<Case> out;
  for (int bs : {1, 2, 3, 4, 5, 6, 7, 8}) {
    out.push_back({"stencil 9x7x5", stencil_pattern(9, 7, 5), bs, 3, false});
    out.push_back({"random+hubs 301", random_pattern(301, 1, 5, 97, 20), bs, 2, bs == 2});
  }
  out.push_back({"random+hubs 1001 (k=1 mixed)", random_pattern(1001, 1, 3, 199, 40), 1, 1, true});
  // Small systems, several columns per warp (W = 4, 8, 16; 37 and 101 columns: last warp partly
  // filled; the end columns shorter than the others).
  for (int bs : {1, 2, 3, 4}) {
    out.push_back({"tridiagonal 37", band_pattern(37, 1), bs, 2, false});
    out.push_back({"block diagonal 101 (small)", band_pattern(101, 0), bs, 1, false});
  }
  for (int bs : {12, 16}) out.push_back({"stencil 7x5x3", stencil_pattern(7, 5, 3), bs, 2, false});
  for (int bs : {14, 16, 32}) out.push_back({"block diagonal 101", band_pattern(101, 0), bs, 1, false});
  out.push_back({"bidiagonal 33 (m = 32)", band_pattern(33, 1), 16, 1, false});
  out.push_back({"stencil 9x9x9 (729 long columns)", stencil_pattern(9, 9, 9), 33, 1, false});
  return out;
}

}  // namespace

TEST(IsaiBlockGpu, GenerateMatchesCpu)
{
  std::set<std::pair<int, int>> packed;  // (kind, W) run with the last warp partly filled (W < 32)
  for (const Case& c : gpu_cases()) {
    const BlockMatrix A = dominant_values(c.P, c.bs);
    const DeviceMatrix dA(A);
    for (IsaiKind kind : all_kinds)
      for (int k = 1; k <= c.max_k; ++k) {
        const std::string what = c.label + " bs=" + std::to_string(c.bs) + " " + to_string(kind) + " k=" + std::to_string(k);
        const IsaiBlockPattern p = pattern_of(c.P, kind, c.bs, k);
        if (c.mixed) {
          ASSERT_FALSE(p.short_cols.empty()) << what;
          ASSERT_FALSE(p.long_cols.empty()) << what;
        }
        if (p.long_cols.size() > 600) {
          // More long columns than the long kernel has blocks: bounded scratch, slices reused.
          EXPECT_LT(kg::isai_block_scratch_doubles(p), size64_t(p.long_cols.size()) * p.max_long_m * p.max_long_m)
              << what;
        }
        // One launch per lane-group width W (short_bucket_ptr), 32 / W columns per warp.
        std::string widths;
        for (int b = 0; b < 4; ++b) {
          const int w = 4 << b;
          const index_t count = p.short_bucket_ptr[b + 1] - p.short_bucket_ptr[b];
          if (count > 0) widths += " " + std::to_string(count) + "@W" + std::to_string(w);
          if (count > 0 && (w == 32 || count % (32 / w) != 0)) packed.insert({static_cast<int>(kind), w});
        }
        const Result ref = cpu_generate(p, A);
        ASSERT_EQ(ref.info, 0) << what;
        const DevicePattern dp(p);
        for (BlockStorage s : both_storages) {
          const std::string where = what + " " + to_string(s) + " (" + std::to_string(p.short_cols.size()) +
                                    " short:" + widths + ", " + std::to_string(p.long_cols.size()) +
                                    " long columns, max long m " + std::to_string(p.max_long_m) + ")";
          const Result g = gpu_generate(p, dp, dA.view(s));
          EXPECT_EQ(g.info, 0) << where;
          ASSERT_EQ(count_non_finite(g.m), 0u) << where << ": values left unwritten (or not finite)";
          EXPECT_LE(max_column_rel_diff(p, g.m, ref.m), 1e-12) << where;
        }
      }
  }
  for (IsaiKind kind : all_kinds)
    for (int w : {4, 8, 16, 32})
      EXPECT_TRUE(packed.count({static_cast<int>(kind), w})) << to_string(kind) << " W=" << w << " not covered";
}

TEST(IsaiBlockGpu, GeneralPivotsThroughZeroDiagonals)
{
  const std::pair<std::string, BlockPattern> patterns[] = {
      {"stencil 9x7x5", stencil_pattern(9, 7, 5)},
      {"random+hubs 301", random_pattern(301, 1, 5, 97, 20)},
      {"tridiagonal 37", band_pattern(37, 1)},        // W = 8, 16 (bs 2..5, k = 1, 2)
      {"block diagonal 101", band_pattern(101, 0)},  // W = 4 (bs 2..4), 8, 16
  };
  for (const auto& [label, P] : patterns)
    for (int bs : {2, 3, 4, 5, 8})
      for (int k = 1; k <= 2; ++k) {
        const std::string what = label + " bs=" + std::to_string(bs) + " k=" + std::to_string(k);
        const BlockMatrix A = shifted_dominant_values(P, bs);
        const DeviceMatrix dA(A);
        const IsaiBlockPattern p = pattern_of(P, IsaiKind::general, bs, k);
        const DevicePattern dp(p);
        const Result ref = cpu_generate(p, A);
        ASSERT_EQ(ref.info, 0) << what;
        ASSERT_NO_FATAL_FAILURE(expect_gpu_matches_cpu(A, IsaiKind::general, p, dp, dA, ref, what));
      }
}

TEST(IsaiBlockGpu, GeneralPivotTiesOnHadamardBlocks)
{
  // Block-diagonal A whose blocks are Sylvester-Hadamard matrices with random row signs: every
  // elimination step of general has several candidates of equal |entry|, which every lane of a
  // group must resolve to the same (lowest) row; W = bs = 4, 8, 16, 32, 37 columns (last warp
  // partly filled). All kinds (the triangles have unit or +-1 diagonals: nonsingular).
  const BlockPattern P = band_pattern(37, 0);
  for (int bs : {4, 8, 16, 32}) {
    BlockMatrix A{P, bs, {}};
    A.bsr.assign(static_cast<std::size_t>(A.nnzb()) * bs * bs, 0.0);
    for (index_t q = 0; q < A.nnzb(); ++q)
      for (int a = 0; a < bs; ++a) {
        const double sign = uniform(0, 1) < 0.5 ? -1.0 : 1.0;
        for (int c = 0; c < bs; ++c) A.at(q, a, c) = (std::popcount(static_cast<unsigned>(a & c)) % 2 ? -sign : sign);
      }
    const DeviceMatrix dA(A);
    for (IsaiKind kind : all_kinds) {
      const std::string what = "bs=" + std::to_string(bs) + " " + to_string(kind);
      const IsaiBlockPattern p = pattern_of(P, kind, bs, 1);
      // Every column m = bs: all in the bucket of width bs (4 << b == bs).
      const int b = bs == 4 ? 0 : bs == 8 ? 1 : bs == 16 ? 2 : 3;
      ASSERT_EQ(p.short_bucket_ptr[b + 1] - p.short_bucket_ptr[b], index_t(p.short_cols.size())) << what;
      const DevicePattern dp(p);
      const Result ref = cpu_generate(p, A);
      ASSERT_EQ(ref.info, 0) << what;
      ASSERT_NO_FATAL_FAILURE(expect_gpu_matches_cpu(A, kind, p, dp, dA, ref, what));
    }
  }
}

TEST(IsaiBlockGpu, SingularSystemsGiveTheCpuInfo)
{
  // general: a zero block row (in short columns only, or in a hub's long ones too); upper: a zero
  // diagonal entry. The info is the smallest failing block column + 1, as on the CPU.
  // The stencil's short columns run packed (W = 4..16 for bs 1, 2).
  struct SingularCase {
    std::string label;
    BlockPattern P;
    std::vector<int> block_sizes;
    std::vector<index_t> rows;
  };
  const SingularCase cases[] = {
      {"random+hubs 301", random_pattern(301, 1, 5, 97, 20), {1, 2, 5}, {0, 30, 48, 150, 300}},
      {"stencil 9x7x5", stencil_pattern(9, 7, 5), {1, 2}, {0, 157, 314}},
  };
  for (const auto& [label, P, block_sizes, rows] : cases)
    for (int bs : block_sizes)
      for (index_t r : rows) {
        const std::string what = label + " bs=" + std::to_string(bs) + " row " + std::to_string(r);
        BlockMatrix A = dominant_values(P, bs);
        for (index_t q = P.row_ptr[r]; q < P.row_ptr[r + 1]; ++q)
          if (P.col[q] == r) A.at(q, bs - 1, bs - 1) = 0.0;
        for (IsaiKind kind : {IsaiKind::general, IsaiKind::upper}) {
          BlockMatrix Z = A;
          if (kind == IsaiKind::general)
            for (index_t q = P.row_ptr[r]; q < P.row_ptr[r + 1]; ++q)
              for (int a = 0; a < bs; ++a)
                for (int c = 0; c < bs; ++c) Z.at(q, a, c) = 0.0;
          for (int k = 1; k <= 2; ++k) {
            const IsaiBlockPattern p = pattern_of(P, kind, bs, k);
            const DevicePattern dp(p);
            const DeviceMatrix dZ(Z);
            const int ref = cpu_generate(p, Z).info;
            ASSERT_GT(ref, 0) << what;
            for (BlockStorage s : both_storages)
              EXPECT_EQ(gpu_generate(p, dp, dZ.view(s)).info, ref)
                  << what << " " << to_string(kind) << " k=" << k << " " << to_string(s);
          }
        }
      }
}

TEST(IsaiBlockGpu, RegenerationIntoTheSameArrays)
{
  // The setup reuses pattern, scratch, M and info across Newton steps: a singular generation, then
  // one with good values into the same arrays must reset info and overwrite every value.
  const BlockPattern P = random_pattern(301, 1, 5, 97, 20);
  for (int bs : {1, 3}) {
    BlockMatrix A = dominant_values(P, bs);
    BlockMatrix Z = A;
    for (index_t q = P.row_ptr[97 + 48]; q < P.row_ptr[97 + 49]; ++q)
      for (int a = 0; a < bs; ++a)
        for (int c = 0; c < bs; ++c) Z.at(q, a, c) = 0.0;
    const IsaiBlockPattern p = pattern_of(P, IsaiKind::general, bs, 2);
    ASSERT_FALSE(p.long_cols.empty());
    const DevicePattern dp(p);
    DeviceMatrix dA(Z);
    Array<double> scratch(gpu(), kg::isai_block_scratch_doubles(p));
    Array<double> m = upload(std::vector<double>(static_cast<std::size_t>(p.nnzb()) * bs * bs, nan_v));
    Array<int> info = upload(std::vector<int>{-7});
    kg::isai_block_generate(gpu()->stream(), dp.view, dA.view(BlockStorage::bsr), m.data(), scratch.data(), info.data());
    gpu()->synchronize();
    EXPECT_EQ(info.to_host()[0], cpu_generate(p, Z).info);
    dA.bsr.copy_from_host(std::span<const double>(A.bsr));
    kg::isai_block_generate(gpu()->stream(), dp.view, dA.view(BlockStorage::bsr), m.data(), scratch.data(), info.data());
    gpu()->synchronize();
    EXPECT_EQ(info.to_host()[0], 0) << "bs=" << bs;
    EXPECT_LE(max_column_rel_diff(p, m.to_host(), cpu_generate(p, A).m), 1e-12) << "bs=" << bs;
  }
}

TEST(IsaiBlockGpu, ArgumentChecksAndEmptyMatrix)
{
  const BlockMatrix A = dominant_values(band_pattern(40, 3), 5);  // m = 35 > 32: long columns
  const DeviceMatrix dA(A);
  const IsaiBlockPattern p = pattern_of(A.P, IsaiKind::general, 5, 1);
  ASSERT_GT(kg::isai_block_scratch_doubles(p), 0);
  const DevicePattern dp(p);
  Array<double> m(gpu(), p.nnzb() * 25), scratch(gpu(), kg::isai_block_scratch_doubles(p));
  Array<int> info(gpu(), 1);
  const stream_t s = gpu()->stream();
  kg::IsaiBlockDevicePattern no_host = dp.view;
  no_host.host = nullptr;
  EXPECT_THROW(kg::isai_block_generate(s, no_host, dA.view(BlockStorage::bsr), m.data(), scratch.data(), info.data()),
               std::invalid_argument);
  EXPECT_THROW(kg::isai_block_generate(s, dp.view, dA.view(BlockStorage::bsr), m.data(), nullptr, info.data()),
               std::invalid_argument)
      << "long columns need scratch";
  EXPECT_THROW(kg::isai_block_generate(s, dp.view, dA.view(BlockStorage::bsr), m.data(), scratch.data(), nullptr),
               std::invalid_argument);
  auto wrong = dA.view(BlockStorage::scalar_rows);
  wrong.bs = 2;
  EXPECT_THROW(kg::isai_block_generate(s, dp.view, wrong, m.data(), scratch.data(), info.data()), std::invalid_argument);
  wrong.bs = 5, wrong.nrows = 39;
  EXPECT_THROW(kg::isai_block_generate(s, dp.view, wrong, m.data(), scratch.data(), info.data()), std::invalid_argument);

  // No block rows: nothing to launch, but info is still written.
  const std::vector<index_t> rp0{0};
  const IsaiBlockPattern p0 = isai_block_pattern(IsaiKind::upper, 0, 3, rp0.data(), nullptr, 2);
  EXPECT_EQ(kg::isai_block_scratch_doubles(p0), 0);
  const Array<index_t> drp0 = upload(rp0);
  const DevicePattern dp0(p0);
  Array<int> info0 = upload(std::vector<int>{-7});
  EXPECT_NO_THROW(kg::isai_block_generate(s, dp0.view, {0, 3, drp0.data(), nullptr, nullptr, BlockStorage::bsr},
                                          nullptr, nullptr, info0.data()));
  gpu()->synchronize();
  EXPECT_EQ(info0.to_host()[0], 0);
}
