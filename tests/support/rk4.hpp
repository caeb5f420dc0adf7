// A fine-step explicit RK4 integrator of the free motion M(q) udot + h(q, u) = tau on the
// configuration manifold: Runge-Kutta-Munthe-Kaas (RKMK4). Each stage configuration is
// q_i = q (+) Theta_i (Model::integrate with dt = 1, quaternions by the exponential map) and the
// displacement obeys Theta' = dexp^-1_Theta(u) per rotation block, truncated after the
// [Theta]^2 term, which keeps 4th order:
//   floating base (R = exp(Theta) R0, world w):  Theta' = w - 1/2 Theta x w + 1/12 Theta x (Theta x w)
//   spherical     (R = R0 exp(Theta), body w):   Theta' = w + 1/2 Theta x w + 1/12 Theta x (Theta x w)
// Vector coordinates (translations, revolute, prismatic) have Theta' = u.
#pragma once

#include "impulse/dynamics/aba.hpp"

namespace impulse {
namespace test {

struct Rk4 {
  explicit Rk4(const Model& m)
      : model(m), data(m), q_stage(m.nq), tau(VecX::Zero(m.nv)), theta(m.nv), u_stage(m.nv), k1(m.nv), k2(m.nv),
        k3(m.nv), k4(m.nv), a1(m.nv), a2(m.nv), a3(m.nv), a4(m.nv) {}

  // Theta' = dexp^-1_Theta(u) (see above).
  void dexpinv(const VecX& th, const VecX& u, VecX& out) const {
    out = u;
    for (Index i = 0; i < model.nb; ++i) {
      const JointType t = model.joint_type[i];
      if (t != JointType::Floating && t != JointType::Spherical) continue;
      const Index k = model.idx_v[i] + (t == JointType::Floating ? 3 : 0);
      const Vec3 T = th.segment<3>(k), w = u.segment<3>(k);
      const Scalar sgn = t == JointType::Floating ? -0.5 : 0.5;
      out.segment<3>(k) = w + sgn * T.cross(w) + T.cross(T.cross(w)) / 12.0;
    }
  }

  void stage(const VecX& q, const VecX& th, const VecX& u, VecX& k, VecX& a) {
    model.integrate(q, th, 1.0, q_stage);
    dexpinv(th, u, k);
    a = aba(model, data, q_stage, u, tau);
  }

  void step(VecX& q, VecX& u, Scalar dt) {
    theta.setZero();
    stage(q, theta, u, k1, a1);
    theta = 0.5 * dt * k1;
    u_stage = u + 0.5 * dt * a1;
    stage(q, theta, u_stage, k2, a2);
    theta = 0.5 * dt * k2;
    u_stage = u + 0.5 * dt * a2;
    stage(q, theta, u_stage, k3, a3);
    theta = dt * k3;
    u_stage = u + dt * a3;
    stage(q, theta, u_stage, k4, a4);
    theta = dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    model.integrate(q, theta, 1.0, q);
    u += dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
  }

  const Model& model;
  Data data;
  VecX q_stage, tau, theta, u_stage, k1, k2, k3, k4, a1, a2, a3, a4;
};

}  // namespace test
}  // namespace impulse
