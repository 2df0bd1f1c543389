// CUDA kernels of the oil_water model: one thread per cell (assembly, norms, update) and one
// thread block per well (its completions, then its completion pairs, over the threads), all calling
// the shared local functions of oil_water_local.hpp.
#include "kernels/cuda_check.hpp"
#include "kernels/launch.cuh"
#include "physics/oil_water/oil_water_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace blockres::physics::cuda {

namespace {

using blockres::cuda_detail::block_max;
using blockres::cuda_detail::block_sum;

struct BlockSync {
  __device__ void operator()() const { __syncthreads(); }
};
constexpr int well_block = 128;  // threads per well

__global__ void __launch_bounds__(well_block) prepare_wells_kernel(OilWaterParams P, WellsView W, const double* __restrict__ x)
{
  prepare_well(P, W, x, blockIdx.x, threadIdx.x, blockDim.x, BlockSync{});
}

__global__ void face_props_kernel(OilWaterParams P, MeshView M, const double* __restrict__ x)
{
  const index_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < M.ncell) store_face_props(P, x, i, M.face_props, size64_t(M.ncell));
}

// A thread block's rows are one contiguous stretch of Jacobian blocks. When it fits the stage (the
// 7-point rows of its cells; not a stretch with a well's coupling blocks) and is stored contiguously (always,
// unless Model::set_block_storage moved blocks: a distributed run's rows with ghost-column blocks are not), each
// thread writes its row into shared memory and the thread block then copies the stretch out with coalesced
// 16-byte stores; otherwise each thread writes its row straight to J.
// The first W.nwell thread blocks compute the wells' terms instead (well_terms: they read x only),
// so each well's latency-bound chain of dependent steps runs beside the cells, not after them (it
// needs fewer registers than a cell: the kernel's count is unchanged). well_apply_kernel adds them.
constexpr int cell_block = 128, cell_stage_blocks = 7 * cell_block;  // 28 KiB
static_assert(cell_block == well_block, "the wells' thread blocks are the cells'");
__global__ void __launch_bounds__(cell_block)
    assemble_cells_kernel(OilWaterParams P, MeshView M, WellsView W, const double* __restrict__ x,
                          const double* __restrict__ x0, double dt, double* __restrict__ R, double* __restrict__ J)
{
  if (int(blockIdx.x) < W.nwell) {  // uniform over the block: its syncs are reached by every thread
    well_terms(P, W, x, int(blockIdx.x), threadIdx.x, blockDim.x, BlockSync{});
    return;
  }
  __shared__ __align__(16) double stage[4 * cell_stage_blocks];
  const index_t i0 = index_t(blockIdx.x - unsigned(W.nwell)) * cell_block, i = i0 + threadIdx.x;
  const index_t i1 = min(M.ncell, i0 + cell_block);
  const index_t k0 = M.row_ptr[i0], k1 = M.row_ptr[i1];
  bool staged = k1 - k0 <= cell_stage_blocks;  // uniform over the thread block
  index_t s0 = k0;                              // where block k0 is stored
  if (staged && M.block_pos) {
    s0 = M.block_pos[k0];
    bool contiguous = true;
    for (index_t k = k0 + index_t(threadIdx.x); k < k1; k += cell_block) contiguous &= M.block_pos[k] == s0 + (k - k0);
    staged = __syncthreads_and(contiguous) != 0;
  }
  if (!staged) {
    if (i < M.ncell) assemble_cell<true>(P, M, x, x0, dt, R, J, i);
    return;
  }
  if (i < M.ncell) assemble_cell<true>(P, M, x, x0, dt, R, stage, i, s0);
  __syncthreads();
  const double2* src = reinterpret_cast<const double2*>(stage);
  double2* dst = reinterpret_cast<double2*>(J + size64_t(s0) * 4);
  for (index_t t = threadIdx.x; t < 2 * (k1 - k0); t += cell_block) dst[t] = src[t];
}

// The wells' terms into R and J, after the cells' rows are written: a thread block per well, its
// threads over the well's items (well_apply: no sync, a few dependent loads per item).
constexpr int apply_block = 1024;
__global__ void __launch_bounds__(apply_block) well_apply_kernel(WellsView W, MeshView M, double* __restrict__ R,
                                                                 double* __restrict__ J)
{
  well_apply(W, M, R, J, int(blockIdx.x), threadIdx.x, blockDim.x);
}

constexpr int reduce_block = 256;

__global__ void norm_terms_kernel(OilWaterParams P, MeshView M, const double* __restrict__ x,
                                  const double* __restrict__ R, double* __restrict__ partial)
{
  double acc[num_norm_terms] = {0, 0, 0, 0, 0, 0, 0};
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < M.ncell; i += gridDim.x * blockDim.x) {
    double t[num_norm_terms];
    cell_norm_terms(P, M, x, R, i, t);
    acc[0] = fmax(acc[0], t[0]);
    acc[1] = fmax(acc[1], t[1]);
    // NaN must survive the reduction (fmax drops it): carry it through the sums.
    if (t[0] != t[0] || t[1] != t[1]) acc[2] += t[0] + t[1];
    for (int k = 2; k < num_norm_terms; ++k) acc[k] += t[k];
  }
  for (int k = 0; k < num_norm_terms; ++k) {
    const double v = k < 2 ? block_max(acc[k]) : block_sum(acc[k]);
    if (threadIdx.x == 0) partial[size64_t(blockIdx.x) * num_norm_terms + k] = v;
  }
}

