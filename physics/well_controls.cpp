// Well control bookkeeping between assemblies: held wells, switches, cut attempts (well_controls.hpp).
#include "physics/well_controls.hpp"

#include <stdexcept>
#include <utility>

namespace blockres::physics {

WellControls::WellControls(const ExecPtr& exec, const std::vector<bool>& rate_control, std::vector<double> bhp_limit)
    : exec_(exec), limit_(std::move(bhp_limit))
{
  if (limit_.size() != rate_control.size()) throw std::invalid_argument("WellControls: one BHP limit per well");
  for (const bool r : rate_control) {
    host_.push_back(r ? rate : bhp);
    any_rate_ = any_rate_ || r;
  }
  accepted_ = host_;
  codes_ = to_executor(exec_, host_);
}

void WellControls::upload() { codes_.copy_from_host(host_); }

void WellControls::after_assembly(const std::vector<Outcome>& outcome)
{
  if (outcome.size() != host_.size()) throw std::invalid_argument("WellControls::after_assembly: one outcome per well");
  bool changed = false;
  for (std::size_t w = 0; w < host_.size(); ++w) {
    const Outcome& o = outcome[w];
    int& code = host_[w];
    const bool to_bhp = code == rate && o.at_bhp;
    const bool to_rate = code == rate_at_limit && !o.at_bhp;
    if (!to_bhp && !to_rate) continue;
    code = to_bhp ? rate_held : rate;
    changed = true;
    switches_.push_back({static_cast<int>(w), to_bhp, o.reachable, o.bhp_needed, limit_[w]});
  }
  if (changed) upload();
}

std::vector<WellSwitch> WellControls::take_switches() { return std::exchange(switches_, {}); }

void WellControls::begin_attempt()
{
  if (host_ == accepted_) return;
  host_ = accepted_;
  upload();
}

void WellControls::accept_step()
{
  bool changed = false;
  for (int& c : host_)
    if (c == rate_held) c = rate_at_limit, changed = true;
  accepted_ = host_;
  if (changed) upload();
}

}  // namespace blockres::physics
