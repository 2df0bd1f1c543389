// CPR preconditioner and its CPU kernels: quasi-IMPES weights (w_i^T D_ii proportional to e_0^T,
// max |w| = 1) for bs 1..64; the pressure matrix against a dense computation and against
// W^T A P applied through restriction and prolongation; restriction/prolongation adjoints; CPR
// exact on matrices with pressure-only off-diagonal coupling (exact stage solves); true-IMPES
// weights from given accumulation blocks; FGMRES with
// CPR against stage 2 alone on a pressure/transport block stencil; factory, name, setup failures.
// The stages are named in every test (ilu0_stages(): ILU(0) on the pressure, block ILU(0) second).
#include "kernels/cpr/cpr.hpp"
#include "linalg/preconditioners/cpr/cpr_preconditioner.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/krylov.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

using namespace blockres;
using test::upload;

namespace {

const int block_sizes[] = {1, 2, 3, 5, 8, 17, 33, 64};

ExecPtr cpu()
{
  static ExecPtr e = Executor::create_cpu();
  return e;
}

// Random pattern with well-conditioned diagonal blocks (shift 2 bs on the diagonal).
test::TestMatrix random_matrix(index_t n, int bs, int avg = 3)
{
  test::TestMatrix m;
  m.bs = bs;
  m.pattern = test::random_pattern(n, n, avg);
  m.values = test::random_values(m.pattern, bs, 2.0 * bs);
  return m;
}

// ILU(0) on the pressure, block ILU(0) on A: the stages these tests were written for.
CprOptions ilu0_stages(CprWeights weights = CprWeights::quasi_impes)
{
  CprOptions o;
  o.weights = weights;
  o.pressure = {"ilu0", Ilu0Options{}};
  o.second = {"ilu0", Ilu0Options{.factor_view = IluFactorView::block}};
  return o;
}

// The same with an AMG (its defaults) as the pressure stage.
CprOptions amg_pressure_stages()
{
  CprOptions o = ilu0_stages();
  o.pressure = {"amg", AmgOptions{}};
  return o;
}

CprOptions exact_options()
{
  CprOptions o;
  o.pressure = {"ilu0", Ilu0Options{}};  // exact on a tridiagonal A_p
  o.second = {"block_jacobi", BlockJacobiOptions{}};
  return o;
}

// 1D chain of n cells; off-diagonal blocks nonzero in column 0 only (pressure-only coupling).
test::TestMatrix pressure_coupled_chain(index_t n, int bs)
{
  test::TestMatrix m;
  m.bs = bs;
  m.pattern.nrows = m.pattern.ncols = n;
  m.pattern.row_ptr.push_back(0);
  const std::size_t bb = std::size_t(bs) * bs;
  for (index_t r = 0; r < n; ++r) {
    for (index_t c = std::max<index_t>(r - 1, 0); c <= std::min<index_t>(r + 1, n - 1); ++c) {
      m.pattern.col_ind.push_back(c);
      std::vector<double> b(bb, 0.0);
      if (c == r) {
        b = test::random_vector(bb);
        for (int i = 0; i < bs; ++i) b[i * bs + i] += 2.0 * bs + 2.0;
      } else {
        for (int i = 0; i < bs; ++i) b[i * bs] = test::uniform(-1.0, 0.0);
      }
      m.values.insert(m.values.end(), b.begin(), b.end());
    }
    m.pattern.row_ptr.push_back(static_cast<index_t>(m.pattern.col_ind.size()));
  }
  return m;
}

// Pressure/transport block stencil on an nx*ny*nz grid with log-normal transmissibilities:
// unknown 0 is an elliptic pressure (tiny compressibility, fixed pressure through the x = 0
// face), unknowns 1.. are upwind-transported (along x) and coupled to the pressure through the
// flux; the accumulation couples the pressure row to the other unknowns (so decoupling matters).
test::TestMatrix pressure_transport(int nx, int ny, int nz, int bs)
{
  test::TestMatrix m;
  m.bs = bs;
  const index_t n = nx * ny * nz;
  m.pattern.nrows = m.pattern.ncols = n;
  m.pattern.row_ptr.push_back(0);
  const std::size_t bb = std::size_t(bs) * bs;
  auto id = [&](int i, int j, int k) { return static_cast<index_t>(i + nx * (j + ny * k)); };
  // Transmissibility of the face between cells a < b: a symmetric function of the pair.
  std::vector<double> tx(n), ty(n), tz(n);
  for (index_t c = 0; c < n; ++c)
    tx[c] = std::exp(test::uniform(-1.5, 1.5)), ty[c] = std::exp(test::uniform(-1.5, 1.5)),
    tz[c] = 0.1 * std::exp(test::uniform(-1.5, 1.5));
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const index_t me = id(i, j, k);
        std::vector<std::pair<index_t, double>> nb;  // (neighbour, T)
        if (k > 0) nb.push_back({id(i, j, k - 1), tz[id(i, j, k - 1)]});
        if (j > 0) nb.push_back({id(i, j - 1, k), ty[id(i, j - 1, k)]});
        if (i > 0) nb.push_back({id(i - 1, j, k), tx[id(i - 1, j, k)]});
        if (i + 1 < nx) nb.push_back({id(i + 1, j, k), tx[me]});
        if (j + 1 < ny) nb.push_back({id(i, j + 1, k), ty[me]});
        if (k + 1 < nz) nb.push_back({id(i, j, k + 1), tz[me]});
        std::vector<double> diag(bb, 0.0);
        double tsum = i == 0 ? 1.0 : 0.0;  // fixed-pressure face
        for (auto [c, t] : nb) tsum += t;
        diag[0] = tsum + 1e-4;
        for (int a = 1; a < bs; ++a) {
          diag[a] = 0.3 + 0.2 * a / bs;                 // accumulation: pressure row sees the others
          diag[a * bs + a] = 1.0 + 0.5 * tsum;          // accumulation + outflow
          diag[a * bs + 0] = 0.2 * tsum;                // flux derivative w.r.t. own pressure
          if (a + 1 < bs) diag[a * bs + a + 1] = 0.1;   // local coupling
        }
        std::vector<std::pair<index_t, std::vector<double>>> row;
        for (auto [c, t] : nb) {
          std::vector<double> b(bb, 0.0);
          b[0] = -t;
          const bool upstream = c < me && c == me - 1;  // flow along +x
          for (int a = 1; a < bs; ++a) {
            b[a * bs + 0] = -0.2 * t;
            if (upstream) b[a * bs + a] = -0.5 * t;
          }
          row.push_back({c, b});
        }
        row.push_back({me, diag});
        std::sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        for (auto& [c, b] : row) {
          m.pattern.col_ind.push_back(c);
          m.values.insert(m.values.end(), b.begin(), b.end());
        }
        m.pattern.row_ptr.push_back(static_cast<index_t>(m.pattern.col_ind.size()));
      }
  return m;
}

