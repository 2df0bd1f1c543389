// Block scatter, diagonal extraction and failure counting (CPU references) against hand-computed values.
#include "kernels/batched/block_diag.hpp"

#include <gtest/gtest.h>
#include <omp.h>

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
