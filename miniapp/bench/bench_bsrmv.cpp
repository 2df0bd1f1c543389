// `blockres bench bsrmv`: BSR SpMV against cuSPARSE (bsrmv, SpMV on BSR, SpMV on the expanded
// CSR) on stencil, power-law and simulator matrices; bandwidth relative to a device-to-device
// copy measured in the same run; every result checked against the CPU reference. Our kernel's configuration
// per block size: the device's tuning cache, else the built-in rule; with --tune, this run's own measurement.
#include "miniapp/bench/bench.hpp"

#include "kernels/spmv/bsr_to_csr.hpp"
#include "kernels/spmv/bsrmv.hpp"
#include "linalg/bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/bench/bench_common.hpp"
#include "miniapp/bench/bsrmv_tune.hpp"
#include "miniapp/io/version.hpp"
#include "miniapp/run/backend.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "kernels/cuda_check.hpp"

namespace blockres {

namespace {

using benchutil::Ceilings;
using benchutil::max_rel_err;
using benchutil::mix;
using benchutil::nan_v;
using benchutil::random_values;
using benchutil::read_jacobian;
using benchutil::stencil_pattern;
using benchutil::stencil_side;
using benchutil::TestMatrix;
using benchutil::Timing;
using benchutil::time_on_stream;

// ---- matrices -----------------------------------------------------------------------------------
// Most rows 1..8 blocks; one row in a thousand `long_factor` times the mean of the short ones.
BsrPattern powerlaw_pattern(index_t nrows, index_t ncols, index_t long_len, std::uint64_t seed)
{
  BsrPattern p;
  p.nrows = nrows, p.ncols = ncols;
  p.row_ptr.push_back(0);
  std::vector<index_t> cols;
  for (index_t r = 0; r < nrows; ++r) {
    const std::uint64_t h = mix(seed ^ (std::uint64_t(r) * 0x9e37ULL));
    cols.clear();
    if (h % 1000 == 0) {
      const index_t len = std::min(long_len, ncols), window = ncols / len;
      for (index_t q = 0; q < len; ++q) cols.push_back(q * window + static_cast<index_t>(mix(h + q) % window));
    } else {
      const int len = 1 + static_cast<int>(h % 8);
      for (int q = 0; q < len; ++q) cols.push_back(static_cast<index_t>(mix(h + 7 * q + 1) % std::uint64_t(ncols)));
      std::sort(cols.begin(), cols.end());
      cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    }
    p.col_ind.insert(p.col_ind.end(), cols.begin(), cols.end());
    p.row_ptr.push_back(static_cast<index_t>(p.col_ind.size()));
  }
  return p;
}

// Bytes the SpMV must move: block values, column indices, row pointers, x once, y once.
double byte_model(const BsrPattern& p, int bs) { return benchutil::bsrmv_bytes(p, bs); }

// ---- one matrix against the baselines -----------------------------------------------------------
struct Measurement {
  std::string matrix, variant;
  int bs = 0;
  index_t rows = 0;
  index_t nnzb = 0;
  index_t max_row = 0;
  double bytes = 0;
  Timing ours;
  double err_ours = nan_v;
  // cuSPARSE in every configuration that computes the same product (first variant of a matrix only):
  // bsrmv and SpMV on BSR with row- and column-major blocks (the column-major copy transposed outside
  // the timing), SpMV on the expanded CSR with ALG_DEFAULT and CSR_ALG2 (after cusparseSpMV_preprocess).
  std::vector<bench::Baseline> baselines;
  std::vector<std::string> skip_log;  // one line per reason a baseline was skipped (baseline_limits.hpp)
  bench::BaselineVerdict verdict;
  std::string config;
  bool balanced = false;
};

// y = A x on the CPU (kernels::cpu::bsrmv), A the pattern p with block size bs and values vals: the
// reference every timed product is checked against.
std::vector<double> cpu_product(const BsrPattern& p, int bs, const std::vector<double>& vals,
                                const std::vector<double>& x)
{
  return benchutil::bsrmv_cpu_product(p, bs, vals, x);
}

class Bench {
 public:
  Bench(ExecPtr e, const BsrmvBenchOptions& o) : e_(std::move(e)), o_(o), scrub_(e_)
  {
    BLOCKRES_CUSPARSE_CHECK(cusparseCreate(&handle_));
    BLOCKRES_CUSPARSE_CHECK(cusparseSetStream(handle_, e_->stream()));
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateMatDescr(&descr_));
  }
  ~Bench()
  {
    cusparseDestroyMatDescr(descr_);
    cusparseDestroy(handle_);
  }

