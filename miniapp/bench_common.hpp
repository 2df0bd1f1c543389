// Shared pieces of the `blockres bench` reports (CUDA builds only): event timing on a stream,
// the device-to-device copy bandwidth every report is measured against, reproducible random
// values, and the report's JSON timing object / atomic file write.
#pragma once

#include "kernels/common.hpp"
#include "linalg/executor.hpp"
#include "miniapp/json.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <utility>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cuda_check.cuh"

namespace blockres::benchutil {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

struct Timing {
  double median_ms = nan_v, min_ms = nan_v, max_ms = nan_v;
};

// `warmup` untimed calls of prepare(); launch(), then `reps` timed ones: prepare() is enqueued on
// `s` before the start event and is not timed, launch() is bracketed by two events on `s`.
// Median (element reps/2 of the sorted times), minimum and maximum in ms.
template <class F, class P>
Timing time_on_stream(cudaStream_t s, int warmup, int reps, F&& launch, P&& prepare)
{
  for (int i = 0; i < warmup; ++i) {
    prepare();
    launch();
  }
  cudaEvent_t a, b;
  BLOCKRES_CUDA_CHECK(cudaEventCreate(&a));
  BLOCKRES_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    prepare();
    BLOCKRES_CUDA_CHECK(cudaEventRecord(a, s));
    launch();
    BLOCKRES_CUDA_CHECK(cudaEventRecord(b, s));
    BLOCKRES_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    BLOCKRES_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

template <class F>
Timing time_on_stream(cudaStream_t s, int warmup, int reps, F&& launch)
{
  return time_on_stream(s, warmup, reps, std::forward<F>(launch), [] {});
}

// Device-to-device copy of `bytes` (cudaMemcpyAsync), bytes read + written per second in GB/s
// (1e9); t receives the timing of the copy.
double copy_bandwidth_gbs(const ExecPtr& e, size64_t bytes, int warmup, int reps, Timing& t);

// Reproducible pseudo-random numbers (splitmix64): unit(seed, i) is uniform in [-1, 1).
std::uint64_t mix(std::uint64_t z);
double unit(std::uint64_t seed, std::uint64_t i);
// n values unit(seed, 0..n-1), filled in parallel.
std::vector<double> random_values(size64_t n, std::uint64_t seed);

// {"median_ms": ..., "min_ms": ..., "max_ms": ...} under `key`.
void write_timing(JsonWriter& j, std::string_view key, const Timing& t);

// Writes text + '\n' to path + ".tmp" and renames it to path, so the report appears complete or
// not at all. Throws std::runtime_error when the file cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace blockres::benchutil
