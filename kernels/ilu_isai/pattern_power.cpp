// Pattern powers by rows and by columns (see pattern_power.hpp).
#include "kernels/ilu_isai/pattern_power.hpp"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace blockres::kernels {

PatternPower pattern_power(index_t n, const index_t* row_ptr, const index_t* col, PatternPart part, int power,
                           size64_t max_entries, const std::string& who)
{
  PatternPower s;
  s.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  s.col_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  if (n == 0) return s;
  auto in_part = [part](index_t r, index_t c) {
    return part == PatternPart::lower ? c <= r : part == PatternPart::upper ? c >= r : true;
  };

  // Rows: a breadth-first search of depth k from each row, independent per row. Each thread keeps
  // the rows of its contiguous range in a local buffer; the buffers are concatenated afterwards.
  const int max_threads = omp_get_max_threads();
  std::vector<std::vector<index_t>> chunk_cols(static_cast<std::size_t>(max_threads));
  std::vector<index_t> chunk_begin(static_cast<std::size_t>(max_threads) + 1, n);
#pragma omp parallel
  {
    const int nt = omp_get_num_threads(), t = omp_get_thread_num();
    const index_t r0 = static_cast<index_t>(size64_t(n) * t / nt);
    const index_t r1 = static_cast<index_t>(size64_t(n) * (t + 1) / nt);
    chunk_begin[static_cast<std::size_t>(t)] = r0;
    std::vector<index_t>& out = chunk_cols[static_cast<std::size_t>(t)];
    std::vector<index_t> seen(static_cast<std::size_t>(n), -1);  // last row that reached a column
    std::vector<index_t> frontier, next;
    for (index_t i = r0; i < r1; ++i) {
      const std::size_t row_start = out.size();
      seen[static_cast<std::size_t>(i)] = i;
      out.push_back(i);
      frontier.assign(1, i);
      for (int step = 0; step < power && !frontier.empty(); ++step) {
        next.clear();
        for (index_t r : frontier)
          for (index_t q = row_ptr[r]; q < row_ptr[r + 1]; ++q) {
            const index_t c = col[q];
            if (c == r || !in_part(r, c) || seen[static_cast<std::size_t>(c)] == i) continue;
            seen[static_cast<std::size_t>(c)] = i;
            next.push_back(c);
            out.push_back(c);
          }
        frontier.swap(next);
      }
      std::sort(out.begin() + static_cast<std::ptrdiff_t>(row_start), out.end());
      s.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(out.size() - row_start);
    }
  }

  // Row counts -> offsets, summed in 64 bits against the caller's limit.
  size64_t nnz = 0;
  for (index_t i = 0; i < n; ++i) {
    nnz += s.row_ptr[static_cast<std::size_t>(i) + 1];
    if (nnz > max_entries)
      throw std::invalid_argument(who + ": pattern with power " + std::to_string(power) + " has more than " +
                                  std::to_string(max_entries) + " entries");
    s.row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(nnz);
  }
  s.col.resize(static_cast<std::size_t>(nnz));
  for (int t = 0; t < max_threads; ++t) {
    const auto& c = chunk_cols[static_cast<std::size_t>(t)];
    if (!c.empty()) std::copy(c.begin(), c.end(), s.col.begin() + s.row_ptr[chunk_begin[static_cast<std::size_t>(t)]]);
  }

  // Columns by a counting sort over the rows in increasing order, so each column's rows come out
  // sorted; pos remembers where each entry sits in the row-wise arrays.
  for (size64_t e = 0; e < nnz; ++e) ++s.col_ptr[static_cast<std::size_t>(s.col[e]) + 1];
  for (index_t j = 0; j < n; ++j) s.col_ptr[j + 1] += s.col_ptr[j];
  s.row_ind.resize(static_cast<std::size_t>(nnz));
  s.pos.resize(static_cast<std::size_t>(nnz));
  std::vector<index_t> fill(s.col_ptr.begin(), s.col_ptr.end() - 1);
  for (index_t i = 0; i < n; ++i)
    for (index_t e = s.row_ptr[i]; e < s.row_ptr[i + 1]; ++e) {
      const index_t dst = fill[static_cast<std::size_t>(s.col[e])]++;
      s.row_ind[dst] = i;
      s.pos[dst] = e;
    }
  return s;
}

void check_square_pattern(index_t n, const index_t* row_ptr, const index_t* col, const std::string& who, bool blocks)
{
  const std::string unit = blocks ? "block " : "";
  if (row_ptr[0] != 0) throw std::invalid_argument(who + "row_ptr[0] must be 0");
  for (index_t i = 0; i < n; ++i) {
    const std::string row = who + unit + "row " + std::to_string(i);
    if (row_ptr[i + 1] < row_ptr[i]) throw std::invalid_argument(row + ": row_ptr decreases");
    bool diag = false;
    for (index_t q = row_ptr[i]; q < row_ptr[i + 1]; ++q) {
      if (col[q] < 0 || col[q] >= n)
        throw std::invalid_argument(row + ": " + unit + "column " + std::to_string(col[q]) + " out of range [0, " +
                                    std::to_string(n) + ")");
      if (q > row_ptr[i] && col[q] <= col[q - 1])
        throw std::invalid_argument(row + ": " + unit + "columns not sorted or not unique (" +
                                    std::to_string(col[q - 1]) + " then " + std::to_string(col[q]) + ")");
      diag = diag || col[q] == i;
    }
    if (!diag) throw std::invalid_argument(row + (blocks ? " has no diagonal block" : " has no diagonal entry"));
  }
}

ColumnSplit split_columns(const std::vector<index_t>& col_ptr, int rows_per_entry, index_t short_max)
{
  ColumnSplit s;
  std::vector<index_t> bucket[4];
  for (index_t j = 0; j + 1 < static_cast<index_t>(col_ptr.size()); ++j) {
    const index_t m = (col_ptr[j + 1] - col_ptr[j]) * rows_per_entry;
    if (m <= short_max) {
      bucket[m <= 4 ? 0 : m <= 8 ? 1 : m <= 16 ? 2 : 3].push_back(j);
      s.max_short_m = std::max(s.max_short_m, m);
    } else {
      s.long_cols.push_back(j);
      s.max_long_m = std::max(s.max_long_m, m);
    }
  }
  s.short_bucket_ptr.assign(1, 0);
  for (const auto& b : bucket) {
    s.short_cols.insert(s.short_cols.end(), b.begin(), b.end());
    s.short_bucket_ptr.push_back(static_cast<index_t>(s.short_cols.size()));
  }
  return s;
}

}  // namespace blockres::kernels
