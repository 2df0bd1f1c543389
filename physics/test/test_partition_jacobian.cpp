// The Jacobian of shipped decks, partitioned (issue 33, survey §3.3-3.4): the Grid, wells and block pattern built as
// the run builds them (load_deck, Grid, the registry's model), the active cells split over 1, 2 and 3 ranks by
// cartesian_partition (the default process grid, which keeps every vertical well on one rank, and a forced z split,
// which makes the rate-controlled wells span ranks), and each rank's owned rows as a DistBsrMatrix. Checked: the
// model's pattern is the cell, its face neighbours and, for a rate-controlled well, every completion of the well; the
// ghosts of every rank are exactly those columns beyond its rows (so a spanning well's completions on other ranks are
// ghosts, some beyond the one-layer halo, even from ranks that share no face with this one), and its halo talks to
// those ranks; every owned row's diagonal block is in diag(), with its values; y = A x against the serial product
// of the whole matrix (every rank builds it from per-block seeds): bit for bit on one rank, within the rounding of
// the reordered row sums on several.
#include "linalg/distributed/dist_bsr_matrix.hpp"
#include "linalg/distributed/test/dist_test_util.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/io/deck.hpp"
#include "physics/grid.hpp"
#include "physics/model_registry.hpp"
#include "physics/partition.hpp"
#include "physics/wells.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace blockres {
namespace {

using dist::gindex_t;
namespace fs = std::filesystem;

// CI-sized verification cases (deck + overrides): oil_water (bs 2) 10x10x3 with a rate-controlled injector and a
// BHP producer; multicomponent nc = 8 (bs 8) 10x10x3 with a rate-controlled injector. Every well spans all layers.
const char* const kCases[] = {"quarter_five_spot_gmres_ilu_ci.toml", "multicomponent_8_ci.toml"};

// A verification case loaded as `blockres verify` runs it: the deck with the case's overrides, the grid, the model.
struct Loaded {
  RunConfig cfg;
  physics::Grid grid;
  std::unique_ptr<physics::Model> model;

  static RunConfig config(const fs::path& case_file)
  {
    const toml::table c = toml::parse_file(case_file.string());
    const auto deck = c["deck"].value<std::string>();
    if (!deck) throw std::invalid_argument(case_file.string() + ": no deck");
    std::vector<std::string> overrides;
    if (const toml::array* a = c["overrides"].as_array())
      for (const auto& o : *a) overrides.push_back(o.value<std::string>().value());
    return load_deck((case_file.parent_path() / *deck).lexically_normal().string(), overrides);
  }
  explicit Loaded(const fs::path& case_file)
      : cfg(config(case_file)),
        grid(cfg.grid, cfg.rock),
        model(physics::model_entry(cfg.model).create(Executor::create_cpu(), grid, cfg.rock, cfg.grid.gravity,
                                                     *cfg.model_input))
  {
  }
};

// Block k's values from its own seed, so any rank can make any block.
void block_values(std::uint64_t seed, index_t k, int bs, double* out)
{
  std::mt19937_64 g(seed ^ (std::uint64_t(k) * 0x9e3779b97f4a7c15ull));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int e = 0; e < bs * bs; ++e) out[e] = u(g);
}

// Active cell a's active face neighbours (the 6-point stencil). The shipped decks have positive permeability in
// every cell, so every pair of active neighbours has a face (Grid drops those with zero transmissibility).
std::vector<index_t> stencil(const physics::Grid& grid, index_t a)
{
  const index_t c = grid.global_of_active(a);
  const int nx = grid.nx(), ny = grid.ny(), nz = grid.nz();
  const int i = int(c % nx), j = int((c / nx) % ny), k = int(c / (index_t(nx) * ny));
  std::vector<index_t> out;
  const auto add = [&](int ii, int jj, int kk) {
    if (ii < 0 || jj < 0 || kk < 0 || ii >= nx || jj >= ny || kk >= nz) return;
    if (const index_t b = grid.active_index(grid.global_index(ii, jj, kk)); b >= 0) out.push_back(b);
  };
  add(i - 1, j, k), add(i + 1, j, k), add(i, j - 1, k), add(i, j + 1, k), add(i, j, k - 1), add(i, j, k + 1);
  return out;
}

// rate_well[a]: the rate-controlled well completing active cell a, -1 if none.
std::vector<int> rate_wells(const physics::Model& m)
{
  std::vector<int> w(std::size_t(m.num_cells()), -1);
  for (std::size_t n = 0; n < m.wells().size(); ++n)
    if (m.wells()[n].rate_control)
      for (const auto& c : m.wells()[n].completions) w[std::size_t(c.cell)] = int(n);
  return w;
}

