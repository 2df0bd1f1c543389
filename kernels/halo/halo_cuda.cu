#include "kernels/cuda_check.hpp"
#include "kernels/halo/halo.hpp"
#include "kernels/launch.cuh"

namespace blockres::kernels::cuda {

namespace {

// One thread per entry (consecutive threads: consecutive entries of a block, coalesced reads within a block).
__global__ void halo_pack_kernel(const double* __restrict__ x, const index_t* __restrict__ ids, size64_t total, int bs,
                                 double* __restrict__ out)
{
  for (size64_t e = size64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += size64_t(gridDim.x) * blockDim.x) {
    const size64_t i = e / bs, c = e - i * bs;
    out[e] = x[size64_t(ids[i]) * bs + c];
  }
}

}  // namespace

void halo_pack(stream_t s, const double* x, const index_t* ids, index_t n, int bs, double* out)
{
  const size64_t total = size64_t(n) * bs;
  if (total <= 0) return;
  halo_pack_kernel<<<cuda_detail::grid_for(total), cuda_detail::default_block, 0, s>>>(x, ids, total, bs, out);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::kernels::cuda
