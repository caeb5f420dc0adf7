#include "impulse/model/joint.hpp"

#include <cmath>

namespace impulse {

const char* joint_type_name(JointType t) {
  switch (t) {
    case JointType::Fixed: return "fixed";
    case JointType::Revolute: return "revolute";
    case JointType::Prismatic: return "prismatic";
    case JointType::Spherical: return "spherical";
    case JointType::Floating: return "floating";
  }
  return "unknown";
}

int joint_nq(JointType t) {
  switch (t) {
    case JointType::Fixed: return 0;
    case JointType::Revolute:
    case JointType::Prismatic: return 1;
    case JointType::Spherical: return 4;
    case JointType::Floating: return 7;
  }
  return 0;
}

int joint_nv(JointType t) {
  switch (t) {
    case JointType::Fixed: return 0;
    case JointType::Revolute:
    case JointType::Prismatic: return 1;
    case JointType::Spherical: return 3;
    case JointType::Floating: return 6;
  }
  return 0;
}

SE3 joint_transform(JointType t, const Vec3& axis, const Scalar* q) {
  switch (t) {
    case JointType::Fixed: return SE3();
    case JointType::Revolute: return SE3(Eigen::AngleAxis<Scalar>(q[0], axis).toRotationMatrix(), Vec3::Zero());
    case JointType::Prismatic: return SE3(Mat3::Identity(), q[0] * axis);
    case JointType::Spherical:
      return SE3(Quat(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix(), Vec3::Zero());
    case JointType::Floating:
      return SE3(Quat(q[3], q[4], q[5], q[6]).normalized().toRotationMatrix(), Vec3(q[0], q[1], q[2]));
  }
  return SE3();
}

void joint_integrate(JointType t, const Scalar* q, const Scalar* u, Scalar dt, Scalar* q_out) {
  switch (t) {
    case JointType::Fixed: return;
    case JointType::Revolute:
    case JointType::Prismatic: q_out[0] = q[0] + dt * u[0]; return;
    case JointType::Spherical: {
      // u is the body-frame angular velocity: R+ = R exp(dt [w]).
      const Quat r = (Quat(q[0], q[1], q[2], q[3]) * quat_exp(dt * Vec3(u[0], u[1], u[2]))).normalized();
      q_out[0] = r.w(); q_out[1] = r.x(); q_out[2] = r.y(); q_out[3] = r.z();
      return;
    }
    case JointType::Floating: {
      // u = [v; w] in the world frame: p+ = p + dt v, R+ = exp(dt [w]) R.
      const Quat r = (quat_exp(dt * Vec3(u[3], u[4], u[5])) * Quat(q[3], q[4], q[5], q[6])).normalized();
      for (int k = 0; k < 3; ++k) q_out[k] = q[k] + dt * u[k];
      q_out[3] = r.w(); q_out[4] = r.x(); q_out[5] = r.y(); q_out[6] = r.z();
      return;
    }
  }
}

void joint_difference(JointType t, const Scalar* q0, const Scalar* q1, Scalar* u) {
  switch (t) {
    case JointType::Fixed: return;
    case JointType::Revolute:
    case JointType::Prismatic: u[0] = q1[0] - q0[0]; return;
    case JointType::Spherical: {
      // R1 = R0 exp([w]): w = log(R0^T R1), body frame
      const Quat a = Quat(q0[0], q0[1], q0[2], q0[3]).normalized(), b = Quat(q1[0], q1[1], q1[2], q1[3]).normalized();
      Eigen::Map<Vec3> w(u);
      w = quat_log(a.conjugate() * b);
      return;
    }
    case JointType::Floating: {
      // p1 = p0 + v, R1 = exp([w]) R0: w = log(R1 R0^T), world frame
      const Quat a = Quat(q0[3], q0[4], q0[5], q0[6]).normalized(), b = Quat(q1[3], q1[4], q1[5], q1[6]).normalized();
      for (int k = 0; k < 3; ++k) u[k] = q1[k] - q0[k];
      Eigen::Map<Vec3> w(u + 3);
      w = quat_log(b * a.conjugate());
      return;
    }
  }
}

void joint_neutral(JointType t, Scalar* q) {
  switch (t) {
    case JointType::Fixed: return;
    case JointType::Revolute:
    case JointType::Prismatic: q[0] = 0; return;
    case JointType::Spherical: q[0] = 1; q[1] = q[2] = q[3] = 0; return;
    case JointType::Floating:
      q[0] = q[1] = q[2] = 0; q[3] = 1; q[4] = q[5] = q[6] = 0;
      return;
  }
}

}  // namespace impulse
