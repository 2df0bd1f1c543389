// The distributed layer on one rank without MPI: the serial communicator's reductions return their input, it has
// no peers, a run without a launcher gets it, and a DistBsrMatrix on it is the serial BsrMatrix bit for bit.
#include "linalg/distributed/communicator.hpp"
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>

namespace blockres::dist {
namespace {

TEST(SerialCommunicator, ReductionsReturnTheirInputAndThereAreNoPeers)
{
  const CommPtr c = serial_communicator();
  EXPECT_EQ(c->rank(), 0);
  EXPECT_EQ(c->size(), 1);
  std::vector<double> v = {-0.0, std::nan(""), 3.5};
  c->sum(std::span<double>(v));
  EXPECT_TRUE(std::signbit(v[0]));
  EXPECT_TRUE(std::isnan(v[1]));
  c->max(std::span<double>(v));
  EXPECT_EQ(v[2], 3.5);
  EXPECT_EQ(c->sum(41ll), 41ll);
  EXPECT_FALSE(c->all(false));
  std::vector<int> from;
  const std::vector<gindex_t> send = {4, 5};
  EXPECT_EQ(c->alltoallv(send, std::vector<int>{2}, from), send);
  EXPECT_EQ(from, std::vector<int>{2});
  EXPECT_THROW(c->alltoallv(send, std::vector<int>{1}, from), std::invalid_argument);
  double b = 0;
  EXPECT_THROW(c->isend(&b, 8, 1, 0), std::invalid_argument);
  EXPECT_THROW(c->irecv(&b, 8, 1, 0), std::invalid_argument);
}

TEST(SerialCommunicator, WorldIsSerialWithoutALauncher)
{
  if (launcher_ranks() != 0) GTEST_SKIP() << "started by an MPI launcher";
  EXPECT_EQ(world_communicator()->size(), 1);
  EXPECT_EQ(world_communicator().get(), serial_communicator().get());
}

TEST(DistBsrMatrixSerial, OneRankIsTheSerialProductBitForBit)
{
  const ExecPtr exec = Executor::create_cpu();
  const auto seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int bs : {1, 3, 7, 16}) {
    const index_t n = 1 + index_t(g() % 120);
    BsrPattern p;
    p.nrows = p.ncols = n;
    p.row_ptr = {0};
    std::vector<gindex_t> gcol;
    for (index_t i = 0; i < n; ++i) {
      std::vector<index_t> c = {i};
      for (int k = int(g() % 5); k > 0; --k) c.push_back(index_t(g() % std::uint64_t(n)));
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
      p.col_ind.insert(p.col_ind.end(), c.begin(), c.end());
      gcol.insert(gcol.end(), c.begin(), c.end());
      p.row_ptr.push_back(index_t(p.col_ind.size()));
    }
    std::vector<double> vals(std::size_t(p.nnzb()) * std::size_t(bs * bs)), xh(std::size_t(n) * std::size_t(bs));
    for (double& v : vals) v = u(g);
    for (double& v : xh) v = u(g);
    BsrMatrix A(exec, bs, p);
    A.values().copy_from_host(vals);
    std::vector<gindex_t> owned(static_cast<std::size_t>(n), 0);
    for (index_t i = 0; i < n; ++i) owned[std::size_t(i)] = i;
    DistBsrMatrix D(exec, serial_communicator(), bs, owned, p.row_ptr, gcol, [](gindex_t) { return 0; });
    D.set_values(vals);
    EXPECT_EQ(D.map().ghosts(), 0);
    EXPECT_FALSE(D.offd().has_value());
    EXPECT_EQ(D.halo_bytes(), 0.0);
    const Vector x(exec, std::span<const double>(xh));
    Vector y1(exec, size64_t(n) * bs), y2(exec, size64_t(n) * bs);
    fill(y1, std::nan(""));
    fill(y2, std::nan(""));
    A.apply(0.7, x, 0.0, y1);
    D.apply(0.7, x, 0.0, y2);
    const auto a = y1.to_host(), b = y2.to_host();
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(std::bit_cast<std::uint64_t>(a[i]), std::bit_cast<std::uint64_t>(b[i]));
    EXPECT_THROW(D.set_values(std::span<const double>(vals.data(), vals.size() - 1)), std::invalid_argument);
    Vector shorty(exec, size64_t(n) * bs - 1);
    EXPECT_THROW(D.apply(1.0, x, 0.0, shorty), std::invalid_argument);
  }
}

TEST(DistBsrMatrixSerial, RowsNotAscendingOrNotOwnedAreRefused)
{
  const ExecPtr exec = Executor::create_cpu();
  const auto owner0 = [](gindex_t) { return 0; };
  const std::vector<index_t> rp = {0, 2};
  EXPECT_THROW(DistBsrMatrix(exec, serial_communicator(), 2, {0}, rp, std::vector<gindex_t>{0, 0}, owner0),
               std::invalid_argument);  // a column twice
  EXPECT_THROW(DistBsrMatrix(exec, serial_communicator(), 2, {0}, rp, std::vector<gindex_t>{0, 9}, owner0),
               std::invalid_argument);  // column 9 is "mine" but not owned
  EXPECT_THROW(DistBsrMatrix(exec, serial_communicator(), 2, {0}, std::vector<index_t>{0, 3},
                             std::vector<gindex_t>{0, 1}, owner0),
               std::invalid_argument);  // row_ptr does not match
  EXPECT_THROW(DistBsrMatrix(exec, serial_communicator(), 0, {0}, std::vector<index_t>{0, 1}, std::vector<gindex_t>{0},
                             owner0),
               std::invalid_argument);  // block size
}

}  // namespace
}  // namespace blockres::dist