int fgmres_iterations(const BsrMatrix& A, const Preconditioner& M, const std::vector<double>& hb, bool* converged)
{
  Vector b(cpu(), std::span<const double>(hb)), x(cpu(), A.scalar_rows());
  fill(x, 0.0);
  KrylovSolver s(cpu(), KrylovConfig{KrylovMethod::fgmres, 1e-8, 0.0, 2000, 30});
  const auto st = s.solve(A, M, b, x);
  *converged = st.converged;
  return st.iterations;
}

}  // namespace

TEST(CprKernels, QuasiImpesWeights)
{
  for (int bs : block_sizes) {
    const index_t n = 13;
    auto m = random_matrix(n, bs);
    std::vector<index_t> diag(n);
    for (index_t r = 0; r < n; ++r) diag[r] = m.pattern.find(r, r);
    std::vector<double> w(std::size_t(n) * bs, std::numeric_limits<double>::quiet_NaN());
    std::vector<int> info(n, -1);
    kernels::cpu::cpr_quasi_impes_weights(n, bs, diag.data(), m.values.data(), w.data(), info.data());
    const std::size_t bb = std::size_t(bs) * bs;
    for (index_t r = 0; r < n; ++r) {
      ASSERT_EQ(info[r], 0) << "bs " << bs;
      const double* d = m.values.data() + std::size_t(diag[r]) * bb;
      const double* wr = w.data() + std::size_t(r) * bs;
      double amax = 0.0;
      for (int a = 0; a < bs; ++a) amax = std::max(amax, std::abs(wr[a]));
      EXPECT_DOUBLE_EQ(amax, 1.0);
      double c0 = 0.0;  // (w^T D)_0 = 1 / (unscaled max |w|)
      for (int a = 0; a < bs; ++a) c0 += wr[a] * d[a * bs];
      EXPECT_GT(std::abs(c0), 0.0);
      for (int j = 1; j < bs; ++j) {
        double s = 0.0, sa = 0.0;
        for (int a = 0; a < bs; ++a) s += wr[a] * d[a * bs + j], sa += std::abs(wr[a] * d[a * bs + j]);
        EXPECT_LE(std::abs(s), 64 * bs * std::numeric_limits<double>::epsilon() * (sa + std::abs(c0)))
            << "bs " << bs << " row " << r << " column " << j;
      }
    }
  }
}

