// CUDA block ILU(0) and its exact block triangular solves against the CPU references on fresh
// random input (seed printed): block sizes 1..80 spread (warp path bs <= 8, thread-block path
// with shared memory, and the global-workspace path above bs 75; non-multiples of the warp),
// random, banded and block-tridiagonal patterns (one row per level, many rows per level), factors
// and inverses and solutions compared entry by entry, outputs poisoned with NaN; singular blocks
// reported with the CPU's block row (also when a later row of the same level fails); the block
// ISAI kinds of the factors (unit_block_lower, block_upper) against the CPU generation; argument
// checks. Label `gpu`.
#include "kernels/ilu_isai/ilu_block.hpp"
#include "kernels/ilu_isai/test/device_test_util.hpp"
#include "kernels/ilu_isai/test/ilu_block_test_util.hpp"
#include "linalg/array.hpp"
#include "linalg/executor.hpp"
#include "linalg/preconditioners/isai/isai_preconditioner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

using namespace blockres;
using namespace blockres::test_device;
using namespace blockres::test_ilu_block;
using kernels::IluSchedule;
namespace kc = blockres::kernels::cpu;
namespace kg = blockres::kernels::cuda;

namespace {

ExecPtr cpu()
{
  static ExecPtr e = Executor::create_cpu();
  return e;
}

IluSchedule schedule_of(const HostBsr& A) { return kernels::ilu_schedule(A.n, A.row_ptr.data(), A.col.data()); }

struct DeviceBsr {
  index_t n;
  int bs;
  Array<index_t> row_ptr, col;
  Array<double> val;
  explicit DeviceBsr(const HostBsr& A)
      : n(A.n), bs(A.bs), row_ptr(upload(A.row_ptr)), col(upload(A.col)), val(upload(A.val))
  {
  }
  BsrView<double> view() { return {n, n, bs, row_ptr.data(), col.data(), val.data()}; }
  BsrView<const double> cview() const { return {n, n, bs, row_ptr.data(), col.data(), val.data()}; }
};

struct Result {
  std::vector<double> val, dinv;
  int info;
};

Result cpu_factor(const HostBsr& A, const IluSchedule& s)
{
  HostBsr F = A;
  Result r{{}, std::vector<double>(static_cast<std::size_t>(A.n * A.bs2())), 0};
  r.info = kc::block_ilu0_factor(s, F.view(), r.dinv.data());
  r.val = std::move(F.val);
  return r;
}

Result gpu_factor(const HostBsr& A, const IluSchedule& s)
{
  DeviceSchedule ds(gpu(), s);
  DeviceBsr dA(A);
  Array<double> dinv = upload(std::vector<double>(static_cast<std::size_t>(A.n * A.bs2()), nan_v));
  Array<double> work(gpu(), kg::block_ilu0_workspace_doubles(s, A.bs));
  if (work.size() > 0) fill_nan(work);
  Array<int> info = upload(std::vector<int>{-777});
  kg::block_ilu0_factor(gpu()->stream(), ds.view, dA.view(), dinv.data(), info.data(), work.data());
  gpu()->synchronize();
  return {dA.val.to_host(), dinv.to_host(), info.to_host()[0]};
}

// Factors and inverses on both backends agree; the solves with the (CPU) factors too.
void check_matrix(const HostBsr& A, const std::string& what)
{
  SCOPED_TRACE(what);
  const IluSchedule s = schedule_of(A);
  const Result c = cpu_factor(A, s), g = gpu_factor(A, s);
  ASSERT_EQ(c.info, 0);
  EXPECT_EQ(g.info, 0);
  EXPECT_LE(test_ilu::rel_diff(g.val, c.val), 1e-11);
  EXPECT_LE(test_ilu::rel_diff(g.dinv, c.dinv), 1e-11);

  HostBsr F = A;
  F.val = c.val;
  DeviceSchedule ds(gpu(), s);
  DeviceBsr dF(F);
  Array<double> ddinv = upload(c.dinv);
  const auto b = random_vector(A.scalar_rows());
  std::vector<double> yc(b.size()), zc(b.size());
  kc::block_ilu0_lower_solve(s, F.cview(), b.data(), yc.data());
  kc::block_ilu0_upper_solve(s, F.cview(), c.dinv.data(), b.data(), zc.data());
  Array<double> db = upload(b), dy = upload(std::vector<double>(b.size(), nan_v)),
                dz = upload(std::vector<double>(b.size(), nan_v));
  kg::block_ilu0_lower_solve(gpu()->stream(), ds.view, dF.cview(), db.data(), dy.data());
  kg::block_ilu0_upper_solve(gpu()->stream(), ds.view, dF.cview(), ddinv.data(), db.data(), dz.data());
  EXPECT_LE(test_ilu::rel_diff(dy.to_host(), yc), 1e-12);
  EXPECT_LE(test_ilu::rel_diff(dz.to_host(), zc), 1e-12);
}

}  // namespace

