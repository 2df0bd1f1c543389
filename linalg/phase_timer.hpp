// Accumulating phase timer for the Krylov profile and the CPR stage profile: CUDA events on the
// executor's stream (no host synchronisation until collect()), a steady clock on the CPU.
#pragma once

#include "linalg/executor.hpp"

#include <array>
#include <chrono>
#include <vector>

namespace blockres {

class PhaseTimer {
 public:
  enum Phase {
    spmv, precond, orthogonalization,  // Krylov
    cpr_weights, cpr_pressure_setup, cpr_second_setup, cpr_pressure_apply, cpr_second_apply,  // CPR stages
    cpr_graph_apply,  // CPR: both stages' application replayed as one graph
    num_phases
  };

  explicit PhaseTimer(const Executor& exec) : exec_(exec) {}
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

  // Phases do not nest: begin(p) ... end(p) brackets the work queued for phase p. A bracket opened
  // while the stream is being recorded into a graph (StreamGraph) is not timed: events recorded
  // there time nothing (the graph's replay is timed by its caller).
  void begin(Phase p);
  void end(Phase p);
  // Waits for the recorded work (CUDA), adds each phase's seconds to `seconds` and starts over.
  void collect(std::array<double, num_phases>& seconds);

 private:
  using Clock = std::chrono::steady_clock;
  const Executor& exec_;
  Clock::time_point cpu_start_{};
  std::array<double, num_phases> cpu_seconds_{};
  // CUDA: events pairs (start, stop) of each bracket, reused across collect() calls.
  struct Bracket {
    Phase phase;
    int start, stop;  // indices into events_
  };
  std::vector<void*> events_;
  std::vector<Bracket> brackets_;
  int used_ = 0;  // events recorded since the last collect()
  bool skipped_ = false;  // the open bracket is not timed (begun while recording)
  int next_event();
};

}  // namespace blockres
