// A test double of physics::Model for the result writers and `verify`: a multicomponent-like model
// (pressure, density, one mass fraction per component; per-component norms, masses in place and
// well rates, in groups) that assembles nothing, so the I/O tests need no real model.
#pragma once

#include "physics/grid.hpp"
#include "physics/model.hpp"
#include "physics/units.hpp"

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace blockres::test {

class FakeModel final : public physics::Model {
 public:
  // Unknowns per active cell: p [Pa], then the mass fractions of all components but the last.
  FakeModel(const physics::Grid& grid, std::vector<std::string> components = {"N2", "CO2", "C1"},
            std::string type = "fake_multicomponent")
      : ncell_(grid.num_active()), components_(std::move(components)), type_(std::move(type))
  {
    pattern_.nrows = pattern_.ncols = ncell_;
    pattern_.row_ptr.assign(std::size_t(ncell_) + 1, 0);
    physics::WellInfo inj, prod;
    inj.name = "INJ", inj.injector = true, inj.rate_control = true;
    prod.name = "PROD", prod.i = grid.nx() - 1, prod.j = grid.ny() - 1;
    wells_ = {inj, prod};
  }

  std::string_view type() const override { return type_; }
  int block_size() const override { return int(components_.size()); }
  index_t num_cells() const override { return ncell_; }
  const BsrPattern& pattern() const override { return pattern_; }
  std::vector<std::string> unknown_names() const override
  {
    std::vector<std::string> u = {"p"};
    for (std::size_t c = 0; c + 1 < components_.size(); ++c) u.push_back("x_" + components_[c]);
    return u;
  }
  std::vector<std::string> equation_names() const override { return components_; }

  // p = 200 bar + 1 bar per cell index, fractions 0.1 (c + 1) / nc scaled to sum below 1.
  std::vector<double> initial_state() const override
  {
    const std::size_t bs = components_.size();
    std::vector<double> x(std::size_t(ncell_) * bs);
    for (std::size_t i = 0; i < std::size_t(ncell_); ++i) {
      x[i * bs] = (200.0 + double(i)) * units::bar;
      for (std::size_t c = 1; c < bs; ++c) x[i * bs + c] = 0.5 * double(c) / double(bs * bs);
    }
    return x;
  }
  void begin_step(const Vector&) override {}
  using Model::assemble;
  void assemble(const Vector&, const Vector&, double, Vector&, Array<double>&) override { unused(); }
  void set_block_storage(std::span<const index_t>) override { unused(); }
  physics::ConvergenceNorms convergence(const Vector&, const Vector&, double) const override { unused(); }
  void update(Vector&, const Vector&, const physics::UpdateLimits&) const override { unused(); }
  std::vector<double> in_place(const Vector&) const override { unused(); }
  std::vector<physics::Quantity> in_place_quantities() const override
  {
    std::vector<physics::Quantity> q;
    for (const auto& c : components_) q.push_back({c + "_in_place", "kg", 1.0, c + " mass in place", "mass_in_place", true});
    return q;
  }
  const std::vector<physics::WellInfo>& wells() const override { return wells_; }
  std::vector<physics::WellResult> well_results() const override { return {}; }
  std::vector<physics::Quantity> well_rates() const override
  {
    std::vector<physics::Quantity> q;
    for (const auto& c : components_)
      q.push_back({c + "_rate", "kg/day", 86400.0, c + " mass rate, positive into the reservoir", "well_mass_rate", true});
    return q;
  }
  // pressure, density, x_<component> for every component, and x_sum for VTK only.
  std::vector<physics::Quantity> cell_fields() const override
  {
    std::vector<physics::Quantity> q = {{"pressure", "bar", 1.0 / units::bar, "pressure", "", true},
                                        {"density", "kg/m3", 1.0, "mass density", "density", true}};
    for (const auto& c : components_) q.push_back({"x_" + c, "1", 1.0, "mass fraction of " + c, "mass_fraction", true});
    q.push_back({"x_sum", "1", 1.0, "sum of the mass fractions (VTK only)", "", false});
    return q;
  }
  std::vector<std::vector<double>> cell_field_values(std::span<const double> x) const override
  {
    const std::size_t bs = components_.size(), n = std::size_t(ncell_);
    if (x.size() != n * bs) throw std::invalid_argument("FakeModel: state of the wrong size");
    std::vector<std::vector<double>> f(bs + 3, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
      const double p = x[i * bs];
      f[0][i] = p * (1.0 / units::bar);
      f[1][i] = 600.0 + 1e-6 * p;
      double last = 1.0;
      for (std::size_t c = 0; c + 1 < bs; ++c) f[2 + c][i] = x[i * bs + 1 + c], last -= x[i * bs + 1 + c];
      f[2 + bs - 1][i] = last;
      f[2 + bs][i] = 1.0;
    }
    return f;
  }
  std::string well_summary(const std::vector<physics::WellResult>&) const override { return {}; }

 private:
  [[noreturn]] static void unused() { throw std::logic_error("FakeModel: not a model that can be run"); }

  index_t ncell_;
  std::vector<std::string> components_;
  std::string type_;
  BsrPattern pattern_;
  std::vector<physics::WellInfo> wells_;
};

}  // namespace blockres::test
