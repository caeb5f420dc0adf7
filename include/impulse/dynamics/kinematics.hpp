// Forward kinematics (Featherstone, RBDA 2008, sec. 4.1-4.2 and Table 5.1 first loop):
//   X_{lambda(i), i} = X_PJ,i X_J,i(q_i)          (eq. 4.1 composed with the joint model)
//   X_W,i = X_W,lambda(i) X_{lambda(i), i}
//   v_i = X_{i, lambda(i)} v_lambda(i) + S_i u_i  (eq. 5.7 / Table 5.1)
// The floating root uses S = diag(R^T, R^T) so v_0 is the body-frame twist of the base given the
// public world-frame u = [v; w] (model/joint.hpp).
//
// Writes: data.liMi, data.oMi (positions); data.v (body-frame twists, with u).
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// Poses of all bodies: data.liMi, data.oMi. Returns data.oMi.
const SE3Vector& forward_kinematics(const Model& model, Data& data, const VecXcref& q);

// Poses and body-frame twists (data.v). Returns data.oMi.
const SE3Vector& forward_kinematics(const Model& model, Data& data, const VecXcref& q, const VecXcref& u);

// World pose X_WF of a model frame, from data.oMi (run forward_kinematics first).
SE3 frame_placement(const Model& model, const Data& data, Index frame_id);

// World position of the point p_B (body-frame coordinates) fixed on `body`, from data.oMi.
Vec3 point_position(const Data& data, Index body, const Vec3& p_B);

// World-frame velocity of the point p_B fixed on `body`, from data.oMi and data.v.
Vec3 point_velocity(const Data& data, Index body, const Vec3& p_B);

// World-frame angular velocity of `body`, from data.oMi and data.v.
Vec3 body_angular_velocity(const Data& data, Index body);

}  // namespace impulse
