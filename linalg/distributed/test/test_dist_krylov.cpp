// Krylov solves on a row-distributed matrix on 1, 2 and 3 ranks against the serial solve of the whole matrix (every
// rank builds it): convection-diffusion blocks (nonsymmetric) for BiCGSTAB, GMRES (CGS2 and DCGS2) and FGMRES, the
// SPD block Laplacian for CG; rows owned in contiguous ranges or scattered; the identity and block-Jacobi on each
// rank's diag part (additive Schwarz without overlap). One rank: the same iterations and solution bits as serial.
// Several: converged to the target on the gathered true residual; without preconditioning (the same Krylov space in
// exact arithmetic) the iteration counts stay within rounding's reach of serial's.
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/distributed/dist_vector_ops.hpp"
#include "linalg/distributed/test/dist_test_util.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"
#include "linalg/preconditioners/none/none.hpp"
#include "linalg/test/random_matrix.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

namespace blockres::dist {
namespace {

struct Case {
  KrylovMethod method;
  Orthogonalization orth;
  bool spd;
  const char* name;
};

TEST(DistKrylov, MatchesTheSerialSolve)
{
  const CommPtr comm = world_communicator();
  const ExecPtr exec = Executor::create_cpu();
  const int P = comm->size(), me = comm->rank();
  const std::uint64_t seed = test::shared_seed(*comm, "DistKrylov");
  const Case cases[] = {{KrylovMethod::bicgstab, Orthogonalization::cgs2, false, "BiCGSTAB"},
                        {KrylovMethod::gmres, Orthogonalization::cgs2, false, "GMRES(20) CGS2"},
                        {KrylovMethod::gmres, Orthogonalization::dcgs2, false, "GMRES(20) DCGS2"},
                        {KrylovMethod::fgmres, Orthogonalization::cgs2, false, "FGMRES(20)"},
                        {KrylovMethod::cg, Orthogonalization::cgs2, true, "CG"},
                        {KrylovMethod::idr, Orthogonalization::cgs2, false, "IDR(4)"}};
  int round = 0;
  for (const Case& k : cases)
    for (int bs : {1, 3})
      for (int scattered = 0; scattered < 2; ++scattered, ++round) {
        std::mt19937_64 g(seed + std::uint64_t(round));
        const int nx = 6 + int(g() % 6), ny = 5 + int(g() % 5), nz = 2 + int(g() % 4);
        const blockres::test::TestMatrix T = k.spd ? blockres::test::spd_laplacian(nx, ny, nz, bs)
                                                   : blockres::test::convection_diffusion(nx, ny, nz, bs, 1.5);
        const index_t n = T.pattern.nrows;
        std::vector<int> owner(static_cast<std::size_t>(n), 0);
        for (index_t i = 0; i < n; ++i)
          owner[std::size_t(i)] = scattered ? int(g() % std::uint64_t(P)) : int(std::int64_t(i) * P / n);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        std::vector<double> bg(std::size_t(n) * std::size_t(bs));
        for (double& v : bg) v = u(g);
        // Serial.
        const BsrMatrix A = blockres::test::upload(exec, T);
        const Vector b(exec, std::span<const double>(bg));
        // Distributed: this rank's rows.
        const test::LocalRows R = test::local_rows(T.pattern.row_ptr, T.pattern.col_ind, T.values, bs, owner, me);
        const std::vector<gindex_t>& owned = R.owned;
        const std::vector<double> lb = test::local_entries(bg, owned, bs);
        DistBsrMatrix D(exec, comm, bs, owned, R.row_ptr, R.gcol, [&](gindex_t i) { return owner[std::size_t(i)]; });
        D.set_values(R.values);
        const Vector db(exec, std::span<const double>(lb));
        for (int jacobi = 0; jacobi < 2; ++jacobi) {
          SCOPED_TRACE(testing::Message() << k.name << " bs " << bs << (scattered ? " scattered" : " ranges")
                                          << (jacobi ? " block-Jacobi" : " identity") << " grid " << nx << "x" << ny
                                          << "x" << nz);
          KrylovConfig cfg;
          cfg.method = k.method;
          cfg.orthogonalization = k.orth;
          cfg.rel_tol = 1e-9;
          cfg.max_iterations = 2000;
          cfg.restart = 20;
          KrylovSolver serial(exec, cfg), dist(exec, cfg);
          IdentityPreconditioner I;
          BlockJacobiPreconditioner Ms(exec), Md(exec);
          ASSERT_TRUE(Ms.setup(A).ok);
          ASSERT_TRUE(Md.setup(D.diag()).ok);
          Vector xs(exec, size64_t(n) * bs), xd(exec, size64_t(owned.size()) * bs);
          fill(xs, 0.0);
          fill(xd, 0.0);
          const SolveStatus ss = serial.solve(A, jacobi ? static_cast<const Preconditioner&>(Ms) : I, b, xs);
          const SolveStatus sd = dist.solve(D, jacobi ? static_cast<const Preconditioner&>(Md) : I, db, xd);
          ASSERT_TRUE(ss.converged) << to_string(ss.reason);
          ASSERT_TRUE(sd.converged) << to_string(sd.reason) << " after " << sd.iterations;
          // Every rank took the same steps.
          const double it = sd.iterations;
          for (double other : comm->allgatherv(std::span<const double>(&it, 1))) EXPECT_EQ(other, it);
          const std::vector<double> xh = xs.to_host(), xl = xd.to_host();
          if (P == 1) {
            EXPECT_EQ(sd.iterations, ss.iterations);
            EXPECT_EQ(std::bit_cast<std::uint64_t>(sd.residual), std::bit_cast<std::uint64_t>(ss.residual));
            for (std::size_t e = 0; e < xh.size(); ++e)
              ASSERT_EQ(std::bit_cast<std::uint64_t>(xl[e]), std::bit_cast<std::uint64_t>(xh[e])) << "entry " << e;
            continue;
          }
          // The gathered solution's true residual on the serial matrix meets the target.
          const std::vector<double> xg = test::gathered(*comm, xl, owned, bs, std::size_t(n));
          Vector xgv(exec, std::span<const double>(xg)), r(exec, b.size());
          copy(b, r);
          A.apply(-1.0, xgv, 1.0, r);
          EXPECT_LE(blockres::norm2(r), 1e-9 * sd.initial_residual * 1.0001);
          EXPECT_NEAR(sd.initial_residual, ss.initial_residual, 1e-13 * ss.initial_residual);
          if (!jacobi)  // the same Krylov space as serial in exact arithmetic
            EXPECT_LE(std::abs(sd.iterations - ss.iterations), 2 + ss.iterations / 10)
                << sd.iterations << " against " << ss.iterations;
          else
            EXPECT_LE(sd.iterations, 3 * ss.iterations + 10) << sd.iterations << " against " << ss.iterations;
        }
      }
}

// A model's rows come with their columns in its own order (cells, then ghost cells) and their values in executor
// memory: the matrix built from them is the one built from sorted rows, product for product, bit for bit.
TEST(DistKrylov, RowsInAnyColumnOrderWithExecutorValues)
{
  const CommPtr comm = world_communicator();
  const ExecPtr exec = Executor::create_cpu();
  const int P = comm->size(), me = comm->rank();
  const std::uint64_t seed = test::shared_seed(*comm, "DistKrylovOrder");
  for (int bs : {1, 2, 5}) {
    std::mt19937_64 g(seed + std::uint64_t(bs));
    const blockres::test::TestMatrix T = blockres::test::convection_diffusion(5 + int(g() % 4), 3 + int(g() % 3), 2, bs, 1.0);
    const index_t n = T.pattern.nrows;
    std::vector<int> owner(static_cast<std::size_t>(n));
    for (auto& o : owner) o = int(g() % std::uint64_t(P));
    const test::LocalRows R = test::local_rows(T.pattern.row_ptr, T.pattern.col_ind, T.values, bs, owner, me);
    const auto own = [&](gindex_t i) { return owner[std::size_t(i)]; };
    DistBsrMatrix sorted(exec, comm, bs, R.owned, R.row_ptr, R.gcol, own);
    sorted.set_values(R.values);
    // The same rows with each row's columns (and blocks) reversed, values from executor memory, poisoned first.
    const std::size_t bb = std::size_t(bs) * std::size_t(bs);
    std::vector<gindex_t> gcol(R.gcol.size());
    std::vector<double> vals(R.values.size());
    for (std::size_t r = 0; r + 1 < R.row_ptr.size(); ++r)
      for (index_t k = R.row_ptr[r], m = R.row_ptr[r + 1] - 1; k < R.row_ptr[r + 1]; ++k, --m) {
        gcol[std::size_t(m)] = R.gcol[std::size_t(k)];
        std::copy_n(R.values.data() + std::size_t(k) * bb, bb, vals.data() + std::size_t(m) * bb);
      }
    DistBsrMatrix shuffled(exec, comm, bs, R.owned, R.row_ptr, gcol, own);
    shuffled.set_values(std::vector<double>(vals.size(), std::nan("")));
    shuffled.set_values(Vector(exec, std::span<const double>(vals)));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> xh(R.owned.size() * std::size_t(bs));
    for (double& v : xh) v = u(g);
    const Vector x(exec, std::span<const double>(xh));
    Vector y1(exec, x.size()), y2(exec, x.size());
    sorted.apply(1.0, x, 0.0, y1);
    shuffled.apply(1.0, x, 0.0, y2);
    const auto h1 = y1.to_host(), h2 = y2.to_host();
    for (std::size_t e = 0; e < h1.size(); ++e)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(h1[e]), std::bit_cast<std::uint64_t>(h2[e])) << "bs " << bs << " entry " << e;
  }
  // A repeated column is refused on every rank.
  std::vector<gindex_t> owned, gcol;
  std::vector<index_t> rp = {0};
  if (me == 0) owned = {0}, gcol = {0, 0}, rp = {0, 2};
  const auto zero = [](gindex_t) { return 0; };
  EXPECT_THROW(DistBsrMatrix(exec, comm, 1, owned, rp, gcol, zero), std::invalid_argument);
}

}  // namespace
}  // namespace blockres::dist
