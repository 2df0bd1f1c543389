// Well geometry shared by every model: a vertical well completed in a range of layers of one
// column, its completions in active cells and their well indices (Peaceman or given).
#pragma once

#include "linalg/array.hpp"
#include "linalg/bsr_matrix.hpp"
#include "physics/grid.hpp"
#include "physics/model.hpp"

#include <optional>
#include <string>
#include <vector>

namespace blockres::physics {

// Peaceman well index of a vertical completion in a cell of size dx x dy x dz:
// WI = 2 pi sqrt(kx ky) dz / (ln(r_o / r_w) + skin). Throws std::invalid_argument when
// ln(r_o/r_w) + skin <= 0 (naming the well and the 0-based layer k).
double peaceman_well_index(double kx, double ky, double dx, double dy, double dz, double rw, double skin,
                           const std::string& well, int k);

// Completions of each well in active cells (inactive cells are skipped, as OPM does), with their
// well indices and depths, and the BHP reference depth. Throws std::invalid_argument for a well
// without an active completion or two wells completing the same cell.
std::vector<WellInfo> complete_wells(const Grid& grid, const RockSpec& rock, const std::vector<const WellGeometry*>& wells,
                                     const std::vector<bool>& rate_control);

// The block pattern every model's Jacobian has: each active cell, its TPFA neighbours (grid faces)
// and, for wells under rate control, every pair of completed cells (the implicit BHP couples them);
// columns sorted.
BsrPattern jacobian_pattern(const Grid& grid, const std::vector<WellInfo>& wells);

// The completions of every well on the executor, as the models' well kernels read them: completion
// c of well w is comp_ptr[w] <= c < comp_ptr[w + 1] (cell, well index, depth); a rate-controlled
// well's coupling blocks (cell of c, cell of c2) for every pair of its completions at
// couple_block[couple_ptr[w] + (c - c0) m + (c2 - c0)], m its completion count.
struct WellConnectivity {
  Array<index_t> comp_ptr, comp_cell, couple_ptr, couple_block;
  Array<double> comp_wi, comp_depth;
  WellConnectivity() = default;
  WellConnectivity(const ExecPtr& exec, const std::vector<WellInfo>& wells, const BsrPattern& pattern);
  index_t completions() const { return static_cast<index_t>(comp_cell.size()); }
};

}  // namespace blockres::physics
