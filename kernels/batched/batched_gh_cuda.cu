// Host side of the CUDA batched Gauss–Huard / Gauss–Jordan kernels: argument checks and the one
// place where the run-time max_size becomes the compile-time lane-group width.
#include "kernels/batched/batched_gh_cuda.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace blockres::kernels::cuda {

namespace {

// Throws on arguments no kernel can handle; returns false when there is nothing to do.
bool check_layout(const BatchLayout& L, const char* who)
{
  const std::string w(who);
  if (L.count < 0) throw std::invalid_argument(w + ": negative batch count " + std::to_string(L.count));
  if (L.max_size < 1 || L.max_size > batched_gh_max_size)
    throw std::invalid_argument(w + ": max_size " + std::to_string(L.max_size) + " outside the supported range 1.." +
                                std::to_string(batched_gh_max_size));
  if (L.uniform > 0 && L.uniform != L.max_size)
    throw std::invalid_argument(w + ": uniform block size " + std::to_string(L.uniform) + " but max_size " +
                                std::to_string(L.max_size));
  if (L.uniform <= 0 && L.count > 0 && (L.row_off == nullptr || L.mat_off == nullptr))
    throw std::invalid_argument(w + ": variable-size layout without row_off / mat_off");
  return L.count > 0;
}

// Calls f(std::integral_constant<int, W>{}) with W = pow2ceil(max_size).
template <class F>
void dispatch_width(int max_size, F&& f)
{
  if (max_size <= 1) f(std::integral_constant<int, 1>{});
  else if (max_size <= 2) f(std::integral_constant<int, 2>{});
  else if (max_size <= 4) f(std::integral_constant<int, 4>{});
  else if (max_size <= 8) f(std::integral_constant<int, 8>{});
  else if (max_size <= 16) f(std::integral_constant<int, 16>{});
  else f(std::integral_constant<int, 32>{});
}

// Runs launch(sub-layout, W) once per lane-group width: the whole layout with W = pow2ceil(max_size), or,
// for a variable layout with a size index, each non-empty class (W/2, W] of blocks on its own blocks.
template <class F>
void for_each_class(const BatchLayout& L, F&& launch)
{
  if (L.uniform > 0 || L.by_size == nullptr) {
    dispatch_width(L.max_size, [&](auto w) { launch(L, w); });
    return;
  }
  for (int w = 1; w <= batched_gh_max_size; w *= 2) {
    const BatchLayout c = L.by_size->select(L, w == 1 ? 0 : w / 2 + 1, std::min(w, L.max_size));
    if (c.count > 0) dispatch_width(std::max(c.max_size, 1), [&](auto width) { launch(c, width); });
  }
  // Blocks larger than the layout's max_size (a caller's error the kernels flag: info -1, NaN outputs).
  BatchLayout over = L.by_size->select(L, L.max_size + 1, L.by_size->max_size());
  if (over.count > 0) {
    over.max_size = L.max_size;
    dispatch_width(L.max_size, [&](auto width) { launch(over, width); });
  }
}

}  // namespace

void gauss_huard_factor(stream_t s, const BatchLayout& L, double* a, index_t* perm, int* info, GhStorage storage)
{
  if (!check_layout(L, "gauss_huard_factor")) return;
  // Uniform 4..14 without a selection: a lane per block (launch_lane_factor), unless its stage does not fit. H200,
  // session 47, one call (issue 31, call 4), % of copy, group factor -> lane factor (standard; transposed): 4 62.4 ->
  // 90.6 (57.0 -> 90.2), 5 39.5 -> 88.4, 8 60.5 -> 79.1, 9 29.7 -> 71.7 (28.9 -> 69.7), 11 35.3 -> 62.7, 12 37.3 ->
  // 57.3 (33.4 -> 56.0), 13 38.5 -> 56.3, 14 40.0 -> 48.6 (33.1 -> 47.9). At 15 and 16 the lane factor is slower
  // (17.9 and 15.1; batched_gh_cuda.cuh says why) and the group factor keeps them.
  if (L.uniform >= 4 && L.uniform <= 14 && L.select == nullptr) {
    using FactorFn = bool (*)(stream_t, const BatchLayout&, double*, index_t*, int*, GhStorage);
#define BLOCKRES_GH_LANE_FACTOR_ENTRY(N, PREFIX) &cuda_gh::launch_lane_factor<N>,
    static constexpr FactorFn lane[] = {BLOCKRES_GH_LANE_FACTORS(BLOCKRES_GH_LANE_FACTOR_ENTRY, )};
#undef BLOCKRES_GH_LANE_FACTOR_ENTRY
    static_assert(std::size(lane) == 11, "lane factors for 4..14");
    if (lane[L.uniform - 4](s, L, a, perm, info, storage)) return;
  }
  for_each_class(L, [&](const BatchLayout& c, auto w) {
    cuda_gh::launch_factor<decltype(w)::value>(s, c, a, perm, info, storage);
  });
}

