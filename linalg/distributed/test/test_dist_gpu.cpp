// The row-distributed matrix and Krylov solves on GPUs, one per rank (label gpu;mpi; run on 1, 2 and 3 ranks: with
// fewer GPUs than ranks, ranks share them). The halo goes device to device through NCCL where every rank has a GPU
// of its own (and the build has NCCL), else through pinned host memory (the GPU machines' MPI is not CUDA-aware);
// the halo test runs both. Against the serial product and solve on the CPU of the whole matrix (every rank builds it); on one
// rank the distributed product is also the GPU's own BsrMatrix product, bit for bit.
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/distributed/device_comm.hpp"
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

double value_of(gindex_t g, int c, int round) { return double(g) * 1000.0 + c + 0.25 * round; }  // exact

// Vectors in device memory: the ghosts from their owners, device to device (NCCL) and through the host, bit for bit
// (a copy), ghosts poisoned first; the owned entries overwritten on the stream right after start (what is sent is
// what start saw) and two exchanges back to back on one channel. Random owners and needed ids; a rank that needs
// nothing.
TEST(DistGpu, HaloOnTheDeviceAndThroughTheHost)
{
  const CommPtr comm = world_communicator();
  const ExecPtr gpu = test::rank_gpu(*comm);
  const int P = comm->size(), me = comm->rank();
  const std::shared_ptr<const DeviceComm> dc = DeviceComm::of(comm);
  // NCCL is taken wherever it can be: an NCCL build, several ranks, a GPU each (one host: rank r on GPU r).
  EXPECT_EQ(nccl_available(), bool(BLOCKRES_EXPECT_NCCL)) << "the library disagrees with what CMake found";
  const bool can = nccl_available() && P > 1 && Executor::cuda_device_count() >= P;
  EXPECT_EQ(dc != nullptr, can) << DeviceComm::why_not(*comm);
  if (me == 0) std::printf("device halo: %s\n", dc ? "NCCL" : DeviceComm::why_not(*comm).c_str());
  const std::uint64_t seed = test::shared_seed(*comm, "DistGpu halo");
  for (int round = 0; round < 4; ++round) {
    const test::RandomHalo h = test::random_halo(seed, round, P, me, 3000, 400, round == 2 && me == 0);
    const IndexMap map(h.owned, h.needed, [&](gindex_t i) { return h.owner[std::size_t(i)]; }, me);
    const HaloPlan plan = HaloPlan::build(*comm, map);
    for (int bs : {1, 3, 17, 64})
      for (const auto t : {HaloChannel::Transport::automatic, HaloChannel::Transport::host}) {
        SCOPED_TRACE(testing::Message() << "round " << round << " bs " << bs
                                        << (t == HaloChannel::Transport::host ? " host" : " automatic"));
        const std::size_t b = std::size_t(bs);
        HaloChannel ch(gpu, comm, plan, bs, t);
        EXPECT_EQ(ch.on_device(), t == HaloChannel::Transport::automatic && dc != nullptr);
        for (int pass = 0; pass < 2; ++pass) {
          std::vector<double> own(std::size_t(map.owned()) * b);
          for (index_t l = 0; l < map.owned(); ++l)
            for (int c = 0; c < bs; ++c) own[std::size_t(l) * b + std::size_t(c)] = value_of(map.global(l), c, pass);
          Array<double> x(gpu, std::span<const double>(own));
          Array<double> ghost(gpu, std::span<const double>(std::vector<double>(std::size_t(map.ghosts()) * b, std::nan(""))));
          ch.start(x.data(), ghost.data());
          Vector xv = Vector::view(gpu, x.data(), x.size());
          fill(xv, -7.0);  // on the stream after start: must not change what was sent
          ch.finish();
          const std::vector<double> got = ghost.to_host();
          for (index_t k = 0; k < map.ghosts(); ++k)
            for (int c = 0; c < bs; ++c)
              ASSERT_EQ(got[std::size_t(k) * b + std::size_t(c)], value_of(map.ghost_globals()[std::size_t(k)], c, pass))
                  << "pass " << pass << " ghost " << k << " entry " << c;
        }
      }
  }
}

// The gathered AMG level's right-hand side: every rank's entries (counts random, some zero) on every rank, device
// to device, poisoned first.
TEST(DistGpu, DeviceAllgathervConcatenatesInRankOrder)
{
  const CommPtr comm = world_communicator();
  const ExecPtr gpu = test::rank_gpu(*comm);
  const std::shared_ptr<const DeviceComm> dc = DeviceComm::of(comm);
  if (!dc) GTEST_SKIP() << "no device communicator: " << DeviceComm::why_not(*comm);
  const int P = comm->size(), me = comm->rank();
  const std::uint64_t seed = test::shared_seed(*comm, "DistGpu allgatherv");
  for (int round = 0; round < 5; ++round) {
    std::mt19937_64 g(seed + std::uint64_t(round));
    std::vector<std::size_t> counts(static_cast<std::size_t>(P));
    for (std::size_t& c : counts) c = g() % 4 == 0 ? 0 : std::size_t(g() % 5000);
    std::vector<double> mine(counts[std::size_t(me)]);
    for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = value_of(gindex_t(k), me, round);
    std::size_t total = 0;
    for (const std::size_t c : counts) total += c;
    const Array<double> dm(gpu, std::span<const double>(mine));
    Array<double> all(gpu, std::span<const double>(std::vector<double>(total, std::nan(""))));
    dc->allgatherv(dm.data(), counts, all.data(), gpu->stream());
    const std::vector<double> got = all.to_host();
    std::size_t at = 0;
    for (int r = 0; r < P; ++r)
      for (std::size_t k = 0; k < counts[std::size_t(r)]; ++k, ++at)
        ASSERT_EQ(got[at], value_of(gindex_t(k), r, round)) << "round " << round << " rank " << r << " entry " << k;
  }
}

// The device sum over the ranks: the same bits as the host communicator's (rank order), values of magnitudes far
// apart so that the order shows; k from 1 to past the initial scratch.
TEST(DistGpu, DeviceSumIsTheHostSumBitForBit)
{
  const CommPtr comm = world_communicator();
  const ExecPtr gpu = test::rank_gpu(*comm);
  const std::shared_ptr<const DeviceComm> dc = DeviceComm::of(comm);
  if (!dc) GTEST_SKIP() << "no device communicator: " << DeviceComm::why_not(*comm);
  const std::uint64_t seed = test::shared_seed(*comm, "DistGpu sum");
  std::mt19937_64 g(seed * 977 + std::uint64_t(comm->rank()));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int k : {1, 2, 33, 64, 65, 500}) {
    std::vector<double> v(static_cast<std::size_t>(k));
    for (double& e : v) e = u(g) * std::ldexp(1.0, int(g() % 60) - 30);
    Array<double> dv(gpu, std::span<const double>(v));
    dc->sum(dv.data(), k, gpu->stream());
    comm->sum(std::span<double>(v));
    const std::vector<double> got = dv.to_host();
    for (int i = 0; i < k; ++i)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got[std::size_t(i)]), std::bit_cast<std::uint64_t>(v[std::size_t(i)]))
          << "k " << k << " entry " << i;
  }
}

}  // namespace
}  // namespace blockres::dist
