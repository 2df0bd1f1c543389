// Sparsity pattern of a power of a square pattern's lower, upper or whole part, by rows and by
// columns: the host analysis shared by the ISAI patterns (kernels/ilu_isai/isai.hpp S(|T|^k) on scalar
// factors, kernels/ilu_isai/isai_block.hpp S(|T_b|^k) on block patterns).
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

}  // namespace blockres::kernels
