#include "linalg/distributed/index_map.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

namespace blockres::dist {

IndexMap::IndexMap(std::vector<gindex_t> owned, std::span<const gindex_t> needed,
                   const std::function<int(gindex_t)>& owner_of, int rank)
    : owned_(std::move(owned))
{
  for (std::size_t i = 1; i < owned_.size(); ++i)
    if (!(owned_[i - 1] < owned_[i]))
      throw std::invalid_argument("IndexMap: the owned global ids must be ascending without duplicates (position " +
                                  std::to_string(i) + ")");
  if (owned_.size() > static_cast<std::size_t>(std::numeric_limits<index_t>::max()))
    throw std::length_error("IndexMap: more owned ids than a 32-bit local index holds");
  // Owned ids spread over at most 4x their count (a Cartesian box of a grid split a few ways): a table of their local
  // ids over that range (at most 16 bytes an owned id) instead of a binary search per lookup, which took seconds for
  // the tens of millions of columns of a 10M-cell Jacobian.
  if (!owned_.empty()) {
    const gindex_t span = owned_.back() - owned_.front() + 1;
    if (span <= 4 * gindex_t(owned_.size())) {
      dense_base_ = owned_.front();
      auto table = std::make_shared<std::vector<index_t>>(std::size_t(span), -1);
      for (std::size_t i = 0; i < owned_.size(); ++i) (*table)[std::size_t(owned_[i] - dense_base_)] = index_t(i);
      dense_ = std::move(table);
    }
  }
  std::vector<std::tuple<int, gindex_t>> ghosts;  // (owner, global)
  for (const gindex_t g : needed) {
    if (owned_local(g) >= 0) continue;
    const int o = owner_of(g);
    if (o == rank)
      throw std::invalid_argument("IndexMap: global id " + std::to_string(g) + " belongs to this rank (" +
                                  std::to_string(rank) + ") by owner_of but is not in its owned ids");
    if (o < 0) throw std::invalid_argument("IndexMap: global id " + std::to_string(g) + " has no owner");
    ghosts.emplace_back(o, g);
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  if (owned_.size() + ghosts.size() > static_cast<std::size_t>(std::numeric_limits<index_t>::max()))
    throw std::length_error("IndexMap: more owned and ghost ids than a 32-bit local index holds");
  ghost_.reserve(ghosts.size());
  ghost_owner_.reserve(ghosts.size());
  ghost_lookup_.reserve(ghosts.size());
  for (const auto& [o, g] : ghosts) {
    ghost_lookup_.emplace_back(g, static_cast<index_t>(owned_.size() + ghost_.size()));
    ghost_.push_back(g);
    ghost_owner_.push_back(o);
  }
  std::sort(ghost_lookup_.begin(), ghost_lookup_.end());
}

index_t IndexMap::owned_local(gindex_t g) const
{
  if (dense_) {
    const gindex_t d = g - dense_base_;
    return d >= 0 && d < gindex_t(dense_->size()) ? (*dense_)[std::size_t(d)] : -1;
  }
  const auto it = std::lower_bound(owned_.begin(), owned_.end(), g);
  return it != owned_.end() && *it == g ? static_cast<index_t>(it - owned_.begin()) : -1;
}

index_t IndexMap::local(gindex_t g) const
{
  if (const index_t l = owned_local(g); l >= 0) return l;
  const auto gt = std::lower_bound(ghost_lookup_.begin(), ghost_lookup_.end(), std::make_pair(g, index_t(-1)));
  if (gt != ghost_lookup_.end() && gt->first == g) return gt->second;
  return -1;
}

}  // namespace blockres::dist
