// CPU reference kernels against hand-computed values.
#include "kernels/blas1.hpp"
#include "kernels/bsr_to_csr.hpp"
#include "kernels/block_diag.hpp"
#include "kernels/bsrmv.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace blockres;

TEST(Blas1Cpu, HandValues)
{
  std::vector<double> x{1, 2, 3}, y{4, 5, 6}, z{7, 8, 9};
  EXPECT_DOUBLE_EQ(kernels::cpu::dot(3, x.data(), y.data()), 32.0);
  kernels::cpu::axpby(3, 2.0, x.data(), -1.0, y.data());  // y = 2x - y
  EXPECT_EQ(y, (std::vector<double>{-2, -1, 0}));
  kernels::cpu::axpbypcz(3, 1.0, x.data(), 1.0, y.data(), 2.0, z.data());  // z = x + y + 2z
  EXPECT_EQ(z, (std::vector<double>{13, 17, 21}));
  std::vector<double> w(3, std::numeric_limits<double>::quiet_NaN());
  kernels::cpu::axpby(3, 3.0, x.data(), 0.0, w.data());  // beta 0: NaN in w must not leak
  EXPECT_EQ(w, (std::vector<double>{3, 6, 9}));
  kernels::cpu::fill(3, -0.5, w.data());
  EXPECT_EQ(w, (std::vector<double>{-0.5, -0.5, -0.5}));
}

// The CPU reductions sum in an order fixed by the length (kernels/ordered_sum_cpu.hpp): the same
// bits on 1, 2, 3 or 7 threads, so a CPU run reproduces its stored baseline on any machine.
TEST(Blas1Cpu, ReductionsDoNotDependOnTheThreadCount)
{
  std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size64_t n : {size64_t(8191), size64_t(100003), size64_t(1) << 20}) {
    std::vector<double> x(n), y(n), p(n), t(n), rh(n);
    for (size64_t i = 0; i < n; ++i) x[i] = u(rng), y[i] = u(rng), p[i] = u(rng), t[i] = u(rng), rh[i] = u(rng);
    const double* cols[3] = {x.data(), p.data(), t.data()};
    struct Out {
      double dot, dots[3], norm, bicg[2], xsum;
    };
    auto run = [&](int threads) {
      omp_set_num_threads(threads);
      Out o{};
      o.dot = kernels::cpu::dot(n, x.data(), y.data());
      kernels::cpu::dots(n, 3, cols, y.data(), o.dots);
      std::vector<double> yy = y, xx = x, rr = y;
      o.norm = kernels::cpu::axpby_norm2(n, 0.7, x.data(), -1.3, yy.data());
      kernels::cpu::bicgstab_update(n, 0.4, p.data(), -0.6, rr.data(), rr.data(), t.data(), rh.data(), xx.data(), rr.data(),
                           o.bicg);
      o.xsum = kernels::cpu::dot(n, xx.data(), rr.data());
      return o;
    };
    const Out ref = run(1);
    for (int threads : {2, 3, 7}) {
      const Out o = run(threads);
      EXPECT_EQ(o.dot, ref.dot) << n << " on " << threads << " threads";
      for (int j = 0; j < 3; ++j) EXPECT_EQ(o.dots[j], ref.dots[j]) << n << " on " << threads << " threads";
      EXPECT_EQ(o.norm, ref.norm) << n << " on " << threads << " threads";
      EXPECT_EQ(o.bicg[0], ref.bicg[0]) << n << " on " << threads << " threads";
      EXPECT_EQ(o.bicg[1], ref.bicg[1]) << n << " on " << threads << " threads";
      EXPECT_EQ(o.xsum, ref.xsum) << n << " on " << threads << " threads";
    }
    // And the value is the sum (against a long-double loop, to rounding).
    long double exact = 0;
    for (size64_t i = 0; i < n; ++i) exact += static_cast<long double>(x[i]) * y[i];
    EXPECT_NEAR(ref.dot, static_cast<double>(exact), 1e-13 * std::sqrt(double(n)));
  }
  omp_set_num_threads(omp_get_num_procs());
}

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

TEST(BlockDiagCpu, ScatterBlocksIntoDenseMatricesAndCountFailures)
{
  // Two listed blocks (bs 2) of a 3-block value array, scattered into a 4x4 dense matrix
  // (ld 4) at (0,0) and (2,2); entries not listed stay untouched.
  const std::vector<double> val{1, 2, 3, 4, 9, 9, 9, 9, 5, 6, 7, 8};
  const std::vector<index_t> src{0, 2};
  const std::vector<size64_t> off{0, 2 * 4 + 2};
  const std::vector<int> ld{4, 4};
  std::vector<double> dst(16, -1.0);
  kernels::cpu::scatter_blocks(2, 2, src.data(), off.data(), ld.data(), val.data(), dst.data());
  EXPECT_EQ(dst, (std::vector<double>{1, 2, -1, -1, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1, 7, 8}));
  // The diagonal entries of the diagonal blocks (block positions 2 and 0 for rows 0 and 1).
  const std::vector<index_t> diag{2, 0};
  std::vector<double> d(4, -1.0);
  kernels::cpu::extract_diagonal(2, 2, diag.data(), val.data(), d.data());
  EXPECT_EQ(d, (std::vector<double>{5, 8, 1, 4}));
  const std::vector<int> info{0, 3, 0, -1, 0};
  EXPECT_EQ(kernels::cpu::count_nonzero(5, info.data()), 2);
  EXPECT_EQ(kernels::cpu::count_nonzero(0, info.data()), 0);
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
