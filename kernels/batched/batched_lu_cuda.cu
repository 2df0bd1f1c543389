// Batched LU on the GPU: argument checks and dispatch of the size classes to the kernels compiled
// in batched_lu_cuda_small_*.cu (factor n <= 32, solve n <= 16), batched_lu_cuda_rows_33_56.cu (factor
// 33..56) and batched_lu_cuda_blocked.cu (factor 57..512, solve 17..512: warp, row and blocked solves).
//
// Uniform batches launch one kernel: the register kernel compiled for exactly n, or the row or blocked
// class holding n. Variable batches launch every class that can hold a block (power-of-two register
// classes up to 32, the row classes to 56, then the blocked classes up to max_size); each kernel skips the blocks outside
// its class, so the sizes never travel to the host.
#include "kernels/batched/batched_lu.hpp"
#include "kernels/batched/batched_lu_cuda.cuh"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <utility>

namespace blockres::kernels::cuda {

namespace lu_detail {
// Instances live in the other batched_lu_cuda_*.cu files.
#define BLOCKRES_LU_EXTERN_FACTOR(NP, U) extern BLOCKRES_LU_SMALL_FACTOR_INSTANCE(NP, U)
#define BLOCKRES_LU_EXTERN_SOLVE(G) extern BLOCKRES_LU_SMALL_SOLVE_INSTANCE(G)
#define BLOCKRES_LU_EXTERN_ROWS(NP, MB) extern BLOCKRES_LU_ROW_FACTOR_INSTANCE(NP, MB)
#define BLOCKRES_LU_EXTERN_BLOCKED(T, NB, RPT) extern BLOCKRES_LU_BLOCKED_FACTOR_INSTANCE(T, NB, RPT)
BLOCKRES_LU_SMALL_1_16(BLOCKRES_LU_EXTERN_FACTOR, BLOCKRES_LU_EXTERN_SOLVE)
BLOCKRES_LU_SMALL_17_24(BLOCKRES_LU_EXTERN_FACTOR, BLOCKRES_LU_EXTERN_SOLVE)
BLOCKRES_LU_SMALL_25_32(BLOCKRES_LU_EXTERN_FACTOR, BLOCKRES_LU_EXTERN_SOLVE)
BLOCKRES_LU_ROW_FACTOR_CLASSES(BLOCKRES_LU_EXTERN_ROWS)
BLOCKRES_LU_BLOCKED_FACTOR_CLASSES(BLOCKRES_LU_EXTERN_BLOCKED)
#define BLOCKRES_LU_EXTERN_LANE(N) extern BLOCKRES_LU_LANE_SOLVE_INSTANCE(N)
BLOCKRES_LU_LANE_SOLVES(BLOCKRES_LU_EXTERN_LANE)
extern BLOCKRES_LU_BLOCKED_SOLVE_INSTANCE
extern BLOCKRES_LU_WARP_SOLVE_INSTANCE(1)
extern BLOCKRES_LU_WARP_SOLVE_INSTANCE(2)
extern BLOCKRES_LU_PANEL_SOLVE_INSTANCE(2, 16, 2)
extern BLOCKRES_LU_ROW_SOLVE_INSTANCE(3)
extern BLOCKRES_LU_ROW_SOLVE_INSTANCE(4)
}  // namespace lu_detail

namespace {
std::size_t shared_limit_for_tests = 0;  // set_lu_shared_limit_for_tests
}  // namespace

std::size_t lu_detail::shared_bytes_per_block_limit()
{
  if (shared_limit_for_tests > 0) return shared_limit_for_tests;
  int dev = 0, bytes = 0;
  BLOCKRES_CUDA_CHECK(cudaGetDevice(&dev));
  BLOCKRES_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return static_cast<std::size_t>(bytes);
}

void set_lu_shared_limit_for_tests(std::size_t bytes) { shared_limit_for_tests = bytes; }

namespace {

using namespace lu_detail;
using SmallFactorFn = void (*)(stream_t, const BatchLayout&, int, double*, index_t*, int*);
using BlockedFactorFn = void (*)(stream_t, const BatchLayout&, int, int, double*, index_t*, int*);

// The one place where the run-time size becomes the compile-time NP of the register kernel.
template <int... NP>
constexpr std::array<SmallFactorFn, sizeof...(NP) + 1> uniform_table(std::integer_sequence<int, NP...>)
{
  return {nullptr, &launch_small_factor<NP + 1, true>...};
}
constexpr auto small_uniform = uniform_table(std::make_integer_sequence<int, 32>{});

// The lane solves of the uniform sizes lane_lo .. lane_hi (4..24), indexed by n - lane_lo.
using LaneSolveFn = bool (*)(stream_t, const BatchLayout&, const double*, const index_t*, const double*, double*);
constexpr int lane_lo = 4;
#define BLOCKRES_LU_LANE_ENTRY(N) &launch_lane_solve<N>,
constexpr std::array lane_solves{BLOCKRES_LU_LANE_SOLVES(BLOCKRES_LU_LANE_ENTRY)};
#undef BLOCKRES_LU_LANE_ENTRY
constexpr int lane_hi = lane_lo + int(lane_solves.size()) - 1;
static_assert(lane_hi == 24, "the lane solves hold 4..24");

struct BlockedClass {
  int lo, hi;
  BlockedFactorFn factor;
};
// The row kernels' classes (NP - 7 .. NP), 33..56.
#define BLOCKRES_LU_ROW_ENTRY(NP, MB) BlockedClass{(NP) - 7, (NP), &launch_row_factor<NP, MB>},
constexpr std::array row_classes{BLOCKRES_LU_ROW_FACTOR_CLASSES(BLOCKRES_LU_ROW_ENTRY)};
#undef BLOCKRES_LU_ROW_ENTRY
constexpr int blocked_lo = row_classes.back().hi + 1;
static_assert(row_classes.front().lo == 33 && blocked_lo == 57, "row classes must hold 33..56");
// Class i holds (previous hi, hi]; one entry per BLOCKRES_LU_BLOCKED_FACTOR_CLASSES instance.
#define BLOCKRES_LU_CLASS_ENTRY(T, NB, RPT) BlockedClass{0, (T) * (RPT), &launch_blocked_factor<T, NB, RPT>},
constexpr std::array blocked_classes_raw{BLOCKRES_LU_BLOCKED_FACTOR_CLASSES(BLOCKRES_LU_CLASS_ENTRY)};
#undef BLOCKRES_LU_CLASS_ENTRY

constexpr auto blocked_classes = [] {
  auto c = blocked_classes_raw;
  int lo = blocked_lo;
  for (auto& k : c) k.lo = lo, lo = k.hi + 1;
  return c;
}();
static_assert(blocked_classes.back().hi == batched_lu_max_size, "blocked classes must reach the largest size");

}  // namespace

void lu_factor(stream_t s, const BatchLayout& L, double* a, index_t* piv, int* info)
{
  batched_lu_check_layout(L, "cuda::lu_factor");
  if (L.count == 0) return;
  if (L.uniform > 0) {
    const int n = L.uniform;
    if (n <= 32) {
      small_uniform[n](s, L, n, a, piv, info);
    } else {
      for (const auto& c : row_classes)
        if (n >= c.lo && n <= c.hi) c.factor(s, L, c.lo, c.hi, a, piv, info);
      for (const auto& c : blocked_classes)
        if (n >= c.lo && n <= c.hi) c.factor(s, L, c.lo, c.hi, a, piv, info);
    }
    return;
  }
  // Variable sizes: register classes (G/2, G] (size 0 with G = 1), then the blocked classes. Without a size
  // index every class launch visits the whole batch and skips the other classes' blocks; with one
  // (BatchLayout::by_size) each launch gets its class's blocks only, sorted by size.
  // (A class takes every block of its size range, as the whole-batch launches do, whatever max_size says.)
  const auto part = [&](int lo, int hi) { return L.by_size ? L.by_size->select(L, lo, hi) : L; };
  if (L.by_size) {
    // With a size index the register range goes size by size to the kernel compiled for exactly that size
    // (the uniform batches' kernels, fully unrolled to n): a 17-row block no longer runs 32 rows of steps.
    // One launch per size present (at most 32; the factorisation runs once per setup).
    const BatchLayout zero = L.by_size->select(L, 0, 0);
    if (zero.count > 0) launch_small_factor<1, false>(s, zero, 0, a, piv, info);
    for (int n = 1; n <= 32; ++n) {
      const BatchLayout c = L.by_size->select(L, n, n);
      if (c.count > 0) small_uniform[n](s, c, n, a, piv, info);
    }
  } else {
    launch_small_factor<1, false>(s, L, 0, a, piv, info);
    if (L.max_size > 1) launch_small_factor<2, false>(s, L, 2, a, piv, info);
    if (L.max_size > 2) launch_small_factor<4, false>(s, L, 3, a, piv, info);
    if (L.max_size > 4) launch_small_factor<8, false>(s, L, 5, a, piv, info);
    if (L.max_size > 8) launch_small_factor<16, false>(s, L, 9, a, piv, info);
    if (L.max_size > 16) launch_small_factor<32, false>(s, L, 17, a, piv, info);
  }
  for (const auto& k : row_classes)
    if (L.max_size >= k.lo) {
      const BatchLayout c = part(k.lo, k.hi);
      if (c.count > 0) k.factor(s, c, k.lo, k.hi, a, piv, info);
    }
  for (const auto& k : blocked_classes)
    if (L.max_size >= k.lo) {
      const BatchLayout c = part(k.lo, k.hi);
      if (c.count > 0) k.factor(s, c, k.lo, k.hi, a, piv, info);
    }
}

void lu_solve(stream_t s, const BatchLayout& L, const double* lu, const index_t* piv, const double* b, double* x)
{
  batched_lu_check_layout(L, "cuda::lu_solve");
  if (L.count == 0) return;
  // Uniform 4..24 without a selection: a lane per block (lane_solve), unless its stage does not fit the GPU. H200,
  // one call each (issue 31), % of copy: session 45, small_solve -> lane_solve at 32 blocks a warp: 4 79.2 -> 93.9,
  // 5 50.4 -> 93.8, 9 39.5 -> 91.5, 12 56.6 -> 88.9, 14 68.8 -> 84.7, 15 73.0 -> 90.2; session 46, fewer blocks a
  // warp (cuda_lane::blocks_per_warp) and the interchanges on the stage: 16 83.6 -> 87.0, 17 46.0 -> 83.0, 20 56.5
  // -> 81.2, 21 59.5 -> 83.7 (small_solve or the exact-size warp_solve before), 22 62.5 -> 72.6, 24 69.8 -> 71.2.
  // From 25 the exact-size warp_solve is faster (72.2 at 25, 84.9 at 32; the lane solve 70.9 and 54.2).
  if (L.uniform >= lane_lo && L.uniform <= lane_hi && L.select == nullptr &&
      lane_solves[std::size_t(L.uniform - lane_lo)](s, L, lu, piv, b, x))
    return;
  // Uniform: one launch, class bounds [n, n]; variable: every class up to max_size. (Session 46: the lane solves
  // launched once per exact size 4..24 over the size index's selections took the mixed 9..32 batch from 53.2 to
  // 49.5% of copy on an H200, each size too small a launch: see gauss_huard_solve.)
  const int lo_all = L.uniform > 0 ? L.uniform : 0;
  const int hi_all = L.max_size;
  // With a size index (BatchLayout::by_size) each class launch gets its own blocks only.
  const auto part = [&](int l, int h) { return L.by_size && L.uniform == 0 ? L.by_size->select(L, l, h) : L; };
  // One class: its blocks (lo..hi within the batch's range) to one launcher, when it has any.
  using SolveFn = void (*)(stream_t, const BatchLayout&, int, int, const double*, const index_t*, const double*,
                           double*);
  const auto solve_class = [&](SolveFn launch, int lo, int hi) {
    const int l = std::max(lo, lo_all), h = std::min(hi, hi_all);
    if (l > h) return;
    const BatchLayout c = part(l, h);
    if (c.count > 0) launch(s, c, l, h, lu, piv, b, x);
  };
  solve_class(&launch_small_solve<1>, 0, 1);
  solve_class(&launch_small_solve<2>, 2, 2);
  solve_class(&launch_small_solve<4>, 3, 4);
  solve_class(&launch_small_solve<8>, 5, 8);
  solve_class(&launch_small_solve<16>, 9, 16);
  // 17..56: a warp per block (warp_solve), R = 1 rows per lane for 17..32 in one class, R = 2 for 33..56
  // in classes of 8 sizes: the warp's shared memory is sized to its class's largest block, so a 33-row
  // block of a variable batch does not take a 64-row slot (H200, mixed 33..64 against the uniform batch
  // of its mean size: 1.66x the time per byte with one class, 1.51x with four). Every class launch visits
  // the whole batch: splitting 17..32 in two made a 9..32 mixture slower (1.43x -> 1.66x), so it stays
  // one class. Above 64, the row solves, then the blocked solve.
  // (With a size index, narrower classes, 17..24, 25..32 and four sizes each to 64, were measured and
  // dropped: H200, 6b684de, mixed 33..64 1.39x against 1.36x with these, 9..32 1.07x against 1.11x, within
  // the noise, for twice the launches.)
  solve_class(&launch_warp_solve<1>, 17, 32);
  for (int lo = 33; lo <= 49; lo += 8) solve_class(&launch_warp_solve<2>, lo, lo + 7);
  // 57..64: the panel solve (panel_solve, 16-column panels, two slots), whose warps hold 17 KB of shared memory
  // instead of warp_solve's 34 KB. Measured in one call per card against warp_solve (issue 31, session 44,
  // verification/results/issue31_s44_*), n 64: H200 1.06 -> 0.75 ms (46.2 -> 65.6% of copy), H100 1.07 -> 0.87
  // ms (64.4 -> 79.7%); in the nc 64 deck's second stage (H100, ncu) 2.06 -> 1.49 ms per application. Below 57
  // it loses on one card or both (H100 n 49 73.2 -> 55.3%, 56 69.3 -> 64.0%; H200 n 33 51.5 -> 43.7%, 40 54.5
  // -> 48.5%; H200 n 48 55.1 -> 60.0%, H100 n 48 73.4 -> 74.1%), so 33..56 keeps warp_solve.
  solve_class(&launch_panel_solve<2, 16, 2>, 57, 64);
  // 65..128: a warp per block going row by row (row_solve), R = 3 rows per lane to 96, R = 4 to 128. On an H100
  // (2026-11-27, verification/results/issue29_30_31_s40_*) 1.46-1.9x faster than the blocked solve there (65: 1.17
  // against 2.21 ms, 96: 0.93 against 1.53, 128: 0.87 against 1.27), 59-77% of copy; slower than warp_solve
  // below 64 (17: 2.50 against 1.19 ms), whose chains are short enough for the staged block.
  solve_class(&launch_row_solve<3>, 65, 96);
  solve_class(&launch_row_solve<4>, 97, 128);
  solve_class(&launch_blocked_solve<BLOCKRES_LU_BLOCKED_SOLVE_THREADS>, 129, batched_lu_max_size);
}

namespace {

// A^{-1}'s column j (blockIdx.x) from lu_factor's output: x = e_j with the factorisation's interchanges
// (thread 0, in order), then L y = x column by column and U x = y from the last row up, each step's
// updates spread over the threads, every update the CPU's fma in the CPU's order (cpu::lu_inverse gives
// the same bits). U's step c divides in every thread (the same value) and writes x_c straight to the
// inverse: x_c in shared memory is not needed again, so one barrier a step suffices.
__global__ void __launch_bounds__(256)
    lu_inverse_kernel(int n, const double* __restrict__ lu, const index_t* __restrict__ piv, double* __restrict__ inv)
{
  // x, then U's diagonal and the pivots staged once (coalesced): the serial parts (thread 0's interchanges,
  // every step's division) then read shared memory instead of waiting on a global load each step.
  extern __shared__ double x[];
  double* diag = x + n;
  int* p_s = reinterpret_cast<int*>(diag + n);
  const int j = static_cast<int>(blockIdx.x);
  const auto un = static_cast<size64_t>(n);
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
    x[i] = i == j ? 1.0 : 0.0;
    diag[i] = lu[size64_t(i) * un + i];
    p_s[i] = static_cast<int>(piv[i]);
  }
  __syncthreads();
  if (threadIdx.x == 0) lu_detail::interchange_serial(n, p_s, x);
  __syncthreads();
  for (int c = 0; c < n; ++c) {  // L y = P e_j (unit lower)
    const double xc = x[c];
    for (int i = c + 1 + static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x))
      x[i] = fma(-lu[size64_t(i) * un + c], xc, x[i]);
    __syncthreads();
  }
  for (int c = n - 1; c >= 0; --c) {  // U x = y
    const double xc = x[c] / diag[c];
    if (threadIdx.x == 0) inv[size64_t(c) * un + j] = xc;
    for (int i = static_cast<int>(threadIdx.x); i < c; i += static_cast<int>(blockDim.x))
      x[i] = fma(-lu[size64_t(i) * un + c], xc, x[i]);
    __syncthreads();
  }
}

}  // namespace

void lu_inverse(stream_t s, int n, const double* lu, const index_t* piv, double* inv)
{
  if (n < 1 || n > batched_lu_max_size)
    throw std::invalid_argument("cuda::lu_inverse: size " + std::to_string(n) + " is outside 1.." +
                                std::to_string(batched_lu_max_size));
  const int threads = std::min(256, (n + 31) / 32 * 32);
  const std::size_t smem = (2 * sizeof(double) + sizeof(int)) * std::size_t(n);  // x, U's diagonal, the pivots
  lu_inverse_kernel<<<static_cast<unsigned>(n), static_cast<unsigned>(threads), smem, s>>>(n, lu, piv, inv);
  BLOCKRES_CUDA_CHECK_LAUNCH();
}

}  // namespace blockres::kernels::cuda
