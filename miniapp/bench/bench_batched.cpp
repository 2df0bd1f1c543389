// `blockres bench batched`: the batched dense kernels of kernels/batched/batched_gh.hpp (Gauss–Huard
// factor/solve in both storages, Gauss–Jordan inversion, block-diagonal gemv) and
// kernels/batched/batched_lu.hpp (LU factor/solve) against cuBLAS's getrfBatched / getrsBatched /
// matinvBatched on the same blocks in the same run; bandwidth relative to a device-to-device copy
// measured in the same run; every result checked on the host (info arrays and backward errors).
// The block-Jacobi section on simulator Jacobians lives in bench_block_jacobi.cpp.
#include "miniapp/bench/bench.hpp"

#include "kernels/batched/batched.hpp"
#include "kernels/batched/batched_gh.hpp"
#include "kernels/batched/batched_lu.hpp"
#include "linalg/array.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/bench/bench_common.hpp"
#include "miniapp/io/tuning_cache.hpp"
#include "miniapp/io/version.hpp"
#include "miniapp/run/backend.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <utility>

#include "kernels/cuda_check.hpp"

namespace blockres {

namespace {

using benchutil::mix;
using benchutil::nan_v;
using benchutil::Timing;

// Blocks in the sample whose inverses are downloaded for the residual check (first and last).
constexpr index_t inverse_sample = 1000;

// ---- models -------------------------------------------------------------------------------------
enum class Op { factor, solve, invert, apply };

const char* to_string(Op op)
{
  switch (op) {
    case Op::factor: return "factor";
    case Op::solve: return "solve";
    case Op::invert: return "invert";
    case Op::apply: return "apply";
  }
  return "?";
}

// Bytes each operation must move for a batch of `count` n x n blocks (8-byte values, 4-byte
// pivots / permutation entries and info).
double byte_model(Op op, int n, index_t count)
{
  const double nn = double(n) * n, c = double(count);
  switch (op) {
    case Op::factor: return c * (16.0 * nn + 4.0 * n + 4.0);  // read + write blocks, write pivots, info
    case Op::solve: return c * (8.0 * nn + 4.0 * n + 16.0 * n);  // read factors, pivots, b; write x
    case Op::invert: return c * (16.0 * nn + 4.0);             // read + write blocks, write info
    case Op::apply: return c * (8.0 * nn + 16.0 * n);          // read inverses, x; write y
  }
  return nan_v;
}

double flop_model(Op op, int n, index_t count)
{
  const double d = n, c = double(count);
  switch (op) {
    case Op::factor: return c * 2.0 / 3.0 * d * d * d;
    case Op::solve: return c * 2.0 * d * d;
    case Op::invert: return c * 2.0 * d * d * d;
    case Op::apply: return c * 2.0 * d * d;
  }
  return nan_v;
}

constexpr const char* byte_model_text =
    "factor (gh_factor, gh_factor_t, lu_factor, cublas_getrf): 16 n^2 + 4 n + 4 bytes per block (read + write the "
    "block, write n 4-byte pivots / permutation entries and the 4-byte info); solve (gh_solve, gh_solve_t, lu_solve, "
    "cublas_getrs): 8 n^2 + 4 n + 16 n (read the factors, the pivots and b, write x); invert (gje_invert, "
    "cublas_matinv): 16 n^2 + 4 (read + write the block, write info); apply (block_diag_gemv, cublas_gemv): 8 n^2 + 16 n (read the "
    "inverse and x, write y). cuBLAS's per-block pointer arrays (8 bytes per block and pointer) are not counted.";
constexpr const char* flop_model_text =
    "per block: factor 2/3 n^3, solve 2 n^2, invert 2 n^3, apply 2 n^2";
constexpr const char* timing_text =
    "CUDA events around the one library call on the executor's stream; median / min / max over --reps timed calls "
    "after --warmup untimed ones. Before every call, warm-up and timed alike, and outside the events (enqueued on the "
    "same stream before the start event): in-place factorisations and inversions (gh_factor, gh_factor_t, gje_invert, "
    "lu_factor, cublas_getrf) get their input restored by a device-to-device copy from an untouched copy of the batch, "
    "cublas_getrs (in place on its right-hand side) gets x <- b, and every variant is preceded by a read of a "
    "scrub buffer of 4x the L2 size, so each timed call starts with a cold L2 free of dirty lines. Before the last timed call only, its "
    "outputs (x, info, cuBLAS's inverses) are poisoned (NaN / -1), so the checks read that call's results.";
constexpr const char* cublas_text =
    "cuBLAS is column-major. Two layouts: opT gets the same bytes, i.e. the transposed blocks A^T (getrfBatched "
    "factors A^T, getrsBatched solves with CUBLAS_OP_T, i.e. A x = b); opN gets a column-major copy of A made outside "
    "the timing (getrfBatched factors A, getrsBatched solves with CUBLAS_OP_N). matinvBatched (n <= 32 only) inverts "
    "A^T, whose bytes are the row-major A^{-1}. gemvStridedBatched with CUBLAS_OP_T on the row-major inverses from "
    "gje_invert computes y = A^{-1} b, the same product as block_diag_gemv. The pointer arrays are built once per "
    "block size outside the timed region.";
constexpr const char* matrix_text =
    "block b: entries uniform in [-1, 1); then in each row i the entry of column sigma_b(i), sigma_b a random "
    "permutation per block, is replaced by +-(n + 1 + |u|), u uniform in [-1, 1): each block is a row permutation of "
    "a strictly diagonally dominant matrix (well conditioned, pivoting exercised). b uniform in [-1, 1).";
constexpr const char* residual_text =
    "max over checked blocks of ||A x - b||_inf / (||A||_inf ||x||_inf) with the original block A, on the host; "
    "tolerance 100 n eps (eps = 2^-52). Solve and apply rows: x from the device, every block. Factor rows: the "
    "residual of the solve that used those factors (gh_solve, gh_solve_t, lu_solve, cublas_getrs), and every info "
    "entry must be 0. Invert rows: the inverses of the first and last 1000 blocks downloaded, x = A^{-1} b on the "
    "host, and every info entry must be 0.";

// ---- host data ----------------------------------------------------------------------------------
// See matrix_text. Row-major blocks back to back.
// Block b of size n, its entries already uniform in [-1, 1): the dominant entries of matrix_text.
void make_dominant(double* blk, int n, std::uint64_t seed, index_t b)
{
  int sigma[kernels::batched_lu_max_size];
  for (int i = 0; i < n; ++i) sigma[i] = i;
  std::uint64_t h = mix(seed * 0x9e3779b97f4a7c15ULL + std::uint64_t(b));
  for (int i = n - 1; i > 0; --i) {
    h = mix(h);
    std::swap(sigma[i], sigma[h % std::uint64_t(i + 1)]);
  }
  for (int i = 0; i < n; ++i) {
    double& d = blk[size64_t(i) * n + sigma[i]];
    h = mix(h);
    d = ((h >> 63) ? -1.0 : 1.0) * (n + 1 + std::abs(d));
  }
}

std::vector<double> make_blocks(int n, index_t count, std::uint64_t seed)
{
  auto a = benchutil::random_values(size64_t(count) * n * n, seed);
#pragma omp parallel for schedule(static)
  for (index_t b = 0; b < count; ++b) make_dominant(a.data() + size64_t(b) * n * n, n, seed, b);
  return a;
}

// A batch on the host: block b has size(b) = row_off[b + 1] - row_off[b] rows, its entries at
// a[mat_off[b]..], its b and x entries at row_off[b].., back to back as kernels/batched/batched.hpp lays
// out a variable batch (a uniform batch is one with every size equal: the checks read both alike).
struct HostBatch {
  std::vector<index_t> row_off{0};
  std::vector<size64_t> mat_off{0};
  std::vector<double> a;
  index_t count() const { return static_cast<index_t>(row_off.size()) - 1; }
  int size(index_t b) const { return static_cast<int>(row_off[b + 1] - row_off[b]); }
  double mean() const { return count() == 0 ? 0.0 : double(row_off.back()) / double(count()); }
};

// count blocks of size n: make_blocks's values.
HostBatch make_uniform(int n, index_t count, std::uint64_t seed)
{
  HostBatch h;
  h.row_off.resize(static_cast<std::size_t>(count) + 1);
  h.mat_off.resize(static_cast<std::size_t>(count) + 1);
  for (index_t b = 0; b <= count; ++b) h.row_off[b] = b * n, h.mat_off[b] = size64_t(b) * n * n;
  h.a = make_blocks(n, count, seed);
  return h;
}

// Sizes drawn uniformly from [lo, hi] (one seed): as many blocks as fit batch_gb (8 n^2 bytes each) and
// max_blocks.
HostBatch make_mixed(int lo, int hi, double batch_gb, long long max_blocks, std::uint64_t seed)
{
  HostBatch m;
  const double cap = batch_gb * 1e9 / 8.0;  // doubles
  std::uint64_t h = mix(seed);
  for (;;) {
    h = mix(h);
    const int n = lo + int(h % std::uint64_t(hi - lo + 1));
    if (m.count() > 0 && (double(m.mat_off.back()) + double(n) * n > cap || (long long)m.count() >= max_blocks))
      break;
    if (double(m.row_off.back()) + n > double(INT_MAX)) break;
    m.row_off.push_back(m.row_off.back() + n);
    m.mat_off.push_back(m.mat_off.back() + size64_t(n) * n);
  }
  m.a = benchutil::random_values(m.mat_off.back(), seed + 1);
#pragma omp parallel for schedule(static)
  for (index_t b = 0; b < m.count(); ++b) make_dominant(m.a.data() + m.mat_off[b], m.size(b), seed + 1, b);
  return m;
}

// ||A x - b||_inf / (||A||_inf ||x||_inf) of one n x n row-major block; +inf when not finite.
double block_residual(const double* A, int n, const double* b, const double* x)
{
  double rn = 0, an = 0, xn = 0;
  for (int i = 0; i < n; ++i) {
    double r = -b[i], rowsum = 0;
    for (int j = 0; j < n; ++j) {
      r += A[size64_t(i) * n + j] * x[j];
      rowsum += std::abs(A[size64_t(i) * n + j]);
    }
    rn = std::max(rn, std::abs(r));
    an = std::max(an, rowsum);
    xn = std::max(xn, std::abs(x[i]));
    if (!std::isfinite(r) || !std::isfinite(x[i])) return INFINITY;
  }
  const double den = an * xn;
  return den > 0 ? rn / den : (rn == 0 ? 0.0 : INFINITY);
}

// Max residual over every block of h for the right-hand sides b and the solutions x (host vectors).
double residual_all(const HostBatch& h, const std::vector<double>& b, const std::vector<double>& x)
{
  double worst = 0;
#pragma omp parallel for schedule(static) reduction(max : worst)
  for (index_t k = 0; k < h.count(); ++k) {
    const double r =
        block_residual(h.a.data() + h.mat_off[k], h.size(k), b.data() + h.row_off[k], x.data() + h.row_off[k]);
    worst = std::max(worst, std::isnan(r) ? INFINITY : r);
  }
  return worst;
}

// The checked ranges of blocks for inverse-based residuals: the first and the last
// inverse_sample blocks (all when the batch is small).
std::vector<std::pair<index_t, index_t>> sample_ranges(index_t count)
{
  if (count <= 2 * inverse_sample) return {{0, count}};
  return {{0, inverse_sample}, {count - inverse_sample, count}};
}

// ---- one block size -----------------------------------------------------------------------------
struct Row {
  int n = 0;
  std::string sizes;  // a mixed batch: "lo..hi" (n is then its mean size, rounded)
  double mean_size = nan_v;
  index_t blocks = 0;
  std::string variant, baseline;  // baseline: the fastest verified cuBLAS row of the same operation ("" for cuBLAS rows)
  std::string wrong_baselines;    // cuBLAS rows of the operation whose results failed their checks
  Op op = Op::factor;
  bool cublas = false;
  Timing t;
  double bytes = 0, flops = 0;
  double residual = nan_v;
  std::string residual_from;
  long long residual_blocks = 0;
  long long info_failures = 0;  // blocks with info != 0 (factor / invert rows)
  int first_bad_info = 0;       // info of the first failed block
  double tolerance = 0;
  double speedup = nan_v;  // baseline median / this median
  std::string skipped;     // a cuBLAS row that could not run on this batch: why (baseline_limits.hpp)

