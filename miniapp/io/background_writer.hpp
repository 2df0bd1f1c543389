// Output off the critical path: one worker thread runs the output jobs of a run (HDF5 rows,
// report fields, VTK pieces, checkpoints) in the order they were submitted, while the time loop
// goes on with the next step. Every output call of a run goes through one writer, so the HDF5
// library (serial, not thread-safe) is only ever entered from one thread at a time.
//
// Bounded: at most `max_heavy` heavy jobs (a report: it holds a copy of the state) wait or run at
// once; submitting another blocks until one finishes, so memory stays at most that many state
// copies. Failure: the first job that throws stops the writer (later jobs are dropped: the files
// they would extend are in an unknown state); the next submit() or drain() rethrows that error in
// the caller's thread. The atomic-rename guarantees of the jobs themselves (result temporary,
// checkpoint temporary) are unchanged: a job runs exactly as it would have in the caller.
//
// Disabled (output.background_writer = false), every job runs in submit() itself.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace blockres {

class BackgroundWriter {
 public:
  // thread_init runs once on the worker before any job (e.g. the run's OpenMP thread count).
  explicit BackgroundWriter(bool enabled, std::size_t max_heavy = 2, std::function<void()> thread_init = {});
  // Waits for the jobs still queued (their errors were, or can no longer be, reported), then joins.
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Queues job (runs it here when disabled). Rethrows a failed earlier job's error instead.
  void submit(std::function<void()> job, bool heavy = false);
  // Returns when every job submitted so far has run; rethrows the first failure (every call, until
  // the writer is destroyed: a failed writer stays failed).
  void drain();

  bool enabled() const { return enabled_; }
  // Seconds the jobs took (on the worker, or in submit() when disabled), and seconds the caller
  // spent blocked in submit() (the queue full) and drain().
  double busy_seconds() const;
  double wait_seconds() const;

 private:
  struct Job {
    std::function<void()> run;
    bool heavy;
  };
  void work();

  const bool enabled_;
  const std::size_t max_heavy_;
  mutable std::mutex m_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  std::size_t heavy_pending_ = 0;  // heavy jobs queued or running
  bool running_ = false;           // the worker is inside a job
  bool stop_ = false;
  std::exception_ptr error_;
  double busy_ = 0.0, wait_ = 0.0;
  std::thread worker_;
};

}  // namespace blockres
