// Recursive Newton-Euler algorithm, RBDA Table 5.1 with gravity as base acceleration (sec. 5.3).
// See rnea.hpp for the equations and conventions.
#include "impulse/dynamics/rnea.hpp"

#include "joint_ops.hpp"
#include "passes.hpp"

namespace impulse {

namespace detail {

void rnea_impl(const Model& model, Data& data, const Scalar* q, const Scalar* u, const Scalar* udot,
               const Vec6Vector* f_ext, Scalar* tau) {
  const Vec6 a_world(-data.gravity[0], -data.gravity[1], -data.gravity[2], 0, 0, 0);  // a_0 = -g
  // forward pass: poses, v_i, a_i, f_i
  for (Index i = 0; i < model.nb; ++i) {
    body_pose(model, data, i, q);
    const Index p = model.parent[i];
    const SE3& liMi = data.liMi[i];
    const Mat3& R = data.oMi[i].R;
    const Index iv = model.idx_v[i];
    // parent twist and acceleration moved into this body: x_i = [R^T (x_lin - p x x_ang); R^T x_ang]
    Vec3 vl, wl, al, aw;  // linear / angular parts of v_i and a_i
    if (p < 0) {
      vl.setZero();
      wl.setZero();
      aw.setZero();
      al.noalias() = liMi.R.transpose() * a_world.head<3>();
    } else {
      const Vec6& vp = data.v[p];
      const Vec6& ap = data.a[p];
      wl.noalias() = liMi.R.transpose() * vp.tail<3>();
      vl.noalias() = liMi.R.transpose() * (vp.head<3>() - liMi.p.cross(vp.tail<3>()));
      aw.noalias() = liMi.R.transpose() * ap.tail<3>();
      al.noalias() = liMi.R.transpose() * (ap.head<3>() - liMi.p.cross(ap.tail<3>()));
    }
    // joint terms: v_i += S u, a_i += S udot + c_J + v_i x S u
    switch (model.joint_type[i]) {
      case JointType::Fixed: break;
      case JointType::Revolute: {
        const Vec3& ax = model.joint_axis[i];
        if (udot) aw += udot[iv] * ax;
        if (u) {
          const Vec3 wJ = u[iv] * ax;
          wl += wJ;
          al += vl.cross(wJ);  // v x [0; wJ] = [v_lin x wJ; w x wJ]
          aw += wl.cross(wJ);
        }
        break;
      }
      case JointType::Prismatic: {
        const Vec3& ax = model.joint_axis[i];
        if (udot) al += udot[iv] * ax;
        if (u) {
          const Vec3 vJ = u[iv] * ax;
          vl += vJ;
          al += wl.cross(vJ);  // v x [vJ; 0] = [w x vJ; 0]
        }
        break;
      }
      case JointType::Spherical: {
        if (udot) aw += Vec3(udot[iv], udot[iv + 1], udot[iv + 2]);
        if (u) {
          const Vec3 wJ(u[iv], u[iv + 1], u[iv + 2]);
          wl += wJ;
          al += vl.cross(wJ);
          aw += wl.cross(wJ);
        }
        break;
      }
      case JointType::Floating: {
        // S = diag(R^T, R^T); c_J = [-R^T (w x v); 0]; v_i x S u = v_i x v_i = 0
        if (udot) {
          al.noalias() += R.transpose() * Vec3(udot[iv], udot[iv + 1], udot[iv + 2]);
          aw.noalias() += R.transpose() * Vec3(udot[iv + 3], udot[iv + 4], udot[iv + 5]);
        }
        if (u) {
          const Vec3 vw(u[iv], u[iv + 1], u[iv + 2]), ww(u[iv + 3], u[iv + 4], u[iv + 5]);
          vl.noalias() += R.transpose() * vw;
          wl.noalias() += R.transpose() * ww;
          al.noalias() -= R.transpose() * ww.cross(vw);
        }
        break;
      }
    }
    data.v[i] << vl, wl;
    data.a[i] << al, aw;
    // f_i = I_i a_i + v_i x* I_i v_i - f_ext,i with I = (m, c, Ic):
    //   I x = [m (x_lin - c x x_ang); Ic x_ang + c x (m (x_lin - c x x_ang))]
    //   v x* h = [w x h_lin; w x h_ang + v_lin x h_lin]
    const Inertia& I = model.inertia[i];
    const Vec3 fa = I.m * (al - I.c.cross(aw));
    Vec3 fl = fa;
    Vec3 fw = I.Ic * aw + I.c.cross(fa);
    if (u) {
      const Vec3 hl = I.m * (vl - I.c.cross(wl));
      const Vec3 hw = I.Ic * wl + I.c.cross(hl);
      fl += wl.cross(hl);
      fw += wl.cross(hw) + vl.cross(hl);
    }
    Vec6& f = data.f[i];
    f << fl, fw;
    if (f_ext) f -= (*f_ext)[i];
  }
  // backward pass: tau_i = S_i^T f_i, f_lambda += lambda X*_i f_i
  for (Index i = model.nb - 1; i >= 0; --i) {
    force_body(model, i, data.oMi[i].R, data.f[i], tau + model.idx_v[i]);
    const Index p = model.parent[i];
    if (p >= 0) {
      // f_lambda += [R f_lin; R f_ang + p x (R f_lin)]
      const SE3& X = data.liMi[i];
      const Vec3 Rfl = X.R * data.f[i].head<3>();
      data.f[p].head<3>() += Rfl;
      data.f[p].tail<3>() += X.R * data.f[i].tail<3>() + X.p.cross(Rfl);
    }
  }
  // rotor inertia: tau += armature .* udot (M includes the armature on its diagonal)
  if (udot) {
    for (Index k = 0; k < model.nv; ++k) tau[k] += model.armature[k] * udot[k];
  }
}

}  // namespace detail

const VecX& rnea(const Model& model, Data& data, const VecXcref& q, const VecXcref& u, const VecXcref& udot,
                 const Vec6Vector* f_ext) {
  IMPULSE_ASSERT(q.size() == model.nq && u.size() == model.nv && udot.size() == model.nv);
  IMPULSE_ASSERT(!f_ext || static_cast<Index>(f_ext->size()) == model.nb);
  detail::rnea_impl(model, data, q.data(), u.data(), udot.data(), f_ext, data.tau.data());
  return data.tau;
}

const VecX& nonlinear_effects(const Model& model, Data& data, const VecXcref& q, const VecXcref& u) {
  IMPULSE_ASSERT(q.size() == model.nq && u.size() == model.nv);
  detail::rnea_impl(model, data, q.data(), u.data(), nullptr, nullptr, data.h.data());
  return data.h;
}

const VecX& gravity_torques(const Model& model, Data& data, const VecXcref& q) {
  IMPULSE_ASSERT(q.size() == model.nq);
  detail::rnea_impl(model, data, q.data(), nullptr, nullptr, nullptr, data.h.data());
  return data.h;
}

}  // namespace impulse
