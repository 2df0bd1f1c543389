// BSRMV's built-in rule: the configuration a block size gets when no tuning cache measured one on
// the device (`blockres tune`, miniapp/tune/; the cache is read by miniapp/io/tuning_cache.hpp and
// held by the executor, linalg/kernel_tuning.hpp). No per-GPU table lives in the source.
#include "kernels/spmv/bsrmv.hpp"
#include "kernels/spmv/bsrmv_space.hpp"

namespace blockres::kernels::cuda {

using K = BsrmvKernel;

BsrmvConfig bsrmv_rule(int bs, [[maybe_unused]] double dram_gbps_per_sm)
{
  // From `blockres tune --size-gb 1` on an H200 (2026-11-26, after the staged kernel's 16-byte copies
  // at every bs and its conflict-free shared-memory layout, with the clean L2 scrub; every compiled
  // configuration of bs 1-64 on the 3D 7- and 27-point stencils): per block size the configuration
  // whose slower stencil reaches the largest fraction of the read-only stream; at bs 5, 20 and 24 the
  // H100's choice (bsrmv_rule_h100_2026-11-26), within 2 points of the best on the H200 and 3-26
  // points better on the H100 (27-point stencil). Checked with `bench bsrmv --tuning-cache none` on
  // an H200 and an H100 (verification/results/bsrmv_rule_*_s30_2026-11-26*: 92 and 123 of 128 rows
  // at 85% of the read stream; bsrmv_s30_2026-11-26.txt). A rule per block size, not per GPU: a device
  // that differs is measured by `blockres tune`. At bs 3, 17 and 18 the two cards prefer different
  // kernels (thread arrays on the H200, staged on the H100) and no configuration reaches 85% on both
  // (tune1_h100_s30 and tune1_h200_s29, every configuration at 1 GB): at bs 3 and 18 the rule takes the
  // staged configuration that brings the H100 over 85% (87.3% and 91.3% by the slower stencil, from
  // 75.9% and 79.6%) where the H200 stays under it either way (72.0% and 77.6%, from 75.5% and 82.0%);
  // at bs 17 the thread arrays keep the H200 at 88.9% (the H100 at 75.9%). Those two changes are
  // from the tune runs; the rule bench has not been re-run with them.
  // Small blocks: staged rows (values through shared memory); 4..17: thread arrays reading
  // their row slices directly (16-byte loads where even); 18..56 (but 31, 32, 46..48): staged with 4
  // (or 2) groups per row and as many block rows per thread block as fit 256 threads; 31: lane groups;
  // 32, 46..48 and 53..64 (but 56): lane groups with each block's rows split over 4 (2 at bs 64)
  // thread blocks.
  auto staged = [](int groups, int arrays, int unroll) { return BsrmvConfig{K::staged, 1, unroll, 1, 1, groups, arrays}; };
  auto medium = [](int groups, int arrays, int unroll, bool clamped) {
    return BsrmvConfig{K::medium, 1, unroll, 1, 1, groups, arrays, clamped};
  };
  auto large = [](int warps, int unroll, int split) { return BsrmvConfig{K::large, warps, unroll, 1, split, 1, 1}; };
  switch (bs) {
    case 1:
    case 2: return staged(1, 128, 4);
    case 3: return staged(1, 64, 2);
    case 4: return medium(2, 8, 4, true);
    case 5: return medium(2, 16, 2, false);
    case 6: return medium(2, 4, 2, true);
    case 7: return medium(4, 8, 1, true);
    case 8: return medium(4, 4, 2, true);
    case 9:
    case 10: return medium(4, 4, 1, true);
    case 11: return medium(4, 2, 1, true);
    case 12: return medium(4, 4, 2, true);
    case 13: return medium(4, 1, 1, false);
    case 14: return medium(4, 2, 4, true);
    case 15: return medium(4, 1, 2, false);
    case 16: return medium(4, 1, 1, true);
    case 17: return medium(4, 1, 2, true);
    case 18: return staged(2, 2, 1);
    case 21:
    case 22:
    case 25: return staged(4, 2, 2);
    case 26: return staged(2, 2, 1);
    case 29: return staged(4, 1, 1);
    case 30: return staged(2, 1, 1);
    case 31: return {K::wide, 4, 2, 1, 1, 1, 1};
    case 32: return large(4, 2, 4);
    case 46:
    case 47:
    case 48: return large(4, 2, 4);
    case 56: return staged(4, 1, 1);
    case 64: return large(8, 1, 2);
    default: break;
  }
  if (bs <= 52) {  // 19, 20, 23, 24, 27, 28, 33..45, 49..52: staged, 4 groups, as many rows as fit 256 threads
    int arrays = 1;
    while (2 * arrays * bs * 4 <= 256) arrays *= 2;
    return staged(4, arrays, 1);
  }
  return large(8, 2, 4);  // 53..55, 57..63
}

}  // namespace blockres::kernels::cuda