  bool verified() const
  {
    return !skipped.empty() || (info_failures == 0 && std::isfinite(residual) && residual <= tolerance);
  }
  double gbs() const { return bytes / (t.median_ms * 1e-3) / 1e9; }
  double gflops() const { return flops / (t.median_ms * 1e-3) / 1e9; }
};

// A batch's device arrays: the untouched blocks (orig), the blocks every variant works on in place
// (work), b, x, the pivots / permutations and info; hb is b on the host.
struct DeviceBatch {
  DeviceBatch(const ExecPtr& e, const HostBatch& h, std::vector<double> b_host)
      : hb(std::move(b_host)), orig(e, std::span<const double>(h.a)), work(e, h.a.size()),
        b(e, std::span<const double>(hb)), x(e, hb.size()), perm(e, hb.size()), info(e, h.count()), s(e->stream())
  {
  }
  void refresh_work()  // work <- the original blocks
  {
    BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(work.data(), orig.data(), work.size() * sizeof(double),
                                        cudaMemcpyDeviceToDevice, s));
  }
  void poison_info() { BLOCKRES_CUDA_CHECK(cudaMemsetAsync(info.data(), 0xff, info.size() * sizeof(int), s)); }
  void poison_x() { fill(x, nan_v); }

  std::vector<double> hb;
  Array<double> orig, work, b, x;
  Array<index_t> perm;
  Array<int> info;
  stream_t s;
};

class BatchedBench {
 public:
  BatchedBench(ExecPtr e, const BatchedBenchOptions& o) : e_(std::move(e)), o_(o), s_(e_->stream()), scrub_(e_)
  {
    BLOCKRES_CUBLAS_CHECK(cublasCreate(&handle_));
    BLOCKRES_CUBLAS_CHECK(cublasSetStream(handle_, s_));
  }
  ~BatchedBench() { cublasDestroy(handle_); }
  BatchedBench(const BatchedBench&) = delete;
  BatchedBench& operator=(const BatchedBench&) = delete;

