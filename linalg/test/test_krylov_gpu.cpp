// The Krylov suite and its fused vector ops on the CUDA backend against the CPU reference (fresh random
// input, odd sizes, poisoned outputs). Label `gpu`; skipped without a device.
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"
#include "linalg/preconditioners/none/none.hpp"
#include "linalg/test/gpu_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace blockres;

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();

using test::backends;

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

// ---- the whole suite (CG, BiCGSTAB, GMRES, FGMRES, IDR(4)) on the device

namespace {

const KrylovMethod every_method[] = {KrylovMethod::cg, KrylovMethod::bicgstab, KrylovMethod::gmres,
                                     KrylovMethod::fgmres, KrylovMethod::idr};

test::TestMatrix matrix_for(KrylovMethod m, int nx, int ny, int nz, int bs)
{
  return m == KrylovMethod::cg ? test::spd_laplacian(nx, ny, nz, bs) : test::convection_diffusion(nx, ny, nz, bs, 2.0);
}

// One solve of the same system (random b, x0 = 0) on the CPU and on the device with configuration
// cfg, unpreconditioned or with block-Jacobi; checks that both converged, the device within 2
// iterations of the CPU, to the requested true residual and the CPU's solution. Returns the device
// solver (its profile).
std::unique_ptr<KrylovSolver> expect_same_solve(const test::TestMatrix& m, const KrylovConfig& cfg, bool jacobi,
                                                const std::string& what)
{
  auto& B = backends();
  BsrMatrix Ac = test::upload(B.cpu, m), Ag = test::upload(B.gpu, m);
  const auto hb = test::random_vector(Ac.scalar_rows());
  Vector bc(B.cpu, std::span<const double>(hb)), bg(B.gpu, std::span<const double>(hb));
  Vector xc(B.cpu, Ac.scalar_rows()), xg(B.gpu, Ac.scalar_rows());
  fill(xc, 0.0);
  fill(xg, 0.0);
  BlockJacobiPreconditioner Jc(B.cpu), Jg(B.gpu);
  IdentityPreconditioner I;
  EXPECT_TRUE(Jc.setup(Ac).ok);
  EXPECT_TRUE(Jg.setup(Ag).ok);
  KrylovSolver sc(B.cpu, cfg);
  auto sg = std::make_unique<KrylovSolver>(B.gpu, cfg);
  sg->set_profiling(true);
  const auto stc = sc.solve(Ac, jacobi ? static_cast<const Preconditioner&>(Jc) : I, bc, xc);
  const auto stg = sg->solve(Ag, jacobi ? static_cast<const Preconditioner&>(Jg) : I, bg, xg);
  std::printf("%s: cpu %d, cuda %d iterations\n", what.c_str(), stc.iterations, stg.iterations);
  EXPECT_TRUE(stc.converged) << what << ": " << to_string(stc.reason);
  EXPECT_TRUE(stg.converged) << what << ": " << to_string(stg.reason);
  EXPECT_LE(std::abs(stc.iterations - stg.iterations), 2) << what;
  EXPECT_LE(cpu_residual(Ac, hb, xg.to_host()), 1e-10 * stc.initial_residual * (1 + 1e-6)) << what;
  EXPECT_LE(test::max_rel_diff(xg.to_host(), xc.to_host()), 1e-6) << what;
  return sg;
}

}  // namespace

// Every method, unpreconditioned and with block-Jacobi: converges on the device within 2
// iterations of the CPU run, to the requested true residual, with the CPU's solution.
TEST(KrylovSuiteGpu, EveryMethodWithinTwoIterationsOfCpu)
{
  for (KrylovMethod method : every_method)
    for (bool jacobi : {false, true})
      for (int bs : {1, 3, 4}) {
        KrylovConfig cfg;
        cfg.method = method;
        cfg.rel_tol = 1e-10;
        cfg.max_iterations = 2000;
        const std::string what =
            std::string(to_string(method)) + (jacobi ? " + block-Jacobi" : " + none") + " bs " + std::to_string(bs);
        const auto sg = expect_same_solve(matrix_for(method, 13, 14, 11, bs), cfg, jacobi, what);
        // The device phases were timed with events: SpMV time is positive and the phases fit in the total.
        const KrylovProfile& pr = sg->profile();
        EXPECT_GT(pr.spmv_seconds, 0.0) << what;
        EXPECT_GE(pr.other_seconds(), 0.0) << what;
        EXPECT_EQ(pr.precond_count > 0, jacobi) << what;
      }
}

