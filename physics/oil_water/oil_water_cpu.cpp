// CPU loops of the oil_water model (the reference the CUDA kernels are tested against).
#include "physics/oil_water/oil_water_kernels.hpp"

#include "kernels/ordered_sum_cpu.hpp"

#include <algorithm>
#include <vector>

namespace blockres::physics::cpu {

namespace {
// Below this many cells a parallel region costs more than it saves.
constexpr index_t omp_min_cells = 4096;
}  // namespace

void prepare_wells(const OilWaterParams& P, const WellsView& W, const double* x)
{
  for (int w = 0; w < W.nwell; ++w) prepare_well(P, W, x, w);
}

void assemble(const OilWaterParams& P, const MeshView& M, const WellsView& W, const double* x, const double* x0,
              double dt, double* R, double* J)
{
#pragma omp parallel for schedule(static) if (M.ncell > omp_min_cells)
  for (index_t i = 0; i < M.ncell; ++i) assemble_cell(P, M, x, x0, dt, R, J, i);
  // Wells after cells: they add to rows the cell pass has just written. No two wells share
  // a cell (checked at setup), so wells could run concurrently; they are few.
  for (int w = 0; w < W.nwell; ++w) assemble_well(P, W, M, x, R, J, w);
}

void norm_terms(const OilWaterParams& P, const MeshView& M, const double* x, const double* R, double out[num_norm_terms])
{
  // Sums in a fixed order (independent of the thread count). The maxima are order-free; they are
  // kept per block (one thread owns a block) in the same pass, and slots 0-1 of the sums stay unused.
  double mx0 = 0.0, mx1 = 0.0;
  const auto nb = static_cast<std::size_t>((M.ncell + kernels::cpu::ordered_sum_block - 1) /
                                           kernels::cpu::ordered_sum_block);
  std::vector<double> bmax0(std::max<std::size_t>(nb, 1), 0.0), bmax1(bmax0.size(), 0.0);
  const auto sums = kernels::cpu::ordered_sum<num_norm_terms>(M.ncell, omp_min_cells, [&](size64_t i, double* acc) {
    double t[num_norm_terms];
    cell_norm_terms(P, M, x, R, static_cast<index_t>(i), t);
    const auto b = static_cast<std::size_t>(i / kernels::cpu::ordered_sum_block);
    bmax0[b] = std::max(bmax0[b], t[0]);
    bmax1[b] = std::max(bmax1[b], t[1]);
    if (t[0] != t[0] || t[1] != t[1]) acc[2] += t[0] + t[1];  // max drops NaN: carry it through a sum
    for (int k = 2; k < num_norm_terms; ++k) acc[k] += t[k];
  });
  for (std::size_t b = 0; b < bmax0.size(); ++b) mx0 = std::max(mx0, bmax0[b]), mx1 = std::max(mx1, bmax1[b]);
  out[0] = mx0, out[1] = mx1;
  for (int k = 2; k < num_norm_terms; ++k) out[k] = sums[k];
}

void in_place(const OilWaterParams& P, const MeshView& M, const double* x, double out[2])
{
  const auto sums = kernels::cpu::ordered_sum<2>(M.ncell, omp_min_cells, [&](size64_t i, double* acc) {
    double t[2];
    cell_in_place(P, M, x, static_cast<index_t>(i), t);
    acc[0] += t[0], acc[1] += t[1];
  });
  out[0] = sums[0], out[1] = sums[1];
}

void accumulation_blocks(const OilWaterParams& P, const MeshView& M, const double* x, double dt, double* C)
{
  const double inv_dt = 1.0 / dt;
#pragma omp parallel for schedule(static) if (M.ncell > omp_min_cells)
  for (index_t i = 0; i < M.ncell; ++i) accumulation_block(P, M, x, inv_dt, i, C + 4 * size64_t(i));
}

void update(index_t ncell, double* x, const double* dx, double max_ds, double max_dp_rel)
{
#pragma omp parallel for schedule(static) if (ncell > omp_min_cells)
  for (index_t i = 0; i < ncell; ++i) update_cell(x, dx, i, max_ds, max_dp_rel);
}

}  // namespace blockres::physics::cpu
