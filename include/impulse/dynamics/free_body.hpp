// Closed-form dynamics of a free rigid body (Model::is_free_body: one body on a floating joint),
// for the stepper's piles, stacks and dropped objects: the quantities compute_step_dynamics
// produces, without the general recursions.
//
// With u = (v_O, w): the world-frame velocity of the body-frame origin O and the angular velocity,
// c = R c_B the centre of mass relative to O and I_c = R I_cB R^T its rotational inertia about the
// centre of mass (world axes), the rigid-body inertia at O (RBDA eq. 2.62-2.63, in world axes) and
// the Newton-Euler equations about O (RBDA sec. 2.14) give
//   M = [[m 1, -m [c]], [m [c], I_O]],  I_O = I_c + m [c]^T [c],
//   h = [m w x (w x c) - m g; w x (I_O w) - m c x g] - [R f_lin; R f_ang]  (f_ext, body frame),
// the same M(q) and h(q, u) as CRBA and RNEA compute for this joint (the terms in v_O cancel by
// the Jacobi identity), with about a third of their arithmetic: CRBA forms M as J^T (I J) about
// the world origin and RNEA passes through the body frame. The results agree with
// compute_step_dynamics to round-off (tests/dynamics/test_free_body.cpp), not bit for bit.
//
// Writes: data.liMi, data.oMi (the same code as the general kinematics), data.J (the floating
// joint's world-frame subspace, as CRBA writes it), data.h and data.M (both triangles, with the
// armature). Unlike compute_step_dynamics it leaves data.v, data.a, data.f, data.oYcrb and data.F
// as they were.
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// data.h = C(q, u) u + g(q) - J^T f_ext (f_ext: one body-frame wrench, optional), data.M = M(q),
// data.J. Requires model.is_free_body(). Returns data.h.
const VecX& compute_free_body_dynamics(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                       const Vec6Vector* f_ext = nullptr);

}  // namespace impulse
