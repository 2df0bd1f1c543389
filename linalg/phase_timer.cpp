// PhaseTimer: CUDA events or a steady clock (see phase_timer.hpp).
#include "linalg/phase_timer.hpp"

#include "linalg/stream_graph.hpp"

#if BLOCKRES_HAVE_CUDA
#include "kernels/cuda_check.hpp"
#endif

namespace blockres {

PhaseTimer::~PhaseTimer()
{
#if BLOCKRES_HAVE_CUDA
  for (void* e : events_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
#endif
}

int PhaseTimer::next_event()
{
#if BLOCKRES_HAVE_CUDA
  if (used_ == static_cast<int>(events_.size())) {
    cudaEvent_t e = nullptr;
    BLOCKRES_CUDA_CHECK(cudaEventCreate(&e));
    events_.push_back(e);
  }
  BLOCKRES_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(events_[used_]), exec_.stream()));
#endif
  return used_++;
}

void PhaseTimer::begin(Phase p)
{
  if (exec_.is_cuda() && StreamGraph::capturing(exec_)) {
    skipped_ = true;
    return;
  }
  if (exec_.is_cuda()) {
    brackets_.push_back({p, next_event(), -1});
    return;
  }
  cpu_start_ = Clock::now();
}

void PhaseTimer::end(Phase p)
{
  if (skipped_) {
    skipped_ = false;
    return;
  }
  if (exec_.is_cuda()) {
    brackets_.back().stop = next_event();
    return;
  }
  cpu_seconds_[p] += std::chrono::duration<double>(Clock::now() - cpu_start_).count();
}

void PhaseTimer::collect(std::array<double, num_phases>& seconds)
{
#if BLOCKRES_HAVE_CUDA
  if (exec_.is_cuda() && used_ > 0) {
    BLOCKRES_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(events_[used_ - 1])));
    for (const Bracket& b : brackets_) {
      if (b.stop < 0) continue;
      float ms = 0.0f;
      BLOCKRES_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(events_[b.start]),
                                               static_cast<cudaEvent_t>(events_[b.stop])));
      seconds[b.phase] += 1e-3 * ms;
    }
  }
#endif
  for (int p = 0; p < num_phases; ++p) seconds[p] += cpu_seconds_[p];
  cpu_seconds_ = {};
  brackets_.clear();
  used_ = 0;
}

}  // namespace blockres
