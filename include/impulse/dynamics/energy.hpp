// Energy, centre of mass and momentum of the whole system (Featherstone, RBDA 2008, sec. 2.13-2.14:
// kinetic energy T = 1/2 sum_i v_i . I_i v_i (eq. 2.66) = 1/2 u^T M u, momentum h_i = I_i v_i
// (eq. 2.65); potential energy V = -sum_i m_i g . c_i (sec. 5.3)).
//
// Every function runs forward_kinematics itself (positions, or positions and velocities).
// Momentum convention: [linear momentum; angular momentum about the WORLD origin], both in the
// world frame. The angular momentum about the centre of mass is k_G = k_O - com x p_lin.
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// T = 1/2 u^T M(q) u (body inertias only: the armature of M is not included). Writes data.kinetic.
Scalar kinetic_energy(const Model& model, Data& data, const VecXcref& q, const VecXcref& u);

// V = -sum_i m_i g . c_i (zero at the world origin). Writes data.potential.
Scalar potential_energy(const Model& model, Data& data, const VecXcref& q);

// Centre of mass in the world frame. Returns data.com.
const Vec3& center_of_mass(const Model& model, Data& data, const VecXcref& q);
// Centre of mass and its velocity (data.com, data.vcom). Returns data.com.
const Vec3& center_of_mass(const Model& model, Data& data, const VecXcref& q, const VecXcref& u);

// Spatial momentum [p; k_O] in the world frame (see above). Returns data.momentum.
const Vec6& momentum(const Model& model, Data& data, const VecXcref& q, const VecXcref& u);

}  // namespace impulse
