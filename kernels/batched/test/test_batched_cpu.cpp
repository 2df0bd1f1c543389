// Block scatter, diagonal extraction and failure counting (CPU references) against hand-computed values.
#include "kernels/batched/batched.hpp"
#include "kernels/batched/block_diag.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace blockres;

TEST(BlockDiagCpu, ScatterBlocksIntoDenseMatricesAndCountFailures)
{
  // Two listed blocks (bs 2) of a 3-block value array, scattered into a 4x4 dense matrix
  // (ld 4) at (0,0) and (2,2); entries not listed stay untouched.
  const std::vector<double> val{1, 2, 3, 4, 9, 9, 9, 9, 5, 6, 7, 8};
  const std::vector<index_t> src{0, 2};
  const std::vector<size64_t> off{0, 2 * 4 + 2};
  const std::vector<int> ld{4, 4};
  std::vector<double> dst(16, -1.0);
  kernels::cpu::scatter_blocks(2, 2, src.data(), off.data(), ld.data(), val.data(), dst.data());
  EXPECT_EQ(dst, (std::vector<double>{1, 2, -1, -1, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1, 7, 8}));
  // The diagonal entries of the diagonal blocks (block positions 2 and 0 for rows 0 and 1).
  const std::vector<index_t> diag{2, 0};
  std::vector<double> d(4, -1.0);
  kernels::cpu::extract_diagonal(2, 2, diag.data(), val.data(), d.data());
  EXPECT_EQ(d, (std::vector<double>{5, 8, 1, 4}));
  const std::vector<int> info{0, 3, 0, -1, 0};
  EXPECT_EQ(kernels::cpu::count_nonzero(5, info.data()), 2);
  EXPECT_EQ(kernels::cpu::count_nonzero(0, info.data()), 0);
}

// The size index of a variable batch (issue 31 item 3): every block once, sorted by size (stable), the
// starts per size, and the sub-layouts of size ranges (count, largest size present, the order's slice).
TEST(BatchSizeIndex, SortsBySizeAndSelectsRanges)
{
  std::mt19937 gen(20261127);
  for (int trial = 0; trial < 20; ++trial) {
    const index_t count = std::uniform_int_distribution<index_t>(0, 300)(gen);
    std::vector<index_t> row_off{0};
    for (index_t b = 0; b < count; ++b) row_off.push_back(row_off.back() + std::uniform_int_distribution<index_t>(0, 40)(gen));
    std::vector<index_t> order;
    const kernels::BatchSizeIndex ix = kernels::sort_by_size(count, row_off.data(), order);
    ASSERT_EQ(order.size(), std::size_t(count));
    EXPECT_EQ(ix.order, order.data());
    auto size = [&](index_t b) { return int(row_off[b + 1] - row_off[b]); };
    std::vector<int> seen(std::size_t(count), 0);
    for (std::size_t k = 0; k < order.size(); ++k) {
      ++seen[std::size_t(order[k])];
      if (k > 0) {
        EXPECT_LE(size(order[k - 1]), size(order[k]));
        if (size(order[k - 1]) == size(order[k])) EXPECT_LT(order[k - 1], order[k]);  // stable
      }
    }
    for (int v : seen) EXPECT_EQ(v, 1);
    for (int n = 0; n <= ix.max_size(); ++n)
      for (index_t k = ix.start[std::size_t(n)]; k < ix.start[std::size_t(n) + 1]; ++k) EXPECT_EQ(size(order[std::size_t(k)]), n);
    kernels::BatchLayout L{count, row_off.data(), nullptr, 0, ix.max_size()};
    for (auto [lo, hi] : {std::pair{0, 1}, {2, 2}, {3, 4}, {5, 8}, {9, 16}, {17, 32}, {33, 64}, {7, 3}}) {
      const kernels::BatchLayout c = ix.select(L, lo, hi);
      index_t expect = 0;
      int largest = 0;
      for (index_t b = 0; b < count; ++b)
        if (size(b) >= lo && size(b) <= hi) ++expect, largest = std::max(largest, size(b));
      EXPECT_EQ(c.count, expect) << lo << ".." << hi;
      EXPECT_EQ(c.by_size, nullptr);
      EXPECT_EQ(c.uniform, 0);
      if (expect == 0) continue;
      EXPECT_EQ(c.max_size, largest);
      for (index_t k = 0; k < c.count; ++k) {
        const int n = size(c.block(k));
        EXPECT_TRUE(n >= lo && n <= hi) << "slot " << k << " size " << n;
      }
    }
  }
  std::vector<index_t> order;
  const index_t bad[] = {0, 3, 2};
  EXPECT_THROW(kernels::sort_by_size(2, bad, order), std::invalid_argument);
  EXPECT_THROW(kernels::sort_by_size(-1, bad, order), std::invalid_argument);
}