  // variants: which of our plans to time ({} = default plan; else forced balance settings).
  std::vector<Measurement> run(const TestMatrix& m, const std::vector<std::pair<std::string, SpmvOptions>>& variants,
                               bool baselines)
  {
    const int bs = m.bs;
    const auto& p = m.pattern;
    const size64_t nval = size64_t(p.nnzb()) * bs * bs;
    std::vector<double> vals = m.values.empty() ? random_values(nval, 17 + bs) : m.values;
    const auto hx = random_values(size64_t(p.ncols) * bs, 99);
    const std::vector<double> ref = cpu_product(p, bs, vals, hx);
    BsrMatrix A(e_, bs, p);
    A.values().copy_from_host(vals);
    vals.clear();
    vals.shrink_to_fit();
    Vector x(e_, std::span<const double>(hx)), y(e_, A.scalar_rows());
    const auto s = e_->stream();
    std::vector<Measurement> out;
    Measurement base;
    base.matrix = m.name, base.bs = bs, base.rows = p.nrows, base.nnzb = p.nnzb(), base.max_row = A.max_row_blocks();
    base.bytes = byte_model(p, bs);
    auto poison = [&] { fill(y, nan_v); };
    for (const auto& [name, opt] : variants) {
      A.set_spmv_options(opt);
      Measurement r = base;
      r.variant = name;
      r.config = kernels::describe(A.spmv_config());
      r.balanced = A.spmv_balanced();
      r.ours = time_on_stream(s, o_.warmup, o_.reps, [&] { spmv(A, 1.0, x, 0.0, y); }, scrub_, poison);
      r.err_ours = max_rel_err(y.to_host(), ref);
      out.push_back(r);
    }
    if (!baselines) return out;
    Measurement& r = out.front();
    // The configurations cuSPARSE can run on this matrix (32-bit indices, the copies in the free device
    // memory); each other one is skipped, said in the log and recorded in the report with its reason.
    std::size_t free_b = 0, total_b = 0;
    BLOCKRES_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const bench::BsrShape shape{std::uint64_t(p.nrows), std::uint64_t(p.ncols), std::uint64_t(p.nnzb()), bs};
    const auto plan = bench::plan_bsrmv_baselines(shape, double(free_b), o_.baseline_limits);
    const std::string label = fmt::format("{} bs {}", m.name, bs);
    r.skip_log = bench::skip_lines("bench bsrmv", label, plan);
    auto why = [&](const std::string& name) {
      for (const auto& d : plan)
        if (d.name == name) return d.skipped;
      throw std::logic_error("bench bsrmv: no plan for baseline " + name);
    };
    auto skip = [&](const std::string& name, const std::string& reason) {
      bench::Baseline b;
      b.name = name;
      b.skipped = reason;
      r.baselines.push_back(b);
    };
    // A skip decided while the baseline is set up (its workspace): recorded and logged.
    auto skip_now = [&](const std::string& name, const std::string& reason) {
      skip(name, reason);
      r.skip_log.push_back(bench::skip_line("bench bsrmv", label, {name}, reason));
    };
    // true (and the skip recorded) when the plan skips `name`.
    auto skipped = [&](const std::string& name) {
      const std::string reason = why(name);
      if (!reason.empty()) skip(name, reason);
      return !reason.empty();
    };
    const double one = 1.0, zero = 0.0;
    auto add = [&](const std::string& name, auto&& launch) {
      bench::Baseline b;
      b.name = name;
      b.time = time_on_stream(s, o_.warmup, o_.reps, launch, scrub_, poison);
      b.error = max_rel_err(y.to_host(), ref);
      r.baselines.push_back(b);
    };
    if (bs >= 2) {
      // Column-major blocks: the same matrix with every block transposed (outside the timing), when the
      // column-major baselines run.
      const bool col_copy = why("cusparse_bsrmv_col").empty() || why("cusparse_spmv_bsr_col").empty();
      Array<double> tvals(e_, col_copy ? nval : 0);
      if (col_copy) {
        auto h = A.values().to_host();
        std::vector<double> t(h.size());
        const size64_t bb = size64_t(bs) * bs;
#pragma omp parallel for schedule(static)
        for (index_t q = 0; q < p.nnzb(); ++q)
          for (int a = 0; a < bs; ++a)
            for (int c = 0; c < bs; ++c) t[size64_t(q) * bb + size64_t(c) * bs + a] = h[size64_t(q) * bb + size64_t(a) * bs + c];
        tvals.copy_from_host(t);
      }
      for (const bool col : {false, true}) {
        const double* v = col ? tvals.data() : A.values().data();
        if (skipped(col ? "cusparse_bsrmv_col" : "cusparse_bsrmv_row")) continue;
        add(col ? "cusparse_bsrmv_col" : "cusparse_bsrmv_row", [&] {
          BLOCKRES_CUSPARSE_CHECK(cusparseDbsrmv(
              handle_, col ? CUSPARSE_DIRECTION_COLUMN : CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE,
              p.nrows, p.ncols, p.nnzb(), &one, descr_, v, A.row_ptr().data(), A.col_ind().data(), bs, x.data(),
              &zero, y.data()));
        });
      }
      for (const bool col : {false, true}) {
        if (skipped(col ? "cusparse_spmv_bsr_col" : "cusparse_spmv_bsr_row")) continue;
        cusparseSpMatDescr_t mat;
        BLOCKRES_CUSPARSE_CHECK(cusparseCreateBsr(
            &mat, p.nrows, p.ncols, p.nnzb(), bs, bs, const_cast<index_t*>(A.row_ptr().data()),
            const_cast<index_t*>(A.col_ind().data()), col ? tvals.data() : A.values().data(), CUSPARSE_INDEX_32I,
            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F, col ? CUSPARSE_ORDER_COL : CUSPARSE_ORDER_ROW));
        generic(col ? "cusparse_spmv_bsr_col" : "cusparse_spmv_bsr_row", mat, x, y, CUSPARSE_SPMV_ALG_DEFAULT, false,
                add, skip_now);
        cusparseDestroySpMat(mat);
      }
    }
    if (why("cusparse_spmv_csr_default").empty() || why("cusparse_spmv_csr_alg2").empty()) {
      // Expanded scalar CSR of the same matrix (explicit zeros kept).
      const size64_t nnz = size64_t(p.nnzb()) * bs * bs;
      Array<index_t> crow(e_, A.scalar_rows() + 1), ccol(e_, nnz);
      Array<double> cval(e_, nnz);
      kernels::cuda::bsr_to_csr(s, A.view(), crow.data(), ccol.data(), cval.data());
      for (const bool alg2 : {false, true}) {
        if (skipped(alg2 ? "cusparse_spmv_csr_alg2" : "cusparse_spmv_csr_default")) continue;
        cusparseSpMatDescr_t mat;
        BLOCKRES_CUSPARSE_CHECK(cusparseCreateCsr(&mat, A.scalar_rows(), size64_t(p.ncols) * bs, nnz, crow.data(),
                                                  ccol.data(), cval.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                                  CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
        generic(alg2 ? "cusparse_spmv_csr_alg2" : "cusparse_spmv_csr_default", mat, x, y,
                alg2 ? CUSPARSE_SPMV_CSR_ALG2 : CUSPARSE_SPMV_ALG_DEFAULT, alg2, add, skip_now);
        cusparseDestroySpMat(mat);
      }
    } else {
      (void)skipped("cusparse_spmv_csr_default");
      (void)skipped("cusparse_spmv_csr_alg2");
    }
    r.verdict = bench::judge_baselines(r.baselines, 1e-12);
    return out;
  }

 private:
  // cusparseSpMV on `mat` with `alg` (preprocessed first when `preprocess`), timed by add(name, launch); when
  // its buffer does not fit the free device memory, skip(name, reason) instead.
  template <class Add, class Skip>
  void generic(const std::string& name, cusparseSpMatDescr_t mat, const Vector& x, Vector& y, cusparseSpMVAlg_t alg,
               bool preprocess, Add&& add, Skip&& skip)
  {
    cusparseDnVecDescr_t vx, vy;
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateDnVec(&vx, x.size(), const_cast<double*>(x.data()), CUDA_R_64F));
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateDnVec(&vy, y.size(), y.data(), CUDA_R_64F));
    const double one = 1.0, zero = 0.0;
    std::size_t bytes = 0;
    BLOCKRES_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero,
                                                    vy, CUDA_R_64F, alg, &bytes));
    std::size_t free_b = 0, total_b = 0;
    BLOCKRES_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    bench::BaselineLimits exact = o_.baseline_limits;
    exact.reserve_bytes = 0;  // the workspace itself
    if (std::string reason = bench::device_memory_limit("cuSPARSE's SpMV buffer", double(bytes), double(free_b), exact);
        !reason.empty()) {
      skip(name, reason);
      cusparseDestroyDnVec(vx);
      cusparseDestroyDnVec(vy);
      return;
    }
    Array<double> buffer(e_, static_cast<size64_t>(bytes / 8 + 1));
    if (preprocess)
      BLOCKRES_CUSPARSE_CHECK(cusparseSpMV_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero,
                                                      vy, CUDA_R_64F, alg, buffer.data()));
    add(name, [&] {
      BLOCKRES_CUSPARSE_CHECK(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy,
                                           CUDA_R_64F, alg, buffer.data()));
    });
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
  }

  ExecPtr e_;
  const BsrmvBenchOptions& o_;
  benchutil::L2Scrub scrub_;  // before every timed call: each starts with a cold L2
  cusparseHandle_t handle_ = nullptr;
  cusparseMatDescr_t descr_ = nullptr;
};