__global__ void in_place_kernel(OilWaterParams P, MeshView M, const double* __restrict__ x, double* __restrict__ partial)
{
  double acc[2] = {0, 0};
  for (index_t i = blockIdx.x * blockDim.x + threadIdx.x; i < M.ncell; i += gridDim.x * blockDim.x) {
    double t[2];
    cell_in_place(P, M, x, i, t);
    acc[0] += t[0], acc[1] += t[1];
  }
  for (int k = 0; k < 2; ++k) {
    const double v = block_sum(acc[k]);
    if (threadIdx.x == 0) partial[size64_t(blockIdx.x) * 2 + k] = v;
  }
}

__global__ void accumulation_blocks_kernel(OilWaterParams P, MeshView M, const double* __restrict__ x, double inv_dt,
                                           double* __restrict__ C)
{
  const index_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < M.ncell) accumulation_block(P, M, x, inv_dt, i, C + 4 * size64_t(i));
}

__global__ void update_kernel(index_t ncell, double* __restrict__ x, const double* __restrict__ dx, double max_ds,
                              double max_dp_rel)
{
  const index_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ncell) update_cell(x, dx, i, max_ds, max_dp_rel);
}

unsigned blocks_for(index_t n, int block) { return static_cast<unsigned>(std::max<index_t>(1, (n + block - 1) / block)); }

}  // namespace

void prepare_wells(stream_t s, const OilWaterParams& P, const WellsView& W, const double* x)
{
  if (W.nwell == 0) return;
  prepare_wells_kernel<<<W.nwell, well_block, 0, s>>>(P, W, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void assemble(stream_t s, const OilWaterParams& P, const MeshView& M, const WellsView& W, const double* x,
              const double* x0, double dt, double* R, double* J)
{
  if (M.ncell == 0) return;
  if (!M.face_props) throw std::invalid_argument("cuda::assemble: the mesh view has no face property array");
  if (reinterpret_cast<std::uintptr_t>(J) % 16 != 0 || reinterpret_cast<std::uintptr_t>(R) % 16 != 0)  // 16-byte stores
    throw std::invalid_argument("cuda::assemble: the Jacobian's values or the residual are not 16-byte aligned");
  // every cell's properties once, then each face from its two cells' (face_flux_stored), the
  // wells' terms in the same launch
  face_props_kernel<<<blocks_for(M.ncell, 128), 128, 0, s>>>(P, M, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  assemble_cells_kernel<<<blocks_for(M.ncell, cell_block) + unsigned(W.nwell), cell_block, 0, s>>>(P, M, W, x, x0, dt,
                                                                                                  R, J);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  if (W.nwell > 0) {
    well_apply_kernel<<<W.nwell, apply_block, 0, s>>>(W, M, R, J);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
}

void norm_terms(stream_t s, const OilWaterParams& P, const MeshView& M, const double* x, const double* R,
                double out[num_norm_terms], double* workspace)
{
  const unsigned nb = std::min<unsigned>(reduction_blocks, blocks_for(M.ncell, reduce_block));
  norm_terms_kernel<<<nb, reduce_block, 0, s>>>(P, M, x, R, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  std::vector<double> h(std::size_t(nb) * num_norm_terms);
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(h.data(), workspace, h.size() * sizeof(double), cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  for (int k = 0; k < num_norm_terms; ++k) out[k] = 0.0;
  for (unsigned b = 0; b < nb; ++b)
    for (int k = 0; k < num_norm_terms; ++k) {
      const double v = h[std::size_t(b) * num_norm_terms + k];
      out[k] = k < 2 ? std::max(out[k], v) : out[k] + v;
    }
}

void in_place(stream_t s, const OilWaterParams& P, const MeshView& M, const double* x, double out[2],
              double* workspace)
{
  const unsigned nb = std::min<unsigned>(reduction_blocks, blocks_for(M.ncell, reduce_block));
  in_place_kernel<<<nb, reduce_block, 0, s>>>(P, M, x, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  std::vector<double> h(std::size_t(nb) * 2);
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(h.data(), workspace, h.size() * sizeof(double), cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  out[0] = out[1] = 0.0;
  for (unsigned b = 0; b < nb; ++b) out[0] += h[2 * b], out[1] += h[2 * b + 1];
}

void accumulation_blocks(stream_t s, const OilWaterParams& P, const MeshView& M, const double* x, double dt, double* C)
{
  if (M.ncell == 0) return;
  accumulation_blocks_kernel<<<blocks_for(M.ncell, 256), 256, 0, s>>>(P, M, x, 1.0 / dt, C);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void update(stream_t s, index_t ncell, double* x, const double* dx, double max_ds, double max_dp_rel)
{
  if (ncell == 0) return;
  update_kernel<<<blocks_for(ncell, 256), 256, 0, s>>>(ncell, x, dx, max_ds, max_dp_rel);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::physics::cuda
