// BSRMV's built-in rule: the configuration a block size gets when no tuning cache measured one on
// the device (`blockres tune`, miniapp/tune/; the cache is read by miniapp/io/tuning_cache.hpp and
// held by the executor, linalg/kernel_tuning.hpp). No per-GPU table lives in the source.
#include "kernels/spmv/bsrmv.hpp"
#include "kernels/spmv/bsrmv_space.hpp"

namespace blockres::kernels::cuda {

using K = BsrmvKernel;

BsrmvConfig bsrmv_rule(int bs)
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

}  // namespace blockres::kernels::cuda
