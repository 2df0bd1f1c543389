// Batched small dense matrices of varying size (block-Jacobi blocks, batched benchmarks).
#pragma once

#include "kernels/common.hpp"

#include <vector>

namespace blockres::kernels {

struct BatchSizeIndex;

// A batch of square blocks stored back to back, each row-major. Block b has
// n_b = row_off[b+1] - row_off[b] rows and columns; entry (i, j) is a[mat_off[b] + i*n_b + j];
// its right-hand side / solution entries are x[row_off[b] + i]. Pivot and permutation arrays
// have one entry per row: p[row_off[b] + i].
// uniform > 0: every block has that size and row_off / mat_off may be null (offsets are
// b*uniform and b*uniform^2). The pointers are host memory for cpu::, device memory for cuda::.
//
// Size classes (issue 31 item 3, CUDA only): a variable layout may carry `by_size`, its blocks sorted by
// size (BatchSizeIndex below, made once per layout). The CUDA kernels then launch one kernel per size
// class on that class's blocks only (`select`), so a 4-row block of a batch whose largest block has 32
// rows takes a 4-lane slot, not a 32-lane one, and no launch visits the other classes' blocks.
// (The Gauss–Huard solve and the block-diagonal GEMV above 8 rows ignore the index: measured faster on the whole
// layout, batched_gh_cuda.cu.)
// `select` (device, set by the dispatchers, not by callers): the launch's k-th block is block select[k],
// k < count; every row_off / mat_off / perm / info index stays the block's own.
struct BatchLayout {
  index_t count = 0;
  const index_t* row_off = nullptr;   // count + 1
  const size64_t* mat_off = nullptr;  // count + 1
  int uniform = 0;
  int max_size = 0;  // largest n_b (kernel dispatch); equals uniform when uniform > 0
  const BatchSizeIndex* by_size = nullptr;  // host object; variable layouts on CUDA only
  const index_t* select = nullptr;          // device; see above

  // The block of the launch's k-th slot.
  BLOCKRES_HD index_t block(size64_t k) const { return select ? select[k] : index_t(k); }
  BLOCKRES_HD int size(index_t b) const { return uniform > 0 ? uniform : int(row_off[b + 1] - row_off[b]); }
  BLOCKRES_HD size64_t row(index_t b) const { return uniform > 0 ? size64_t(b) * uniform : size64_t(row_off[b]); }
  BLOCKRES_HD size64_t mat(index_t b) const
  {
    return uniform > 0 ? size64_t(b) * uniform * uniform : mat_off[b];
  }
};

// The blocks of a variable layout sorted by size, ascending (ties by block index): order holds the block
// indices (device memory for the CUDA kernels), start[n] the position of the first block of size >= n
// (n = 0..max_size + 1, so the blocks of sizes lo..hi are order[start[lo] .. start[hi + 1])).
struct BatchSizeIndex {
  std::vector<index_t> start;
  const index_t* order = nullptr;
  int max_size() const { return int(start.size()) - 2; }
  // The sub-layout of the blocks with lo <= n_b <= hi (count 0 when none; its max_size is the largest
  // size present, its select the class's part of `order`).
  BatchLayout select(const BatchLayout& L, int lo, int hi) const;
};
// Host: the sorted order of a variable layout's blocks (row_off: count + 1 host offsets) and the starts;
// the caller keeps `order` (uploaded where the kernels need it) and points BatchSizeIndex::order at it.
BatchSizeIndex sort_by_size(index_t count, const index_t* row_off, std::vector<index_t>& order);

// info[b] of a factorisation: 0 when block b factored; k > 0 when its k-th pivot (1-based)
// is zero, not finite, or |pivot| <= n_b * eps * max|A_b| (numerically singular). The
// factors of a failed block are undefined.

}  // namespace blockres::kernels
