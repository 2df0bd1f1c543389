// Forcing terms of the inexact Newton method: the relative tolerance eta_k of each linear solve.
#pragma once

#include "miniapp/io/config.hpp"

#include <algorithm>
#include <cmath>

namespace blockres {

// Eisenstat & Walker (1996), "Choosing the forcing terms in an inexact Newton method", choice 2:
//   eta_k = gamma (||R_k|| / ||R_{k-1}||)^alpha,  gamma = 0.9, alpha = 2,
// safeguarded against dropping too fast while the previous term was still large:
//   if gamma eta_{k-1}^alpha > 0.1:  eta_k = max(eta_k, gamma eta_{k-1}^alpha),
// and kept within [eta_min, eta_max]. The linear solve of Newton iteration k then stops when
// ||R_k - J_k dx_k|| <= eta_k ||R_k||: loose while Newton is far from the solution (linear work
// would be wasted on a poor linear model), tighter as the residual drops quadratically.
inline constexpr double ew_gamma = 0.9;
inline constexpr double ew_alpha = 2.0;
inline constexpr double ew_safeguard_threshold = 0.1;

inline double eisenstat_walker_eta(double norm_r, double norm_r_prev, double eta_prev, const ForcingConfig& c)
{
  double eta = ew_gamma * std::pow(norm_r / norm_r_prev, ew_alpha);
  // 0/0 or x/0 says nothing about the local convergence rate: fall back to the loosest term.
  if (!std::isfinite(eta)) eta = c.eta_max;
  const double floor = ew_gamma * std::pow(eta_prev, ew_alpha);
  if (floor > ew_safeguard_threshold) eta = std::max(eta, floor);
  return std::clamp(eta, c.eta_min, c.eta_max);
}

// The forcing terms of the Newton iterations of one time step: call begin_step() before the
// first iteration of every step (and of every retry after a cut), then next(||R_k||) once per
// linear solve. With fixed forcing every term is `fixed_tolerance` and the norms are ignored.
class ForcingSequence {
 public:
  ForcingSequence(const ForcingConfig& c, double fixed_tolerance) : c_(c), fixed_(fixed_tolerance) {}

  bool needs_residual_norm() const { return c_.kind == ForcingKind::eisenstat_walker; }
  void begin_step() { first_ = true; }
  double next(double norm_r)
  {
    if (c_.kind == ForcingKind::fixed) return fixed_;
    eta_ = first_ ? c_.eta_initial : eisenstat_walker_eta(norm_r, norm_prev_, eta_, c_);
    first_ = false;
    norm_prev_ = norm_r;
    return eta_;
  }

 private:
  ForcingConfig c_;
  double fixed_;
  bool first_ = true;
  double eta_ = 0.0, norm_prev_ = 0.0;
};

}  // namespace blockres
