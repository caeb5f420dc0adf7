// The per-system parts of a World's data and of a step's scratch (stepper/system.hpp).
#include "impulse/stepper/system.hpp"

#include <utility>

namespace impulse {

SystemState::SystemState(std::string system_name, const Model& model)
    : name(std::move(system_name)), nq(model.nq), nv(model.nv), nb(model.nb) {
  q = model.neutral_configuration();
  q_target = q;
  u.setZero(nv);
  tau.setZero(nv);
  kp.setZero(nv);
  kd.setZero(nv);
  u_target.setZero(nv);
  flight_accel.setZero(nv);
  flight_force.setZero(nv);
  f_ext.assign(static_cast<std::size_t>(nb), Vec6::Zero());
}

const SystemState::VectorField SystemState::kVectorFields[9] = {
    {&SystemState::q, Length::Nq, "q", 1},
    {&SystemState::u, Length::Nv, "u", 1},
    {&SystemState::tau, Length::Nv, "tau", 1},
    {&SystemState::kp, Length::Nv, "kp", 1},
    {&SystemState::kd, Length::Nv, "kd", 1},
    {&SystemState::q_target, Length::Nq, "q_target", 1},
    {&SystemState::u_target, Length::Nv, "u_target", 1},
    {&SystemState::flight_accel, Length::Nv, "free-flight acceleration", 2},
    {&SystemState::flight_force, Length::Nv, "free-flight input force", 2},
};

SystemOutputs::SystemOutputs(const Model& model) {
  tau_applied.setZero(model.nv);
  tau_friction.setZero(model.nv);
  contact_impulses.reserve(8);  // (then grows by doubling)
}

SystemScratch::SystemScratch(const Model& model) {
  u_free.setZero(model.nv);
  q_next.setZero(model.nq);
  rhs.setZero(model.nv);
  tau_clamp.setZero(model.nv);
  m_diagonal.setZero(model.nv);
  clamped.assign(static_cast<std::size_t>(model.nv), 0);
}

}  // namespace impulse
