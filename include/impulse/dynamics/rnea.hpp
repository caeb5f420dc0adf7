// Recursive Newton-Euler inverse dynamics (Featherstone, RBDA 2008, Table 5.1, eq. 5.7-5.9),
// body-frame variant. Gravity enters as a fictitious base acceleration a_0 = -g (RBDA sec. 5.3),
// so data.a holds accelerations minus gravity.
//
//   forward:  v_i = iX_lambda v_lambda + S_i u_i
//             a_i = iX_lambda a_lambda + S_i udot_i + c_J,i + v_i x S_i u_i
//             f_i = I_i a_i + v_i x* I_i v_i - f_ext,i
//   backward: tau_i = S_i^T f_i ,   f_lambda += lambda X*_i f_i
//   tau += armature .* udot (rotor inertia, consistent with M from crba)
// Floating root: S = diag(R^T, R^T), c_J = [-R^T (w x v); 0] (model/joint.hpp), so tau_0 is the
// base wrench [force; moment about the base origin] in the world frame.
//
// External forces f_ext (optional): one wrench per body (size nb), [force; moment about the body
// origin] in the BODY frame, acting on the body.
//
// Writes: data.liMi, data.oMi, data.v, data.a, data.f, data.tau (rnea) or data.h.
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// tau = M(q) udot + C(q, u) u + g(q) - sum_i J_i^T f_ext,i. Returns data.tau.
const VecX& rnea(const Model& model, Data& data, const VecXcref& q, const VecXcref& u, const VecXcref& udot,
                 const Vec6Vector* f_ext = nullptr);

// h = C(q, u) u + g(q) (rnea with udot = 0). Returns data.h.
const VecX& nonlinear_effects(const Model& model, Data& data, const VecXcref& q, const VecXcref& u);

// g(q) (rnea with u = udot = 0). Returns data.h.
const VecX& gravity_torques(const Model& model, Data& data, const VecXcref& q);

}  // namespace impulse
