// Well completions and Peaceman well indices, shared by every model.
#include "physics/wells.hpp"
#include "kernels/parallel_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <stdexcept>

#include <fmt/format.h>

namespace blockres::physics {

double peaceman_well_index(double kx, double ky, double dx, double dy, double dz, double rw, double skin, const std::string& well,
                   int k)
{
  if (kx <= 0.0 || ky <= 0.0) return 0.0;
  const double r1 = std::sqrt(ky / kx), r2 = std::sqrt(kx / ky);
  const double ro = 0.28 * std::sqrt(r1 * dx * dx + r2 * dy * dy) / (std::sqrt(r1) + std::sqrt(r2));
  const double denom = std::log(ro / rw) + skin;
  if (!(denom > 0.0))
    throw std::invalid_argument(fmt::format(
        "well '{}': ln(r_o/r_w) + skin = {:.4g} <= 0 in layer {} (r_o = {:.4g} m, r_w = {:.4g} m); the well radius is "
        "too large for the cell or the skin too negative",
        well, denom, k + 1, ro, rw));
  return 2.0 * std::numbers::pi * std::sqrt(kx * ky) * dz / denom;
}

std::vector<WellInfo> complete_wells(const Grid& grid, const RockSpec& rock, const std::vector<const WellGeometry*>& wells,
                                     const std::vector<bool>& rate_control)
{
  std::vector<WellInfo> out;
  std::map<index_t, std::string> owner;
  for (std::size_t n = 0; n < wells.size(); ++n) {
    const WellGeometry& ws = *wells[n];
    WellInfo wi;
    wi.name = ws.name;
    wi.injector = ws.kind == WellKind::injector;
    wi.rate_control = rate_control.at(n);
    wi.i = ws.i, wi.j = ws.j;
    for (int k = ws.k_top; k <= ws.k_bottom; ++k) {
      const index_t g = grid.global_index(ws.i, ws.j, k);
      const index_t a = grid.active_index(g);
      if (a < 0) continue;  // inactive cell: no connection (as OPM drops them)
      const int idx = k - ws.k_top;
      double w;
      if (!ws.well_index.empty())
        w = ws.well_index.at(static_cast<std::size_t>(idx));
      else
        w = peaceman_well_index(rock.kx[g], rock.ky[g], grid.dx(ws.i), grid.dy(ws.j), grid.dz(k), ws.radius, ws.skin,
                                ws.name, k);
      if (auto [it, fresh] = owner.emplace(a, ws.name); !fresh)
        throw std::invalid_argument(fmt::format("wells '{}' and '{}' both complete cell ({}, {}, {})", it->second,
                                                ws.name, ws.i + 1, ws.j + 1, k + 1));
      wi.completions.push_back({ws.i, ws.j, k, a, w, grid.depth()[a]});
    }
    if (wi.completions.empty())
      throw std::invalid_argument(fmt::format("well '{}' has no active cell in layers {}..{} of column ({}, {})", ws.name,
                                              ws.k_top + 1, ws.k_bottom + 1, ws.i + 1, ws.j + 1));
    wi.ref_depth = ws.ref_depth.value_or(wi.completions.front().depth);
    out.push_back(std::move(wi));
  }
  return out;
}

BsrPattern jacobian_pattern(const Grid& grid, const std::vector<WellInfo>& wells)
{
  return jacobian_pattern(grid, grid.cell_faces(), wells);
}

BsrPattern jacobian_pattern(const Grid& grid, const Grid::CellFaces& cf, const std::vector<WellInfo>& wells)
{
  // Row i: itself, its face neighbours and, when a rate-controlled well completes it, that well's
  // completed cells; sorted, duplicates dropped. Rows are independent: counted, then filled, in
  // parallel (any thread count gives the same pattern).
  const index_t n = grid.num_active();
  std::vector<int> rate_well(static_cast<std::size_t>(n), -1);  // a cell is completed by one well at most
  for (std::size_t w = 0; w < wells.size(); ++w)
    if (wells[w].rate_control)
      for (const auto& c : wells[w].completions) {
        if (rate_well[c.cell] >= 0 && rate_well[c.cell] != int(w))  // complete_wells refuses it; checked here too
          throw std::invalid_argument(fmt::format("wells '{}' and '{}' both complete active cell {}",
                                                  wells[std::size_t(rate_well[c.cell])].name, wells[w].name, c.cell));
        rate_well[c.cell] = int(w);
      }
  const auto& faces = grid.faces();
  // Row i's sorted, unique columns into buf (cleared first).
  const auto row = [&](index_t i, std::vector<index_t>& buf) {
    buf.clear();
    buf.push_back(i);
    for (index_t q = cf.ptr[i]; q < cf.ptr[i + 1]; ++q) buf.push_back(faces[cf.face[q]].a + faces[cf.face[q]].b - i);
    if (rate_well[i] >= 0)
      for (const auto& c : wells[std::size_t(rate_well[i])].completions) buf.push_back(c.cell);
    std::sort(buf.begin(), buf.end());
    buf.erase(std::unique(buf.begin(), buf.end()), buf.end());
  };
  BsrPattern p;
  p.nrows = p.ncols = n;
  p.row_ptr.assign(std::size_t(n) + 1, 0);
  const bool par = kernels::cpu::parallel_worth(size64_t(n));
#pragma omp parallel if (par)
  {
    std::vector<index_t> buf;
#pragma omp for schedule(static)
    for (index_t i = 0; i < n; ++i) {
      row(i, buf);
      p.row_ptr[i + 1] = static_cast<index_t>(buf.size());
    }
  }
  size64_t total = 0;
  for (index_t i = 0; i < n; ++i) {
    total += size64_t(p.row_ptr[i + 1]);
    if (total > size64_t(std::numeric_limits<index_t>::max()))
      throw std::invalid_argument(fmt::format("the Jacobian pattern has more than {} blocks (row {} of {})",
                                              std::numeric_limits<index_t>::max(), i, n));
    p.row_ptr[i + 1] = static_cast<index_t>(total);
  }
  p.col_ind.resize(std::size_t(total));
#pragma omp parallel if (par)
  {
    std::vector<index_t> buf;
#pragma omp for schedule(static)
    for (index_t i = 0; i < n; ++i) {
      row(i, buf);
      std::copy(buf.begin(), buf.end(), p.col_ind.begin() + p.row_ptr[i]);
    }
  }
  return p;
}

CellConnections cell_connections(const Grid& grid, const Grid::CellFaces& cf, const BsrPattern& pattern)
{
  const index_t n = grid.num_active();
  const auto& faces = grid.faces();
  CellConnections c;
  const std::size_t m = cf.face.size();
  c.cell.resize(m), c.block.resize(m), c.trans.resize(m), c.diag_block.resize(std::size_t(n));
#pragma omp parallel for schedule(static) if (kernels::cpu::parallel_worth(size64_t(n)))
  for (index_t i = 0; i < n; ++i) {
    for (index_t q = cf.ptr[i]; q < cf.ptr[i + 1]; ++q) {
      const Grid::Face& f = faces[cf.face[q]];
      const index_t j = f.a + f.b - i;
      c.cell[q] = j;
      c.trans[q] = f.trans;
      c.block[q] = pattern.find(i, j);
    }
    c.diag_block[i] = pattern.find(i, i);
  }
  return c;
}

void check_block_storage(std::span<const index_t> storage, index_t nnzb, bool moved)
{
  if (moved) throw std::logic_error("set_block_storage: the Jacobian's blocks were moved already (once per model)");
  if (storage.size() != std::size_t(nnzb))
    throw std::invalid_argument(fmt::format("block storage map: {} entries for a pattern of {} blocks", storage.size(),
                                            nnzb));
  std::vector<bool> seen(storage.size(), false);
  for (std::size_t k = 0; k < storage.size(); ++k) {
    const index_t s = storage[k];
    if (s < 0 || s >= nnzb || seen[std::size_t(s)])
      throw std::invalid_argument(fmt::format("block storage map: block {} goes to {}, {}", k, s,
                                              s < 0 || s >= nnzb ? "out of range" : "taken by another block"));
    seen[std::size_t(s)] = true;
  }
}

void move_block_positions(Array<index_t>& positions, std::span<const index_t> storage)
{
  std::vector<index_t> h = positions.to_host();
  for (index_t& k : h) {
    if (k < 0 || std::size_t(k) >= storage.size())
      throw std::invalid_argument(fmt::format("block position {} outside the storage map ({} blocks)", k, storage.size()));
    k = storage[std::size_t(k)];
  }
  positions.copy_from_host(h);
}

WellConnectivity::WellConnectivity(const ExecPtr& exec, const std::vector<WellInfo>& wells, const BsrPattern& pattern)
{
  std::vector<double> wi, depth;
  std::vector<index_t> ptr{0}, cell, cptr{0}, cblock;
  for (const auto& w : wells) {
    for (const auto& c : w.completions) {
      cell.push_back(c.cell);
      wi.push_back(c.wi);
      depth.push_back(c.depth);
    }
    ptr.push_back(static_cast<index_t>(cell.size()));
    if (w.rate_control)
      for (const auto& c : w.completions)
        for (const auto& c2 : w.completions) cblock.push_back(pattern.find(c.cell, c2.cell));
    cptr.push_back(static_cast<index_t>(cblock.size()));
  }
  comp_ptr = to_executor(exec, ptr), comp_cell = to_executor(exec, cell);
  couple_ptr = to_executor(exec, cptr), couple_block = to_executor(exec, cblock);
  comp_wi = to_executor(exec, wi), comp_depth = to_executor(exec, depth);
}

WellArrays::WellArrays(const ExecPtr& exec, const std::vector<Control>& control, const std::vector<WellInfo>& wells,
                       const BsrPattern& pattern, int scratch_per_completion, int out_per_well)
    : nwell(static_cast<int>(wells.size()))
{
  if (control.size() != wells.size()) throw std::invalid_argument("WellArrays: one control per well expected");
  std::vector<int> kind_code;
  std::vector<bool> rate_control;
  std::vector<double> rate_target, bhp_value, depth;
  for (std::size_t w = 0; w < wells.size(); ++w) {
    const auto& c = control[w];
    kind_code.push_back(c.kind == WellKind::injector ? injector : producer);
    rate_control.push_back(c.mode == WellControlMode::rate);
    rate_target.push_back(c.rate);
    bhp_value.push_back(c.bhp);
    depth.push_back(wells[w].ref_depth);
  }
  kind = to_executor(exec, kind_code);
  controls = WellControls(exec, rate_control, bhp_value);
  target = to_executor(exec, rate_target);
  bhp = to_executor(exec, bhp_value);
  ref_depth = to_executor(exec, depth);
  head_density = Array<double>(exec, nwell);
  conn = WellConnectivity(exec, wells, pattern);
  scratch = Array<double>(exec, size64_t(conn.completions()) * scratch_per_completion);
  out = Array<double>(exec, size64_t(nwell) * out_per_well);
  if (nwell > 0) {
    out.copy_from_host(std::vector<double>(std::size_t(nwell) * out_per_well, 0.0));
    head_density.copy_from_host(std::vector<double>(std::size_t(nwell), 0.0));
  }
}

}  // namespace blockres::physics