// GMRES/FGMRES with the delayed reorthogonalisation (dcgs2: cuBLAS two-column products) on the
// device against the CPU, restarts 5 and 30, with block-Jacobi.
TEST(KrylovSuiteGpu, DelayedReorthogonalisationWithinTwoIterationsOfCpu)
{
  for (KrylovMethod method : {KrylovMethod::gmres, KrylovMethod::fgmres})
    for (int restart : {5, 30})
      for (int bs : {1, 3}) {
        KrylovConfig cfg;
        cfg.method = method;
        cfg.rel_tol = 1e-10;
        cfg.max_iterations = 2000;
        cfg.restart = restart;
        cfg.orthogonalization = Orthogonalization::dcgs2;
        expect_same_solve(matrix_for(method, 13, 14, 11, bs), cfg, true,
                          std::string(to_string(method)) + " dcgs2 restart " + std::to_string(restart) + " bs " +
                              std::to_string(bs));
      }
}

TEST(KrylovSuiteGpu, NaNAndBreakdownAreReportedByEveryMethod)
{
  auto& B = backends();
  for (KrylovMethod method : every_method) {
    for (int c = 0; c < 3; ++c) {  // NaN in the rhs, NaN in the matrix, zero matrix
      auto m = matrix_for(method, 7, 6, 5, 2);
      auto hb = test::random_vector(size64_t(m.pattern.nrows) * 2);
      if (c == 0) hb[17] = nan_v;
      if (c == 1) m.values[41] = nan_v;
      if (c == 2) std::fill(m.values.begin(), m.values.end(), 0.0);
      BsrMatrix A = test::upload(B.gpu, m);
      Vector b(B.gpu, std::span<const double>(hb)), x(B.gpu, A.scalar_rows());
      fill(x, 0.0);
      IdentityPreconditioner I;
      KrylovConfig cfg;
      cfg.method = method;
      cfg.max_iterations = 50;
      KrylovSolver s(B.gpu, cfg);
      const auto st = s.solve(A, I, b, x);
      EXPECT_FALSE(st.converged) << to_string(method) << " case " << c;
      EXPECT_EQ(st.reason, c == 2 ? SolveReason::breakdown : SolveReason::not_finite)
          << to_string(method) << " case " << c;
    }
  }
}

