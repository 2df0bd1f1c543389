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
  // From `blockres bench bsrmv --tune` on an H100 (2026-11-26, 1 GB per matrix, every bs 1-64 on the 3D
  // 7- and 27-point stencils; verification/results/bsrmv_rule_h100_2026-11-26.txt): per block size
  // the configuration whose slower stencil is fastest, written in general form where one exists.
  // Small blocks: staged row slices (values through shared memory) or thread arrays with 16-byte
  // loads; 12..60: staged with 4 groups per row (8 for some odd sizes) and as many block rows per
  // thread block as fit 256 threads; odd sizes above 50 and 61..64: the lane-group kernel with
  // the rows of each block split over two thread blocks.
  auto staged = [](int groups, int arrays, int unroll) { return BsrmvConfig{K::staged, 1, unroll, 1, 1, groups, arrays}; };
  auto medium = [](int groups, int arrays, int unroll, bool clamped) {
    return BsrmvConfig{K::medium, 1, unroll, 1, 1, groups, arrays, clamped};
  };
  if (bs <= 2) return staged(1, 128, 4);
  if (bs == 3) return staged(2, 32, 2);
  if (bs == 4) return medium(4, 8, 4, true);
  if (bs == 5) return medium(2, 16, 2, false);
  if (bs == 6) return staged(2, 16, 2);
  if (bs == 7) return medium(4, 2, 2, false);
  if (bs == 8) return medium(4, 8, 1, false);
  if (bs <= 11) return medium(4, 4, 2, false);
  if (bs == 12) return staged(2, 8, 1);
  if (bs <= 60 && !(bs % 2 == 1 && bs > 50)) {
    const bool eight = bs == 13 || bs == 15 || bs == 19 || bs == 21 || bs == 23;
    const int groups = eight ? 8 : 4;
    int arrays = 1;
    while (2 * arrays * bs * groups <= 256) arrays *= 2;
    return staged(groups, arrays, bs <= 17 ? 2 : 1);
  }
  if (bs == 63) return {K::large, 8, 2, 1, 4, 1, 1};
  return {K::large, bs < 56 ? 4 : 8, bs == 64 ? 1 : 2, 1, 2, 1, 1};
}

}  // namespace

BsrmvConfig bsrmv_default_config(int bs, std::string_view gpu_name)
{
  for (const auto& e : table)
    if (e.bs == bs && e.gpu == gpu_name) return e.config;
  return rule(bs);
}

}  // namespace blockres::kernels::cuda
