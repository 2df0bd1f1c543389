// CUDA pass-2 kernels of the multicomponent model (block rows), shared by the run-time path
// (multicomponent_cuda.cu) and the compile-time sizes (multicomponent_cuda_fixed.cu).
//
// Thread layouts (one dispatch, assemble_cells in multicomponent_cuda.cu):
//   nc <= 2    one thread per cell, nc fixed at compile time: the whole block row (diagonal
//              accumulators nc^2 <= 4 doubles) in registers;
//   nc >= 3    a group of `group` threads per cell, group = nc^2 up to 32 (a thread per entry:
//              a thread per cell writes its 72-128 byte blocks strided by a whole block row,
//              so a warp store touches 32 cache lines), else nc^2 rounded up to a multiple of 32 and capped
//              at 256; 256/group cells per thread block. Lane l owns the entries
//              l, l + group, ... of every block of the row (EPT = ceil(nc^2/group) <= 16 diagonal
//              accumulators in registers) and the residual entry l < nc; consecutive lanes write
//              consecutive doubles of a block, so the writes are coalesced. nc in {8, 16, 32, 64}
//              is fixed at compile time (divisions by nc become shifts), the rest runs the same
//              code with nc read at run time.
#pragma once

#include "kernels/cuda_check.cuh"
#include "physics/multicomponent/multicomponent_kernels.hpp"

#include <algorithm>

namespace blockres::physics::multicomponent::cuda::detail {

constexpr int cells_threads = 256;  // threads per block of the group kernels

struct GroupLayout {
  int group;            // threads per cell
  int cells_per_block;
};
// nc^2 lanes per cell up to a warp (so a warp writes whole neighbouring blocks), else nc^2 rounded
// up to a multiple of 32 and capped at cells_threads.
constexpr int group_size(int nc)
{
  return nc * nc <= 32 ? nc * nc : (nc * nc + 31) / 32 * 32 < cells_threads ? (nc * nc + 31) / 32 * 32 : cells_threads;
}
inline GroupLayout group_layout(int nc)
{
  const int g = group_size(nc);
  return {g, cells_threads / g};
}
inline unsigned blocks_for(size64_t n, int per_block)
{
  return static_cast<unsigned>(std::max<size64_t>(1, (n + per_block - 1) / per_block));
}

template <int NC>
__global__ void __launch_bounds__(128) cells_thread_kernel(Params P, Mesh M, const double* __restrict__ x,
                                                           const double* __restrict__ x0,
                                                           const double* __restrict__ props, double dt,
                                                           double* __restrict__ R, double* __restrict__ J)
{
  const index_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < M.ncell) assemble_cell_entries<NC, NC * NC, NC>(P, M, x, x0, props, dt, R, J, i, 0, 1);
}

// The row's face terms are computed once per cell by its first lanes into shared memory (every
// lane needs all of them; computed per lane they are chains of dependent global loads).
template <int NC, int EPT>
__global__ void __launch_bounds__(cells_threads) cells_group_kernel(Params P, Mesh M, const double* __restrict__ x,
                                                                   const double* __restrict__ x0,
                                                                   const double* __restrict__ props, double dt,
                                                                   double* __restrict__ R, double* __restrict__ J,
                                                                   int group)
{
  // Cells per thread block: fixed nc from its group size; the run-time path has nc >= 5 (group >= 25).
  constexpr int max_cells = cells_threads / (NC > 0 ? group_size(NC) : 25);
  __shared__ FaceTerm faces[max_cells][max_shared_faces];
  const int g = threadIdx.x / group, lane = threadIdx.x - g * group;
  const index_t i = index_t(blockIdx.x) * (blockDim.x / group) + g;
  const bool active = i < M.ncell && g < max_cells;
  const index_t nf = active ? M.nbr_ptr[i + 1] - M.nbr_ptr[i] : 0;
  const bool shared = nf <= max_shared_faces;
  if (shared)
    for (index_t q = lane; q < nf; q += group) faces[g][q] = face_term(P, M, x, props, i, M.nbr_ptr[i] + q, P.nc);
  __syncthreads();
  if (active) assemble_cell_entries<NC, EPT, 1>(P, M, x, x0, props, dt, R, J, i, lane, group, shared ? faces[g] : nullptr);
}

template <int NC, int EPT>
void launch_cells_group(stream_t s, const Params& P, const Mesh& M, const double* x, const double* x0,
                        const double* props, double dt, double* R, double* J)
{
  const GroupLayout L = group_layout(P.nc);
  cells_group_kernel<NC, EPT><<<blocks_for(M.ncell, L.cells_per_block), L.group * L.cells_per_block, 0, s>>>(
      P, M, x, x0, props, dt, R, J, L.group);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::physics::multicomponent::cuda::detail