TEST(BlockIlu0Gpu, FactorAndSolvesMatchTheCpu)
{
  for (int bs : {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 24, 31, 32, 33, 40, 47, 64, 65, 76, 80}) {
    const index_t n = bs <= 8 ? 301 : bs <= 33 ? 61 : 17;
    check_matrix(dominant(random_pattern(n, bs, 3)), "random bs " + std::to_string(bs));
    check_matrix(dominant(random_pattern(n + 2, bs, 5, 4)), "banded bs " + std::to_string(bs));
    check_matrix(dominant(block_tridiagonal_pattern(n / 3 + 1, bs)), "tridiagonal bs " + std::to_string(bs));
  }
  // Many rows per level, long rows.
  check_matrix(dominant(random_pattern(20011, 1, 6, 400)), "n 20011 bs 1");
  check_matrix(dominant(random_pattern(4001, 4, 6, 100)), "n 4001 bs 4");
  check_matrix(dominant(random_pattern(97, 3, 60)), "long rows bs 3");
}

TEST(BlockIlu0Gpu, SingularBlocksReportTheCpuRow)
{
  for (int bs : {1, 3, 8, 17, 40}) {
    HostBsr A = dominant(random_pattern(31, bs, 3));
    for (index_t r : {19, 11})
      for (index_t p = A.row_ptr[r]; p < A.row_ptr[r + 1]; ++p) std::fill_n(A.block(p), A.bs2(), 0.0);
    const IluSchedule s = schedule_of(A);
    EXPECT_EQ(cpu_factor(A, s).info, 12) << bs;
    EXPECT_EQ(gpu_factor(A, s).info, 12) << bs;
    // One level: rows 7 and 3 both fail, the smaller is reported.
    HostBsr D = dominant(random_pattern(13, bs, 0));
    std::fill_n(D.block(7), D.bs2(), 0.0);
    D.block(3)[0] = nan_v;
    const IluSchedule ds = schedule_of(D);
    EXPECT_EQ(cpu_factor(D, ds).info, 4) << bs;
    EXPECT_EQ(gpu_factor(D, ds).info, 4) << bs;
  }
}

TEST(BlockIlu0Gpu, IsaiOfTheBlockFactorsMatchesTheCpu)
{
  for (int bs : {1, 2, 3, 5, 8, 13, 17, 33}) {
    const index_t n = bs <= 8 ? 151 : 31;
    const HostBsr A = dominant(random_pattern(n, bs, 3, 6));
    const IluSchedule s = schedule_of(A);
    const Result c = cpu_factor(A, s);
    ASSERT_EQ(c.info, 0);
    DeviceBsr dF(A);
    dF.val.copy_from_host(c.val);
    for (int power : {1, 2})
      for (auto kind : {kernels::IsaiKind::unit_block_lower, kernels::IsaiKind::block_upper}) {
        IsaiMatrix mc(cpu(), kind, n, bs, A.row_ptr, A.col, power);
        IsaiMatrix mg(gpu(), kind, n, bs, A.row_ptr, A.col, power);
        fill_nan(const_cast<BsrMatrix&>(mg.M()).values());
        EXPECT_EQ(mc.generate({n, bs, A.row_ptr.data(), A.col.data(), c.val.data(), kernels::BlockStorage::bsr}), 0);
        EXPECT_EQ(mg.generate({n, bs, dF.row_ptr.data(), dF.col.data(), dF.val.data(), kernels::BlockStorage::bsr}), 0);
        const std::string what = "bs " + std::to_string(bs) + " power " + std::to_string(power) +
                                 (kind == kernels::IsaiKind::block_upper ? " block_upper" : " unit_block_lower");
        EXPECT_LE(test_ilu::rel_diff(mg.M().values().to_host(), mc.M().values().to_host()), 1e-11) << what;
        if (n * bs <= 400) {
          HostBsr F = A;
          F.val = c.val;
          EXPECT_LE(isai_residual(dense_factor(F, kind == kernels::IsaiKind::unit_block_lower), A.scalar_rows(), bs,
                                  mg.pattern().row_ptr, mg.pattern().col, mg.M().values().to_host()),
                    1e-12)
              << what;
        }
      }
  }
}

