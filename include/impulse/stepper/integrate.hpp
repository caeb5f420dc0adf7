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

// Free flight on the midpoint rule with the system's free-flight history at hand (its last
// step's acceleration a_{k-1} and generalized input force g_{k-1}, SystemState::flight_accel and
// flight_force): the two-step Adams-Bashforth method on the velocity (Hairer, Norsett & Wanner,
// Solving Ordinary Differential Equations I, 2nd ed., Sec. III.1, the explicit Adams methods,
// k = 2: y_{n+1} = y_n + h (3/2 f_n - 1/2 f_{n-1})),
//   u+ = u + dt (3/2 a_k - 1/2 a~_{k-1}) = (u + u_free) / 2 + dt/2 (2 a_k - a~_{k-1}),
// i.e. Heun's update with a(q+, u_free) replaced by the linear extrapolation 2 a_k - a~_{k-1}
// (a_k = (u_free - u) / dt, this step's, from the dynamics stage: `du` = dt a_k = u_free - u).
// One dynamics evaluation per step, the one the step makes anyway, instead of Heun's two (no ABA
// at q+). On y' = lambda y its local error is 5/12 (lambda dt)^3 against Heun's
// 1/6 (lambda dt)^3, and on an undamped oscillation of frequency w its amplitude grows by
// (w dt)^4 / 4 per step (Heun's: (w dt)^4 / 8): 2.5e-9 per step at w dt = 0.01.
//
// The inputs, g = tau (within the actuator limits) + J^T f_ext, are held over a step (zero-order
// hold, as in Heun's update), so step k integrates u' = a(q, u, g_k), and the method needs the
// last step's acceleration at this step's input, a(q_{k-1}, u_{k-1}, g_k) = a_{k-1} +
// M_{k-1}^-1 (g_k - g_{k-1}). Extrapolating a_{k-1} itself, with the last step's input, would
// apply an input change by 3/2 on its step and take 1/2 of it back on the next: a wrench for one
// step would leave half its impulse, a changed torque an O(dt |g_k - g_{k-1}|) velocity error.
// The history is corrected with this step's factored M (the one at hand; M_{k-1} is gone):
//   a~_{k-1} = a_{k-1} + M_k^-1 (g_k - g_{k-1}),
// an error dt/2 (M_{k-1}^-1 - M_k^-1) (g_k - g_{k-1}) = O(dt^2 |g_k - g_{k-1}|) in u+, once per
// change. So an input change acts in full on its own step (a free body's momentum M u changes by
// exactly dt g over the step), constant inputs give the plain two-step method (second order), and
// inputs that change smoothly (g_k - g_{k-1} = O(dt)) leave it second order. The other way to keep
// the inputs out of the history, extrapolating only the drift -M^-1 h and applying M_k^-1 g_k of
// this step alone, is first order in the input part (M(q)^-1 g taken at the start of the step,
// a local error dt^2/2 d(M^-1)/dt g for a torque held in flight) and solves with M every step that
// has an input; this one solves only when the input changed (one more LTDL solve: a controller
// that sets new torques every step pays it every step).
// u_pos: the midpoint velocity, (u + u_free) / 2; g: this step's input force g_k.
void ab2_velocity(const StepperSystem& s, const VecX& u_pos, const VecX& du, const VecX& g, Scalar dt, VecX& u_next);

// The generalized input force of a flight step of a system without PD: the actuator torque
// within its limits (tau, or the bound a clamped dof is held at) plus J^T f_ext (from the poses
// and Jacobians of the dynamics stage).
void flight_input_force(const StepperSystem& s, VecX& g);

// No implicit damping terms in M~ (no PD damping, no joint damping): with no PD stiffness either
// (the caller's condition for the midpoint update), M~ = M and every force of the step is explicit,
// so a flight step can take Heun's velocity update.
bool damping_free(const StepperSystem& s);

// Actuator torque of the step just taken (q, u: the new state; the stepper's dynamics stage
// decided the clamps): per scalar dof the clamp's bound, or tau + Kp (q* - q) + Kd (u* - u).
void report_applied_torque(const StepperSystem& s, const VecX& tau_clamp, const std::vector<unsigned char>& clamped,
                           VecX& out);

}  // namespace impulse
