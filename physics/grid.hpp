// Cartesian grid: active cells, cell geometry, pore volumes and TPFA transmissibilities.
#pragma once

#include "kernels/common.hpp"
#include "linalg/array.hpp"
#include "linalg/distributed/communicator.hpp"
#include "physics/spec.hpp"

#include <span>
#include <vector>

namespace blockres::physics {

class Grid {
 public:
  struct Face {
    index_t a, b;   // active cell indices, a < b
    double trans;   // [m^3]
  };

  // Throws std::invalid_argument when sizes or values are inconsistent.
  Grid(const GridSpec& grid, const RockSpec& rock);
  // One rank's part of `whole` in a distributed run (issue 33): the cells `cells` (active indices of whole, no
  // repeats), numbered in that order; the first `owned` of them are the rank's own, the rest its ghost cells (the
  // neighbours of its cells and what its wells reach). Its faces are those of whole between two of its cells, so an
  // owned cell with all its neighbours among `cells` has all its faces. Reductions over the owned cells (the models'
  // norms, quantities in place) go through comm. Throws std::invalid_argument when a cell is repeated or not active.
  Grid(const Grid& whole, std::span<const index_t> cells, index_t owned, dist::CommPtr comm);

  int nx() const { return spec_.nx; }
  int ny() const { return spec_.ny; }
  int nz() const { return spec_.nz; }
  index_t num_cells() const { return static_cast<index_t>(active_.size()); }  // all cells
  index_t num_active() const { return static_cast<index_t>(global_.size()); }
  // Distributed: this rank's cells are [0, num_owned()), the rest ghosts; the whole grid's active cells and the
  // communicator of the ranks. A grid of its own (one rank): all active cells, the serial communicator.
  index_t num_owned() const { return owned_ < 0 ? num_active() : owned_; }
  index_t whole_active() const { return whole_active_ < 0 ? num_active() : whole_active_; }
  const dist::Communicator& comm() const { return comm_ ? *comm_ : serial_; }
  // The three together, for what outlives the grid (a model's reductions).
  struct Ownership {
    index_t owned = 0, whole = 0;
    dist::CommPtr comm;
  };
  Ownership ownership() const { return {num_owned(), whole_active(), comm_ ? comm_ : dist::serial_communicator()}; }
  index_t global_index(int i, int j, int k) const { return i + spec_.nx * (j + spec_.ny * k); }
  // -1 for inactive cells
  index_t active_index(index_t global) const { return active_[global]; }
  index_t global_of_active(index_t a) const { return global_[a]; }
  const std::vector<index_t>& active_map() const { return active_; }
  const std::vector<index_t>& global_map() const { return global_; }

  const GridSpec& spec() const { return spec_; }
  double dx(int i) const { return spec_.dx[i]; }
  double dy(int j) const { return spec_.dy[j]; }
  double dz(int k) const { return spec_.dz[k]; }
  // Cell-centre depth of layer k [m].
  double layer_depth(int k) const { return layer_depth_[k]; }

  // Per active cell
  const std::vector<double>& depth() const { return depth_; }
  const std::vector<double>& pore_volume_ref() const { return pv_ref_; }
  const HostBuffer<Face>& faces() const { return faces_; }

  // The faces of every active cell as flat lists (no per-cell allocation, millions of cells):
  // cell i's are face[ptr[i] .. ptr[i + 1]), in the order of faces() (a face is listed for both
  // its cells). The neighbour across face f of cell i is faces()[f].a + faces()[f].b - i.
  struct CellFaces {
    HostBuffer<index_t> ptr, face;
  };
  CellFaces cell_faces() const;

 private:
  GridSpec spec_;
  std::vector<index_t> active_, global_;
  std::vector<double> layer_depth_, depth_, pv_ref_;
  HostBuffer<Face> faces_;  // sorted by a (then toward x+, y+, z+)
  std::vector<index_t> face_start_;  // cell a's own faces (its x+, y+, z+ ones): face_start_[a] .. [a + 1]
  // A rank's part (the constructor from a whole grid): owned cells, the whole's active cells, the ranks.
  index_t owned_ = -1, whole_active_ = -1;
  dist::CommPtr comm_;
  static const dist::SerialCommunicator serial_;
};

// Two-point transmissibility between two cells sharing a face of area `area`, with cell
// lengths l1, l2 and permeabilities k1, k2 normal to the face: 1 / (l1/(2 k1 A) + l2/(2 k2 A)).
// Zero when either permeability is zero.
double tpfa_transmissibility(double l1, double k1, double l2, double k2, double area);

// Log-normal field exp(mean_log + std_log * g) on an nx*ny*nz grid. g is white Gaussian noise
// smoothed by three passes of a moving average of half-width round(correlation_length / 2)
// cells along each axis (close to a Gaussian kernel; 0 leaves the noise uncorrelated), then
// rescaled to sample mean 0 and standard deviation 1. Reproducible from `seed` on every
// platform (own generator and transforms, not std::normal_distribution).
std::vector<double> lognormal_field(int nx, int ny, int nz, double mean_log, double std_log,
                                    double correlation_length, unsigned long long seed);
// Its two halves: g itself (the standardised smoothed noise, a function of the grid, the correlation
// length and the seed alone: properties drawn with the same seed share it), and exp(mean_log + std_log * g).
// Both run on the OpenMP threads and give the same values for any thread count.
std::vector<double> standard_normal_field(int nx, int ny, int nz, double correlation_length, unsigned long long seed);
std::vector<double> lognormal_field(const std::vector<double>& g, double mean_log, double std_log);

}  // namespace blockres::physics
