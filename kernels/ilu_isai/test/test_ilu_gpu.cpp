// CUDA ILU(0) and level-scheduled triangular solves against the CPU references: sizes 1, 7,
// 33, 1001, 4097, 30000 (dense, tridiagonal, 2D/3D stencils, random scalar patterns, random and
// banded BSR expansions with block sizes 1..4, rows longer than a warp), factors and solutions
// compared entry by entry, poisoned outputs, bad pivots reported with the CPU's row (also when
// a later row fails in an earlier level), the empty matrix, argument checks. Label `gpu`.
#include "kernels/ilu_isai/ilu.hpp"
#include "kernels/ilu_isai/test/device_test_util.hpp"
#include "kernels/ilu_isai/test/ilu_test_util.hpp"
#include "linalg/array.hpp"
#include "linalg/executor.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

using namespace blockres;
using namespace blockres::test_device;
using namespace blockres::test_ilu;
using kernels::IluSchedule;
namespace kc = blockres::kernels::cpu;
namespace kg = blockres::kernels::cuda;

namespace {

IluSchedule schedule_of(const Csr& A) { return kernels::ilu_schedule(A.n, A.row_ptr.data(), A.col.data()); }

// Device ILU(0) of A: the factors and the info, which starts as garbage.
std::pair<Csr, int> gpu_factor(const ExecPtr& gpu, const Csr& A, const IluSchedule& s)
{
  DeviceSchedule ds(gpu, s);
  DeviceCsr dA(gpu, A);
  Array<int> info = upload(gpu, std::vector<int>{-777});
  kg::ilu0_factor(gpu->stream(), ds.view, dA.view(), info.data());
  gpu->synchronize();
  Csr F = A;
  F.val = dA.val.to_host();
  return {F, info.to_host()[0]};
}

std::vector<std::pair<std::string, Csr>> gpu_matrices()
{
  std::vector<std::pair<std::string, Csr>> out;
  out.emplace_back("n 1", dominant(dense_pattern(1)));
  out.emplace_back("random n 7", dominant(random_pattern(7, 3)));
  out.emplace_back("dense 33 (rows longer than a warp)", dominant(dense_pattern(33)));
  out.emplace_back("tridiagonal 4097 (one row per level)", dominant(tridiagonal_pattern(4097)));
  out.emplace_back("2D 5-point 7x143 (n 1001)", dominant(stencil_2d_pattern(7, 143)));
  out.emplace_back("random scalar 1001", dominant(random_pattern(1001, 5)));
  out.emplace_back("3D 7-point 30x40x25 (n 30000)", dominant(stencil_3d_pattern(30, 40, 25)));
  const index_t random_nb[] = {30001, 5001, 3333, 2501}, banded_nb[] = {1001, 501, 333, 251};
  for (int bs = 1; bs <= 4; ++bs) {
    const std::string b = std::to_string(bs);
    out.emplace_back("random BSR bs " + b, dominant(random_bsr_pattern(random_nb[bs - 1], bs, 3)));
    out.emplace_back("banded BSR bs " + b, dominant(random_bsr_pattern(banded_nb[bs - 1], bs, 4, 8)));
  }
  out.emplace_back("banded BSR bs 4, 9+ blocks per row", dominant(random_bsr_pattern(301, 4, 10, 12)));
  return out;
}

}  // namespace

TEST(Ilu0Gpu, FactorMatchesCpu)
{
  auto gpu = Executor::create_cuda(0);
  for (const auto& [what, A] : gpu_matrices()) {
    const IluSchedule s = schedule_of(A);
    Csr F = A;
    ASSERT_EQ(kc::ilu0_factor(s, F.view()), 0) << what;
    const auto [G, info] = gpu_factor(gpu, A, s);
    EXPECT_EQ(info, 0) << what;
    EXPECT_LE(rel_diff(G.val, F.val), 1e-12) << what;
    EXPECT_LE(pattern_residual(A, G), 1e-12) << what;  // the ILU(0) property, independently of the CPU
  }
}

