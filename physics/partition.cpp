// Cartesian partition of the active cells: the process grid, the nested balanced cuts, the owners.
#include "physics/partition.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace blockres::physics {

PartitionSpec parse_partition_spec(const std::string& text, const std::string& what)
{
  PartitionSpec spec;
  if (text.empty()) return spec;
  int n[3] = {-1, -1, -1};
  char tail = 0;
  if (std::sscanf(text.c_str(), "%dx%dx%d%c", &n[0], &n[1], &n[2], &tail) != 3 || n[0] < 0 || n[1] < 0 || n[2] < 0)
    throw std::invalid_argument(fmt::format("{} {}: expected PxxPyxPz, e.g. 2x1x1 (0: the partitioner's choice for "
                                            "that axis)", what, text));
  spec.procs = {n[0], n[1], n[2]};
  return spec;
}

std::vector<index_t> Partition::owned(int rank) const
{
  std::vector<index_t> cells;
  for (std::size_t a = 0; a < owner.size(); ++a)
    if (owner[a] == rank) cells.push_back(static_cast<index_t>(a));
  return cells;
}

namespace {

// Active-cell counts of boxes in O(1): a summed-volume table S(i, j, k) = active cells in
// [0, i) x [0, j) x [0, k), (nx+1)(ny+1)(nz+1) entries (4 bytes a cell, only while partitioning).
class ActiveCounts {
 public:
  explicit ActiveCounts(const Grid& g) : nx_(g.nx()), ny_(g.ny()), nz_(g.nz())
  {
    s_.assign(std::size_t(nx_ + 1) * (ny_ + 1) * (nz_ + 1), 0);
    for (int k = 0; k < nz_; ++k)
      for (int j = 0; j < ny_; ++j)
        for (int i = 0; i < nx_; ++i) {
          const long long v = (g.active_index(g.global_index(i, j, k)) >= 0) + at(i, j + 1, k + 1) +
                              at(i + 1, j, k + 1) + at(i + 1, j + 1, k) - at(i, j, k + 1) - at(i, j + 1, k) -
                              at(i + 1, j, k) + at(i, j, k);
          s_[pos(i + 1, j + 1, k + 1)] = index_t(v);
        }
  }
  // Active cells in [lo, hi) along each axis.
  long long box(std::array<int, 3> lo, std::array<int, 3> hi) const
  {
    return at(hi[0], hi[1], hi[2]) - at(lo[0], hi[1], hi[2]) - at(hi[0], lo[1], hi[2]) - at(hi[0], hi[1], lo[2]) +
           at(lo[0], lo[1], hi[2]) + at(lo[0], hi[1], lo[2]) + at(hi[0], lo[1], lo[2]) - at(lo[0], lo[1], lo[2]);
  }

 private:
  std::size_t pos(int i, int j, int k) const
  {
    return std::size_t(i) + std::size_t(nx_ + 1) * (j + std::size_t(ny_ + 1) * k);
  }
  long long at(int i, int j, int k) const { return s_[pos(i, j, k)]; }
  int nx_, ny_, nz_;
  std::vector<index_t> s_;
};

// Boundaries 0 = b[0] < b[1] < ... < b[parts] = w.size() of `parts` consecutive ranges of the weights
// (active cells per plane), each cut b[p] as close as possible to p/parts of the total (the first such
// b on ties). Every range gets at least one entry and, when at least `parts` weights are positive, at
// least one positive one. Needs parts <= w.size().
std::vector<int> split_balanced(const std::vector<long long>& w, int parts)
{
  const int n = static_cast<int>(w.size());
  std::vector<long long> pre(std::size_t(n) + 1, 0);
  std::vector<int> full;  // the entries with a positive weight
  for (int e = 0; e < n; ++e) {
    pre[e + 1] = pre[e] + w[e];
    if (w[e] > 0) full.push_back(e);
  }
  const long long total = pre[n];
  const int m = static_cast<int>(full.size());
  std::vector<int> b(std::size_t(parts) + 1, 0);
  b[parts] = n;
  for (int p = 1; p < parts; ++p) {
    int lo = b[p - 1] + 1, hi = n - (parts - p);
    if (m >= parts) {
      // Range p-1 keeps the first positive entry at or after its start; the rest keeps parts - p of them.
      const int q = int(std::lower_bound(full.begin(), full.end(), b[p - 1]) - full.begin());
      lo = std::max(lo, full[q] + 1);
      hi = std::min(hi, full[m - (parts - p)]);
    }
    // Deviation from the target p/parts of the total, scaled by parts (integers only).
    const auto dev = [&](int c) { return std::llabs(parts * pre[c] - p * total); };
    // The first cut at or above the target, and the first one of the plateau just below it.
    int up = lo;
    while (up < hi && parts * pre[up] < p * total) ++up;
    int best = up;
    if (up > lo) {
      int down = up - 1;
      while (down > lo && pre[down - 1] == pre[down]) --down;
      if (dev(down) <= dev(up)) best = down;
    }
    b[p] = best;
  }
  return b;
}

// The nested cuts for the process grid P: one box per rank (rank = px + Px * (py + Py * pz)).
std::vector<Partition::Box> nested_boxes(const Grid& g, const ActiveCounts& count, std::array<int, 3> P)
{
  const int nx = g.nx(), ny = g.ny(), nz = g.nz();
  std::vector<Partition::Box> boxes(static_cast<std::size_t>(P[0]) * P[1] * P[2]);
  std::vector<long long> w(static_cast<std::size_t>(nx));
  for (int i = 0; i < nx; ++i) w[i] = count.box({i, 0, 0}, {i + 1, ny, nz});
  const std::vector<int> bx = split_balanced(w, P[0]);
  for (int px = 0; px < P[0]; ++px) {
    w.resize(std::size_t(ny));
    for (int j = 0; j < ny; ++j) w[j] = count.box({bx[px], j, 0}, {bx[px + 1], j + 1, nz});
    const std::vector<int> by = split_balanced(w, P[1]);
    for (int py = 0; py < P[1]; ++py) {
      w.resize(std::size_t(nz));
      for (int k = 0; k < nz; ++k) w[k] = count.box({bx[px], by[py], k}, {bx[px + 1], by[py + 1], k + 1});
      const std::vector<int> bz = split_balanced(w, P[2]);
      for (int pz = 0; pz < P[2]; ++pz)
        boxes[px + std::size_t(P[0]) * (py + std::size_t(P[1]) * pz)] =
            Partition::Box{{bx[px], by[py], bz[pz]}, {bx[px + 1], by[py + 1], bz[pz + 1]}};
    }
  }
  return boxes;
}

}  // namespace