// On every rank the same: the deck's pattern is the models' one, and what it should be.
void check_pattern(const Loaded& L)
{
  const physics::Model& m = *L.model;
  const BsrPattern& p = m.pattern();
  const index_t n = m.num_cells();
  ASSERT_EQ(n, L.grid.num_active());
  ASSERT_EQ(p.nrows, n);
  ASSERT_EQ(p.ncols, n);
  // The shared builder, from the model's own completions (complete_wells), gives the model's pattern.
  const BsrPattern q = physics::jacobian_pattern(L.grid, m.wells());
  EXPECT_EQ(q.row_ptr, p.row_ptr);
  EXPECT_EQ(q.col_ind, p.col_ind);
  // Row a: a, its stencil, and every completion of the rate-controlled well completing a.
  const std::vector<int> rw = rate_wells(m);
  int bad = 0;
  for (index_t a = 0; a < n && bad < 5; ++a) {
    std::vector<index_t> want = stencil(L.grid, a);
    want.push_back(a);
    if (rw[std::size_t(a)] >= 0)
      for (const auto& c : m.wells()[std::size_t(rw[std::size_t(a)])].completions) want.push_back(c.cell);
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    const std::vector<index_t> have(p.col_ind.begin() + p.row_ptr[a], p.col_ind.begin() + p.row_ptr[a + 1]);
    if (have != want) {
      ADD_FAILURE() << "row " << a << ": " << fmt::format("{}", fmt::join(have, " ")) << " against "
                    << fmt::format("{}", fmt::join(want, " "));
      ++bad;
    }
  }
  // Every completion pair of a rate-controlled well is coupled; a BHP-controlled well couples only face neighbours.
  for (const auto& w : m.wells())
    for (const auto& c : w.completions)
      for (const auto& c2 : w.completions) {
        const bool neighbours = c.cell == c2.cell || std::abs(c.k - c2.k) == 1;
        EXPECT_EQ(p.find(c.cell, c2.cell) >= 0, w.rate_control || neighbours)
            << w.name << " completions in layers " << c.k << " and " << c2.k;
      }
}

struct Failures {  // ends a long list of failures early, without leaving a rank out of a collective
  int n = 0;
  bool more() const { return n < 5; }
};

