// The communicator's reductions on 1, 2 and 3 ranks: the ordered sum is the rank-order sum of the gathered partials,
// bit for bit the same on every rank; NaN wins the maximum; counts, verdicts and signals agree.
#include "linalg/distributed/communicator.hpp"
#include "linalg/distributed/dist_vector_ops.hpp"
#include "linalg/distributed/test/dist_test_util.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace blockres::dist {
namespace {

// Every rank's value of v, gathered (to check that all ranks hold the same bits).
std::vector<double> everyones(const Communicator& c, double v) { return c.allgatherv(std::span<const double>(&v, 1)); }

TEST(DistReductions, OrderedSumIsRankOrderAndIdenticalOnEveryRank)
{
  const CommPtr comm = world_communicator();
  std::mt19937_64 rng(test::shared_seed(*comm, "OrderedSum") + 7919 * std::uint64_t(comm->rank()));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int len : {1, 3, 17}) {
    std::vector<double> v(static_cast<std::size_t>(len));
    for (double& x : v) x = u(rng) * std::ldexp(1.0, int(rng() % 60) - 30);  // wide exponents: order matters
    const std::vector<double> partials = comm->allgatherv(std::span<const double>(v));
    std::vector<double> got = v;
    comm->sum(std::span<double>(got));
    for (int i = 0; i < len; ++i) {
      double want = partials[std::size_t(i)];
      for (int r = 1; r < comm->size(); ++r) want += partials[std::size_t(r) * std::size_t(len) + std::size_t(i)];
      EXPECT_EQ(std::bit_cast<std::uint64_t>(got[std::size_t(i)]), std::bit_cast<std::uint64_t>(want)) << "entry " << i;
      for (double other : everyones(*comm, got[std::size_t(i)]))
        EXPECT_EQ(std::bit_cast<std::uint64_t>(other), std::bit_cast<std::uint64_t>(got[std::size_t(i)]));
    }
  }
  // One rank: the partial itself, -0.0 included (0.0 + -0.0 would flip its sign).
  double z = -0.0;
  z = comm->sum(z);
  if (comm->size() == 1) {
    EXPECT_TRUE(std::signbit(z));
  }
}

TEST(DistReductions, MaxPropagatesNaNAndCountsAgree)
{
  const CommPtr comm = world_communicator();
  const int P = comm->size(), r = comm->rank();
  std::vector<double> v = {double(r), -double(r), r == P - 1 ? std::nan("") : 1.0};
  comm->max(std::span<double>(v));
  EXPECT_EQ(v[0], double(P - 1));
  EXPECT_EQ(v[1], 0.0);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(comm->sum(static_cast<long long>(r) + (1ll << 40)), static_cast<long long>(P) * (1ll << 40) + P * (P - 1) / 2);
  EXPECT_EQ(comm->max(r == 0 ? 15 : 2), 15);  // a signal seen by one rank reaches all
  EXPECT_TRUE(comm->all(true));
  EXPECT_FALSE(comm->all(r != P - 1));
}

TEST(DistReductions, DistributedDotEqualsTheRankOrderSumOfLocalDots)
{
  const CommPtr comm = world_communicator();
  const ExecPtr exec = Executor::create_cpu();
  std::mt19937_64 rng(test::shared_seed(*comm, "DistributedDot") ^ std::uint64_t(comm->rank() + 1));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::size_t n = 1 + rng() % 1000;
  std::vector<double> hx(n), hy(n);
  for (std::size_t i = 0; i < n; ++i) hx[i] = u(rng), hy[i] = u(rng);
  const Vector x(exec, std::span<const double>(hx)), y(exec, std::span<const double>(hy));
  const double local = blockres::dot(x, y);
  const std::vector<double> partials = everyones(*comm, local);
  double want = partials[0];
  for (int r = 1; r < comm->size(); ++r) want += partials[std::size_t(r)];
  EXPECT_EQ(std::bit_cast<std::uint64_t>(dot(*comm, x, y)), std::bit_cast<std::uint64_t>(want));
  const double n2 = norm2(*comm, x);
  if (comm->size() == 1) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(n2), std::bit_cast<std::uint64_t>(blockres::norm2(x)));
  }
  for (double other : everyones(*comm, n2)) EXPECT_EQ(std::bit_cast<std::uint64_t>(other), std::bit_cast<std::uint64_t>(n2));
}

}  // namespace
}  // namespace blockres::dist