Partition cartesian_partition(const Grid& grid, int ranks, const PartitionSpec& spec)
{
  const std::array<int, 3> n{grid.nx(), grid.ny(), grid.nz()};
  const char* axis = "xyz";
  if (ranks < 1) throw std::invalid_argument(fmt::format("partition: ranks must be >= 1 (got {})", ranks));
  if (ranks > grid.num_active())
    throw std::invalid_argument(fmt::format("partition: {} ranks for {} active cells (one active cell a rank at least)",
                                            ranks, grid.num_active()));
  const auto& fixed = spec.procs;
  for (int d = 0; d < 3; ++d) {
    if (fixed[d] < 0)
      throw std::invalid_argument(fmt::format("partition: procs along {} must be >= 0 (got {})", axis[d], fixed[d]));
    if (fixed[d] > n[d])
      throw std::invalid_argument(fmt::format("partition: {} parts along {} exceed the grid's {} cells ({}x{}x{} grid)",
                                              fixed[d], axis[d], n[d], n[0], n[1], n[2]));
  }
  if (fixed[0] > 0 && fixed[1] > 0 && fixed[2] > 0 && 1LL * fixed[0] * fixed[1] * fixed[2] != ranks)
    throw std::invalid_argument(fmt::format("partition: procs {}x{}x{} = {} parts for {} ranks", fixed[0], fixed[1],
                                            fixed[2], 1LL * fixed[0] * fixed[1] * fixed[2], ranks));

  Partition part;
  part.ranks = ranks;
  if (ranks == 1) {
    part.owner.assign(std::size_t(grid.num_active()), 0);
    part.boxes = {Partition::Box{{0, 0, 0}, n}};
    return part;
  }

  // Every process grid that fits, ranked by (ranks without active cells, Pz != 1, cut surface, Px, Py).
  const ActiveCounts count(grid);
  bool found = false;
  std::tuple<long long, int, long long, int, int> best_key{};
  for (int px = 1; px <= std::min(ranks, n[0]); ++px) {
    if (ranks % px || (fixed[0] && fixed[0] != px)) continue;
    for (int py = 1; py <= std::min(ranks / px, n[1]); ++py) {
      if ((ranks / px) % py || (fixed[1] && fixed[1] != py)) continue;
      const int pz = ranks / px / py;
      if (pz > n[2] || (fixed[2] && fixed[2] != pz)) continue;
      std::vector<Partition::Box> boxes = nested_boxes(grid, count, {px, py, pz});
      long long empty = 0;
      for (const auto& b : boxes) empty += count.box(b.lo, b.hi) == 0;
      const long long cut = 1LL * n[1] * n[2] * (px - 1) + 1LL * n[0] * n[2] * (py - 1) + 1LL * n[0] * n[1] * (pz - 1);
      const auto key = std::make_tuple(empty, int(pz != 1), cut, px, py);
      if (!found || key < best_key) {
        found = true, best_key = key;
        part.procs = {px, py, pz};
        part.boxes = std::move(boxes);
      }
    }
  }
  if (!found) {
    const std::string with = fixed[0] || fixed[1] || fixed[2]
                                 ? fmt::format(" with procs {}x{}x{} (0: free)", fixed[0], fixed[1], fixed[2])
                                 : std::string();
    throw std::invalid_argument(fmt::format("partition: no process grid Px*Py*Pz = {} fits the {}x{}x{} grid{}", ranks,
                                            n[0], n[1], n[2], with));
  }

  // Owners from the boxes.
  part.owner.assign(std::size_t(grid.num_active()), -1);
  for (int r = 0; r < ranks; ++r) {
    const auto& b = part.boxes[r];
    for (int k = b.lo[2]; k < b.hi[2]; ++k)
      for (int j = b.lo[1]; j < b.hi[1]; ++j)
        for (int i = b.lo[0]; i < b.hi[0]; ++i) {
          const index_t a = grid.active_index(grid.global_index(i, j, k));
          if (a >= 0) part.owner[a] = r;
        }
  }
  return part;
}

}  // namespace blockres::physics
