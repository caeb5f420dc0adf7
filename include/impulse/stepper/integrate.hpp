// The integrate stage's position and velocity updates of one system (docs/architecture.md, "One
// step, stage by stage"; PositionUpdate, contact/delassus.hpp). The stepper has already applied
// the impulses, u+ = u_free + M~^-1 J^T lambda (DelassusAssembler::apply), and, when q needs its
// own velocity (split position correction, or weighted rows on the midpoint rule), u_pos =
// u_free + M~^-1 J^T (w o lambda + lambda_p). Each function writes the system's q_next (and u+
// where it says so); the stepper commits them when every system's state is finite.
#pragma once

#include <vector>

#include "impulse/core/types.hpp"
#include "impulse/stepper/system.hpp"

namespace impulse {

// Semi-implicit (symplectic) Euler: q+ = q (+) dt v, v = u+ (or u_pos with the split correction).
void euler_position(const StepperSystem& s, const VecX& v, Scalar dt);

// The midpoint rule: u_pos = (u + u_free) / 2 + M~^-1 J^T (w o lambda) (+ u_p), the smooth
// acceleration at its midpoint (exact for a constant one) and each impulse from its time of
// action; without weighted rows or a split correction (`separate` false) u_pos = (u + u+) / 2.
// q+ = q (+) dt u_pos. u_pos: as the stepper's apply left it (separate), rewritten.
void midpoint_position(const StepperSystem& s, const VecX& u_next, bool separate, Scalar dt, VecX& u_pos);

// Free flight on the midpoint rule of a system without implicit terms (damping_free): Heun's
// method (explicit trapezoidal rule). q+ is the midpoint update, q (+) dt (u + u_free) / 2; the
// velocity takes the mean of the accelerations at both ends,
//   u+ = u + dt/2 (a(q, u) + a(q+, u_free)) = (u + u_free) / 2 + dt/2 a(q+, u_free)
// with the step's torques and external wrenches held (zero-order hold). Second order where
// semi-implicit Euler is first order in the energy of an articulated system (q-dependent M):
// ANYmal thrown tumbling, 5 s, 34 J^2 -> ~1e-5 J^2 (docs/fidelity.md); the midpoint update
// alone, with u+ = u_free, is not symplectic (a pendulum's energy drifts secularly). Costs one
// ABA per flying system per step. u_pos: the midpoint velocity, (u + u_free) / 2.
void heun_velocity(const StepperSystem& s, const VecX& u_pos, Scalar dt, VecX& u_next);

// No implicit damping terms in M~ (no PD damping, no joint damping): with no PD stiffness either
// (the caller's condition for the midpoint update), M~ = M and every force of the step is explicit,
// so a flight step can take Heun's velocity update.
bool damping_free(const StepperSystem& s);

// Actuator torque of the step just taken (q, u: the new state; the stepper's dynamics stage
// decided the clamps): per scalar dof the clamp's bound, or tau + Kp (q* - q) + Kd (u* - u).
void report_applied_torque(const StepperSystem& s, const VecX& tau_clamp, const std::vector<unsigned char>& clamped,
                           VecX& out);

}  // namespace impulse
