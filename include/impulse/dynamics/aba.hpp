// Articulated-body algorithm for forward dynamics udot = M^-1 (tau - h) (Featherstone, RBDA
// 2008, sec. 7.3, Table 7.1), in the world-frame form (all spatial quantities in world
// coordinates at the world origin, as in Pinocchio 3), so articulated inertias are summed
// without the 6x6 transforms of the body-frame version:
//   pass 1 (i = 0..nb-1):  v_i = v_lambda + S_i u_i ,  c_i = S-dot_i u_i = v_i x S_i u_i
//                          I^A_i = I_i ,  p^A_i = v_i x* I_i v_i - f_ext,i              (eq. 7.37-7.38)
//   pass 2 (i = nb-1..0):  U_i = I^A_i S_i ,  D_i = S_i^T U_i + armature_i ,  u_i = tau_i - S_i^T p^A_i
//                          I^a = I^A_i - U_i D_i^-1 U_i^T ,  p^a = p^A_i + I^a c_i + U_i D_i^-1 u_i
//                          I^A_lambda += I^a ,  p^A_lambda += p^a                        (eq. 7.39-7.43)
//   pass 3 (i = 0..nb-1):  a'_i = a_lambda + c_i ,  udot_i = D_i^-1 (u_i - U_i^T a'_i)
//                          a_i = a'_i + S_i udot_i                                        (eq. 7.44-7.46)
// with a_world = -g (gravity as a base acceleration, RBDA sec. 5.3). Here S_i is the world-frame
// subspace (data.J). Floating root: S_0 = [[I, [p]x], [0, I]] for the public u = [v; w] and
// c_0 = [v x w; 0] (the world-frame image of c_J = [-R^T (w x v); 0], model/joint.hpp).
//
// External forces f_ext (optional): one wrench per body (size nb), [force; moment about the body
// origin] in the BODY frame, acting on the body (same as rnea).
//
// Writes: data.liMi, data.oMi, data.J, data.oinertia, data.ov, data.oc, data.oa, data.opA,
//         data.oYaba, data.U, data.Dinv_joint, data.u_aba, data.udot.
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// Forward dynamics: udot such that M udot + h = tau + sum_i J_i^T f_ext,i. Returns data.udot.
const VecX& aba(const Model& model, Data& data, const VecXcref& q, const VecXcref& u, const VecXcref& tau,
                const Vec6Vector* f_ext = nullptr);

}  // namespace impulse
