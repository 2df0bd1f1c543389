// CUDA kernels of the multicomponent model: pass 1 (one thread per cell), the size-class dispatch
// of pass 2 (multicomponent_cuda.cuh), wells (a thread per well for the BHP, a thread block per
// well for its block entries), reductions (norms, masses in place) and the Newton update, all
// calling the shared local functions of multicomponent_local.hpp.
#include "kernels/launch.cuh"
#include "physics/multicomponent/multicomponent_cuda.cuh"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace blockres::physics::multicomponent::cuda {

namespace {

using detail::blocks_for;

// Pass 1: a thread per cell computes its record into shared memory, then the block's records
// (contiguous in props) are written out by consecutive threads: written straight from each
// thread, a warp store touched 32 records props_stride(nc) doubles apart (ncu, nc = 8: 17% of
// DRAM throughput). Records per block: props_cells (props_stride(64) = 199 doubles: 50 KB).
constexpr int props_cells = 32;
__global__ void __launch_bounds__(props_cells) props_kernel(Params P, Mesh M, const double* __restrict__ x,
                                                            const double* __restrict__ x0, double* __restrict__ props)
{
  extern __shared__ double records[];
  const int stride = props_stride(P.nc);
  const index_t first = index_t(blockIdx.x) * props_cells;
  const index_t i = first + threadIdx.x;
  if (i < M.ncell) multicomponent::cell_props_record(P, M, x, x0, i, records + size64_t(threadIdx.x) * stride);
  __syncthreads();
  const index_t cells = M.ncell - first < props_cells ? M.ncell - first : props_cells;
  double* out = props + size64_t(first) * stride;
  for (size64_t q = threadIdx.x; q < size64_t(cells) * stride; q += props_cells) out[q] = records[q];
}

__global__ void prepare_wells_kernel(Params P, Wells W, const double* __restrict__ x)
{
  const int w = blockIdx.x * blockDim.x + threadIdx.x;
  if (w < W.nwell) prepare_well(P, W, x, w);
}

// One warp per well: lanes over the completions for the connection set-up, then over the
// breakpoints for the BHP bracket (merged by shuffles), lane 0 finishes.
__global__ void __launch_bounds__(32) well_setup_kernel(Params P, Wells W, const double* __restrict__ x,
                                                        const double* __restrict__ props)
{
  const int w = blockIdx.x, lane = threadIdx.x;
  const index_t c0 = W.comp_ptr[w], ncomp = W.comp_ptr[w + 1] - c0;
  for (index_t c = lane; c < ncomp; c += 32) well_connection_setup(P, W, x, props, w, c);
  __syncwarp();
  BhpBracket br;
  if (W.control[w] != control_bhp) {
    const double* scr = W.scratch + size64_t(c0) * well_scratch_per_completion;
    const double goal = well_rate_goal(W, w);
    for (index_t k = lane; k < ncomp; k += 32) {
      const double bp = scr[size64_t(k) * well_scratch_per_completion];
      bracket_add(br, bp, well_rate_at(scr, ncomp, bp), goal);
    }
    for (int off = 16; off > 0; off /= 2) {
      BhpBracket o;
      o.has_lo = __shfl_down_sync(0xffffffffu, int(br.has_lo), off) != 0;
      o.has_hi = __shfl_down_sync(0xffffffffu, int(br.has_hi), off) != 0;
      o.lo = __shfl_down_sync(0xffffffffu, br.lo, off);
      o.flo = __shfl_down_sync(0xffffffffu, br.flo, off);
      o.hi = __shfl_down_sync(0xffffffffu, br.hi, off);
      o.fhi = __shfl_down_sync(0xffffffffu, br.fhi, off);
      bracket_merge(br, o);
    }
  }
  if (lane == 0) well_setup_finish(P, W, w, br);
}

// One warp per well, lanes over the components.
__global__ void well_rates_kernel(Params P, Wells W, const double* __restrict__ x, const double* __restrict__ props,
                                  double* __restrict__ R)
{
  well_rates(P, W, x, props, R, blockIdx.x, threadIdx.x, blockDim.x);
}

// One thread block per completion (of all wells), threads over its (c2, entry) items: a well with
// m completions under rate control has m^2 nc^2 coupling entries (40 completions at nc = 64: 6.6M),
// which one thread block per well would walk serially.
__global__ void well_completion_kernel(Params P, Mesh M, Wells W, const double* __restrict__ x,
                                       const double* __restrict__ props, double* __restrict__ J)
{
  const index_t c = blockIdx.x;
  int w = 0;
  while (W.comp_ptr[w + 1] <= c) ++w;
  well_completion_entries(P, M, W, x, props, J, w, c, threadIdx.x, blockDim.x);
}

__global__ void mass_kernel(Params P, Mesh M, const double* __restrict__ x, double* __restrict__ cell_scratch)
{
  const index_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < M.ncell) cell_mass(P, M, x, i, cell_scratch[2 * size64_t(i)], cell_scratch[2 * size64_t(i) + 1]);
}

