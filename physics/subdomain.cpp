#include "physics/subdomain.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace blockres::physics {

namespace {

// The partition, agreed: a defect throws on every rank (each computes the same partition, so they agree anyway).
Partition agreed_partition(const dist::Communicator& comm, const Grid& whole, const PartitionSpec& spec)
{
  return cartesian_partition(whole, comm.size(), spec);
}

dist::IndexMap cell_map(const dist::Communicator& comm, const Grid& whole, const Partition& p,
                        std::span<const index_t> well_cells)
{
  const int me = comm.rank();
  std::vector<dist::gindex_t> owned;
  for (const index_t a : p.owned(me)) owned.push_back(a);
  std::vector<dist::gindex_t> needed(well_cells.begin(), well_cells.end());
  if (comm.size() > 1) {
    const Grid::CellFaces cf = whole.cell_faces();
    const auto& faces = whole.faces();
    for (const dist::gindex_t a : owned)
      for (index_t q = cf.ptr[a]; q < cf.ptr[a + 1]; ++q) {
        const auto& f = faces[std::size_t(cf.face[q])];
        needed.push_back(f.a + f.b - a);
      }
  }
  const auto owner = [&p](dist::gindex_t g) { return p.owner[std::size_t(g)]; };
  return dist::IndexMap(std::move(owned), needed, owner, me);
}

}  // namespace

std::vector<index_t> well_cells(const Grid& whole, std::span<const WellGeometry* const> wells)
{
  std::vector<index_t> cells;
  for (const WellGeometry* w : wells)
    for (int k = w->k_top; k <= w->k_bottom; ++k) {
      if (w->i < 0 || w->i >= whole.nx() || w->j < 0 || w->j >= whole.ny() || k < 0 || k >= whole.nz()) continue;
      const index_t a = whole.active_index(whole.global_index(w->i, w->j, k));
      if (a >= 0) cells.push_back(a);
    }
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  return cells;
}

Subdomain::Subdomain(dist::CommPtr comm, const Grid& whole, const PartitionSpec& spec,
                     std::span<const index_t> well_cells)
    : comm_(std::move(comm)),
      whole_(whole),
      partition_(agreed_partition(*comm_, whole, spec)),
      map_(cell_map(*comm_, whole, partition_, comm_->size() > 1 ? well_cells : std::span<const index_t>{})),
      plan_(dist::HaloPlan::build(*comm_, map_))
{
  if (comm_->size() > 1) {
    std::vector<index_t> cells(std::size_t(map_.size()));
    for (index_t l = 0; l < map_.size(); ++l) cells[std::size_t(l)] = index_t(map_.global(l));
    part_ = std::make_unique<Grid>(whole, cells, map_.owned(), comm_);
  }
}

Subdomain::~Subdomain() = default;

std::vector<double> Subdomain::local_part(std::span<const double> whole, int bs) const
{
  if (whole.size() != std::size_t(whole_.num_active()) * std::size_t(bs))
    throw std::invalid_argument(fmt::format("state of {} values for {} active cells of {} unknowns", whole.size(),
                                            whole_.num_active(), bs));
  if (!part_) return {whole.begin(), whole.end()};
  std::vector<double> x(std::size_t(map_.size()) * std::size_t(bs));
  for (index_t l = 0; l < map_.size(); ++l)
    std::copy_n(whole.data() + std::size_t(map_.global(l)) * std::size_t(bs), bs, x.data() + std::size_t(l) * bs);
  return x;
}

std::vector<double> Subdomain::gather(const Vector& x, int bs) const
{
  if (!part_) return x.to_host();
  const std::size_t nb = std::size_t(bs);
  std::vector<double> mine(std::size_t(map_.owned()) * nb);
  if (!mine.empty()) x.exec().copy_to_host(mine.data(), x.data(), mine.size() * sizeof(double));
  const std::vector<double> all = comm_->gatherv_root(mine);
  if (comm_->rank() != 0) return {};
  // Rank r's owned cells are its partition cells in ascending order: put each block where it belongs.
  std::vector<double> whole(std::size_t(whole_.num_active()) * nb);
  std::vector<std::size_t> next(std::size_t(comm_->size()) + 1, 0);  // where each rank's blocks start in `all`
  for (const int r : partition_.owner) ++next[std::size_t(r) + 1];
  for (std::size_t r = 1; r < next.size(); ++r) next[r] += next[r - 1];
  if (all.size() != next.back() * nb) throw std::logic_error("Subdomain::gather: ranks sent inconsistent counts");
  for (std::size_t a = 0; a < partition_.owner.size(); ++a)
    std::copy_n(all.data() + next[std::size_t(partition_.owner[a])]++ * nb, nb, whole.data() + a * nb);
  return whole;
}

void Subdomain::exchange(Vector& x, int bs) const
{
  if (!part_) return;
  if (x.size() != size64_t(map_.size()) * bs)
    throw std::invalid_argument("Subdomain::exchange: x must hold the owned and ghost cells' entries");
  if (!channel_ || channel_bs_ != bs) {
    channel_ = std::make_unique<dist::HaloChannel>(x.exec_ptr(), comm_, plan_, bs);
    channel_bs_ = bs;
  }
  channel_->start(x.data(), x.data() + size64_t(map_.owned()) * bs);
  channel_->finish();
}

std::string Subdomain::describe(int bs) const
{
  const auto& P = partition_;
  std::vector<long long> own(std::size_t(comm_->size()), 0);
  for (const int r : P.owner) ++own[std::size_t(r)];
  const auto [lo, hi] = std::minmax_element(own.begin(), own.end());
  const long long ghosts = comm_->sum(static_cast<long long>(map_.ghosts()));
  const double sent = comm_->sum(halo_bytes(bs));
  return fmt::format("decomposition: {} ranks, process grid {}x{}x{} (Cartesian, balanced on active cells); owned "
                     "cells per rank {} to {} (imbalance {:.3f}); {} ghost cells in all (face neighbours and well "
                     "completions); a state halo moves {:.3g} MB",
                     comm_->size(), P.procs[0], P.procs[1], P.procs[2], *lo, *hi,
                     *lo > 0 ? double(*hi) * double(own.size()) / double(whole_.num_active()) : 0.0, ghosts, sent / 1e6);
}

}  // namespace blockres::physics
