// Fused RNEA (RBDA Table 5.1, in world coordinates) + CRBA (RBDA Table 6.2) + joint Jacobians.
// See step_dynamics.hpp.
#include "impulse/dynamics/step_dynamics.hpp"

#include "impulse/core/check.hpp"
#include "impulse/spatial/spatial.hpp"
#include "../core/isa_dispatch.hpp"
#include "joint_ops.hpp"
#include "passes.hpp"

namespace impulse {

// RNEA with udot = 0 in world coordinates (RBDA sec. 5.3 and the world-frame form of Table 5.1;
// Featherstone 2008 notes that any coordinate system may be used). CRBA needs each body's
// world-frame subspace S_i and inertia I_i anyway (its "world-frame form"), and with those the
// recursion needs no coordinate transform per body:
//   v_i = v_lambda + S_i u_i,  a_i = a_lambda + v_i x S_i u_i   (dS_i/dt = v_i x S_i for a joint
//                                                                whose S is fixed in body i)
//   f_i = I_i a_i + v_i x* I_i v_i - f_ext,i,  h_i = S_i^T f_i,  f_lambda += f_i,
// with a_0 = -g (gravity as a base acceleration). The floating base's S = [[1, [p]], [0, 1]] is
// not fixed in the body: its term is d(S)/dt u = [v_p x w; 0]. The body-frame RNEA moved every
// v, a, f through the joint transform (3x3 products and cross products); here each body costs
// two inertia products and two cross products, about 30 % fewer instructions for ANYmal's step.
// h agrees with rnea() to round-off (tests/dynamics/test_step_dynamics.cpp). Positions enter as
// moments about the world origin, as CRBA's world-frame M already does: far from the origin the
// terms of S_i^T f_i grow with the distance before they cancel.
const VecX& compute_step_dynamics(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                  const Vec6Vector* f_ext) {
  IMPULSE_ASSERT(q.size() == model.nq && u.size() == model.nv);
  IMPULSE_ASSERT(!f_ext || static_cast<Index>(f_ext->size()) == model.nb);
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  const Scalar* const qd = q.data();
  const Scalar* const ud = u.data();
  Scalar* const J = data.J.data();
  Scalar* const h = data.h.data();
  const Vec3& g = data.gravity;
  for (Index i = 0; i < model.nb; ++i) {
    detail::body_pose(model, data, i, qd);
    const SE3& X = data.oMi[i];
    detail::world_subspace(model, i, X, data.J);
    WorldInertia& Y = data.oYcrb[i];  // I_i; CRBA's backward pass then sums it into I^c_i
    detail::world_inertia(model.inertia[i], X, Y);
    const Index p = model.parent[i];
    Scalar* const v = data.v[i].data();
    Scalar* const a = data.a[i].data();
    if (p < 0) {
      for (int r = 0; r < 6; ++r) v[r] = 0;
      a[0] = -g[0], a[1] = -g[1], a[2] = -g[2], a[3] = 0, a[4] = 0, a[5] = 0;
    } else {
      const Scalar* vp = data.v[p].data();
      const Scalar* ap = data.a[p].data();
      for (int r = 0; r < 6; ++r) v[r] = vp[r], a[r] = ap[r];
    }
    // (raw coefficients throughout, see add_cross_motion in spatial.hpp)
    const Index k = model.idx_v[i];
    switch (model.joint_type[i]) {
      case JointType::Fixed: break;
      case JointType::Revolute:
      case JointType::Prismatic: {
        const Scalar* S = J + 6 * k;
        const Scalar uk = ud[k];
        const Scalar su[6] = {S[0] * uk, S[1] * uk, S[2] * uk, S[3] * uk, S[4] * uk, S[5] * uk};
        for (int r = 0; r < 6; ++r) v[r] += su[r];
        add_cross_motion(v, su, a);
        break;
      }
      case JointType::Spherical: {
        const Scalar* S = J + 6 * k;
        Scalar su[6];
        for (int r = 0; r < 6; ++r) su[r] = (S[r] * ud[k] + S[6 + r] * ud[k + 1]) + S[12 + r] * ud[k + 2];
        for (int r = 0; r < 6; ++r) v[r] += su[r];
        add_cross_motion(v, su, a);
        break;
      }
      case JointType::Floating: {
        // S u = [u_lin + p x w; w] (u_lin: the velocity of the body origin p, w: the angular
        // velocity, both world), d(S)/dt u = [u_lin x w; 0]
        const Vec3 ul(ud[k], ud[k + 1], ud[k + 2]), w(ud[k + 3], ud[k + 4], ud[k + 5]);
        const Vec3 vO = ul + X.p.cross(w);
        const Vec3 c = ul.cross(w);
        v[0] += vO.x(), v[1] += vO.y(), v[2] += vO.z(), v[3] += w.x(), v[4] += w.y(), v[5] += w.z();
        a[0] += c.x(), a[1] += c.y(), a[2] += c.z();
        break;  // (a floating joint is always a root: ModelBuilder)
      }
    }
    // f_i = I_i a_i + v_i x* (I_i v_i) - f_ext,i
    Scalar* const f = data.f[i].data();
    Scalar mom[6];
    Y.apply_to(v, mom);
    Y.apply_to(a, f);
    add_cross_force(v, mom, f);
    if (f_ext) {
      const Vec6 fw = X.act_force((*f_ext)[i]);  // (body frame about the body origin -> world)
      for (int r = 0; r < 6; ++r) f[r] -= fw[r];
    }
  }
  // backward pass: h_i = S_i^T f_i, f_lambda += f_i
  for (Index i = model.nb - 1; i >= 0; --i) {
    const Scalar* f = data.f[i].data();
    const Index k = model.idx_v[i];
    switch (model.joint_type[i]) {
      case JointType::Fixed: break;
      case JointType::Revolute:
      case JointType::Prismatic: h[k] = detail::dot6(J + 6 * k, f); break;
      case JointType::Spherical:
        for (int c = 0; c < 3; ++c) h[k + c] = detail::dot6(J + 6 * (k + c), f);
        break;
      case JointType::Floating: {
        // S^T f = [f_lin; f_ang - p x f_lin]: the wrench about the base origin (as crba_backward)
        const Vec3& pb = data.oMi[i].p;
        h[k] = f[0], h[k + 1] = f[1], h[k + 2] = f[2];
        h[k + 3] = f[3] - (pb.y() * f[2] - pb.z() * f[1]);
        h[k + 4] = f[4] - (pb.z() * f[0] - pb.x() * f[2]);
        h[k + 5] = f[5] - (pb.x() * f[1] - pb.y() * f[0]);
        break;
      }
    }
    const Index p = model.parent[i];
    if (p >= 0) data.f[p] += data.f[i];
  }
  detail::crba_backward(model, data);
  };
  detail::run_kernel(kernel_body);
  return data.h;
}

const MatX& recompute_step_mass_matrix(const Model& model, Data& data) {
  detail::crba_from_poses(model, data);
  return data.M;
}

void add_external_generalized_force(const Model& model, const Data& data, const Vec6Vector& f_ext, VecXref out) {
  IMPULSE_ASSERT(static_cast<Index>(f_ext.size()) == model.nb && out.size() == model.nv);
  for (Index b = 0; b < model.nb; ++b) {
    const Vec6& f = f_ext[static_cast<std::size_t>(b)];
    if ((f.array() == 0).all()) continue;
    const Vec6 fw = data.oMi[b].act_force(f);  // (body frame about the body origin -> world)
    for (Index i = b; i >= 0; i = model.parent[i]) {
      for (Index k = model.idx_v[i]; k < model.idx_v[i] + model.nv_joint[i]; ++k) out[k] += data.J.col(k).dot(fw);
    }
  }
}

}  // namespace impulse
