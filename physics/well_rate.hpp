// The weighted rate of a rate-controlled well as a function of its bottom-hole pressure, shared by
// both models' well code (CPU and CUDA): each completion's connection rate is linear in the BHP on
// either side of its breakpoint (where it turns from producing to injecting).
#pragma once

#include "kernels/common.hpp"

namespace blockres::physics {

// F(b) = sum_c (b < bp_c ? below_c : above_c) (b - bp_c) over n completions whose scratch rows lie
// `stride` doubles apart: [0] breakpoint bp_c, [1] slope below it, [2] slope above it. F is
// continuous, piecewise linear and non-decreasing when the slopes are non-negative; summed in
// completion order.
BLOCKRES_HD double piecewise_well_rate(const double* scratch, size64_t stride, index_t n, double b)
{
  double f = 0.0;
  for (index_t c = 0; c < n; ++c) {
    const double* s = scratch + size64_t(c) * stride;
    f += (b < s[0] ? s[1] : s[2]) * (b - s[0]);
  }
  return f;
}

}  // namespace blockres::physics