// The fused Krylov kernels and the cuBLAS GEMVs against the CPU reference: odd sizes, outputs the
// kernel must not read poisoned, s aliasing r as BiCGSTAB uses it.
TEST(KrylovSuiteGpu, FusedKernelsAndGemvMatchCpu)
{
  auto& B = backends();
  for (size64_t n : {1, 31, 100003, (1 << 20) + 3}) {
    auto up = [&](const ExecPtr& e, const std::vector<double>& h) { return Vector(e, std::span<const double>(h)); };
    const auto hx = test::random_vector(n), hy = test::random_vector(n), hp = test::random_vector(n),
               hq = test::random_vector(n), ht = test::random_vector(n), hrh = test::random_vector(n);
    const double tol = 1e-13 * std::sqrt(double(n));
    {
      Vector xc = up(B.cpu, hx), yc = up(B.cpu, hy), xg = up(B.gpu, hx), yg = up(B.gpu, hy);
      const double nc = axpby_norm2(0.7, xc, -1.3, yc), ng = axpby_norm2(0.7, xg, -1.3, yg);
      EXPECT_NEAR(ng, nc, tol * nc) << n;
      std::vector<double> S(n);
      for (size64_t i = 0; i < n; ++i) S[i] = std::abs(0.7 * hx[i]) + std::abs(1.3 * hy[i]);
      EXPECT_LE(test::rounding_units(yg.to_host(), yc.to_host(), S, 2), 1.0) << n;
    }
    {
      Vector pc = up(B.cpu, hp), qc = up(B.cpu, hq), xc = up(B.cpu, hx), rc = up(B.cpu, hy);
      Vector pg = up(B.gpu, hp), qg = up(B.gpu, hq), xg = up(B.gpu, hx), rg = up(B.gpu, hy);
      const double nc = cg_update(0.3, pc, qc, xc, rc), ng = cg_update(0.3, pg, qg, xg, rg);
      EXPECT_NEAR(ng, nc, tol * nc) << n;
      std::vector<double> Sx(n), Sr(n);
      for (size64_t i = 0; i < n; ++i)
        Sx[i] = std::abs(hx[i]) + std::abs(0.3 * hp[i]), Sr[i] = std::abs(hy[i]) + std::abs(0.3 * hq[i]);
      EXPECT_LE(test::rounding_units(xg.to_host(), xc.to_host(), Sx, 2), 1.0) << n;
      EXPECT_LE(test::rounding_units(rg.to_host(), rc.to_host(), Sr, 2), 1.0) << n;
    }
    {
      Vector pc = up(B.cpu, hp), tc = up(B.cpu, ht), rhc = up(B.cpu, hrh), xc = up(B.cpu, hx), rc = up(B.cpu, hy);
      Vector pg = up(B.gpu, hp), tg = up(B.gpu, ht), rhg = up(B.gpu, hrh), xg = up(B.gpu, hx), rg = up(B.gpu, hy);
      double oc[2], og[2];
      bicgstab_update(0.4, pc, -0.6, rc, rc, tc, rhc, xc, rc, oc);
      bicgstab_update(0.4, pg, -0.6, rg, rg, tg, rhg, xg, rg, og);
      EXPECT_NEAR(og[0], oc[0], tol * oc[0]) << n;
      EXPECT_NEAR(og[1], oc[1], tol * (std::abs(oc[1]) + std::sqrt(oc[0]))) << n;
      std::vector<double> Sx(n), Sr(n);  // x += 0.4 p - 0.6 s, r = s + 0.6 t with s = r
      for (size64_t i = 0; i < n; ++i) {
        Sx[i] = std::abs(hx[i]) + std::abs(0.4 * hp[i]) + std::abs(0.6 * hy[i]);
        Sr[i] = std::abs(hy[i]) + std::abs(0.6 * ht[i]);
      }
      EXPECT_LE(test::rounding_units(xg.to_host(), xc.to_host(), Sx, 3), 1.0) << n;
      EXPECT_LE(test::rounding_units(rg.to_host(), rc.to_host(), Sr, 2), 1.0) << n;
    }
    for (int k : {1, 7, 31, 35})  // 35: the own kernels run in chunks of 32 columns
      for (GemvKernel kernel : {GemvKernel::cublas, GemvKernel::own}) {
        const char* kn = kernel == GemvKernel::own ? "own" : "cublas";
        MultiVector Vc(B.cpu, n, k), Vg(B.gpu, n, k);
        for (int j = 0; j < k; ++j) {
          const auto h = test::random_vector(n);
          Vc.col(j).copy_from_host(h);
          Vg.col(j).copy_from_host(h);
        }
        Vector wc = up(B.cpu, hx), wg = up(B.gpu, hx);
        std::vector<double> hc(k, nan_v);
        Array<double> hg(B.gpu, std::span<const double>(hc));
        gemv_t(Vc, k, wc, hc.data());
        gemv_t(Vg, k, wg, hg.data(), kernel);
        const auto hgh = hg.to_host();
        for (int j = 0; j < k; ++j)
          EXPECT_NEAR(hgh[j], hc[j], tol * (1 + std::abs(hc[j]))) << kn << " gemv_t n " << n << " k " << k;
        const auto coef = test::random_vector(k);
        Array<double> coef_dev(B.gpu, std::span<const double>(coef));
        for (double b : {0.0, 1.0}) {
          const std::vector<double> y0 = b == 0.0 ? std::vector<double>(n, nan_v) : hy;
          Vector yc = up(B.cpu, y0), yg = up(B.gpu, y0);
          gemv_n(-0.9, Vc, k, coef.data(), b, yc);
          gemv_n(-0.9, Vg, k, coef_dev.data(), b, yg, kernel);
          EXPECT_LE(test::max_rel_diff(yg.to_host(), yc.to_host()), 1e-12)
              << kn << " gemv_n n " << n << " k " << k << " b " << b;
        }
      }
  }
}

