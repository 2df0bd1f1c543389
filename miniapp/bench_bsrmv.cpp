// `blockres bench bsrmv`: BSR SpMV against cuSPARSE (bsrmv, SpMV on BSR, SpMV on the expanded
// CSR) on stencil, power-law and simulator matrices; bandwidth relative to a device-to-device
// copy measured in the same run; every result checked against the CPU reference.
#include "miniapp/bench.hpp"

#include "kernels/bsr_to_csr.hpp"
#include "kernels/bsrmv.hpp"
#include "linalg/bsr_matrix.hpp"
#include "linalg/vector_ops.hpp"
#include "miniapp/bench_common.hpp"
#include "miniapp/json.hpp"
#include "miniapp/version.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>

#include "kernels/cuda_check.cuh"

namespace blockres {

namespace {

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
double byte_model(const BsrPattern& p, int bs)
{
  return double(p.nnzb()) * (8.0 * bs * bs + 4.0) + 4.0 * (p.nrows + 1) + 8.0 * bs * (double(p.ncols) + p.nrows);
}

// ---- one matrix against the baselines -----------------------------------------------------------
struct Measurement {
  std::string matrix, variant;
  int bs = 0;
  index_t rows = 0;
  index_t nnzb = 0;
  index_t max_row = 0;
  double bytes = 0;
  Timing ours, bsrmv, spmv_bsr, spmv_csr;
  double err_ours = nan_v, err_bsrmv = nan_v, err_spmv_bsr = nan_v, err_spmv_csr = nan_v;
  std::string config;
  bool balanced = false;
};

double max_rel_err(const std::vector<double>& y, const std::vector<double>& ref)
{
  double num = 0, den = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) return INFINITY;
    num = std::max(num, std::abs(y[i] - ref[i]));
    den = std::max(den, std::abs(ref[i]));
  }
  return den > 0 ? num / den : num;
}