TEST(CprKernels, SingularDiagonalBlock)
{
  for (int bs : {1, 4, 20}) {
    auto m = random_matrix(5, bs);
    const index_t k = m.pattern.find(3, 3);
    for (int i = 0; i < bs; ++i) m.values[(std::size_t(k) * bs + i) * bs + bs - 1] = 0.0;  // zero last column
    std::vector<index_t> diag(5);
    for (index_t r = 0; r < 5; ++r) diag[r] = m.pattern.find(r, r);
    std::vector<double> w(5 * bs);
    std::vector<int> info(5, -1);
    kernels::cpu::cpr_quasi_impes_weights(5, bs, diag.data(), m.values.data(), w.data(), info.data());
    EXPECT_EQ(info[0], 0);
    EXPECT_NE(info[3], 0) << "bs " << bs;
    auto A = upload(cpu(), m);
    CprPreconditioner M(cpu(), ilu0_stages());
    const auto st = M.setup(A);
    EXPECT_FALSE(st.ok);
    EXPECT_NE(st.message.find("block row 3"), std::string::npos) << st.message;
  }
}

TEST(CprPreconditioner, PressureMatrixAgainstDense)
{
  for (int bs : block_sizes) {
    const index_t n = 29;
    auto m = random_matrix(n, bs);
    auto A = upload(cpu(), m);
    CprPreconditioner M(cpu(), ilu0_stages());
    ASSERT_TRUE(M.setup(A).ok);
    const auto w = M.weights().to_host();
    const auto ap = M.pressure_matrix()->values().to_host();
    ASSERT_EQ(M.pressure_matrix()->block_size(), 1);
    ASSERT_EQ(M.pressure_matrix()->nnzb(), A.nnzb());
    const std::size_t bb = std::size_t(bs) * bs;
    // Dense W^T A P, then compared entry by entry on the pattern.
    std::vector<double> dense(std::size_t(n) * n, 0.0);
    for (index_t r = 0; r < n; ++r)
      for (index_t k = m.pattern.row_ptr[r]; k < m.pattern.row_ptr[r + 1]; ++k)
        for (int a = 0; a < bs; ++a)
          dense[std::size_t(r) * n + m.pattern.col_ind[k]] += w[std::size_t(r) * bs + a] * m.values[k * bb + a * bs];
    for (index_t r = 0; r < n; ++r)
      for (index_t k = m.pattern.row_ptr[r]; k < m.pattern.row_ptr[r + 1]; ++k)
        EXPECT_NEAR(ap[k], dense[std::size_t(r) * n + m.pattern.col_ind[k]], 1e-13 * (1 + std::abs(ap[k])) * bs);
    // A_p y = W^T (A (P y)) for a random y, through the kernels and the SpMVs.
    const auto hy = test::random_vector(n);
    Vector y(cpu(), std::span<const double>(hy)), py(cpu(), A.scalar_rows()), apy(cpu(), A.scalar_rows());
    Vector lhs(cpu(), n), rhs(cpu(), n);
    fill(py, 0.0);
    kernels::cpu::cpr_prolong_add(n, bs, y.data(), py.data());
    spmv(A, 1.0, py, 0.0, apy);
    kernels::cpu::cpr_restrict(n, bs, M.weights().data(), apy.data(), rhs.data());
    spmv(*M.pressure_matrix(), 1.0, y, 0.0, lhs);
    EXPECT_LT(test::max_rel_diff(lhs.to_host(), rhs.to_host()), 1e-12) << "bs " << bs;
  }
}

TEST(CprKernels, RestrictionProlongationAdjoints)
{
  for (int bs : block_sizes) {
    const index_t n = 37;
    const auto w = test::random_vector(size64_t(n) * bs), x = test::random_vector(size64_t(n) * bs),
               y = test::random_vector(n);
    std::vector<double> rx(n), px(size64_t(n) * bs, 0.0);
    kernels::cpu::cpr_restrict(n, bs, w.data(), x.data(), rx.data());
    kernels::cpu::cpr_prolong_add(n, bs, y.data(), px.data());
    // (W^T x) . y = x . (W y) and (P y) . x = y . (P^T x).
    double a = 0, b = 0, c = 0, d = 0;
    for (index_t r = 0; r < n; ++r) {
      a += rx[r] * y[r];
      d += y[r] * x[std::size_t(r) * bs];
      for (int i = 0; i < bs; ++i) {
        b += x[std::size_t(r) * bs + i] * w[std::size_t(r) * bs + i] * y[r];
        c += px[std::size_t(r) * bs + i] * x[std::size_t(r) * bs + i];
      }
    }
    EXPECT_NEAR(a, b, 1e-12 * n * bs);
    EXPECT_NEAR(c, d, 1e-12 * n);
    // prolong_add adds to unknown 0 only.
    std::vector<double> z(x);
    kernels::cpu::cpr_prolong_add(n, bs, y.data(), z.data());
    for (index_t r = 0; r < n; ++r)
      for (int i = 0; i < bs; ++i)
        EXPECT_EQ(z[std::size_t(r) * bs + i], x[std::size_t(r) * bs + i] + (i == 0 ? y[r] : 0.0));
  }
}

