// Private helpers shared by the dynamics algorithms: per-joint transform, motion subspace S and
// its products, with a switch on the joint type (RBDA ch. 4, Table 4.1; floating-base S and c_J
// as documented in model/joint.hpp). Not installed; included only by src/dynamics/*.cpp.
#pragma once

#include "impulse/core/check.hpp"
#include "impulse/core/sincos.hpp"
#include "impulse/dynamics/data.hpp"

namespace impulse {
namespace detail {

inline Mat3 quat_matrix(const Scalar* q) {  // q = (w, x, y, z), normalised here
  return Quat(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix();
}

// liMi = X_PJ * X_J(q): pose of body i in its parent.
// R_P Rot(e_k, q) for a revolute joint about +-e_k (see joint_pose): column k of R_P kept, columns
// m, n = k + 1, k + 2 (cyclic) turned, with sp = +-sin(q) for the axis' sign.
template <int K>
inline void turn_columns(const Mat3& R_P, Scalar c, Scalar sp, Mat3& R) {
  constexpr int M = (K + 1) % 3, N = (K + 2) % 3;
  R.col(K) = R_P.col(K);
  R.col(M) = c * R_P.col(M) + sp * R_P.col(N);
  R.col(N) = c * R_P.col(N) - sp * R_P.col(M);
}

inline void joint_pose(const Model& model, const Data& data, Index i, const Scalar* q, SE3& liMi) {
  const SE3& X_PJ = model.joint_placement[i];
  switch (model.joint_type[i]) {
    case JointType::Fixed: liMi = X_PJ; return;
    case JointType::Revolute: {
      Scalar s, c;
      sincos(q[0], s, c);  // inline (core/sincos.hpp): libm's pair was 2.6 % of a robot step
      const int code = data.rev_axis[i];
      if (code != 0) {
        // a = +-e_k: Rot(a, q) keeps e_k and turns e_m -> c e_m + s' e_n, e_n -> c e_n - s' e_m
        // (m, n = k + 1, k + 2 cyclic; s' = +-s), so column k of X_PJ.R is kept and columns m, n
        // are mixed. The Rodrigues form below computes the same products on such an axis (its
        // constants hold the columns of X_PJ.R and zeros): the same bits, no per-Data constants.
        const Scalar sp = code > 0 ? s : -s;
        switch (code > 0 ? code : -code) {  // (fixed columns: straight-line code per axis)
          case 1: turn_columns<0>(X_PJ.R, c, sp, liMi.R); break;
          case 2: turn_columns<1>(X_PJ.R, c, sp, liMi.R); break;
          default: turn_columns<2>(X_PJ.R, c, sp, liMi.R); break;
        }
      } else {  // X_PJ.R Rot(a, q) = cos(q) A + sin(q) B + C (constants precomputed in Data)
        liMi.R = c * data.rev_A[i] + s * data.rev_B[i] + data.rev_C[i];
      }
      liMi.p = X_PJ.p;
      return;
    }
    case JointType::Prismatic:
      liMi.R = X_PJ.R;
      liMi.p.noalias() = X_PJ.p + X_PJ.R * (q[0] * model.joint_axis[i]);
      return;
    case JointType::Spherical: liMi.R.noalias() = X_PJ.R * quat_matrix(q); liMi.p = X_PJ.p; return;
    case JointType::Floating:
      liMi.R.noalias() = X_PJ.R * quat_matrix(q + 3);
      liMi.p.noalias() = X_PJ.p + X_PJ.R * Vec3(q[0], q[1], q[2]);
      return;
  }
}

// Pose of body i: liMi = X_{lambda(i), i} and oMi = X_W,lambda(i) X_{lambda(i), i} (the parent's
// oMi must be up to date). Algorithms that need one more per-body quantity from the pose call
// this in their own forward loop instead of a separate fk_positions pass.
inline void body_pose(const Model& model, Data& data, Index i, const Scalar* q) {
  joint_pose(model, data, i, q + model.idx_q[i], data.liMi[i]);
  const Index p = model.parent[i];
  if (p < 0) {
    data.oMi[i] = data.liMi[i];
  } else {
    data.oMi[i].R.noalias() = data.oMi[p].R * data.liMi[i].R;
    data.oMi[i].p.noalias() = data.oMi[p].R * data.liMi[i].p + data.oMi[p].p;
  }
}

// Forward pass over positions: liMi and oMi for every body.
inline void fk_positions(const Model& model, Data& data, const Scalar* q) {
  for (Index i = 0; i < model.nb; ++i) body_pose(model, data, i, q);
}

// Joint velocity S_i u_i in the body frame. R_WB is the body's world rotation (floating base).
inline Vec6 motion_body(const Model& model, Index i, const Mat3& R_WB, const Scalar* u) {
  Vec6 m = Vec6::Zero();
  switch (model.joint_type[i]) {
    case JointType::Fixed: break;
    case JointType::Revolute: m.tail<3>() = u[0] * model.joint_axis[i]; break;
    case JointType::Prismatic: m.head<3>() = u[0] * model.joint_axis[i]; break;
    case JointType::Spherical: m.tail<3>() = Vec3(u[0], u[1], u[2]); break;
    case JointType::Floating:
      // S = diag(R^T, R^T): [v; w] in the world frame -> body twist.
      m.head<3>().noalias() = R_WB.transpose() * Vec3(u[0], u[1], u[2]);
      m.tail<3>().noalias() = R_WB.transpose() * Vec3(u[3], u[4], u[5]);
      break;
  }
  return m;
}

// tau_i = S_i^T f_i for a body-frame wrench f_i.
inline void force_body(const Model& model, Index i, const Mat3& R_WB, const Vec6& f, Scalar* tau) {
  switch (model.joint_type[i]) {
    case JointType::Fixed: break;
    case JointType::Revolute: tau[0] = model.joint_axis[i].dot(f.tail<3>()); break;
    case JointType::Prismatic: tau[0] = model.joint_axis[i].dot(f.head<3>()); break;
    case JointType::Spherical: tau[0] = f[3]; tau[1] = f[4]; tau[2] = f[5]; break;
    case JointType::Floating: {
      // S^T = diag(R, R): base wrench in the world frame (moment about the base origin).
      Eigen::Map<Vec3>(tau).noalias() = R_WB * f.head<3>();
      Eigen::Map<Vec3>(tau + 3).noalias() = R_WB * f.tail<3>();
      break;
    }
  }
}

// World-frame motion subspace columns of joint i (X_WB S_i; for the floating base with the
// world-frame u this is [[I, [p]x], [0, I]]), written into J.middleCols(idx_v[i], nv_i).
template <typename Derived>
inline void world_subspace(const Model& model, Index i, const SE3& oMi, Eigen::MatrixBase<Derived> const& J_) {
  auto& J = const_cast<Eigen::MatrixBase<Derived>&>(J_);
  const Index k = model.idx_v[i];
  switch (model.joint_type[i]) {
    case JointType::Fixed: break;
    case JointType::Revolute: {
      const Vec3 w = oMi.R * model.joint_axis[i];
      J.col(k).template tail<3>() = w;
      J.col(k).template head<3>() = oMi.p.cross(w);
      break;
    }
    case JointType::Prismatic:
      J.col(k).template head<3>() = oMi.R * model.joint_axis[i];
      J.col(k).template tail<3>().setZero();
      break;
    case JointType::Spherical:
      J.template block<3, 3>(3, k) = oMi.R;
      J.template block<3, 3>(0, k).noalias() = skew(oMi.p) * oMi.R;
      break;
    case JointType::Floating:
      J.template block<3, 3>(0, k).setIdentity();
      J.template block<3, 3>(3, k).setZero();
      J.template block<3, 3>(0, k + 3) = skew(oMi.p);
      J.template block<3, 3>(3, k + 3).setIdentity();
      break;
  }
}

// Body inertia I_B (body frame) expressed in the world given X_WB, as moments about the origin.
inline void world_inertia(const Inertia& I, const SE3& X, WorldInertia& out) {
  const Vec3 c = X.R * I.c + X.p;
  const Scalar m = I.m;
  out.m = m;
  out.h = m * c;
  const Mat3 IcRt = I.Ic * X.R.transpose();
  out.I_O.noalias() = X.R * IcRt;  // R Ic R^T
  // parallel axis to the origin: I_O = Ic + m (|c|^2 1 - c c^T)
  out.I_O.noalias() -= out.h * c.transpose();
  out.I_O.diagonal().array() += out.h.dot(c);
}

// a . b for 6-vectors in raw storage (a column of Data::J with one of Data::F, or a wrench): S^T f
inline Scalar dot6(const Scalar* a, const Scalar* b) {
  return (a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3]) + (a[4] * b[4] + a[5] * b[5]);
}

// Number of dofs in the subtree of body i (the dofs idx_v[i] .. idx_v[i] + n - 1, contiguous).
inline Index subtree_nv(const Model& model, Index i) {
  const Index e = model.subtree_end[i];
  return (e < model.nb ? model.idx_v[e] : model.nv) - model.idx_v[i];
}

}  // namespace detail
}  // namespace impulse
