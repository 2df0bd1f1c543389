// The halo of a distributed vector (issue 33): which owned entries each rank sends to whom and where the ghosts it
// receives go, built once per pattern (HaloPlan), and the exchange of one vector of bs values per id (HaloExchange:
// start, then the work that needs no ghost, then finish).
#pragma once

#include "linalg/distributed/index_map.hpp"

#include <vector>

namespace blockres::dist {

struct HaloPlan {
  // Ranks this one receives ghosts from: recv_rank[k]'s ghosts are local ids owned + [recv_ptr[k], recv_ptr[k+1]).
  std::vector<int> recv_rank;
  std::vector<index_t> recv_ptr;
  // Ranks this one sends to: send_rank[k] gets the owned local ids send_ids[send_ptr[k] .. send_ptr[k+1]), in the
  // order of that rank's ghosts.
  std::vector<int> send_rank;
  std::vector<index_t> send_ptr, send_ids;

  index_t ghosts() const { return recv_ptr.empty() ? 0 : recv_ptr.back(); }
  index_t sent() const { return send_ptr.empty() ? 0 : send_ptr.back(); }

  // Collective: every rank of comm calls it with its own map (one exchange of the ghosts' global ids). Throws
  // std::invalid_argument on every rank that is asked for an id it does not own.
  static HaloPlan build(const Communicator& comm, const IndexMap& map);
};

// Exchanges host vectors laid out as the map's local ids with bs doubles each: owned entries [0, owned bs), ghosts
// after them in their own buffer. One exchange at a time per object; the buffers must stay valid until finish().
class HaloExchange {
 public:
  HaloExchange(CommPtr comm, const HaloPlan& plan, int bs);
  // Posts the receives into ghosts (plan.ghosts() bs doubles) and sends the owned entries the peers need.
  void start(const double* owned, double* ghosts);
  // The same with the entries to send already packed (plan.sent() bs doubles in plan order, e.g. by
  // kernels::cuda::halo_pack and a copy to host memory); packed must stay valid until finish().
  void start_packed(const double* packed, double* ghosts);
  // Waits for both.
  void finish();
  // Bytes one exchange sends from this rank.
  double bytes_sent() const { return 8.0 * double(plan_->sent()) * bs_; }
  const CommPtr& comm() const { return comm_; }

 private:
  CommPtr comm_;
  const HaloPlan* plan_;
  int bs_;
  std::vector<double> sendbuf_;
  std::vector<Communicator::Request> requests_;
};

}  // namespace blockres::dist
