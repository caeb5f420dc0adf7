// Spatial algebra (Featherstone, Rigid Body Dynamics Algorithms (RBDA), 2008, ch. 2).
//
// Ordering: every 6-vector is [linear; angular] (as in Pinocchio), NOT Featherstone's
// [angular; linear]. A motion vector m = [v; w] is the velocity of the point at the frame
// origin and the angular velocity; a force vector f = [f; n] is the force and the moment about
// the frame origin. Frames use Drake-style monograms: X_AB is the pose of frame B in frame A.
#pragma once

#include "impulse/core/sincos.hpp"
#include "impulse/core/types.hpp"

namespace impulse {

inline Mat3 skew(const Vec3& a) {
  Mat3 S;
  S << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return S;
}

// out += m1 x m2, the motion cross product (RBDA eq. 2.31, reordered): [w x m_lin + v x m_ang;
// w x m_ang] for m1 = [v; w], on raw 6-vectors, coefficient by coefficient (the products of
// Vec3::cross, in its order). For recursions that accumulate in place (compute_step_dynamics):
// a Vec6 built from 3-vector halves or single coefficients and then read as 16-byte pairs waits on
// store forwarding, which made the world-frame RNEA 12 % slower.
inline void add_cross_motion(const Scalar* m1, const Scalar* m2, Scalar* out) {
  const Scalar vx = m1[0], vy = m1[1], vz = m1[2], wx = m1[3], wy = m1[4], wz = m1[5];
  out[0] += (wy * m2[2] - wz * m2[1]) + (vy * m2[5] - vz * m2[4]);
  out[1] += (wz * m2[0] - wx * m2[2]) + (vz * m2[3] - vx * m2[5]);
  out[2] += (wx * m2[1] - wy * m2[0]) + (vx * m2[4] - vy * m2[3]);
  out[3] += wy * m2[5] - wz * m2[4];
  out[4] += wz * m2[3] - wx * m2[5];
  out[5] += wx * m2[4] - wy * m2[3];
}

// out += m x* f, the force cross product (RBDA eq. 2.32, reordered): [w x f_lin; w x f_ang +
// v x f_lin] for m = [v; w] (raw 6-vectors, as add_cross_motion).
inline void add_cross_force(const Scalar* m, const Scalar* f, Scalar* out) {
  const Scalar vx = m[0], vy = m[1], vz = m[2], wx = m[3], wy = m[4], wz = m[5];
  out[0] += wy * f[2] - wz * f[1];
  out[1] += wz * f[0] - wx * f[2];
  out[2] += wx * f[1] - wy * f[0];
  out[3] += (wy * f[5] - wz * f[4]) + (vy * f[2] - vz * f[1]);
  out[4] += (wz * f[3] - wx * f[5]) + (vz * f[0] - vx * f[2]);
  out[5] += (wx * f[4] - wy * f[3]) + (vx * f[1] - vy * f[0]);
}

// m1 x m2 and m x* f as values
inline Vec6 cross_motion(const Vec6& m1, const Vec6& m2) {
  Vec6 r = Vec6::Zero();
  add_cross_motion(m1.data(), m2.data(), r.data());
  return r;
}
inline Vec6 cross_force(const Vec6& m, const Vec6& f) {
  Vec6 r = Vec6::Zero();
  add_cross_force(m.data(), f.data(), r.data());
  return r;
}

// A rigid transform X_AB = (R, p): R rotates B coordinates into A, p is B's origin in A.
struct SE3 {
  Mat3 R = Mat3::Identity();
  Vec3 p = Vec3::Zero();

  SE3() = default;
  SE3(const Mat3& R_, const Vec3& p_) : R(R_), p(p_) {}
  static SE3 Identity() { return SE3(); }

  SE3 operator*(const SE3& X_BC) const { return SE3(R * X_BC.R, R * X_BC.p + p); }
  SE3 inverse() const { return SE3(R.transpose(), -(R.transpose() * p)); }
  Vec3 act_point(const Vec3& p_B) const { return R * p_B + p; }

