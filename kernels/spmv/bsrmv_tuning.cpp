// BSRMV's built-in rule: the configuration a block size gets when no tuning cache measured one on
// the device (`blockres tune`, miniapp/tune/; the cache is read by miniapp/io/tuning_cache.hpp and
// held by the executor, linalg/kernel_tuning.hpp). No per-GPU table lives in the source.
#include "kernels/spmv/bsrmv.hpp"
#include "kernels/spmv/bsrmv_space.hpp"

namespace blockres::kernels::cuda {

using K = BsrmvKernel;

BsrmvConfig bsrmv_rule(int bs, double dram_gbps_per_sm, double mean_row_blocks)
{
  // Provenance. Every configuration of bs 1-64 on the 3D 7- and 27-point stencils at 1 GB was timed
  // by `blockres tune --size-gb 1` on an H200 (verification/results/tune1_h200_s29_2026-11-26.json,
  // at cddb144) and on an H100 (tune1_h100_s30_2026-11-26.json, at d84adab). Below the bandwidth
  // threshold the rule is, at every block size but 3, 5, 17, 18, 20 and 24, the configuration whose
  // slower stencil reaches the largest fraction of the read-only stream in the H200 tune; at those six
  // it takes a configuration that serves the H100 (see below). These choices were checked untuned
  // (`bench bsrmv --tuning-cache none` at cc0c12b, which ran today's above-threshold choice at bs 17
  // on both cards): 126 of 128 (bs, stencil) rows at 85% of the read stream on an H100
  // (bsrmv_rule_h100_s31_2026-11-27.{txt,json}), 91 on an H200 (bsrmv_rule_h200_s32_2026-11-27.*).
  // Since the H200 tune only the staged kernel's bs 1 chunk changed (f182500); the configurations it
  // timed at bs 2-64 are today's code.
  //
  // The key. The H100 and the H200 have the same 132 SMs and compute capability; the H200 has
  // 1.43x the DRAM bandwidth: 36.4 against 25.4 GB/s per SM (nominal 4.8 and 3.35 TB/s). Where
  // no configuration reaches 85% on both cards (bs 17), and where the H200's tune has one that brings
  // a row to 85% but the H100's rule bench measured another (bs 18, 26), the rule keys on that
  // bandwidth per SM, with the threshold between the two cards (30 GB/s; their geometric mean is
  // 30.4). No per-GPU table: a device near the threshold (an H100 NVL at about 29.5, a GH200 with
  // HBM3 at about 30.3) is a guess either way, and `blockres tune` measures any device.
  //   bs 17: below, medium 4 groups x 2 arrays, unroll 2 (the H100 tune: 93.1% / 92.0% of the
  //     read stream on the 7- / 27-point stencil; the H200 tune: 77.0% / 82.4%); above, medium
  //     4 x 1, unroll 2, clamped (the H200 rule bench: 88.8% / 88.5%; the H100's: 79.4% / 75.1%).
  //     The H100 branch is predicted from its tune; not yet re-measured with the rule bench.
  //   bs 18: above, staged 2 groups x 4 arrays (the H200 tune: 86.5% / 77.1%, against 77.7% /
  //     78.2% in its rule bench with staged 2 x 2); below, staged 2 x 2 (the H100 rule bench: 93.0%
  //     / 90.1%; 2 x 4 would also pass there, 94.8% / 89.3% in its tune, but 2 x 2 is the measured one).
  //   bs 26: above, staged 8 groups x 1 array (the H200 tune: 78.3% / 89.6%, against 83.6% / 81.0% in
  //     its rule bench with staged 2 x 2); below, staged 2 x 2 (the H100 rule bench: 93.4% / 90.9%;
  //     its tune has 8 x 1 at 94.7% / 97.3%, so the branches could merge after an H100 bench).
  // The choices above the threshold are predicted from the H200 tune (one run; on the rule's own
  // configurations its fractions were within -1.8..+3.6 points of the rule bench, median +0.2); bs 18
  // and 26 were since measured on an H200 with the configurations above (bs 18 7-point 87.5%, bs 26
  // 27-point 90.5% and 7-point 79.7%, each within 1.5 points of the tune). Of the 35 H200 rows under
  // 85% with the bandwidth key alone, 19 have no compiled configuration at 85% on that stencil in the
  // H200 tune (the kernels' limit: bs 3, 19, 21, 27 and 33-35 on both stencils, 1, 2, 23 and 38 on
  // the 27-point one, 25 on the 7-point one); at the other 16 (bs 2, 5, 18, 22, 26, 29, 42, 43,
  // 45-47, 49, 50, 53-55) one configuration reaches 85% on the stencil that misses but loses the other
  // stencil more, so one configuration per block size cannot serve both.
  //
  // The row length. Above the bandwidth threshold six of those 16 split on the matrix's mean blocks
  // per block row (nonzero blocks / block rows), at 16 (bsrmv_rule_long_row_blocks): the 7-point
  // stencil has 6.6-7.0 blocks a row (boundary rows are shorter), the 27-point one 22-26.6 (at 1 GB),
  // so 16 is well clear of both, and a row of more than 16 blocks is a long row. The reservoir
  // Jacobians (oil-water and multicomponent on 3D grids: physics/wells.cpp, jacobian_pattern, the TPFA
  // faces and the completions of rate-controlled wells) have 7-point rows, about 6.8-6.9 blocks a row
  // with the boundary: they take the short-row choices, as does an unknown length (0). At each of the
  // six the stencil that passed keeps the configuration it had (as measured in the H200 rule bench,
  // bsrmv_rule_h200_s32_2026-11-27) and the stencil that missed takes its own best configuration in
  // the H200 tune (tune1_h200_s29_2026-11-26.json), taken only where that tune reads at least 87% (a
  // margin over 85% for the tune's error against the bench, up to about 1.5 points):
  //   bs 22, short rows: staged 2 groups x 4 arrays (tune 88.6% on the 7-point, where the rule bench
  //     read 82.2% with staged 4 x 2, unroll 2, which long rows keep: 86.3%);
  //   bs 45, long rows: large, 4 warps, unroll 2, 4 thread blocks a row (tune 88.5% on the 27-point,
  //     bench 84.9% with staged 4 x 1, which short rows keep: 86.6%);
  //   bs 46, 47, short rows: staged 4 x 1 (tune 88.0%, 89.5% on the 7-point, bench 83.0%, 84.2% with
  //     large 4 warps, unroll 2, split 4, which long rows keep: 89.3%, 90.3%);
  //   bs 54, 55, short rows: staged 4 x 1 (tune 88.2%, 89.1% on the 7-point, bench 83.4%, 84.8% with
  //     large 8 warps, unroll 2, split 4, which long rows keep: 87.6%, 88.1%).
  // In the H200 rule bench the staged kernel read -0.5..+0.8 points of its tune on the 7-point
  // stencil at bs 40-56 and the large kernel 0.6-1.6 points under it on the 27-point one. Not taken
  // (tune under 87% on the stencil that misses): bs 43 (large 4 x 2 x 4, 86.95% on the 27-point;
  // with the large kernel's bias about 86% measured), 53 (staged 4 x 1, 86.7% on the 7-point), and
  // 2, 5, 18, 26, 29, 42, 49, 50 (85.1-85.9%). The row-length choices are predicted from the tune,
  // not yet measured with the bench on an H200 (`blockres bench bsrmv --tuning-cache none`).
  // Predicted: 128 of 128 rows on the H100 (unchanged), 99 on the H200 (93 + 6).
  // A tuning cache stays one configuration per block size (`blockres tune` chooses by the sum of the
  // two stencils' times); the row length keys only this built-in rule.
  //
  // Kernels: small blocks: staged rows (values through shared memory); 4..17: thread arrays reading
  // their row slices directly (16-byte loads where even); 18..56 (but 31, 32, 46..48): staged with 4
  // (or 2, or 8) groups per row and as many block rows per thread block as fit 256 threads; 31: lane
  // groups; 32, 46..48 and 53..64 (but 56): lane groups with each block's rows split over 4 (2 at
  // bs 64) thread blocks; above the bandwidth threshold, long rows at bs 45 take the split lane
  // groups and short rows at 46, 47, 54 and 55 staged (the row length, above). At bs 3 the cards
  // also disagree (thread arrays on the H200, staged on the H100), but no configuration reaches 85%
  // on the H200 there: both take staged, 87.3% on the H100.
  // At bs 5, 20 and 24 the H100's choice is within 2 points of the H200's best (by the slower stencil)
  // and 11-25 points better on the H100's 27-point stencil (the two tunes); the H200 gains no row
  // at 85% with its own best there, so both sides take the H100's.
  const bool high_bandwidth = dram_gbps_per_sm > bsrmv_rule_high_bandwidth_gbps_per_sm;
  // Only above the bandwidth threshold: the H100's choices do not depend on the row length.
  const bool high_short = high_bandwidth && !(mean_row_blocks > bsrmv_rule_long_row_blocks);
  const bool high_long = high_bandwidth && mean_row_blocks > bsrmv_rule_long_row_blocks;
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
    case 17: return high_bandwidth ? medium(4, 1, 2, true) : medium(4, 2, 2, false);
    case 18: return high_bandwidth ? staged(2, 4, 1) : staged(2, 2, 1);
    case 21:
    case 25: return staged(4, 2, 2);
    case 22: return high_short ? staged(2, 4, 1) : staged(4, 2, 2);
    case 26: return high_bandwidth ? staged(8, 1, 1) : staged(2, 2, 1);
    case 29: return staged(4, 1, 1);
    case 30: return staged(2, 1, 1);
    case 31: return {K::wide, 4, 2, 1, 1, 1, 1};
    case 32: return large(4, 2, 4);
    case 45:
      if (high_long) return large(4, 2, 4);
      break;  // staged 4 x 1, below
    case 46:
    case 47: return high_short ? staged(4, 1, 1) : large(4, 2, 4);
    case 48: return large(4, 2, 4);
    case 54:
    case 55:
      if (high_short) return staged(4, 1, 1);
      break;  // large 8 x 2 x 4, below
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
