// Shared pieces of the `blockres bench` reports (CUDA builds only): event timing on a stream,
// the device-to-device copy bandwidth every report is measured against, reproducible random
// values, Jacobian files, and the entry points of report sections that live in their own files.
// The reports' JSON timing object, provenance and atomic write are in miniapp/bench/report.hpp.
#pragma once

#include "kernels/common.hpp"
#include "linalg/array.hpp"
#include "linalg/bsr_matrix.hpp"
#include "linalg/executor.hpp"
#include "linalg/krylov.hpp"
#include "miniapp/bench/bench.hpp"
#include "miniapp/bench/bench_timing.hpp"
#include "miniapp/bench/report.hpp"
#include "miniapp/io/json_file.hpp"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/cuda_check.hpp"

namespace blockres::benchutil {

using bench::nan_v;

using bench::Timing;

// The first step of every GPU-only section: throws missing_gpu_message's error, "<section> needs a CUDA
// device (<why>)", when no CUDA device is visible (section: "bench isai", ...).
void require_cuda_device(std::string_view section);

// CUDA events on a stream: the bracketed work's device time.
class EventClock {
 public:
  explicit EventClock(cudaStream_t s) : s_(s)
  {
    BLOCKRES_CUDA_CHECK(cudaEventCreate(&a_));
    BLOCKRES_CUDA_CHECK(cudaEventCreate(&b_));
  }
  ~EventClock()
  {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  EventClock(const EventClock&) = delete;
  EventClock& operator=(const EventClock&) = delete;
  void start() { BLOCKRES_CUDA_CHECK(cudaEventRecord(a_, s_)); }
  double stop()
  {
    BLOCKRES_CUDA_CHECK(cudaEventRecord(b_, s_));
    BLOCKRES_CUDA_CHECK(cudaEventSynchronize(b_));
    float t = 0;
    BLOCKRES_CUDA_CHECK(cudaEventElapsedTime(&t, a_, b_));
    return t;
  }

 private:
  cudaStream_t s_;
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

// bench::time_reps on a stream (see miniapp/bench/bench_timing.hpp): prepare() is enqueued on `s` before
// the start event and is not timed; poison() runs before the last timed repetition, so what the
// caller checks afterwards is that repetition's output.
template <class F, class P, class Q>
Timing time_on_stream(cudaStream_t s, int warmup, int reps, F&& launch, P&& prepare, Q&& poison)
{
  EventClock clock(s);
  return bench::time_reps(clock, warmup, reps, std::forward<F>(launch), std::forward<P>(prepare),
                          std::forward<Q>(poison));
}

// Without a poison: for what is not checked afterwards, or whose inputs prepare() restores.
template <class F, class P>
Timing time_on_stream(cudaStream_t s, int warmup, int reps, F&& launch, P&& prepare)
{
  return time_on_stream(s, warmup, reps, std::forward<F>(launch), std::forward<P>(prepare), [] {});
}

template <class F>
Timing time_on_stream(cudaStream_t s, int warmup, int reps, F&& launch)
{
  return time_on_stream(s, warmup, reps, std::forward<F>(launch), [] {}, [] {});
}

// The checked form: poison() before the last timed repetition, nothing to prepare.
template <class F, class Q>
Timing time_checked(cudaStream_t s, int warmup, int reps, F&& launch, Q&& poison)
{
  return time_on_stream(s, warmup, reps, std::forward<F>(launch), [] {}, std::forward<Q>(poison));
}

// Repetitions of the bandwidth ceilings: at least 25 timed after 5 untimed, whatever a bench's --reps. A
// ceiling is the denominator of every fraction reported: on one H200, bench isai's 2 + 5 repetitions gave a
// read-only stream of 3942 GB/s where bench bsrmv's 5 + 25 gave 4404-4405 GB/s (2026-11-26).
inline int ceiling_reps(int reps) { return std::max(reps, 25); }
inline int ceiling_warmup(int warmup) { return std::max(warmup, 5); }

// Both ceilings of an SpMV-like report, measured in its run over 2 GiB each with ceiling_warmup /
// ceiling_reps repetitions: the device-to-device copy (read + write) and the read-only stream.
struct Ceilings {
  double copy_gbs = std::numeric_limits<double>::quiet_NaN(), read_gbs = std::numeric_limits<double>::quiet_NaN();
  Timing copy_t, read_t;
  int reps = 0;
};
Ceilings measure_ceilings(const ExecPtr& e, int warmup, int reps);
// "device-to-device copy: ... GB/s (...); read-only stream: ... GB/s (...)", the reports' log line.
std::string ceilings_text(const Ceilings& c);
// The report's "copy_bandwidth" and "read_bandwidth" objects.
void write_ceilings(Json& j, const Ceilings& c);

// Device-to-device copy of `bytes` (cudaMemcpyAsync), bytes read + written per second in GB/s
// (1e9); t receives the timing of the copy.
double copy_bandwidth_gbs(const ExecPtr& e, size64_t bytes, int warmup, int reps, Timing& t);
// Read-only streaming ceiling: kernels::cuda::stream_sum over `bytes` (one read of every byte, result
// checked), bytes read per second in GB/s (1e9); t receives its timing. Rows that mostly read (SpMV)
// report their fraction of this beside the fraction of the copy.
double read_bandwidth_gbs(const ExecPtr& e, size64_t bytes, int warmup, int reps, Timing& t);
// A buffer of 4x the device's L2 (at least 64 MB) read once (kernels::cuda::stream_sum), enqueued
// before a timed call (outside its events): it evicts what the previous call left in L2, so every
// timed call starts cold, and leaves only clean lines behind. (The memset scrub used until
// 2026-11-26 left the L2 full of dirty lines whose write-back, up to the L2's size, fell inside the
// next timed call: up to 60 MB, about 14 us at an H200's 4.4 TB/s, 5% of a 1 GB SpMV; the read-only
// ceiling, measured back to back without a scrub, never pays it. Its share was not measured alone.)
class L2Scrub {
 public:
  explicit L2Scrub(const ExecPtr& e);
  // The buffer's size on the current device: max(4 x L2, 64 MB).
  static size64_t default_bytes();
  void operator()() const;
  size64_t bytes() const { return buf_.size() * sizeof(double); }

 private:
  Array<double> buf_, work_, sum_;
};

// Whether a working set of `bytes` fits in the device's L2 (such rows measure cache, not memory,
// bandwidth and are labelled "L2" in the tables).
bool fits_in_l2(double bytes);

// Reproducible pseudo-random numbers (splitmix64): unit(seed, i) is uniform in [-1, 1).
std::uint64_t mix(std::uint64_t z);
double unit(std::uint64_t seed, std::uint64_t i);
// n values unit(seed, 0..n-1), filled in parallel.
std::vector<double> random_values(size64_t n, std::uint64_t seed);

// A benchmark matrix on the host: BSR pattern and, for matrices read from files, the values.
struct TestMatrix {
  std::string name;
  int bs = 1;
  BsrPattern pattern;
  std::vector<double> values;  // empty: random values are generated
};

// Block pattern of a 7-point (points = 7) or 27-point (points = 27) stencil on an n x n x n grid,
// cells numbered x fastest; every block row has its diagonal block, columns sorted.
BsrPattern stencil_pattern(int n, int points);
// Block values for a stencil_pattern(n, 7): the nonsymmetric convection-diffusion-like matrix of bench isai and
// bench solver, or (symmetric) its symmetric variant with the same pattern; every row strictly diagonally dominant.
std::vector<double> stencil_values(const BsrPattern& p, int bs, bool symmetric);
// Side of the cube whose stencil matrix holds about `gb` GB of block values and column indices
// (at least 4).
int stencil_side(int bs, int points, double gb);

// ||b - A x|| / b_norm (||b - A x|| when b_norm is 0), r as the work vector: how a solve row checks its
// answer (the residual recomputed, not the solver's own estimate).
double relative_residual(const BsrMatrix& A, const Array<double>& b, const Array<double>& x, Array<double>& r,
                         double b_norm);

// A solve row's outcome in a report, added to `row` in this order: "setup_ok", "setup_message",
// "first_setup_ms", "setup_ms", "solve_ms", "time_to_solution_ms", "iterations", "converged", "reason",
// "relative_residual" (bench isai's and bench solver's rows: Row has setup_ok, message, first_ms, setup_ms,
// solve_ms, total_ms(), status and rel_residual).
template <class Row>
void write_solve_outcome(Json& row, const Row& r)
{
  row["setup_ok"] = r.setup_ok;
  row["setup_message"] = r.message;
  row["first_setup_ms"] = r.first_ms;
  row["setup_ms"] = r.setup_ms;
  row["solve_ms"] = r.solve_ms;
  row["time_to_solution_ms"] = r.setup_ok ? r.total_ms() : nan_v;
  row["iterations"] = r.setup_ok ? Json(r.status.iterations) : Json(nullptr);
  row["converged"] = r.status.converged;
  row["reason"] = r.setup_ok ? to_key(r.status.reason) : "setup_failed";
  row["relative_residual"] = r.rel_residual;
}

// A time in ms for the terminal tables, 9 wide ("--" when not measured).
std::string ms(double v);

// A Jacobian written by `blockres run --write-jacobian` (group /jacobian: attributes block_size
// and block_rows, datasets row_ptr, col_ind, values); named after the file's stem. Throws when
// the file is not such a Jacobian.
TestMatrix read_jacobian(const std::string& path);

using Log = std::function<void(const std::string&)>;

// ---- the block-Jacobi section of `bench batched` (bench_block_jacobi.cpp) ---------------------
// Its entry under the report's "configuration" object: what is measured and how ("block_jacobi").
void write_block_jacobi_configuration(Json& j, const BatchedBenchOptions& o);
// Every preconditioner configuration on every Jacobian (jacobians[i] read from o.jacobians[i]):
// logs the table and writes the report's "block_jacobi" array. Returns true when every row verified.
bool run_block_jacobi_section(const ExecPtr& e, const BatchedBenchOptions& o, const std::vector<TestMatrix>& jacobians,
                              Json& j, const Log& log);

}  // namespace blockres::benchutil
