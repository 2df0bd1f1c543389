// Index maps and halo exchanges on 1, 2 and 3 ranks, against the global values every rank can compute: random
// owners, random needed ids (some ranks needing none), block sizes 1..64, ghost buffers poisoned first.
#include "linalg/distributed/halo_plan.hpp"
#include "linalg/distributed/test/dist_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace blockres::dist {
namespace {

double value_of(gindex_t g, int c) { return double(g) * 1000.0 + c; }  // exact in a double

TEST(Halo, GhostsReceiveTheirOwnersValues)
{
  const CommPtr comm = world_communicator();
  const int P = comm->size(), me = comm->rank();
  const std::uint64_t seed = test::shared_seed(*comm, "Halo");
  for (int round = 0; round < 6; ++round) {
    const test::RandomHalo h = test::random_halo(seed, round, P, me, 500, 60, round % 3 == 2 && me == 0);
    const std::vector<int>& owner = h.owner;
    const std::vector<gindex_t>& owned = h.owned;
    const std::vector<gindex_t>& needed = h.needed;
    const auto owner_of = [&](gindex_t i) { return owner[std::size_t(i)]; };
    const IndexMap map(owned, needed, owner_of, me);
    ASSERT_EQ(map.owned(), index_t(owned.size()));
    for (const gindex_t i : needed) {
      const index_t l = map.local(i);
      ASSERT_GE(l, 0);
      EXPECT_EQ(map.global(l), i);
      EXPECT_EQ(l < map.owned(), owner_of(i) == me);
    }
    for (std::size_t k = 1; k < map.ghost_owner().size(); ++k) {  // grouped by owner, ascending ids within
      const int o0 = map.ghost_owner()[k - 1], o1 = map.ghost_owner()[k];
      EXPECT_TRUE(o0 < o1 || (o0 == o1 && map.ghost_globals()[k - 1] < map.ghost_globals()[k]));
    }
    const HaloPlan plan = HaloPlan::build(*comm, map);
    EXPECT_EQ(plan.ghosts(), map.ghosts());
    EXPECT_EQ(comm->sum(static_cast<long long>(plan.sent())), comm->sum(static_cast<long long>(plan.ghosts())));
    for (int bs : {1, 2, 3, 7, 64}) {
      std::vector<double> own(std::size_t(map.owned()) * std::size_t(bs));
      for (index_t l = 0; l < map.owned(); ++l)
        for (int c = 0; c < bs; ++c) own[std::size_t(l) * std::size_t(bs) + std::size_t(c)] = value_of(map.global(l), c);
      std::vector<double> ghost(std::size_t(map.ghosts()) * std::size_t(bs), std::nan(""));
      HaloExchange ex(comm, plan, bs);
      ex.start(own.data(), ghost.data());
      ex.finish();
      for (index_t k = 0; k < map.ghosts(); ++k)
        for (int c = 0; c < bs; ++c)
          ASSERT_EQ(ghost[std::size_t(k) * std::size_t(bs) + std::size_t(c)], value_of(map.ghost_globals()[std::size_t(k)], c))
              << "round " << round << " bs " << bs << " ghost " << k;
      EXPECT_EQ(ex.bytes_sent(), 8.0 * double(plan.sent()) * bs);
    }
  }
}

TEST(Halo, BadMapsAreRefused)
{
  const CommPtr comm = world_communicator();
  const int me = comm->rank();
  const auto mine_all = [&](gindex_t) { return me; };
  const std::vector<gindex_t> needed = {5};
  EXPECT_THROW(IndexMap({3, 1}, {}, mine_all, me), std::invalid_argument);     // not ascending
  EXPECT_THROW(IndexMap({1, 3}, needed, mine_all, me), std::invalid_argument);  // claims 5 but does not own it
  const std::vector<gindex_t> far = {-7};
  EXPECT_THROW(IndexMap({0}, far, [](gindex_t) { return -1; }, me), std::invalid_argument);  // no owner
}

}  // namespace
}  // namespace blockres::dist
