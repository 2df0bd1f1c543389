// Domain partition of the active cells over the ranks of a distributed run (issue 33): which rank owns
// each active cell. MPI-free: every rank computes the same partition from the replicated grid.
#pragma once

#include "kernels/common.hpp"
#include "physics/grid.hpp"

#include <array>
#include <string>
#include <vector>

namespace blockres::physics {

// What the run asks of the partitioner (deck `[parallel] partition`, `--partition PxxPyxPz`).
struct PartitionSpec {
  // Parts along x, y, z. 0: chosen by the partitioner; a positive count fixes that axis (all three
  // positive: exactly this process grid).
  std::array<int, 3> procs{0, 0, 0};
};

// "2x1x1" -> procs {2, 1, 1} (0: the partitioner's choice for that axis); "" -> all chosen. Throws
// std::invalid_argument naming `what` (the option or key) for anything else.
PartitionSpec parse_partition_spec(const std::string& text, const std::string& what);

struct Partition {
  // A rank's rectilinear box of cells: lo <= (i, j, k) < hi. The boxes tile the whole grid.
  struct Box {
    std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};
  };

  int ranks = 1;
  std::array<int, 3> procs{1, 1, 1};  // Px, Py, Pz used; rank = px + Px * (py + Py * pz)
  std::vector<int> owner;             // per active cell (index = active index): the owning rank
  std::vector<Box> boxes;             // per rank

  // The rank's active cells, ascending (its local numbering is this order). O(active cells).
  std::vector<index_t> owned(int rank) const;
};

// Cartesian partition of the active cells into `ranks` boxes, balanced on active cells.
//
// Process grid: Px * Py * Pz == ranks with Px <= nx, Py <= ny, Pz <= nz (and the axes spec.procs fixes).
// Among those, in this order: the fewest ranks without an active cell (only inactive cells can force
// one), Pz == 1 (a vertical well stays on one rank), the smallest cut surface
// ny*nz*(Px-1) + nx*nz*(Py-1) + nx*ny*(Pz-1), then the smallest Px, then the smallest Py (y cuts keep the
// rows of nx cells, contiguous in global order, whole).
//
// Cuts: x into Px slabs of whole i-planes at the prefix sums of the active cells per plane (cut p as close
// as possible to p/Px of the active cells, ties to the lower plane), every slab at least one plane and, when
// there are at least Px planes with active cells, at least one of those. Inside each x-slab y the same way
// over the slab's active cells per j-row, inside each (x, y) column box z the same way per k-layer. So a
// part is within about one plane (row, layer) of active cells of its share. A rank has no active cell only
// when no Px*Py*Pz with the other constraints avoids it (e.g. 3 ranks and 2 layers, one of them inactive,
// on a 1x1x3 grid): its box then holds inactive cells only.
//
// Deterministic (sequential, integer arithmetic): every rank gets the same partition. ranks == 1 gives
// owner 0 everywhere. Throws std::invalid_argument (message starting "partition:") when ranks < 1, ranks
// exceeds the active cells, a spec.procs count is negative or exceeds its grid dimension, the fixed counts
// do not multiply to ranks, or no process grid fits.
Partition cartesian_partition(const Grid& grid, int ranks, const PartitionSpec& spec = {});

}  // namespace blockres::physics
