// `blockres tune`: measures the CUDA kernels' configurations on this device and writes its tuning cache
// (miniapp/io/tuning_cache.hpp), which every later run and bench of this binary on this device reads.
#pragma once

#include "miniapp/io/tuning_cache.hpp"

#include <functional>
#include <string>
#include <vector>

namespace blockres {

struct TuneOptions {
  std::vector<int> block_sizes = [] {
    std::vector<int> all;
    for (int bs = 1; bs <= 64; ++bs) all.push_back(bs);
    return all;
  }();
  // Block values + indices of each of the two stencil matrices per block size: well above any L2 (50 MB on
  // an H100, 60 MB on an H200), small enough that the default tune fits its budget.
  double size_gb = 0.5;
  double budget_s = tune_default_budget_s;  // the whole run, the ceilings included
  int reps = 10;                            // timed calls per configuration and stencil (median kept)
  int warmup = 2;
  std::string tuning_cache;  // "" the device's default cache, "none" write none (measure and report), else a file
  std::string json_path;     // "" no report
  std::string command_line;  // recorded in the cache and the report
};

// Tunes BSRMV for every block size of `o` within its budget (miniapp/bench/bsrmv_tune.hpp), writes the
// cache atomically, reads it back as a run would and logs that run's line. Returns the exit code: 0, or
// 1 when a configuration's result did not verify (it is never chosen; the cache is still written).
// Throws when there is no CUDA device or the cache cannot be written. Without CUDA: says so and throws.
int run_tune(const TuneOptions& o, const std::function<void(const std::string&)>& log);

}  // namespace blockres
