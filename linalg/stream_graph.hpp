// StreamGraph: the launches a piece of host code queues on an executor's stream, recorded once and
// replayed as one launch (a CUDA graph), for work that is the same launch sequence many times over
// (a preconditioner application between two setups: dozens of small kernels, each a few
// microseconds of launch latency when queued one by one). The CPU has no graphs: record() returns
// false and the caller runs its code directly.
#pragma once

#include "linalg/executor.hpp"

#include <cstddef>
#include <functional>

namespace blockres {

class StreamGraph {
 public:
  explicit StreamGraph(ExecPtr exec) : exec_(std::move(exec)) {}
  ~StreamGraph() { reset(); }
  StreamGraph(const StreamGraph&) = delete;
  StreamGraph& operator=(const StreamGraph&) = delete;

  // A recording is held (replay() runs it).
  bool ready() const { return exec_graph_ != nullptr; }
  // Records what body() queues on the executor's stream (nothing of it runs) and makes it
  // replayable. False when there is nothing to record into (the CPU backend) or when a call inside
  // body() could not be recorded (nothing ran then either: run body() directly). Exceptions from
  // body() end the recording and propagate.
  bool record(const std::function<void()>& body);
  // Queues the recording on the stream (ready() must hold).
  void replay() const;
  // Forgets the recording (the pointers or launch shapes it holds are about to change).
  void reset();
  // Whether `exec`'s stream is recording now: work that has its own recording (or that must not be
  // recorded, e.g. timing events) checks this.
  static bool capturing(const Executor& exec);
  // The held recording's size: its nodes (kernels, copies, memsets) and the longest chain of nodes
  // that depend on each other (each a launch latency on the replay's critical path). 0 without one.
  std::size_t nodes() const { return nodes_; }
  std::size_t depth() const { return depth_; }

 private:
  ExecPtr exec_;
  void* exec_graph_ = nullptr;  // cudaGraphExec_t
  std::size_t nodes_ = 0, depth_ = 0;
};

}  // namespace blockres
