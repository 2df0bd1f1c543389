// The BSRMV tuning measurement (CUDA builds only), shared by `blockres tune` (which writes it into the
// tuning cache) and `blockres bench bsrmv --tune` (which benchmarks with it): every compiled
// configuration of each block size timed on the 3D 7- and 27-point stencils, each result checked
// against the CPU reference, the fastest verified one by the sum of the two times chosen.
//
// To tune a device and write its cache (what `blockres tune` does, miniapp/tune/tune.cpp):
//   const auto ceilings = benchutil::measure_ceilings(e, warmup, reps);
//   const auto result = benchutil::tune_bsrmv(e, options, ceilings, log);
//   write_tuning_cache(path, result.record);   // miniapp/io/tuning_cache.hpp
#pragma once

#include "miniapp/bench/bench_common.hpp"
#include "miniapp/io/tuning_cache.hpp"

#include <chrono>
#include <limits>
#include <string>
#include <vector>

namespace blockres::benchutil {

// Bytes a BSR SpMV must move: block values, column indices, row pointers, x once, y once.
double bsrmv_bytes(const BsrPattern& p, int bs);
// y = A x on the CPU (kernels::cpu::bsrmv), the reference every timed product is checked against.
std::vector<double> bsrmv_cpu_product(const BsrPattern& p, int bs, const std::vector<double>& vals,
                                      const std::vector<double>& x);
using bench::max_rel_err;  // bench_timing.hpp (CUDA-free: the bench suite's checks use it too)

struct BsrmvTuneOptions {
  std::vector<int> block_sizes;  // each 1..64, measured in this order
  double size_gb = 0.5;          // block values + indices of each stencil matrix
  int reps = 10, warmup = 2;     // per configuration and stencil
  // Nothing is started after it: the block size being measured when it passes is dropped, it and the
  // ones after it are left to the built-in rule (TuningRecord::not_measured).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  double budget_s = std::numeric_limits<double>::infinity();  // recorded only; `deadline` decides
  std::string command_line;                                  // recorded in the record
};

struct BsrmvTuneResult {
  TuningRecord record;                         // the cache file's content (key, date, choices, ...)
  std::vector<std::vector<BsrmvMeasurement>> measured;  // per record.bsrmv entry: every configuration
  std::vector<std::string> wrong;              // "bs 4: <config>: max relative error ..." per failed result
  bool budget_exhausted = false;
};

// Tunes every block size of `o` on `e` (its device's key in the record); `ceilings` are the run's
// (read-only stream: the fractions; both stored). Logs one line per block size. Programming and CUDA
// errors throw; a wrong result is recorded in `wrong` (that configuration is never chosen).
BsrmvTuneResult tune_bsrmv(const ExecPtr& e, const BsrmvTuneOptions& o, const Ceilings& ceilings, const Log& log);

// Every configuration's measurement, a report's array: [{"block_size", "configs": [{"config", "stencil7_ms",
// "stencil27_ms", "stencil7_fraction_of_read", "stencil27_fraction_of_read", "stencil7_max_rel_error",
// "stencil27_max_rel_error"}, ...]}, ...].
Json bsrmv_measurements_json(const BsrmvTuneResult& result);

// The record's choices as an executor's tuning, with `source` as its source text.
KernelTuning kernel_tuning_of(const TuningRecord& r, const std::string& source);

}  // namespace blockres::benchutil