  static index_t batch_count(const BatchedBenchOptions& o, int n)
  {
    const double by_bytes = std::floor(o.batch_gb * 1e9 / (8.0 * n * n));
    double c = std::min(double(o.max_blocks), by_bytes);
    c = std::min(c, double(INT_MAX / n));  // row offsets and cuBLAS's pivot array are 32-bit
    return static_cast<index_t>(std::max(1.0, c));
  }

  // Every info entry must be 0: the failures and the first one into r.
  static void check_info(const DeviceBatch& d, Row& r)
  {
    for (int v : d.info.to_host())
      if (v != 0 && r.info_failures++ == 0) r.first_bad_info = v;
  }
  // The residual of x on every block.
  static void solve_residual(const HostBatch& h, const DeviceBatch& d, Row& r, const std::string& from)
  {
    r.residual = residual_all(h, d.hb, d.x.to_host());
    r.residual_blocks = h.count();
    r.residual_from = from;
  }
  // x = inv * b on the host for the sampled blocks of the inverses in work (only those downloaded).
  void inverse_residual(const HostBatch& h, const DeviceBatch& d, Row& r) const
  {
    double worst = 0;
    long long checked = 0;
    for (const auto& [first, last] : sample_ranges(h.count())) {
      std::vector<double> inv(static_cast<std::size_t>(h.mat_off[last] - h.mat_off[first]));
      e_->copy_to_host(inv.data(), d.work.data() + h.mat_off[first], inv.size() * sizeof(double));
      for (index_t k = first; k < last; ++k) {
        const int n = h.size(k);
        const double* Ai = inv.data() + (h.mat_off[k] - h.mat_off[first]);
        const double* bk = d.hb.data() + h.row_off[k];
        std::vector<double> xs(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
          double v = 0;
          for (int j = 0; j < n; ++j) v += Ai[size64_t(i) * n + j] * bk[j];
          xs[i] = v;
        }
        const double res = block_residual(h.a.data() + h.mat_off[k], n, bk, xs.data());
        worst = std::max(worst, std::isnan(res) ? INFINITY : res);
        ++checked;
      }
    }
    r.residual = worst;
    r.residual_blocks = checked;
    r.residual_from = "host x = A^{-1} b from the downloaded inverses";
  }

