// The timing loop and baseline verdicts of every `blockres bench` report, free of CUDA so that the
// CPU tests can prove them able to fail: the timed call's output is poisoned before the last timed
// repetition (what is checked afterwards is that repetition's alone), and a baseline whose result
// is wrong is flagged and gets no speedup.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace blockres::bench {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

struct Timing {
  double median_ms = nan_v, min_ms = nan_v, max_ms = nan_v;
  double q3_ms = nan_v;  // upper quartile: what the bench suite judges a row's spread by (one slow repetition is not)
};

// max |y - ref| / max |ref| (infinite when y holds a non-finite value; the plain max |y - ref| when ref is 0):
// how every bench compares a result with its reference.
inline double max_rel_err(const std::vector<double>& y, const std::vector<double>& ref)
{
  double num = 0, den = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) return std::numeric_limits<double>::infinity();
    num = std::max(num, std::abs(y[i] - ref[i]));
    den = std::max(den, std::abs(ref[i]));
  }
  return den > 0 ? num / den : num;
}

// Median (element n/2 of the sorted times), minimum, maximum and upper quartile (element 3n/4).
inline Timing summarize(std::vector<double> ms)
{
  if (ms.empty()) return {};
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back(), ms[ms.size() * 3 / 4]};
}

// `warmup` untimed calls of prepare(); launch(), then `reps` timed ones, each launch() bracketed by
// clock.start() and clock.stop() (milliseconds); prepare() is not timed. poison() (untimed, before
// that repetition's prepare()) runs before the last timed repetition only, so the output a caller
// checks after the call is that repetition's: a kernel that stops writing its result after the
// warm-up (or writes it only sometimes) is caught, where a poison before the warm-ups would be
// overwritten by them.
template <class Clock, class F, class P, class Q>
Timing time_reps(Clock& clock, int warmup, int reps, F&& launch, P&& prepare, Q&& poison)
{
  if (reps < 1) throw std::invalid_argument("bench timing: at least one timed repetition");
  for (int i = 0; i < warmup; ++i) {
    prepare();
    launch();
  }
  std::vector<double> ms;
  ms.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    if (i == reps - 1) poison();
    prepare();
    clock.start();
    launch();
    ms.push_back(clock.stop());
  }
  return summarize(std::move(ms));
}

// Host wall clock, for work that completes before it returns (the CPU backend).
struct HostClock {
  std::chrono::steady_clock::time_point t0;
  void start() { t0 = std::chrono::steady_clock::now(); }
  double stop() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
};

// One baseline of a report row: its name, time and the error of its result against the CPU
// reference (NaN when it did not run); skipped: why it was not run (a limit of its library the matrix
// exceeds, see miniapp/bench/baseline_limits.hpp), empty otherwise.
struct Baseline {
  std::string name;
  Timing time;
  double error = nan_v;
  std::string skipped;
  bool ran() const { return std::isfinite(time.median_ms); }
};

// The verdict on a row's baselines: a baseline that ran with an error above tol (or a non-finite
// one) is wrong: flagged, and neither the fastest nor given a speedup. fastest: the index of the
// fastest correct baseline, -1 when none.
struct BaselineVerdict {
  std::vector<bool> wrong;
  int fastest = -1;
  bool any_wrong() const { return std::find(wrong.begin(), wrong.end(), true) != wrong.end(); }
  // ours / fastest correct baseline: baseline time over ours (NaN without a correct baseline).
  double speedup(const std::vector<Baseline>& b, double ours_ms) const
  {
    return fastest < 0 ? nan_v : b[static_cast<std::size_t>(fastest)].time.median_ms / ours_ms;
  }
};

inline BaselineVerdict judge_baselines(const std::vector<Baseline>& b, double tol)
{
  BaselineVerdict v;
  v.wrong.resize(b.size(), false);
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (!b[k].ran()) continue;
    if (!(b[k].error <= tol)) {  // NaN errors are wrong too
      v.wrong[k] = true;
      continue;
    }
    if (v.fastest < 0 || b[k].time.median_ms < b[static_cast<std::size_t>(v.fastest)].time.median_ms)
      v.fastest = static_cast<int>(k);
  }
  return v;
}

// The speedup of ours over baseline k, NaN when k did not run or is wrong.
inline double speedup_over(const std::vector<Baseline>& b, const BaselineVerdict& v, std::size_t k, double ours_ms)
{
  return b[k].ran() && !v.wrong[k] ? b[k].time.median_ms / ours_ms : nan_v;
}

}  // namespace blockres::bench