// The block substitution of the factors' ISAI (IsaiMatrix::generate_factor, one launch) against the
// CPU twin bit for bit: every team size of the kernel (bs^2 <= 1, 4, 16, 32, 64, 128, 256 and more
// entries than threads), odd sizes, powers 1 and 2, random patterns and hub columns (long J, teams
// of one warp running to its longest column), both outputs poisoned with NaN first.
TEST(BlockIlu0Gpu, IsaiSubstitutionMatchesTheCpu)
{
  for (int bs : {1, 2, 3, 5, 7, 9, 12, 17, 33, 64}) {
    for (bool hub : {false, true}) {
      const index_t n = bs <= 8 ? 203 : bs <= 17 ? 37 : 13;
      const HostBsr A = dominant(hub ? hub_pattern(n, bs) : random_pattern(n, bs, 3, 6));
      const IluSchedule s = schedule_of(A);
      const Result c = cpu_factor(A, s);
      ASSERT_EQ(c.info, 0);
      DeviceBsr dF(A);
      dF.val.copy_from_host(c.val);
      const Array<double> ddinv = upload(c.dinv);
      for (int power : {1, 2})
        for (auto kind : {kernels::IsaiKind::unit_block_lower, kernels::IsaiKind::block_upper}) {
          const bool upper = kind == kernels::IsaiKind::block_upper;
          IsaiMatrix mc(cpu(), kind, n, bs, A.row_ptr, A.col, power);
          IsaiMatrix mg(gpu(), kind, n, bs, A.row_ptr, A.col, power);
          fill_nan(const_cast<BsrMatrix&>(mg.M()).values());
          fill_nan(const_cast<BsrMatrix&>(mc.M()).values());
          mc.generate_factor({n, bs, A.row_ptr.data(), A.col.data(), c.val.data(), kernels::BlockStorage::bsr},
                             upper ? c.dinv.data() : nullptr);
          mg.generate_factor({n, bs, dF.row_ptr.data(), dF.col.data(), dF.val.data(), kernels::BlockStorage::bsr},
                             upper ? ddinv.data() : nullptr);
          const std::string what = "bs " + std::to_string(bs) + " power " + std::to_string(power) +
                                   (upper ? " block_upper" : " unit_block_lower") + (hub ? " hub" : "");
          const auto g = mg.M().values().to_host(), h = mc.M().values().to_host();
          ASSERT_EQ(g.size(), h.size()) << what;
          size64_t differ = 0, non_finite = 0;
          for (std::size_t i = 0; i < g.size(); ++i) {
            differ += std::memcmp(&g[i], &h[i], sizeof(double)) != 0;
            non_finite += !std::isfinite(g[i]);
          }
          EXPECT_EQ(differ, 0u) << what;
          EXPECT_EQ(non_finite, 0u) << what;
          if (n * bs <= 600) {
            HostBsr F = A;
            F.val = c.val;
            EXPECT_LE(isai_residual(dense_factor(F, !upper), A.scalar_rows(), bs, mg.pattern().row_ptr,
                                    mg.pattern().col, g),
                      1e-12)
                << what;
          }
        }
    }
  }
}

