// CUDA CPR kernels against their CPU references on fresh random input (odd sizes, bs in
// {1, 2, 3, 5, 8, 17, 33, 64}, outputs poisoned with NaN): quasi-IMPES weights (one thread per
// cell up to bs 8, a thread block per cell above) with a singular block reported in info at the
// same cell, pressure-matrix values, restriction, prolongation; then the whole CPR preconditioner
// on both backends (one application, and GMRES iteration counts), with quasi- and with true-IMPES
// weights; the application replayed as one CUDA graph against the same launches made one by one.
// Label `gpu`.
#include "kernels/batched/block_diag.hpp"
#include "kernels/cpr/cpr.hpp"
#include "linalg/preconditioners/cpr/cpr_preconditioner.hpp"
#include "linalg/preconditioners/ilu0/ilu0_options.hpp"
#include "linalg/preconditioners/amg/amg_options.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi_options.hpp"
#include "linalg/test/gpu_test_util.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <span>

using namespace blockres;
namespace kc = blockres::kernels::cpu;
namespace kg = blockres::kernels::cuda;

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();
const int block_sizes[] = {1, 2, 3, 5, 8, 17, 33, 64};

ExecPtr gpu() { return test::backends().gpu; }
ExecPtr cpu() { return test::backends().cpu; }

template <class T>
Array<T> upload(const std::vector<T>& h)
{
  return Array<T>(gpu(), std::span<const T>(h));
}

template <class T>
Array<T> poisoned(size64_t n, T v)
{
  return upload(std::vector<T>(static_cast<std::size_t>(n), v));
}

// Odd number of cells, fresh per call.
index_t odd_cells(int bs) { return static_cast<index_t>((bs > 16 ? 61 : 1001) + 2 * (test::rng()() % 50)); }

struct Case {
  test::TestMatrix m;
  std::vector<index_t> diag;
};

Case random_case(int bs, index_t singular_row = -1)
{
  Case c;
  const index_t n = odd_cells(bs);
  c.m.bs = bs;
  c.m.pattern = test::random_pattern(n, n, 3);
  c.m.values = test::random_values(c.m.pattern, bs, 2.0 * bs);
  c.diag.resize(n);
  for (index_t r = 0; r < n; ++r) c.diag[r] = c.m.pattern.find(r, r);
  if (singular_row >= 0 && singular_row < n) {
    const std::size_t k = c.diag[singular_row];
    for (int i = 0; i < bs; ++i) c.m.values[(k * bs + i) * bs + bs / 2] = 0.0;  // a zero column
  }
  return c;
}

}  // namespace

TEST(CprGpu, QuasiImpesWeights)
{
  for (int bs : block_sizes) {
    const index_t singular = 7;
    auto c = random_case(bs, singular);
    const index_t n = c.m.pattern.nrows;
    std::vector<double> wc(std::size_t(n) * bs, nan_v);
    std::vector<int> ic(n, -1);
    kc::cpr_quasi_impes_weights(n, bs, c.diag.data(), c.m.values.data(), wc.data(), ic.data());
    auto diag = upload(c.diag);
    auto vals = upload(c.m.values);
    auto wg = poisoned<double>(size64_t(n) * bs, nan_v);
    auto ig = poisoned<int>(n, -1);
    kg::cpr_quasi_impes_weights(gpu()->stream(), n, bs, diag.data(), vals.data(), wg.data(), ig.data());
    const auto w = wg.to_host();
    const auto info = ig.to_host();
    EXPECT_NE(info[singular], 0) << "bs " << bs;
    EXPECT_EQ(info, ic) << "bs " << bs;
    double worst = 0.0;
    for (index_t r = 0; r < n; ++r) {
      if (ic[r] != 0) continue;
      for (int a = 0; a < bs; ++a) {
        const double g = w[std::size_t(r) * bs + a], h = wc[std::size_t(r) * bs + a];
        ASSERT_TRUE(std::isfinite(g)) << "bs " << bs << " cell " << r;
        worst = std::max(worst, std::abs(g - h));  // max |w| = 1 in every cell
      }
    }
    std::printf("bs %2d, %5d cells: weights max |gpu - cpu| = %.2e\n", bs, n, worst);
    EXPECT_LT(worst, 1e-11 * bs) << "bs " << bs;
  }
}

