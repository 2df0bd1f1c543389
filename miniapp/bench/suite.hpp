// `blockres bench` without a section: the fixed, versioned procurement suite (issue 32). One command that
// runs unchanged on any machine (CUDA device or CPU only), measures the machine's ceilings first, then the
// kernels beside their vendor baselines, the Krylov iteration and the application runs, checks every result
// and says VALID or INVALID and why; its JSON report (layout: miniapp/bench/bench_suite.schema.json, version
// suite_version) compares two machines with `blockres bench --compare A.json B.json`.
#pragma once

#include "miniapp/bench/bench_timing.hpp"
#include "miniapp/io/json_file.hpp"
#include "linalg/executor.hpp"

#include <functional>
#include <string>
#include <vector>

namespace blockres::suite {

// The layout and content version of the suite: reports of different versions are not compared. Raised
// whenever a case, a size, a kernel row or the meaning of a figure changes.
constexpr int suite_version = 1;
constexpr const char* schema_name = "blockres-bench-suite";

struct SuiteOptions {
  std::string size = "auto";     // small | medium | large | auto
  std::string backend = "auto";  // auto | cpu | cuda
  std::string json_path = "bench_suite.json";
  int repetitions = 5;           // timed repetitions of every kernel row (median reported), after 2 untimed
  std::string tuning_cache;      // as every section's --tuning-cache
  // CUDA without a usable cache for the device (and no --tuning-cache): the suite's BSRMV block sizes are tuned
  // first within this many seconds and the device's default cache written (what `blockres tune` does).
  double tune_budget_s = 120;
  std::string command_line;
  // Where the application cases' stored baselines are (verification/bench_suite/baselines.json of the
  // source tree, found beside the binary's build or given with --baselines).
  std::string baselines_path;
  // When set: the application runs' summaries are written to this file (merged into it) as the baselines
  // of their size; their check is then skipped and the report says so (never VALID).
  std::string record_baselines;
  // Timing spread (upper quartile / min over the repetitions) above which a row is flagged; a report is
  // INVALID when more than max_spread_fraction of the timed rows are flagged.
  double spread_limit = 1.5;
  double max_spread_fraction = 0.2;
};

using Log = std::function<void(const std::string&)>;

// Runs the suite and writes the report (atomically). Returns 0 for a VALID report, 1 for INVALID.
int run_suite(const SuiteOptions& opt, const Log& log);

// `--compare A.json B.json [...]`: prints the machines side by side (each figure of the first report's rows
// found in the others, as values and as ratios to the first) and the suite scores. Returns 0; throws
// CompareError (exit code 2) for a missing, truncated or foreign file or reports of different suite versions.
struct CompareError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
int compare_reports(const std::vector<std::string>& paths, const Log& log);

// ---- pieces shared by the suite's files (suite*.cpp) -------------------------------------------------
// A timing with its spreads: max / min (reported) and upper quartile / min (judged: a single slow repetition,
// an interrupt or a page fault, does not flag a row; a machine whose times wander does).
Json timing_json(const bench::Timing& t);
double spread(const bench::Timing& t);
double judged_spread(const bench::Timing& t);

// Times launch() on e: every repetition bracketed by e.synchronize() (device work included), warmup untimed
// ones first; poison() before the last timed repetition (bench::time_reps).
bench::Timing time_on(const Executor& e, int warmup, int reps, const std::function<void()>& launch,
                      const std::function<void()>& prepare = [] {}, const std::function<void()>& poison = [] {});

// What a section hands to the verdict: the failed checks (each names the row) and the rows' spreads.
struct Verdict {
  std::vector<std::string> invalid;   // reasons the report is INVALID
  std::vector<std::string> warnings;  // recorded, not disqualifying
  int timed_rows = 0, spread_flagged = 0;
  void check(bool pass, const std::string& what)
  {
    if (!pass) invalid.push_back(what);
  }
  void timed(const std::string& row, const bench::Timing& t, double limit);
};

// The environment switch that makes one kernel's checked result wrong on purpose (a test hook of the
// validity logic: BLOCKRES_SUITE_POISON=<kernel name>, e.g. "bsrmv"); true when it names `kernel`.
bool poisoned(const std::string& kernel);

// Host copy bandwidth (read + written bytes per second, GB/s) of two buffers of `bytes`: an OpenMP loop, each
// buffer first touched by the copying threads; t receives the timing. (The CPU ceiling of the suite and of
// bench amg.)
double host_copy_gbs(const Executor& e, size64_t bytes, int warmup, int reps, bench::Timing& t);

// The ceilings every figure is a fraction of, measured first.
struct Ceilings {
  double copy_gbs = bench::nan_v, read_gbs = bench::nan_v, fp64_gflops = bench::nan_v;
  bench::Timing copy_t, read_t, fp64_t;
  std::string how;  // one line: buffer sizes, method
};
Ceilings measure_ceilings(const ExecPtr& e, const std::string& size, int reps, Verdict& v, const Log& log);

// The BSRMV block sizes of the kernel section (the tune-first step tunes these).
inline std::vector<int> suite_bsrmv_block_sizes() { return {1, 3, 4, 8, 16, 32, 64}; }

// The sections: rows appended to the report's arrays.
void run_kernel_section(const ExecPtr& e, const std::string& size, int reps, const Ceilings& c, Json& rows, Verdict& v,
                        const Log& log);
void run_krylov_section(const ExecPtr& e, const std::string& size, int reps, const Ceilings& c, Json& rows, Verdict& v,
                        const Log& log);
void run_application_section(const ExecPtr& e, const SuiteOptions& opt, const std::string& size, Json& rows,
                             Json& score, Verdict& v, const Log& log);

// Now in UTC, ISO 8601 ("2026-11-27T13:00:55Z"): the report's started_at and each machine state's time.
std::string iso_time_now();

// The machine: hardware and software facts, and its state (load, GPU clocks, temperature, processes).
Json hardware_json(const ExecPtr& e);
Json machine_state_json(const ExecPtr& e);
// Whether a state says the machine was busy, and why (load average above a quarter of the cores, another
// process on the GPU); empty when not.
std::vector<std::string> busy_reasons(const Json& state, int own_threads);

}  // namespace blockres::suite
