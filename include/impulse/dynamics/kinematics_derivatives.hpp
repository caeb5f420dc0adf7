// Analytic derivatives of kinematic quantities, of the centre of mass and of the energies
// (Carpentier & Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms", RSS 2018,
// sec. IV: the velocity and acceleration recursions of Alg. 1; Pinocchio's
// computeForwardKinematicsDerivatives / getFrameVelocityDerivatives / getFrameAccelerationDerivatives
// / getFrameJacobianTimeVariation), in the world frame like rnea_derivatives.hpp.
//
// Derivatives with respect to q are taken in the tangent space, d f(q (+) dq) / d dq at dq = 0
// ((+) = Model::integrate), so they have nv columns.
//
// Frames: frame quantities use the convention of frame_jacobian (jacobian.hpp): a frame's velocity
// is [v_P; w], the velocity of its origin P and the angular velocity of its body, both in world
// coordinates (Pinocchio's LOCAL_WORLD_ALIGNED), and J_F u = [v_P; w]. Its acceleration is the
// CLASSICAL one, the time derivative of that velocity: [a_P; wdot] = J_F udot + Jdot_F u, with
// a_P the acceleration of the material point P (what an accelerometer at P reads, minus gravity).
// The placement's derivative is the frame Jacobian itself: p_F(q (+) dq) = p_F + J_F,lin dq and
// R_F(q (+) dq) = exp(J_F,ang dq) R_F to first order (jacobian.hpp), so no separate function.
//
// Equations. For dof j with world-frame subspace column s = S_j (data.J), lambda the parent of
// its body and every body k it supports (V_k twist, A_k spatial acceleration at the world origin,
// world frame, without gravity), perturbing q_j moves the subtree of j by the twist s dq_j and
//   dV_k/dq_j = s x V_k + beta ,               beta  = V_lambda x s
//   dA_k/dq_j = s x A_k + alpha + beta x V_k , alpha = A_lambda x s + V_lambda x beta
//   dV_k/du_j = s ,  dA_k/du_j = s x V_k + gamma ,  gamma = (V_lambda + V_j) x s ,  dA_k/dudot_j = s
// (V_j the twist of the joint's own body), and S_j changes in time as Sdot_j = V_j x s. The
// floating root (public u = [v; w], S_0 = [[1, [p]x], [0, 1]] not body-fixed) has instead
//   beta = [dv x w; 0] - s x V_0 , alpha = [dv x wdot; 0] - s x A_0 + V_0 x beta,
//   gamma = dc_0 - s x V_0 (c_0 = [v x w; 0]) , Sdot_0 u_0 = c_0
// with dv the translation part of the unit dq_j (rnea_derivatives.hpp derives them). A frame
// point P on body b (world position p) then has v_P = V.lin + w x p, a_P = A.lin + A.ang x p +
// w x v_P and dp/dq_j = s.lin + s.ang x p, whose derivatives follow by the product rule.
//
// Centre of mass and energies, with the subtree sums of body i (over bodies k of subtree(i)):
// mass m_i, first moment h_i = sum m_k c_k, momentum H_i = sum I_k V_k (world frame):
//   d com / dq_j   = (m_i s.lin + s.ang x h_i) / m                         (= J_com, column j)
//   d vcom / dq_j  = (s.ang x H_i.lin + (I^c_i beta).lin) / m ,  d vcom / du = J_com
//   Jdot_com, col j = (m_i Sdot.lin + Sdot.ang x h_i + s.ang x H_i.lin) / m
//   dT / dq_j = H_i . beta ,  dT / du_j = s . H_i     (T = 1/2 sum V.I V, so dT/du = M u)
//   dV / dq_j = -g . (m_i s.lin + s.ang x h_i) = -(m J_com^T g)_j   (the gravity torque)
// for dof j of body i: the body-fixed parts of each quantity cancel (I_k and V_k move covariantly
// with the subtree), and only the non-covariant part beta of the velocity is left.
//
// Writes: data.liMi, data.oMi, data.J, data.ov (twists), data.oa (spatial accelerations WITHOUT
// gravity, unlike aba) for compute_kinematics_derivatives; the centre-of-mass and energy functions
// also data.oinertia, data.oYcrb (subtree inertias), data.of (subtree momenta H_i), data.com,
// data.vcom, data.kinetic, data.potential. Sizes are checked (InvalidArgument, one line).
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// The forward pass the frame derivatives read: poses, S (data.J), twists data.ov and spatial
// accelerations data.oa (without gravity) for the state (q, u, udot).
void compute_kinematics_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                    const VecXcref& udot);

// After compute_kinematics_derivatives. 6 x nv each: d[v_P; w]/dq and d[v_P; w]/du (= J_F).
void frame_velocity_derivatives(const Model& model, const Data& data, Index frame_id, MatXref dv_dq, MatXref dv_du);
// d[a_P; wdot]/dq, /du, /dudot (= J_F) of the classical acceleration, 6 x nv each.
void frame_acceleration_derivatives(const Model& model, const Data& data, Index frame_id, MatXref da_dq,
                                    MatXref da_du, MatXref da_dudot);
// dJ_F/dt (6 x nv), so that [a_P; wdot] = J_F udot + Jdot_F u. Reads only velocities.
void frame_jacobian_time_variation(const Model& model, const Data& data, Index frame_id, MatXref dJ);
// The same three for the point p_B (body coordinates) fixed on `body`.
void point_velocity_derivatives(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref dv_dq,
                                MatXref dv_du);
void point_acceleration_derivatives(const Model& model, const Data& data, Index body, const Vec3& p_B,
                                    MatXref da_dq, MatXref da_du, MatXref da_dudot);
void point_jacobian_time_variation(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref dJ);

// Centre-of-mass Jacobian J_com = d com / dq (3 x nv); also data.com.
void center_of_mass_jacobian(const Model& model, Data& data, const VecXcref& q, MatXref Jcom);
// d vcom / dq and d vcom / du (= J_com), 3 x nv each, and Jdot_com (3 x nv, vcom-dot = J_com udot
// + Jdot_com u); also data.com, data.vcom.
void center_of_mass_velocity_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                         MatXref dvcom_dq, MatXref dvcom_du, MatXref Jcom_dot);

// Gradients (nv) of T = kinetic_energy(q, u): dT/dq (tangent space) and dT/du = M u (body
// inertias, no armature, as kinetic_energy). Also data.kinetic.
void kinetic_energy_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                VecXref dT_dq, VecXref dT_du);
// Gradient (nv) of V = potential_energy(q): the gravity torque g(q) of rnea(q, 0, 0) without the
// armature. Also data.potential.
void potential_energy_derivatives(const Model& model, Data& data, const VecXcref& q, VecXref dV_dq);

}  // namespace impulse
