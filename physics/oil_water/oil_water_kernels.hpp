// Backend loops of the oil_water model: the same local functions (oil_water_local.hpp) run
// over cells and wells on the CPU (OpenMP) or as CUDA kernels.
#pragma once

#include "physics/oil_water/oil_water_local.hpp"

namespace blockres::physics {

namespace cpu {
void prepare_wells(const OilWaterParams& P, const WellsView& W, const double* x);
void assemble(const OilWaterParams& P, const MeshView& M, const WellsView& W, const double* x, const double* x0,
              double dt, double* R, double* J);
void norm_terms(const OilWaterParams& P, const MeshView& M, const double* x, const double* R, double out[num_norm_terms]);
void in_place(const OilWaterParams& P, const MeshView& M, const double* x, double out[2]);
// C: 4 doubles per cell, accumulation_block() of every cell.
void accumulation_blocks(const OilWaterParams& P, const MeshView& M, const double* x, double dt, double* C);
void update(index_t ncell, double* x, const double* dx, double max_ds, double max_dp_rel);
}  // namespace cpu

namespace cuda {
// Reductions need a device workspace of reduction_workspace_doubles doubles and synchronise.
inline constexpr int reduction_blocks = 512;
inline constexpr int reduction_workspace_doubles = reduction_blocks * num_norm_terms;
void prepare_wells(stream_t s, const OilWaterParams& P, const WellsView& W, const double* x);
void assemble(stream_t s, const OilWaterParams& P, const MeshView& M, const WellsView& W, const double* x,
              const double* x0, double dt, double* R, double* J);
void norm_terms(stream_t s, const OilWaterParams& P, const MeshView& M, const double* x, const double* R,
                double out[num_norm_terms], double* workspace);
void in_place(stream_t s, const OilWaterParams& P, const MeshView& M, const double* x, double out[2],
              double* workspace);
void accumulation_blocks(stream_t s, const OilWaterParams& P, const MeshView& M, const double* x, double dt, double* C);
void update(stream_t s, index_t ncell, double* x, const double* dx, double max_ds, double max_dp_rel);
}  // namespace cuda

}  // namespace blockres::physics
