// Shared by the MPI tests: a seed that is fresh per run but the same on every rank (rank 0's, printed so a failure
// can be replayed with BLOCKRES_TEST_SEED).
#pragma once

#include "linalg/distributed/communicator.hpp"

#include "linalg/executor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace blockres::dist::test {

inline std::uint64_t shared_seed(const Communicator& comm, const char* what)
{
  std::uint64_t seed = 0;
  if (const char* s = std::getenv("BLOCKRES_TEST_SEED"))
    seed = std::strtoull(s, nullptr, 10);
  else
    seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const gindex_t mine = static_cast<gindex_t>(seed & 0x7fffffffffffffffull);
  const std::vector<gindex_t> all = comm.allgatherv(std::span<const gindex_t>(&mine, 1));
  if (comm.rank() == 0) std::printf("%s: seed %lld (BLOCKRES_TEST_SEED replays it)\n", what, static_cast<long long>(all[0]));
  return static_cast<std::uint64_t>(all[0]);
}

// A random global block pattern: stencil-like rows (neighbours at distance 1 and a random stride) with a few far
// couplings, as wells add; and block k's values from its own seed, so that any rank can make any row's values.
struct Global {
  gindex_t n;
  std::vector<index_t> row_ptr;
  std::vector<index_t> col;
};

inline Global random_pattern(std::mt19937_64& g, gindex_t n)
{
  Global G{n, {0}, {}};
  const gindex_t s = 2 + gindex_t(g() % 9);  // the "layer" stride of a stencil
  for (gindex_t i = 0; i < n; ++i) {
    std::vector<index_t> c = {index_t(i)};
    for (gindex_t d : {gindex_t(1), s})
      for (gindex_t j : {i - d, i + d})
        if (j >= 0 && j < n) c.push_back(index_t(j));
    for (int k = int(g() % 3); k > 0; --k) c.push_back(index_t(g() % std::uint64_t(n)));  // far couplings
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    G.col.insert(G.col.end(), c.begin(), c.end());
    G.row_ptr.push_back(index_t(G.col.size()));
  }
  return G;
}

// The halo tests' input for one round: N = 1 + (a draw below max_n) ids owned by random ranks (the same on every
// rank, from seed + round) and the ids rank me needs (its own draw, fewer than max_needed; none when `none`: a rank
// that needs no ghost).
struct RandomHalo {
  gindex_t N = 0;
  std::vector<int> owner;
  std::vector<gindex_t> owned, needed;
};
inline RandomHalo random_halo(std::uint64_t seed, int round, int P, int me, std::uint64_t max_n,
                              std::uint64_t max_needed, bool none)
{
  RandomHalo h;
  std::mt19937_64 g(seed + std::uint64_t(round));  // the global structure: the same on every rank
  h.N = 1 + gindex_t(g() % max_n);
  h.owner.resize(static_cast<std::size_t>(h.N));
  for (int& o : h.owner) o = int(g() % std::uint64_t(P));
  for (gindex_t i = 0; i < h.N; ++i)
    if (h.owner[std::size_t(i)] == me) h.owned.push_back(i);
  std::mt19937_64 mine(seed * 31 + std::uint64_t(round) * 7 + std::uint64_t(me));
  if (!none)
    for (std::uint64_t k = mine() % max_needed; k > 0; --k) h.needed.push_back(gindex_t(mine() % std::uint64_t(h.N)));
  return h;
}

// Block k's values from its own seed, so any rank can make any row's values.
inline void block_values(std::uint64_t seed, index_t k, int bs, double* out)
{
  std::mt19937_64 g(seed ^ (std::uint64_t(k) * 0x9e3779b97f4a7c15ull));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int e = 0; e < bs * bs; ++e) out[e] = u(g);
}

