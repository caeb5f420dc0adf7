// Closed-form free-body dynamics (RBDA eq. 2.62-2.63 and sec. 2.14). See free_body.hpp.
#include "impulse/dynamics/free_body.hpp"

#include "impulse/core/check.hpp"
#include "joint_ops.hpp"

namespace impulse {

const VecX& compute_free_body_dynamics(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                       const Vec6Vector* f_ext) {
  IMPULSE_ASSERT(model.is_free_body() && q.size() == 7 && u.size() == 6);
  IMPULSE_ASSERT(!f_ext || f_ext->size() == 1);
  // pose and world-frame subspace: the general code (the same bits as compute_step_dynamics)
  detail::body_pose(model, data, 0, q.data());
  const SE3& X = data.oMi[0];
  detail::world_subspace(model, 0, X, data.J);

  // The body's inertia at O in world axes: world_inertia about the origin of the frame (R, 0) gives
  // m, h = m c and I_O = I_c + m (|c|^2 1 - c c^T); its matrix [[m 1, -[h]], [[h], I_O]] is M. (Its
  // round-off leaves M's triangles a bit apart; the upper one, which the factorization reads, is
  // mirrored so that M is symmetric as CRBA's is.)
  const Mat3& R = X.R;
  WorldInertia I;
  detail::world_inertia(model.inertia[0], SE3(R, Vec3::Zero()), I);
  Mat6 M6;
  I.to_matrix(M6);
  for (int a = 1; a < 6; ++a) {
    for (int b = 0; b < a; ++b) M6(a, b) = M6(b, a);
  }
  MatX& M = data.M;
  M = M6;
  M.diagonal() += model.armature;

  // h = [m w x (w x c) - m g; w x (I_O w) - m c x g] - J^T f_ext
  const Vec3 w(u[3], u[4], u[5]);
  const Vec3& g = data.gravity;
  Eigen::Map<Vec3> h_lin(data.h.data()), h_ang(data.h.data() + 3);
  h_lin = w.cross(w.cross(I.h)) - I.m * g;  // (m w x (w x c))
  h_ang = w.cross(M6.bottomRightCorner<3, 3>() * w) - I.h.cross(g);
  if (f_ext) {
    const Vec6& f = (*f_ext)[0];
    h_lin.noalias() -= R * f.head<3>();
    h_ang.noalias() -= R * f.tail<3>();
  }
  return data.h;
}

}  // namespace impulse
