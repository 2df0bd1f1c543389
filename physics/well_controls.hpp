// The host side of the well control rule (physics/model.hpp, WellSwitch), shared by the models: the
// control code of every well on the executor (what the assembly kernels read), the codes the time
// step started with, and the switches found in each assembly's well outputs.
#pragma once

#include "linalg/array.hpp"
#include "physics/model.hpp"

#include <vector>

namespace blockres::physics {

class WellControls {
 public:
  // The codes of the models' well kernels (WellControlCode in oil_water_local.hpp and
  // multicomponent_local.hpp, which check that they are these).
  enum Code : int { rate = 0, bhp = 1, rate_at_limit = 2, rate_held = 3 };

  WellControls() = default;
  // One entry per well: under rate control at the start of the run, and its BHP limit (setpoint of
  // a BHP well) [Pa].
  WellControls(const ExecPtr& exec, const std::vector<bool>& rate_control, std::vector<double> bhp_limit);

  const int* data() const { return codes_.data(); }  // executor memory
  // Whether any well has a rate target (otherwise nothing ever switches and nothing is read back).
  bool any_rate_well() const { return any_rate_; }

  // One assembly's outcome per well (host): under BHP control (at_bhp), whether some BHP meets its
  // rate target and that BHP. A rate well that went to its limit is held there for the rest of the
  // step; one at its limit that came back is under rate control again. Each change is a WellSwitch.
  struct Outcome {
    bool at_bhp = false, reachable = false;
    double bhp_needed = 0.0;
  };
  void after_assembly(const std::vector<Outcome>& outcome);
  // The switches since the last call.
  std::vector<WellSwitch> take_switches();
  // A step attempt starts from the codes of the last accepted step (a cut attempt's switches are undone).
  void begin_attempt();
  // The attempt is accepted: its codes start the next step, a held well as "at its limit" (free to return).
  void accept_step();

  const std::vector<int>& codes() const { return host_; }

 private:
  void upload();
  ExecPtr exec_;
  Array<int> codes_;
  std::vector<int> host_, accepted_;
  std::vector<double> limit_;
  std::vector<WellSwitch> switches_;
  bool any_rate_ = false;
};

}  // namespace blockres::physics