TEST(CprPreconditioner, ExactOnPressureOnlyCoupling)
{
  for (int bs : block_sizes) {
    const index_t n = 23;
    auto m = pressure_coupled_chain(n, bs);
    auto A = upload(cpu(), m);
    CprPreconditioner M(cpu(), exact_options());
    const auto st = M.setup(A);
    ASSERT_TRUE(st.ok) << st.message;
    const auto hx = test::random_vector(A.scalar_rows());
    Vector x(cpu(), std::span<const double>(hx)), ax(cpu(), A.scalar_rows()), z(cpu(), A.scalar_rows());
    spmv(A, 1.0, x, 0.0, ax);
    M.apply(ax, z);
    const double err = test::max_rel_diff(z.to_host(), hx);
    EXPECT_LT(err, 1e-11) << "bs " << bs;
    // Not exact with either stage alone (bs > 1: the pressure stage ignores the other unknowns).
    if (bs > 1) {
      auto M2 = make_preconditioner(cpu(), BlockJacobiOptions{});
      ASSERT_TRUE(M2->setup(A).ok);
      M2->apply(ax, z);
      EXPECT_GT(test::max_rel_diff(z.to_host(), hx), 1e-6) << "bs " << bs;
    }
  }
}

TEST(CprPreconditioner, FactoryNameAndOptions)
{
  PreconditionerSpec spec{"cpr", ilu0_stages()};
  auto M = make_preconditioner(cpu(), spec);
  ASSERT_NE(dynamic_cast<CprPreconditioner*>(M.get()), nullptr);
  EXPECT_EQ(M->name(), "cpr(quasi-impes; p: ilu0(exact triangular solves); 2: ilu0(block, exact triangular solves))");
  CprOptions o = ilu0_stages();
  o.second = {"block_jacobi", BlockJacobiOptions{}};
  EXPECT_EQ(make_preconditioner(cpu(), o)->name(),
            "cpr(quasi-impes; p: ilu0(exact triangular solves); 2: block_jacobi(automatic, natural blocks))");
  o.pressure = {"cpr", CprOptions{}};
  EXPECT_THROW(make_preconditioner(cpu(), o), std::invalid_argument);
  o.pressure = {"ilu0", IsaiOptions{}};  // another preconditioner's options
  EXPECT_THROW(make_preconditioner(cpu(), o), std::invalid_argument);
  EXPECT_EQ(to_string(CprWeights::true_impes), "true_impes");  // the deck's name; name() says "true-impes"
}

// A stage whose setup fails fails CPR's setup with a message naming the stage: a bs = 1 matrix
// whose pressure matrix (A itself with quasi-IMPES weights of +-1) has a zero second ILU(0) pivot.
TEST(CprPreconditioner, StageFailure)
{
  test::TestMatrix m;
  m.bs = 1;
  m.pattern.nrows = m.pattern.ncols = 2;
  m.pattern.row_ptr = {0, 2, 4};
  m.pattern.col_ind = {0, 1, 0, 1};
  m.values = {1.0, 1.0, 1.0, 1.0};
  auto A = upload(cpu(), m);
  CprPreconditioner M(cpu(), exact_options());
  const auto st = M.setup(A);
  EXPECT_FALSE(st.ok);
  EXPECT_EQ(st.message.rfind("cpr pressure stage: ", 0), 0u) << st.message;
}