class Bench {
 public:
  Bench(ExecPtr e, const BsrmvBenchOptions& o) : e_(std::move(e)), o_(o)
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
    std::vector<double> ref(static_cast<std::size_t>(p.nrows) * bs);
    kernels::cpu::bsrmv({p.nrows, p.ncols, bs, p.row_ptr.data(), p.col_ind.data(), vals.data()}, 1.0, hx.data(), 0.0,
                        ref.data());
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
      poison();
      r.ours = time_on_stream(s, o_.warmup, o_.reps, [&] { spmv(A, 1.0, x, 0.0, y); });
      r.err_ours = max_rel_err(y.to_host(), ref);
      out.push_back(r);
    }
    if (!baselines) return out;
    // cuSPARSE's BSR and the expanded CSR below take 32-bit indices (CUSPARSE_INDEX_32I).
    kernels::check_scalar_view_fits_int32(fmt::format("bench bsrmv: cuSPARSE on {} (bs {})", m.name, bs), p.nrows,
                                          p.ncols, bs, p.nnzb());
    Measurement& r = out.front();
    const double one = 1.0, zero = 0.0;
    if (bs >= 2) {
      poison();
      r.bsrmv = time_on_stream(s, o_.warmup, o_.reps, [&] {
        BLOCKRES_CUSPARSE_CHECK(cusparseDbsrmv(handle_, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                               p.nrows, p.ncols, p.nnzb(), &one, descr_, A.values().data(),
                                               A.row_ptr().data(), A.col_ind().data(), bs, x.data(), &zero, y.data()));
      });
      r.err_bsrmv = max_rel_err(y.to_host(), ref);
      cusparseSpMatDescr_t mat;
      BLOCKRES_CUSPARSE_CHECK(cusparseCreateBsr(&mat, p.nrows, p.ncols, p.nnzb(), bs, bs,
                                                const_cast<index_t*>(A.row_ptr().data()),
                                                const_cast<index_t*>(A.col_ind().data()), A.values().data(),
                                                CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                                CUDA_R_64F, CUSPARSE_ORDER_ROW));
      r.spmv_bsr = time_generic(mat, x, y, r.err_spmv_bsr, ref);
      cusparseDestroySpMat(mat);
    }
    {
      // Expanded scalar CSR of the same matrix (explicit zeros kept).
      const size64_t nnz = size64_t(p.nnzb()) * bs * bs;
      Array<index_t> crow(e_, A.scalar_rows() + 1), ccol(e_, nnz);
      Array<double> cval(e_, nnz);
      kernels::cuda::bsr_to_csr(s, A.view(), crow.data(), ccol.data(), cval.data());
      cusparseSpMatDescr_t mat;
      BLOCKRES_CUSPARSE_CHECK(cusparseCreateCsr(&mat, A.scalar_rows(), size64_t(p.ncols) * bs, nnz, crow.data(),
                                                ccol.data(), cval.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                                CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
      r.spmv_csr = time_generic(mat, x, y, r.err_spmv_csr, ref);
      cusparseDestroySpMat(mat);
    }
    return out;
  }

  // Every compiled configuration on one matrix: (config, median ms, error).
  std::vector<std::tuple<kernels::BsrmvConfig, Timing, double>> tune(const TestMatrix& m)
  {
    const int bs = m.bs;
    const auto& p = m.pattern;
    auto vals = random_values(size64_t(p.nnzb()) * bs * bs, 5 + bs);
    const auto hx = random_values(size64_t(p.ncols) * bs, 7);
    std::vector<double> ref(static_cast<std::size_t>(p.nrows) * bs);
    kernels::cpu::bsrmv({p.nrows, p.ncols, bs, p.row_ptr.data(), p.col_ind.data(), vals.data()}, 1.0, hx.data(), 0.0,
                        ref.data());
    BsrMatrix A(e_, bs, p);
    A.values().copy_from_host(vals);
    Vector x(e_, std::span<const double>(hx)), y(e_, A.scalar_rows());
    std::vector<std::tuple<kernels::BsrmvConfig, Timing, double>> out;
    for (const auto& c : kernels::cuda::bsrmv_configs(bs)) {
      SpmvOptions opt;
      opt.balance = SpmvBalance::off;
      opt.config = c;
      A.set_spmv_options(opt);
      fill(y, nan_v);
      const Timing t = time_on_stream(e_->stream(), o_.warmup, o_.reps, [&] { spmv(A, 1.0, x, 0.0, y); });
      out.emplace_back(c, t, max_rel_err(y.to_host(), ref));
    }
    return out;
  }

 private:
  Timing time_generic(cusparseSpMatDescr_t mat, const Vector& x, Vector& y, double& err, const std::vector<double>& ref)
  {
    cusparseDnVecDescr_t vx, vy;
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateDnVec(&vx, x.size(), const_cast<double*>(x.data()), CUDA_R_64F));
    BLOCKRES_CUSPARSE_CHECK(cusparseCreateDnVec(&vy, y.size(), y.data(), CUDA_R_64F));
    const double one = 1.0, zero = 0.0;
    std::size_t bytes = 0;
    BLOCKRES_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero,
                                                    vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    Array<double> buffer(e_, static_cast<size64_t>(bytes / 8 + 1));
    fill(y, nan_v);
    const Timing t = time_on_stream(e_->stream(), o_.warmup, o_.reps, [&] {
      BLOCKRES_CUSPARSE_CHECK(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vx, &zero, vy,
                                           CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buffer.data()));
    });
    err = max_rel_err(y.to_host(), ref);
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
    return t;
  }

  ExecPtr e_;
  const BsrmvBenchOptions& o_;
  cusparseHandle_t handle_ = nullptr;
  cusparseMatDescr_t descr_ = nullptr;
};

