// The BSRMV tuning measurement shared by `blockres tune` and `bench bsrmv --tune` (see bsrmv_tune.hpp).
#include "miniapp/bench/bsrmv_tune.hpp"

#include "kernels/spmv/bsrmv.hpp"
#include "linalg/vector_ops.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

namespace blockres::benchutil {

namespace {

using Clock = std::chrono::steady_clock;

std::string utc_now()
{
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Every compiled configuration of m's block size on m, in bsrmv_configs order: its timing and error. Returns
// false (and leaves `out` partial) when the deadline passed before the last configuration was started.
bool time_every_config(const ExecPtr& e, const TestMatrix& m, const BsrmvTuneOptions& o, const L2Scrub& scrub,
                       std::vector<std::pair<Timing, double>>& out)
{
  const int bs = m.bs;
  const auto& p = m.pattern;
  auto vals = random_values(size64_t(p.nnzb()) * bs * bs, 5 + bs);
  const auto hx = random_values(size64_t(p.ncols) * bs, 7);
  const std::vector<double> ref = bsrmv_cpu_product(p, bs, vals, hx);
  BsrMatrix A(e, bs, p);
  A.values().copy_from_host(vals);
  vals.clear();
  vals.shrink_to_fit();
  Vector x(e, std::span<const double>(hx)), y(e, A.scalar_rows());
  for (const auto& c : kernels::cuda::bsrmv_configs(bs)) {
    if (Clock::now() >= o.deadline) return false;
    SpmvOptions opt;
    opt.balance = SpmvBalance::off;
    opt.config = c;
    A.set_spmv_options(opt);
    const Timing t = time_on_stream(e->stream(), o.warmup, o.reps, [&] { spmv(A, 1.0, x, 0.0, y); }, scrub,
                                    [&] { fill(y, nan_v); });  // poisoned before the last timed call
    out.emplace_back(t, max_rel_err(y.to_host(), ref));
  }
  return true;
}

std::string percent(double fraction) { return std::isfinite(fraction) ? fmt::format("{:.0f}%", 100 * fraction) : "--"; }

}  // namespace

double bsrmv_bytes(const BsrPattern& p, int bs)
{
  return double(p.nnzb()) * (8.0 * bs * bs + 4.0) + 4.0 * (p.nrows + 1) + 8.0 * bs * (double(p.ncols) + p.nrows);
}

std::vector<double> bsrmv_cpu_product(const BsrPattern& p, int bs, const std::vector<double>& vals,
                                      const std::vector<double>& x)
{
  std::vector<double> y(static_cast<std::size_t>(p.nrows) * bs);
  kernels::cpu::bsrmv({p.nrows, p.ncols, bs, p.row_ptr.data(), p.col_ind.data(), vals.data()}, 1.0, x.data(), 0.0,
                      y.data());
  return y;
}

BsrmvTuneResult tune_bsrmv(const ExecPtr& e, const BsrmvTuneOptions& o, const Ceilings& ceilings, const Log& log)
{
  const auto t0 = Clock::now();
  const BsrmvSpace space = compiled_bsrmv_space();
  BsrmvTuneResult out;
  TuningRecord& r = out.record;
  r.key = make_tuning_key(Executor::cuda_device_identity(0), space);
  r.measured_utc = utc_now();
  r.command_line = o.command_line;
  r.size_gb = o.size_gb;
  r.reps = o.reps;
  r.warmup = o.warmup;
  r.budget_s = o.budget_s;
  r.read_gbs = ceilings.read_gbs;
  r.copy_gbs = ceilings.copy_gbs;
  r.method = fmt::format(
      "every compiled BSRMV configuration of each block size timed on a 3D 7-point and a 3D 27-point stencil matrix "
      "of about {} GB (block values + indices; random values), median of {} calls after {} untimed, each call after a "
      "read of 4x the L2 size (cold L2, no dirty lines); the output poisoned (NaN) before the last timed call and compared with "
      "the CPU reference (max relative error <= {:g}: a configuration above it is never chosen); chosen: the "
      "smallest sum of the two stencils' median times; fractions of the read-only stream measured in the same run",
      o.size_gb, o.reps, o.warmup, bsrmv_tuning_tolerance);
  const L2Scrub scrub(e);
  for (std::size_t k = 0; k < o.block_sizes.size(); ++k) {
    const int bs = o.block_sizes[k];
    const auto tb = Clock::now();
    const auto configs = kernels::cuda::bsrmv_configs(bs);
    std::vector<BsrmvMeasurement> measured(configs.size());
    const bool started = Clock::now() < o.deadline;
    bool complete = started;
    double row_blocks7 = 0, row_blocks27 = 0;  // mean blocks per block row: the rule's second key
    for (const int points : {7, 27}) {
      if (!complete) break;
      const TestMatrix m{fmt::format("stencil{}", points), bs,
                         stencil_pattern(stencil_side(bs, points, o.size_gb), points), {}};
      (points == 7 ? row_blocks7 : row_blocks27) = double(m.pattern.nnzb()) / double(m.pattern.nrows);
      const double bytes = bsrmv_bytes(m.pattern, bs);
      std::vector<std::pair<Timing, double>> times;
      complete = time_every_config(e, m, o, scrub, times);
      for (std::size_t i = 0; i < times.size(); ++i) {
        auto& x = measured[i];
        x.config = configs[i];
        const double ms = times[i].first.median_ms, frac = bytes / (ms * 1e-3) / 1e9 / ceilings.read_gbs;
        (points == 7 ? x.stencil7_ms : x.stencil27_ms) = ms;
        (points == 7 ? x.stencil7_read_fraction : x.stencil27_read_fraction) = frac;
        (points == 7 ? x.stencil7_error : x.stencil27_error) = times[i].second;
        if (!(times[i].second <= bsrmv_tuning_tolerance))
          out.wrong.push_back(fmt::format("bs {}: {} on the {}-point stencil: max relative error {:.2e}", bs,
                                          kernels::describe(configs[i]), points, times[i].second));
      }
    }
    if (!complete) {
      out.budget_exhausted = true;
      r.not_measured.assign(o.block_sizes.begin() + static_cast<std::ptrdiff_t>(k), o.block_sizes.end());
      log(fmt::format("  the time budget ({:.0f} s) ran out {} bs {}: bs {} not measured, they take the built-in rule",
                      o.budget_s, started ? "during" : "before", bs, fmt::join(r.not_measured, ",")));
      break;
    }
    // The rule's column is the 7-point stencil's rule (short rows, as the reservoir Jacobians have);
    // where the long rows of the 27-point stencil take another configuration, the log says so.
    const auto rule = kernels::cuda::bsrmv_rule(bs, e->dram_gbps_per_sm(), row_blocks7);
    const auto rule27 = kernels::cuda::bsrmv_rule(bs, e->dram_gbps_per_sm(), row_blocks27);
    std::string long_rows;
    if (!(rule27 == rule)) {
      const auto it = std::find_if(measured.begin(), measured.end(),
                                   [&](const BsrmvMeasurement& x) { return x.config == rule27; });
      long_rows = fmt::format(" (27-point: {} {})", kernels::describe(rule27),
                              it == measured.end() ? std::string("not measured")
                                                   : percent(it->stencil27_read_fraction));
    }
    const auto choice = choose_bsrmv_config(bs, measured, rule);
    if (!choice) {
      // Not one configuration verified: nothing to choose, the rule stays (and the run fails on `wrong`).
      r.not_measured.push_back(bs);
      log(fmt::format("  bs {:2}: no configuration's result verified (see the errors above): built-in rule", bs));
      continue;
    }
    r.bsrmv.push_back(*choice);
    out.measured.push_back(measured);
    const auto& c = *choice;
    log(fmt::format("  bs {:2}: {:<42} {:8.4f} + {:8.4f} ms ({} / {} of read); runner-up {}; rule {} {}{}; {} configs, "
                    "{:.1f} s",
                    bs, kernels::describe(c.best.config), c.best.stencil7_ms, c.best.stencil27_ms,
                    percent(c.best.stencil7_read_fraction), percent(c.best.stencil27_read_fraction),
                    c.runner_up ? fmt::format("{} +{:.1f}%", kernels::describe(c.runner_up->config),
                                              100 * (c.runner_up->sum_ms() / c.best.sum_ms() - 1))
                                : std::string("none"),
                    kernels::describe(rule),
                    c.rule ? fmt::format("{:.2f}x the time", c.rule->sum_ms() / c.best.sum_ms())
                           : std::string("NOT VERIFIED"),
                    long_rows, c.configs_timed, std::chrono::duration<double>(Clock::now() - tb).count()));
  }
  r.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

Json bsrmv_measurements_json(const BsrmvTuneResult& result)
{
  Json all = Json::array();
  for (std::size_t k = 0; k < result.record.bsrmv.size(); ++k) {
    Json configs = Json::array();
    for (const auto& m : result.measured[k])
      configs.push_back({{"config", kernels::describe(m.config)},
                         {"stencil7_ms", m.stencil7_ms},
                         {"stencil27_ms", m.stencil27_ms},
                         {"stencil7_fraction_of_read", m.stencil7_read_fraction},
                         {"stencil27_fraction_of_read", m.stencil27_read_fraction},
                         {"stencil7_max_rel_error", m.stencil7_error},
                         {"stencil27_max_rel_error", m.stencil27_error}});
    all.push_back({{"block_size", result.record.bsrmv[k].bs}, {"configs", std::move(configs)}});
  }
  return all;
}

KernelTuning kernel_tuning_of(const TuningRecord& r, const std::string& source)
{
  KernelTuning t;
  t.source = source;
  for (const auto& b : r.bsrmv) t.bsrmv_measured[b.bs] = b.best.config;
  return t;
}

}  // namespace blockres::benchutil
