// gtest checks shared by the kernels/ilu_isai CPU tests: an expected std::invalid_argument and its
// message, and what every ISAI pattern (scalar IsaiPattern, block IsaiBlockPattern) promises about
// its CSC view and its split into short and long columns.
#pragma once

#include "kernels/common.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace blockres::test_checks {

// `f` throws std::invalid_argument whose message contains `needle`.
inline void expect_invalid(const std::function<void()>& f, const std::string& needle)
{
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

// The CSC view of an ISAI pattern with n (block) rows and nnz entries: the sizes of row_ptr,
// col_ptr, col, row_ind and pos (csr_pos or bsr_pos), the rows of each column sorted, pos[e] the
// row-major position of CSC entry e (inside its row, in its column), every row-major entry seen
// exactly once.
template <class Pattern>
void check_csc_view(const Pattern& p, index_t n, index_t nnz, const std::vector<index_t>& pos, const std::string& what)
{
  ASSERT_EQ(p.row_ptr.size(), std::size_t(n) + 1) << what;
  ASSERT_EQ(p.col_ptr.size(), std::size_t(n) + 1) << what;
  ASSERT_EQ(p.col.size(), std::size_t(nnz)) << what;
  ASSERT_EQ(p.row_ind.size(), std::size_t(nnz)) << what;
  ASSERT_EQ(pos.size(), std::size_t(nnz)) << what;
  ASSERT_EQ(p.col_ptr[0], 0) << what;
  ASSERT_EQ(p.col_ptr[n], nnz) << what;
  std::vector<int> hits(static_cast<std::size_t>(nnz), 0);
  for (index_t j = 0; j < n; ++j)
    for (index_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e) {
      const index_t r = p.row_ind[e], q = pos[e];
      if (e > p.col_ptr[j]) {
        ASSERT_LT(p.row_ind[e - 1], r) << what << ": rows of column " << j << " not sorted";
      }
      ASSERT_TRUE(q >= p.row_ptr[r] && q < p.row_ptr[r + 1]) << what << ": position outside row " << r;
      ASSERT_EQ(p.col[q], j) << what << ": position of (" << r << ", " << j << ")";
      ++hits[static_cast<std::size_t>(q)];
    }
  for (index_t e = 0; e < nnz; ++e)
    ASSERT_EQ(hits[e], 1) << what << ": entry " << e << " seen " << hits[e] << " times";
}

// The column split of an ISAI pattern with n (block) columns, m_of(j) the scalar rows of column j:
// every column in exactly one of short_cols and long_cols, each list in increasing order; short
// columns by lane-group width W = 4 << b, bucket b holding the columns with 2 << b < m <= 4 << b
// (b = 0: m <= 4); long columns with m > 32, max_long_m the largest.
template <class Pattern, class ScalarRows>
void check_column_split(const Pattern& p, index_t n, ScalarRows m_of, const std::string& what)
{
  std::vector<index_t> all(p.short_cols);
  all.insert(all.end(), p.long_cols.begin(), p.long_cols.end());
  std::sort(all.begin(), all.end());
  std::vector<index_t> expect(static_cast<std::size_t>(n));
  std::iota(expect.begin(), expect.end(), 0);
  ASSERT_EQ(all, expect) << what;
  ASSERT_EQ(p.short_bucket_ptr.size(), 5u) << what;
  ASSERT_EQ(p.short_bucket_ptr.front(), 0) << what;
  ASSERT_EQ(p.short_bucket_ptr.back(), index_t(p.short_cols.size())) << what;
  for (int b = 0; b < 4; ++b) {
    const auto first = p.short_cols.begin() + p.short_bucket_ptr[b], last = p.short_cols.begin() + p.short_bucket_ptr[b + 1];
    ASSERT_TRUE(std::is_sorted(first, last)) << what << " bucket " << b;
    for (auto it = first; it != last; ++it) {
      const index_t m = m_of(*it);
      ASSERT_LE(m, 4 << b) << what << " column " << *it;
      if (b > 0) {
        ASSERT_GT(m, 2 << b) << what << " column " << *it;
      }
    }
  }
  ASSERT_TRUE(std::is_sorted(p.long_cols.begin(), p.long_cols.end())) << what;
  index_t max_m = 0;
  for (index_t j : p.long_cols) {
    const index_t m = m_of(j);
    ASSERT_GT(m, 32) << what;
    max_m = std::max(max_m, m);
  }
  ASSERT_EQ(p.max_long_m, max_m) << what;
}

}  // namespace blockres::test_checks