  // Our Gauss–Huard (both storages), Gauss–Jordan and block-diagonal rows on batch d (layout L), each
  // checked; add(variant, op, timing) appends a row to rows and returns it.
  template <class Add>
  void gh_rows(const HostBatch& h, DeviceBatch& d, const kernels::BatchLayout& L, Add&& add, std::vector<Row>& rows)
  {
    const auto s = s_;
    for (const auto storage : {kernels::GhStorage::standard, kernels::GhStorage::transposed}) {
      const bool tr = storage == kernels::GhStorage::transposed;
      Row& f = add(tr ? "gh_factor_t" : "gh_factor", Op::factor, timed([&] {
        kernels::cuda::gauss_huard_factor(s, L, d.work.data(), d.perm.data(), d.info.data(), storage);
      }, [&] { d.refresh_work(); }, [&] { d.poison_info(); }));
      check_info(d, f);
      Row& v = add(tr ? "gh_solve_t" : "gh_solve", Op::solve, timed([&] {
        kernels::cuda::gauss_huard_solve(s, L, d.work.data(), d.perm.data(), storage, d.b.data(), d.x.data());
      }, [] {}, [&] { d.poison_x(); }));
      solve_residual(h, d, v, "");
      Row& f2 = rows[rows.size() - 2];
      f2.residual = v.residual, f2.residual_blocks = v.residual_blocks, f2.residual_from = v.variant;
    }
    Row& g = add("gje_invert", Op::invert,
                 timed([&] { kernels::cuda::gauss_jordan_invert(s, L, d.work.data(), d.info.data()); },
                       [&] { d.refresh_work(); }, [&] { d.poison_info(); }));
    check_info(d, g);
    inverse_residual(h, d, g);
    Row& m = add("block_diag_gemv", Op::apply,
                 timed([&] { kernels::cuda::block_diag_gemv(s, L, d.work.data(), d.b.data(), d.x.data()); }, [] {},
                       [&] { d.poison_x(); }));
    solve_residual(h, d, m, "");
  }

  // Our LU factor and solve rows on batch d, checked (the factor by the solve that used its factors).
  template <class Add>
  void lu_rows(const HostBatch& h, DeviceBatch& d, const kernels::BatchLayout& L, Add&& add, std::vector<Row>& rows)
  {
    const auto s = s_;
    add("lu_factor", Op::factor,
        timed([&] { kernels::cuda::lu_factor(s, L, d.work.data(), d.perm.data(), d.info.data()); },
              [&] { d.refresh_work(); }, [&] { d.poison_info(); }));
    check_info(d, rows.back());
    Row& v = add("lu_solve", Op::solve,
                 timed([&] { kernels::cuda::lu_solve(s, L, d.work.data(), d.perm.data(), d.b.data(), d.x.data()); },
                       [] {}, [&] { d.poison_x(); }));
    solve_residual(h, d, v, "");
    Row& f = rows[rows.size() - 2];
    f.residual = v.residual, f.residual_blocks = v.residual_blocks, f.residual_from = v.variant;
  }

