// BSRMV's built-in rule: the configuration a block size gets when no tuning cache measured one on
// the device (`blockres tune`, miniapp/tune/; the cache is read by miniapp/io/tuning_cache.hpp and
// held by the executor, linalg/kernel_tuning.hpp). No per-GPU table lives in the source.
#include "kernels/spmv/bsrmv.hpp"
#include "kernels/spmv/bsrmv_space.hpp"

namespace blockres::kernels::cuda {

using K = BsrmvKernel;

BsrmvConfig bsrmv_rule(int bs)
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

}  // namespace blockres::kernels::cuda
