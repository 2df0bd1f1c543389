// BSR SpMV, row balancing, segmented reduction and the BSR-to-CSR expansion (CPU references) against hand-computed values.
#include "kernels/spmv/bsr_to_csr.hpp"
#include "kernels/spmv/bsrmv.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace blockres;

TEST(BsrmvCpu, HandValuesTwoByTwo)
{
  // A = [[B00, 0], [B10, B11]] with 2x2 blocks:
  //   B00 = [1 2; 3 4], B10 = [0 1; 1 0], B11 = [2 0; 0 3]
  std::vector<index_t> row_ptr{0, 1, 3}, col{0, 0, 1};
  std::vector<double> val{1, 2, 3, 4, 0, 1, 1, 0, 2, 0, 0, 3};
  BsrView<const double> A{2, 2, 2, row_ptr.data(), col.data(), val.data()};
  std::vector<double> x{1, -1, 2, 0.5};
  std::vector<double> y(4, std::numeric_limits<double>::quiet_NaN());
  kernels::cpu::bsrmv(A, 1.0, x.data(), 0.0, y.data());
  // row block 0: [1*1+2*-1, 3*1+4*-1] = [-1, -1]; row block 1: B10 x0 + B11 x1 = [-1, 1] + [4, 1.5]
  EXPECT_EQ(y, (std::vector<double>{-1, -1, 3, 2.5}));
  kernels::cpu::bsrmv(A, 2.0, x.data(), -1.0, y.data());  // y = 2 A x - y = A x
  EXPECT_EQ(y, (std::vector<double>{-1, -1, 3, 2.5}));
}

TEST(BsrmvCpu, EmptyRowsGiveBetaTimesY)
{
  std::vector<index_t> row_ptr{0, 0, 0}, col;
  std::vector<double> val, x{1, 2, 3};
  BsrView<const double> A{2, 1, 3, row_ptr.data(), col.data(), val.data()};
  std::vector<double> y{1, 2, 3, 4, 5, 6};
  kernels::cpu::bsrmv(A, 5.0, x.data(), 0.5, y.data());
  EXPECT_EQ(y, (std::vector<double>{0.5, 1, 1.5, 2, 2.5, 3}));
}

TEST(BalanceRows, SplitsLongRowsKeepsEmptyOnes)
{
  // Rows of 0, 7, 2 and 5 blocks, at most 3 blocks per segment.
  const std::vector<index_t> row_ptr{0, 0, 7, 9, 14};
  const auto b = kernels::balance_rows(row_ptr.data(), 4, 3);
  EXPECT_EQ(b.row_ptr, (std::vector<index_t>{0, 0, 3, 6, 7, 9, 12, 14}));
  EXPECT_EQ(b.seg_ptr, (std::vector<index_t>{0, 1, 4, 5, 7}));
}

TEST(SegmentReduce, SumsSegmentsWithAlphaBeta)
{
  // Two rows of bs 2: row 0 has segments {0, 1}, row 1 has segment {2}.
  const std::vector<index_t> seg{0, 2, 3};
  const std::vector<double> partial{1, 2, 10, 20, 5, 7};
  std::vector<double> y{1, 1, 2, 2};
  kernels::cpu::segment_reduce(2, 2, seg.data(), partial.data(), 2.0, 0.5, y.data());
  EXPECT_EQ(y, (std::vector<double>{22.5, 44.5, 11, 15}));
  std::vector<double> z(4, std::numeric_limits<double>::quiet_NaN());
  kernels::cpu::segment_reduce(2, 2, seg.data(), partial.data(), 1.0, 0.0, z.data());
  EXPECT_EQ(z, (std::vector<double>{11, 22, 5, 7}));
}

