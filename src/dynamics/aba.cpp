// Articulated-body algorithm, RBDA Table 7.1 in world coordinates. See aba.hpp.
#include "impulse/dynamics/aba.hpp"

#include "joint_ops.hpp"

namespace impulse {

const VecX& aba(const Model& model, Data& data, const VecXcref& q, const VecXcref& u, const VecXcref& tau,
                const Vec6Vector* f_ext) {
  IMPULSE_ASSERT(q.size() == model.nq && u.size() == model.nv && tau.size() == model.nv);
  IMPULSE_ASSERT(!f_ext || static_cast<Index>(f_ext->size()) == model.nb);
  const Index nb = model.nb;
  detail::fk_positions(model, data, q.data());

  // pass 1: world-frame S_i, v_i, c_i, I^A_i = I_i, p^A_i = v_i x* I_i v_i - f_ext,i
  for (Index i = 0; i < nb; ++i) {
    const Index k = model.idx_v[i], n = model.nv_joint[i], p = model.parent[i];
    const SE3& oMi = data.oMi[i];
    detail::world_subspace(model, i, oMi, data.J);
    Vec6& v = data.ov[i];
    Vec6& c = data.oc[i];
    switch (model.joint_type[i]) {
      case JointType::Fixed: c.setZero(); break;
      case JointType::Revolute:
      case JointType::Prismatic: {
        const Vec6 vJ = data.J.col(k) * u[k];
        v = p < 0 ? vJ : (data.ov[p] + vJ).eval();
        c = cross_motion(v, vJ);
        break;
      }
      case JointType::Spherical: {
        const Vec6 vJ = data.J.middleCols<3>(k) * u.segment<3>(k);
        v = p < 0 ? vJ : (data.ov[p] + vJ).eval();
        c = cross_motion(v, vJ);
        break;
      }
      case JointType::Floating: {
        // S_0 u = [v + p x w; w], c_0 = [v x w; 0] (root only)
        const Vec3 vb = u.segment<3>(k), wb = u.segment<3>(k + 3);
        v.head<3>() = vb + oMi.p.cross(wb);
        v.tail<3>() = wb;
        c.head<3>() = vb.cross(wb);
        c.tail<3>().setZero();
        break;
      }
    }
    if (n == 0) v = p < 0 ? Vec6::Zero().eval() : data.ov[p];
    WorldInertia& I = data.oinertia[i];
    detail::world_inertia(model.inertia[i], oMi, I);
    I.to_matrix(data.oYaba[i]);
    data.opA[i] = cross_force(v, I.apply(v));
    if (f_ext) data.opA[i] -= oMi.act_force((*f_ext)[i]);
  }

  // pass 2: articulated inertias and bias forces, leaves to root
  for (Index i = nb - 1; i >= 0; --i) {
    const Index k = model.idx_v[i], n = model.nv_joint[i], p = model.parent[i];
    const Mat6& IA = data.oYaba[i];
    const Vec6& pA = data.opA[i];
    if (n == 1) {
      auto S = data.J.col(k);
      auto U = data.U.col(k);
      U.noalias() = IA * S;
      const Scalar Dinv = 1.0 / (S.dot(U) + model.armature[k]);
      data.Dinv_joint[i](0, 0) = Dinv;
      const Scalar ui = tau[k] - S.dot(pA);
      data.u_aba[k] = ui;
      if (p >= 0) {
        // I^a = I^A - U D^-1 U^T ; p^a = p^A + I^a c + U D^-1 u
        Mat6 Ia = IA;
        Ia.noalias() -= (Dinv * U) * U.transpose();
        data.opA[p] += pA + Ia * data.oc[i] + (Dinv * ui) * U;
        data.oYaba[p] += Ia;
      }
    } else if (n == 3) {
      // spherical: D = S^T U + armature (3x3), inverted explicitly
      const auto S = data.J.middleCols<3>(k);
      auto U = data.U.middleCols<3>(k);
      U.noalias() = IA * S;
      Mat3 Dm = S.transpose() * U;
      Dm.diagonal() += model.armature.segment<3>(k);
      const Mat3 Dinv = Dm.inverse();
      data.Dinv_joint[i].topLeftCorner<3, 3>() = Dinv;
      data.u_aba.segment<3>(k) = tau.segment<3>(k) - S.transpose() * pA;
      if (p >= 0) {
        const Eigen::Matrix<Scalar, 6, 3> UDinv = U * Dinv;
        Mat6 Ia = IA;
        Ia.noalias() -= UDinv * U.transpose();
        data.opA[p] += pA + Ia * data.oc[i] + UDinv * data.u_aba.segment<3>(k);
        data.oYaba[p] += Ia;
      }
    } else if (n == 6) {
      // floating root (no parent): keep D = S^T U + armature; pass 3 solves with it (Cholesky)
      const auto S = data.J.middleCols<6>(k);
      auto U = data.U.middleCols<6>(k);
      U.noalias() = IA * S;
      Mat6& Dm = data.Dinv_joint[i];  // holds D itself for the floating root
      Dm.noalias() = S.transpose() * U;
      Dm.diagonal() += model.armature.segment<6>(k);
      data.u_aba.segment<6>(k) = tau.segment<6>(k) - S.transpose() * pA;
    } else if (p >= 0) {
      data.opA[p] += pA + IA * data.oc[i];
      data.oYaba[p] += IA;
    }
  }

  // pass 3: accelerations, root to leaves (a_world = -g)
  const Vec6 a_world(-data.gravity[0], -data.gravity[1], -data.gravity[2], 0, 0, 0);
  for (Index i = 0; i < nb; ++i) {
    const Index k = model.idx_v[i], n = model.nv_joint[i], p = model.parent[i];
    Vec6& a = data.oa[i];
    a = (p < 0 ? a_world : data.oa[p]) + data.oc[i];
    if (n == 1) {
      const Scalar qdd = data.Dinv_joint[i](0, 0) * (data.u_aba[k] - data.U.col(k).dot(a));
      data.udot[k] = qdd;
      a += data.J.col(k) * qdd;
    } else if (n == 3) {
      auto ud = data.udot.segment<3>(k);
      ud.noalias() = data.Dinv_joint[i].topLeftCorner<3, 3>() *
                     (data.u_aba.segment<3>(k) - data.U.middleCols<3>(k).transpose() * a);
      a.noalias() += data.J.middleCols<3>(k) * ud;
    } else if (n == 6) {
      auto ud = data.udot.segment<6>(k);
      const Vec6 r = data.u_aba.segment<6>(k) - data.U.middleCols<6>(k).transpose() * a;
      ud = data.Dinv_joint[i].llt().solve(r);  // D udot = u - U^T a
      a.noalias() += data.J.middleCols<6>(k) * ud;
    }
  }
  return data.udot;
}

}  // namespace impulse