constexpr int reduce_threads = 256;

// Per-component reductions over cells. Thread t serves component k = t % nc of the cells
// r = t / nc, r + rows, ... (rows = 256 / nc cells per sweep of the block), so consecutive
// threads read consecutive entries of R and x. mode 0 (norms): partial[b][k] = max |R_k|/m,
// [nc + k] = sum R_k, [2 nc] = sum m; mode 1 (in place): partial[b][k] = sum m x_k.
__global__ void __launch_bounds__(reduce_threads) reduce_kernel(Params P, Mesh M, const double* __restrict__ x,
                                                                const double* __restrict__ R,
                                                                const double* __restrict__ cell_scratch, int mode,
                                                                double* __restrict__ partial)
{
  __shared__ double sh_max[reduce_threads], sh_sum[reduce_threads], sh_mass[reduce_threads];
  const int nc = P.nc, rows = reduce_threads / nc;
  const int t = threadIdx.x, k = t % nc, r = t / nc;
  double mx = 0.0, sm = 0.0, sm_mass = 0.0;
  if (r < rows)
    for (index_t i = index_t(blockIdx.x) * rows + r; i < M.ncell; i += index_t(gridDim.x) * rows) {
      const double mass = cell_scratch[2 * size64_t(i)];
      if (mode == 0) {
        const double rr = R[size64_t(i) * nc + k];
        const double q = fabs(rr) / mass;
        mx = fmax(mx, q);
        if (q != q) sm += q;  // fmax drops NaN: carry it through the sum
        sm += rr;
        if (k == 0) sm_mass += mass;
      } else {
        const double xk = k < nc - 1 ? x[size64_t(i) * nc + 1 + k] : cell_scratch[2 * size64_t(i) + 1];
        sm += mass * xk;
      }
    }
  sh_max[t] = mx, sh_sum[t] = sm, sh_mass[t] = sm_mass;
  __syncthreads();
  const int nterms = mode == 0 ? num_norm_terms(nc) : nc;
  double* out = partial + size64_t(blockIdx.x) * nterms;
  if (t < nc) {
    double a = 0.0, s = 0.0;
    for (int q = 0; q < rows; ++q) {
      a = fmax(a, sh_max[t + q * nc]);
      s += sh_sum[t + q * nc];
    }
    if (mode == 0) {
      out[t] = a;
      out[nc + t] = s;
    } else {
      out[t] = s;
    }
  }
  if (mode == 0 && t == 0) {
    double s = 0.0;
    for (int q = 0; q < rows; ++q) s += sh_mass[q * nc];
    out[2 * nc] = s;
  }
}

// A thread per block entry (consecutive threads write consecutive doubles of a cell's block).
__global__ void accumulation_blocks_kernel(Params P, index_t ncell, const double* __restrict__ x,
                                           const double* __restrict__ props, double inv_dt, double* __restrict__ C)
{
  const int nn = P.nc * P.nc;
  const size64_t total = size64_t(ncell) * nn;
  for (size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x; t < total; t += size64_t(gridDim.x) * blockDim.x)
    C[t] = accumulation_block_entry(P, x, props, inv_dt, index_t(t / nn), int(t % nn));
}

__global__ void update_kernel(int nc, index_t ncell, double* __restrict__ x, const double* __restrict__ dx,
                              double max_dx, double max_dp_rel)
{
  const index_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < ncell) update_cell(nc, x, dx, i, max_dx, max_dp_rel);
}

// Runs the reduction and combines the block partials on the host in block order.
void reduce(stream_t s, const Params& P, const Mesh& M, const double* x, const double* R, int mode, double* out,
            double* workspace, std::size_t workspace_doubles, double* cell_scratch)
{
  const int nc = P.nc, nterms = mode == 0 ? num_norm_terms(nc) : nc;
  const int rows = reduce_threads / nc;
  if (M.ncell > 0) {
    mass_kernel<<<blocks_for(M.ncell, 256), 256, 0, s>>>(P, M, x, cell_scratch);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
  const size64_t cap = std::min<size64_t>(1024, size64_t(workspace_doubles) / nterms);
  if (cap < 1) throw std::logic_error("multicomponent reduction: workspace too small");
  const unsigned nb = static_cast<unsigned>(std::min<size64_t>(cap, blocks_for(M.ncell, rows)));
  reduce_kernel<<<nb, reduce_threads, 0, s>>>(P, M, x, R, cell_scratch, mode, workspace);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  std::vector<double> h(std::size_t(nb) * nterms);
  BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(h.data(), workspace, h.size() * sizeof(double), cudaMemcpyDeviceToHost, s));
  BLOCKRES_CUDA_CHECK(cudaStreamSynchronize(s));
  for (int q = 0; q < nterms; ++q) out[q] = 0.0;
  for (unsigned b = 0; b < nb; ++b)
    for (int q = 0; q < nterms; ++q) {
      const double v = h[std::size_t(b) * nterms + q];
      if (mode == 0 && q < nc)
        out[q] = v != v ? v : std::max(out[q], v);
      else
        out[q] += v;
    }
}

}  // namespace