std::string short_name(const std::string& baseline)
{
  const std::string prefix = "cusparse_";
  return baseline.rfind(prefix, 0) == 0 ? baseline.substr(prefix.size()) : baseline;
}

Json measurement_json(const Measurement& r, const Ceilings& c)
{
  const double gbs = r.bytes / (r.ours.median_ms * 1e-3) / 1e9;
  Json j;
  j["matrix"] = r.matrix;
  j["variant"] = r.variant;
  j["block_size"] = r.bs;
  j["block_rows"] = r.rows;
  j["blocks"] = r.nnzb;
  j["max_row_blocks"] = r.max_row;
  j["bytes"] = r.bytes;
  j["fits_in_l2"] = benchutil::fits_in_l2(r.bytes);
  j["config"] = r.config;
  j["balanced"] = r.balanced;
  j["blockres"] = timing_json(r.ours);
  j["gb_per_s"] = gbs;
  j["fraction_of_copy_bandwidth"] = gbs / c.copy_gbs;
  j["fraction_of_read_bandwidth"] = gbs / c.read_gbs;
  j["max_rel_error_blockres"] = r.err_ours;
  if (!r.baselines.empty()) {
    j["fastest_baseline"] =
        r.verdict.fastest >= 0 ? Json(r.baselines[static_cast<std::size_t>(r.verdict.fastest)].name) : Json(nullptr);
    j["speedup_vs_fastest_baseline"] = r.verdict.speedup(r.baselines, r.ours.median_ms);
    Json& baselines = j["baselines"] = Json::array();
    for (std::size_t k = 0; k < r.baselines.size(); ++k) {
      const auto& b = r.baselines[k];
      if (!b.skipped.empty()) {
        baselines.push_back({{"name", b.name}, {"skipped", b.skipped}});
        continue;
      }
      baselines.push_back({{"name", b.name},
                           {"time", timing_json(b.time)},
                           {"max_rel_error", b.error},
                           {"wrong", bool(r.verdict.wrong[k])},
                           {"speedup", bench::speedup_over(r.baselines, r.verdict, k, r.ours.median_ms)}});
    }
  }
  return j;
}

