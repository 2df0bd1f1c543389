// The row-distributed BSR product on 1, 2 and 3 ranks against the serial BsrMatrix on the whole matrix (which every
// rank builds from the same seed): stencil-like rows with far couplings (as wells add), contiguous and scattered
// owners, block sizes 1..64, alpha / beta variants, y poisoned where it must not be read. One rank: bit for bit.
// Several: within the rounding of the reordered row sums (diag part, then offd part).
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/distributed/test/dist_test_util.hpp"
#include "linalg/vector_ops.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <random>

namespace blockres::dist {
namespace {

using test::Global;
using test::block_values;
using test::random_pattern;

TEST(DistSpmv, MatchesTheSerialProduct)
{
  const CommPtr comm = world_communicator();
  const ExecPtr exec = Executor::create_cpu();
  const int P = comm->size(), me = comm->rank();
  const std::uint64_t seed = test::shared_seed(*comm, "DistSpmv");
  int round = 0;
  for (int bs : {1, 2, 3, 8, 17, 64}) {
    for (int scattered = 0; scattered < 2; ++scattered, ++round) {
      std::mt19937_64 g(seed + std::uint64_t(round));
      const gindex_t n = (bs >= 17 ? 5 : 20) + gindex_t(g() % (bs >= 17 ? 40 : 300));
      const Global G = random_pattern(g, n);
      std::vector<int> owner(static_cast<std::size_t>(n), 0);
      for (gindex_t i = 0; i < n; ++i)
        owner[std::size_t(i)] = scattered ? int(g() % std::uint64_t(P)) : int(i * P / n);  // ranges or scattered
      const std::size_t bb = std::size_t(bs) * std::size_t(bs);
      const std::uint64_t vseed = g();
      // The serial matrix and vectors.
      BsrPattern sp;
      sp.nrows = sp.ncols = index_t(n);
      sp.row_ptr = G.row_ptr;
      sp.col_ind = G.col;
      BsrMatrix A(exec, bs, sp);
      std::vector<double> av(std::size_t(sp.nnzb()) * bb);
      for (index_t k = 0; k < sp.nnzb(); ++k) block_values(vseed, k, bs, av.data() + std::size_t(k) * bb);
      A.values().copy_from_host(av);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::vector<double> xg(std::size_t(n) * std::size_t(bs)), y0(xg.size());
      for (double& v : xg) v = u(g);
      for (double& v : y0) v = u(g);
      // This rank's rows.
      std::vector<gindex_t> owned, gcol;
      std::vector<index_t> rp = {0};
      std::vector<double> lv, lx, ly0;
      for (gindex_t i = 0; i < n; ++i) {
        if (owner[std::size_t(i)] != me) continue;
        owned.push_back(i);
        for (index_t k = G.row_ptr[std::size_t(i)]; k < G.row_ptr[std::size_t(i) + 1]; ++k) {
          gcol.push_back(G.col[std::size_t(k)]);
          lv.insert(lv.end(), av.begin() + std::ptrdiff_t(std::size_t(k) * bb), av.begin() + std::ptrdiff_t(std::size_t(k + 1) * bb));
        }
        rp.push_back(index_t(gcol.size()));
        lx.insert(lx.end(), xg.begin() + std::ptrdiff_t(i * bs), xg.begin() + std::ptrdiff_t((i + 1) * bs));
        ly0.insert(ly0.end(), y0.begin() + std::ptrdiff_t(i * bs), y0.begin() + std::ptrdiff_t((i + 1) * bs));
      }
      DistBsrMatrix D(exec, comm, bs, owned, rp, gcol, [&](gindex_t i) { return owner[std::size_t(i)]; });
      D.set_values(lv);
      {
        // The same rows with trailing blocks (a model's ghost rows), the values written where block_storage() sends
        // them, as a model assembles (Model::set_block_storage): a permutation, the trailing blocks in place, and the
        // diag and offd parts the bits set_values gives; the trailing blocks (NaN) enter no part.
        const index_t trailing = 1 + index_t(g() % 5);
        DistBsrMatrix S(exec, comm, bs, owned, rp, gcol, [&](gindex_t i) { return owner[std::size_t(i)]; }, trailing);
        const std::vector<index_t> where = S.block_storage();
        const std::size_t nb = std::size_t(rp.back());
        ASSERT_EQ(where.size(), nb + std::size_t(trailing));
        std::vector<bool> seen(where.size(), false);
        for (std::size_t k = 0; k < where.size(); ++k) {
          ASSERT_TRUE(where[k] >= 0 && std::size_t(where[k]) < where.size() && !seen[std::size_t(where[k])]) << k;
          seen[std::size_t(where[k])] = true;
          if (k >= nb) {
            EXPECT_EQ(where[k], index_t(k));
          }
        }
        ASSERT_EQ(S.storage().size(), size64_t(where.size() * bb));
        std::vector<double> sv(where.size() * bb, std::nan(""));
        for (std::size_t k = 0; k < nb; ++k) std::copy_n(lv.data() + k * bb, bb, sv.data() + std::size_t(where[k]) * bb);
        S.storage().copy_from_host(sv);
        const auto bits = [](const std::vector<double>& v) {
          std::vector<std::uint64_t> b(v.size());
          for (std::size_t q = 0; q < v.size(); ++q) b[q] = std::bit_cast<std::uint64_t>(v[q]);
          return b;
        };
        EXPECT_EQ(bits(S.diag().values().to_host()), bits(D.diag().values().to_host()));
        ASSERT_EQ(S.offd().has_value(), D.offd().has_value());
        if (D.offd()) {
          EXPECT_EQ(bits(S.offd()->values().to_host()), bits(D.offd()->values().to_host()));
        }
      }
      EXPECT_EQ(D.offd().has_value(), D.map().ghosts() > 0);
      if (P == 1) {
        EXPECT_FALSE(D.offd().has_value());
      }
      const Vector x(exec, std::span<const double>(xg)), dx(exec, std::span<const double>(lx));
      for (const auto& [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-1.3, 0.5}}) {
        Vector y(exec, std::span<const double>(y0));
        A.apply(alpha, x, beta, y);
        const std::vector<double> yref = y.to_host();
        std::vector<double> start = ly0;
        if (beta == 0.0) std::fill(start.begin(), start.end(), std::nan(""));  // must not be read
        Vector dy(exec, std::span<const double>(start));
        D.apply(alpha, dx, beta, dy);
        const std::vector<double> got = dy.to_host();
        for (std::size_t li = 0; li < owned.size(); ++li) {
          const gindex_t i = owned[li];
          for (int r = 0; r < bs; ++r) {
            const double want = yref[std::size_t(i) * std::size_t(bs) + std::size_t(r)];
            const double have = got[li * std::size_t(bs) + std::size_t(r)];
            if (P == 1) {
              ASSERT_EQ(std::bit_cast<std::uint64_t>(have), std::bit_cast<std::uint64_t>(want)) << "row " << i << "." << r;
              continue;
            }
            ASSERT_LE(std::abs(have - want), test::row_bound(G.row_ptr, G.col, av, bs, i, r, alpha, xg, beta, y0))
                << "bs " << bs << (scattered ? " scattered" : " ranges") << " row " << i << "." << r << ": " << have
                << " against " << want;
          }
        }
      }
    }
  }
}

TEST(DistSpmv, InconsistentRowsThrowOnEveryRank)
{
  const CommPtr comm = world_communicator();
  const ExecPtr exec = Executor::create_cpu();
  const int me = comm->rank(), P = comm->size();
  // Rank r owns row r, with the columns r and (r + 1) mod P, except that the last rank repeats its own column
  // (columns in any order are fine: a model gives them in its own numbering).
  std::vector<gindex_t> cols = {gindex_t(me), gindex_t((me + 1) % P)};
  if (me == P - 1) cols = {gindex_t(me), gindex_t(me)};
  const std::vector<index_t> rp = {0, 2};
  EXPECT_THROW(DistBsrMatrix(exec, comm, 2, {gindex_t(me)}, rp, cols, [](gindex_t i) { return int(i); }),
               std::invalid_argument);
}

}  // namespace
}  // namespace blockres::dist
