// Kinematic Jacobians in the world frame (Featherstone, RBDA 2008, sec. 4.1.5 and eq. 4.6-4.7:
// the body Jacobian is the set of motion subspaces S_j of the joints that support the body).
//
// Joint Jacobians: data.J (6 x nv), column k = world-frame motion subspace of dof k, i.e. the
// spatial velocity [velocity of the point at the world origin; angular velocity] produced by
// u_k = 1. For a point P on body b, with p = its world position:
//   J_P[:, k] = [J_k,lin + J_k,ang x p; J_k,ang] for the dofs k supporting b, 0 otherwise,
// so that [v_P; w_b] = J_P u, both in the WORLD frame (Pinocchio's LOCAL_WORLD_ALIGNED). The
// floating-base columns come directly in the public u = [v; w] coordinates (model/joint.hpp).
//
// Fast path for several points (e.g. 4 feet): compute_joint_jacobians once, then point_jacobian
// / frame_jacobian per point, which only visit the branch of the point's body.
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// Poses (data.liMi, data.oMi) and the joint Jacobians data.J (6 x nv). Returns data.J.
const Mat6X& compute_joint_jacobians(const Model& model, Data& data, const VecXcref& q);

// After compute_joint_jacobians: Jacobian of the point p_B (body coordinates) fixed on `body`.
// J6 must be 6 x nv: [linear velocity of the point; angular velocity of the body], world frame.
void frame_jacobian(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref J6);
// J3 must be 3 x nv: linear velocity of the point, world frame.
void point_jacobian(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref J3);
// Branch-compact point Jacobian for tree-sparse consumers (the Delassus assembler): the dofs
// k_0 < k_1 < ... < k_{n-1} supporting `body` (root first) go to dofs[0..n-1], and the 3 values
// out[3t .. 3t+2] = R (J_k,lin + J_k,ang x p) of column k = k_t, with p a WORLD point fixed on
// body and R any 3x3 matrix (e.g. a signed, transposed contact frame). The other columns of the
// point Jacobian are zero. Returns n; dofs and out need room for the longest branch (nv, 3 nv).
Index point_jacobian_branch(const Model& model, const Data& data, Index body, const Vec3& p, const Mat3& R,
                            Index* dofs, Scalar* out);
// The same with row 2 of R alone (a frictionless contact's normal row, contact/delassus.hpp):
// out[3t + 2] as point_jacobian_branch computes it (the same bits), out[3t] = out[3t + 1] = 0.
Index point_jacobian_branch_row(const Model& model, const Data& data, Index body, const Vec3& p, const Mat3& R,
                                Index* dofs, Scalar* out);
// The dofs of point_jacobian_branch's path of `body` alone (dofs[0..n-1], in its order), without
// the Jacobian: for a consumer that computes the columns elsewhere (the batched lanes). Returns n.
Index point_jacobian_branch_dofs(const Model& model, const Data& data, Index body, Index* dofs);
// Jacobian of a model frame (its origin and its body's angular velocity), 6 x nv.
void frame_jacobian(const Model& model, const Data& data, Index frame_id, MatXref J6);

// Stand-alone (runs the kinematics): into data.Jframe / data.Jpoint, returned by const ref.
const Mat6X& frame_jacobian(const Model& model, Data& data, const VecXcref& q, Index body, const Vec3& p_B);
const Mat3X& point_jacobian(const Model& model, Data& data, const VecXcref& q, Index body, const Vec3& p_B);

}  // namespace impulse