TEST(BlockIlu0Gpu, IsaiSubstitutionArguments)
{
  const HostBsr A = dominant(random_pattern(9, 2, 2));
  DeviceBsr dA(A);
  const auto U = kernels::isai_block_pattern(kernels::IsaiKind::block_upper, 9, 2, A.row_ptr.data(), A.col.data(), 1);
  const kg::IsaiBlockDevicePattern none{&U, nullptr, nullptr, nullptr, nullptr, nullptr};
  Array<double> m(gpu(), size64_t(U.nnzb()) * 4);
  const kernels::BlockValuesView<const double> v{9, 2, dA.row_ptr.data(), dA.col.data(), dA.val.data(),
                                                 kernels::BlockStorage::bsr};
  EXPECT_THROW(kg::isai_block_substitute(gpu()->stream(), none, v, nullptr, m.data()), std::invalid_argument);
  EXPECT_THROW(kg::isai_block_substitute(gpu()->stream(), {}, v, m.data(), m.data()), std::invalid_argument);
  // Above the kernel's block size (IsaiMatrix::generate_factor takes the dense solve there).
  const std::vector<index_t> one_ptr{0, 1}, one_col{0};
  const auto big = kernels::isai_block_pattern(kernels::IsaiKind::unit_block_lower, 1, kernels::isai_substitute_max_bs + 1,
                                               one_ptr.data(), one_col.data(), 1);
  EXPECT_THROW(kg::isai_block_substitute(gpu()->stream(), {&big, nullptr, nullptr, nullptr, nullptr, nullptr},
                                         {1, kernels::isai_substitute_max_bs + 1, dA.row_ptr.data(), dA.col.data(),
                                          dA.val.data(), kernels::BlockStorage::bsr},
                                         nullptr, m.data()),
               std::invalid_argument);
}

TEST(BlockIlu0Gpu, ArgumentsAndEmptyMatrix)
{
  HostBsr A = dominant(random_pattern(9, 80, 2));
  const IluSchedule s = schedule_of(A);
  ASSERT_GT(kg::block_ilu0_workspace_doubles(s, 80), 0);
  EXPECT_EQ(kg::block_ilu0_workspace_doubles(s, 64), 0);
  DeviceSchedule ds(gpu(), s);
  DeviceBsr dA(A);
  Array<double> dinv(gpu(), A.n * A.bs2());
  Array<int> info(gpu(), 1);
  EXPECT_THROW(kg::block_ilu0_factor(gpu()->stream(), ds.view, dA.view(), dinv.data(), info.data(), nullptr),
               std::invalid_argument);
  EXPECT_THROW(kg::block_ilu0_factor(gpu()->stream(), ds.view, dA.view(), dinv.data(), nullptr, nullptr),
               std::invalid_argument);
  HostBsr B = dominant(random_pattern(10, 2, 1));
  DeviceBsr dB(B);
  EXPECT_THROW(kg::block_ilu0_factor(gpu()->stream(), ds.view, dB.view(), dinv.data(), info.data(), nullptr),
               std::invalid_argument);
  HostBsr E;
  const IluSchedule es = schedule_of(E);
  DeviceSchedule eds(gpu(), es);
  Array<int> einfo = upload(std::vector<int>{-1});
  kg::block_ilu0_factor(gpu()->stream(), eds.view, {0, 0, 1, nullptr, nullptr, nullptr}, nullptr, einfo.data(),
                        nullptr);
  EXPECT_EQ(einfo.to_host()[0], 0);
}