// Rank me's rows of a global block matrix (row_ptr, col, values with bs x bs blocks), owner per row: what
// DistBsrMatrix takes.
struct LocalRows {
  std::vector<gindex_t> owned, gcol;
  std::vector<index_t> row_ptr{0};
  std::vector<double> values;
};
inline LocalRows local_rows(const std::vector<index_t>& row_ptr, const std::vector<index_t>& col,
                            const std::vector<double>& values, int bs, const std::vector<int>& owner, int me)
{
  LocalRows L;
  const std::size_t bb = std::size_t(bs) * std::size_t(bs);
  for (std::size_t i = 0; i + 1 < row_ptr.size(); ++i) {
    if (owner[i] != me) continue;
    L.owned.push_back(gindex_t(i));
    for (index_t q = row_ptr[i]; q < row_ptr[i + 1]; ++q) {
      L.gcol.push_back(col[std::size_t(q)]);
      L.values.insert(L.values.end(), values.begin() + std::ptrdiff_t(std::size_t(q) * bb),
                      values.begin() + std::ptrdiff_t(std::size_t(q + 1) * bb));
    }
    L.row_ptr.push_back(index_t(L.gcol.size()));
  }
  return L;
}
// The entries of the owned rows of a global vector (bs per row).
inline std::vector<double> local_entries(const std::vector<double>& v, const std::vector<gindex_t>& owned, int bs)
{
  std::vector<double> l;
  for (const gindex_t i : owned)
    l.insert(l.end(), v.begin() + std::ptrdiff_t(i * bs), v.begin() + std::ptrdiff_t((i + 1) * bs));
  return l;
}
// The global vector from every rank's owned entries (collective).
inline std::vector<double> gathered(const Communicator& comm, const std::vector<double>& mine,
                                    const std::vector<gindex_t>& owned, int bs, std::size_t global_rows)
{
  const std::vector<double> parts = comm.allgatherv(std::span<const double>(mine));
  const std::vector<gindex_t> rows = comm.allgatherv(std::span<const gindex_t>(owned));
  std::vector<double> g(global_rows * std::size_t(bs), 0.0);
  for (std::size_t q = 0; q < rows.size(); ++q)
    for (int c = 0; c < bs; ++c)
      g[std::size_t(rows[q]) * std::size_t(bs) + std::size_t(c)] = parts[q * std::size_t(bs) + std::size_t(c)];
  return g;
}

// How far a reordered sum may stray: 2 (terms) eps (sum of |terms|) for entry r of block row i of y = alpha A x + beta y0
// (A: row_ptr, col, bs x bs blocks av; x, y0 global).
inline double row_bound(const std::vector<index_t>& row_ptr, const std::vector<index_t>& col, const std::vector<double>& av,
                        int bs, gindex_t i, int r, double alpha, const std::vector<double>& x, double beta,
                        const std::vector<double>& y0)
{
  const std::size_t b = std::size_t(bs), bb = b * b;
  double mag = std::abs(beta * y0[std::size_t(i) * b + std::size_t(r)]);
  double terms = 1;
  for (index_t k = row_ptr[std::size_t(i)]; k < row_ptr[std::size_t(i) + 1]; ++k)
    for (int c = 0; c < bs; ++c, ++terms)
      mag += std::abs(alpha * av[std::size_t(k) * bb + std::size_t(r * bs + c)] * x[std::size_t(col[std::size_t(k)]) * b + std::size_t(c)]);
  return 2.0 * terms * DBL_EPSILON * mag;
}

// Whether the ranks the launcher started all joined comm (an MPI test main's first check: N copies of a one-rank
// run would pass vacuously); prints why not.
inline bool launcher_consistent(const Communicator& comm)
{
  const int launched = launcher_ranks();
  if (launched <= 0 || comm.size() == launched) return true;
  std::fprintf(stderr, "mpi test: the launcher started %d ranks but the communicator has %d\n", launched, comm.size());
  return false;
}

// On ranks above 0: no GoogleTest report, only each failure, prefixed with the rank.
inline void quiet_except_failures(int rank)
{
  class RankFailurePrinter : public ::testing::EmptyTestEventListener {
   public:
    explicit RankFailurePrinter(int r) : rank_(r) {}
    void OnTestPartResult(const ::testing::TestPartResult& r) override
    {
      if (r.failed())
        std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                     r.line_number(), r.summary());
    }

   private:
    int rank_;
  };
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new RankFailurePrinter(rank));
}

// The GPU of this rank (MPI GPU tests): its rank modulo the devices it sees, one GPU per rank where there are enough.
inline ExecPtr rank_gpu(const Communicator& comm)
{
  return Executor::create_cuda(comm.rank() % Executor::cuda_device_count());
}

}  // namespace blockres::dist::test