TEST(CprGpu, PressureValuesRestrictProlong)
{
  for (int bs : block_sizes) {
    auto c = random_case(bs);
    const index_t n = c.m.pattern.nrows;
    const index_t nnzb = c.m.pattern.nnzb();
    const std::size_t bb = std::size_t(bs) * bs;
    const auto w = test::random_vector(size64_t(n) * bs);
    const auto x = test::random_vector(size64_t(n) * bs);
    const auto xp = test::random_vector(n);
    auto rp_d = upload(c.m.pattern.row_ptr);
    auto vals = upload(c.m.values);
    auto wd = upload(w);
    auto xd = upload(x);
    auto xpd = upload(xp);
    const auto s = gpu()->stream();

    // Pressure values: each entry a sum of bs products, compared within the rounding bound; the copy of
    // column 0 bit for bit, both outputs poisoned.
    std::vector<double> apc(nnzb, nan_v), sum_abs(nnzb, 0.0), colc(std::size_t(nnzb) * bs, nan_v);
    kc::cpr_pressure_values(n, bs, c.m.pattern.row_ptr.data(), c.m.values.data(), w.data(), apc.data(), colc.data());
    for (index_t k = 0; k < nnzb; ++k)
      for (int a = 0; a < bs; ++a)
        ASSERT_EQ(colc[std::size_t(k) * bs + a], c.m.values[k * bb + a * bs]) << "CPU column, bs " << bs;
    for (index_t r = 0; r < n; ++r)
      for (index_t k = c.m.pattern.row_ptr[r]; k < c.m.pattern.row_ptr[r + 1]; ++k)
        for (int a = 0; a < bs; ++a) sum_abs[k] += std::abs(w[std::size_t(r) * bs + a] * c.m.values[k * bb + a * bs]);
    auto apg = poisoned<double>(nnzb, nan_v);
    auto colg = poisoned<double>(size64_t(nnzb) * bs, nan_v);
    kg::cpr_pressure_values(s, n, bs, rp_d.data(), vals.data(), wd.data(), apg.data(), colg.data());
    EXPECT_LE(test::rounding_units(apg.to_host(), apc, sum_abs, bs), 1.0) << "pressure values, bs " << bs;
    EXPECT_EQ(colg.to_host(), colc) << "column 0, bs " << bs;

    // Restriction.
    std::vector<double> rc(n, nan_v), rabs(n, 0.0);
    kc::cpr_restrict(n, bs, w.data(), x.data(), rc.data());
    for (index_t r = 0; r < n; ++r)
      for (int a = 0; a < bs; ++a) rabs[r] += std::abs(w[std::size_t(r) * bs + a] * x[std::size_t(r) * bs + a]);
    auto rg = poisoned<double>(n, nan_v);
    kg::cpr_restrict(s, n, bs, wd.data(), xd.data(), rg.data());
    EXPECT_LE(test::rounding_units(rg.to_host(), rc, rabs, bs), 1.0) << "restrict, bs " << bs;

    // Prolongation: one addition per pressure entry, the rest untouched (bitwise).
    std::vector<double> pc(x);
    kc::cpr_prolong_add(n, bs, xp.data(), pc.data());
    kg::cpr_prolong_add(s, n, bs, xpd.data(), xd.data());
    EXPECT_EQ(xd.to_host(), pc) << "prolong_add, bs " << bs;
  }
}

namespace {

// ILU(0) on the pressure, block ILU(0) on A: the stages these tests were written for.
}  // namespace