// One CGS2 step (vector_ops' cgs2) on the device, every Gram–Schmidt kernel choice, against the CPU
// reference: odd sizes, k across the fused kernels' column classes (4, 8, 16, 32) and past them (33:
// the cuBLAS sequence), unit columns (nearly orthogonal for large n), h1, h2 and ||w||^2 poisoned
// before the call; the fused passes give bitwise the same results when repeated (their last-block
// sums follow a fixed order and the ticket goes back to 0); with a do-nothing hook between the passes (where a
// distributed basis sums over the ranks) the same bits, the hook seeing h1, h2 and ||w||^2 in turn.
TEST(KrylovSuiteGpu, Cgs2StepMatchesCpu)
{
  auto& B = backends();
  for (size64_t n : {1, 31, 4099, 100003, (1 << 20) + 3}) {
    for (int k : {1, 3, 4, 5, 8, 9, 16, 17, 31, 32, 33}) {
      std::vector<double> hv(static_cast<std::size_t>(n) * (k + 1));
      for (int j = 0; j <= k; ++j) {
        const auto col = test::random_vector(n);
        double nn = 0.0;
        for (double e : col) nn += e * e;
        const double s = j < k ? 1.0 / std::sqrt(nn) : 1.0;  // column k is w
        for (size64_t i = 0; i < n; ++i) hv[static_cast<std::size_t>(j * n + i)] = s * col[static_cast<std::size_t>(i)];
      }
      MultiVector Vc(B.cpu, n, k + 1);
      std::copy(hv.begin(), hv.end(), Vc.data());
      std::vector<double> hc(2 * k + 1, nan_v);
      cgs2(Vc, k, Vc.col(k), hc.data(), hc.data() + k, hc.data() + 2 * k, GemvKernel::fused);
      const auto wc = Vc.col(k).to_host();
      ASSERT_TRUE(std::isfinite(hc[2 * k])) << n << " " << k;
      // The rounding bound of a dot product of length n (the CPU adds in sequence, the device in a
      // tree): n eps ||v|| ||w|| with unit columns, where ||w|| is at most M = ||w_0|| + sum |h1| +
      // sum |h2| in every pass (w grows when n < k: the columns cannot be orthogonal there); w's
      // entries move by k such errors times |v_ij|.
      double s2 = 0.0, vmax = 0.0;
      for (size64_t i = 0; i < n; ++i) s2 += hv[static_cast<std::size_t>(k * n + i)] * hv[static_cast<std::size_t>(k * n + i)];
      for (size64_t i = 0; i < n * k; ++i) vmax = std::max(vmax, std::abs(hv[static_cast<std::size_t>(i)]));
      double M = std::sqrt(s2);
      for (int j = 0; j < 2 * k; ++j) M += std::abs(hc[j]);
      const double s = M, eps = std::numeric_limits<double>::epsilon();
      const double tol_h = 4.0 * eps * double(n + 2 * k) * s;
      const double tol_w = tol_h * (1.0 + k * vmax);
      auto upload = [&](MultiVector& V) {
        for (int j = 0; j <= k; ++j)
          V.col(j).copy_from_host(std::span<const double>(hv.data() + j * n, static_cast<std::size_t>(n)));
      };
      for (GemvKernel kernel : {GemvKernel::fused, GemvKernel::cublas, GemvKernel::own}) {
        const std::string what = std::string(to_string(kernel)) + " n " + std::to_string(n) + " k " + std::to_string(k);
        MultiVector Vg(B.gpu, n, k + 1);
        upload(Vg);
        Array<double> hg(B.gpu, std::span<const double>(std::vector<double>(2 * k + 1, nan_v)));
        cgs2(Vg, k, Vg.col(k), hg.data(), hg.data() + k, hg.data() + 2 * k, kernel);
        const auto hgh = hg.to_host();
        for (int j = 0; j < 2 * k; ++j) EXPECT_NEAR(hgh[j], hc[j], tol_h) << what << " h[" << j << "]";
        EXPECT_NEAR(hgh[2 * k], hc[2 * k], 2.0 * tol_h * s) << what << " ||w||^2";
        const auto wg = Vg.col(k).to_host();
        double d = 0.0;
        for (size64_t i = 0; i < n; ++i) d = std::max(d, std::abs(wg[i] - wc[i]));
        EXPECT_LE(d, tol_w) << what << " w";
        {  // with a hook between the passes (a distributed basis sums there): called with h1, h2, ||w||^2 in turn,
           // each before it is used; doing nothing, it leaves the bits as they were
          upload(Vg);
          Array<double> hooked(B.gpu, std::span<const double>(std::vector<double>(2 * k + 1, nan_v)));
          std::vector<std::pair<const double*, int>> calls;
          cgs2(Vg, k, Vg.col(k), hooked.data(), hooked.data() + k, hooked.data() + 2 * k, kernel,
               [&](double* v, int count) { calls.emplace_back(v, count); });
          const std::vector<std::pair<const double*, int>> want_calls = {
              {hooked.data(), k}, {hooked.data() + k, k}, {hooked.data() + 2 * k, 1}};
          EXPECT_EQ(calls, want_calls) << what;
          EXPECT_EQ(hooked.to_host(), hgh) << what << ": the hook changed the sums";
          EXPECT_EQ(Vg.col(k).to_host(), wg) << what << ": the hook changed w";
        }
        if (kernel == GemvKernel::fused) {
          upload(Vg);
          Array<double> again(B.gpu, 2 * size64_t(k) + 1);
          cgs2(Vg, k, Vg.col(k), again.data(), again.data() + k, again.data() + 2 * k, kernel);
          EXPECT_EQ(again.to_host(), hgh) << what << ": not reproducible";
          EXPECT_EQ(Vg.col(k).to_host(), wg) << what << ": w not reproducible";
        }
      }
    }
  }
  // w among the columns it is orthogonalised against: refused.
  MultiVector V(B.gpu, 64, 4);
  Array<double> h(B.gpu, 9);
  EXPECT_THROW(cgs2(V, 3, V.col(2), h.data(), h.data() + 3, h.data() + 6, GemvKernel::fused), std::invalid_argument);
}

