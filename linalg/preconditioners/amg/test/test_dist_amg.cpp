// The distributed AMG hierarchy and CPR across ranks (issue 33) on 1, 2 and 3 ranks, on the CPU (label mpi) and,
// built with BLOCKRES_DIST_AMG_GPU, on one GPU per rank (label gpu;mpi). Fresh random input every run (the seed is
// printed): heterogeneous 3D diffusion matrices (face transmissibilities spanning four orders of magnitude) split in
// slabs or scattered row by row.
//   - Galerkin: every distributed level's operator, gathered, equals P^T A P of the level above computed here from the
//     gathered P and A (the exact Galerkin product across the halo), the finest equals the input, and every
//     aggregate lies inside one rank's rows.
//   - Convergence: CG with the distributed hierarchy (the finest level distributed over slabs of 28 to 31 layers, the
//     next gathered) converges to the target on the true residual, compared with CG with the serial hierarchy of the
//     whole matrix; gathered whole (the default gather_rows on a small problem), it is the serial hierarchy: the same
//     iterations up to rounding. Issue 33's target, within 1.2x of one rank's iterations, on the sum over the 8
//     distributed solves of a run (measured 0.96x to 1.05x in 20 runs at 2 and 3 ranks); each solve within 1.4x
//     (measured up to 1.27x). (A second distributed level over thin slabs, 5 or 6 aggregates thick, cost 3 ranks up
//     to 1.5x before boundary rows were adopted into aggregates; the default gather_rows gathers a level that small
//     on 2 to 4 ranks.)
//   - One rank: the distributed hierarchy itself (two levels distributed) takes the serial hierarchy's iterations.
//   - CPR: FGMRES with CPR (distributed pressure matrix and AMG, block-Jacobi second stage) on a block system whose
//     pressure couples across ranks converges on the true residual; over four solves within 1.2x the serial CPR's
//     iterations (measured 0.97x to 1.09x in 20 runs; one solve: within 1.4x).
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/distributed/test/dist_test_util.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/amg/amg.hpp"
#include "linalg/preconditioners/amg/amg_distributed.hpp"
#include "linalg/preconditioners/cpr/cpr_preconditioner.hpp"
#include "linalg/vector_ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

