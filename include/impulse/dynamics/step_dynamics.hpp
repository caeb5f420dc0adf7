// Fused dynamics of one time step: the nonlinear effects (RNEA, RBDA Table 5.1 with udot = 0),
// the joint-space inertia matrix (CRBA, RBDA Table 6.2) and the joint Jacobians (RBDA sec. 4.1.5)
// from a single forward-kinematics pass. The separate calls
//   rnea(q, u, 0, f_ext); crba(q); compute_joint_jacobians(q)
// each recompute the poses; here one forward loop computes the poses, each body's world-frame
// subspace and inertia (which CRBA needs) and, with those, the RNEA recursion in world
// coordinates, which then needs no per-body coordinate transforms. M, J and the poses are those
// of the separate calls bit for bit; h equals nonlinear_effects(q, u) (the body-frame recursion)
// to round-off.
//
// Writes: data.liMi, data.oMi, data.h, data.J, data.oYcrb, data.F, data.M (both triangles,
// including the armature; as crba), and as scratch data.v, data.a, data.f in world coordinates
// about the world origin (not the body-frame values rnea() leaves there).
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// data.h = C(q, u) u + g(q) - sum_i J_i^T f_ext,i (f_ext as in rnea.hpp, optional),
// data.M = M(q), data.J = joint Jacobians. Returns data.h.
const VecX& compute_step_dynamics(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                  const Vec6Vector* f_ext = nullptr);

// data.M = M(q) again (with data.J, data.oYcrb, data.F) from the poses of the last
// compute_step_dynamics call, for a caller that has overwritten M (ltdl_factor factors it in
// place) and needs it at the same q: CRBA alone, no second kinematics or RNEA pass. data.h and
// the poses are left as they are. Bit-identical to the M of that call.
const MatX& recompute_step_mass_matrix(const Model& model, Data& data);

// out += sum_i J_i^T f_ext,i: the generalized force of body-frame external wrenches (about each
// body's origin, as rnea.hpp takes them) alone, from the poses (data.oMi) and world-frame joint
// subspaces (data.J) that the last compute_step_dynamics or compute_free_body_dynamics call left:
// each wrench, moved to the world frame about the world origin, acts on the dofs of its body's
// path to the root. O(depth) per body with a non-zero wrench (zero entries are skipped).
void add_external_generalized_force(const Model& model, const Data& data, const Vec6Vector& f_ext, VecXref out);

}  // namespace impulse