// Iterative block ILU(0): the start, every sweep and every diagonal inversion on the device agree
// with the CPU reference on random patterns of odd sizes (bs 1..80: warp, thread-block and
// global-workspace inversions), outputs poisoned with NaN first; a singular diagonal block is
// reported with the CPU's row.
TEST(BlockIlu0Gpu, IterativeSweepsMatchTheCpu)
{
  for (int bs : {1, 2, 3, 8, 17, 80}) {
    const index_t n = bs <= 8 ? 73 : bs <= 17 ? 21 : 7;
    const HostBsr A = dominant(random_pattern(n, bs, 4, 3));
    SCOPED_TRACE("bs " + std::to_string(bs));
    const IluSchedule s = schedule_of(A);
    const auto plan = kernels::block_ilu_sweep_plan(s, A.n, A.row_ptr.data(), A.col.data());
    DeviceSchedule ds(gpu(), s);
    DeviceBsr dA(A);
    Array<size64_t> pp = Array<size64_t>(gpu(), std::span<const size64_t>(plan.pair_ptr));
    Array<index_t> pl = upload(plan.pair_l), pu = upload(plan.pair_u), ro = upload(plan.row_of),
                   dn = upload(plan.diag_next);
    const kg::BlockIluSweepDevicePlan dp{&plan, pp.data(), pl.data(), pu.data(), ro.data(), dn.data()};
    Array<double> work(gpu(), kg::block_ilu0_workspace_doubles(s, A.bs));
    if (work.size() > 0) fill_nan(work);
    const std::size_t nv = A.val.size(), nd = static_cast<std::size_t>(A.n * A.bs2());
    std::vector<double> cin(nv), cout(nv), cd(nd);
    Array<double> gin(gpu(), nv), gout(gpu(), nv), gd(gpu(), nd);
    Array<int> info = upload(std::vector<int>{-777});
    ASSERT_EQ(kc::block_ilu_invert_diagonal(s, A.cview(), cd.data()), 0);
    fill_nan(gd);
    kg::block_ilu_invert_diagonal(gpu()->stream(), ds.view, dp, dA.cview(), gd.data(), info.data(), work.data());
    EXPECT_EQ(info.to_host()[0], 0);
    EXPECT_LE(test_ilu::rel_diff(gd.to_host(), cd), 1e-12);
    kc::block_ilu_sweep(plan, A.cview(), nullptr, cd.data(), cin.data(), false);
    gd.copy_from_host(cd);  // every step from the same input on both
    fill_nan(gin);
    kg::block_ilu_sweep(gpu()->stream(), dp, dA.cview(), nullptr, gd.data(), gin.data(), false);
    EXPECT_LE(test_ilu::rel_diff(gin.to_host(), cin), 1e-13);
    for (int k = 0; k < 3; ++k) {
      gin.copy_from_host(cin);
      gd.copy_from_host(cd);
      kc::block_ilu_sweep(plan, A.cview(), cin.data(), cd.data(), cout.data(), true);
      fill_nan(gout);
      kg::block_ilu_sweep(gpu()->stream(), dp, dA.cview(), gin.data(), gd.data(), gout.data(), true);
      EXPECT_LE(test_ilu::rel_diff(gout.to_host(), cout), 1e-12) << "sweep " << k;
      const HostBsr F = [&] { HostBsr f = A; f.val = cout; return f; }();
      DeviceBsr dF(F);
      ASSERT_EQ(kc::block_ilu_invert_diagonal(s, F.cview(), cd.data()), 0);
      fill_nan(gd);
      kg::block_ilu_invert_diagonal(gpu()->stream(), ds.view, dp, dF.cview(), gd.data(), info.data(), work.data());
      EXPECT_EQ(info.to_host()[0], 0);
      EXPECT_LE(test_ilu::rel_diff(gd.to_host(), cd), 1e-11) << "inversion after sweep " << k;
      cin = cout;
    }
    // A zero diagonal block at row 3 and row 5: row 3 + 1 from both.
    HostBsr Z = A;
    for (index_t i : {5, 3}) std::fill(Z.block(s.diag[i]), Z.block(s.diag[i]) + Z.bs2(), 0.0);
    DeviceBsr dZ(Z);
    EXPECT_EQ(kc::block_ilu_invert_diagonal(s, Z.cview(), cd.data()), 4);
    kg::block_ilu_invert_diagonal(gpu()->stream(), ds.view, dp, dZ.cview(), gd.data(), info.data(), work.data());
    EXPECT_EQ(info.to_host()[0], 4);
  }
}