TEST(Ilu0Gpu, SolvesMatchCpu)
{
  // On the CPU's factors, so that only the solves are compared; also L then U chained on the
  // device, the way a preconditioner applies them. Every output starts as NaN.
  auto gpu = Executor::create_cuda(0);
  for (const auto& [what, A] : gpu_matrices()) {
    const IluSchedule s = schedule_of(A);
    Csr F = A;
    ASSERT_EQ(kc::ilu0_factor(s, F.view()), 0) << what;
    const std::vector<double> b = random_vector(A.n);
    std::vector<double> y(b.size()), x(b.size()), z(b.size());
    kc::ilu0_lower_solve(s, F.cview(), b.data(), y.data());
    kc::ilu0_upper_solve(s, F.cview(), b.data(), x.data());
    kc::ilu0_upper_solve(s, F.cview(), y.data(), z.data());

    DeviceSchedule ds(gpu, s);
    const DeviceCsr dF(gpu, F);
    const Array<double> db = upload(gpu, b);
    const std::vector<double> poison(b.size(), nan_v);
    Array<double> dy = upload(gpu, poison), dx = upload(gpu, poison), dz = upload(gpu, poison);
    kg::ilu0_lower_solve(gpu->stream(), ds.view, dF.cview(), db.data(), dy.data());
    kg::ilu0_upper_solve(gpu->stream(), ds.view, dF.cview(), db.data(), dx.data());
    kg::ilu0_upper_solve(gpu->stream(), ds.view, dF.cview(), dy.data(), dz.data());
    gpu->synchronize();
    EXPECT_LE(rel_diff(dy.to_host(), y), 1e-12) << what << " L";
    EXPECT_LE(rel_diff(dx.to_host(), x), 1e-12) << what << " U";
    EXPECT_LE(rel_diff(dz.to_host(), z), 1e-12) << what << " U L";
  }
}

TEST(Ilu0Gpu, BadPivotInfoMatchesCpu)
{
  auto gpu = Executor::create_cuda(0);
  struct Case {
    std::string what;
    Csr A;
    int expect;
  };
  std::vector<Case> cases;
  {
    // Tridiagonal with u_33 = 0 exactly (see the CPU test): row 3, and row 4 fails too.
    Csr A = tridiagonal_pattern(5);
    const double d[] = {2, 2.5, 2.5, 0.5, 2};
    for (index_t i = 0; i < A.n; ++i)
      for (index_t p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) A.val[p] = A.col[p] == i ? d[i] : 1.0;
    cases.push_back({"tridiagonal u_33 = 0", std::move(A), 4});
  }
  {
    // Zero rows nx - 1 (L level nx - 1) and nx (L level 1) of a 2D stencil: the device sees row
    // nx fail first, but the smallest row is nx - 1.
    const index_t nx = 37, ny = 29;
    Csr A = dominant(stencil_2d_pattern(nx, ny));
    for (index_t r : {nx - 1, nx})
      for (index_t p = A.row_ptr[r]; p < A.row_ptr[r + 1]; ++p) A.val[p] = 0.0;
    cases.push_back({"2D zero rows", std::move(A), nx});
  }
  {
    // A zero scalar row (all its entries) in a random BSR expansion: its l_ik are 0, so u_rr = 0
    // exactly; the rows before it are dominant and unaffected, later dependent rows go non-finite.
    Csr A = dominant(random_bsr_pattern(777, 3, 3));
    const index_t r = 3 * 500 + 1;
    for (index_t p = A.row_ptr[r]; p < A.row_ptr[r + 1]; ++p) A.val[p] = 0.0;
    cases.push_back({"BSR zero row", std::move(A), r + 1});
  }
  {
    // A NaN diagonal entry in row 400 of a 3D stencil (it spreads to the rows after it).
    Csr A = dominant(stencil_3d_pattern(11, 9, 7));
    A.val[A.find(400, 400)] = nan_v;
    cases.push_back({"3D NaN pivot", std::move(A), 401});
  }
  {
    Csr A = dominant(random_pattern(1001, 4));
    A.val[A.find(0, 0)] = 0.0;
    cases.push_back({"zero a_00", std::move(A), 1});
  }
  for (const auto& [what, A, expect] : cases) {
    const IluSchedule s = schedule_of(A);
    Csr F = A;
    const int cpu_info = kc::ilu0_factor(s, F.view());
    EXPECT_EQ(cpu_info, expect) << what;
    EXPECT_EQ(gpu_factor(gpu, A, s).second, cpu_info) << what;
  }
  // The info of a good factorisation after a bad one is 0 again (the sentinel is reset).
  const Csr bad = cases.front().A, good = dominant(stencil_2d_pattern(9, 11));
  const IluSchedule sb = schedule_of(bad), sg = schedule_of(good);
  DeviceSchedule dsb(gpu, sb), dsg(gpu, sg);
  DeviceCsr db(gpu, bad), dg(gpu, good);
  Array<int> info = upload(gpu, std::vector<int>{12345});
  kg::ilu0_factor(gpu->stream(), dsb.view, db.view(), info.data());
  EXPECT_EQ(info.to_host()[0], 4);
  kg::ilu0_factor(gpu->stream(), dsg.view, dg.view(), info.data());
  EXPECT_EQ(info.to_host()[0], 0);
}