  std::vector<Row> run(int n)
  {
    const index_t count = batch_count(o_, n);
    const size64_t nv = size64_t(count) * n * n, nx = size64_t(count) * n;
    // cuBLAS's rows run when their int batch count holds the batch and their copies fit; else each is
    // skipped with the reason (its row says it), and ours still run.
    const std::string cublas_memory = check_memory(n, count);
    const std::string cublas_count = bench::cublas_batched_limit(n, std::uint64_t(count), o_.baseline_limits);
    const std::string cublas_skip = cublas_count.empty() ? cublas_memory : cublas_count;

    const HostBatch h = make_uniform(n, count, 1000 + n);
    DeviceBatch d(e_, h, benchutil::random_values(nx, 77 + n));
    kernels::BatchLayout L;
    L.count = count;
    L.uniform = L.max_size = n;

    const double tol = 100.0 * n * DBL_EPSILON;
    std::vector<Row> rows;
    rows.reserve(16);  // add() hands out references into it
    auto add = [&](std::string variant, Op op, bool cublas, const Timing& t) -> Row& {
      Row r;
      r.n = n, r.blocks = count, r.variant = std::move(variant), r.op = op, r.cublas = cublas, r.t = t;
      r.bytes = byte_model(op, n, count), r.flops = flop_model(op, n, count), r.tolerance = tol;
      rows.push_back(r);
      return rows.back();
    };
    auto ours = [&](std::string variant, Op op, const Timing& t) -> Row& {
      return add(std::move(variant), op, false, t);
    };
    auto skip = [&](std::string variant, Op op, const std::string& why) {
      add(std::move(variant), op, true, Timing{}).skipped = why;
    };
    const auto s = s_;
    if (n <= kernels::batched_gh_max_size) {
      gh_rows(h, d, L, ours, rows);
      // The same product by cuBLAS: column-major, the row-major inverses are their transposes (OP_T).
      const double one = 1.0, zero = 0.0;
      if (!cublas_count.empty()) {
        skip("cublas_gemv", Op::apply, cublas_count);  // strided: no copy, only the batch count
      } else {
        Row& c = add("cublas_gemv", Op::apply, true, timed([&] {
          BLOCKRES_CUBLAS_CHECK(cublasDgemvStridedBatched(handle_, CUBLAS_OP_T, n, n, &one, d.work.data(), n,
                                                          (long long)n * n, d.b.data(), 1, n, &zero, d.x.data(), 1,
                                                          n, count));
        }, [] {}, [&] { d.poison_x(); }));
        solve_residual(h, d, c, "");
      }
    }
    lu_rows(h, d, L, ours, rows);
    if (!cublas_skip.empty()) {
      for (const char* layout : {"opT", "opN"}) {
        skip(std::string("cublas_getrf_") + layout, Op::factor, cublas_skip);
        skip(std::string("cublas_getrs_") + layout, Op::solve, cublas_skip);
      }
      if (bench::cublas_matinv_limit(n).empty()) skip("cublas_matinv", Op::invert, cublas_skip);
    } else {
      // cuBLAS: one pointer per block (outside the timed region).
      std::vector<double*> hp(static_cast<std::size_t>(count));
      std::vector<const double*> hq(static_cast<std::size_t>(count));
      for (index_t k = 0; k < count; ++k) hp[k] = d.work.data() + size64_t(k) * n * n;
      Array<double*> work_ptr(e_, std::span<double* const>(hp));
      for (index_t k = 0; k < count; ++k) hp[k] = d.x.data() + size64_t(k) * n;
      Array<double*> x_ptr(e_, std::span<double* const>(hp));
      for (index_t k = 0; k < count; ++k) hq[k] = d.orig.data() + size64_t(k) * n * n;
      Array<const double*> orig_ptr(e_, std::span<const double* const>(hq));

      // Both layouts: opT on our bytes (cuBLAS sees A^T), opN on a column-major copy of A.
      Array<double> origT(e_, nv);
      {
        std::vector<double> t(h.a.size());
#pragma omp parallel for schedule(static)
        for (index_t k = 0; k < count; ++k)
          for (int i = 0; i < n; ++i)
            for (int jj = 0; jj < n; ++jj)
              t[size64_t(k) * n * n + size64_t(jj) * n + i] = h.a[size64_t(k) * n * n + size64_t(i) * n + jj];
        origT.copy_from_host(t);
      }
      for (const bool natural : {false, true}) {
        auto refresh = [&] {
          BLOCKRES_CUDA_CHECK(cudaMemcpyAsync(d.work.data(), natural ? origT.data() : d.orig.data(),
                                              nv * sizeof(double), cudaMemcpyDeviceToDevice, s));
        };
        Row& f = add(natural ? "cublas_getrf_opN" : "cublas_getrf_opT", Op::factor, true, timed([&] {
          BLOCKRES_CUBLAS_CHECK(
              cublasDgetrfBatched(handle_, n, work_ptr.data(), n, d.perm.data(), d.info.data(), count));
        }, refresh, [&] { d.poison_info(); }));
        check_info(d, f);
        int param_info = 0;
        Row& v = add(natural ? "cublas_getrs_opN" : "cublas_getrs_opT", Op::solve, true, timed([&] {
          BLOCKRES_CUBLAS_CHECK(cublasDgetrsBatched(handle_, natural ? CUBLAS_OP_N : CUBLAS_OP_T, n, 1, work_ptr.data(),
                                                    n, d.perm.data(), x_ptr.data(), n, &param_info, count));
        }, [&] {
          BLOCKRES_CUDA_CHECK(
              cudaMemcpyAsync(d.x.data(), d.b.data(), nx * sizeof(double), cudaMemcpyDeviceToDevice, s));
        }, [] {}));  // in place on x: prepare() overwrites x, a poison would be lost; a solve that does nothing leaves b
        if (param_info != 0)
          throw std::runtime_error(fmt::format("cublasDgetrsBatched: invalid parameter {}", -param_info));
        solve_residual(h, d, v, "");
        Row& f2 = rows[rows.size() - 2];
        f2.residual = v.residual, f2.residual_blocks = v.residual_blocks, f2.residual_from = v.variant;
      }

      if (bench::cublas_matinv_limit(n).empty()) {  // matinvBatched: n <= 32 (ours invert up to 32 too)
        Row& m = add("cublas_matinv", Op::invert, true, timed([&] {
          BLOCKRES_CUBLAS_CHECK(
              cublasDmatinvBatched(handle_, n, orig_ptr.data(), n, work_ptr.data(), n, d.info.data(), count));
        }, [] {}, [&] {
          d.poison_info();
          BLOCKRES_CUDA_CHECK(cudaMemsetAsync(d.work.data(), 0xff, nv * sizeof(double), s));  // NaN
        }));
        check_info(d, m);
        inverse_residual(h, d, m);
      }
    }
    // Each of our rows against the fastest verified cuBLAS row of the same operation (factor: getrf in
    // both layouts; solve: getrs in both layouts; invert: matinv; apply: gemvStridedBatched). A cuBLAS
    // row whose result failed its check is flagged and is no baseline.
    for (auto& r : rows) {
      if (r.cublas) continue;
      std::vector<bench::Baseline> base;
      for (const auto& c : rows)
        if (c.cublas && c.op == r.op) base.push_back({c.variant, c.t, c.verified() ? 0.0 : bench::nan_v, {}});
      const auto v = bench::judge_baselines(base, 0.0);
      for (std::size_t k = 0; k < base.size(); ++k)
        if (v.wrong[k]) r.wrong_baselines += (r.wrong_baselines.empty() ? "" : ",") + base[k].name;
      if (v.fastest >= 0) {
        r.baseline = base[static_cast<std::size_t>(v.fastest)].name;
        r.speedup = v.speedup(base, r.t.median_ms);
      }
    }
    for (auto& r : rows)
      if (r.residual_from.empty()) r.residual_from = "x of this call";
    return rows;
  }

