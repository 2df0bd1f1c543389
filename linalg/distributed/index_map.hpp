// Which global ids a rank owns and which it sees as ghosts, and their local numbering (issue 33): owned ids first,
// in ascending global order (so one rank's numbering is the serial one), then the ghosts grouped by owning rank in
// ascending rank order, ascending global id within an owner (each owner's ghosts are one contiguous range, which
// the halo exchange receives into directly).
#pragma once

#include "linalg/distributed/communicator.hpp"

#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace blockres::dist {

class IndexMap {
 public:
  // owned: this rank's global ids, ascending, no duplicates. needed: the global ids its rows reference (any order;
  // duplicates and owned ids are fine). owner_of(g): the rank that owns g (the same on every rank). Throws
  // std::invalid_argument when owned is not ascending or a needed id is claimed by this rank but not in owned.
  IndexMap(std::vector<gindex_t> owned, std::span<const gindex_t> needed, const std::function<int(gindex_t)>& owner_of,
           int rank);

  index_t owned() const { return static_cast<index_t>(owned_.size()); }
  index_t ghosts() const { return static_cast<index_t>(ghost_.size()); }
  index_t size() const { return owned() + ghosts(); }
  gindex_t global(index_t local) const { return local < owned() ? owned_[std::size_t(local)] : ghost_[std::size_t(local - owned())]; }
  // The local id of global id g, or -1 when g is neither owned nor a ghost here.
  index_t local(gindex_t g) const;
  std::span<const gindex_t> owned_globals() const { return owned_; }
  std::span<const gindex_t> ghost_globals() const { return ghost_; }
  std::span<const int> ghost_owner() const { return ghost_owner_; }

 private:
  std::vector<gindex_t> owned_, ghost_;
  std::vector<int> ghost_owner_;
  std::vector<std::pair<gindex_t, index_t>> ghost_lookup_;  // (global, local), sorted by global
  // Owned ids within a range of at most 4x their count: local id per global id of the range (-1: not owned); shared
  // by the map's copies (a pressure matrix on the Jacobian's map, AMG's finest level).
  std::shared_ptr<const std::vector<index_t>> dense_;
  gindex_t dense_base_ = 0;
  index_t owned_local(gindex_t g) const;  // the local id of an owned g, else -1
};

}  // namespace blockres::dist