void write_measurement(JsonWriter& j, const Measurement& r, double copy_gbs)
{
  auto timing = [&](std::string_view key, const Timing& t) { benchutil::write_timing(j, key, t); };
  const double gbs = r.bytes / (r.ours.median_ms * 1e-3) / 1e9;
  j.begin_object()
      .value("matrix", r.matrix)
      .value("variant", r.variant)
      .value("block_size", r.bs)
      .value("block_rows", static_cast<long long>(r.rows))
      .value("blocks", static_cast<long long>(r.nnzb))
      .value("max_row_blocks", static_cast<long long>(r.max_row))
      .value("bytes", r.bytes)
      .value("config", r.config)
      .value("balanced", r.balanced);
  timing("blockres", r.ours);
  j.value("gb_per_s", gbs).value("fraction_of_copy_bandwidth", gbs / copy_gbs);
  timing("cusparse_bsrmv", r.bsrmv);
  timing("cusparse_spmv_bsr", r.spmv_bsr);
  timing("cusparse_spmv_csr_expanded", r.spmv_csr);
  j.value("speedup_vs_cusparse_bsrmv", r.bsrmv.median_ms / r.ours.median_ms)
      .value("speedup_vs_cusparse_spmv_bsr", r.spmv_bsr.median_ms / r.ours.median_ms)
      .value("speedup_vs_cusparse_spmv_csr_expanded", r.spmv_csr.median_ms / r.ours.median_ms)
      .value("max_rel_error_blockres", r.err_ours)
      .value("max_rel_error_cusparse_bsrmv", r.err_bsrmv)
      .value("max_rel_error_cusparse_spmv_bsr", r.err_spmv_bsr)
      .value("max_rel_error_cusparse_spmv_csr", r.err_spmv_csr)
      .end_object();
}

std::string row_text(const Measurement& r, double copy_gbs)
{
  const double gbs = r.bytes / (r.ours.median_ms * 1e-3) / 1e9;
  auto ratio = [&](const Timing& t) {
    return std::isfinite(t.median_ms) ? fmt::format("{:6.2f}x", t.median_ms / r.ours.median_ms) : std::string("    --");
  };
  return fmt::format("{:<18} {:>3} {:>9} {:>8.0f} {:>9.4f} {:>7.0f} {:>5.1f}% {} {} {} {:>8.1e}  {}{}", r.matrix + r.variant,
                     r.bs, r.rows, r.bytes / 1e6, r.ours.median_ms, gbs, 100 * gbs / copy_gbs, ratio(r.bsrmv),
                     ratio(r.spmv_bsr), ratio(r.spmv_csr), r.err_ours, r.config, r.balanced ? " balanced" : "");
}

}  // namespace