void cell_props(stream_t s, const Params& P, const Mesh& M, const double* x, const double* x0, double* props)
{
  if (M.ncell == 0) return;
  const std::size_t shared = sizeof(double) * props_cells * std::size_t(props_stride(P.nc));
  if (shared > 48 * 1024)
    BLOCKRES_CUDA_CHECK(cudaFuncSetAttribute(props_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  props_kernel<<<blocks_for(M.ncell, props_cells), props_cells, shared, s>>>(P, M, x, x0, props);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

// The one size-class dispatch of pass 2 (layouts: multicomponent_cuda.cuh).
void assemble_cells(stream_t s, const Params& P, const Mesh& M, const double* x, const double* x0, const double* props,
                    double dt, double* R, double* J)
{
  if (M.ncell == 0) return;
  switch (P.nc) {
    case 1: return assemble_cells_fixed<1>(s, P, M, x, x0, props, dt, R, J);
    case 2: return assemble_cells_fixed<2>(s, P, M, x, x0, props, dt, R, J);
    case 3: return assemble_cells_fixed<3>(s, P, M, x, x0, props, dt, R, J);
    case 4: return assemble_cells_fixed<4>(s, P, M, x, x0, props, dt, R, J);
    case 8: return assemble_cells_fixed<8>(s, P, M, x, x0, props, dt, R, J);
    case 16: return assemble_cells_fixed<16>(s, P, M, x, x0, props, dt, R, J);
    case 32: return assemble_cells_fixed<32>(s, P, M, x, x0, props, dt, R, J);
    case 64: return assemble_cells_fixed<64>(s, P, M, x, x0, props, dt, R, J);
    default: break;
  }
  if (P.nc < 1 || P.nc > max_components) throw std::invalid_argument("multicomponent: nc out of 1..64");
  // Run-time nc (5..63 outside the fixed sizes): entries per lane ceil(nc^2 / group).
  if (P.nc <= 32)
    detail::launch_cells_group<0, 4>(s, P, M, x, x0, props, dt, R, J, detail::group_layout(P.nc).group);
  else
    detail::launch_cells_group<0, 16>(s, P, M, x, x0, props, dt, R, J, detail::group_layout(P.nc).group);
}

void prepare_wells(stream_t s, const Params& P, const Wells& W, const double* x)
{
  if (W.nwell == 0) return;
  prepare_wells_kernel<<<blocks_for(W.nwell, 32), 32, 0, s>>>(P, W, x);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void assemble_wells(stream_t s, const Params& P, const Mesh& M, const Wells& W, const double* x, const double* props,
                    double* R, double* J)
{
  if (W.nwell == 0) return;
  well_setup_kernel<<<W.nwell, 32, 0, s>>>(P, W, x, props);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  well_rates_kernel<<<W.nwell, 32, 0, s>>>(P, W, x, props, R);
  BLOCKRES_CUDA_CHECK_LAUNCH();
  if (W.ncompletion > 0) {
    well_completion_kernel<<<static_cast<unsigned>(W.ncompletion), 256, 0, s>>>(P, M, W, x, props, J);
    BLOCKRES_CUDA_CHECK_LAUNCH();
  }
}

void norm_terms(stream_t s, const Params& P, const Mesh& M, const double* x, const double* R, double* out,
                double* workspace, std::size_t workspace_doubles, double* cell_scratch)
{
  reduce(s, P, M, x, R, 0, out, workspace, workspace_doubles, cell_scratch);
}

void in_place(stream_t s, const Params& P, const Mesh& M, const double* x, double* out, double* workspace,
              std::size_t workspace_doubles, double* cell_scratch)
{
  reduce(s, P, M, x, nullptr, 1, out, workspace, workspace_doubles, cell_scratch);
}

void accumulation_blocks(stream_t s, const Params& P, const Mesh& M, const double* x, const double* props, double dt,
                         double* C)
{
  if (M.ncell == 0) return;
  const size64_t total = size64_t(M.ncell) * P.nc * P.nc;
  accumulation_blocks_kernel<<<cuda_detail::grid_for(total, 256), 256, 0, s>>>(P, M.ncell, x, props, 1.0 / dt, C);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

void update(stream_t s, int nc, index_t ncell, double* x, const double* dx, double max_dx, double max_dp_rel)
{
  if (ncell == 0) return;
  update_kernel<<<blocks_for(ncell, 256), 256, 0, s>>>(nc, ncell, x, dx, max_dx, max_dp_rel);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::physics::multicomponent::cuda
