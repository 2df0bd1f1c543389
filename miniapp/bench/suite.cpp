// `blockres bench` (no section): the procurement suite's driver, ceilings, verdict and report. The sections
// are in suite_kernels.cpp (kernels and Krylov), suite_apps.cpp (application runs), the machine's facts in
// suite_machine.cpp, the comparison of reports in suite_compare.cpp.
#include "miniapp/bench/suite.hpp"

#include "kernels/blas1/blas1.hpp"
#include "miniapp/bench/report.hpp"
#include "miniapp/io/version.hpp"
#include "miniapp/run/backend.hpp"
#include "miniapp/run/threads.hpp"

#if BLOCKRES_HAVE_CUDA
#include "miniapp/bench/suite_cuda.hpp"
#endif

#include <fmt/format.h>

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <stdexcept>

namespace blockres::suite {

Json timing_json(const bench::Timing& t)
{
  return {{"median_ms", t.median_ms}, {"min_ms", t.min_ms},  {"max_ms", t.max_ms},
          {"q3_ms", t.q3_ms},         {"spread", spread(t)}, {"judged_spread", judged_spread(t)}};
}

double spread(const bench::Timing& t) { return t.min_ms > 0 ? t.max_ms / t.min_ms : bench::nan_v; }
double judged_spread(const bench::Timing& t) { return t.min_ms > 0 ? t.q3_ms / t.min_ms : bench::nan_v; }

namespace {
struct ExecClock {
  const Executor& e;
  std::chrono::steady_clock::time_point t0;
  void start()
  {
    e.synchronize();
    t0 = std::chrono::steady_clock::now();
  }
  double stop()
  {
    e.synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
};
}  // namespace

bench::Timing time_on(const Executor& e, int warmup, int reps, const std::function<void()>& launch,
                      const std::function<void()>& prepare, const std::function<void()>& poison)
{
  ExecClock clock{e, {}};
  return bench::time_reps(clock, warmup, reps, launch, prepare, poison);
}

void Verdict::timed(const std::string& row, const bench::Timing& t, double limit)
{
  ++timed_rows;
  const double s = judged_spread(t);
  if (!(s <= limit)) {
    ++spread_flagged;
    warnings.push_back(fmt::format("{}: timing spread {:.2f} (upper quartile / min; max / min {:.2f}) above {:.2f}", row,
                                   s, spread(t), limit));
  }
}

bool poisoned(const std::string& kernel)
{
  const char* p = std::getenv("BLOCKRES_SUITE_POISON");
  return p != nullptr && kernel == p;
}

// ---- ceilings ------------------------------------------------------------------------------------------
double host_copy_gbs(const Executor& e, size64_t bytes, int warmup, int reps, bench::Timing& t)
{
  const size64_t n = bytes / 8;
  auto a = std::make_unique_for_overwrite<double[]>(static_cast<std::size_t>(n));
  auto b = std::make_unique_for_overwrite<double[]>(static_cast<std::size_t>(n));
  double* pa = a.get();
  double* pb = b.get();
#pragma omp parallel for schedule(static)
  for (size64_t i = 0; i < n; ++i) pa[i] = 1.0, pb[i] = 0.0;  // first touch by the copying threads
  t = time_on(e, warmup, reps, [&] {
#pragma omp parallel for schedule(static)
    for (size64_t i = 0; i < n; ++i) pb[i] = pa[i];
  });
  return 2.0 * double(n) * 8.0 / (t.median_ms * 1e-3) / 1e9;
}

namespace {

Ceilings host_ceilings(const ExecPtr& e, size64_t bytes, int reps)
{
  Ceilings c;
  host_copy_gbs(*e, bytes, 2, reps, c.copy_t);  // its timing; the rate below is the best one, not the median
  const size64_t n = bytes / 8;
  auto a = std::make_unique_for_overwrite<double[]>(static_cast<std::size_t>(n));
  double* pa = a.get();
#pragma omp parallel for schedule(static)
  for (size64_t i = 0; i < n; ++i) pa[i] = double(i % 7);  // first touch by the reading threads
  double sum = 0.0;
  c.read_t = time_on(*e, 2, reps, [&] { sum = kernels::cpu::stream_sum(n, pa); });
  c.read_gbs = double(n) * 8.0 / (c.read_t.min_ms * 1e-3) / 1e9;  // best rate, as STREAM (cuda::device_ceilings)
  double want = 21.0 * double(n / 7);  // 0..6 repeated: the sum is exact in doubles
  for (size64_t i = n / 7 * 7; i < n; ++i) want += double(i % 7);
  if (sum != want) throw std::runtime_error(fmt::format("bench suite: the host read-only pass summed {} where {} is right", sum, want));
  const size64_t lanes = size64_t(omp_get_max_threads()) * 64;
  constexpr int iterations = 20000;
  std::vector<double> out(static_cast<std::size_t>(lanes));
  c.fp64_t = time_on(*e, 1, reps, [&] { kernels::cpu::fp64_peak(lanes, iterations, out.data()); });
  c.fp64_gflops = kernels::cpu::fp64_peak_flops(lanes, iterations) / (c.fp64_t.min_ms * 1e-3) / 1e9;
  c.copy_gbs = 2.0 * double(n) * 8.0 / (c.copy_t.min_ms * 1e-3) / 1e9;
  c.how = fmt::format("best of {}; copy: an OpenMP loop over 2 x {} MiB; read: stream_sum over {} MiB; fp64: {} lanes x "
                      "{} chains x {} multiply-add steps, {} threads",
                      reps, bytes >> 20, bytes >> 20, lanes, kernels::cpu::fp64_peak_chains, iterations,
                      omp_get_max_threads());
  return c;
}

}  // namespace

Ceilings measure_ceilings(const ExecPtr& e, const std::string& size, int reps, Verdict& v, const Log& log)
{
  const size64_t mib = size == "small" ? 256 : size == "medium" ? 512 : 2048;
  Ceilings c;
#if BLOCKRES_HAVE_CUDA
  if (e->is_cuda()) c = cuda::device_ceilings(e, mib << 20, std::max(reps, 25));
#endif
  if (!e->is_cuda()) c = host_ceilings(e, mib << 20, std::max(reps, 5));
  log(fmt::format("ceilings: copy {:.1f} GB/s, read-only {:.1f} GB/s, FP64 {:.1f} GFLOP/s ({})", c.copy_gbs, c.read_gbs,
                  c.fp64_gflops, c.how));
  // The ceilings' spreads are recorded in the report, not judged (nor counted among the timed rows): they are the
  // maxima the rows are fractions of.
  v.check(std::isfinite(c.copy_gbs) && c.copy_gbs > 0, "ceiling: copy bandwidth not measured");
  v.check(std::isfinite(c.read_gbs) && c.read_gbs > 0, "ceiling: read bandwidth not measured");
  v.check(std::isfinite(c.fp64_gflops) && c.fp64_gflops > 0, "ceiling: FP64 throughput not measured");
  return c;
}

// ---- the driver ----------------------------------------------------------------------------------------
std::string iso_time_now()
{
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

namespace {

// auto: on CUDA the largest size whose stated working set fits 40% of the device's free memory; on the CPU
// backend small (medium and large are sized for a GPU: hours on a workstation's cores).
std::string resolve_size(const ExecPtr& e, const std::string& size, const Json& hw, const Log& log)
{
  if (size != "auto") return size;
  if (!e->is_cuda()) {
    log("size auto on the CPU backend: small (medium and large are sized for a GPU)");
    return "small";
  }
  const double free_gib = hw["gpu"].value("free_memory_gib", 0.0);
  // The largest working sets of each size: the application cases' peak device memory (nc 64 at 100k cells
  // ~23 GB in large, ~4 GB in medium), plus the kernels' 2 GB matrices.
  const std::string pick = free_gib * 0.4 >= 26.0 ? "large" : free_gib * 0.4 >= 6.0 ? "medium" : "small";
  log(fmt::format("size auto: {} (40% of the {:.1f} GiB free on the device; large needs 26 GiB, medium 6 GiB)", pick,
                  free_gib));
  return pick;
}

}  // namespace

int run_suite(const SuiteOptions& opt, const Log& log)
{
  const auto t_start = std::chrono::steady_clock::now();
  if (opt.size != "small" && opt.size != "medium" && opt.size != "large" && opt.size != "auto")
    throw std::invalid_argument("--size " + opt.size + ": expected small, medium, large or auto");
  ExecPtr e = choose_backend(opt.backend, log, false, opt.tuning_cache);
  std::string tuned_now;  // the tune-first step's line, when it ran
#if BLOCKRES_HAVE_CUDA
  if (e->is_cuda()) {
    tuned_now = cuda::tune_if_missing(opt.tuning_cache, suite_bsrmv_block_sizes(), opt.tune_budget_s, log);
    if (!tuned_now.empty()) {
      log(tuned_now);
      e = choose_backend(opt.backend, log, false, opt.tuning_cache);  // the executor with the cache just written
    }
  }
#endif
  Json j;
  j["schema"] = schema_name;
  j["suite_version"] = suite_version;
  write_report_head(j, "suite", opt.json_path, e->device_name(), opt.command_line);
  j["started_at"] = iso_time_now();
  j["hardware"] = hardware_json(e);
  const std::string size = resolve_size(e, opt.size, j["hardware"], log);
  j["parameters"] = {{"size", size},
                     {"size_requested", opt.size},
                     {"backend", e->is_cuda() ? "cuda" : "cpu"},
                     {"repetitions", opt.repetitions},
                     {"warmup", 2},
                     {"threads", omp_get_max_threads()},
                     {"spread_limit", opt.spread_limit},
                     {"max_spread_fraction", opt.max_spread_fraction}};
  j["software"] = {{"blockres_version", version_string()},
                   {"git_commit", git_commit()},
                   {"provenance", provenance_text()},
                   {"build_type", BLOCKRES_SUITE_BUILD_TYPE},
                   {"compiler", BLOCKRES_SUITE_COMPILER},
                   {"cxx_flags", BLOCKRES_SUITE_CXX_FLAGS},
                   {"cuda_architectures", BLOCKRES_SUITE_CUDA_ARCHITECTURES},
                   {"tuning", e->is_cuda() ? e->tuning().source : std::string("none (CPU backend)")},
                   {"tuned_now", tuned_now}};
  Json state_before = machine_state_json(e);
  log(fmt::format("suite version {}, size {}, backend {}, {} repetitions", suite_version, size,
                  e->is_cuda() ? "cuda" : "cpu", opt.repetitions));

  Verdict v;
  const Ceilings c = measure_ceilings(e, size, opt.repetitions, v, log);
  j["ceilings"] = {{"copy_gbs", c.copy_gbs}, {"read_gbs", c.read_gbs}, {"fp64_gflops", c.fp64_gflops},
                   {"copy", timing_json(c.copy_t)}, {"read", timing_json(c.read_t)}, {"fp64", timing_json(c.fp64_t)},
                   {"how", c.how}};
  j["kernels"] = Json::array();
  run_kernel_section(e, size, opt.repetitions, c, j["kernels"], v, log);
  j["krylov"] = Json::array();
  run_krylov_section(e, size, opt.repetitions, c, j["krylov"], v, log);
  j["applications"] = Json::array();
  j["score"] = Json::object();
  run_application_section(e, opt, size, j["applications"], j["score"], v, log);

  Json state_after = machine_state_json(e);
  std::vector<std::string> busy = busy_reasons(state_before, omp_get_max_threads());
  for (const auto& r : busy_reasons(state_after, omp_get_max_threads())) busy.push_back(r + " (after)");
  j["machine_state"] = {{"before", state_before}, {"after", state_after}, {"busy", !busy.empty()}, {"busy_reasons", busy}};
  for (const auto& r : busy) v.invalid.push_back("busy machine: " + r);
  if (v.timed_rows > 0 && double(v.spread_flagged) > opt.max_spread_fraction * double(v.timed_rows))
    v.invalid.push_back(fmt::format("timing spread: {} of {} timed rows above {:.2f} (at most {:.0f}% may be)",
                                    v.spread_flagged, v.timed_rows, opt.spread_limit, 100 * opt.max_spread_fraction));
  if (!opt.record_baselines.empty())
    v.invalid.push_back("baselines recorded in this run (--record-baselines): the application runs were not checked");

  const bool valid = v.invalid.empty();
  j["validity"] = {{"verdict", valid ? "VALID" : "INVALID"}, {"reasons", v.invalid}, {"warnings", v.warnings},
                   {"timed_rows", v.timed_rows}, {"spread_flagged", v.spread_flagged}};
  j["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  write_json_file(opt.json_path, j);

  // The one-page summary.
  log("");
  log(fmt::format("== blockres bench suite {} ({}), {} on {}", suite_version, size, e->is_cuda() ? "cuda" : "cpu",
                  e->device_name()));
  log(fmt::format("ceilings: copy {:.1f} GB/s, read {:.1f} GB/s, FP64 {:.1f} GFLOP/s", c.copy_gbs, c.read_gbs,
                  c.fp64_gflops));
  log(fmt::format("{:<22} {:<10} {:>4} {:>10} {:>9} {:>6} {:>9}  {}", "kernel", "variant", "bs", "ms", "GB/s", "frac",
                  "vs vendor", "check"));
  for (const Json& r : j["kernels"]) {
    const double sp = r["speedup"].is_number() ? r["speedup"].get<double>() : bench::nan_v;
    log(fmt::format("{:<22} {:<10} {:>4} {:>10.4f} {:>9.1f} {:>5.0f}% {:>9} {}", r["kernel"].get<std::string>(),
                    r["variant"].get<std::string>(), r["block_size"].get<int>(), r["ms"].get<double>(),
                    r["gbs"].get<double>(), 100 * r["fraction"].get<double>(),
                    std::isfinite(sp) ? fmt::format("{:.2f}x", sp) : std::string("--"),
                    r["check"]["pass"].get<bool>() ? "ok" : "FAILED"));
  }
  for (const Json& r : j["krylov"])
    log(fmt::format("krylov {} bs {}: {:.1f} us per iteration, {:.0f}% of copy", r["method"].get<std::string>(),
                    r["block_size"].get<int>(), r["us_per_iteration"].get<double>(), 100 * r["fraction"].get<double>()));
  log(fmt::format("{:<20} {:>9} {:>7} {:>9} {:>11} {:>14}  {}", "application", "cells", "Newton", "lin/Newt",
                  "ms/Newton", "cell-Newton/s", "check"));
  for (const Json& r : j["applications"])
    log(fmt::format("{:<20} {:>9} {:>7} {:>9.1f} {:>11.2f} {:>14.4g}  {}", r["case"].get<std::string>(),
                    r["cells"].get<long long>(), r["newton_iterations"].get<int>(),
                    r["linear_iterations_per_newton"].get<double>(), r["ms_per_newton"].get<double>(),
                    r["figure_of_merit"]["value"].get<double>(),
                    r["check"]["pass"].get<bool>() ? "ok" : opt.record_baselines.empty() ? "FAILED" : "recorded"));
  if (j["score"].contains("value"))
    log(fmt::format("suite score: {:.4g} {} (geometric mean of {} cases)", j["score"]["value"].get<double>(),
                    j["score"]["unit"].get<std::string>(), j["score"]["cases"].get<int>()));
  for (const auto& w : v.warnings) log("warning: " + w);
  log(fmt::format("verdict: {}", valid ? "VALID" : "INVALID"));
  for (const auto& r : v.invalid) log("  invalid: " + r);
  log(fmt::format("report: {} ({:.0f} s)", opt.json_path, j["wall_seconds"].get<double>()));
  return valid ? 0 : 1;
}

}  // namespace blockres::suite