// True-IMPES: the weights solve C_i^T w_i = e_0 on the given accumulation blocks (w_i^T C_i
// proportional to e_0^T, max |w_i| = 1, and not the quasi-IMPES weights of A); with C_i = A_ii
// they are the quasi-IMPES weights bit for bit, and so is the application; the blocks are read
// again at every setup (not copied); misuse and singular blocks are reported.
TEST(CprPreconditioner, TrueImpesWeights)
{
  const CprOptions o = ilu0_stages(CprWeights::true_impes);
  for (int bs : block_sizes) {
    const index_t n = 23;
    const std::size_t bb = std::size_t(bs) * bs;
    auto m = random_matrix(n, bs);
    auto A = upload(cpu(), m);
    // Accumulation blocks: random, well conditioned, unrelated to A.
    std::vector<double> hc = test::random_vector(size64_t(n) * bb);
    for (index_t r = 0; r < n; ++r)
      for (int a = 0; a < bs; ++a) hc[r * bb + a * bs + a] += 2.0 * bs;
    Vector C(cpu(), std::span<const double>(hc));
    CprPreconditioner Mt(cpu(), o);
    EXPECT_THROW(Mt.setup(A), std::invalid_argument) << "no blocks given yet";
    Mt.set_accumulation_blocks(C);
    ASSERT_TRUE(Mt.setup(A).ok);
    EXPECT_EQ(Mt.name().rfind("cpr(true-impes; ", 0), 0u) << Mt.name();
    const auto w = Mt.weights().to_host();
    CprPreconditioner Mq(cpu(), ilu0_stages());
    ASSERT_TRUE(Mq.setup(A).ok);
    const auto wq = Mq.weights().to_host();
    double differs = 0.0;
    for (index_t r = 0; r < n; ++r) {
      const double* c = hc.data() + r * bb;
      const double* wr = w.data() + std::size_t(r) * bs;
      double amax = 0.0;
      for (int a = 0; a < bs; ++a) amax = std::max(amax, std::abs(wr[a]));
      EXPECT_DOUBLE_EQ(amax, 1.0);
      double c0 = 0.0;
      for (int a = 0; a < bs; ++a) c0 += wr[a] * c[a * bs];
      EXPECT_GT(std::abs(c0), 0.0);
      for (int j = 1; j < bs; ++j) {
        double sum = 0.0, sa = 0.0;
        for (int a = 0; a < bs; ++a) sum += wr[a] * c[a * bs + j], sa += std::abs(wr[a] * c[a * bs + j]);
        EXPECT_LE(std::abs(sum), 64 * bs * std::numeric_limits<double>::epsilon() * (sa + std::abs(c0)))
            << "bs " << bs << " row " << r << " column " << j;
      }
      for (int a = 0; a < bs; ++a) differs = std::max(differs, std::abs(wr[a] - wq[std::size_t(r) * bs + a]));
    }
    if (bs > 1) {
      EXPECT_GT(differs, 1e-3) << "bs " << bs << ": true-IMPES weights equal the quasi-IMPES ones";
    }

    // C_i = A_ii: the quasi-IMPES preconditioner exactly. The same vector C, new values: read again.
    for (index_t r = 0; r < n; ++r)
      std::copy_n(m.values.begin() + std::ptrdiff_t(std::size_t(m.pattern.find(r, r)) * bb), bb,
                  hc.begin() + std::ptrdiff_t(r * bb));
    C.copy_from_host(hc);
    ASSERT_TRUE(Mt.setup(A).ok);
    EXPECT_EQ(Mt.weights().to_host(), wq) << "bs " << bs;
    EXPECT_EQ(Mt.pressure_matrix()->values().to_host(), Mq.pressure_matrix()->values().to_host());
    const auto hr = test::random_vector(A.scalar_rows());
    Vector r(cpu(), std::span<const double>(hr)), zt(cpu(), r.size()), zq(cpu(), r.size());
    Mt.apply(r, zt);
    Mq.apply(r, zq);
    EXPECT_EQ(zt.to_host(), zq.to_host()) << "bs " << bs;
  }

  // Misuse and failures.
  const int bs = 4;
  auto m = random_matrix(9, bs);
  auto A = upload(cpu(), m);
  std::vector<double> hc = test::random_vector(9 * 16);
  for (int r = 0; r < 9; ++r)
    for (int a = 0; a < bs; ++a) hc[r * 16 + a * bs + a] += 8.0;
  CprPreconditioner Mq(cpu(), ilu0_stages());
  EXPECT_FALSE(Mq.needs_accumulation_blocks());
  EXPECT_TRUE(CprPreconditioner(cpu(), o).needs_accumulation_blocks());
  Vector C(cpu(), std::span<const double>(hc));
  EXPECT_THROW(Mq.set_accumulation_blocks(C), std::invalid_argument);  // not true_impes
  Vector short_c(cpu(), 8 * 16);
  CprPreconditioner Ms(cpu(), o);
  Ms.set_accumulation_blocks(short_c);
  EXPECT_THROW(Ms.setup(A), std::invalid_argument);  // blocks for 8 cells, A has 9
  for (int a = 0; a < bs; ++a) hc[3 * 16 + a * bs] = 0.0;  // cell 3: no pressure column
  C.copy_from_host(hc);
  CprPreconditioner Mf(cpu(), o);
  Mf.set_accumulation_blocks(C);
  const auto st = Mf.setup(A);
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("singular accumulation block"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find("block row 3"), std::string::npos) << st.message;
}

TEST(CprPreconditioner, FgmresFewerIterationsThanSecondStage)
{
  for (int bs : {2, 3, 5}) {
    auto m = pressure_transport(24, 24, 6, bs);
    auto A = upload(cpu(), m);
    auto cpr = make_preconditioner(cpu(), ilu0_stages());
    auto ilu = make_preconditioner(cpu(), Ilu0Options{.factor_view = IluFactorView::block});
    ASSERT_TRUE(cpr->setup(A).ok);
    ASSERT_TRUE(ilu->setup(A).ok);
    const auto hb = test::random_vector(A.scalar_rows());
    bool c1 = false, c2 = false;
    const int it_cpr = fgmres_iterations(A, *cpr, hb, &c1);
    const int it_ilu = fgmres_iterations(A, *ilu, hb, &c2);
    std::printf("bs %d, %d cells: FGMRES(30) to 1e-8: %s %d iterations, %s %d iterations\n", bs, A.nrows(),
                cpr->name().c_str(), it_cpr, ilu->name().c_str(), it_ilu);
    EXPECT_TRUE(c1);
    EXPECT_LT(it_cpr, it_ilu);
  }
}

