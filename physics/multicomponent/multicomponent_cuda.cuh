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
//              accumulators in registers; the compiled sizes 8..64 use nc^2/4 lanes, EPT 2-4, see
//              fixed_group_size) and the residual entry l < nc; consecutive lanes write
//              consecutive doubles of a block, so the writes are coalesced. nc in {8, 16, 32, 64}
//              is fixed at compile time (divisions by nc become shifts), the rest runs the same
//              code with nc read at run time.
#pragma once

#include "kernels/cuda_check.hpp"
#include "physics/multicomponent/multicomponent_kernels.hpp"

#include <algorithm>

namespace blockres::physics::multicomponent::cuda::detail {

constexpr int cells_threads = 256;  // threads per block of the group kernels

struct GroupLayout {
  int group;            // threads per cell
  int cells_per_block;
};
// Threads per block of the group kernel: 1024 for the fixed nc = 64 (one cell per block, at most 4
// entries per lane: with 256 threads it kept 16 diagonal accumulators per lane, used 250 registers
// and ran at 12.5% occupancy on the H200; nc = 32 measured faster with 256), else cells_threads.
template <int NC>
inline constexpr int block_threads = NC >= 64 ? 1024 : cells_threads;
// nc^2 lanes per cell up to a warp (so a warp writes whole neighbouring blocks), else nc^2 rounded
// up to a multiple of 32 and capped at the block's threads.
constexpr int group_size(int nc, int threads = cells_threads)
{
  return nc * nc <= 32 ? nc * nc : (nc * nc + 31) / 32 * 32 < threads ? (nc * nc + 31) / 32 * 32 : threads;
}
inline GroupLayout group_layout(int nc, int threads = cells_threads)
{
  const int g = group_size(nc, threads);
  return {g, threads / g};
}
// The compiled sizes give each lane about 4 entries per block from nc = 8 on (16 lanes at nc = 8:
// two cells per warp, each half-warp writing 128 contiguous bytes; a cell's faces are
// staged once, so more entries per lane amortise the staging; measured on the H200 at 1M cells:
// nc = 16 with 256 lanes of 1 entry 24.7% of copy, nc = 32 with 256 lanes of 4 entries 39.7%).
constexpr int fixed_group_size(int nc, int threads)
{
  const int nn = nc * nc;
  if (nn <= 32) return nn;
  const int quarter = (nn / 4 + 15) / 16 * 16;  // about 4 entries per lane, half or whole warps
  return quarter > threads ? threads : quarter;
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
__global__ void __launch_bounds__(block_threads<NC>) cells_group_kernel(Params P, Mesh M, const double* __restrict__ x,
                                                                   const double* __restrict__ x0,
                                                                   const double* __restrict__ props, double dt,
                                                                   double* __restrict__ R, double* __restrict__ J,
                                                                   int group)
{
  // Cells per thread block: fixed nc from its group size; the run-time path has nc >= 5 (group >= 25)
  // and at most 64 components over the cells of a block (10 x 5, 4 x 7, 2 x 15, 1 x 63, ...).
  constexpr int max_cells = block_threads<NC> / (NC > 0 ? fixed_group_size(NC, block_threads<NC>) : 25);
  constexpr int max_cell_components = NC > 0 ? max_cells * NC : max_components;
  __shared__ FaceTerm faces[max_cells][max_shared_faces];
  __shared__ double vectors[max_cell_components * max_shared_faces * 6];
  const int nc = NC > 0 ? NC : P.nc;
  const int g = threadIdx.x / group, lane = threadIdx.x - g * group;
  const index_t i = index_t(blockIdx.x) * (blockDim.x / group) + g;
  const bool active = i < M.ncell && g < max_cells;
  const index_t nf = active ? M.nbr_ptr[i + 1] - M.nbr_ptr[i] : 0;
  const bool shared = nf <= max_shared_faces;
  double* vec = vectors + size64_t(g) * max_shared_faces * face_vector_doubles(nc);
  if (shared)
    for (index_t q = lane; q < nf; q += group) faces[g][q] = face_term(P, M, x, props, i, M.nbr_ptr[i] + q, nc);
  __syncthreads();
  if (shared)
    for (index_t t = lane; t < nf * nc; t += group)
      face_vector_entry(faces[g][t / nc], nc, int(t % nc), vec + size64_t(t / nc) * face_vector_doubles(nc));
  __syncthreads();
  if (active) {
    if (!shared) __trap();  // the model refuses rows of more than max_shared_faces faces
    assemble_cell_entries<NC, EPT, 1, true>(P, M, x, x0, props, dt, R, J, i, lane, group, faces[g], vec);
  }
}

// group: lanes per cell (fixed_group_size(NC, ...) for compiled sizes, group_layout(nc).group else).
template <int NC, int EPT>
void launch_cells_group(stream_t s, const Params& P, const Mesh& M, const double* x, const double* x0,
                        const double* props, double dt, double* R, double* J, int group)
{
  const GroupLayout L{group, block_threads<NC> / group};
  cells_group_kernel<NC, EPT><<<blocks_for(M.ncell, L.cells_per_block), L.group * L.cells_per_block, 0, s>>>(
      P, M, x, x0, props, dt, R, J, L.group);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::physics::multicomponent::cuda::detail