// GMRES(40) on the device: its Gram-Schmidt steps pass from the fused kernels (k <= 32) to the cuBLAS
// sequence within a cycle; within 2 iterations of the CPU, to its residual and solution.
TEST(KrylovSuiteGpu, FusedGramSchmidtPastItsColumnLimit)
{
  for (KrylovMethod method : {KrylovMethod::gmres, KrylovMethod::fgmres})
    for (GemvKernel kernel : {GemvKernel::fused, GemvKernel::cublas}) {
      KrylovConfig cfg;
      cfg.method = method;
      cfg.restart = 40;
      cfg.gemv = kernel;
      cfg.rel_tol = 1e-10;
      cfg.max_iterations = 2000;
      const std::string what = std::string(to_string(method)) + "(40) " + std::string(to_string(kernel));
      const auto sg = expect_same_solve(matrix_for(method, 13, 14, 11, 3), cfg, false, what);
      // The first cycle went past the fused kernels' 32 columns.
      EXPECT_GT(sg->profile().iterations, cgs2_fused_max_cols) << what;
    }
}

// The bases grown on the device as cycles reach their columns (KrylovSolver::grow_bases, MultiVector::grow's device
// copy): a fresh solver and one whose bases are full from an earlier solve take the same steps, bit for bit, with
// the fused and the cuBLAS Gram-Schmidt, CGS2 and DCGS2.
TEST(KrylovSuiteGpu, GrowingBasesGiveTheRunOfFullBases)
{
  auto& B = backends();
  const auto m = test::convection_diffusion(17, 12, 9, 3, 2.0);
  BsrMatrix A = test::upload(B.gpu, m);
  const auto hb = test::random_vector(A.scalar_rows());
  const Vector b(B.gpu, std::span<const double>(hb));
  BlockJacobiPreconditioner M(B.gpu);
  ASSERT_TRUE(M.setup(A).ok);
  for (const auto method : {KrylovMethod::gmres, KrylovMethod::fgmres})
    for (const auto orth : {Orthogonalization::cgs2, Orthogonalization::dcgs2})
      for (const auto gk : {GemvKernel::fused, GemvKernel::cublas}) {
        SCOPED_TRACE(std::string(to_string(method)) + " " + std::string(to_string(orth)) + " " +
                     std::string(to_string(gk)));
        KrylovConfig kc;
        kc.method = method, kc.rel_tol = 1e-10, kc.max_iterations = 400, kc.restart = 20;
        kc.orthogonalization = orth, kc.gemv = gk;
        KrylovSolver warm(B.gpu, kc), fresh(B.gpu, kc);
        Vector xw(B.gpu, A.scalar_rows()), xf(B.gpu, A.scalar_rows());
        fill(xw, 0.0);
        ASSERT_GT(warm.solve(A, M, b, xw).iterations, kc.restart);  // its bases full
        fill(xw, 0.0), fill(xf, 0.0);
        const auto sf = fresh.solve(A, M, b, xf);
        const auto sw = warm.solve(A, M, b, xw);
        EXPECT_TRUE(sf.converged);
        EXPECT_EQ(sf.iterations, sw.iterations);
        EXPECT_EQ(sf.residual, sw.residual);
        EXPECT_EQ(xf.to_host(), xw.to_host());
      }
}
