// Energy, centre of mass and momentum (RBDA sec. 2.13-2.14, 5.3). See energy.hpp.
#include "impulse/dynamics/energy.hpp"

#include "impulse/dynamics/kinematics.hpp"
#include "joint_ops.hpp"

namespace impulse {

Scalar kinetic_energy(const Model& model, Data& data, const VecXcref& q, const VecXcref& u) {
  forward_kinematics(model, data, q, u);
  Scalar T = 0;
  for (Index i = 0; i < model.nb; ++i) T += data.v[i].dot(model.inertia[i].apply(data.v[i]));  // v.I v
  data.kinetic = 0.5 * T;
  return data.kinetic;
}

Scalar potential_energy(const Model& model, Data& data, const VecXcref& q) {
  forward_kinematics(model, data, q);
  Scalar V = 0;
  for (Index i = 0; i < model.nb; ++i) V -= model.inertia[i].m * data.gravity.dot(data.oMi[i].act_point(model.inertia[i].c));
  data.potential = V;
  return V;
}

const Vec3& center_of_mass(const Model& model, Data& data, const VecXcref& q) {
  forward_kinematics(model, data, q);
  Vec3 mc = Vec3::Zero();
  Scalar m = 0;
  for (Index i = 0; i < model.nb; ++i) {
    mc += model.inertia[i].m * data.oMi[i].act_point(model.inertia[i].c);
    m += model.inertia[i].m;
  }
  data.com = mc / m;
  return data.com;
}

const Vec3& center_of_mass(const Model& model, Data& data, const VecXcref& q, const VecXcref& u) {
  momentum(model, data, q, u);  // also writes data.com
  data.vcom = data.momentum.head<3>() / model.total_mass();
  return data.com;
}

const Vec6& momentum(const Model& model, Data& data, const VecXcref& q, const VecXcref& u) {
  forward_kinematics(model, data, q, u);
  Vec6 h = Vec6::Zero();
  Vec3 mc = Vec3::Zero();
  Scalar m = 0;
  for (Index i = 0; i < model.nb; ++i) {
    // h_i = I_i v_i (body frame, about the body origin), then expressed in the world frame
    h += data.oMi[i].act_force(model.inertia[i].apply(data.v[i]));
    mc += model.inertia[i].m * data.oMi[i].act_point(model.inertia[i].c);
    m += model.inertia[i].m;
  }
  data.momentum = h;
  data.com = mc / m;
  return data.momentum;
}

}  // namespace impulse
