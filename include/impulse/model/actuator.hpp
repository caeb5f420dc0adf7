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

// Calls f(k, iq, lo, hi) for each scalar joint's dof k (position index iq) with its actuator
// interval at velocity u (actuator_bounds), in body order: the order the stepper's clamp passes
// and their lanes visit the dofs in.
template <class F>
inline void for_each_scalar_actuator(const Model& m, const Scalar* u, F&& f) {
  for (Index i = 0; i < m.nb; ++i) {
    if (m.nv_joint[i] != 1) continue;
    const Index k = m.idx_v[i];
    Scalar lo, hi;
    actuator_bounds(m, k, u[k], lo, hi);
    f(k, m.idx_q[i], lo, hi);
  }
}

// Whether dof k's clamp changes for the implicit PD torque t: an unclamped torque outside
// [lo, hi] is clamped; a clamped one (at tau_clamp) that no longer presses on its bound is freed.
inline bool clamp_changes(bool clamped, Scalar tau_clamp, Scalar t, Scalar lo, Scalar hi) {
  return !clamped ? (t < lo || t > hi) : ((tau_clamp == lo && t > lo) || (tau_clamp == hi && t < hi));
}

}  // namespace impulse
