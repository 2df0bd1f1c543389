// `blockres bench`: verified, reproducible performance reports (JSON file + terminal table).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace blockres {

struct BsrmvBenchOptions {
  std::vector<int> block_sizes{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64};
  std::vector<int> stencils{7, 27};
  std::vector<int> powerlaw_block_sizes{4, 8};
  double matrix_gb = 3.0;  // block values + column indices of each stencil matrix
  int reps = 25;
  int warmup = 5;
  std::vector<std::string> jacobians;  // HDF5 files written by `blockres run --write-jacobian`
  bool tune = false;                   // search every compiled configuration per block size
  std::string json_path = "bench_bsrmv.json";
  std::string command_line;
};

// Returns the process exit code (0 when every result verified against the CPU reference).
int run_bsrmv_bench(const BsrmvBenchOptions& opt, const std::function<void(const std::string&)>& log);

}  // namespace blockres
