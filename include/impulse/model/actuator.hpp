// Actuator torque limits of a Model's scalar joints (URDF <limit effort velocity>; the stepper's
// clamps, docs/fidelity.md item 5, and their lanes in dynamics/lanes.cpp).
#pragma once

#include <algorithm>
#include <limits>

#include "impulse/model/model.hpp"

namespace impulse {

// Actuator torque interval [lo, hi] of scalar dof k at velocity u_k: [-effort, effort] (a zero
// limit is URDF's value for "not given": unlimited, as in Drake and Gazebo), narrowed to
// [-effort, 0] when u_k >= the velocity limit and to [0, effort] when u_k <= -the velocity limit.
inline void actuator_bounds(const Model& m, Index k, Scalar u_k, Scalar& lo, Scalar& hi) {
  constexpr Scalar inf = std::numeric_limits<Scalar>::infinity();
  hi = m.effort_limit[k] > 0 ? m.effort_limit[k] : inf;
  lo = -hi;
  const Scalar vmax = m.velocity_limit[k];
  if (vmax > 0 && u_k >= vmax) hi = std::min<Scalar>(hi, 0);
  if (vmax > 0 && u_k <= -vmax) lo = std::max<Scalar>(lo, 0);
}

}  // namespace impulse
