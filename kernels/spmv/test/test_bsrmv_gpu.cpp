// BSRMV on the GPU against the CPU reference for every block size 1..64 and every compiled
// kernel configuration, balanced and not: random patterns with empty rows and one very long
// row, square and non-square shapes, alpha/beta combinations, poisoned y. Label `gpu`.
#include "linalg/bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace blockres;

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();

// Pattern with empty rows and one row much longer than the rest.
BsrPattern pattern_with_long_row(index_t nrows, index_t ncols, index_t long_len)
{
  BsrPattern p = test::random_pattern(nrows, ncols, 3, true);
  const index_t r_long = nrows / 3;
  BsrPattern q;
  q.nrows = nrows, q.ncols = ncols;
  q.row_ptr.push_back(0);
  for (index_t r = 0; r < nrows; ++r) {
    if (r == r_long) {
      for (index_t c = 0; c < std::min(ncols, long_len); ++c) q.col_ind.push_back(c);
    } else if (r % 5 != 1) {  // every fifth row empty
      q.col_ind.insert(q.col_ind.end(), p.col_ind.begin() + p.row_ptr[r], p.col_ind.begin() + p.row_ptr[r + 1]);
    }
    q.row_ptr.push_back(static_cast<index_t>(q.col_ind.size()));
  }
  return q;
}

void check(const ExecPtr& cpu, const ExecPtr& gpu, int bs, const BsrPattern& pat, const SpmvOptions& opt,
           const std::string& what)
{
  const auto vals = test::random_vector(size64_t(pat.nnzb()) * bs * bs);
  BsrMatrix Ac(cpu, bs, pat), Ag(gpu, bs, pat, opt);
  Ac.values().copy_from_host(vals);
  Ag.values().copy_from_host(vals);
  const auto hx = test::random_vector(size64_t(pat.ncols) * bs);
  const auto hy = test::random_vector(size64_t(pat.nrows) * bs);
  Vector xc(cpu, std::span<const double>(hx)), xg(gpu, std::span<const double>(hx));
  for (auto [alpha, beta] : {std::pair{1.0, 0.0}, {-0.75, 1.0}, {2.0, -0.5}, {0.0, 3.0}}) {
    const std::vector<double> y0 = beta == 0.0 ? std::vector<double>(hy.size(), nan_v) : hy;
    Vector yc(cpu, std::span<const double>(y0)), yg(gpu, std::span<const double>(y0));
    spmv(Ac, alpha, xc, beta, yc);
    spmv(Ag, alpha, xg, beta, yg);
    const double err = test::max_rel_diff(yg.to_host(), yc.to_host());
    ASSERT_LE(err, 1e-13) << what << " alpha " << alpha << " beta " << beta;
  }
}

}  // namespace

TEST(BsrmvGpu, EveryBlockSizeEveryConfigurationBalancedOrNot)
{
  auto cpu = Executor::create_cpu();
  auto gpu = Executor::create_cuda(0);
  int checked = 0;
  for (int bs = 1; bs <= 64; ++bs) {
    // Fewer rows for large blocks keeps the test quick; always odd sizes.
    const index_t n = bs <= 8 ? 301 : bs <= 24 ? 97 : 29;
    const auto square = pattern_with_long_row(n, n, 3 * n);
    const auto wide = pattern_with_long_row(n / 2 + 1, 2 * n + 3, 2 * n);
#if BLOCKRES_HAVE_CUDA
    const auto configs = kernels::cuda::bsrmv_configs(bs);
#else
    const std::vector<kernels::BsrmvConfig> configs;
#endif
    ASSERT_FALSE(configs.empty()) << "bs " << bs;
#if BLOCKRES_HAVE_CUDA
    // The built-in rule (the plan without a tuning cache) must name a compiled configuration, for
    // short rows (these test matrices, the 7-point stencil) and long ones (the 27-point stencil).
    for (const double row_blocks : {3.0, 27.0}) {
      const auto fallback = kernels::cuda::bsrmv_rule(bs, gpu->dram_gbps_per_sm(), row_blocks);
      EXPECT_NE(std::find(configs.begin(), configs.end(), fallback), configs.end())
          << "bs " << bs << " rule gives " << kernels::describe(fallback) << " at " << row_blocks << " blocks a row";
    }
#endif
    for (const auto& cfg : configs) {
      for (auto bal : {SpmvBalance::off, SpmvBalance::on}) {
        SpmvOptions opt;
        opt.config = cfg;
        opt.balance = bal;
        opt.segment_blocks = 5;
        const std::string what = "bs " + std::to_string(bs) + " " + kernels::describe(cfg) +
                                 (bal == SpmvBalance::on ? " balanced" : "");
        check(cpu, gpu, bs, square, opt, what + " square");
        check(cpu, gpu, bs, wide, opt, what + " non-square");
        checked += 2;
      }
    }
    // The default plan (the executor's tuning, here the built-in rule), with automatic balancing.
    check(cpu, gpu, bs, square, {}, "bs " + std::to_string(bs) + " default");
  }
  std::printf("%d matrix/configuration pairs checked\n", checked);
}

// The built-in rule's key, from the device's memory clock, bus width and SM count (CUDA 13: the
// attributes, not cudaDeviceProp): positive and plausible on a real device (an H100 SXM: about 25.4
// GB/s per SM, an H200: about 36.4).
TEST(BsrmvGpu, TheExecutorKnowsItsDramBandwidthPerSm)
{
  auto gpu = Executor::create_cuda(0);
  const double key = gpu->dram_gbps_per_sm();
  std::printf("%s: %.1f GB/s of DRAM per SM (the BSRMV rule takes its choices %s %.0f)\n", gpu->device_name().c_str(),
              key, key > kernels::cuda::bsrmv_rule_high_bandwidth_gbps_per_sm ? "above" : "at or below",
              kernels::cuda::bsrmv_rule_high_bandwidth_gbps_per_sm);
  EXPECT_GT(key, 1.0);
  EXPECT_LT(key, 1000.0);
}

