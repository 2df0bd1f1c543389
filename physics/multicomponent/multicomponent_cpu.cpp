// CPU loops of the multicomponent model (the reference the CUDA kernels are tested against).
// Every loop is deterministic: cells are independent, and sums run in an order fixed by the
// number of cells alone (not by the thread count).
#include "physics/multicomponent/multicomponent_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace blockres::physics::multicomponent::cpu {

namespace {
// Below this many cells a parallel region costs more than it saves.
constexpr index_t omp_min_cells = 2048;
// Cells per partial sum of the ordered reductions.
constexpr index_t sum_block = 8192;

// out[0..nterms) from per-cell terms: body(i, max_acc, sum_acc) adds cell i's contributions.
// Partial sums per fixed block of cells, then the blocks in order.
template <class Body>
void ordered_reduce(index_t ncell, int nmax, int nsum, double* out, Body&& body)
{
  const index_t nb = std::max<index_t>(1, (ncell + sum_block - 1) / sum_block);
  const int nt = nmax + nsum;
  std::vector<double> partial(static_cast<std::size_t>(nb) * nt, 0.0);
#pragma omp parallel for schedule(static) if (ncell > omp_min_cells)
  for (index_t b = 0; b < nb; ++b) {
    double* acc = partial.data() + std::size_t(b) * nt;
    const index_t end = std::min<index_t>(ncell, (b + 1) * sum_block);
    for (index_t i = b * sum_block; i < end; ++i) body(i, acc, acc + nmax);
  }
  for (int t = 0; t < nt; ++t) out[t] = 0.0;
  for (index_t b = 0; b < nb; ++b)
    for (int t = 0; t < nt; ++t) {
      const double v = partial[std::size_t(b) * nt + t];
      out[t] = t < nmax ? std::max(out[t], v) : out[t] + v;
    }
}
}  // namespace

void cell_props(const Params& P, const Mesh& M, const double* x, const double* x0, double* props)
{
#pragma omp parallel for schedule(static) if (M.ncell > omp_min_cells)
  for (index_t i = 0; i < M.ncell; ++i) multicomponent::cell_props(P, M, x, x0, props, i);
}

void assemble_cells(const Params& P, const Mesh& M, const double* x, const double* x0, const double* props, double dt,
                    double* R, double* J)
{
  // One thread per cell with the run-time path: the whole row (up to 64 x 64 diagonal entries)
  // accumulates in a stack array of 32 KiB.
  constexpr int ept = max_components * max_components;
#pragma omp parallel for schedule(static) if (M.ncell > omp_min_cells)
  for (index_t i = 0; i < M.ncell; ++i)
    assemble_cell_entries<0, ept, max_components>(P, M, x, x0, props, dt, R, J, i, 0, 1);
}

void prepare_wells(const Params& P, const Wells& W, const double* x)
{
  for (int w = 0; w < W.nwell; ++w) prepare_well(P, W, x, w);
}

void assemble_wells(const Params& P, const Mesh& M, const Wells& W, const double* x, const double* props, double* R,
                    double* J)
{
  // After the cell pass: wells add to rows it has written. No two wells share a cell.
  for (int w = 0; w < W.nwell; ++w) well_setup(P, W, x, props, w);
  for (int w = 0; w < W.nwell; ++w) {
    well_rates(P, W, x, props, R, w, 0, 1);
    for (index_t c = W.comp_ptr[w]; c < W.comp_ptr[w + 1]; ++c) well_completion_entries(P, M, W, x, props, J, w, c, 0, 1);
  }
}

void norm_terms(const Params& P, const Mesh& M, const double* x, const double* R, double* out)
{
  const int nc = P.nc;
  ordered_reduce(M.ncell, nc, nc + 1, out, [&](index_t i, double* mx, double* sm) {
    double mass, xlast;
    cell_mass(P, M, x, i, mass, xlast);
    for (int k = 0; k < nc; ++k) {
      const double r = R[size64_t(i) * nc + k];
      const double t = std::abs(r) / mass;
      mx[k] = std::max(mx[k], t);
      if (t != t) sm[k] += t;  // max drops NaN: carry it through the sum
      sm[k] += r;
    }
    sm[nc] += mass;
  });
}

void in_place(const Params& P, const Mesh& M, const double* x, double* out)
{
  const int nc = P.nc;
  ordered_reduce(M.ncell, 0, nc, out, [&](index_t i, double*, double* sm) {
    double mass, xlast;
    cell_mass(P, M, x, i, mass, xlast);
    const double* xc = x + size64_t(i) * nc;
    for (int k = 0; k < nc; ++k) sm[k] += mass * (k < nc - 1 ? xc[1 + k] : xlast);
  });
}

void accumulation_blocks(const Params& P, const Mesh& M, const double* x, const double* props, double dt, double* C)
{
  const int nn = P.nc * P.nc;
  const double inv_dt = 1.0 / dt;
#pragma omp parallel for schedule(static) if (M.ncell > omp_min_cells)
  for (index_t i = 0; i < M.ncell; ++i)
    for (int e = 0; e < nn; ++e) C[size64_t(i) * nn + e] = accumulation_block_entry(P, x, props, inv_dt, i, e);
}

void update(int nc, index_t ncell, double* x, const double* dx, double max_dx, double max_dp_rel)
{
#pragma omp parallel for schedule(static) if (ncell > omp_min_cells)
  for (index_t i = 0; i < ncell; ++i) update_cell(nc, x, dx, i, max_dx, max_dp_rel);
}

}  // namespace blockres::physics::multicomponent::cpu