// With AMG as the pressure stage, the pressure part's convergence does not grow with the grid: the
// same stencil at two sizes (8x more cells) needs iteration counts within 1.5x of each other, and
// no more than with ILU(0) as the pressure stage.
TEST(CprPreconditioner, AmgPressureStage)
{
  const CprOptions o = amg_pressure_stages();
  const CprOptions oi = ilu0_stages();  // ILU(0) pressure stage
  double its[2] = {0, 0};  // mean over 3 random right-hand sides (one rhs varies by +-1-2)
  // Both grids above max_coarse = 128 cells by 2-3 levels (the smaller one is no longer nearly a
  // direct solve).
  const int sides[2][3] = {{16, 16, 6}, {32, 32, 12}};
  for (int g = 0; g < 2; ++g) {
    auto m = pressure_transport(sides[g][0], sides[g][1], sides[g][2], 3);
    auto A = upload(cpu(), m);
    auto amg = make_preconditioner(cpu(), o);
    auto ilu = make_preconditioner(cpu(), oi);
    ASSERT_TRUE(amg->setup(A).ok);
    ASSERT_TRUE(ilu->setup(A).ok);
    for (int rhs = 0; rhs < 3; ++rhs) {
      const auto hb = test::random_vector(A.scalar_rows());
      bool c1 = false, c2 = false;
      const int it_amg = fgmres_iterations(A, *amg, hb, &c1);
      const int it_ilu = fgmres_iterations(A, *ilu, hb, &c2);
      std::printf("%d cells: FGMRES(30) to 1e-8: %s %d iterations; with an ILU(0) pressure stage %d\n", A.nrows(),
                  amg->name().c_str(), it_amg, it_ilu);
      EXPECT_TRUE(c1);
      EXPECT_LE(it_amg, it_ilu);
      its[g] += it_amg / 3.0;
    }
  }
  EXPECT_LE(its[1], 1.5 * its[0]);
}

// The stage profile: six parts, all zero before any work; after setups and applies each part has
// taken time, and a second round adds to every part but the symbolic set-up (the pressure pattern,
// once per matrix structure: the same structure the second time).
TEST(CprPreconditioner, StageProfile)
{
  auto m = pressure_transport(24, 24, 6, 3);
  auto cpr = make_preconditioner(cpu(), amg_pressure_stages());
  auto A = upload(cpu(), m);
  auto p0 = cpr->profile();
  ASSERT_EQ(p0.size(), 6u);
  for (const auto& e : p0) EXPECT_EQ(e.seconds, 0.0) << e.part;
  Vector r(cpu(), std::span<const double>(test::random_vector(A.scalar_rows()))), z(cpu(), A.scalar_rows());
  std::vector<std::vector<Preconditioner::ProfileEntry>> rounds;
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(cpr->setup(A).ok);
    for (int k = 0; k < 3; ++k) cpr->apply(r, z);
    rounds.push_back(cpr->profile());
  }
  EXPECT_EQ(p0[0].part, "pressure pattern (once per structure)");
  for (std::size_t k = 0; k < 6; ++k) {
    std::printf("%-36s %.6f s after one round, %.6f s after two\n", rounds[0][k].part.c_str(), rounds[0][k].seconds,
                rounds[1][k].seconds);
    EXPECT_EQ(rounds[0][k].part, p0[k].part);
    EXPECT_GT(rounds[0][k].seconds, 0.0) << rounds[0][k].part;
    if (k == 0) {
      EXPECT_EQ(rounds[1][k].seconds, rounds[0][k].seconds) << rounds[1][k].part;
    } else {
      EXPECT_GT(rounds[1][k].seconds, rounds[0][k].seconds) << rounds[1][k].part;
    }
  }
  // Other preconditioners have no parts.
  EXPECT_TRUE(make_preconditioner(cpu(), BlockJacobiOptions{})->profile().empty());
}

