// Batched small dense matrices of varying size (block-Jacobi blocks, batched benchmarks).
#pragma once

#include "kernels/common.hpp"

namespace blockres::kernels {

// A batch of square blocks stored back to back, each row-major. Block b has
// n_b = row_off[b+1] - row_off[b] rows and columns; entry (i, j) is a[mat_off[b] + i*n_b + j];
// its right-hand side / solution entries are x[row_off[b] + i]. Pivot and permutation arrays
// have one entry per row: p[row_off[b] + i].
// uniform > 0: every block has that size and row_off / mat_off may be null (offsets are
// b*uniform and b*uniform^2). The pointers are host memory for cpu::, device memory for cuda::.
struct BatchLayout {
  index_t count = 0;
  const index_t* row_off = nullptr;   // count + 1
  const size64_t* mat_off = nullptr;  // count + 1
  int uniform = 0;
  int max_size = 0;  // largest n_b (kernel dispatch); equals uniform when uniform > 0

  BLOCKRES_HD int size(index_t b) const { return uniform > 0 ? uniform : int(row_off[b + 1] - row_off[b]); }
  BLOCKRES_HD size64_t row(index_t b) const { return uniform > 0 ? size64_t(b) * uniform : size64_t(row_off[b]); }
  BLOCKRES_HD size64_t mat(index_t b) const
  {
    return uniform > 0 ? size64_t(b) * uniform * uniform : mat_off[b];
  }
};

// info[b] of a factorisation: 0 when block b factored; k > 0 when its k-th pivot (1-based)
// is zero, not finite, or |pivot| <= n_b * eps * max|A_b| (numerically singular). The
// factors of a failed block are undefined.

}  // namespace blockres::kernels
