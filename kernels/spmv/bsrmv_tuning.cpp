// BSRMV default configuration per GPU model and block size: the table below holds what
// `blockres bench bsrmv --tune` measured as fastest on the 3D 7-point stencil (paste its
// output here); block sizes and GPUs not in the table fall back to a rule.
#include "kernels/spmv/bsrmv.hpp"
#include "kernels/spmv/bsrmv_space.hpp"

#include <string_view>

namespace blockres::kernels::cuda {

namespace {

using K = BsrmvKernel;

struct Entry {
  std::string_view gpu;
  int bs;
  BsrmvConfig config;  // kernel, warps, unroll, rows_per_warp, row_split, groups, arrays[, clamped]
};

// clang-format off
constexpr Entry table[] = {
  // From `blockres bench bsrmv --tune` on the H200, 2026-11-21 (7-point stencil, ~3 GB of
  // matrix per block size; % of the device-to-device copy bandwidth measured in the same run;
  // verification/results/bsrmv_h200_2026-11-21b_{1,2}.txt).
  // gpu             bs  kernel    warps unroll rows/warp split groups arrays [clamped]   % of copy
  {"NVIDIA H200",   1, {K::medium, 1, 4, 1, 1, 1, 32, true}},  //  82.2
  {"NVIDIA H200",   2, {K::staged, 1, 4, 1, 1, 1, 128}},  //  89.9
  {"NVIDIA H200",   3, {K::staged, 1, 1, 1, 1, 1, 64}},  //  86.0
  {"NVIDIA H200",   4, {K::medium, 1, 1, 1, 1, 2, 8}},  // 102.2
  {"NVIDIA H200",   5, {K::medium, 1, 1, 1, 1, 2, 8, true}},  //  90.1
  {"NVIDIA H200",   6, {K::staged, 1, 2, 1, 1, 1, 32}},  //  94.5
  {"NVIDIA H200",   7, {K::medium, 1, 1, 1, 1, 4, 8, true}},  //  89.0
  {"NVIDIA H200",   8, {K::medium, 1, 2, 1, 1, 4, 4, true}},  // 100.9
  {"NVIDIA H200",  10, {K::medium, 1, 1, 1, 1, 4, 4, true}},  //  97.0
  {"NVIDIA H200",  12, {K::medium, 1, 2, 1, 1, 4, 4, true}},  // 100.0
  {"NVIDIA H200",  16, {K::medium, 1, 1, 1, 1, 4, 2, true}},  // 102.4
  {"NVIDIA H200",  20, {K::medium, 1, 2, 1, 1, 2, 4}},  //  91.0
  {"NVIDIA H200",  24, {K::medium, 1, 1, 1, 1, 4, 2}},  //  98.5
  {"NVIDIA H200",  32, {K::large,  4, 2, 1, 4, 1, 1}},  // 102.6
  {"NVIDIA H200",  40, {K::medium, 1, 2, 1, 1, 4, 1}},  //  90.8
  {"NVIDIA H200",  48, {K::large,  4, 2, 1, 4, 1, 1}},  //  92.9
  {"NVIDIA H200",  64, {K::large,  8, 1, 1, 2, 1, 1}},  // 106.7
};
// clang-format on

BsrmvConfig rule(int bs)
{
  // What the H200 table shows, in general form: staged row slices for bs 2-3, thread arrays
  // of about 64 threads with 2-4 groups per row up to bs 40, the lane-group kernels above.
  if (bs == 1) return {K::medium, 1, 4, 1, 1, 1, 32, true};
  if (bs <= 3) return {K::staged, 1, 2, 1, 1, 1, bs == 2 ? 128 : 64};
  if (bs <= 40) {
    const int groups = bs < 7 ? 2 : 4;
    int arrays = 1;
    while (2 * arrays * bs * groups <= 64) arrays *= 2;
    return {K::medium, 1, 1, 1, 1, groups, arrays, true};
  }
  // Fewest warps that keep at most two rows per thread; large blocks split their rows.
  const int split = bs >= 48 ? 2 : 1;
  for (int w : cuda_bsrmv::medium_warps) {
    const int ept = cuda_bsrmv::medium_ept(bs, w, split);
    if (ept > 0 && ept <= 2) return {split > 1 ? K::large : K::wide, w, 2, 1, split, 1, 1};
  }
  return {split > 1 ? K::large : K::wide, 8, 2, 1, split, 1, 1};
}

}  // namespace

BsrmvConfig bsrmv_default_config(int bs, std::string_view gpu_name)
{
  for (const auto& e : table)
    if (e.bs == bs && e.gpu == gpu_name) return e.config;
  return rule(bs);
}

}  // namespace blockres::kernels::cuda
