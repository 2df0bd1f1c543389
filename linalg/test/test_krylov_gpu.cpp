// IDR(s) and its fused vector ops on the CUDA backend against the CPU reference (fresh random
// input, odd sizes, poisoned outputs). Label `gpu`; skipped without a device.
#include "linalg/krylov.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

using namespace blockres;

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();

struct Backends {
  ExecPtr cpu = Executor::create_cpu();
  ExecPtr gpu = Executor::create_cuda(0);
};

Backends& backends()
{
  static Backends b;
  return b;
}

// ||b - A x|| on the CPU for a solution computed on either backend.
double cpu_residual(const BsrMatrix& A, const std::vector<double>& hb, const std::vector<double>& hx)
{
  const auto& e = A.exec_ptr();
  Vector b(e, std::span<const double>(hb)), x(e, std::span<const double>(hx));
  spmv(A, -1.0, x, 1.0, b);
  return norm2(b);
}

}  // namespace

TEST(FusedVectorOpsGpu, MatchCpu)
{
  auto& B = backends();
  // k = 17 and 35 run in chunks of 16; n = 1 leaves most of the grid idle; 2^20 + 3 fills it.
  for (size64_t n : {1, 31, 1000, 100003, (1 << 20) + 3}) {
    for (int k : {1, 2, 5, 16, 17, 35}) {
      std::vector<Vector> xc, xg;
      std::vector<const Vector*> pc, pg;
      for (int j = 0; j < k; ++j) {
        const auto h = test::random_vector(n);
        xc.emplace_back(B.cpu, std::span<const double>(h));
        xg.emplace_back(B.gpu, std::span<const double>(h));
      }
      for (int j = 0; j < k; ++j) pc.push_back(&xc[j]), pg.push_back(&xg[j]);
      const auto hy = test::random_vector(n);
      Vector yc(B.cpu, std::span<const double>(hy)), yg(B.gpu, std::span<const double>(hy));

      std::vector<double> oc(static_cast<std::size_t>(k), nan_v), og(static_cast<std::size_t>(k), nan_v);
      dots(pc.data(), k, yc, oc.data());
      dots(pg.data(), k, yg, og.data());
      for (int j = 0; j < k; ++j) EXPECT_NEAR(og[j], oc[j], 1e-13 * n) << "n " << n << " k " << k << " j " << j;
      // Deterministic reduction: the same call gives bitwise the same results.
      std::vector<double> again(static_cast<std::size_t>(k), nan_v);
      dots(pg.data(), k, yg, again.data());
      EXPECT_EQ(again, og) << "n " << n << " k " << k;

      const auto a = test::random_vector(k);
      for (double b : {0.0, 0.75}) {
        // b = 0 must not read y: a poisoned y never leaks.
        const std::vector<double> y0 = b == 0.0 ? std::vector<double>(hy.size(), nan_v) : hy;
        yc.copy_from_host(y0), yg.copy_from_host(y0);
        multi_axpby(pc.data(), a.data(), k, b, yc);
        multi_axpby(pg.data(), a.data(), k, b, yg);
        EXPECT_LE(test::max_rel_diff(yg.to_host(), yc.to_host()), 1e-13) << "n " << n << " k " << k << " b " << b;
      }
    }
  }
}

// IDR(4) on the matrices of the CPU tests: converges on the device, within 2 iterations of the
// CPU run (rounding differs, the shadow space does not), to the requested true residual.
TEST(IdrGpu, SameIterationsAsCpu)
{
  auto& B = backends();
  for (bool jacobi : {false, true}) {
    for (int bs : {1, 2, 4}) {
      const auto m = test::convection_diffusion(13, 14, 12, bs, 2.0);
      BsrMatrix Ac(B.cpu, bs, m.pattern), Ag(B.gpu, bs, m.pattern);
      Ac.values().copy_from_host(m.values);
      Ag.values().copy_from_host(m.values);
      const auto hb = test::random_vector(Ac.scalar_rows());
      const auto hx0 = test::random_vector(Ac.scalar_rows());
      Vector bc(B.cpu, std::span<const double>(hb)), bg(B.gpu, std::span<const double>(hb));
      Vector xc(B.cpu, std::span<const double>(hx0)), xg(B.gpu, std::span<const double>(hx0));
      BlockJacobiPreconditioner Jc(B.cpu), Jg(B.gpu);
      IdentityPreconditioner I;
      ASSERT_TRUE(Jc.setup(Ac).ok);
      ASSERT_TRUE(Jg.setup(Ag).ok);
      KrylovConfig cfg;
      cfg.method = KrylovMethod::idr;
      cfg.rel_tol = 1e-10;
      cfg.max_iterations = 2000;
      cfg.idr_s = 4;
      KrylovSolver sc(B.cpu, cfg), sg(B.gpu, cfg);
      const auto stc = sc.solve(Ac, jacobi ? static_cast<const Preconditioner&>(Jc) : I, bc, xc);
      const auto stg = sg.solve(Ag, jacobi ? static_cast<const Preconditioner&>(Jg) : I, bg, xg);
      const std::string what = std::string(jacobi ? "block-Jacobi" : "none") + " bs " + std::to_string(bs);
      std::printf("IDR(4) + %s: cpu %d, cuda %d iterations\n", what.c_str(), stc.iterations, stg.iterations);
      ASSERT_TRUE(stc.converged) << what << ": " << to_string(stc.reason);
      ASSERT_TRUE(stg.converged) << what << ": " << to_string(stg.reason);
      EXPECT_LE(std::abs(stc.iterations - stg.iterations), 2) << what;
      EXPECT_NEAR(stg.initial_residual, stc.initial_residual, 1e-12 * stc.initial_residual) << what;
      EXPECT_LE(cpu_residual(Ac, hb, xg.to_host()), 1e-10 * stc.initial_residual * (1 + 1e-6)) << what;
      EXPECT_LE(test::max_rel_diff(xg.to_host(), xc.to_host()), 1e-6) << what;
    }
  }
}

TEST(IdrGpu, NaNIsReported)
{
  auto& B = backends();
  const auto m = test::convection_diffusion(7, 6, 5, 2, 1.0);
  for (bool in_matrix : {false, true}) {
    auto vals = m.values;
    auto hb = test::random_vector(size64_t(m.pattern.nrows) * 2);
    (in_matrix ? vals[41] : hb[17]) = nan_v;
    BsrMatrix A(B.gpu, 2, m.pattern);
    A.values().copy_from_host(vals);
    Vector b(B.gpu, std::span<const double>(hb)), x(B.gpu, A.scalar_rows());
    fill(x, 0.0);
    IdentityPreconditioner I;
    KrylovConfig cfg;
    cfg.method = KrylovMethod::idr;
    cfg.max_iterations = 50;
    KrylovSolver s(B.gpu, cfg);
    const auto st = s.solve(A, I, b, x);
    EXPECT_FALSE(st.converged);
    EXPECT_EQ(st.reason, SolveReason::not_finite) << (in_matrix ? "matrix" : "rhs");
  }
}
