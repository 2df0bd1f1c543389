#include "linalg/distributed/halo_plan.hpp"

#include "kernels/halo/halo.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace blockres::dist {

namespace {
constexpr int halo_tag = 3301;
}

HaloPlan HaloPlan::build(const Communicator& comm, const IndexMap& map)
{
  const int P = comm.size();
  HaloPlan plan;
  // What this rank receives: its ghosts, grouped by owner (the map's order).
  std::vector<int> counts_to(static_cast<std::size_t>(P), 0);
  const auto owners = map.ghost_owner();
  const bool owners_ok = std::all_of(owners.begin(), owners.end(), [P](int o) { return o >= 0 && o < P; });
  if (!comm.all(owners_ok))  // agreed first: one rank throwing alone would leave the others in the exchange below
    throw std::invalid_argument(owners_ok ? "HaloPlan: another rank's ghosts name an owner that is not a rank"
                                          : "HaloPlan: a ghost's owner is not a rank of this communicator");
  plan.recv_ptr.push_back(0);
  for (std::size_t i = 0; i < owners.size(); ++i) {
    const int o = owners[i];
    ++counts_to[static_cast<std::size_t>(o)];
    if (plan.recv_rank.empty() || plan.recv_rank.back() != o) {
      if (!plan.recv_rank.empty()) plan.recv_ptr.push_back(static_cast<index_t>(i));
      plan.recv_rank.push_back(o);
    }
  }
  if (!plan.recv_rank.empty()) plan.recv_ptr.push_back(map.ghosts());
  // What it sends: the ids the others ask of it.
  std::vector<int> counts_from;
  const std::vector<gindex_t> asked = comm.alltoallv(map.ghost_globals(), counts_to, counts_from);
  plan.send_ptr.push_back(0);
  std::size_t at = 0;
  bool ok = true;
  gindex_t bad = -1;
  for (int r = 0; r < P; ++r) {
    const int n = counts_from[static_cast<std::size_t>(r)];
    if (n == 0) continue;
    plan.send_rank.push_back(r);
    for (int i = 0; i < n; ++i, ++at) {
      const index_t l = map.local(asked[at]);
      if (l < 0 || l >= map.owned()) {
        ok = false;
        bad = asked[at];
      }
      plan.send_ids.push_back(l);
    }
    plan.send_ptr.push_back(static_cast<index_t>(plan.send_ids.size()));
  }
  if (!comm.all(ok))
    throw std::invalid_argument(ok ? "HaloPlan: another rank was asked for an id it does not own"
                                   : "HaloPlan: asked for global id " + std::to_string(bad) +
                                         ", which this rank does not own");
  return plan;
}

HaloExchange::HaloExchange(CommPtr comm, const HaloPlan& plan, int bs) : comm_(std::move(comm)), plan_(&plan), bs_(bs)
{
  if (bs < 1) throw std::invalid_argument("HaloExchange: block size must be at least 1");
  sendbuf_.resize(std::size_t(plan.sent()) * std::size_t(bs));
}

void HaloExchange::start(const double* owned, double* ghosts)
{
  if (!requests_.empty()) throw std::logic_error("HaloExchange::start: the previous exchange was not finished");
  kernels::cpu::halo_pack(owned, plan_->send_ids.data(), plan_->sent(), bs_, sendbuf_.data());
  start_packed(sendbuf_.data(), ghosts);
}

void HaloExchange::start_packed(const double* packed, double* ghosts)
{
  if (!requests_.empty()) throw std::logic_error("HaloExchange::start: the previous exchange was not finished");
  const HaloPlan& p = *plan_;
  const std::size_t bs = static_cast<std::size_t>(bs_);
  for (std::size_t k = 0; k < p.recv_rank.size(); ++k) {
    const std::size_t n = std::size_t(p.recv_ptr[k + 1] - p.recv_ptr[k]) * bs;
    requests_.push_back(comm_->irecv(ghosts + std::size_t(p.recv_ptr[k]) * bs, n * sizeof(double), p.recv_rank[k], halo_tag));
  }
  for (std::size_t k = 0; k < p.send_rank.size(); ++k) {
    const std::size_t n = std::size_t(p.send_ptr[k + 1] - p.send_ptr[k]) * bs;
    requests_.push_back(
        comm_->isend(packed + std::size_t(p.send_ptr[k]) * bs, n * sizeof(double), p.send_rank[k], halo_tag));
  }
}

void HaloExchange::finish()
{
  comm_->wait_all(requests_);
  requests_.clear();
}

}  // namespace blockres::dist