// One partition of one deck.
void check_partition(const Loaded& L, const physics::Partition& part, bool forced_z, std::uint64_t seed,
                     const char* name)
{
  const dist::CommPtr comm = dist::world_communicator();
  const ExecPtr exec = Executor::create_cpu();
  const int P = comm->size(), me = comm->rank();
  const physics::Model& m = *L.model;
  const BsrPattern& p = m.pattern();
  const int bs = m.block_size();
  const index_t n = m.num_cells();
  const std::size_t bb = std::size_t(bs) * std::size_t(bs);
  const std::string what = fmt::format("{} {} split {}x{}x{}", name, forced_z ? "forced z" : "default", part.procs[0],
                                       part.procs[1], part.procs[2]);
  SCOPED_TRACE(what);
  const std::vector<int> rw = rate_wells(m);

  // ---- the partition
  ASSERT_EQ(part.owner.size(), std::size_t(n));
  ASSERT_EQ(part.ranks, P);
  if (forced_z) {
    EXPECT_EQ(part.procs, (std::array<int, 3>{1, 1, P}));
  } else {
    EXPECT_EQ(part.procs[2], 1);  // the default keeps the columns whole ...
    for (const auto& w : m.wells())  // ... so every well is on one rank
      for (const auto& c : w.completions)
        EXPECT_EQ(part.owner[std::size_t(c.cell)], part.owner[std::size_t(w.completions.front().cell)]) << w.name;
  }
  const auto owner_of = [&](gindex_t g) { return part.owner[std::size_t(g)]; };

  // ---- the serial matrix, x and y0 (the same on every rank)
  std::mt19937_64 g(seed);
  const std::uint64_t vseed = g();
  BsrMatrix A(exec, bs, p);
  std::vector<double> av(std::size_t(p.nnzb()) * bb);
  for (index_t k = 0; k < p.nnzb(); ++k) block_values(vseed, k, bs, av.data() + std::size_t(k) * bb);
  A.values().copy_from_host(av);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> xg(std::size_t(n) * std::size_t(bs)), y0(xg.size());
  for (double& v : xg) v = u(g);
  for (double& v : y0) v = u(g);

  // ---- this rank's rows, global columns
  const std::vector<index_t> mine = part.owned(me);
  std::vector<gindex_t> owned(mine.begin(), mine.end()), gcol;
  std::vector<index_t> rp = {0};
  std::vector<double> lv, lx, ly0;
  for (const index_t i : mine) {
    for (index_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
      gcol.push_back(p.col_ind[std::size_t(k)]);
      lv.insert(lv.end(), av.begin() + std::ptrdiff_t(std::size_t(k) * bb), av.begin() + std::ptrdiff_t(std::size_t(k + 1) * bb));
    }
    rp.push_back(index_t(gcol.size()));
    lx.insert(lx.end(), xg.begin() + std::ptrdiff_t(i) * bs, xg.begin() + std::ptrdiff_t(i + 1) * bs);
    ly0.insert(ly0.end(), y0.begin() + std::ptrdiff_t(i) * bs, y0.begin() + std::ptrdiff_t(i + 1) * bs);
  }
  dist::DistBsrMatrix D(exec, comm, bs, owned, rp, gcol, owner_of);
  D.set_values(lv);
  const dist::IndexMap& map = D.map();

  // ---- the ghosts: exactly the stencil neighbours and rate-well completions of the owned rows on other ranks,
  // grouped by owner (ascending), ascending within an owner
  std::set<std::pair<int, gindex_t>> want;  // (owner, global)
  std::set<gindex_t> halo1;                 // the one-layer halo: stencil neighbours only
  for (const index_t i : mine) {
    for (const index_t b : stencil(L.grid, i))
      if (part.owner[std::size_t(b)] != me) want.emplace(part.owner[std::size_t(b)], b), halo1.insert(b);
    if (rw[std::size_t(i)] >= 0)
      for (const auto& c : m.wells()[std::size_t(rw[std::size_t(i)])].completions)
        if (part.owner[std::size_t(c.cell)] != me) want.emplace(part.owner[std::size_t(c.cell)], c.cell);
  }
  EXPECT_EQ(map.owned(), index_t(mine.size()));
  EXPECT_TRUE(std::equal(owned.begin(), owned.end(), map.owned_globals().begin(), map.owned_globals().end()));
  using Ghosts = std::vector<std::pair<int, gindex_t>>;
  Ghosts have;
  for (index_t l = 0; l < map.ghosts(); ++l)
    have.emplace_back(map.ghost_owner()[std::size_t(l)], map.ghost_globals()[std::size_t(l)]);
  EXPECT_EQ(have, Ghosts(want.begin(), want.end()));
  EXPECT_EQ(D.halo().ghosts(), map.ghosts());
  if (P == 1) {
    EXPECT_EQ(map.ghosts(), 0);
  } else {
    EXPECT_GT(map.ghosts(), 0);  // every rank of a Cartesian split has a neighbour
  }
  EXPECT_EQ(D.offd().has_value(), map.ghosts() > 0);

  // ---- a rate-controlled well spanning ranks: on a rank with one of its completions, every other completion is a
  // ghost (owned by the completion's rank) and the halo receives from and sends to that rank
  long long beyond = 0;  // ghosts beyond the one-layer halo (only wells make them)
  for (const auto& [o, gid] : want) beyond += halo1.count(gid) ? 0 : 1;
  long long spanning = 0;
  for (const auto& w : m.wells()) {
    std::set<int> ranks;
    for (const auto& c : w.completions) ranks.insert(part.owner[std::size_t(c.cell)]);
    if (ranks.size() > 1) ++spanning;
    if (!ranks.count(me)) continue;
    for (const auto& c : w.completions) {
      const int o = part.owner[std::size_t(c.cell)];
      if (o == me) continue;
      const index_t l = map.local(c.cell);
      const bool face = halo1.count(c.cell) > 0;
      if (!w.rate_control) {  // a BHP-controlled well couples nothing beyond the faces
        EXPECT_EQ(l >= 0, face) << w.name << " completion in layer " << c.k << " (rank " << o << ")";
        continue;
      }
      EXPECT_GE(l, map.owned()) << w.name << " completion in layer " << c.k << " (rank " << o << ") is no ghost";
      if (l >= map.owned()) {
        EXPECT_EQ(map.ghost_owner()[std::size_t(l - map.owned())], o);
      }
      EXPECT_NE(std::find(D.halo().recv_rank.begin(), D.halo().recv_rank.end(), o), D.halo().recv_rank.end())
          << w.name << ": no halo from rank " << o;
      EXPECT_NE(std::find(D.halo().send_rank.begin(), D.halo().send_rank.end(), o), D.halo().send_rank.end())
          << w.name << ": no halo to rank " << o;
    }
  }
  const long long beyond_all = comm->sum(beyond);
  if (forced_z && P > 1) {
    EXPECT_GT(spanning, 0);  // the forced z split cuts the wells' columns
    if (L.grid.nz() > P) {
      EXPECT_GT(beyond_all, 0);  // some rank holds a completion two layers off another's
    }
  }
  if (!forced_z) {
    EXPECT_EQ(spanning, 0);
    EXPECT_EQ(beyond_all, 0);
  }
  {
    // One line per partition: the ghosts (of them beyond the one-layer halo) per rank.
    const std::vector<gindex_t> mine_counts = {gindex_t(map.owned()), gindex_t(map.ghosts()), gindex_t(beyond)};
    const std::vector<gindex_t> all = comm->allgatherv(std::span<const gindex_t>(mine_counts));
    if (me == 0) {
      std::string s;
      for (int r = 0; r < P; ++r)
        s += fmt::format(" r{}: {} owned, {} ghosts ({} beyond the faces);", r, all[std::size_t(3 * r)],
                         all[std::size_t(3 * r + 1)], all[std::size_t(3 * r + 2)]);
      std::printf("%s, bs %d, %d rows, %d blocks:%s\n", what.c_str(), bs, int(n), int(p.nnzb()), s.c_str());
    }
  }

  // ---- every owned row's diagonal block is in diag(), with the row's values
  const BsrMatrix& Dd = D.diag();
  EXPECT_EQ(Dd.nrows(), map.owned());
  EXPECT_EQ(Dd.ncols(), map.owned());
  EXPECT_EQ(Dd.nnzb() + (D.offd() ? D.offd()->nnzb() : 0), index_t(gcol.size()));
  const std::vector<index_t> dpos = Dd.diag_pos().to_host(), dcol = Dd.col_ind().to_host();
  const std::vector<double> dval = Dd.values().to_host();
  ASSERT_EQ(dpos.size(), mine.size()) << "diag() without a full diagonal";
  Failures f;
  for (std::size_t r = 0; r < mine.size() && f.more(); ++r) {
    const index_t i = mine[r];
    if (dcol[std::size_t(dpos[r])] != index_t(r)) {
      ADD_FAILURE() << "row " << i << ": diag_pos is not the diagonal";
      ++f.n;
      continue;
    }
    const index_t k = p.find(i, i);
    if (!std::equal(dval.begin() + std::ptrdiff_t(std::size_t(dpos[r]) * bb),
                    dval.begin() + std::ptrdiff_t(std::size_t(dpos[r] + 1) * bb),
                    av.begin() + std::ptrdiff_t(std::size_t(k) * bb))) {
      ADD_FAILURE() << "row " << i << ": diag()'s diagonal block differs from the serial one";
      ++f.n;
    }
  }

  // ---- y = alpha A x + beta y against the serial product
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
    for (std::size_t li = 0; li < mine.size() && f.more(); ++li) {
      const index_t i = mine[li];
      for (int r = 0; r < bs && f.more(); ++r) {
        const double want_v = yref[std::size_t(i) * std::size_t(bs) + std::size_t(r)];
        const double have_v = got[li * std::size_t(bs) + std::size_t(r)];
        if (P == 1) {
          if (std::bit_cast<std::uint64_t>(have_v) != std::bit_cast<std::uint64_t>(want_v)) {
            ADD_FAILURE() << "row " << i << "." << r << ": " << have_v << " against " << want_v << " (one rank: bitwise)";
            ++f.n;
          }
          continue;
        }
        if (!(std::abs(have_v - want_v) <= dist::test::row_bound(p.row_ptr, p.col_ind, av, bs, i, r, alpha, xg, beta, y0))) {
          ADD_FAILURE() << "row " << i << "." << r << " (alpha " << alpha << ", beta " << beta << "): " << have_v
                        << " against " << want_v;
          ++f.n;
        }
      }
    }
  }
}

TEST(PartitionJacobian, ShippedDecksOnTheRanks)
{
  const dist::CommPtr comm = dist::world_communicator();
  const int P = comm->size();
  const std::uint64_t seed = dist::test::shared_seed(*comm, "PartitionJacobian");
  std::uint64_t round = 0;
  for (const char* name : kCases) {
    SCOPED_TRACE(name);
    const Loaded L(fs::path(BLOCKRES_SOURCE_DIR) / "verification" / "cases" / name);
    check_pattern(L);
    // At least one rate-controlled well with completions in several layers (the coupling the z split cuts).
    bool multi = false;
    for (const auto& w : L.model->wells()) multi = multi || (w.rate_control && w.completions.size() > 1);
    EXPECT_TRUE(multi) << "no rate-controlled well with several completions";
    ASSERT_GE(L.grid.nz(), P) << "the forced z split needs a layer per rank";
    for (const bool forced_z : {false, true}) {
      physics::PartitionSpec spec;
      if (forced_z) spec.procs = {1, 1, P};
      check_partition(L, physics::cartesian_partition(L.grid, P, spec), forced_z, seed + round++, name);
    }
  }
}

}  // namespace
}  // namespace blockres
