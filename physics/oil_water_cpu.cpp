// CPU loops of the oil_water model (the reference the CUDA kernels are tested against).
#include "physics/oil_water_kernels.hpp"

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
  double mx0 = 0.0, mx1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0;
#pragma omp parallel for schedule(static) reduction(max : mx0, mx1) reduction(+ : s2, s3, s4, s5, s6) if (M.ncell > omp_min_cells)
  for (index_t i = 0; i < M.ncell; ++i) {
    double t[num_norm_terms];
    cell_norm_terms(P, M, x, R, i, t);
    mx0 = std::max(mx0, t[0]);
    mx1 = std::max(mx1, t[1]);
    if (t[0] != t[0] || t[1] != t[1]) s2 += t[0] + t[1];  // max drops NaN: carry it through a sum
    s2 += t[2], s3 += t[3], s4 += t[4], s5 += t[5], s6 += t[6];
  }
  out[0] = mx0, out[1] = mx1, out[2] = s2, out[3] = s3, out[4] = s4, out[5] = s5, out[6] = s6;
}

void in_place(const OilWaterParams& P, const MeshView& M, const double* x, double out[2])
{
  double w = 0.0, o = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : w, o) if (M.ncell > omp_min_cells)
  for (index_t i = 0; i < M.ncell; ++i) {
    double t[2];
    cell_in_place(P, M, x, i, t);
    w += t[0], o += t[1];
  }
  out[0] = w, out[1] = o;
}

void update(index_t ncell, double* x, const double* dx, double max_ds, double max_dp_rel)
{
#pragma omp parallel for schedule(static) if (ncell > omp_min_cells)
  for (index_t i = 0; i < ncell; ++i) update_cell(x, dx, i, max_ds, max_dp_rel);
}

}  // namespace blockres::physics::cpu