TEST(Ilu0Gpu, CheckPivotsMatchesCpu)
{
  // The pivot check alone (the cuSPARSE path's): random values on every test pattern, then zero, NaN and
  // infinite diagonals at random rows (one, several, none), against the CPU twin; info starts as garbage.
  auto gpu = Executor::create_cuda(0);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  const double poisons[] = {0.0, -0.0, nan_v, std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity()};
  int bad_seen = 0;
  for (auto& [what, A0] : gpu_matrices()) {
    const IluSchedule s = schedule_of(A0);
    DeviceSchedule ds(gpu, s);
    for (int trial = 0; trial < 4; ++trial) {
      Csr A = A0;
      for (auto& v : A.val) v = u(rng());
      const int nbad = trial == 0 ? 0 : trial;  // 0, 1, 2, 3 poisoned rows
      for (int k = 0; k < nbad; ++k) {
        const index_t r = std::uniform_int_distribution<index_t>(0, A.n - 1)(rng());
        A.val[s.diag[r]] = poisons[std::uniform_int_distribution<int>(0, 4)(rng())];
      }
      DeviceCsr dA(gpu, A);
      Array<int> info = upload(gpu, std::vector<int>{-777});
      kg::ilu0_check_pivots(gpu->stream(), A.n, ds.view.diag, dA.cview().val, info.data());
      const int expect = kc::ilu0_check_pivots(A.n, s.diag.data(), A.val.data());
      EXPECT_EQ(info.to_host()[0], expect) << what << " trial " << trial;
      EXPECT_EQ(expect == 0, nbad == 0) << what << " trial " << trial;
      bad_seen += expect != 0;
    }
  }
  EXPECT_GT(bad_seen, 0);
  Array<int> info = upload(gpu, std::vector<int>{5});
  kg::ilu0_check_pivots(gpu->stream(), 0, nullptr, nullptr, info.data());
  EXPECT_EQ(info.to_host()[0], 0);
  EXPECT_THROW(kg::ilu0_check_pivots(gpu->stream(), 0, nullptr, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(kg::ilu0_check_pivots(gpu->stream(), 3, nullptr, nullptr, info.data()), std::invalid_argument);
}

TEST(Ilu0Gpu, EmptyMatrixAndArgumentChecks)
{
  auto gpu = Executor::create_cuda(0);
  const Csr E;  // n = 0
  const IluSchedule s0 = schedule_of(E);
  DeviceSchedule ds0(gpu, s0);
  DeviceCsr dE(gpu, E);
  Array<int> info = upload(gpu, std::vector<int>{-777});
  kg::ilu0_factor(gpu->stream(), ds0.view, dE.view(), info.data());
  EXPECT_EQ(info.to_host()[0], 0);
  EXPECT_NO_THROW(kg::ilu0_lower_solve(gpu->stream(), ds0.view, dE.cview(), nullptr, nullptr));
  EXPECT_NO_THROW(kg::ilu0_upper_solve(gpu->stream(), ds0.view, dE.cview(), nullptr, nullptr));
  gpu->synchronize();

  // A schedule of another size, a missing host schedule or info: rejected before any launch.
  const Csr A = dominant(tridiagonal_pattern(6));
  DeviceCsr dA(gpu, A);
  Array<double> b(gpu, 6), x(gpu, 6);
  EXPECT_THROW(kg::ilu0_factor(gpu->stream(), ds0.view, dA.view(), info.data()), std::invalid_argument);
  EXPECT_THROW(kg::ilu0_lower_solve(gpu->stream(), ds0.view, dA.cview(), b.data(), x.data()), std::invalid_argument);
  EXPECT_THROW(kg::ilu0_upper_solve(gpu->stream(), ds0.view, dA.cview(), b.data(), x.data()), std::invalid_argument);
  const IluSchedule s = schedule_of(A);
  DeviceSchedule ds(gpu, s);
  kg::IluDeviceSchedule no_host = ds.view;
  no_host.host = nullptr;
  EXPECT_THROW(kg::ilu0_factor(gpu->stream(), no_host, dA.view(), info.data()), std::invalid_argument);
  EXPECT_THROW(kg::ilu0_factor(gpu->stream(), ds.view, dA.view(), nullptr), std::invalid_argument);
  gpu->synchronize();
}
