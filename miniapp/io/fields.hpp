// Cell fields on the full grid from the solver's state or a model's per-active-cell values.
#pragma once

#include "physics/grid.hpp"

#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace blockres {

// Component `component` of the interleaved per-active-cell state x (`components` values per cell,
// e.g. (p, S_w)), times `scale`, on all nx*ny*nz cells in natural order; NaN in inactive cells so
// that no reader mistakes them for data. Output files share this so their fields agree bit for bit.
inline std::vector<double> full_grid_field(const physics::Grid& grid, std::span<const double> x, int component,
                                           int components, double scale)
{
  const auto na = static_cast<std::size_t>(grid.num_active());
  if (x.size() != na * std::size_t(components))
    throw std::invalid_argument("full_grid_field: state has " + std::to_string(x.size()) + " values, expected " +
                                std::to_string(na * std::size_t(components)));
  std::vector<double> out(static_cast<std::size_t>(grid.num_cells()), std::numeric_limits<double>::quiet_NaN());
  for (index_t a = 0; a < grid.num_active(); ++a)
    out[grid.global_of_active(a)] = x[std::size_t(components) * std::size_t(a) + std::size_t(component)] * scale;
  return out;
}

// Per-active-cell values (one of Model::cell_field_values) on all nx*ny*nz cells in natural order,
// NaN in inactive cells. The HDF5 and VTK writers share this, so their fields agree bit for bit.
inline std::vector<double> full_grid_values(const physics::Grid& grid, std::span<const double> active_values)
{
  if (active_values.size() != static_cast<std::size_t>(grid.num_active()))
    throw std::invalid_argument("full_grid_values: " + std::to_string(active_values.size()) +
                                " values, expected one per active cell (" + std::to_string(grid.num_active()) + ")");
  std::vector<double> out(static_cast<std::size_t>(grid.num_cells()), std::numeric_limits<double>::quiet_NaN());
  for (index_t a = 0; a < grid.num_active(); ++a) out[grid.global_of_active(a)] = active_values[std::size_t(a)];
  return out;
}

}  // namespace blockres