  // Motion expressed in B -> expressed in A (at A's origin).
  Vec6 act_motion(const Vec6& m_B) const {
    Vec6 r;
    r.tail<3>() = R * m_B.tail<3>();
    r.head<3>() = R * m_B.head<3>() + p.cross(r.tail<3>());
    return r;
  }
  // Motion expressed in A -> expressed in B.
  Vec6 inv_act_motion(const Vec6& m_A) const {
    Vec6 r;
    r.tail<3>() = R.transpose() * m_A.tail<3>();
    r.head<3>() = R.transpose() * (m_A.head<3>() - p.cross(m_A.tail<3>()));
    return r;
  }
  // Force expressed in B -> expressed in A (moment about A's origin).
  Vec6 act_force(const Vec6& f_B) const {
    Vec6 r;
    r.head<3>() = R * f_B.head<3>();
    r.tail<3>() = R * f_B.tail<3>() + p.cross(r.head<3>());
    return r;
  }
  // Force expressed in A -> expressed in B.
  Vec6 inv_act_force(const Vec6& f_A) const {
    Vec6 r;
    r.head<3>() = R.transpose() * f_A.head<3>();
    r.tail<3>() = R.transpose() * (f_A.tail<3>() - p.cross(f_A.head<3>()));
    return r;
  }
  // 6x6 matrix of act_motion (Plucker transform B -> A, motion).
  Mat6 motion_matrix() const {
    Mat6 X;
    X.topLeftCorner<3, 3>() = R;
    X.topRightCorner<3, 3>() = skew(p) * R;
    X.bottomLeftCorner<3, 3>().setZero();
    X.bottomRightCorner<3, 3>() = R;
    return X;
  }
  bool isApprox(const SE3& o, Scalar tol = 1e-12) const {
    return R.isApprox(o.R, tol) && (p - o.p).norm() <= tol * (1 + p.norm());
  }
};

// Rigid-body spatial inertia: mass m, centre of mass c and rotational inertia Ic about the
// centre of mass, all in the body frame (RBDA eq. 2.62-2.63).
struct Inertia {
  Scalar m = 0;
  Vec3 c = Vec3::Zero();
  Mat3 Ic = Mat3::Zero();

  Inertia() = default;
  Inertia(Scalar m_, const Vec3& c_, const Mat3& Ic_) : m(m_), c(c_), Ic(Ic_) {}
  static Inertia Zero() { return Inertia(); }

  // Momentum h = I v of a body moving with twist v (both in the body frame).
  Vec6 apply(const Vec6& v) const {
    Vec6 h;
    const Vec3 w = v.tail<3>();
    h.head<3>() = m * (v.head<3>() - c.cross(w));
    h.tail<3>() = Ic * w + c.cross(h.head<3>());
    return h;
  }
  // Rotational inertia about the frame origin.
  Mat3 I_origin() const { return Ic - m * skew(c) * skew(c); }
  Mat6 matrix() const {
    Mat6 M;
    const Mat3 C = skew(c);
    M.topLeftCorner<3, 3>() = m * Mat3::Identity();
    M.topRightCorner<3, 3>() = -m * C;
    M.bottomLeftCorner<3, 3>() = m * C;
    M.bottomRightCorner<3, 3>() = Ic - m * C * C;
    return M;
  }
  // The same inertia expressed in frame A, given X_AB (this inertia is in B).
  Inertia transformed(const SE3& X_AB) const {
    return Inertia(m, X_AB.act_point(c), X_AB.R * Ic * X_AB.R.transpose());
  }
  // Sum of two rigid bodies expressed in the same frame (parallel-axis theorem).
  Inertia operator+(const Inertia& o) const {
    const Scalar mt = m + o.m;
    if (mt <= 0) return Inertia(0, Vec3::Zero(), Ic + o.Ic);
    const Vec3 ct = (m * c + o.m * o.c) / mt;
    const Vec3 d1 = c - ct, d2 = o.c - ct;
    const Mat3 D1 = skew(d1), D2 = skew(d2);
    return Inertia(mt, ct, Ic - m * D1 * D1 + o.Ic - o.m * D2 * D2);
  }
};

// Rotation from roll-pitch-yaw (URDF convention: R = Rz(yaw) Ry(pitch) Rx(roll)).
inline Mat3 rpy_to_matrix(Scalar roll, Scalar pitch, Scalar yaw) {
  return (Eigen::AngleAxis<Scalar>(yaw, Vec3::UnitZ()) * Eigen::AngleAxis<Scalar>(pitch, Vec3::UnitY()) *
          Eigen::AngleAxis<Scalar>(roll, Vec3::UnitX()))
      .toRotationMatrix();
}

// Quaternion exponential: rotation by the rotation vector phi (angle |phi| about phi/|phi|).
inline Quat quat_exp(const Vec3& phi) {
  const Scalar theta = phi.norm();
  if (theta < 1e-8) {
    // Taylor expansion keeps the map smooth at zero.
    Quat q(1 - theta * theta / 8, 0.5 * phi.x(), 0.5 * phi.y(), 0.5 * phi.z());
    q.normalize();
    return q;
  }
  Scalar sh, ch;
  sincos(0.5 * theta, sh, ch);
  const Scalar s = sh / theta;
  return Quat(ch, s * phi.x(), s * phi.y(), s * phi.z());
}

// Rotation vector of a unit quaternion (inverse of quat_exp, angle in [0, pi]).
inline Vec3 quat_log(Quat q) {
  if (q.w() < 0) q.coeffs() = -q.coeffs();
  const Vec3 v = q.vec();
  const Scalar s = v.norm();
  if (s < 1e-8) return 2.0 * v / q.w();
  return 2.0 * std::atan2(s, q.w()) * v / s;
}

}  // namespace impulse