  // The mixed batch (sizes uniform in [lo, hi], one variable layout): our variants only (cuBLAS's batched
  // routines take one size per call); the same checks as run(), block by block at each block's size.
  std::vector<Row> run_mixed(int lo, int hi)
  {
    const HostBatch h = make_mixed(lo, hi, o_.batch_gb, o_.max_blocks, 4242 + 1000 * lo + hi);
    const index_t count = h.count();
    DeviceBatch d(e_, h, benchutil::random_values(size64_t(h.row_off.back()), 77));
    Array<index_t> row_off(e_, std::span<const index_t>(h.row_off));
    Array<size64_t> mat_off(e_, std::span<const size64_t>(h.mat_off));
    kernels::BatchLayout L;
    L.count = count;
    L.row_off = row_off.data();
    L.mat_off = mat_off.data();
    L.uniform = 0;
    L.max_size = hi;
    std::vector<index_t> order;
    kernels::BatchSizeIndex by_size;
    Array<index_t> dorder;
    if (o_.mixed_classes) {  // as block-Jacobi's agglomerated layouts on CUDA
      by_size = kernels::sort_by_size(count, h.row_off.data(), order);
      dorder = Array<index_t>(e_, std::span<const index_t>(order));
      by_size.order = dorder.data();
      L.by_size = &by_size;
    }

    double bytes[4] = {0, 0, 0, 0}, flops[4] = {0, 0, 0, 0};
    for (index_t k = 0; k < count; ++k)
      for (Op op : {Op::factor, Op::solve, Op::invert, Op::apply}) {
        bytes[int(op)] += byte_model(op, h.size(k), 1);
        flops[int(op)] += flop_model(op, h.size(k), 1);
      }
    const double tol = 100.0 * hi * DBL_EPSILON;  // the largest block's limit for every block
    const std::string label = fmt::format("{}..{}", lo, hi);
    std::vector<Row> rows;
    rows.reserve(8);  // add() hands out references into it
    auto add = [&](std::string variant, Op op, const Timing& t) -> Row& {
      Row r;
      r.n = int(std::lround(h.mean())), r.sizes = label, r.mean_size = h.mean(), r.blocks = count;
      r.variant = std::move(variant), r.op = op, r.t = t;
      r.bytes = bytes[int(op)], r.flops = flops[int(op)], r.tolerance = tol;
      rows.push_back(r);
      return rows.back();
    };
    if (hi <= kernels::batched_gh_max_size) gh_rows(h, d, L, add, rows);
    lu_rows(h, d, L, add, rows);
    for (auto& r : rows)
      if (r.residual_from.empty()) r.residual_from = "x of this call";
    return rows;
  }

 private:
  // prepare() and the L2 scrub run before every call, outside the timed events; poison() before the
  // last timed call, so what is checked afterwards is that call's output.
  template <class F, class P, class Q>
  Timing timed(F&& launch, P&& prepare, Q&& poison)
  {
    return benchutil::time_on_stream(
        s_, o_.warmup, o_.reps, launch,
        [&] {
          prepare();
          scrub_();
        },
        poison);
  }

  // Throws when our rows' arrays (blocks twice, b, x, pivots, info) do not fit the free device memory;
  // returns why cuBLAS's extra column-major copy and pointer arrays do not ("" when they do).
  std::string check_memory(int n, index_t count) const
  {
    const double ours = 2.0 * 8 * double(count) * n * n + double(count) * n * (8 + 8 + 4) + double(count) * 4;
    const double cublas = 8.0 * double(count) * n * n + 24.0 * double(count);
    std::size_t free_b = 0, total_b = 0;
    BLOCKRES_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (ours > 0.95 * double(free_b))
      throw std::runtime_error(fmt::format("bench batched: {} blocks of size {} need {:.2f} GB of device memory, "
                                           "{:.2f} GB are free (lower --batch-gb or --max-blocks)",
                                           count, n, ours / 1e9, double(free_b) / 1e9));
    return bench::device_memory_limit("cuBLAS's column-major copy and pointer arrays", cublas,
                                      0.95 * double(free_b) - ours, o_.baseline_limits);
  }

