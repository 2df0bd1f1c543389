// When a CPU kernel opens an OpenMP parallel region: only for work that pays for the region's fork
// and join. Below this, a kernel runs on the calling thread (the AMG coarse levels, the tiny vectors
// of a small deck). What keeps the CPU backend from collapsing when other work shares the cores is
// the load adaptation of miniapp/run/threads.hpp (fewer threads while others are runnable); this only
// trims regions that cost more than they save even on idle cores.
#pragma once

#include "kernels/common.hpp"

#include <cstdlib>

namespace blockres::kernels::cpu {

// Work units are the scalar entries (8-byte values) a kernel reads or writes, about a nanosecond
// each on one core: 2^14 is some 16 microseconds of serial work. Measured on the 2-core development
// machine with the default deck on an idle machine (4 runs each): 1.08-1.17 s with every region
// parallel (0) and 1.10-1.16 s at 2^14, but 1.19-1.22 s at 2^16 and 1.41 s at 2^17, where the SpMV
// and preconditioner of a 4,500-cell deck start running serially. BLOCKRES_OMP_MIN_WORK (read once)
// overrides it, for such measurements.
inline size64_t parallel_min_work()
{
  static const size64_t w = [] {
    const char* v = std::getenv("BLOCKRES_OMP_MIN_WORK");
    if (v && *v) {
      char* end = nullptr;
      const long long x = std::strtoll(v, &end, 10);
      if (end && *end == '\0' && x >= 0) return size64_t(x);
    }
    return size64_t(1) << 14;
  }();
  return w;
}

// True when `work` units justify a parallel region (use in `#pragma omp parallel ... if (...)`).
inline bool parallel_worth(size64_t work) { return work >= parallel_min_work(); }

}  // namespace blockres::kernels::cpu
