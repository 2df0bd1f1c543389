// Backend loops of the multicomponent model: the same local functions (multicomponent_local.hpp)
// run over cells and wells on the CPU (OpenMP) or as CUDA kernels (multicomponent_cuda*.cu).
#pragma once

#include "physics/multicomponent/multicomponent_local.hpp"

namespace blockres::physics::multicomponent {

// Reduced terms of the convergence test: [k] max_i |R_k,i| / m_i, [nc + k] sum_i R_k,i,
// [2 nc] sum_i m_i, with m_i = V_p,i rho_i.
BLOCKRES_HD int num_norm_terms(int nc) { return 2 * nc + 1; }

namespace cpu {
void cell_props(const Params& P, const Mesh& M, const double* x, const double* x0, double* props);
void assemble_cells(const Params& P, const Mesh& M, const double* x, const double* x0, const double* props, double dt,
                    double* R, double* J);
void prepare_wells(const Params& P, const Wells& W, const double* x);
void assemble_wells(const Params& P, const Mesh& M, const Wells& W, const double* x, const double* props, double* R,
                    double* J);
void norm_terms(const Params& P, const Mesh& M, const double* x, const double* R, double* out);  // num_norm_terms(nc)
void in_place(const Params& P, const Mesh& M, const double* x, double* out);                    // nc masses [kg]
// C: nc^2 doubles per cell, accumulation_block_entry() of every entry; props: pass-1 records at x.
void accumulation_blocks(const Params& P, const Mesh& M, const double* x, const double* props, double dt, double* C);
void update(int nc, index_t ncell, double* x, const double* dx, double max_dx, double max_dp_rel);
}  // namespace cpu

namespace cuda {
// Reductions use the executor's workspace (`workspace_doubles` doubles) and a per-cell scratch of
// 2 doubles (`cell_scratch`), and synchronise the stream.
void cell_props(stream_t s, const Params& P, const Mesh& M, const double* x, const double* x0, double* props);
void assemble_cells(stream_t s, const Params& P, const Mesh& M, const double* x, const double* x0, const double* props,
                    double dt, double* R, double* J);
void prepare_wells(stream_t s, const Params& P, const Wells& W, const double* x);
void assemble_wells(stream_t s, const Params& P, const Mesh& M, const Wells& W, const double* x, const double* props,
                    double* R, double* J);
void norm_terms(stream_t s, const Params& P, const Mesh& M, const double* x, const double* R, double* out,
                double* workspace, std::size_t workspace_doubles, double* cell_scratch);
void in_place(stream_t s, const Params& P, const Mesh& M, const double* x, double* out, double* workspace,
              std::size_t workspace_doubles, double* cell_scratch);
void update(stream_t s, int nc, index_t ncell, double* x, const double* dx, double max_dx, double max_dp_rel);
void accumulation_blocks(stream_t s, const Params& P, const Mesh& M, const double* x, const double* props, double dt,
                         double* C);

// Pass 2 launchers with nc fixed at compile time (multicomponent_cuda_fixed.cu), called only from
// the one size-class dispatch in multicomponent_cuda.cu.
template <int NC>
void assemble_cells_fixed(stream_t s, const Params& P, const Mesh& M, const double* x, const double* x0,
                          const double* props, double dt, double* R, double* J);
}  // namespace cuda

}  // namespace blockres::physics::multicomponent