// The sweeps' residual w = b - T x on the device agrees with the CPU reference (the same order of
// operations: to rounding) for L and U, random patterns of odd sizes, bs 1..80, the output poisoned
// with NaN first; an empty matrix is a no-op.
TEST(BlockIlu0Gpu, TriangleResidualMatchesTheCpu)
{
  for (int bs : {1, 2, 3, 4, 7, 8, 9, 16, 31, 33, 64, 80}) {
    SCOPED_TRACE("bs " + std::to_string(bs));
    const index_t n = bs <= 8 ? 1001 : bs <= 33 ? 67 : 11;
    const HostBsr F = dominant(random_pattern(n, bs, 5, 9));
    const DeviceBsr dF(F);
    const auto x = random_vector(F.scalar_rows()), b = random_vector(F.scalar_rows());
    const Array<double> dx = upload(x), db = upload(b);
    for (const auto tri : {kernels::Triangle::unit_lower, kernels::Triangle::upper}) {
      std::vector<double> wc(b.size());
      kc::block_triangle_residual(tri, F.cview(), b.data(), x.data(), wc.data());
      Array<double> dw = upload(std::vector<double>(b.size(), nan_v));
      kg::block_triangle_residual(gpu()->stream(), tri, dF.cview(), db.data(), dx.data(), dw.data());
      EXPECT_LE(test_ilu::rel_diff(dw.to_host(), wc), 1e-13)
          << (tri == kernels::Triangle::unit_lower ? "L" : "U");
    }
  }
  const DeviceBsr empty(HostBsr{});
  kg::block_triangle_residual(gpu()->stream(), kernels::Triangle::upper, empty.cview(), nullptr, nullptr, nullptr);
  gpu()->synchronize();
}

// The fp32-valued residual and product (mixed-precision block ILU(0)/ISAI) on the device against the
// CPU twins (the same order of operations: to rounding), odd sizes, bs 1..64, outputs poisoned; beta 0
// and 1; an empty matrix is a no-op.
TEST(BlockIlu0Gpu, Fp32ResidualAndProductMatchTheCpu)
{
  for (int bs : {1, 2, 3, 4, 7, 8, 9, 16, 33, 64}) {
    SCOPED_TRACE("bs " + std::to_string(bs));
    const index_t n = bs <= 8 ? 1001 : bs <= 33 ? 67 : 11;
    const HostBsr F = dominant(random_pattern(n, bs, 5, 9));
    std::vector<float> v32(F.val.begin(), F.val.end());
    const BsrView<const float> F32{F.n, F.n, F.bs, F.row_ptr.data(), F.col.data(), v32.data()};
    const DeviceBsr dF(F);
    const Array<float> dv32(gpu(), std::span<const float>(v32));
    const BsrView<const float> dF32{F.n, F.n, F.bs, dF.row_ptr.data(), dF.col.data(), dv32.data()};
    const auto x = random_vector(F.scalar_rows()), b = random_vector(F.scalar_rows());
    const Array<double> dx = upload(x), db = upload(b);
    for (const auto tri : {kernels::Triangle::unit_lower, kernels::Triangle::upper}) {
      std::vector<double> wc(b.size());
      kc::block_triangle_residual(tri, F32, b.data(), x.data(), wc.data());
      Array<double> dw = upload(std::vector<double>(b.size(), nan_v));
      kg::block_triangle_residual(gpu()->stream(), tri, dF32, db.data(), dx.data(), dw.data());
      EXPECT_LE(test_ilu::rel_diff(dw.to_host(), wc), 1e-13) << (tri == kernels::Triangle::unit_lower ? "L" : "U");
    }
    for (const double beta : {0.0, 1.0}) {
      std::vector<double> yc = beta == 0.0 ? std::vector<double>(b.size(), nan_v) : b;
      Array<double> dy = upload(yc);
      kc::bsr_gemv_fp32(F32, x.data(), beta, yc.data());
      kg::bsr_gemv_fp32(gpu()->stream(), dF32, dx.data(), beta, dy.data());
      EXPECT_LE(test_ilu::rel_diff(dy.to_host(), yc), 1e-13) << "beta " << beta;
    }
  }
  kg::bsr_gemv_fp32(gpu()->stream(), BsrView<const float>{}, nullptr, 0.0, nullptr);
  gpu()->synchronize();
}