// The setup summary (the run log's "preconditioner built:" line): CPR names its pressure stage's (an AMG's
// levels, complexities and refresh counts, the same text as that AMG's own summary of the same pressure
// matrix) and says nothing of stages without one (ILU(0)); empty before any setup and for single-level
// preconditioners.
TEST(CprPreconditioner, SetupSummaryNamesTheStages)
{
  auto m = pressure_transport(16, 16, 6, 3);
  const CprOptions o = amg_pressure_stages();
  auto cpr = make_preconditioner(cpu(), o);
  EXPECT_EQ(cpr->setup_summary(), "");
  auto A = upload(cpu(), m);
  ASSERT_TRUE(cpr->setup(A).ok);
  ASSERT_TRUE(cpr->setup(A).ok);  // a value refresh
  const std::string s = cpr->setup_summary();
  EXPECT_EQ(s.rfind("pressure stage: ", 0), 0u) << s;
  EXPECT_NE(s.find(" rows), operator complexity "), std::string::npos) << s;
  EXPECT_NE(s.find("; 1 full setup, 1 value refresh"), std::string::npos) << s;
  EXPECT_EQ(s.find("second stage"), std::string::npos) << s;
  EXPECT_EQ(s.find("kept"), std::string::npos) << s;  // refreshed at every setup: no kept count
  // The pressure stage's own words: an AMG on CPR's pressure matrix says the same after the same setups.
  auto amg = make_preconditioner(cpu(), o.pressure);
  const BsrMatrix& Ap = *dynamic_cast<const CprPreconditioner&>(*cpr).pressure_matrix();
  ASSERT_TRUE(amg->setup(Ap).ok);
  ASSERT_TRUE(amg->setup(Ap).ok);
  EXPECT_EQ(s, "pressure stage: " + amg->setup_summary());
  EXPECT_EQ(make_preconditioner(cpu(), ilu0_stages())->setup_summary(), "");
  auto bj = make_preconditioner(cpu(), BlockJacobiOptions{});
  ASSERT_TRUE(bj->setup(A).ok);
  EXPECT_EQ(bj->setup_summary(), "");
}

TEST(CprPreconditioner, NewValuesAndNewStructure)
{
  const int bs = 4;
  auto m = random_matrix(31, bs);
  auto A = upload(cpu(), m);
  CprPreconditioner M(cpu(), ilu0_stages());
  ASSERT_TRUE(M.setup(A).ok);
  auto check = [&](const BsrMatrix& B) {
    CprPreconditioner fresh(cpu(), ilu0_stages());
    ASSERT_TRUE(fresh.setup(B).ok);
    const auto hr = test::random_vector(B.scalar_rows());
    Vector r(cpu(), std::span<const double>(hr)), z1(cpu(), r.size()), z2(cpu(), r.size());
    M.apply(r, z1);
    fresh.apply(r, z2);
    EXPECT_EQ(z1.to_host(), z2.to_host());
  };
  // New values, same structure: the symbolic part is kept.
  const BsrMatrix* ap = M.pressure_matrix();
  m.values = test::random_values(m.pattern, bs, 2.0 * bs);
  A.values().copy_from_host(m.values);
  ASSERT_TRUE(M.setup(A).ok);
  EXPECT_EQ(M.pressure_matrix(), ap);
  check(A);
  // Another structure (and size).
  auto B = upload(cpu(), random_matrix(45, bs));
  ASSERT_TRUE(M.setup(B).ok);
  check(B);
}

// The stronger pressure stages (issue 29): AMG with the ILU(0) smoother (exact and Jacobi-sweep
// triangular solves), the W-cycle and two V-cycles each need fewer FGMRES iterations than one
// Jacobi V-cycle, with block ILU(0) as the second stage (on 20 x 20 x 6 cells, bs 3: 13 against
// 9-11); with a fixed number of cycles CPR is one fixed linear operator, so BiCGSTAB converges with
// it too.
TEST(CprPreconditioner, StrongerAmgPressureStages)
{
  auto m = pressure_transport(20, 20, 6, 3);
  auto A = upload(cpu(), m);
  const auto hb = test::random_vector(A.scalar_rows());
  auto with = [](AmgOptions a) {
    CprOptions o = ilu0_stages();
    a.max_coarse = 40;  // a few levels on this small grid
    o.pressure = {"amg", a};
    return o;
  };
  const CprOptions base = with({});
  auto cpr = make_preconditioner(cpu(), base);
  ASSERT_TRUE(cpr->setup(A).ok);
  bool converged = false;
  const int it_base = fgmres_iterations(A, *cpr, hb, &converged);
  EXPECT_TRUE(converged);
  std::printf("FGMRES(30) to 1e-8: %s %d iterations\n", cpr->name().c_str(), it_base);
  const CprOptions variants[] = {with({.smoother = AmgSmoother::ilu0}),
                                 with({.smoother = AmgSmoother::ilu0, .trisolve_sweeps = 2}),
                                 with({.cycle = AmgCycle::w}), with({.cycles = 2})};
  for (const CprOptions& o : variants) {
    auto p = make_preconditioner(cpu(), o);
    ASSERT_TRUE(p->setup(A).ok);
    const int it = fgmres_iterations(A, *p, hb, &converged);
    std::printf("FGMRES(30) to 1e-8: %s %d iterations\n", p->name().c_str(), it);
    EXPECT_TRUE(converged) << p->name();
    EXPECT_LT(it, it_base) << p->name();
    Vector b(cpu(), std::span<const double>(hb)), x(cpu(), A.scalar_rows());
    fill(x, 0.0);
    KrylovSolver s(cpu(), KrylovConfig{KrylovMethod::bicgstab, 1e-8, 0.0, 500});
    const auto st = s.solve(A, *p, b, x);
    EXPECT_TRUE(st.converged) << p->name() << " with BiCGSTAB";
  }
}