// r2 = r - A P xp against the CPU twin: each entry a sum of (row length) products, within the
// rounding bound of that sum, output poisoned, every block size of the list.
TEST(CprGpu, PressureResidualMatchesCpu)
{
  for (int bs : block_sizes) {
    auto c = random_case(bs);
    const index_t n = c.m.pattern.nrows;
    const std::size_t bb = std::size_t(bs) * bs;
    const auto xp = test::random_vector(n);
    const auto r = test::random_vector(size64_t(n) * bs);
    std::vector<double> rc(size64_t(n) * bs, nan_v), sum_abs(size64_t(n) * bs, 0.0);
    // Column 0 of every block, as cpr_pressure_values copies it.
    std::vector<double> col(std::size_t(c.m.pattern.nnzb()) * bs);
    for (index_t k = 0; k < c.m.pattern.nnzb(); ++k)
      for (int a = 0; a < bs; ++a) col[std::size_t(k) * bs + a] = c.m.values[k * bb + a * bs];
    kc::cpr_pressure_residual(n, bs, c.m.pattern.row_ptr.data(), c.m.pattern.col_ind.data(), col.data(), xp.data(),
                              r.data(), rc.data());
    index_t longest = 0;
    for (index_t i = 0; i < n; ++i) {
      longest = std::max(longest, c.m.pattern.row_ptr[i + 1] - c.m.pattern.row_ptr[i]);
      for (int a = 0; a < bs; ++a) {
        double& s = sum_abs[std::size_t(i) * bs + a];
        s = std::abs(r[std::size_t(i) * bs + a]);
        for (index_t k = c.m.pattern.row_ptr[i]; k < c.m.pattern.row_ptr[i + 1]; ++k)
          s += std::abs(c.m.values[k * bb + a * bs] * xp[c.m.pattern.col_ind[k]]);
      }
    }
    auto rp_d = upload(c.m.pattern.row_ptr);
    auto ci_d = upload(c.m.pattern.col_ind);
    auto cold = upload(col);
    auto xpd = upload(xp);
    auto rd = upload(r);
    auto r2 = poisoned<double>(size64_t(n) * bs, nan_v);
    kg::cpr_pressure_residual(gpu()->stream(), n, bs, rp_d.data(), ci_d.data(), cold.data(), xpd.data(), rd.data(),
                              r2.data());
    EXPECT_LE(test::rounding_units(r2.to_host(), rc, sum_abs, int(longest) + 1), 1.0) << "bs " << bs;
  }
}

namespace {

CprOptions ilu0_stages(CprWeights weights = CprWeights::quasi_impes)
{
  return {weights, {"ilu0", Ilu0Options{}}, {"ilu0", Ilu0Options{.factor_view = IluFactorView::block}}};
}

}  // namespace

TEST(CprGpu, PreconditionerAgreesWithCpu)
{
  for (int bs : {1, 3, 8, 17}) {
    const auto tm = test::convection_diffusion(11, 9, 7, bs, 1.5);
    auto Ac = test::upload(cpu(), tm);
    auto Ag = test::upload(gpu(), tm);
    auto Mc = make_preconditioner(cpu(), ilu0_stages());
    auto Mg = make_preconditioner(gpu(), ilu0_stages());
    ASSERT_TRUE(Mc->setup(Ac).ok);
    const auto st = Mg->setup(Ag);
    ASSERT_TRUE(st.ok) << st.message;
    EXPECT_EQ(Mc->name(), Mg->name());
    const auto hr = test::random_vector(Ac.scalar_rows());
    Vector rc(cpu(), std::span<const double>(hr)), rg(gpu(), std::span<const double>(hr));
    Vector zc(cpu(), rc.size());
    Vector zg = poisoned<double>(rg.size(), nan_v);
    Mc->apply(rc, zc);
    Mg->apply(rg, zg);
    EXPECT_LT(test::max_rel_diff(zg.to_host(), zc.to_host()), 1e-9) << "bs " << bs;
    test::expect_gmres_agrees(Ac, *Mc, Ag, *Mg, hr, 300, "cpr bs " + std::to_string(bs));
  }
}

// True-IMPES: CPR with weights from given accumulation blocks (random, one per cell, not A's
// diagonal blocks) on both backends: the same weights, one application and GMRES agree.
TEST(CprGpu, TrueImpesAgreesWithCpu)
{
  for (int bs : {1, 3, 8, 17}) {
    const auto tm = test::convection_diffusion(11, 9, 7, bs, 1.5);
    auto Ac = test::upload(cpu(), tm);
    auto Ag = test::upload(gpu(), tm);
    const std::size_t bb = std::size_t(bs) * bs;
    const index_t n = Ac.nrows();
    auto hc = test::random_vector(size64_t(n) * bb);
    for (index_t r = 0; r < n; ++r)
      for (int a = 0; a < bs; ++a) hc[r * bb + a * bs + a] += 2.0 * bs;
    Vector Cc(cpu(), std::span<const double>(hc)), Cg(gpu(), std::span<const double>(hc));
    CprPreconditioner Mc(cpu(), ilu0_stages(CprWeights::true_impes)), Mg(gpu(), ilu0_stages(CprWeights::true_impes));
    Mc.set_accumulation_blocks(Cc);
    Mg.set_accumulation_blocks(Cg);
    ASSERT_TRUE(Mc.setup(Ac).ok);
    const auto st = Mg.setup(Ag);
    ASSERT_TRUE(st.ok) << st.message;
    EXPECT_EQ(Mc.name(), Mg.name());
    EXPECT_LT(test::max_rel_diff(Mg.weights().to_host(), Mc.weights().to_host()), 1e-11 * bs) << "bs " << bs;
    const auto hr = test::random_vector(Ac.scalar_rows());
    Vector rc(cpu(), std::span<const double>(hr)), rg(gpu(), std::span<const double>(hr));
    Vector zc(cpu(), rc.size());
    Vector zg = poisoned<double>(rg.size(), nan_v);
    Mc.apply(rc, zc);
    Mg.apply(rg, zg);
    EXPECT_LT(test::max_rel_diff(zg.to_host(), zc.to_host()), 1e-9) << "bs " << bs;
    test::expect_gmres_agrees(Ac, Mc, Ag, Mg, hr, 300, "cpr true-impes bs " + std::to_string(bs));
  }
}

