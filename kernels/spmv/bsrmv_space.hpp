// The BSRMV tuning search space: which configurations exist for a block size (shared by the
// CUDA instantiations, the dispatch, the tuning table and its fallback rule).
#pragma once

namespace blockres::kernels::cuda_bsrmv {

constexpr int pow2ceil(int n)
{
  int p = 1;
  while (p < n) p *= 2;
  return p;
}
constexpr bool is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

// medium / large: lane groups of W lanes, ept rows per thread.
constexpr int group_width(int bs) { return bs >= 32 ? 32 : pow2ceil(bs); }

// Rows per thread for a configuration, 0 when the configuration is not in the search space
// (too many rows per thread, or idle lane groups with more than one warp).
constexpr int medium_ept(int bs, int warps, int row_split)
{
  const int groups = warps * (32 / group_width(bs));
  const int rows = (bs + row_split - 1) / row_split;
  if (groups > rows && warps > 1) return 0;
  const int ept = (rows + groups - 1) / groups;
  return ept <= 8 ? ept : 0;
}
constexpr int medium_warps[] = {1, 2, 4, 8};
constexpr int large_min_bs = 24;
constexpr int large_splits[] = {2, 4};
constexpr bool medium_ept_used(int bs, int ept)
{
  for (int w : medium_warps) {
    if (medium_ept(bs, w, 1) == ept) return true;
    if (bs >= large_min_bs)
      for (int y : large_splits)
        if (medium_ept(bs, w, y) == ept) return true;
  }
  return false;
}

// medium (row slices): ept = ceil(bs / groups) columns per thread; U blocks in flight.
constexpr int slice_groups[] = {1, 2, 4};
constexpr int slice_arrays[] = {1, 2, 4, 8, 16, 32, 64, 128};  // thread blocks of at most 256 threads
constexpr int slice_unrolls[] = {1, 2};             // predicated row tail
constexpr int slice_clamped_unrolls[] = {1, 2, 4, 8};  // clamped row tail
constexpr bool slice_used(int bs, int groups, int unroll)
{
  const int ept = (bs + groups - 1) / groups;
  return groups <= bs && ept * unroll <= 24 && bs * groups <= 256;
}

// staged (medium layout, values through shared memory). Up to bs 12 one or two groups per row and
// up to 4 blocks in flight; above, 2, 4 or 8 groups and 1 or 2 blocks (at most 16 columns per thread
// and pass), so that large odd block sizes stream their values coalesced whatever bs is.
constexpr int staged_small_max_bs = 12;
constexpr int staged_groups[] = {1, 2, 4, 8};
constexpr int staged_unrolls[] = {1, 2, 4};
constexpr bool staged_used(int bs, int groups, int unroll)
{
  const int ept = (bs + groups - 1) / groups;
  if (groups > bs || bs * groups > 256) return false;
  if (bs <= staged_small_max_bs) return groups <= 2 && ept * unroll <= 24;
  return groups >= 2 && unroll <= 2 && ept * unroll <= 16;
}

}  // namespace blockres::kernels::cuda_bsrmv
