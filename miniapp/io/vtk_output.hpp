// VTK time series of `blockres run` for ParaView: one .vtr per report step and a .pvd collection, written atomically.
//
// Files (beside <name>.h5, same report steps as its /reports rows):
//   <dir>/<name>.pvd                      VTKFile type="Collection": one DataSet per report step,
//                                         timestep = time in days, file = path relative to the .pvd
//   <dir>/<name>_vtk/<name>_NNNN.vtr      vtkRectilinearGrid, XML binary, zlib compressed;
//                                         NNNN = report index (0 = initial state)
// Grid: nx x ny x nz cells in natural order (VTK's cell id = i + nx (j + ny k), as in the HDF5 file).
//   x = cumulative dx from 0, y = cumulative dy from 0 (m);
//   z = depth of the cell faces (m, positive downwards, from `grid.top` at the top face down to
//       top + sum dz): the convention of /grid/depth, whose cell centres lie half-way between these
//       faces. z therefore grows with k and with depth; in ParaView the reservoir shows upside
//       down unless it is flipped (e.g. Transform with scale (1, 1, -1)).
// Cell data (double unless said otherwise):
//   every model cell field                Model::cell_fields() in its order and file unit, those
//                                         kept out of the HDF5 file (in_results = false, e.g.
//                                         oil_water's so) included; the first is the active scalars
//                                         ParaView colours by; NaN in inactive cells, as in the HDF5 file
//   porosity, permx, permy, permz (mD)    the deck's values, inactive cells included
//   active (int32, 0/1), i, j, k (int32, 1-based, as a well's i/j in the deck)
//   vtkGhostType (uint8)                  HIDDENCELL for inactive cells, so ParaView blanks them
// Atomic like ResultsWriter: the .vtr files go to <dir>/<name>_vtk.tmp/ during the run; commit()
// swaps that directory in for <name>_vtk/ and then writes <name>.pvd (through <name>.pvd.tmp), so
// the .pvd appears last and only for a complete run. A writer destroyed without commit() removes
// its staging directory. In a build without VTK (BLOCKRES_VTK=OFF) the writer throws VtkError.
#pragma once

#include "physics/grid.hpp"
#include "physics/model.hpp"
#include "physics/spec.hpp"

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace blockres {

// A VTK file could not be written (the message names the file), or VTK output is not built in.
struct VtkError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether this build writes VTK (CMake option BLOCKRES_VTK).
bool vtk_output_available();

class VtkSeriesWriter {
 public:
  // `grid`, `rock` and `model` must outlive the writer.
  VtkSeriesWriter(const std::filesystem::path& output_dir, const std::string& name, const physics::Grid& grid,
                  const physics::RockSpec& rock, const physics::Model& model);
  ~VtkSeriesWriter();
  VtkSeriesWriter(const VtkSeriesWriter&) = delete;
  VtkSeriesWriter& operator=(const VtkSeriesWriter&) = delete;

  // time [s]; x: host copy of the interleaved state (model.block_size() per active cell), as
  // ResultsWriter::write_report; std::invalid_argument when its size is not that.
  void write_report(double time, const std::vector<double>& x);
  void commit();

  const std::filesystem::path& pvd_path() const { return pvd_; }
  const std::filesystem::path& series_dir() const { return series_dir_; }

 private:
  struct Impl;  // VTK objects; keeps VTK's headers out of every includer
  std::filesystem::path pvd_, series_dir_, staging_dir_;
  std::string name_;
  std::vector<std::pair<double, std::string>> entries_;  // (time [day], file relative to the .pvd)
  std::unique_ptr<Impl> impl_;
  bool committed_ = false;
};

}  // namespace blockres
