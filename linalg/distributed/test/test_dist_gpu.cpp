// The row-distributed matrix and Krylov solves on GPUs, one per rank (label gpu;mpi; run on 1, 2 and 3 ranks: with
// fewer GPUs than ranks, ranks share them). The halo goes through pinned host memory (the GPU machines' MPI is not
// CUDA-aware). Against the serial product and solve on the CPU of the whole matrix (every rank builds it); on one
// rank the distributed product is also the GPU's own BsrMatrix product, bit for bit.
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/distributed/test/dist_test_util.hpp"
#include "linalg/krylov.hpp"
#include "linalg/preconditioners/block_jacobi/block_jacobi.hpp"
#include "linalg/preconditioners/none/none.hpp"
#include "linalg/test/random_matrix.hpp"
#include "linalg/vector_ops.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <random>

namespace blockres::dist {
namespace {

TEST(DistGpu, ProductMatchesTheSerialOne)
{
  const CommPtr comm = world_communicator();
  const ExecPtr cpu = Executor::create_cpu(), gpu = test::rank_gpu(*comm);
  const int P = comm->size(), me = comm->rank();
  const std::uint64_t seed = test::shared_seed(*comm, "DistGpu product");
  int round = 0;
  for (int bs : {1, 2, 3, 8, 17, 64})
    for (int scattered = 0; scattered < 2; ++scattered, ++round) {
      std::mt19937_64 g(seed + std::uint64_t(round));
      const gindex_t n = (bs >= 17 ? 50 : 400) + gindex_t(g() % (bs >= 17 ? 100 : 2000));
      const test::Global G = test::random_pattern(g, n);
      std::vector<int> owner(static_cast<std::size_t>(n), 0);
      for (gindex_t i = 0; i < n; ++i)
        owner[std::size_t(i)] = scattered ? int(g() % std::uint64_t(P)) : int(i * P / n);
      const std::size_t bb = std::size_t(bs) * std::size_t(bs);
      const std::uint64_t vseed = g();
      std::vector<double> av(G.col.size() * bb);
      for (std::size_t k = 0; k < G.col.size(); ++k) test::block_values(vseed, index_t(k), bs, av.data() + k * bb);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::vector<double> xg(std::size_t(n) * std::size_t(bs)), y0(xg.size());
      for (double& v : xg) v = u(g);
      for (double& v : y0) v = u(g);
      BsrPattern sp;
      sp.nrows = sp.ncols = index_t(n);
      sp.row_ptr = G.row_ptr;
      sp.col_ind = G.col;
      const test::LocalRows R = test::local_rows(G.row_ptr, G.col, av, bs, owner, me);
      DistBsrMatrix D(gpu, comm, bs, R.owned, R.row_ptr, R.gcol, [&](gindex_t i) { return owner[std::size_t(i)]; });
      D.set_values(R.values);
      const Vector dx(gpu, std::span<const double>(test::local_entries(xg, R.owned, bs)));
      for (const auto& [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-1.3, 0.5}}) {
        SCOPED_TRACE(testing::Message() << "bs " << bs << (scattered ? " scattered" : " ranges") << " beta " << beta);
        std::vector<double> start = test::local_entries(y0, R.owned, bs);
        if (beta == 0.0) std::fill(start.begin(), start.end(), std::nan(""));  // must not be read
        Vector dy(gpu, std::span<const double>(start));
        D.apply(alpha, dx, beta, dy);
        const std::vector<double> got = dy.to_host();
        if (P == 1) {  // the GPU's own product of the whole matrix
          BsrMatrix Ag(gpu, bs, sp);
          Ag.values().copy_from_host(av);
          const Vector xgv(gpu, std::span<const double>(xg));
          Vector yg(gpu, std::span<const double>(start));
          Ag.apply(alpha, xgv, beta, yg);
          const std::vector<double> want = yg.to_host();
          for (std::size_t e = 0; e < want.size(); ++e)
            ASSERT_EQ(std::bit_cast<std::uint64_t>(got[e]), std::bit_cast<std::uint64_t>(want[e])) << "entry " << e;
        }
        // Against the CPU's serial product, within the rounding of reordered sums (GPU kernels sum in their order).
        BsrMatrix Ac(cpu, bs, sp);
        Ac.values().copy_from_host(av);
        const Vector xc(cpu, std::span<const double>(xg));
        Vector yc(cpu, std::span<const double>(y0));
        Ac.apply(alpha, xc, beta, yc);
        const std::vector<double> ref = yc.to_host();
        for (std::size_t li = 0; li < R.owned.size(); ++li) {
          const gindex_t i = R.owned[li];
          for (int r = 0; r < bs; ++r) {
            ASSERT_LE(std::abs(got[li * std::size_t(bs) + std::size_t(r)] - ref[std::size_t(i) * std::size_t(bs) + std::size_t(r)]),
                      test::row_bound(G.row_ptr, G.col, av, bs, i, r, alpha, xg, beta, y0))
                << "row " << i << "." << r;
          }
        }
      }
    }
}

TEST(DistGpu, KrylovSolvesConverge)
{
  const CommPtr comm = world_communicator();
  const ExecPtr cpu = Executor::create_cpu(), gpu = test::rank_gpu(*comm);
  const int P = comm->size(), me = comm->rank();
  const std::uint64_t seed = test::shared_seed(*comm, "DistGpu Krylov");
  int round = 0;
  for (const auto& [method, orth] : {std::pair{KrylovMethod::bicgstab, Orthogonalization::cgs2},
                                     std::pair{KrylovMethod::gmres, Orthogonalization::cgs2},
                                     std::pair{KrylovMethod::gmres, Orthogonalization::dcgs2}})
    for (int bs : {1, 4}) {
      std::mt19937_64 g(seed + std::uint64_t(round++));
      const int nx = 12 + int(g() % 8), ny = 10 + int(g() % 6), nz = 3 + int(g() % 4);
      const blockres::test::TestMatrix T = blockres::test::convection_diffusion(nx, ny, nz, bs, 1.5);
      const index_t n = T.pattern.nrows;
      std::vector<int> owner(static_cast<std::size_t>(n), 0);
      for (index_t i = 0; i < n; ++i) owner[std::size_t(i)] = int(std::int64_t(i) * P / n);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::vector<double> bg(std::size_t(n) * std::size_t(bs));
      for (double& v : bg) v = u(g);
      const test::LocalRows R = test::local_rows(T.pattern.row_ptr, T.pattern.col_ind, T.values, bs, owner, me);
      DistBsrMatrix D(gpu, comm, bs, R.owned, R.row_ptr, R.gcol, [&](gindex_t i) { return owner[std::size_t(i)]; });
      D.set_values(R.values);
      const Vector db(gpu, std::span<const double>(test::local_entries(bg, R.owned, bs)));
      for (int jacobi = 0; jacobi < 2; ++jacobi) {
        SCOPED_TRACE(testing::Message() << to_string(method) << " " << to_string(orth) << " bs " << bs
                                        << (jacobi ? " block-Jacobi" : " identity"));
        KrylovConfig cfg;
        cfg.method = method;
        cfg.orthogonalization = orth;
        cfg.rel_tol = 1e-9;
        cfg.max_iterations = 3000;
        cfg.restart = 30;
        KrylovSolver s(gpu, cfg);
        IdentityPreconditioner I;
        BlockJacobiPreconditioner M(gpu);
        ASSERT_TRUE(M.setup(D.diag()).ok);
        Vector x(gpu, size64_t(R.owned.size()) * bs);
        fill(x, 0.0);
        const SolveStatus st = s.solve(D, jacobi ? static_cast<const Preconditioner&>(M) : I, db, x);
        ASSERT_TRUE(st.converged) << to_string(st.reason) << " after " << st.iterations;
        const double it = st.iterations;
        for (double other : comm->allgatherv(std::span<const double>(&it, 1))) EXPECT_EQ(other, it);
        // The gathered solution's residual on the CPU's serial matrix.
        const std::vector<double> xg = test::gathered(*comm, x.to_host(), R.owned, bs, std::size_t(n));
        const BsrMatrix A = blockres::test::upload(cpu, T);
        const Vector xc(cpu, std::span<const double>(xg));
        Vector r(cpu, std::span<const double>(bg));
        A.apply(-1.0, xc, 1.0, r);
        EXPECT_LE(blockres::norm2(r), 1e-9 * st.initial_residual * 1.01);
        if (me == 0) std::printf("%s %s bs %d %s: %d iterations on %d GPU ranks\n", std::string(to_string(method)).c_str(),
                                 std::string(to_string(orth)).c_str(), bs, jacobi ? "block-Jacobi" : "identity",
                                 st.iterations, P);
      }
    }
}

}  // namespace
}  // namespace blockres::dist
