// Recursive Newton-Euler algorithm, RBDA Table 5.1 with gravity as base acceleration (sec. 5.3).
// See rnea.hpp for the equations and conventions.
#include "impulse/dynamics/rnea.hpp"

#include "joint_ops.hpp"

namespace impulse {

namespace {

// u or udot may be null (treated as zero).
void rnea_impl(const Model& model, Data& data, const Scalar* q, const Scalar* u, const Scalar* udot,
               const Vec6Vector* f_ext, Scalar* tau) {
  const Vec6 a_world(-model.gravity[0], -model.gravity[1], -model.gravity[2], 0, 0, 0);  // a_0 = -g
  // forward pass: poses, v_i, a_i, f_i
  for (Index i = 0; i < model.nb; ++i) {
    detail::joint_pose(model, data, i, q + model.idx_q[i], data.liMi[i]);
    const Index p = model.parent[i];
    const SE3& liMi = data.liMi[i];
    if (p < 0) {
      data.oMi[i] = liMi;
    } else {
      data.oMi[i].R.noalias() = data.oMi[p].R * liMi.R;
      data.oMi[i].p.noalias() = data.oMi[p].R * liMi.p + data.oMi[p].p;
    }
    const Mat3& R = data.oMi[i].R;
    const Index iv = model.idx_v[i];
    Vec6& v = data.v[i];
    Vec6& a = data.a[i];
    // a_i = iX_lambda a_lambda + S_i udot_i
    a = liMi.inv_act_motion(p < 0 ? a_world : data.a[p]);
    if (udot) a += detail::motion_body(model, i, R, udot + iv);
    if (u) {
      const Vec6 vJ = detail::motion_body(model, i, R, u + iv);  // S_i u_i
      v = vJ;
      if (p >= 0) v += liMi.inv_act_motion(data.v[p]);
      if (model.joint_type[i] == JointType::Floating) {
        // c_J = S-dot u = [-R^T (w x v); 0] with world-frame u = [v; w]; v_i x S_i u_i = 0 here
        const Vec3 vw(u[iv], u[iv + 1], u[iv + 2]), ww(u[iv + 3], u[iv + 4], u[iv + 5]);
        a.head<3>().noalias() -= R.transpose() * ww.cross(vw);
      } else {
        a += cross_motion(v, vJ);  // v_i x S_i u_i (c_J = 0 for the other joints)
      }
    } else {
      v.setZero();
    }
    // f_i = I_i a_i + v_i x* I_i v_i - f_ext,i
    const Inertia& I = model.inertia[i];
    data.f[i] = I.apply(a);
    if (u) data.f[i] += cross_force(v, I.apply(v));
    if (f_ext) data.f[i] -= (*f_ext)[i];
  }
  // backward pass: tau_i = S_i^T f_i, f_lambda += lambda X*_i f_i
  for (Index i = model.nb - 1; i >= 0; --i) {
    detail::force_body(model, i, data.oMi[i].R, data.f[i], tau + model.idx_v[i]);
    const Index p = model.parent[i];
    if (p >= 0) data.f[p] += data.liMi[i].act_force(data.f[i]);
  }
  // rotor inertia: tau += armature .* udot (M includes the armature on its diagonal)
  if (udot) {
    for (Index k = 0; k < model.nv; ++k) tau[k] += model.armature[k] * udot[k];
  }
}

}  // namespace

const VecX& rnea(const Model& model, Data& data, const VecXcref& q, const VecXcref& u, const VecXcref& udot,
                 const Vec6Vector* f_ext) {
  IMPULSE_ASSERT(q.size() == model.nq && u.size() == model.nv && udot.size() == model.nv);
  IMPULSE_ASSERT(!f_ext || static_cast<Index>(f_ext->size()) == model.nb);
  rnea_impl(model, data, q.data(), u.data(), udot.data(), f_ext, data.tau.data());
  return data.tau;
}

const VecX& nonlinear_effects(const Model& model, Data& data, const VecXcref& q, const VecXcref& u) {
  IMPULSE_ASSERT(q.size() == model.nq && u.size() == model.nv);
  rnea_impl(model, data, q.data(), u.data(), nullptr, nullptr, data.h.data());
  return data.h;
}

const VecX& gravity_torques(const Model& model, Data& data, const VecXcref& q) {
  IMPULSE_ASSERT(q.size() == model.nq);
  rnea_impl(model, data, q.data(), nullptr, nullptr, nullptr, data.h.data());
  return data.h;
}

}  // namespace impulse