  ExecPtr e_;
  const BatchedBenchOptions& o_;
  stream_t s_;
  benchutil::L2Scrub scrub_;
  cublasHandle_t handle_ = nullptr;
};

std::string row_text(const Row& r, double copy_gbs)
{
  if (!r.skipped.empty()) return fmt::format("{:>3} {:>8} {:<16} skipped: {}", r.n, r.blocks, r.variant, r.skipped);
  const std::string n = r.sizes.empty() ? fmt::format("{:>3}", r.n) : r.sizes;
  const double gbs = r.gbs();
  const std::string speed = std::isfinite(r.speedup) ? fmt::format("{:7.2f}x", r.speedup) : std::string("      --");
  std::string status;
  if (r.info_failures) status += fmt::format("  INFO FAILED in {} blocks (first {})", r.info_failures, r.first_bad_info);
  if (!(std::isfinite(r.residual) && r.residual <= r.tolerance)) status += "  RESIDUAL FAILED";
  if (!r.wrong_baselines.empty()) status += "  WRONG BASELINE: " + r.wrong_baselines;
  return fmt::format("{} {:>8} {:<16} {:>9.4f} {:>9.4f} {:>9.4f} {:>7.0f} {:>5.1f}% {:>8.1f} {} {:<16} {:>9.2e}{}",
                     n, r.blocks, r.variant, r.t.median_ms, r.t.min_ms, r.t.max_ms, gbs, 100 * gbs / copy_gbs,
                     r.gflops(), speed, r.baseline, r.residual, status);
}

Json row_json(const Row& r, double copy_gbs)
{
  const double gbs = r.gbs();
  if (!r.skipped.empty())
    return {{"block_size", r.n}, {"blocks", r.blocks}, {"variant", r.variant}, {"operation", to_string(r.op)},
            {"library", "cublas"}, {"skipped", r.skipped}, {"verified", true}};
  Json j = {{"block_size", r.n},
          {"blocks", r.blocks},
          {"variant", r.variant},
          {"operation", to_string(r.op)},
          {"library", r.cublas ? "cublas" : "blockres"},
          {"bytes", r.bytes},
          {"flops", r.flops},
          {"time", timing_json(r.t)},
          {"gb_per_s", gbs},
          {"fraction_of_copy_bandwidth", gbs / copy_gbs},
          {"gflop_per_s", r.gflops()},
          {"baseline", r.baseline},
          {"speedup_vs_baseline", r.speedup},
          {"wrong_baselines", r.wrong_baselines},
          {"max_residual", r.residual},
          {"residual_from", r.residual_from},
          {"residual_blocks_checked", r.residual_blocks},
          {"tolerance", r.tolerance},
          {"info_failures", r.info_failures},
          {"verified", r.verified()}};
  if (!r.sizes.empty()) {  // a mixed batch: block_size is its mean, rounded
    j["mixed_sizes"] = r.sizes;
    j["mean_block_size"] = r.mean_size;
  }
  return j;
}

}  // namespace

