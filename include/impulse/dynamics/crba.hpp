// Composite-rigid-body algorithm for the joint-space inertia matrix M(q) (Featherstone, RBDA
// 2008, sec. 6.2, Table 6.2), world-frame variant:
//   I^c_i = I_i + sum_{j in children(i)} I^c_j          (eq. 6.7; no transforms in the world frame)
//   F_i = I^c_i S_i ,   M_ij = S_j^T F_i for every ancestor j of i (and M_ji = M_ij^T)  (eq. 6.8-6.9)
// where S_i are the world-frame motion subspaces (data.J). M only has nonzeros where one dof is
// an ancestor of the other (branch-induced sparsity, sec. 6.5); the other entries stay zero.
// The armature (rotor inertia) of every dof is added to the diagonal.
//
// Writes: data.liMi, data.oMi, data.J, data.oYcrb, data.F, data.M (both triangles).
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// Joint-space inertia matrix (full symmetric, nv x nv, including armature). Returns data.M.
const MatX& crba(const Model& model, Data& data, const VecXcref& q);

}  // namespace impulse
