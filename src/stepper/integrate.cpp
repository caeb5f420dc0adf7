#include "impulse/stepper/integrate.hpp"

#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/step_dynamics.hpp"

namespace impulse {

void euler_position(const StepperSystem& s, const VecX& v, Scalar dt) { s.model_->integrate(s.state_->q, v, dt, s.scratch_->q_next); }

void midpoint_position(const StepperSystem& s, const VecX& u_next, bool separate, Scalar dt, VecX& u_pos) {
  if (separate) {
    u_pos -= Scalar(0.5) * (s.scratch_->u_free - s.state_->u);
  } else {  // no weighted rows on it: u_pos = (u + u+) / 2
    u_pos = Scalar(0.5) * (s.state_->u + u_next);
  }
  s.model_->integrate(s.state_->q, u_pos, dt, s.scratch_->q_next);
}

void heun_velocity(const StepperSystem& s, const VecX& u_pos, Scalar dt, VecX& u_next) {
  VecX& tau = s.scratch_->rhs;  // (the dynamics stage's scratch; free here)
  report_applied_torque(s, s.scratch_->tau_clamp, s.scratch_->clamped, tau);  // (no PD: tau, or its clamp)
  const VecX& a1 = aba(*s.model_, *s.data_, s.scratch_->q_next, s.scratch_->u_free, tau, s.state_->has_f_ext ? &s.state_->f_ext : nullptr);
  u_next = u_pos + Scalar(0.5) * dt * a1;
}

void ab2_velocity(const StepperSystem& s, const VecX& u_pos, const VecX& du, const VecX& g, Scalar dt, VecX& u_next) {
  const SystemState& x = *s.state_;
  VecX& c = u_next;  // (its buffer: M_k^-1 (g_k - g_{k-1}), then u+)
  c = g - x.flight_force;
  if ((c.array() == 0).all()) {  // (the inputs held: no solve)
    u_next = u_pos + du - Scalar(0.5) * dt * x.flight_accel;
    return;
  }
  ltdl_solve(*s.model_, *s.data_, c);  // (the dynamics stage's factor of M~ = M)
  u_next = u_pos + du - Scalar(0.5) * dt * (x.flight_accel + c);
}

void flight_input_force(const StepperSystem& s, VecX& g) {
  report_applied_torque(s, s.scratch_->tau_clamp, s.scratch_->clamped, g);  // (no PD: tau, or its clamp)
  if (s.state_->has_f_ext) add_external_generalized_force(*s.model_, *s.data_, s.state_->f_ext, g);
}

bool damping_free(const StepperSystem& s) {
  return (s.state_->kd.array() == 0).all() && (s.model_->damping.array() == 0).all();
}

// Actuator torque of the step just taken (q, u: the new state), see dynamics_stage.
void report_applied_torque(const StepperSystem& s, const VecX& tau_clamp, const std::vector<unsigned char>& clamped,
                           VecX& out) {
  const Model& m = s.model();
  out = s.generalized_force();
  // (data pointers read once, as in dynamics_stage: -120 instructions a robot step)
  const Scalar *const kp = s.kp().data(), *const kd = s.kd().data(), *const q = s.q().data(), *const u = s.u().data();
  const Scalar *const q_target = s.q_target().data(), *const u_target = s.u_target().data();
  Scalar* const o = out.data();
  for (Index i = 0; i < m.nb; ++i) {
    if (m.nv_joint[i] != 1) continue;
    const Index k = m.idx_v[i], iq = m.idx_q[i];
    // q+ = q + dt u+ on a scalar joint, so the end-of-step PD is Kp (q* - q+) + Kd (u* - u+)
    o[k] = clamped[static_cast<std::size_t>(k)] ? tau_clamp[k]
                                                : o[k] + kp[k] * (q_target[iq] - q[iq]) + kd[k] * (u_target[k] - u[k]);
  }
}

}  // namespace impulse