TEST(BsrToCsr, HandExampleWithAnEmptyRow)
{
  // Block rows: 0 -> blocks (col 1); 1 -> empty; 2 -> blocks (col 0), (col 1). bs = 2.
  std::vector<index_t> row_ptr{0, 1, 1, 3}, col{1, 0, 1};
  std::vector<double> val{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  BsrView<const double> A{3, 2, 2, row_ptr.data(), col.data(), val.data()};
  std::vector<index_t> rp(7), cc(12);
  std::vector<double> cv(12);
  kernels::cpu::bsr_to_csr(A, rp.data(), cc.data(), cv.data());
  EXPECT_EQ(rp, (std::vector<index_t>{0, 2, 4, 4, 4, 8, 12}));
  EXPECT_EQ(cc, (std::vector<index_t>{2, 3, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(cv, (std::vector<double>{1, 2, 3, 4, 5, 6, 9, 10, 7, 8, 11, 12}));
}

// The 32-bit guard of the scalar view (bsr_to_csr and the cuSPARSE paths): 2^31 - 1 rows, columns
// and entries pass, one more of any of them is an error naming the sizes. Sizes only: nothing of
// that size is allocated.
TEST(BsrToCsr, OverflowGuardAtTheInt32Limit)
{
  const size64_t limit = 2147483647;  // 2^31 - 1
  using kernels::check_scalar_view_fits_int32;
  EXPECT_NO_THROW(check_scalar_view_fits_int32("t", 1000, 1000, 4, 7000));
  EXPECT_NO_THROW(check_scalar_view_fits_int32("t", limit, limit, 1, limit));
  // bs 64: 524287 blocks are 2147479552 entries, 524288 blocks are 2^31.
  EXPECT_NO_THROW(check_scalar_view_fits_int32("t", 1000, 1000, 64, 524287));
  try {
    check_scalar_view_fits_int32("ILU(0), scalar view", 1000, 1000, 64, 524288);
    ADD_FAILURE() << "2^31 entries passed";
  } catch (const std::overflow_error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("ILU(0), scalar view: ", 0), 0u) << m;
    EXPECT_NE(m.find("524288 blocks"), std::string::npos) << m;
    EXPECT_NE(m.find("2147483648 entries"), std::string::npos) << m;
    EXPECT_NE(m.find("2147483647"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  // Rows and columns: 2^28 block rows of bs 8 are 2^31 scalar rows, whatever the entry count.
  EXPECT_THROW(check_scalar_view_fits_int32("t", size64_t(1) << 28, 10, 8, 10), std::overflow_error);
  EXPECT_THROW(check_scalar_view_fits_int32("t", 10, size64_t(1) << 28, 8, 10), std::overflow_error);
  EXPECT_NO_THROW(check_scalar_view_fits_int32("t", (size64_t(1) << 28) - 1, (size64_t(1) << 28) - 1, 8, 10));
  // Block counts near the int32 limit with large blocks: no wrap-around in the products.
  EXPECT_THROW(check_scalar_view_fits_int32("t", limit, limit, 64, limit), std::overflow_error);
}

TEST(BsrToCsr, RefusesAnExpansionOver2To31EntriesBeforeTouchingAnyArray)
{
  // One block row of 600000 blocks of 64x64: 2457600000 scalar entries. Only row_ptr is read (the
  // block count); the column, value and output arrays are null and must stay untouched.
  const std::vector<index_t> row_ptr{0, 600000};
  const BsrView<const double> A{1, 600000, 64, row_ptr.data(), nullptr, nullptr};
  try {
    kernels::cpu::bsr_to_csr(A, nullptr, nullptr, nullptr);
    ADD_FAILURE() << "the expansion ran";
  } catch (const std::overflow_error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("bsr_to_csr: ", 0), 0u) << m;
    EXPECT_NE(m.find("2457600000 entries"), std::string::npos) << m;
  }
}

// The rule's device key from the three device attributes (kHz, bits, SMs) at the nominal figures:
// H100 SXM 2619 MHz x 5120 bits (3.35 TB/s) over 132 SMs; H200 4.8 TB/s on 6144 bits (3125 MHz) over
// 132 SMs; A100 SXM 80 GB 1593 MHz x 5120 bits (2.04 TB/s) over 108 SMs.
TEST(BsrmvRuleKey, DramBandwidthPerSmFromTheDeviceAttributes)
{
  EXPECT_NEAR(kernels::dram_gbps_per_sm(2619000, 5120, 132), 2 * 2.619e9 * 640 / 132 / 1e9, 1e-9);
  EXPECT_NEAR(kernels::dram_gbps_per_sm(2619000, 5120, 132), 25.40, 0.01);
  EXPECT_NEAR(kernels::dram_gbps_per_sm(3125000, 6144, 132), 36.36, 0.01);
  EXPECT_NEAR(kernels::dram_gbps_per_sm(1593000, 5120, 108), 18.88, 0.01);
  // Not reported (0) or nonsense: unknown, 0.
  EXPECT_EQ(kernels::dram_gbps_per_sm(0, 5120, 132), 0.0);
  EXPECT_EQ(kernels::dram_gbps_per_sm(2619000, 0, 132), 0.0);
  EXPECT_EQ(kernels::dram_gbps_per_sm(2619000, 5120, 0), 0.0);
  EXPECT_EQ(kernels::dram_gbps_per_sm(-1, 5120, 132), 0.0);
  // No int overflow on the product: a 12 GHz x 16384-bit device over one SM.
  EXPECT_NEAR(kernels::dram_gbps_per_sm(12000000, 16384, 1), 2 * 12e9 * 2048 / 1e9, 1e-6);
}

#if BLOCKRES_HAVE_CUDA
// The search space and the built-in rule are host code (the compiled variants' registry): checked
// here without a device. The rule is what every block size runs without a tuning cache, so it must
// name a configuration that exists on either side of its bandwidth threshold (an H100's 25.4 GB/s
// per SM, an H200's 36.4, an unknown 0, and the threshold itself) and of its row-length threshold
// (the 7-point stencil's 6.9 blocks a row, the 27-point one's 26.6, an unknown 0, the threshold
// itself), and the space must offer more than it to tune.
TEST(BsrmvSpace, TheRuleNamesACompiledConfigurationOfEveryBlockSize)
{
  const double threshold = kernels::cuda::bsrmv_rule_high_bandwidth_gbps_per_sm;
  const double long_rows = kernels::cuda::bsrmv_rule_long_row_blocks;
  for (const double key : {0.0, 25.4, threshold, 36.4, 1000.0}) {
    for (const double row_blocks : {0.0, 1.0, 6.9, long_rows, 26.6, 1000.0}) {
      for (int bs = 1; bs <= 64; ++bs) {
        const auto configs = kernels::cuda::bsrmv_configs(bs);
        ASSERT_FALSE(configs.empty()) << "bs " << bs;
        const auto rule = kernels::cuda::bsrmv_rule(bs, key, row_blocks);
        EXPECT_NE(std::find(configs.begin(), configs.end(), rule), configs.end())
            << "bs " << bs << " at " << key << " GB/s per SM and " << row_blocks << " blocks a row: the rule gives "
            << kernels::describe(rule) << ", which is not compiled";
        EXPECT_GT(configs.size(), 1u) << "bs " << bs;
      }
    }
  }
  EXPECT_TRUE(kernels::cuda::bsrmv_configs(0).empty());
  EXPECT_TRUE(kernels::cuda::bsrmv_configs(65).empty());
}

// The bandwidth key splits the rule where the comment above bsrmv_rule says, and nowhere else: an
// unknown bandwidth (0) and the threshold itself take the choices below it, at any row length. Short
// rows (the 7-point stencil) differ at bs 17, 18 and 26 and at the row-length choices 22, 46, 47, 54
// and 55; long rows (the 27-point stencil) at 17, 18, 26 and 45.
TEST(BsrmvSpace, TheRuleDiffersAcrossItsThresholdOnlyAtTheDocumentedBlockSizes)
{
  const double threshold = kernels::cuda::bsrmv_rule_high_bandwidth_gbps_per_sm;
  EXPECT_GT(threshold, kernels::dram_gbps_per_sm(2619000, 5120, 132));  // an H100 SXM: below
  EXPECT_LT(threshold, kernels::dram_gbps_per_sm(3125000, 6144, 132));  // an H200: above
  for (const auto& [row_blocks, expected] : {std::pair{6.9, std::vector<int>{17, 18, 22, 26, 46, 47, 54, 55}},
                                             std::pair{26.6, std::vector<int>{17, 18, 26, 45}}}) {
    std::vector<int> differ;
    for (int bs = 1; bs <= 64; ++bs) {
      const auto low = kernels::cuda::bsrmv_rule(bs, 25.4, row_blocks);
      const auto high = kernels::cuda::bsrmv_rule(bs, 36.4, row_blocks);
      EXPECT_EQ(kernels::cuda::bsrmv_rule(bs, 0.0, row_blocks), low) << "bs " << bs << ": unknown bandwidth";
      EXPECT_EQ(kernels::cuda::bsrmv_rule(bs, threshold, row_blocks), low) << "bs " << bs << ": at the threshold";
      EXPECT_EQ(kernels::cuda::bsrmv_rule(bs, 1000.0, row_blocks), high) << "bs " << bs;
      if (!(low == high)) differ.push_back(bs);
    }
    EXPECT_EQ(differ, expected) << row_blocks << " blocks a row";
  }
  auto rule = [](int bs, double key, double row_blocks) {
    return kernels::describe(kernels::cuda::bsrmv_rule(bs, key, row_blocks));
  };
  for (const double row_blocks : {6.9, 26.6}) {
    EXPECT_EQ(rule(17, 25.4, row_blocks), "medium(groups=4, arrays=2, unroll=2)");
    EXPECT_EQ(rule(17, 36.4, row_blocks), "medium(groups=4, arrays=1, unroll=2, clamped)");
    EXPECT_EQ(rule(18, 36.4, row_blocks), "staged(groups=2, arrays=4, unroll=1)");
    EXPECT_EQ(rule(26, 36.4, row_blocks), "staged(groups=8, arrays=1, unroll=1)");
  }
}

// The row-length key (mean blocks per block row) is used only above the bandwidth threshold: below it
// (an H100, an unknown bandwidth) the rule does not depend on the row length at all. Above it the
// short rows (7-point stencil; an unknown length, 0, and the threshold itself) and the long rows
// (27-point) differ at bs 22, 45, 46, 47, 54 and 55 only, and at each of them one of the two keeps the
// configuration the block size had before the key (the one below the bandwidth threshold): the
// stencil that already passed keeps its configuration.
TEST(BsrmvSpace, TheRowLengthSplitsTheRuleOnlyAboveTheBandwidthThreshold)
{
  const double threshold = kernels::cuda::bsrmv_rule_high_bandwidth_gbps_per_sm;
  const double long_rows = kernels::cuda::bsrmv_rule_long_row_blocks;
  EXPECT_GT(long_rows, 7.0);   // a 3D 7-point stencil: at most 7 blocks a row
  EXPECT_LT(long_rows, 21.0);  // a 3D 27-point stencil at 1 GB: 22 to 26.6 on average
  for (const double key : {0.0, 18.9, 25.4, threshold}) {
    for (int bs = 1; bs <= 64; ++bs) {
      const auto ref = kernels::cuda::bsrmv_rule(bs, key, 6.9);
      for (const double row_blocks : {0.0, 1.0, long_rows, 16.5, 26.6, 1000.0})
        EXPECT_EQ(kernels::cuda::bsrmv_rule(bs, key, row_blocks), ref)
            << "bs " << bs << " at " << key << " GB/s per SM: " << row_blocks << " blocks a row";
    }
  }
  std::vector<int> differ;
  for (int bs = 1; bs <= 64; ++bs) {
    const auto shorter = kernels::cuda::bsrmv_rule(bs, 36.4, 6.9), longer = kernels::cuda::bsrmv_rule(bs, 36.4, 26.6);
    EXPECT_EQ(kernels::cuda::bsrmv_rule(bs, 36.4, 0.0), shorter) << "bs " << bs << ": unknown row length";
    EXPECT_EQ(kernels::cuda::bsrmv_rule(bs, 36.4, long_rows), shorter) << "bs " << bs << ": at the threshold";
    EXPECT_EQ(kernels::cuda::bsrmv_rule(bs, 1000.0, 1000.0), longer) << "bs " << bs;
    if (shorter == longer) continue;
    differ.push_back(bs);
    const auto before = kernels::cuda::bsrmv_rule(bs, 25.4, 6.9);
    EXPECT_TRUE((shorter == before) != (longer == before))
        << "bs " << bs << ": one side keeps " << kernels::describe(before);
  }
  EXPECT_EQ(differ, (std::vector<int>{22, 45, 46, 47, 54, 55}));
  auto rule = [](int bs, double row_blocks) {
    return kernels::describe(kernels::cuda::bsrmv_rule(bs, 36.4, row_blocks));
  };
  EXPECT_EQ(rule(22, 6.9), "staged(groups=2, arrays=4, unroll=1)");
  EXPECT_EQ(rule(22, 26.6), "staged(groups=4, arrays=2, unroll=2)");
  EXPECT_EQ(rule(45, 6.9), "staged(groups=4, arrays=1, unroll=1)");
  EXPECT_EQ(rule(45, 26.6), "large(warps=4, unroll=2, row_split=4)");
  for (const int bs : {46, 47}) {
    EXPECT_EQ(rule(bs, 6.9), "staged(groups=4, arrays=1, unroll=1)") << "bs " << bs;
    EXPECT_EQ(rule(bs, 26.6), "large(warps=4, unroll=2, row_split=4)") << "bs " << bs;
  }
  for (const int bs : {54, 55}) {
    EXPECT_EQ(rule(bs, 6.9), "staged(groups=4, arrays=1, unroll=1)") << "bs " << bs;
    EXPECT_EQ(rule(bs, 26.6), "large(warps=8, unroll=2, row_split=4)") << "bs " << bs;
  }
}
#endif