std::string row_text(const Measurement& r, const Ceilings& c)
{
  const double gbs = r.bytes / (r.ours.median_ms * 1e-3) / 1e9;
  std::string best = "    --", best_name = "--";
  if (r.verdict.fastest >= 0) {
    best = fmt::format("{:6.2f}x", r.verdict.speedup(r.baselines, r.ours.median_ms));
    best_name = short_name(r.baselines[static_cast<std::size_t>(r.verdict.fastest)].name);
  }
  std::string flags = benchutil::fits_in_l2(r.bytes) ? " L2" : "";
  for (std::size_t k = 0; k < r.baselines.size(); ++k)
    if (r.verdict.wrong[k]) flags += " WRONG:" + short_name(r.baselines[k].name);
  return fmt::format("{:<18} {:>3} {:>9} {:>8.0f} {:>9.4f} {:>7.0f} {:>5.1f}% {:>5.1f}% {} {:<15} {:>8.1e}  {}{}{}",
                     r.matrix + r.variant, r.bs, r.rows, r.bytes / 1e6, r.ours.median_ms, gbs, 100 * gbs / c.copy_gbs,
                     100 * gbs / c.read_gbs, best, best_name, r.err_ours, r.config, r.balanced ? " balanced" : "", flags);
}

// The other baselines of a row: "name x.xx" each (speedup of ours over it), for the log.
std::string others_text(const Measurement& r)
{
  std::string t;
  for (std::size_t k = 0; k < r.baselines.size(); ++k) {
    const double sp = bench::speedup_over(r.baselines, r.verdict, k, r.ours.median_ms);
    t += fmt::format("{}{} {}", t.empty() ? "" : ", ", short_name(r.baselines[k].name),
                     !r.baselines[k].skipped.empty() ? std::string("skipped")
                     : r.verdict.wrong[k]            ? fmt::format("WRONG (error {:.1e})", r.baselines[k].error)
                     : std::isfinite(sp)             ? fmt::format("{:.2f}x", sp)
                                                     : std::string("--"));
  }
  return t;
}

}  // namespace