// CprOptions::graph: the application recorded once per setup and replayed as one CUDA graph gives
// the bits of the same launches made one by one (graph = false), for the AMG pressure stage (W- and
// V-cycle, whose own cycle graph steps aside inside the recording) with a block ILU(0)/ISAI or a
// block-Jacobi second stage; on fresh values of the same pattern (a new setup that keeps the
// recording: every array stays in place) and on another matrix (a new recording), for inputs and
// outputs at other addresses each time, and with the output poisoned.
TEST(CprGpu, GraphReplayIsDirectLaunchesBitForBit)
{
  const Ilu0Options ilu_isai{.trisolve = TriangularSolve::isai, .sweeps = 3, .view = IsaiView::block, .factor_view = IluFactorView::block, .factor_sweeps = 1};
  for (int bs : {1, 2, 3, 8}) {
    for (int variant = 0; variant < 2; ++variant) {
      CprOptions o;
      o.pressure = {"amg", AmgOptions{.cycle = variant == 0 ? AmgCycle::w : AmgCycle::v, .max_coarse = 40}};
      if (variant == 0) o.second = {"ilu0", ilu_isai};
      else o.second = {"block_jacobi", BlockJacobiOptions{}};
      CprOptions direct = o;
      direct.graph = false;
      auto tm = test::convection_diffusion(13, 11, 9, bs, 1.5);
      auto A = test::upload(gpu(), tm);
      const auto tm2 = test::convection_diffusion(9, 11, 13, bs, 0.5);
      auto A2 = test::upload(gpu(), tm2);
      CprPreconditioner Mg(gpu(), o), Md(gpu(), direct);
      for (int setup = 0; setup < 3; ++setup) {
        if (setup == 1) {  // new values, same pattern: the recording is kept
          for (auto& v : tm.values) v *= 1.0 + 0.25 * std::sin(double(&v - tm.values.data()));
          A.values().copy_from_host(tm.values);
        }
        const BsrMatrix& Aset = setup == 2 ? A2 : A;  // another matrix, another pattern: a new recording
        const auto sg = Mg.setup(Aset), sd = Md.setup(Aset);
        ASSERT_TRUE(sg.ok) << sg.message;
        ASSERT_TRUE(sd.ok) << sd.message;
        for (int k = 0; k < 3; ++k) {
          const auto hr = test::random_vector(Aset.scalar_rows());
          Vector r(gpu(), std::span<const double>(hr));
          Vector zg = poisoned<double>(r.size(), nan_v), zd = poisoned<double>(r.size(), nan_v);
          Mg.apply(r, zg);
          Md.apply(r, zd);
          const auto hg = zg.to_host(), hd = zd.to_host();
          for (std::size_t i = 0; i < hg.size(); ++i)
            ASSERT_TRUE(hg[i] == hd[i]) << "bs " << bs << " variant " << variant << " setup " << setup << " apply " << k
                                        << " entry " << i << ": " << hg[i] << " vs " << hd[i];
        }
        EXPECT_EQ(Mg.recordings(), setup < 2 ? 1 : 2) << "bs " << bs << " variant " << variant << " setup " << setup;
        EXPECT_NE(Mg.launch_epoch(), 0u);
      }
      const auto parts = Mg.profile();
      ASSERT_FALSE(parts.empty());
      EXPECT_EQ(parts.back().part.rfind("both stages apply (one CUDA graph of ", 0), 0u)
          << parts.back().part << ": the recording failed (launched directly) or its shape is unknown";
      EXPECT_GT(parts.back().seconds, 0.0);
      EXPECT_EQ(Md.profile().back().part, "second stage apply");
    }
  }
}