int run_batched_bench(const BatchedBenchOptions& o, const std::function<void(const std::string&)>& log)
{
  benchutil::require_cuda_device("bench batched");
  if (!o.kernels_section && o.jacobians.empty())
    throw std::runtime_error("bench batched --only block-jacobi needs --jacobian FILE (write one with 'blockres run "
                             "deck.toml --write-jacobian J.h5')");
  std::vector<int> sizes = o.sizes;
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (int n : sizes)
    if (n < 1 || n > kernels::batched_lu_max_size)
      throw std::runtime_error(fmt::format("bench batched: block size {} outside 1..{}", n, kernels::batched_lu_max_size));
  // Read before anything is timed: a bad file fails now, not after the kernel section.
  const bool block_jacobi = o.block_jacobi_section && !o.jacobians.empty();
  std::vector<benchutil::TestMatrix> jacobians;
  if (block_jacobi)
    for (const auto& path : o.jacobians) jacobians.push_back(benchutil::read_jacobian(path));

  auto e = create_tuned_cuda(0, o.tuning_cache, log);  // the device's tuning cache: one line
  cudaDeviceProp prop{};
  BLOCKRES_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  log(fmt::format("blockres {} ({}): bench batched on {} ({} SMs, {} MB L2)", version_string(), provenance_text(),
                  e->device_name(), prop.multiProcessorCount, prop.l2CacheSize >> 20));

  Json j;
  write_report_head(j, "batched", o.json_path, e->device_name(), o.command_line);
  Json cfg;
  cfg["sections"] = Json::array();
  if (o.kernels_section) cfg["sections"].push_back("kernels");
  if (block_jacobi) cfg["sections"].push_back("block_jacobi");
  cfg["reps"] = o.reps;
  cfg["warmup"] = o.warmup;
  const size64_t scrub_bytes = benchutil::L2Scrub::default_bytes();
  if (o.kernels_section) {
    cfg["sizes"] = sizes;
    if (o.mixed_lo > 0)
      cfg["mixed"] = fmt::format("sizes drawn uniformly from {}..{} (one variable layout, our kernels only: cuBLAS's "
                                 "batched routines take one size per call); compared per variant with the uniform "
                                 "batch of its mean size, rounded, when --sizes holds it: uniform GB/s / mixed GB/s "
                                 "(time per byte; issue 31's target <= 1.3); residual limit 100 HI eps; {}",
                                 o.mixed_lo, o.mixed_hi,
                                 o.mixed_classes ? "size classes: one launch per class on its own blocks, as "
                                                   "block-Jacobi's agglomerated blocks (--mixed-classes on)"
                                                 : "no size classes: whole-batch launches (--mixed-classes off)");
    cfg["batch_gb"] = o.batch_gb;
    cfg["max_blocks"] = o.max_blocks;
    cfg["scrub_bytes"] = scrub_bytes;
    cfg["matrices"] = matrix_text;
    cfg["byte_model"] = byte_model_text;
    cfg["flop_model"] = flop_model_text;
    cfg["timing"] = timing_text;
    cfg["cublas"] = cublas_text;
    cfg["residual"] = residual_text;
    cfg["speedup"] = "median time of the baseline / median time of the variant, the baseline being the fastest "
                     "verified cuBLAS row of the same operation: factor vs cublas_getrf_opT / _opN, solve vs "
                     "cublas_getrs_opT / _opN, gje_invert vs cublas_matinv, block_diag_gemv vs cublas_gemv "
                     "(gemvStridedBatched)";
  }
  if (block_jacobi) benchutil::write_block_jacobi_configuration(cfg, o);
  j["configuration"] = std::move(cfg);

  bool ok = true;
  // ---- section 1: the batched kernels against cuBLAS ("results")
  if (o.kernels_section) {
    Timing copy_t;
    const int creps = benchutil::ceiling_reps(o.reps);
    const double copy_gbs =
        benchutil::copy_bandwidth_gbs(e, size64_t(2) << 30, benchutil::ceiling_warmup(o.warmup), creps, copy_t);
    log(fmt::format("device-to-device copy: {:.0f} GB/s (2 GiB, read + write, median of {})", copy_gbs, creps));
    j["copy_bandwidth"] = {{"gb_per_s", copy_gbs}, {"median_ms", copy_t.median_ms}};
    BatchedBench bench(e, o);

    log("byte model: " + std::string(byte_model_text));
    log("speedup: the fastest verified cuBLAS row of the operation / ours (factor vs getrfBatched in both layouts, "
        "solve vs getrsBatched in both layouts, invert vs matinvBatched, block_diag_gemv vs gemvStridedBatched); "
        "residual: max ||A x - b|| / (||A|| ||x||), inf-norms, limit 100 n eps");
    log(fmt::format("{:>3} {:>8} {:<16} {:>9} {:>9} {:>9} {:>7} {:>6} {:>8} {:>8} {:<16} {:>9}", "n", "blocks",
                    "variant", "median_ms", "min_ms", "max_ms", "GB/s", "%copy", "GFLOP/s", "speedup", "baseline",
                    "residual"));
    Json results = Json::array();
    std::map<std::pair<int, std::string>, double> uniform_gbs;  // (n, variant) -> GB/s of this run
    for (int n : sizes) {
      for (const auto& r : bench.run(n)) {
        ok = ok && r.verified();
        log(row_text(r, copy_gbs));
        results.push_back(row_json(r, copy_gbs));
        if (r.skipped.empty() && r.verified()) uniform_gbs[{r.n, r.variant}] = r.gbs();
      }
    }
    j["results"] = std::move(results);
    if (o.mixed_lo > 0) {
      // Issue 31 item 6: the mixed batch against the uniform batch of its mean size (rounded), per variant:
      // how much slower per byte (target: at most 1.3x).
      Json mixed = Json::array(), compare = Json::array();
      const auto rows = bench.run_mixed(o.mixed_lo, o.mixed_hi);
      for (const auto& r : rows) {
        ok = ok && r.verified();
        log(row_text(r, copy_gbs));
        mixed.push_back(row_json(r, copy_gbs));
      }
      for (const auto& r : rows) {
        const auto u = uniform_gbs.find({r.n, r.variant});
        if (u == uniform_gbs.end()) {
          log(fmt::format("mixed {} {}: no uniform batch of size {} in this run (--sizes) to compare with", r.sizes,
                          r.variant, r.n));
          continue;
        }
        const double ratio = u->second / r.gbs();
        log(fmt::format("mixed {} (mean {:.2f}) {}: {:.1f}% of copy against {:.1f}% for the uniform batch of size {}: "
                        "{:.2f}x the time per byte (target <= 1.3x){}",
                        r.sizes, r.mean_size, r.variant, 100 * r.gbs() / copy_gbs, 100 * u->second / copy_gbs, r.n,
                        ratio, ratio <= 1.3 ? "" : "  SLOWER THAN THE TARGET"));
        compare.push_back({{"variant", r.variant},
                           {"mixed_sizes", r.sizes},
                           {"mean_block_size", r.mean_size},
                           {"uniform_block_size", r.n},
                           {"mixed_gb_per_s", r.gbs()},
                           {"uniform_gb_per_s", u->second},
                           {"time_per_byte_ratio", ratio},
                           {"target", 1.3}});
      }
      j["mixed"] = {{"results", std::move(mixed)}, {"against_uniform", std::move(compare)}};
    }
  }
  // ---- section 2: block-Jacobi on simulator Jacobians ("block_jacobi")
  if (block_jacobi)
    ok = benchutil::run_block_jacobi_section(e, o, jacobians, j, log) && ok;
  else if (o.block_jacobi_section)
    log("block-Jacobi section skipped: no --jacobian file (write one with 'blockres run deck.toml --write-jacobian "
        "J.h5')");
  j["all_verified"] = ok;
  j["strict"] = o.strict;
  write_tuning_json(j, *e);  // the block-Jacobi solves' SpMV configurations
  write_json_file(o.json_path, j);
  log(fmt::format("report written to {}{}", o.json_path, ok ? "" : " (SOME RESULTS FAILED VERIFICATION)"));
  return ok ? 0 : 1;  // no issue target is evaluated here: --strict changes nothing
}

}  // namespace blockres
