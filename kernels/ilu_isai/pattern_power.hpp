// Sparsity pattern of a power of a square pattern's lower, upper or whole part, by rows and by
// columns, the check of the input pattern and the split of S's columns by generation kernel: the
// host analysis shared by the ISAI patterns (kernels/ilu_isai/isai.hpp S(|T|^k) on scalar factors,
// kernels/ilu_isai/isai_block.hpp S(|T_b|^k) on block patterns).
#pragma once

#include "kernels/common.hpp"

#include <string>
#include <vector>

namespace blockres::kernels {

// Entries (r, c) of the part: c <= r, c >= r, or all.
enum class PatternPart { lower, upper, all };

struct PatternPower {
  std::vector<index_t> row_ptr, col;           // S by rows (n + 1, nnz), columns sorted
  std::vector<index_t> col_ptr, row_ind, pos;  // S by columns, rows sorted; pos: each entry's index
                                               //   in col (its position in the row-wise arrays)
};

// S = S(|T|^k), T = `part` of the n x n pattern (row_ptr, col), diagonal included: (i, c) is in S
// iff c is reached from i in at most k steps along T's off-diagonal entries. The pattern must have
// sorted, in-range columns and a diagonal entry in every row (the callers validate it). Throws
// std::invalid_argument, naming `who`, when S has more than max_entries entries.
PatternPower pattern_power(index_t n, const index_t* row_ptr, const index_t* col, PatternPart part, int power,
                           size64_t max_entries, const std::string& who);

// Throws std::invalid_argument unless the n x n pattern (n > 0) has row_ptr[0] = 0, non-decreasing
// row pointers, and in every row sorted, unique, in-range columns and a diagonal entry. Messages
// start with `who` and name the row; those of a block pattern say "block row", "block column" and
// "diagonal block".
void check_square_pattern(index_t n, const index_t* row_ptr, const index_t* col, const std::string& who, bool blocks);

// S's columns split by the CUDA kernel that generates them, m = (col_ptr[j + 1] - col_ptr[j]) *
// rows_per_entry scalar rows each: short columns (m <= short_max) by the lane-group width W = 4,
// 8, 16, 32 of their launch (the smallest W >= m), bucket b at short_cols[short_bucket_ptr[b] ..
// short_bucket_ptr[b + 1]), each in increasing order; the others long, in increasing order; the
// largest m of each kind (0: none).
struct ColumnSplit {
  std::vector<index_t> short_cols, short_bucket_ptr, long_cols;
  index_t max_short_m = 0, max_long_m = 0;
};
ColumnSplit split_columns(const std::vector<index_t>& col_ptr, int rows_per_entry, index_t short_max);

}  // namespace blockres::kernels
