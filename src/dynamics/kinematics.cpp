// Forward kinematics: RBDA sec. 4.1-4.2, Table 5.1 (first loop). See kinematics.hpp.
#include "impulse/dynamics/kinematics.hpp"

#include "joint_ops.hpp"

namespace impulse {

const SE3Vector& forward_kinematics(const Model& model, Data& data, const VecXcref& q) {
  IMPULSE_ASSERT(q.size() == model.nq);
  detail::fk_positions(model, data, q.data());
  return data.oMi;
}

const SE3Vector& forward_kinematics(const Model& model, Data& data, const VecXcref& q, const VecXcref& u) {
  IMPULSE_ASSERT(q.size() == model.nq && u.size() == model.nv);
  for (Index i = 0; i < model.nb; ++i) {
    // positions: X_{lambda(i), i} and X_W,i
    detail::joint_pose(model, data, i, q.data() + model.idx_q[i], data.liMi[i]);
    const Index p = model.parent[i];
    const SE3& liMi = data.liMi[i];
    if (p < 0) {
      data.oMi[i] = liMi;
    } else {
      data.oMi[i].R.noalias() = data.oMi[p].R * liMi.R;
      data.oMi[i].p.noalias() = data.oMi[p].R * liMi.p + data.oMi[p].p;
    }
    // velocities: v_i = X_{i, lambda(i)} v_lambda(i) + S_i u_i
    data.v[i] = detail::motion_body(model, i, data.oMi[i].R, u.data() + model.idx_v[i]);
    if (p >= 0) data.v[i] += liMi.inv_act_motion(data.v[p]);
  }
  return data.oMi;
}

SE3 frame_placement(const Model& model, const Data& data, Index frame_id) {
  const Frame& fr = model.frames.at(frame_id);
  if (fr.body < 0) return fr.X_BF;
  return data.oMi[fr.body] * fr.X_BF;
}

Vec3 point_position(const Data& data, Index body, const Vec3& p_B) { return data.oMi[body].act_point(p_B); }

Vec3 point_velocity(const Data& data, Index body, const Vec3& p_B) {
  const Vec6& vb = data.v[body];
  return data.oMi[body].R * (vb.head<3>() + vb.tail<3>().cross(p_B));
}

Vec3 body_angular_velocity(const Data& data, Index body) { return data.oMi[body].R * data.v[body].tail<3>(); }

}  // namespace impulse
