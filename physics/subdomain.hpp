// One rank's part of a distributed run (issue 33): the cells it owns (a Partition's), its ghost cells, the grid part
// its model is built on, and the halo of the state vector. With one rank every piece is the serial one: the whole
// grid, no ghost, an exchange that does nothing.
//
// The model of a rank works on its cells and ghost cells in this numbering: owned cells first in ascending global
// order (so one rank's numbering is the serial one), then the ghosts grouped by owning rank (dist::IndexMap). The
// ghosts are the face neighbours of the owned cells and every cell any well completes, on every rank: each rank then
// evaluates every well (BHP, rates, control switches) from the same state with the same arithmetic, so all ranks
// agree on every well without a message of their own; a well's report comes from any rank. The rows of the ghost
// cells the model assembles are incomplete (faces to cells beyond the halo are missing) and are never used: only
// the first owned() rows enter the distributed Jacobian.
#pragma once

#include "linalg/distributed/halo_channel.hpp"
#include "linalg/distributed/index_map.hpp"
#include "linalg/vector_ops.hpp"
#include "physics/grid.hpp"
#include "physics/partition.hpp"

#include <memory>
#include <span>
#include <vector>

namespace blockres::physics {

class Subdomain {
 public:
  // Collective over comm. whole: the whole grid (every rank has it); well_cells: the active cells of the whole grid
  // that some well completes. Throws std::invalid_argument when the partition cannot be made (on every rank).
  Subdomain(dist::CommPtr comm, const Grid& whole, const PartitionSpec& spec, std::span<const index_t> well_cells);
  ~Subdomain();
  Subdomain(const Subdomain&) = delete;
  Subdomain& operator=(const Subdomain&) = delete;

  bool distributed() const { return comm_->size() > 1; }
  const dist::Communicator& comm() const { return *comm_; }
  const dist::CommPtr& comm_ptr() const { return comm_; }
  const Partition& partition() const { return partition_; }
  // The grid the rank's model is built on: the whole grid on one rank.
  const Grid& grid() const { return part_ ? *part_ : whole_; }
  const Grid& whole() const { return whole_; }
  const dist::IndexMap& cells() const { return map_; }  // local cell -> whole active index
  index_t owned() const { return map_.owned(); }
  index_t ghosts() const { return map_.ghosts(); }
  // Owner of a whole-grid active cell.
  int owner(dist::gindex_t cell) const { return partition_.owner[std::size_t(cell)]; }

  // The rank's entries (owned, then ghosts; bs per cell) of a whole-grid vector in active order (a restart state).
  std::vector<double> local_part(std::span<const double> whole, int bs) const;
  // Collective: the owned entries of every rank in whole-grid active order, on rank 0 (empty elsewhere). x: bs
  // per local cell, executor memory.
  std::vector<double> gather(const Vector& x, int bs) const;
  // Collective: the ghost entries of x (bs per local cell, executor memory) from their owners.
  void exchange(Vector& x, int bs) const;
  // Bytes one exchange of a bs-wide state sends from this rank.
  double halo_bytes(int bs) const { return 8.0 * double(plan_.sent()) * bs; }

  // One line for the run log: ranks, process grid, cells per rank, ghosts, what the halo moves.
  std::string describe(int bs) const;

 private:
  dist::CommPtr comm_;
  const Grid& whole_;
  Partition partition_;
  dist::IndexMap map_;
  dist::HaloPlan plan_;
  std::unique_ptr<Grid> part_;  // distributed only
  mutable std::unique_ptr<dist::HaloChannel> channel_;
  mutable int channel_bs_ = 0;
};

// The active cells of the whole grid the wells complete (as complete_wells finds them).
std::vector<index_t> well_cells(const Grid& whole, std::span<const WellGeometry* const> wells);

}  // namespace blockres::physics