int run_bsrmv_bench(const BsrmvBenchOptions& o, const std::function<void(const std::string&)>& log)
{
  if (std::string why; Executor::cuda_device_count(&why) == 0)
    throw std::runtime_error(missing_gpu_message("bench bsrmv", "bench bsrmv needs a CUDA device (" + why + ")",
                                             MissingGpu::no_device));
  auto e = Executor::create_cuda(0);
  cudaDeviceProp prop{};
  BLOCKRES_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  log(fmt::format("blockres {} (git {}): bench bsrmv on {} ({} SMs, {} MB L2)", version_string(), git_commit(),
                  e->device_name(), prop.multiProcessorCount, prop.l2CacheSize >> 20));
  Timing copy_t;
  const double copy_gbs = benchutil::copy_bandwidth_gbs(e, size64_t(2) << 30, o.warmup, o.reps, copy_t);
  log(fmt::format("device-to-device copy: {:.0f} GB/s (2 GiB, read + write, median of {})", copy_gbs, o.reps));

  Bench bench(e, o);
  JsonWriter j;
  j.begin_object()
      .value("benchmark", "bsrmv")
      .value("blockres_version", version_string())
      .value("git_commit", git_commit())
      .value("device", e->device_name())
      .value("command_line", o.command_line);
  j.begin_object("configuration")
      .value("kernel_configs", o.tune ? "best of --tune in this run (7-point stencil)" : "tuning table / rule")
      .value("matrix_gb", o.matrix_gb)
      .value("reps", o.reps)
      .value("warmup", o.warmup)
      .value("tune", o.tune)
      .value("byte_model", "block values + block column indices + row pointers + x once + y once")
      .end_object();
  j.begin_object("copy_bandwidth").value("gb_per_s", copy_gbs).value("median_ms", copy_t.median_ms).end_object();
  bool ok = true;
  const double tol = 1e-12;

  std::map<int, kernels::BsrmvConfig> tuned;  // --tune: the stencil runs use the best found here
  if (o.tune) {
    j.begin_array("tuning");
    log("tuning (7-point stencil): best configuration per block size");
    for (int bs : o.block_sizes) {
      TestMatrix m{"stencil7", bs, stencil_pattern(stencil_side(bs, 7, o.matrix_gb), 7), {}};
      const auto results = bench.tune(m);
      const double bytes = byte_model(m.pattern, bs);
      const auto best = std::min_element(results.begin(), results.end(), [](auto& a, auto& b) {
        return std::get<1>(a).median_ms < std::get<1>(b).median_ms;
      });
      j.begin_object().value("block_size", bs).begin_array("configs");
      for (const auto& [c, t, err] : results) {
        ok = ok && err <= tol;
        j.begin_object()
            .value("config", kernels::describe(c))
            .value("median_ms", t.median_ms)
            .value("fraction_of_copy_bandwidth", bytes / (t.median_ms * 1e-3) / 1e9 / copy_gbs)
            .value("max_rel_error", err)
            .end_object();
      }
      j.end_array().end_object();
      const auto& c = std::get<0>(*best);
      tuned[bs] = c;
      const double frac = bytes / (std::get<1>(*best).median_ms * 1e-3) / 1e9 / copy_gbs;
      log(fmt::format("  {{\"{}\", {:2}, {{K::{}, {}, {}, {}, {}, {}, {}{}}}}},  // {:.1f}% of copy", e->device_name(),
                      bs, kernels::to_string(c.kernel), c.warps, c.unroll, c.rows_per_warp, c.row_split, c.groups,
                      c.arrays, c.clamped ? ", true" : "", 100 * frac));
    }
    j.end_array();
  }

  const std::string header = fmt::format("{:<18} {:>3} {:>9} {:>8} {:>9} {:>7} {:>6} {:>7} {:>7} {:>7} {:>8}  {}",
                                         "matrix", "bs", "rows", "MB", "ms", "GB/s", "%copy", "bsrmv", "SpMV-B",
                                         "SpMV-C", "rel.err", "kernel");
  log("speedup columns: cuSPARSE time / blockres time (bsrmv, SpMV on BSR, SpMV on expanded CSR)");
  log(header);
  j.begin_array("results");
  auto record = [&](const std::vector<Measurement>& rs) {
    for (const auto& r : rs) {
      ok = ok && r.err_ours <= tol;
      log(row_text(r, copy_gbs));
      write_measurement(j, r, copy_gbs);
    }
  };
  for (int points : o.stencils)
    for (int bs : o.block_sizes) {
      TestMatrix m{fmt::format("stencil{}", points), bs, stencil_pattern(stencil_side(bs, points, o.matrix_gb), points), {}};
      SpmvOptions opt;
      if (tuned.count(bs)) opt.config = tuned[bs];
      record(bench.run(m, {{"", opt}}, true));
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
  j.end_array().value("all_verified", ok).end_object();

  // Atomic: the report appears complete or not at all.
  benchutil::write_file_atomically(o.json_path, j.str());
  log(fmt::format("report written to {}{}", o.json_path, ok ? "" : " (SOME RESULTS FAILED VERIFICATION)"));
  return ok ? 0 : 1;
}

}  // namespace blockres
