// BSRMV dispatch: run-time block size and configuration -> compiled kernel variant; the tuning
// search space; the segment reduction of the balanced variant.
#include "kernels/spmv/bsrmv_cuda.cuh"
#include "kernels/launch.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace blockres::kernels {

namespace cuda {

namespace {

using namespace cuda_bsrmv;

const std::vector<Variant>& registry()
{
  static const std::vector<Variant> variants = [] {
    std::vector<Variant> v;
    add_variants_1_8(v);
    add_variants_9_16(v);
    add_variants_17_24(v);
    add_variants_25_32(v);
    add_variants_33_40(v);
    add_variants_41_48(v);
    add_variants_49_56(v);
    add_variants_57_64(v);
    return v;
  }();
  return variants;
}

const Variant* find_variant(int bs, const BsrmvConfig& c)
{
  int kind = variant_small, param = 1;
  switch (c.kernel) {
    case BsrmvKernel::small:
      if (c.rows_per_warp < 1 || c.rows_per_warp % c.unroll != 0 || c.warps < 1 || c.warps > 8) return nullptr;
      break;
    case BsrmvKernel::medium:
    case BsrmvKernel::staged:
      kind = c.kernel == BsrmvKernel::medium ? variant_slice : variant_staged, param = c.groups;
      if (c.arrays < 1 || c.arrays * bs * c.groups > 256) return nullptr;
      break;
    case BsrmvKernel::wide:
    case BsrmvKernel::large: {
      const int split = c.kernel == BsrmvKernel::large ? c.row_split : 1;
      if (c.kernel == BsrmvKernel::large && (bs < large_min_bs || split < 2)) return nullptr;
      if (std::find(std::begin(medium_warps), std::end(medium_warps), c.warps) == std::end(medium_warps)) return nullptr;
      kind = variant_wide, param = medium_ept(bs, c.warps, split);
      if (param == 0) return nullptr;
      break;
    }
  }
  for (const auto& v : registry())
    if (v.bs == bs && v.kind == kind && v.param == param && v.unroll == c.unroll && v.clamped == c.clamped) return &v;
  return nullptr;
}

__global__ void segment_reduce_kernel(index_t nrows, int bs, const index_t* __restrict__ seg_ptr,
                                      const double* __restrict__ partial, double alpha, double beta,
                                      double* __restrict__ y)
{
  const size64_t t = blockIdx.x * size64_t(blockDim.x) + threadIdx.x;
  if (t >= size64_t(nrows) * bs) return;
  const size64_t r = t / bs;
  const int i = static_cast<int>(t % bs);
  double s = 0.0;
  for (index_t g = seg_ptr[r]; g < seg_ptr[r + 1]; ++g) s += partial[size64_t(g) * bs + i];
  y[t] = beta == 0.0 ? alpha * s : alpha * s + beta * y[t];
}

}  // namespace

std::vector<BsrmvConfig> bsrmv_configs(int bs)
{
  std::vector<BsrmvConfig> out;
  auto add = [&](const BsrmvConfig& c) {
    if (find_variant(bs, c)) out.push_back(c);
  };
  using K = BsrmvKernel;
  if (bs * bs <= 32)
    for (int u : {1, 2, 4})
      for (int w : {4, 8})
        for (int rpw : {u, 4 * u}) add({K::small, w, u, rpw, 1, 1, 1});
  for (int u : slice_unrolls)
    for (int g : slice_groups)
      for (int a : slice_arrays) add({K::medium, 1, u, 1, 1, g, a, false});
  for (int u : slice_clamped_unrolls)
    for (int g : slice_groups)
      for (int a : slice_arrays) add({K::medium, 1, u, 1, 1, g, a, true});
  for (int u : staged_unrolls)
    for (int g : staged_groups)
      for (int a : slice_arrays) add({K::staged, 1, u, 1, 1, g, a});
  for (int u : {1, 2}) {
    for (int w : medium_warps) {
      add({K::wide, w, u, 1, 1, 1, 1});
      for (int y : large_splits) add({K::large, w, u, 1, y, 1, 1});
    }
  }
  return out;
}

void bsrmv(stream_t s, const BsrView<const double>& A, double alpha, const double* x, double beta, double* y,
           const BsrmvConfig& config)
{
  if (A.bs < 1 || A.bs > 64) throw std::invalid_argument(fmt::format("bsrmv: block size {} is not in 1..64", A.bs));
  const Variant* v = find_variant(A.bs, config);
  if (!v)
    throw std::invalid_argument(fmt::format("bsrmv: no compiled kernel for bs {} with {}", A.bs, describe(config)));
  if (A.nrows <= 0) return;
  v->launch(s, A, alpha, x, beta, y, config);
}

void segment_reduce(stream_t s, index_t nrows, int bs, const index_t* seg_ptr, const double* partial, double alpha,
                    double beta, double* y)
{
  if (nrows <= 0) return;
  const size64_t n = size64_t(nrows) * bs;
  const auto grid = static_cast<unsigned>((n + cuda_detail::default_block - 1) / cuda_detail::default_block);
  segment_reduce_kernel<<<grid, cuda_detail::default_block, 0, s>>>(nrows, bs, seg_ptr, partial, alpha, beta, y);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace cuda

}  // namespace blockres::kernels