// What one application moves (Preconditioner::apply_bytes): CPR's own passes plus both stages' when
// both state theirs (AMG and block-Jacobi, AMG and block ILU(0)/ISAI); nothing (0, "not stated")
// when a stage states none (the scalar ILU(0)). The AMG's count grows with its cycles.
TEST(CprPreconditioner, ApplicationBytes)
{
  const auto tm = test::convection_diffusion(9, 8, 7, 3, 1.0);
  auto A = upload(cpu(), tm);
  const double n = A.nrows(), v = 8.0 * n * 3;
  CprOptions o;
  o.pressure = {"amg", AmgOptions{.max_coarse = 40}};
  CprPreconditioner M(cpu(), o);
  ASSERT_TRUE(M.setup(A).ok);
  const double b1 = M.pressure_stage().apply_bytes(), b2 = M.second_stage().apply_bytes();
  EXPECT_GT(b1, 4.0 * 12.0 * double(M.pressure_matrix()->nnzb()));  // at least four passes over A_p
  EXPECT_GT(b2, 0.0);
  // restriction, r2 = r - A P x_p (column 0 of the blocks), the prolongation into z; the CPU records nothing
  const double nnzb = A.nnzb();
  EXPECT_DOUBLE_EQ(M.apply_bytes(), b1 + b2 + (2.0 * v + 8.0 * n) + (nnzb * (8.0 * 3 + 4.0) + 4.0 * (n + 1.0) + 8.0 * n +
                                                                    2.0 * v) + (8.0 * n + 2.0 * v));
  o.pressure = {"amg", AmgOptions{.cycles = 2, .max_coarse = 40}};
  CprPreconditioner M2(cpu(), o);
  ASSERT_TRUE(M2.setup(A).ok);
  EXPECT_GT(M2.pressure_stage().apply_bytes(), 1.5 * b1);
  o.second = {"ilu0", Ilu0Options{.trisolve = TriangularSolve::isai, .sweeps = 2, .view = IsaiView::block,
                                  .factor_view = IluFactorView::block}};
  CprPreconditioner M3(cpu(), o);
  ASSERT_TRUE(M3.setup(A).ok);
  EXPECT_GT(M3.second_stage().apply_bytes(), 0.0);
  EXPECT_GT(M3.apply_bytes(), 0.0);
  o.second = {"ilu0", Ilu0Options{}};  // the scalar ILU(0) states nothing
  CprPreconditioner M4(cpu(), o);
  ASSERT_TRUE(M4.setup(A).ok);
  EXPECT_EQ(M4.second_stage().apply_bytes(), 0.0);
  EXPECT_EQ(M4.apply_bytes(), 0.0);
}

// r2 = r - A P xp reads column 0 of A's blocks only, and gives, bit for bit, what the product with
// the full vector x1 = P xp (zero in the other unknowns) gives on the CPU: the zeros add nothing.
TEST(CprKernels, PressureResidualIsTheFullProductBitForBit)
{
  for (int bs : block_sizes) {
    const auto tm = test::convection_diffusion(7, 6, 5, bs, 1.0);
    auto A = upload(cpu(), tm);
    const index_t n = A.nrows();
    const auto xp = test::random_vector(n), r = test::random_vector(A.scalar_rows());
    Vector x1(cpu(), A.scalar_rows()), full(cpu(), std::span<const double>(r));
    fill(x1, 0.0);
    kernels::cpu::cpr_prolong_add(n, bs, xp.data(), x1.data());
    spmv(A, -1.0, x1, 1.0, full);
    std::vector<double> r2(A.scalar_rows(), std::numeric_limits<double>::quiet_NaN());
    // Column 0 of every block as cpr_pressure_values copies it (with the pressure values of some weights).
    const auto w = test::random_vector(A.scalar_rows());
    std::vector<double> ap(tm.pattern.nnzb()), col(std::size_t(tm.pattern.nnzb()) * bs);
    kernels::cpu::cpr_pressure_values(n, bs, tm.pattern.row_ptr.data(), tm.values.data(), w.data(), ap.data(),
                                      col.data());
    kernels::cpu::cpr_pressure_residual(n, bs, tm.pattern.row_ptr.data(), tm.pattern.col_ind.data(), col.data(),
                                        xp.data(), r.data(), r2.data());
    const auto h = full.to_host();
    for (std::size_t i = 0; i < r2.size(); ++i) ASSERT_EQ(r2[i], h[i]) << "bs " << bs << " row " << i;
  }
}
