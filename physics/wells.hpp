// Well geometry shared by every model: a vertical well completed in a range of layers of one
// column, its completions in active cells and their well indices (Peaceman or given), and the
// executor arrays every model's well kernels read.
#pragma once

#include "linalg/array.hpp"
#include "linalg/bsr_matrix.hpp"
#include "physics/grid.hpp"
#include "physics/model.hpp"
#include "physics/spec.hpp"
#include "physics/well_controls.hpp"

#include <optional>
#include <span>
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
// The same from the grid's cell faces when the caller has them (rows built in parallel).
BsrPattern jacobian_pattern(const Grid& grid, const Grid::CellFaces& cf, const std::vector<WellInfo>& wells);

// Each cell's connections as the models' assembly reads them, in the order of cf (the order the
// assembly sums its fluxes): connection q of cell i, cf.ptr[i] <= q < cf.ptr[i + 1], goes to
// cell[q] through face cf.face[q] with transmissibility trans[q] and Jacobian block block[q]
// (row i, column cell[q]); diag_block[i] is the block (i, i). Built per cell in parallel.
// Block storage maps (Model::set_block_storage): throws std::invalid_argument unless storage is a permutation of
// 0 .. nnzb - 1 (what a model's set_block_storage checks first).
// moved: whether the model's blocks were moved already (std::logic_error then).
void check_block_storage(std::span<const index_t> storage, index_t nnzb, bool moved);
// positions[i] <- storage[positions[i]] for every entry (block positions of a model's pattern), in place: the
// array keeps its address, so kernel views of it stay valid.
void move_block_positions(Array<index_t>& positions, std::span<const index_t> storage);

struct CellConnections {
  HostBuffer<index_t> cell, block, diag_block;
  HostBuffer<double> trans;
};
CellConnections cell_connections(const Grid& grid, const Grid::CellFaces& cf, const BsrPattern& pattern);

// The completions of every well on the executor, as the models' well kernels read them: completion
// c of well w is comp_ptr[w] <= c < comp_ptr[w + 1] (cell, well index, depth); a rate-controlled
// well's coupling blocks (cell of c, cell of c2) for every pair of its completions at
// couple_block[couple_ptr[w] + (c - c0) m + (c2 - c0)], m its completion count.
struct WellConnectivity {
  Array<index_t> comp_ptr, comp_cell, couple_ptr, couple_block;
  Array<double> comp_wi, comp_depth;
  WellConnectivity() = default;
  WellConnectivity(const ExecPtr& exec, const std::vector<WellInfo>& wells, const BsrPattern& pattern);
  // couple_block through a block storage map (Model::set_block_storage), in place.
  void move_blocks(std::span<const index_t> storage) { move_block_positions(couple_block, storage); }
  index_t completions() const { return static_cast<index_t>(comp_cell.size()); }
};

// The executor arrays every model's well kernels read, whatever the model: each well's kind code,
// control code, rate target, BHP (setpoint or limit) and reference depth, the head density the
// kernels write once per step, the completions, and the kernels' scratch (per completion) and
// outputs (per well), those two and the head density zero at the start. A model adds its own
// per-well data (oil_water's phase weights, multicomponent's injected composition) beside it.
struct WellArrays {
  // The well kernels' WellKindCode (the models check that they are these).
  enum KindCode : int { injector = 0, producer = 1 };
  // What every model's well spec says of a well's control (WellSpec, MulticomponentWellSpec).
  struct Control {
    WellKind kind = WellKind::producer;
    WellControlMode mode = WellControlMode::bhp;
    double rate = 0.0, bhp = 0.0;
  };

  int nwell = 0;
  Array<int> kind;
  WellControls controls;  // the control of every well, switched by the assemblies
  Array<double> target, bhp, ref_depth, head_density;
  WellConnectivity conn;
  Array<double> scratch, out;

  WellArrays() = default;
  // One control per well of `wells` (complete_wells()), pattern the Jacobian's.
  WellArrays(const ExecPtr& exec, const std::vector<Control>& control, const std::vector<WellInfo>& wells,
             const BsrPattern& pattern, int scratch_per_completion, int out_per_well);
  // The same from a model's well specs (anything with kind, control, rate and bhp).
  template <class Spec>
  WellArrays(const ExecPtr& exec, const std::vector<Spec>& specs, const std::vector<WellInfo>& wells,
             const BsrPattern& pattern, int scratch_per_completion, int out_per_well)
      : WellArrays(exec, controls_of(specs), wells, pattern, scratch_per_completion, out_per_well)
  {
  }

  // The fields every model's kernel view of the wells has, by the same names (oil_water's
  // WellsView, multicomponent::Wells); the model sets its own.
  template <class View>
  void fill_view(View& v)
  {
    v.nwell = nwell;
    v.kind = kind.data();
    v.control = controls.data();
    v.target = target.data();
    v.bhp_value = bhp.data();
    v.ref_depth = ref_depth.data();
    v.head_density = head_density.data();
    v.comp_ptr = conn.comp_ptr.data();
    v.comp_cell = conn.comp_cell.data();
    v.comp_wi = conn.comp_wi.data();
    v.comp_depth = conn.comp_depth.data();
    v.couple_ptr = conn.couple_ptr.data();
    v.couple_block = conn.couple_block.data();
    v.scratch = scratch.data();
    v.out = out.data();
  }

 private:
  template <class Spec>
  static std::vector<Control> controls_of(const std::vector<Spec>& specs)
  {
    std::vector<Control> c;
    c.reserve(specs.size());
    for (const auto& s : specs) c.push_back({s.kind, s.control, s.rate, s.bhp});
    return c;
  }
};

}  // namespace blockres::physics