void gauss_huard_solve(stream_t s, const BatchLayout& L, const double* factors, const index_t* perm,
                       GhStorage storage, const double* b, double* x)
{
  if (!check_layout(L, "gauss_huard_solve")) return;
  // Uniform 4..29 without a selection: a lane per block (launch_lane_solve), unless its stage does not fit. H200,
  // one call each (issue 31), % of copy, group solve -> lane solve (standard storage; transposed alike): session 45,
  // 32 blocks a warp: 4 82.1 -> 93.3, 5 54.0 -> 93.7, 9 54.1 -> 92.0, 11 63.3 -> 89.9, 14 72.3 -> 88.4, 15 75.8 ->
  // 98.4; session 46, fewer blocks a warp (cuda_lane::blocks_per_warp): 16 85.3 -> 91.4, 17 48.5 -> 86.8, 21 57.7 ->
  // 91.0, 22 58.6 -> 79.9, 24 63.6 -> 77.6, 26 63.7 -> 72.7, 28 65.1 -> 74.6, 29 65.5 -> 70.9. At 30..32 the group
  // solve stays (62.1-63.8; the lane solve at 8 blocks a warp 52.5-60.0, at 4 64.9-65.8).
  if (L.uniform >= 4 && L.uniform <= 29 && L.select == nullptr) {
    using LaneFn = bool (*)(stream_t, const BatchLayout&, const double*, const index_t*, GhStorage, const double*,
                            double*);
#define BLOCKRES_GH_LANE_ENTRY(N, PREFIX) &cuda_gh::launch_lane_solve<N>,
    static constexpr LaneFn lane[] = {BLOCKRES_GH_LANE_SOLVES_4_8(BLOCKRES_GH_LANE_ENTRY, )
                                          BLOCKRES_GH_LANE_SOLVES_9_15(BLOCKRES_GH_LANE_ENTRY, )
                                              BLOCKRES_GH_LANE_SOLVES_16_29(BLOCKRES_GH_LANE_ENTRY, )};
#undef BLOCKRES_GH_LANE_ENTRY
    static_assert(sizeof(lane) / sizeof(lane[0]) == 26, "lane solves for 4..29");
    if (lane[L.uniform - 4](s, L, factors, perm, storage, b, x)) return;
  }
  // One launch on the whole layout, size index or not: the solve reads each block once, and visiting the
  // blocks class by class (sorted order) cost more than the idle lanes save. Mixed
  // 9..32 against the uniform batch of size 21, time per byte: H100 1.06x whole / 1.37x by class (transposed
  // 1.05x / 1.17x); H200 1.05x / 1.09x (2026-11-27, stops 35-37). The factorisations keep the classes.
  // (Session 46: the lane solves launched once per exact size 4..29 over the index's selections took the mixed
  // batch from 49.8 to 42.1% of copy on an H200: each size holds about 1/24 of the batch, a few waves at three
  // to five warps an SM, and the launches' tails cost more than the lanes save. Since the uniform batch of 21
  // rows reached 90% with the lane solve, the mixed batch is 1.8x its time per byte. Session 47's one launch per
  // tier of sizes lost too (41.0%). Not the memory order: session 48 read block-sized chunks in 24 interleaved
  // classes and in random order within 6% of in order (verification/experiments/gather_order.cu); the lane
  // kernels on selections lose by their fewer blocks in flight, issue31_s48_2026-11-28.txt section 1.)
  dispatch_width(L.max_size, [&](auto w) {
    cuda_gh::launch_solve<decltype(w)::value>(s, L, factors, perm, storage, b, x);
  });
}

void gauss_jordan_invert(stream_t s, const BatchLayout& L, double* a, int* info)
{
  if (!check_layout(L, "gauss_jordan_invert")) return;
  for_each_class(L, [&](const BatchLayout& c, auto w) { cuda_gh::launch_invert<decltype(w)::value>(s, c, a, info); });
}

namespace {
template <class T>
void gemv_dispatch(stream_t s, const BatchLayout& L, const T* inv, const double* x, double* y)
{
  if (!check_layout(L, "block_diag_gemv")) return;
  if (L.uniform == 0 && L.max_size > 8 && L.select == nullptr) {
    // Variable blocks above 8 rows: every row in order, one launch (launch_gemv_rows), the size index unused
    // but for the row count (the grid: exactly the rows, or count x max_size without an index). H200 (issue 31,
    // session 45), mixed 9..32 against the uniform batch of size 21 (95% of copy): one launch per size class
    // with the group form of gemv_staged_kernel 60.5% of copy (1.57x the time per byte), rows in order 71.7%
    // (1.33x), and with each unit's block offsets loaded a unit ahead (this kernel) 76.2% (1.26x); the column
    // kernel before all three, per class: 54.6% (1.08x against its uniform 21, then at 59%).
    size64_t rows = size64_t(L.count) * L.max_size;
    if (L.by_size) {
      rows = 0;
      for (int n = 1; n <= L.by_size->max_size(); ++n)
        rows += size64_t(n) * size64_t(L.by_size->start[std::size_t(n) + 1] - L.by_size->start[std::size_t(n)]);
    }
    cuda_gh::launch_gemv_rows<T>(s, L, rows, inv, x, y);
    return;
  }
  for_each_class(L, [&](const BatchLayout& c, auto w) { cuda_gh::launch_gemv<decltype(w)::value, T>(s, c, inv, x, y); });
}
}  // namespace

void block_diag_gemv(stream_t s, const BatchLayout& L, const double* inv, const double* x, double* y)
{
  gemv_dispatch(s, L, inv, x, y);
}

void block_diag_gemv(stream_t s, const BatchLayout& L, const float* inv, const double* x, double* y)
{
  gemv_dispatch(s, L, inv, x, y);
}

}  // namespace blockres::kernels::cuda