namespace blockres::dist {
namespace {

ExecPtr test_exec(const Communicator& comm)
{
#ifdef BLOCKRES_DIST_AMG_GPU
  return test::rank_gpu(comm);
#else
  (void)comm;
  return Executor::create_cpu();
#endif
}

// A 7-point diffusion operator on nx x ny x nz cells with log-normal face transmissibilities (sigma 1.5) and a small
// diagonal shift (compressibility): SPD, an M-matrix, the pressure equation's shape.
struct Scalar {
  index_t n = 0;
  std::vector<index_t> row_ptr{0}, col;
  std::vector<double> val;
};

Scalar diffusion(std::mt19937_64& g, int nx, int ny, int nz)
{
  const index_t n = index_t(nx) * ny * nz;
  std::normal_distribution<double> z(0.0, 1.5);
  std::vector<std::map<index_t, double>> rows(static_cast<std::size_t>(n));
  auto id = [&](int i, int j, int k) { return index_t((k * ny + j) * nx + i); };
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const index_t a = id(i, j, k);
        rows[std::size_t(a)][a] += 1e-3;
        const int nb[3][3] = {{i + 1, j, k}, {i, j + 1, k}, {i, j, k + 1}};
        for (const auto& q : nb) {
          if (q[0] >= nx || q[1] >= ny || q[2] >= nz) continue;
          const index_t b = id(q[0], q[1], q[2]);
          const double t = std::exp(z(g));
          rows[std::size_t(a)][a] += t, rows[std::size_t(b)][b] += t;
          rows[std::size_t(a)][b] -= t, rows[std::size_t(b)][a] -= t;
        }
      }
  Scalar S;
  S.n = n;
  for (const auto& r : rows) {
    for (const auto& [c, v] : r) S.col.push_back(c), S.val.push_back(v);
    S.row_ptr.push_back(index_t(S.col.size()));
  }
  return S;
}

std::vector<int> owners(std::mt19937_64& g, index_t n, int P, bool scattered)
{
  std::vector<int> o(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) o[std::size_t(i)] = scattered ? int(g() % std::uint64_t(P)) : int(gindex_t(i) * P / n);
  return o;
}

// Every rank's (row, column, value) triplets of one level, gathered: the level as a global sparse map.
using SparseMap = std::map<std::pair<gindex_t, gindex_t>, double>;
SparseMap gather(const Communicator& comm, const std::vector<gindex_t>& rows, const std::vector<index_t>& ptr,
                 const std::vector<gindex_t>& col, const std::vector<double>& val)
{
  std::vector<gindex_t> r, c;
  for (std::size_t i = 0; i + 1 < ptr.size(); ++i)
    for (index_t q = ptr[i]; q < ptr[i + 1]; ++q) r.push_back(rows[i]), c.push_back(col[std::size_t(q)]);
  const auto R = comm.allgatherv(std::span<const gindex_t>(r)), C = comm.allgatherv(std::span<const gindex_t>(c));
  const auto V = comm.allgatherv(std::span<const double>(val));
  SparseMap m;
  for (std::size_t k = 0; k < R.size(); ++k) m[{R[k], C[k]}] += V[k];
  return m;
}

struct Distributed {
  std::vector<gindex_t> owned;
  std::unique_ptr<DistBsrMatrix> A;
};

Distributed distribute(const ExecPtr& exec, const CommPtr& comm, const Scalar& S, const std::vector<int>& owner,
                       int bs = 1, const std::vector<double>* block_values = nullptr)
{
  const test::LocalRows R =
      test::local_rows(S.row_ptr, S.col, block_values ? *block_values : S.val, bs, owner, comm->rank());
  Distributed d;
  d.owned = R.owned;
  d.A = std::make_unique<DistBsrMatrix>(exec, comm, bs, R.owned, R.row_ptr, R.gcol,
                                        [&owner](gindex_t i) { return owner[std::size_t(i)]; });
  d.A->set_values(R.values);
  return d;
}

TEST(DistAmg, CoarseOperatorsAreGalerkinProductsAcrossRanks)
{
  const CommPtr comm = world_communicator();
  const ExecPtr exec = test_exec(*comm);
  const std::uint64_t seed = test::shared_seed(*comm, "DistAmg Galerkin");
  int round = 0;
  for (int scattered = 0; scattered < 2; ++scattered)
    for (AmgInterpolation interp : {AmgInterpolation::smoothed, AmgInterpolation::plain})
      for (AmgAggregation aggr : {AmgAggregation::mis2, AmgAggregation::matching}) {
        std::mt19937_64 g(seed + std::uint64_t(round++));
        const int nx = 9 + int(g() % 8), ny = 7 + int(g() % 6), nz = 3 + int(g() % 4);
        const Scalar S = diffusion(g, nx, ny, nz);
        const std::vector<int> owner = owners(g, S.n, comm->size(), scattered);
        const Distributed D = distribute(exec, comm, S, owner);
        AmgOptions opt;
        opt.interpolation = interp;
        opt.aggregation = aggr;
        opt.gather_rows = 40;
        AmgPreconditioner M(exec, opt);
        const SetupStatus st = M.setup_distributed(*D.A);
        SCOPED_TRACE(testing::Message() << (scattered ? "scattered" : "slabs") << " " << to_string(interp) << " "
                                        << to_string(aggr) << " grid " << nx << "x" << ny << "x" << nz);
        ASSERT_TRUE(st.ok) << st.message;
        if (comm->size() == 1) {  // one rank: the serial hierarchy
          EXPECT_EQ(M.distributed(), nullptr);
          EXPECT_GT(M.num_levels(), 1);
          continue;
        }
        const amg::DistHierarchy* H = M.distributed();
        ASSERT_NE(H, nullptr);
        if (!scattered) {
          ASSERT_GE(H->num_levels(), 2) << "no Galerkin product across the ranks";
        }
        // The finest operator is the input.
        const auto h0 = H->level_host(0);
        SparseMap want0;
        for (index_t i = 0; i < S.n; ++i)
          for (index_t q = S.row_ptr[std::size_t(i)]; q < S.row_ptr[std::size_t(i) + 1]; ++q)
            want0[{i, S.col[std::size_t(q)]}] = S.val[std::size_t(q)];
        EXPECT_EQ(gather(*comm, h0.owned, h0.a_ptr, h0.a_col, h0.a_val), want0);
        for (int l = 0; l + 1 < H->num_levels(); ++l) {
          const auto h = H->level_host(l), hc = H->level_host(l + 1);
          // Aggregates inside the rank: every column of an owned row of P is an owned row of the next level.
          for (gindex_t c : h.p_col)
            ASSERT_TRUE(std::binary_search(hc.owned.begin(), hc.owned.end(), c)) << "level " << l << " P column " << c;
          const SparseMap A = gather(*comm, h.owned, h.a_ptr, h.a_col, h.a_val);
          const SparseMap P = gather(*comm, h.owned, h.p_ptr, h.p_col, h.p_val);
          const SparseMap Ac = gather(*comm, hc.owned, hc.a_ptr, hc.a_col, hc.a_val);
          std::map<gindex_t, std::vector<std::pair<gindex_t, double>>> prow;
          for (const auto& [ij, v] : P) prow[ij.first].emplace_back(ij.second, v);
          SparseMap want, mag;
          for (const auto& [ij, a] : A) {
            const auto pi = prow.find(ij.first), pj = prow.find(ij.second);
            if (pi == prow.end() || pj == prow.end()) continue;
            for (const auto& [I, p] : pi->second)
              for (const auto& [J, q] : pj->second) want[{I, J}] += p * a * q, mag[{I, J}] += std::abs(p * a * q);
          }
          for (const auto& [IJ, v] : want) {
            const auto it = Ac.find(IJ);
            const double got = it == Ac.end() ? 0.0 : it->second;
            ASSERT_LE(std::abs(got - v), 1e-12 * mag[IJ] + 1e-300)
                << "level " << l + 1 << " entry (" << IJ.first << ", " << IJ.second << ")";
          }
          for (const auto& [IJ, v] : Ac) ASSERT_TRUE(want.count(IJ)) << "level " << l + 1 << " extra entry";
        }
      }
}

// The true residual ||b - A x|| / ||b|| over all ranks.
double true_residual(const Communicator& comm, const Scalar& S, const std::vector<double>& x,
                     const std::vector<double>& b)
{
  (void)comm;
  double rr = 0.0, bb = 0.0;
  for (index_t i = 0; i < S.n; ++i) {
    double r = b[std::size_t(i)];
    for (index_t q = S.row_ptr[std::size_t(i)]; q < S.row_ptr[std::size_t(i) + 1]; ++q)
      r -= S.val[std::size_t(q)] * x[std::size_t(S.col[std::size_t(q)])];
    rr += r * r, bb += b[std::size_t(i)] * b[std::size_t(i)];
  }
  return std::sqrt(rr / bb);
}

TEST(DistAmg, ConvergesLikeTheSerialHierarchy)
{
  const CommPtr comm = world_communicator();
  const ExecPtr exec = test_exec(*comm);
  const std::uint64_t seed = test::shared_seed(*comm, "DistAmg convergence");
  int serial_sum = 0, dist_sum = 0;
  // Rounds 0..7: the finest level distributed; 8, 9: everything gathered.
  for (int round = 0; round < 10; ++round) {
      const bool whole = round >= 8;
      const AmgCycle cyc = round % 2 ? AmgCycle::w : AmgCycle::v;
      std::mt19937_64 g(seed + std::uint64_t(round));
      // Slabs of 28 to 31 layers a rank (a subdomain of a few layers is all boundary: mis2 aggregates, 3 cells
      // across, cannot form in it).
      const int nx = 10 + int(g() % 4), ny = 10 + int(g() % 4), nz = 28 * comm->size() + int(g() % 4);
      const Scalar S = diffusion(g, nx, ny, nz);
      const std::vector<int> owner = owners(g, S.n, comm->size(), false);
      const Distributed D = distribute(exec, comm, S, owner);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::vector<double> bg(static_cast<std::size_t>(S.n));
      for (double& v : bg) v = u(g);
      // The finest level distributed, the next (about a fifth of the rows) gathered; or everything gathered.
      const index_t gather_rows = whole ? AmgOptions{}.gather_rows : S.n / 3;
      AmgOptions opt;
      opt.gather_rows = gather_rows;
      opt.cycle = cyc;
      KrylovConfig cfg;
      cfg.method = KrylovMethod::cg;
      cfg.rel_tol = 1e-8;
      cfg.max_iterations = 500;
      // Serial: the whole matrix on every rank.
      BsrPattern p;
      p.nrows = p.ncols = S.n;
      p.row_ptr = S.row_ptr;
      p.col_ind = S.col;
      BsrMatrix A(exec, 1, p);
      A.values().copy_from_host(S.val);
      AmgPreconditioner Ms(exec, opt), Md(exec, opt);
      ASSERT_TRUE(Ms.setup(A).ok);
      Vector b(exec, std::span<const double>(bg)), x(exec, size64_t(S.n));
      fill(x, 0.0);
      KrylovSolver serial(exec, cfg), dist(exec, cfg);
      const SolveStatus ss = serial.solve(A, Ms, b, x);
      ASSERT_TRUE(ss.converged);
      // Distributed.
      const SetupStatus st = Md.setup_distributed(*D.A);
      ASSERT_TRUE(st.ok) << st.message;
      const std::vector<double> lb = test::local_entries(bg, D.owned, 1);
      Vector db(exec, std::span<const double>(lb)), dx(exec, lb.size());
      fill(dx, 0.0);
      const SolveStatus sd = dist.solve(*D.A, Md, db, dx);
      const std::vector<double> xg = test::gathered(*comm, dx.to_host(), D.owned, 1, std::size_t(S.n));
      SCOPED_TRACE(testing::Message() << "gather_rows " << gather_rows << " " << to_string(cyc) << "-cycle grid " << nx
                                      << "x" << ny << "x" << nz << ": serial " << ss.iterations << ", "
                                      << comm->size() << " ranks " << sd.iterations << " iterations; "
                                      << Md.setup_summary());
      if (comm->rank() == 0)
        std::printf("gather_rows %d %s-cycle %dx%dx%d: serial %d, %d ranks %d iterations (%s)\n", int(gather_rows),
                    std::string(to_string(cyc)).c_str(), nx, ny, nz, ss.iterations, comm->size(), sd.iterations,
                    Md.setup_summary().c_str());
      ASSERT_TRUE(sd.converged);
      EXPECT_LE(true_residual(*comm, S, xg, bg), 1.01e-8);
      if (comm->size() > 1 && S.n > gather_rows) {
        EXPECT_GE(Md.distributed()->distributed_levels(), 1);
      }
      if (comm->size() == 1 || S.n <= gather_rows) {
        EXPECT_LE(std::abs(sd.iterations - ss.iterations), 1);  // the serial hierarchy, rounding apart
      } else {
        // One solve: no gross loss (measured: up to 1.27x on these small slabs); the sum is the target below.
        EXPECT_LE(sd.iterations, int(1.4 * ss.iterations) + 1);
        serial_sum += ss.iterations, dist_sum += sd.iterations;
      }
  }
  // Issue 33's target: the iterations of the 8 distributed solves within 1.2x of the serial ones.
  if (comm->rank() == 0 && serial_sum > 0)
    std::printf("distributed solves: %d iterations against %d serial (%.3fx)\n", dist_sum, serial_sum,
                double(dist_sum) / serial_sum);
  EXPECT_LE(dist_sum, 1.2 * serial_sum);
}

// The distributed hierarchy itself on one rank (AmgPreconditioner takes the serial one there): no ghost, so the same
// aggregates, operators and cycle as the serial hierarchy, gathered at the same level: CG takes the same iterations.
class DistOnly final : public Preconditioner {
 public:
  DistOnly(ExecPtr exec, const AmgOptions& opt) : h_(std::move(exec), opt) {}
  SetupStatus setup(const BsrMatrix&) override { throw std::logic_error("DistOnly: distributed matrices only"); }
  SetupStatus setup_distributed(const DistBsrMatrix& A) override { return h_.setup_full(A); }
  void apply(const Vector& r, Vector& z) const override { h_.apply(r, z); }
  std::string name() const override { return "distributed amg"; }
  amg::DistHierarchy h_;
};

TEST(DistAmg, OnOneRankTheDistributedHierarchyIsTheSerialOne)
{
  const CommPtr comm = world_communicator();
  if (comm->size() != 1) GTEST_SKIP() << "one rank only";
  const ExecPtr exec = test_exec(*comm);
  const std::uint64_t seed = test::shared_seed(*comm, "DistAmg one rank");
  for (AmgCycle cyc : {AmgCycle::v, AmgCycle::w}) {
    std::mt19937_64 g(seed + std::uint64_t(cyc == AmgCycle::w));
    const int nx = 14 + int(g() % 6), ny = 12 + int(g() % 6), nz = 10 + int(g() % 4);
    const Scalar S = diffusion(g, nx, ny, nz);
    const Distributed D = distribute(exec, comm, S, std::vector<int>(std::size_t(S.n), 0));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> bg(static_cast<std::size_t>(S.n));
    for (double& v : bg) v = u(g);
    AmgOptions opt;
    opt.gather_rows = 200;  // levels 0 and 1 distributed, the rest gathered
    opt.cycle = cyc;
    KrylovConfig cfg;
    cfg.method = KrylovMethod::cg;
    cfg.rel_tol = 1e-8;
    cfg.max_iterations = 500;
    AmgPreconditioner Ms(exec, opt);
    ASSERT_TRUE(Ms.setup(D.A->diag()).ok);
    DistOnly Md(exec, opt);
    ASSERT_TRUE(Md.setup_distributed(*D.A).ok);
    EXPECT_GE(Md.h_.distributed_levels(), 2);
    const Vector b(exec, std::span<const double>(bg));
    Vector xs(exec, bg.size()), xd(exec, bg.size());
    fill(xs, 0.0), fill(xd, 0.0);
    KrylovSolver s1(exec, cfg), s2(exec, cfg);
    const SolveStatus ss = s1.solve(D.A->diag(), Ms, b, xs), sd = s2.solve(*D.A, Md, b, xd);
    ASSERT_TRUE(ss.converged && sd.converged);
    EXPECT_EQ(sd.iterations, ss.iterations) << to_string(cyc) << "-cycle";
  }
}

TEST(DistAmg, CprAcrossRanksConverges)
{
  const CommPtr comm = world_communicator();
  const ExecPtr exec = test_exec(*comm);
  const std::uint64_t seed = test::shared_seed(*comm, "DistAmg CPR");
  int serial_sum = 0, dist_sum = 0;
  for (int round = 0; round < 4; ++round) {
    const int bs = 2 + round % 2;
    std::mt19937_64 g(seed + std::uint64_t(round));
    const int nx = 10 + int(g() % 4), ny = 10 + int(g() % 4), nz = 28 * comm->size() + int(g() % 4);
    const Scalar S = diffusion(g, nx, ny, nz);
    // Blocks: the pressure column carries the diffusion operator (scaled per equation), the other unknowns couple
    // weakly off the diagonal and strongly on it (a saturation-like accumulation).
    const std::size_t bb = std::size_t(bs) * std::size_t(bs);
    std::vector<double> vals(S.col.size() * bb, 0.0);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (index_t i = 0; i < S.n; ++i)
      for (index_t q = S.row_ptr[std::size_t(i)]; q < S.row_ptr[std::size_t(i) + 1]; ++q) {
        double* blk = vals.data() + std::size_t(q) * bb;
        const bool diag = S.col[std::size_t(q)] == i;
        for (int r = 0; r < bs; ++r) {
          blk[r * bs] = S.val[std::size_t(q)] * (1.0 + 0.2 * r);
          for (int c = 1; c < bs; ++c) blk[r * bs + c] = diag ? (r == c ? 4.0 + u(g) : 0.3 * u(g)) : 0.05 * u(g);
        }
      }
    const std::vector<int> owner = owners(g, S.n, comm->size(), false);
    const Distributed D = distribute(exec, comm, S, owner, bs, &vals);
    CprOptions opt;
    AmgOptions amg;
    amg.gather_rows = S.n / 3;  // the finest pressure level distributed, the next gathered
    opt.pressure = {"amg", amg};
    opt.graph = false;
    CprPreconditioner M(exec, opt), Ms(exec, opt);
    // Serial: the whole system on every rank.
    BsrPattern p;
    p.nrows = p.ncols = S.n;
    p.row_ptr = S.row_ptr;
    p.col_ind = S.col;
    BsrMatrix A(exec, bs, p);
    A.values().copy_from_host(vals);
    ASSERT_TRUE(Ms.setup(A).ok);
    const SetupStatus st = M.setup_distributed(*D.A);
    ASSERT_TRUE(st.ok) << st.message;
    if (comm->size() > 1) {
      ASSERT_NE(M.distributed_pressure_matrix(), nullptr);
      const auto* amgp = dynamic_cast<const AmgPreconditioner*>(&M.pressure_stage());
      ASSERT_NE(amgp, nullptr);
      ASSERT_NE(amgp->distributed(), nullptr);
      EXPECT_GE(amgp->distributed()->distributed_levels(), 1);
    }
    std::vector<double> bg(static_cast<std::size_t>(S.n) * bs);
    for (double& v : bg) v = u(g);
    const std::vector<double> lb = test::local_entries(bg, D.owned, bs);
    Vector db(exec, std::span<const double>(lb)), dx(exec, lb.size());
    fill(dx, 0.0);
    KrylovConfig cfg;
    cfg.method = KrylovMethod::fgmres;
    cfg.rel_tol = 1e-8;
    cfg.max_iterations = 300;
    cfg.restart = 30;
    KrylovSolver solver(exec, cfg), serial(exec, cfg);
    const SolveStatus sd = solver.solve(*D.A, M, db, dx);
    Vector b(exec, std::span<const double>(bg)), x(exec, bg.size());
    fill(x, 0.0);
    const SolveStatus ss = serial.solve(A, Ms, b, x);
    if (comm->rank() == 0)
      std::printf("CPR bs %d %dx%dx%d: serial %d, %d ranks %d iterations\n", bs, nx, ny, nz, ss.iterations,
                  comm->size(), sd.iterations);
    ASSERT_TRUE(ss.converged);
    ASSERT_TRUE(sd.converged) << "bs " << bs << " " << sd.iterations << " iterations";
    EXPECT_LE(sd.iterations, int(1.4 * ss.iterations) + 1) << "bs " << bs << ": serial " << ss.iterations;
    serial_sum += ss.iterations, dist_sum += sd.iterations;
    // True residual of the gathered solution.
    const std::vector<double> xg = test::gathered(*comm, dx.to_host(), D.owned, bs, std::size_t(S.n));
    double rr = 0.0, b2 = 0.0;
    for (index_t i = 0; i < S.n; ++i)
      for (int r = 0; r < bs; ++r) {
        double res = bg[std::size_t(i) * bs + r];
        for (index_t q = S.row_ptr[std::size_t(i)]; q < S.row_ptr[std::size_t(i) + 1]; ++q)
          for (int c = 0; c < bs; ++c)
            res -= vals[std::size_t(q) * bb + std::size_t(r * bs + c)] * xg[std::size_t(S.col[std::size_t(q)]) * bs + c];
        rr += res * res, b2 += bg[std::size_t(i) * bs + r] * bg[std::size_t(i) * bs + r];
      }
    EXPECT_LE(std::sqrt(rr / b2), 1.01e-8) << "bs " << bs;
  }
  if (comm->size() > 1) {
    if (comm->rank() == 0)
      std::printf("distributed CPR solves: %d iterations against %d serial (%.3fx)\n", dist_sum, serial_sum,
                  double(dist_sum) / serial_sum);
    EXPECT_LE(dist_sum, 1.2 * serial_sum);
  }
}

}  // namespace
}  // namespace blockres::dist
