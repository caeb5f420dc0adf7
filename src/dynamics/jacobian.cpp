// World-frame joint, frame and point Jacobians (RBDA sec. 4.1.5). See jacobian.hpp.
#include "impulse/dynamics/jacobian.hpp"

#include "impulse/dynamics/ltdl.hpp"
#include "joint_ops.hpp"

namespace impulse {

const Mat6X& compute_joint_jacobians(const Model& model, Data& data, const VecXcref& q) {
  IMPULSE_ASSERT(q.size() == model.nq);
  detail::fk_positions(model, data, q.data());
  for (Index i = 0; i < model.nb; ++i) detail::world_subspace(model, i, data.oMi[i], data.J);
  return data.J;
}

void frame_jacobian(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref J6) {
  IMPULSE_ASSERT(J6.rows() == 6 && J6.cols() == model.nv);
  const Vec3 p = data.oMi[body].act_point(p_B);
  J6.setZero();
  // columns of the dofs supporting body: shift the reference point from the world origin to p
  for (Index k = branch_last_dof(model, body); k >= 0; k = model.dof_parent[k]) {
    const auto Jk = data.J.col(k);
    J6.col(k).head<3>() = Jk.head<3>() + Jk.tail<3>().cross(p);
    J6.col(k).tail<3>() = Jk.tail<3>();
  }
}

void point_jacobian(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref J3) {
  IMPULSE_ASSERT(J3.rows() == 3 && J3.cols() == model.nv);
  const Vec3 p = data.oMi[body].act_point(p_B);
  J3.setZero();
  for (Index k = branch_last_dof(model, body); k >= 0; k = model.dof_parent[k]) {
    const auto Jk = data.J.col(k);
    J3.col(k) = Jk.head<3>() + Jk.tail<3>().cross(p);
  }
}

void frame_jacobian(const Model& model, const Data& data, Index frame_id, MatXref J6) {
  const Frame& fr = model.frames.at(frame_id);
  IMPULSE_CHECK(fr.body >= 0, "frame '", fr.name, "' is attached to the world: it has no Jacobian");
  frame_jacobian(model, data, fr.body, fr.X_BF.p, J6);
}

namespace {
// Poses, then world-frame S only for the joints supporting `body`.
void branch_subspaces(const Model& model, Data& data, const VecXcref& q, Index body) {
  IMPULSE_ASSERT(q.size() == model.nq);
  detail::fk_positions(model, data, q.data());
  for (Index b = body; b >= 0; b = model.parent[b]) detail::world_subspace(model, b, data.oMi[b], data.J);
}
}  // namespace

const Mat6X& frame_jacobian(const Model& model, Data& data, const VecXcref& q, Index body, const Vec3& p_B) {
  branch_subspaces(model, data, q, body);
  frame_jacobian(model, data, body, p_B, data.Jframe);
  return data.Jframe;
}

const Mat3X& point_jacobian(const Model& model, Data& data, const VecXcref& q, Index body, const Vec3& p_B) {
  branch_subspaces(model, data, q, body);
  point_jacobian(model, data, body, p_B, data.Jpoint);
  return data.Jpoint;
}

}  // namespace impulse