int run_bsrmv_bench(const BsrmvBenchOptions& o, const std::function<void(const std::string&)>& log)
{
  benchutil::require_cuda_device("bench bsrmv");
  cudaDeviceProp prop{};
  BLOCKRES_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  log(fmt::format("blockres {} ({}): bench bsrmv on {} ({} SMs, {} MB L2)", version_string(), provenance_text(),
                  prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20));
  // The device's tuning cache (--tuning-cache), one line saying which or why the built-in rule.
  auto e = create_tuned_cuda(0, o.tuning_cache, log);
  const Ceilings ceil = benchutil::measure_ceilings(e, o.warmup, o.reps);
  log(benchutil::ceilings_text(ceil));

  const double tol = bsrmv_tuning_tolerance;
  bool ok = true;
  Json tuning_rows;  // --tune: every configuration's times, per block size
  if (o.tune) {
    // This run's own measurement (the one `blockres tune` writes into the cache), then every row of the tuned
    // block sizes plans with its choice: a new executor holds it.
    log(fmt::format("--tune: every compiled configuration per block size on the 7- and 27-point stencils ({} GB each); "
                    "chosen: the smallest sum of the two times",
                    o.matrix_gb));
    benchutil::BsrmvTuneOptions t;
    t.block_sizes = o.block_sizes;
    t.size_gb = o.matrix_gb;
    t.reps = o.reps;
    t.warmup = o.warmup;
    t.command_line = o.command_line;
    const auto tuned = benchutil::tune_bsrmv(e, t, ceil, log);
    for (const auto& w : tuned.wrong) log("WRONG: " + w);
    ok = tuned.wrong.empty();
    tuning_rows = benchutil::bsrmv_measurements_json(tuned);
    // The measured block sizes over the cache's (or the rule's) for the others, in a new executor.
    KernelTuning merged = e->tuning();
    std::vector<int> measured;
    for (const auto& [bs, c] : benchutil::kernel_tuning_of(tuned.record, "").bsrmv_measured)
      merged.bsrmv_measured[bs] = c, measured.push_back(bs);
    merged.source = fmt::format("this run's measurement (bench bsrmv --tune) for bs {}; the others: {}",
                                fmt::join(measured, ","), e->tuning().source);
    e.reset();  // one executor at a time on the device
    e = Executor::create_cuda(0, std::move(merged));
  }

  Bench bench(e, o);
  Json j;
  write_report_head(j, "bsrmv", o.json_path, e->device_name(), o.command_line);
  j["configuration"] = {
      {"kernel_configs", o.tune ? "--tune: every row of a tuned block size uses the configuration this run measured "
                                  "fastest (the smallest sum of its 7- and 27-point stencil times; the power-law rows "
                                  "also forced balanced and unbalanced); the others take the tuning cache or the "
                                  "built-in rule (tuning_source)"
                                : "the executor's tuning (tuning_source: a tuning cache, else the built-in rule)"},
      {"baselines", "cuSPARSE bsrmv and SpMV on BSR with row- and column-major blocks (the column-major copy "
                    "transposed outside the timing), SpMV on the expanded CSR with ALG_DEFAULT and CSR_ALG2 "
                    "(preprocessed); the speedup is over the fastest baseline whose result verified; a baseline "
                    "that cannot represent the matrix (32-bit indices) or whose copy does not fit the free device "
                    "memory is skipped, its entry saying why"},
      {"timing", "CUDA events around each call, median / min / max of --reps after --warmup; before every call "
                 "(outside the events) a read of 4x the L2 size, so each starts with a cold L2 and no dirty lines to write back"},
      {"checks", "every output poisoned (NaN) before the last timed repetition and compared with the CPU "
                 "reference after it (max relative error <= 1e-12); a baseline above that is flagged wrong "
                 "and gets no speedup"},
      {"matrix_gb", o.matrix_gb},
      {"reps", o.reps},
      {"warmup", o.warmup},
      {"tune", o.tune},
      {"byte_model", "block values + block column indices + row pointers + x once + y once"}};
  benchutil::write_ceilings(j, ceil);
  if (o.tune) j["tuning"] = std::move(tuning_rows);
  ReportChecks checks;

  const std::string header = fmt::format("{:<18} {:>3} {:>9} {:>8} {:>9} {:>7} {:>6} {:>6} {:>7} {:<15} {:>8}  {}",
                                         "matrix", "bs", "rows", "MB", "ms", "GB/s", "%copy", "%read", "speedup",
                                         "fastest cuSPARSE", "rel.err", "kernel");
  log("speedup: the fastest verified cuSPARSE configuration's time / blockres time (the others on the next line); "
      "%read: of the read-only stream; L2: the working set fits in L2");
  log(header);
  Json results = Json::array();
  auto record = [&](const std::vector<Measurement>& rs) {
    for (const auto& r : rs) {
      const std::string name = fmt::format("{}{} bs {}", r.matrix, r.variant, r.bs);
      ok = checks.check(ReportChecks::Kind::correctness, name, r.err_ours <= tol,
                        fmt::format("max relative error {:.1e}", r.err_ours), {}) && ok;
      log(row_text(r, ceil));
      if (!r.baselines.empty()) log("    " + others_text(r));
      for (const auto& line : r.skip_log) log("    " + line);
      results.push_back(measurement_json(r, ceil));
    }
  };
  for (int points : o.stencils)
    for (int bs : o.block_sizes) {
      TestMatrix m{fmt::format("stencil{}", points), bs, stencil_pattern(stencil_side(bs, points, o.matrix_gb), points), {}};
      record(bench.run(m, {{"", {}}}, true));
    }
  for (int bs : o.powerlaw_block_sizes) {
    const index_t rows = static_cast<index_t>(std::max(1000.0, o.matrix_gb * 0.5e9 / (18.0 * (8.0 * bs * bs + 4))));
    TestMatrix m{"powerlaw", bs, powerlaw_pattern(rows, rows, 15000, 3), {}};
    SpmvOptions off, on;
    off.balance = SpmvBalance::off;
    on.balance = SpmvBalance::on;
    record(bench.run(m, {{"-auto", {}}, {"-unbalanced", off}, {"-balanced", on}}, true));
  }
  for (const auto& path : o.jacobians) {
    TestMatrix m = read_jacobian(path);
    record(bench.run(m, {{"", {}}}, true));
  }
  j["results"] = std::move(results);
  j["all_verified"] = ok;
  checks.write_json(j, o.strict);

  // Atomic: the report appears complete or not at all.
  write_tuning_json(j, *e);  // the configuration every row of our kernel planned, and where it came from
  write_json_file(o.json_path, j);
  log(fmt::format("report written to {} ({} checks, {} failed){}", o.json_path, checks.count(),
                  checks.failed(ReportChecks::Kind::correctness), ok ? "" : " (SOME RESULTS FAILED VERIFICATION)"));
  return ok ? checks.exit_code(o.strict) : 1;  // ok also covers the --tune configurations' results
}

}  // namespace blockres
