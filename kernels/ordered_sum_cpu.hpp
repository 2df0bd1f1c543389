// CPU reductions in an order fixed by the length alone, so results do not depend on the OpenMP
// thread count (a CPU run reproduces its baseline bit for bit on any number of cores).
#pragma once

#include "kernels/common.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace blockres::kernels::cpu {

// Entries per block: each block is summed sequentially, then the block sums in block order.
// A reduction over at most this many entries is the plain sequential loop.
inline constexpr size64_t ordered_sum_block = 8192;

// out[0..K) = sums over i in [0, n) of what body(i, acc) adds to acc[0..K). body may also write
// per-entry outputs (it is called exactly once per i). Parallel over blocks when n > threshold.
template <int K, class Body>
std::array<double, K> ordered_sum(size64_t n, size64_t threshold, Body&& body)
{
  const size64_t nb = (n + ordered_sum_block - 1) / ordered_sum_block;
  std::array<double, K> out{};
  if (nb <= 1) {
    for (size64_t i = 0; i < n; ++i) body(i, out.data());
    return out;
  }
  std::vector<std::array<double, K>> partial(static_cast<std::size_t>(nb));
#pragma omp parallel for schedule(static) if (n > threshold)
  for (size64_t b = 0; b < nb; ++b) {
    std::array<double, K> acc{};
    const size64_t end = std::min(n, (b + 1) * ordered_sum_block);
    for (size64_t i = b * ordered_sum_block; i < end; ++i) body(i, acc.data());
    partial[static_cast<std::size_t>(b)] = acc;
  }
  for (const auto& p : partial)
    for (int k = 0; k < K; ++k) out[k] += p[k];
  return out;
}

}  // namespace blockres::kernels::cpu
