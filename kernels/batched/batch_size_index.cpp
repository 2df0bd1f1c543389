// Size classes of a variable batch (kernels/batched/batched.hpp): the blocks sorted by size, and the
// sub-layout of one class.
#include "kernels/batched/batched.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace blockres::kernels {

BatchSizeIndex sort_by_size(index_t count, const index_t* row_off, std::vector<index_t>& order)
{
  if (count < 0) throw std::invalid_argument("sort_by_size: negative count");
  int largest = 0;
  for (index_t b = 0; b < count; ++b) {
    const index_t n = row_off[b + 1] - row_off[b];
    if (n < 0) throw std::invalid_argument("sort_by_size: block " + std::to_string(b) + " has negative size");
    largest = std::max(largest, int(n));
  }
  // Counting sort, stable: ties keep the block order.
  BatchSizeIndex ix;
  ix.start.assign(std::size_t(largest) + 2, 0);
  for (index_t b = 0; b < count; ++b) ++ix.start[std::size_t(row_off[b + 1] - row_off[b]) + 1];
  for (std::size_t n = 1; n < ix.start.size(); ++n) ix.start[n] += ix.start[n - 1];
  order.assign(std::size_t(count), 0);
  std::vector<index_t> next(ix.start.begin(), ix.start.end() - 1);
  for (index_t b = 0; b < count; ++b) order[std::size_t(next[std::size_t(row_off[b + 1] - row_off[b])]++)] = b;
  ix.order = order.data();
  return ix;
}

BatchLayout BatchSizeIndex::select(const BatchLayout& L, int lo, int hi) const
{
  BatchLayout c = L;
  c.by_size = nullptr;
  c.uniform = 0;
  lo = std::max(lo, 0);
  hi = std::min(hi, max_size());
  if (lo > hi) {
    c.count = 0;
    c.select = order;
    return c;
  }
  const index_t first = start[std::size_t(lo)], last = start[std::size_t(hi) + 1];
  c.count = last - first;
  c.select = order + first;
  c.max_size = 0;
  for (int n = hi; n >= lo; --n)
    if (start[std::size_t(n) + 1] > start[std::size_t(n)]) {
      c.max_size = n;
      break;
    }
  return c;
}

}  // namespace blockres::kernels
