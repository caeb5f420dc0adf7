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

  // c = R c_B, I_c = R I_cB R^T (symmetric: the upper triangle, mirrored)
  const Inertia& I = model.inertia[0];
  const Mat3& R = X.R;
  const Scalar m = I.m;
  const Vec3 c = R * I.c;
  Mat3 RI;
  RI.noalias() = R * I.Ic;
  Mat3 IO;
  for (int a = 0; a < 3; ++a) {
    for (int b = a; b < 3; ++b) IO(a, b) = RI(a, 0) * R(b, 0) + RI(a, 1) * R(b, 1) + RI(a, 2) * R(b, 2);
  }
  // I_O = I_c + m [c]^T [c] = I_c + m (|c|^2 1 - c c^T)
  const Scalar mc2 = m * c.squaredNorm();
  for (int a = 0; a < 3; ++a) {
    IO(a, a) += mc2 - m * c[a] * c[a];
    for (int b = a + 1; b < 3; ++b) {
      IO(a, b) -= m * c[a] * c[b];
      IO(b, a) = IO(a, b);
    }
  }

  // M = [[m 1, -m [c]], [m [c], I_O]] (+ armature on the diagonal)
  MatX& M = data.M;
  const Vec3 mc = m * c;
  M.topLeftCorner<3, 3>() = m * Mat3::Identity();
  M.topRightCorner<3, 3>() << 0, mc.z(), -mc.y(), -mc.z(), 0, mc.x(), mc.y(), -mc.x(), 0;
  M.bottomLeftCorner<3, 3>() = M.topRightCorner<3, 3>().transpose();
  M.bottomRightCorner<3, 3>() = IO;
  M.diagonal() += model.armature;

  // h = [m w x (w x c) - m g; w x (I_O w) - m c x g] - J^T f_ext
  const Vec3 w(u[3], u[4], u[5]);
  const Vec3& g = data.gravity;
  const Vec3 wc = w.cross(c);
  Eigen::Map<Vec3> h_lin(data.h.data()), h_ang(data.h.data() + 3);
  h_lin = m * w.cross(wc) - m * g;
  h_ang = w.cross(IO * w) - mc.cross(g);
  if (f_ext) {
    const Vec6& f = (*f_ext)[0];
    h_lin.noalias() -= R * f.head<3>();
    h_ang.noalias() -= R * f.tail<3>();
  }
  return data.h;
}

}  // namespace impulse
