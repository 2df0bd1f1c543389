#include "linalg/distributed/index_map.hpp"

#include <algorithm>
#include <limits>
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
  std::vector<std::tuple<int, gindex_t>> ghosts;  // (owner, global)
  for (const gindex_t g : needed) {
    if (std::binary_search(owned_.begin(), owned_.end(), g)) continue;
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

index_t IndexMap::local(gindex_t g) const
{
  const auto it = std::lower_bound(owned_.begin(), owned_.end(), g);
  if (it != owned_.end() && *it == g) return static_cast<index_t>(it - owned_.begin());
  const auto gt = std::lower_bound(ghost_lookup_.begin(), ghost_lookup_.end(), std::make_pair(g, index_t(-1)));
  if (gt != ghost_lookup_.end() && gt->first == g) return gt->second;
  return -1;
}

}  // namespace blockres::dist