TEST(BsrmvGpu, AutomaticBalancingFollowsTheRowLengths)
{
  auto gpu = Executor::create_cuda(0);
  const auto even = test::convection_diffusion(13, 11, 7, 1, 1.0).pattern;  // 7-point rows
  EXPECT_FALSE(BsrMatrix(gpu, 4, even).spmv_balanced());
  const auto skewed = pattern_with_long_row(1000, 5000, 4000);
  BsrMatrix A(gpu, 4, skewed);
  EXPECT_TRUE(A.spmv_balanced());
  EXPECT_GT(A.spmv_segments(), A.nrows());
  SpmvOptions off;
  off.balance = SpmvBalance::off;
  A.set_spmv_options(off);
  EXPECT_FALSE(A.spmv_balanced());
}

#if BLOCKRES_HAVE_CUDA
// The staged kernel copies values and column indices 16 bytes at a time, shifting its stage to the
// source's alignment (odd bs) or falling back to 8-byte copies (padded rows, even bs). Arrays from
// an allocation are aligned; a view into the middle of one (a sub-matrix) need not be. Every
// staged configuration of every bs on values and indices one element past an aligned start, and on
// the aligned ones, against the CPU reference (from bs 9 on the long row takes several chunks); y
// poisoned.
TEST(BsrmvGpu, StagedCopiesAnyAlignmentOfValuesAndIndices)
{
  auto gpu = Executor::create_cuda(0);
  int checked = 0;
  for (int bs = 1; bs <= 64; ++bs) {
    const index_t n = bs <= 8 ? 157 : bs <= 24 ? 41 : 13;
    const auto pat = pattern_with_long_row(n, n, 2 * n);
    const size64_t bb = size64_t(bs) * bs, nnzb = size64_t(pat.nnzb());
    const auto vals = test::random_vector(nnzb * bb + 1);
    const auto hx = test::random_vector(size64_t(n) * bs);
    std::vector<double> ref(size64_t(n) * bs);
    Array<double> gv(gpu, std::span<const double>(vals)), gx(gpu, std::span<const double>(hx));
    Array<index_t> grp(gpu, std::span<const index_t>(pat.row_ptr));
    for (const int shift : {0, 1}) {
      kernels::cpu::bsrmv({n, n, bs, pat.row_ptr.data(), pat.col_ind.data(), vals.data() + shift}, 1.0, hx.data(), 0.0,
                          ref.data());
      // Values start `shift` doubles in, indices 1 - shift ints in: each combination of alignments.
      std::vector<index_t> cols(pat.col_ind.size() + 1, 0);
      std::copy(pat.col_ind.begin(), pat.col_ind.end(), cols.begin() + (1 - shift));
      Array<index_t> gc(gpu, std::span<const index_t>(cols));
      const BsrView<const double> view{n, n, bs, grp.data(), gc.data() + (1 - shift), gv.data() + shift};
      for (const auto& cfg : kernels::cuda::bsrmv_configs(bs)) {
        if (cfg.kernel != kernels::BsrmvKernel::staged) continue;
        Vector y(gpu, std::span<const double>(std::vector<double>(ref.size(), nan_v)));
        kernels::cuda::bsrmv(gpu->stream(), view, 1.0, gx.data(), 0.0, y.data(), cfg);
        ASSERT_LE(test::max_rel_diff(y.to_host(), ref), 1e-13)
            << "bs " << bs << " " << kernels::describe(cfg) << " value shift " << shift;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 128);
  std::printf("%d staged configuration/alignment pairs checked\n", checked);
}

#include "kernels/spmv/bsr_to_csr.hpp"

TEST(BsrToCsrGpu, MatchesCpu)
{
  auto gpu = Executor::create_cuda(0);
  for (int bs : {1, 2, 3, 7, 16}) {
    const auto pat = pattern_with_long_row(211, 157, 100);
    const auto vals = test::random_vector(size64_t(pat.nnzb()) * bs * bs);
    const size64_t nnz = size64_t(pat.nnzb()) * bs * bs, rows = size64_t(pat.nrows) * bs;
    std::vector<index_t> rp(rows + 1), cc(nnz);
    std::vector<double> cv(nnz);
    kernels::cpu::bsr_to_csr({pat.nrows, pat.ncols, bs, pat.row_ptr.data(), pat.col_ind.data(), vals.data()}, rp.data(),
                             cc.data(), cv.data());
    BsrMatrix A(gpu, bs, pat);
    A.values().copy_from_host(vals);
    Array<index_t> grp(gpu, std::span<const index_t>(std::vector<index_t>(rows + 1, -7)));
    Array<index_t> gcc(gpu, std::span<const index_t>(std::vector<index_t>(nnz, -7)));
    Vector gcv(gpu, std::span<const double>(std::vector<double>(nnz, nan_v)));
    kernels::cuda::bsr_to_csr(gpu->stream(), A.view(), grp.data(), gcc.data(), gcv.data());
    EXPECT_EQ(grp.to_host(), rp) << "bs " << bs;
    EXPECT_EQ(gcc.to_host(), cc) << "bs " << bs;
    EXPECT_EQ(gcv.to_host(), cv) << "bs " << bs;
  }
}
#endif
