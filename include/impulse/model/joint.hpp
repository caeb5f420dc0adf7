// Joint models: configuration layout, joint transform X_J(q), motion subspace S and the
// configuration-space integration q (+) u dt (RBDA ch. 4, Table 4.1).
//
// The joint frame J of body i is placed in the parent body frame at joint_placement[i] when
// q = 0; the body frame B of body i is X_JB = X_J(q) relative to it (URDF: child link frame =
// joint frame at zero). Velocities of bodies are [linear; angular] twists in body coordinates.
//
// Generalized velocity u per joint (docs/conventions.md):
//   revolute, prismatic   1 coordinate, 1 velocity (joint rate along `axis`, in J)
//   spherical             q = [qw qx qy qz] (rotation of B in J), u = angular velocity of B
//                         relative to J, expressed in B
//   floating              q = [x y z qw qx qy qz] (pose of B in the parent frame, the world),
//                         u = [v; w]: velocity of the body origin and angular velocity, both in
//                         the WORLD frame (RaiSim convention). This is the one place where the
//                         public convention meets the body-frame algorithms: S = diag(R^T, R^T)
//                         maps u to the body twist, and c_J = S-dot u = [-R^T (w x v); 0].
#pragma once

#include <string>

#include "impulse/core/types.hpp"
#include "impulse/spatial/spatial.hpp"

namespace impulse {

enum class JointType { Fixed, Revolute, Prismatic, Spherical, Floating };

const char* joint_type_name(JointType t);
int joint_nq(JointType t);
int joint_nv(JointType t);

// X_JB: pose of the body frame in the joint frame for the joint coordinates q (size joint_nq).
SE3 joint_transform(JointType t, const Vec3& axis, const Scalar* q);

// q_out = q (+) u dt for one joint (q_out may alias q). Quaternions are advanced by the exponential
// map: world-frame w for floating (left product), body-frame w for spherical (right product).
void joint_integrate(JointType t, const Scalar* q, const Scalar* u, Scalar dt, Scalar* q_out);

// u such that q1 = q0 (+) u (dt = 1) for one joint: the inverse of joint_integrate (the rotation
// vector of the shortest rotation, angle in [0, pi], for the quaternions).
void joint_difference(JointType t, const Scalar* q0, const Scalar* q1, Scalar* u);

// Neutral configuration of one joint (zeros, identity quaternion).
void joint_neutral(JointType t, Scalar* q);

}  // namespace impulse
