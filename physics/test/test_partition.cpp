// The Cartesian partition of the active cells (issue 33): every active cell owned once, the boxes tile
// the grid, balance on active cells within about one plane (row, layer) per level, determinism, ranks = 1
// as the identity, the process grid choice (Pz = 1 first, no avoidable empty rank) and the procs override.
#include "linalg/test/random_matrix.hpp"
#include "physics/partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

using namespace blockres;
using namespace blockres::physics;

namespace {

// An nx x ny x nz grid of unit cells, constant permeability; porosity 0 marks a cell inactive.
Grid make_grid(int nx, int ny, int nz, const std::vector<double>& porosity)
{
  GridSpec g;
  g.nx = nx, g.ny = ny, g.nz = nz;
  g.dx.assign(std::size_t(nx), 10.0), g.dy.assign(std::size_t(ny), 10.0), g.dz.assign(std::size_t(nz), 2.0);
  RockSpec r;
  r.porosity = porosity;
  const std::size_t n = std::size_t(nx) * ny * nz;
  r.kx.assign(n, 1e-13), r.ky.assign(n, 1e-13), r.kz.assign(n, 1e-14);
  return Grid(g, r);
}

Grid full_grid(int nx, int ny, int nz)
{
  return make_grid(nx, ny, nz, std::vector<double>(std::size_t(nx) * ny * nz, 0.2));
}

// Each cell inactive with probability p_inactive, and whole i-planes, j-rows or k-layers switched off with
// probability p_plane each; at least one active cell.
Grid random_grid(int nx, int ny, int nz, double p_inactive, double p_plane)
{
  const std::size_t n = std::size_t(nx) * ny * nz;
  std::vector<double> phi(n);
  for (auto& p : phi) p = test::uniform(0, 1) < p_inactive ? 0.0 : test::uniform(0.1, 0.3);
  std::vector<bool> off_i(static_cast<std::size_t>(nx)), off_j(static_cast<std::size_t>(ny)),
      off_k(static_cast<std::size_t>(nz));
  for (int i = 0; i < nx; ++i) off_i[i] = test::uniform(0, 1) < p_plane;
  for (int j = 0; j < ny; ++j) off_j[j] = test::uniform(0, 1) < p_plane;
  for (int k = 0; k < nz; ++k) off_k[k] = test::uniform(0, 1) < p_plane;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        if (off_i[i] || off_j[j] || off_k[k]) phi[i + std::size_t(nx) * (j + std::size_t(ny) * k)] = 0.0;
  phi[test::rng()() % n] = 0.2;
  return make_grid(nx, ny, nz, phi);
}

int random_int(int lo, int hi) { return lo + int(test::rng()() % std::uint64_t(hi - lo + 1)); }

bool fits(const Grid& g, int ranks)
{
  for (int px = 1; px <= std::min(ranks, g.nx()); ++px)
    for (int py = 1; py <= std::min(ranks, g.ny()); ++py)
      if (ranks % (px * py) == 0 && ranks / (px * py) <= g.nz()) return true;
  return false;
}

bool in_box(const Partition::Box& b, int i, int j, int k)
{
  return b.lo[0] <= i && i < b.hi[0] && b.lo[1] <= j && j < b.hi[1] && b.lo[2] <= k && k < b.hi[2];
}

long long active_in(const Grid& g, std::array<int, 3> lo, std::array<int, 3> hi)
{
  long long c = 0;
  for (int k = lo[2]; k < hi[2]; ++k)
    for (int j = lo[1]; j < hi[1]; ++j)
      for (int i = lo[0]; i < hi[0]; ++i) c += g.active_index(g.global_index(i, j, k)) >= 0;
  return c;
}

// The invariants of any partition of g over `ranks`.
void check_partition(const Grid& g, int ranks, const Partition& p)
{
  const auto& P = p.procs;
  ASSERT_EQ(p.ranks, ranks);
  ASSERT_EQ(P[0] * P[1] * P[2], ranks);
  EXPECT_LE(P[0], g.nx());
  EXPECT_LE(P[1], g.ny());
  EXPECT_LE(P[2], g.nz());
  ASSERT_EQ(p.owner.size(), std::size_t(g.num_active()));
  ASSERT_EQ(p.boxes.size(), std::size_t(ranks));
  // The boxes tile the grid; every active cell's owner is the rank whose box holds it.
  long long volume = 0;
  for (const auto& b : p.boxes) {
    for (int d = 0; d < 3; ++d) ASSERT_LT(b.lo[d], b.hi[d]);
    volume += 1LL * (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]);
  }
  EXPECT_EQ(volume, 1LL * g.nx() * g.ny() * g.nz());
  for (index_t a = 0; a < g.num_active(); ++a) {
    const index_t c = g.global_of_active(a);
    const int i = c % g.nx(), j = (c / g.nx()) % g.ny(), k = c / (g.nx() * g.ny());
    ASSERT_GE(p.owner[a], 0);
    ASSERT_LT(p.owner[a], ranks);
    int holders = 0;
    for (const auto& b : p.boxes) holders += in_box(b, i, j, k);
    ASSERT_EQ(holders, 1) << "cell " << i << "," << j << "," << k;
    ASSERT_TRUE(in_box(p.boxes[p.owner[a]], i, j, k));
  }
  // owned(r): ascending, the rank's cells; together every active cell once.
  std::vector<int> seen(std::size_t(g.num_active()), 0);
  for (int r = 0; r < ranks; ++r) {
    const std::vector<index_t> mine = p.owned(r);
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    EXPECT_EQ(mine.size(), std::size_t(active_in(g, p.boxes[r].lo, p.boxes[r].hi)));
    for (const index_t a : mine) {
      ASSERT_EQ(p.owner[a], r);
      ++seen[a];
    }
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
  // Rank = px + Px (py + Py pz): the boxes are the nested cuts, x slabs first.
  for (int pz = 0; pz < P[2]; ++pz)
    for (int py = 0; py < P[1]; ++py)
      for (int px = 0; px < P[0]; ++px) {
        const auto& b = p.boxes[px + P[0] * (py + P[1] * pz)];
        const auto& bxy = p.boxes[px + P[0] * py];  // pz = 0 of the same (px, py)
        EXPECT_EQ(b.lo[0], px == 0 ? 0 : p.boxes[px - 1].hi[0]);  // the x cuts are global
        EXPECT_EQ(b.lo[0], p.boxes[px].lo[0]);
        EXPECT_EQ(b.lo[1], bxy.lo[1]);                             // the y cuts are per x slab
        EXPECT_EQ(b.hi[1], bxy.hi[1]);
      }
}

// Balance: a part's active count is within wz + wy / Pz + wx / (Py Pz) of its share, wx the largest
// active count of one i-plane, wy of one j-row inside an x slab, wz of one k-layer inside a column box.
void check_balance(const Grid& g, const Partition& p)
{
  const auto& P = p.procs;
  long long wx = 0, wy = 0, wz = 0;
  for (int i = 0; i < g.nx(); ++i) wx = std::max(wx, active_in(g, {i, 0, 0}, {i + 1, g.ny(), g.nz()}));
  for (const auto& b : p.boxes) {
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      wy = std::max(wy, active_in(g, {b.lo[0], j, 0}, {b.hi[0], j + 1, g.nz()}));
    for (int k = b.lo[2]; k < b.hi[2]; ++k)
      wz = std::max(wz, active_in(g, {b.lo[0], b.lo[1], k}, {b.hi[0], b.hi[1], k + 1}));
  }
  const double tol = double(wz) + double(wy) / P[2] + double(wx) / (P[1] * P[2]);
  const double share = double(g.num_active()) / p.ranks;
  std::vector<std::size_t> sizes;
  for (int r = 0; r < p.ranks; ++r) sizes.push_back(p.owned(r).size());
  const auto [mn, mx] = std::minmax_element(sizes.begin(), sizes.end());
  EXPECT_LE(double(*mx) - share, tol + 1e-9) << "wx " << wx << " wy " << wy << " wz " << wz;
  EXPECT_LE(share - double(*mn), tol + 1e-9) << "wx " << wx << " wy " << wy << " wz " << wz;
  EXPECT_LE(double(*mx - *mn), 2 * tol + 1e-9);
}

std::string error_of(const Grid& g, int ranks, const PartitionSpec& spec = {})
{
  try {
    cartesian_partition(g, ranks, spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Partition, RandomGridsInvariantsBalanceDeterminism)
{
  for (int trial = 0; trial < 60; ++trial) {
    const int nx = random_int(1, 24), ny = random_int(1, 16), nz = random_int(1, 8);
    const double p_inactive = trial % 3 == 0 ? 0.0 : test::uniform(0.0, 0.6);
    const double p_plane = trial % 4 == 0 ? test::uniform(0.0, 0.3) : 0.0;
    const Grid g = random_grid(nx, ny, nz, p_inactive, p_plane);
    std::vector<int> rank_counts;
    for (int r = 1; r <= std::min<int>(g.num_active(), 40); ++r)
      if (fits(g, r)) rank_counts.push_back(r);
    const int ranks = rank_counts[test::rng()() % rank_counts.size()];
    SCOPED_TRACE(testing::Message() << nx << "x" << ny << "x" << nz << " grid, " << g.num_active()
                                    << " active cells, " << ranks << " ranks");
    const Partition p = cartesian_partition(g, ranks);
    check_partition(g, ranks, p);
    check_balance(g, p);
    const Partition q = cartesian_partition(g, ranks);
    EXPECT_EQ(p.procs, q.procs);
    EXPECT_EQ(p.owner, q.owner);
    // Pz = 1 whenever the x-y plane takes every rank and no empty rank comes of it.
    if (p.procs[2] > 1) {
      for (int px = 1; px <= std::min(ranks, nx); ++px)
        if (ranks % px == 0 && ranks / px <= ny) {
          const Partition flat = cartesian_partition(g, ranks, PartitionSpec{{px, ranks / px, 1}});
          int empty = 0;
          for (int r = 0; r < ranks; ++r) empty += flat.owned(r).empty();
          EXPECT_GT(empty, 0) << "Px " << px << " Pz 1 fits without an empty rank";
        }
    }
  }
}

TEST(Partition, OneRankIsTheIdentity)
{
  const Grid g = random_grid(random_int(1, 12), random_int(1, 12), random_int(1, 6), 0.3, 0.0);
  const Partition p = cartesian_partition(g, 1);
  EXPECT_EQ(p.procs, (std::array<int, 3>{1, 1, 1}));
  EXPECT_EQ(p.owner, std::vector<int>(std::size_t(g.num_active()), 0));
  std::vector<index_t> all(static_cast<std::size_t>(g.num_active()));
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(p.owned(0), all);
  check_partition(g, 1, p);
}

TEST(Partition, LineOfHundredCellsInThreeSlabs)
{
  // 100 cells, cuts nearest 33.3 and 66.7: planes [0, 33), [33, 67), [67, 100).
  const Grid g = full_grid(100, 1, 1);
  const Partition p = cartesian_partition(g, 3);
  EXPECT_EQ(p.procs, (std::array<int, 3>{3, 1, 1}));
  for (index_t a = 0; a < 100; ++a) EXPECT_EQ(p.owner[a], a < 33 ? 0 : a < 67 ? 1 : 2) << a;
  check_partition(g, 3, p);
}

TEST(Partition, BalancedOnActiveCellsNotVolume)
{
  // 20 x 4 x 2: the planes i < 10 have a quarter of their cells active, the rest all. Two ranks cut x near
  // the active median (i = 14 or 15), not at i = 10.
  std::vector<double> phi(20 * 4 * 2, 0.2);
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 10; ++i)
        if ((j + k) % 4 != 0) phi[i + 20 * (j + 4 * k)] = 0.0;
  const Grid g = make_grid(20, 4, 2, phi);
  ASSERT_EQ(g.num_active(), 10 * 2 + 10 * 8);  // (j + k) % 4 == 0 for 2 of the 8 (j, k)
  const Partition p = cartesian_partition(g, 2);
  EXPECT_EQ(p.procs, (std::array<int, 3>{2, 1, 1}));  // cut surface 8 < 40 (y)
  EXPECT_EQ(p.owned(0).size(), 20 + 8 * 4u);           // cut at i = 14: 52 and 48 (50 is between)
  EXPECT_EQ(p.owned(1).size(), 8 * 6u);
  check_partition(g, 2, p);
  check_balance(g, p);
  // Random fields with a quarter of the cells active on one side.
  for (int trial = 0; trial < 10; ++trial) {
    const int nx = random_int(8, 30), ny = random_int(2, 10), nz = random_int(1, 5);
    std::vector<double> f(std::size_t(nx) * ny * nz, 0.2);
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx / 2; ++i)
          if (test::uniform(0, 1) < 0.75) f[i + std::size_t(nx) * (j + std::size_t(ny) * k)] = 0.0;
    const Grid h = make_grid(nx, ny, nz, f);
    const int ranks = random_int(2, std::min(nx, 8));
    const Partition q = cartesian_partition(h, ranks);
    check_partition(h, ranks, q);
    check_balance(h, q);
  }
}

TEST(Partition, PrefersOneLayerOfRanks)
{
  // 4 x 4 x 8, 4 ranks: 1x1x4 has the smallest cut surface (48) but Pz = 1 comes first: 2x2x1 (64).
  const Grid g = full_grid(4, 4, 8);
  const Partition p = cartesian_partition(g, 4);
  EXPECT_EQ(p.procs, (std::array<int, 3>{2, 2, 1}));
  check_partition(g, 4, p);
  check_balance(g, p);
  // 2 x 1 x 8, 4 ranks: Px Py <= 2, so Pz > 1; 1x1x4 (cut 6) beats 2x1x2 (cut 10).
  const Grid h = full_grid(2, 1, 8);
  const Partition q = cartesian_partition(h, 4);
  EXPECT_EQ(q.procs, (std::array<int, 3>{1, 1, 4}));
  check_partition(h, 4, q);
  // 3 x 3 x 1, 3 ranks: the cut surfaces tie (6); the smaller Px wins, y slabs of whole rows.
  const Partition r = cartesian_partition(full_grid(3, 3, 1), 3);
  EXPECT_EQ(r.procs, (std::array<int, 3>{1, 3, 1}));
  EXPECT_EQ(r.owner, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
}

TEST(Partition, AvoidsEmptyRanksWhenItCan)
{
  // 4 x 3 x 1 with the planes i = 1, 2 inactive, 3 ranks: 3x1x1 (cut 6) would leave a rank without active
  // cells (2 active planes), so 1x3x1 (cut 8): two active cells each.
  std::vector<double> phi(12, 0.2);
  for (int j = 0; j < 3; ++j) phi[1 + 4 * j] = phi[2 + 4 * j] = 0.0;
  const Grid g = make_grid(4, 3, 1, phi);
  const Partition p = cartesian_partition(g, 3);
  EXPECT_EQ(p.procs, (std::array<int, 3>{1, 3, 1}));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(p.owned(r).size(), 2u);
  check_partition(g, 3, p);
  // Inside a dimension: planes [5, 5, 100, 0] in 3 slabs give 5 | 5 | 100 (the closest cuts alone would
  // leave the last plane, inactive, alone).
  std::vector<double> f(4 * 110, 0.0);  // 4 x 110 x 1: plane i has w[i] active cells
  const int w[4] = {5, 5, 100, 0};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < w[i]; ++j) f[i + 4 * j] = 0.2;
  const Grid h = make_grid(4, 110, 1, f);
  const Partition q = cartesian_partition(h, 3, PartitionSpec{{3, 1, 1}});
  EXPECT_EQ(q.owned(0).size(), 5u);
  EXPECT_EQ(q.owned(1).size(), 5u);
  EXPECT_EQ(q.owned(2).size(), 100u);
  check_partition(h, 3, q);
}

TEST(Partition, EmptyRankOnlyWhenUnavoidable)
{
  // 1 x 3 x 2 with the row j = 1 inactive: 4 active cells, 3 ranks. Only 1x3x1 fits, and two rows hold
  // active cells: the middle rank owns none; its box is the inactive row.
  std::vector<double> phi(6, 0.2);
  phi[1] = phi[4] = 0.0;
  const Grid g = make_grid(1, 3, 2, phi);
  const Partition p = cartesian_partition(g, 3);
  EXPECT_EQ(p.procs, (std::array<int, 3>{1, 3, 1}));
  EXPECT_EQ(p.owned(0).size(), 2u);
  EXPECT_TRUE(p.owned(1).empty());
  EXPECT_EQ(p.owned(2).size(), 2u);
  EXPECT_EQ(p.boxes[1].lo, (std::array<int, 3>{0, 1, 0}));
  EXPECT_EQ(p.boxes[1].hi, (std::array<int, 3>{1, 2, 2}));
  check_partition(g, 3, p);
  // An inactive layer and a user's Pz = 2: the lower rank gets it, and nothing else.
  std::vector<double> f(2 * 2 * 2, 0.2);
  for (int c = 4; c < 8; ++c) f[c] = 0.0;
  const Grid h = make_grid(2, 2, 2, f);
  const Partition q = cartesian_partition(h, 2, PartitionSpec{{1, 1, 2}});
  EXPECT_EQ(q.owned(0).size(), 4u);
  EXPECT_TRUE(q.owned(1).empty());
  check_partition(h, 2, q);
  // Left to choose, the partitioner splits the active layer.
  const Partition s = cartesian_partition(h, 2);
  EXPECT_EQ(s.procs[2], 1);
  EXPECT_EQ(s.owned(0).size(), 2u);
  EXPECT_EQ(s.owned(1).size(), 2u);
}

TEST(Partition, ProcsOverride)
{
  const Grid g = random_grid(random_int(4, 10), random_int(4, 10), random_int(4, 6), 0.2, 0.0);
  const Partition p = cartesian_partition(g, 8, PartitionSpec{{2, 1, 4}});
  EXPECT_EQ(p.procs, (std::array<int, 3>{2, 1, 4}));
  check_partition(g, 8, p);
  check_balance(g, p);
  // One axis fixed, the others chosen.
  const Partition q = cartesian_partition(g, 8, PartitionSpec{{0, 4, 0}});
  EXPECT_EQ(q.procs[1], 4);
  EXPECT_EQ(q.procs[2], 1);
  check_partition(g, 8, q);
}

TEST(Partition, Errors)
{
  const Grid g = full_grid(4, 3, 2);  // 24 active cells
  const auto names_partition = [](const std::string& msg) { return msg.rfind("partition:", 0) == 0; };
  EXPECT_TRUE(names_partition(error_of(g, 0)));
  EXPECT_TRUE(names_partition(error_of(g, -2)));
  EXPECT_TRUE(names_partition(error_of(g, 25)));          // more ranks than active cells
  EXPECT_NE(error_of(g, 4, PartitionSpec{{2, 2, 2}}).find("for 4 ranks"), std::string::npos);  // 8 != 4
  EXPECT_NE(error_of(g, 5, PartitionSpec{{5, 1, 1}}).find("along x"), std::string::npos);      // 5 > nx
  EXPECT_NE(error_of(g, 6, PartitionSpec{{1, 1, 6}}).find("along z"), std::string::npos);      // 6 > nz
  EXPECT_TRUE(names_partition(error_of(g, 4, PartitionSpec{{-1, 2, 2}})));
  EXPECT_TRUE(names_partition(error_of(g, 4, PartitionSpec{{0, 0, 3}})));   // 3 does not divide 4
  EXPECT_TRUE(names_partition(error_of(g, 13, PartitionSpec{})));           // 13 > every dimension
  EXPECT_TRUE(names_partition(error_of(g, 7, PartitionSpec{})));            // 7 > every dimension
  // Fewer ranks than active cells is enforced on active cells, not on the grid's volume.
  std::vector<double> phi(24, 0.0);
  phi[0] = phi[23] = 0.2;
  EXPECT_TRUE(names_partition(error_of(make_grid(4, 3, 2, phi), 3)));
  EXPECT_EQ(error_of(make_grid(4, 3, 2, phi), 2), "");
}
