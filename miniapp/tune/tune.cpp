// `blockres tune` (CUDA builds): ceilings, the BSRMV measurement, the cache written and read back, a report.
#include "miniapp/tune/tune.hpp"

#include "kernels/spmv/bsrmv.hpp"
#include "miniapp/bench/bench_common.hpp"
#include "miniapp/bench/bsrmv_tune.hpp"
#include "miniapp/bench/report.hpp"
#include "miniapp/io/destination.hpp"
#include "miniapp/io/version.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace blockres {

int run_tune(const TuneOptions& o, const std::function<void(const std::string&)>& log)
{
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  benchutil::require_cuda_device("tune");
  for (int bs : o.block_sizes)
    if (bs < 1 || bs > 64) throw std::runtime_error(fmt::format("tune: block size {} is not in 1..64", bs));
  if (!(o.budget_s > 0)) throw std::runtime_error("tune: --budget-s must be positive");

  const CudaDeviceIdentity id = Executor::cuda_device_identity(0);
  const TuningKey key = make_tuning_key(id, compiled_bsrmv_space());
  std::string path;
  if (o.tuning_cache != "none") {
    path = o.tuning_cache.empty() ? default_tuning_cache_path(key) : o.tuning_cache;
    if (path.empty())
      throw std::runtime_error("tune: no folder for the tuning cache (BLOCKRES_TUNING_DIR, XDG_CACHE_HOME and HOME are "
                               "unset): set one, or name the file with --tuning-cache FILE");
    // Refused now, not after minutes of measuring.
    check_file_destination(path, "--tuning-cache", true);
  }
  log(fmt::format("blockres {} ({}): tune on {} ({} SMs, compute capability {}, driver {})", version_string(),
                  provenance_text(), id.name, id.multiprocessors, key.compute_capability, id.driver_version));
  log(fmt::format("BSRMV: bs {} on the 7- and 27-point stencils, {} GB each, median of {} after {}; budget {:.0f} s; "
                  "cache: {}",
                  fmt::join(o.block_sizes, ","), o.size_gb, o.reps, o.warmup, o.budget_s,
                  path.empty() ? std::string("none (--tuning-cache none: measured and reported only)") : path));

  // The executor's own tuning plays no part: every configuration is timed by name.
  const ExecPtr e = Executor::create_cuda(0);
  const benchutil::Ceilings ceilings = benchutil::measure_ceilings(e, o.warmup, o.reps);
  log(benchutil::ceilings_text(ceilings));

  benchutil::BsrmvTuneOptions t;
  t.block_sizes = o.block_sizes;
  t.size_gb = o.size_gb;
  t.reps = o.reps;
  t.warmup = o.warmup;
  t.budget_s = o.budget_s;
  t.deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.budget_s));
  t.command_line = o.command_line;
  log("per block size: the chosen configuration, its times on the 7- and 27-point stencils and fractions of the "
      "read-only stream, the runner-up (+% of the time), the built-in rule (its time over the chosen one's)");
  auto result = benchutil::tune_bsrmv(e, t, ceilings, log);
  TuningRecord& r = result.record;
  r.elapsed_s = std::chrono::duration<double>(Clock::now() - t0).count();
  for (const auto& w : result.wrong) log("WRONG: " + w);

  double rule_sum = 0, tuned_sum = 0;
  for (const auto& b : r.bsrmv)
    if (b.rule) rule_sum += b.rule->sum_ms(), tuned_sum += b.best.sum_ms();
  log(fmt::format("measured {} block size(s) in {:.1f} s{}{}", r.bsrmv.size(), r.elapsed_s,
                  r.not_measured.empty() ? std::string()
                                         : fmt::format("; bs {} not measured: the built-in rule",
                                                       fmt::join(r.not_measured, ",")),
                  tuned_sum > 0 ? fmt::format("; over them the built-in rule takes {:.3f}x the tuned time", rule_sum / tuned_sum)
                                : std::string()));

  if (!path.empty()) {
    write_tuning_cache(path, r);
    // Read back as every run will: a cache this binary would refuse is a bug here, not a surprise later.
    const TuningLoad back = load_tuning_cache(path, key, compiled_bsrmv_space());
    if (back.status != TuningCacheStatus::loaded)
      throw std::runtime_error(fmt::format("tune: the cache just written does not read back: {}", back.message));
    log(fmt::format("tuning cache written to {}; a run on this GPU logs: {}", path,
                    with_rule_key(back.message, e->dram_gbps_per_sm())));
  }
  if (!o.json_path.empty()) {
    Json j;
    write_report_head(j, "tune", o.json_path, id.name, o.command_line);
    j["cache_file"] = path.empty() ? Json(nullptr) : Json(path);
    j["tuning"] = tuning_record_json(r);
    j["bsrmv_measurements"] = benchutil::bsrmv_measurements_json(result);
    j["wrong"] = result.wrong;
    j["all_verified"] = result.wrong.empty();
    write_json_file(o.json_path, j);
    log(fmt::format("report written to {}", o.json_path));
  }
  if (!result.wrong.empty())
    log(fmt::format("{} configuration result(s) did not verify (never chosen): a kernel bug to report",
                    result.wrong.size()));
  return result.wrong.empty() ? 0 : 1;
}

}  // namespace blockres
