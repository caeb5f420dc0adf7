// The first pass of the step's dynamics stage for many systems of one Model at once, in SIMD
// lanes (module stepper/; dynamics/lanes.hpp; docs/dynamics.md, "Many worlds in SIMD lanes").
//
// Per step, for the systems (one per lane) that share a Model and gravity and have no external
// wrench: StepLanes::set_state and compute(), then lanes_diagonal for each (the first guess of the
// actuator clamps and M~'s terms dt damping, dt Kd + dt^2 Kp, added to M's diagonal as the
// dynamics stage adds them), factor(), and lanes_put for each. The next dynamics stage of such a
// system on this thread scatters its lane into the system's Data (StepLanes::get) instead of
// computing compute_step_dynamics + the diagonal + ltdl_factor, and goes on from the rhs: the
// same bits, since the lanes repeat the scalar functions' operations. lanes_clear drops what no
// stage took (call it after the group's steps, also when one threw). The entries are this
// thread's (thread-local): the batched steppers (batch/) run a group on one thread.
#pragma once

#include "impulse/dynamics/lanes.hpp"
#include "impulse/stepper/system.hpp"

namespace impulse {

// Adds the diagonal terms of a system with this Model and state to lane `lane` (between
// StepLanes::compute() and factor()). dt: the step.
void lanes_diagonal(const Model& model, const SystemState& state, Scalar dt, StepLanes& lanes, int lane);
// The dynamics stage of the system whose state is `state` takes lane `lane` of `lanes`.
void lanes_put(const SystemState* state, const StepLanes* lanes, int lane);
void lanes_clear();

}  // namespace impulse
