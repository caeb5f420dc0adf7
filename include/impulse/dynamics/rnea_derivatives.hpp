// Analytic derivatives of inverse and forward dynamics (Carpentier & Mansard, "Analytical
// Derivatives of Rigid Body Dynamics Algorithms", RSS 2018: Alg. 1 for RNEA, and ABA's
// derivatives from RNEA's as the paper does), in the world frame (all spatial quantities in world coordinates at the world origin, as aba.hpp).
//
// Derivatives with respect to q are taken in the tangent space of the configuration manifold:
//   d tau / dq = d tau(q (+) dq) / d dq at dq = 0,  with (+) = Model::integrate (dt = 1),
// so they have nv columns. Perturbing dof j of a joint moves every body of its subtree by the
// world-frame twist xi = S_j dq_j (S_j = column j of data.J): for revolute, prismatic and
// spherical joints this is exact; for the floating root with the public world-frame u = [v; w],
// q (+) dq moves the base by xi = [dv + p x dw; dw] = S_0 dq as well.
//
// Per body k (world frame): S_k, v_k, a_k (minus gravity: a_world = -g), I_k, the momentum
// h_k = I_k v_k and f_k = I_k a_k + v_k x* h_k - f_ext,k. Every body-fixed quantity moves
// covariantly with xi (dS = xi x S, dI = xi x* I - I xi x), and so would v_k, a_k and f_k if the
// parent's velocity and acceleration moved with the subtree; they do not, and the difference is
//   dv_k = xi x v_k + beta ,  da_k = xi x a_k + alpha + beta x v_k   for k in subtree(j), with
//   beta = v_lambda x s ,  alpha = a_lambda x s + v_lambda x beta     (s = S_j e_j, lambda = parent)
// (the paper's recursions for dv/dq and da/dq, written relative to the covariant part). Then
//   df_k = xi x* f_k + I_k alpha + B_k beta ,  B_k = v_k x* I_k - I_k v_k x + (h_k x-bar)
// where (h x-bar) beta = beta x* h (B_k is the paper's "B" term, Pinocchio's doYcrb),
// and with the subtree sums I^c_k, B^c_k and the composite force F_k = sum_{subtree(k)} f:
//   d tau_k / dq_j = S_k^T (I^c_k alpha + B^c_k beta)                   k in subtree(j) (j too)
//                  = S_k^T (s x* F_j + I^c_j alpha + B^c_j beta)        k an ancestor of j
// (the covariant parts cancel: (xi x S_k)^T F_k + S_k^T (xi x* F_k) = 0). Likewise for u:
//   d tau_k / du_j = S_k^T (I^c_k gamma + B^c_k s) (k in subtree(j)), S_k^T (I^c_j gamma + B^c_j s)
//   (k an ancestor), with gamma = (v_lambda + v_j) x s, and d tau / d udot = M.
// The floating root (always body 0, no ancestors) has a subspace S_0 = [[1, [p]x], [0, 1]] that is
// not body-fixed: beta = dv_0 - xi x v_0, alpha = da_0 - xi x a_0 + v_0 x beta with dv_0 = [dv x w;
// 0], da_0 = [dv x wdot; 0], gamma = dc_0 - s x v_0 (c_0 = [v x w; 0]), and its own rows get
// dS_0^T F_0 + S_0^T (xi x* F_0) = [xi_w x F_lin; xi_w x F_ang + (xi_v - dv) x F_lin - p x (xi_w x
// F_lin)] on top.
//
// Algorithm: a forward pass (poses, S, v, a, I_k, B_k, f_k), then a backward pass over the
// bodies (leaves first) that accumulates I^c, B^c, F and, per dof k, the columns
// F_k = I^c S_k (as CRBA) and G_k = B^c^T S_k: the subtree rows of column j are
// F_k . alpha + G_k . beta, the ancestor rows S_k . (...), O(nv * depth) entries of 6-dot products.
//
// ABA derivatives (differentiating tau(q, u, aba(q, u, tau)) = tau): at udot = aba(q, u, tau),
//   d udot / dq = -M^-1 d tau/dq ,  d udot / du = -M^-1 d tau/du ,  d udot / d tau = M^-1
// (as in the paper). udot is not taken from a separate ABA: every quantity of the passes
// above but a_k and f_k is independent of udot, and those are affine in it. So the passes run
// once at udot = 0, which gives the bias forces, I^c, B^c, the columns F and G, M and
// tau^0 = h(q, u); then udot = M^-1 (tau - h) by M's tree-sparse L^T D L factor (ltdl.hpp),
// a_k += da_k with da_k = da_lambda + S_k udot_k, F_k += sum over subtree(k) of I da (both in one
// pass each), and the columns of d tau / dq, d tau / du at that udot. M^-1 is formed once from
// the factor, column k from those of k's ancestors (L M^-1 = D^-1 L^-T is upper triangular;
// sum over dofs of depth times index multiply-adds); the two products with it use the branch
// sparsity of d tau / dq and d tau / du (column j nonzero only on the ancestors and the subtree
// of dof j, the same for both), each column of M^-1 read once for the two. A floating root's
// columns skip both: its three translation columns are zero (a uniform translation of the tree,
// gravity uniform, changes no torque), and in its rotation columns the part F_r . alpha of the
// subtree rows is M(r, root) S_0^-1 alpha (M(r, root dof t) = F_r . S_t), so M^-1 maps it to
// S_0^-1 alpha on the root's own rows (less an armature term): only M^-1 times the three columns
// G_r (last three entries) and the root rows' own terms remain.
//
// Mimic joints (Model::mimic) are not coupled by the dynamics passes (model.hpp): like rnea and
// aba, the derivatives treat every coordinate as independent. For a coupling q_m = r q_s + o, the
// reduced derivative is d tau/d q_s + r d tau/d q_m (and the same for u).
//
// External forces f_ext (optional): one wrench per body, [force; moment about the body origin] in
// the BODY frame (as rnea.hpp); they move with their body, so they enter through F.
//
// Writes: data.liMi, data.oMi, data.J, data.ov, data.oa, data.oinertia, data.oYcrb (I^c),
//         data.oBcrb (B^c), data.of (F), data.F, data.dG, data.M (= d tau / d udot, both
//         triangles, with the armature), data.tau (= rnea(q, u, udot, f_ext)); aba_derivatives
//         also data.udot (= aba), data.oc, data.opA and data.u_aba as scratch, data.ltdl_tmp, and
//         factors data.M in place (ltdl.hpp); it leaves data.tau = tau.
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// d tau / dq and d tau / du of tau = rnea(q, u, udot, f_ext), both nv x nv (dq in the tangent
// space, see above). Also leaves tau in data.tau and M = d tau / d udot in data.M.
// Throws InvalidArgument when a size does not match the model.
void rnea_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u, const VecXcref& udot,
                      MatXref dtau_dq, MatXref dtau_du, const Vec6Vector* f_ext = nullptr);

// d udot / dq, d udot / du and d udot / d tau of udot = aba(q, u, tau, f_ext), all nv x nv.
// Leaves udot in data.udot. Throws InvalidArgument when a size does not match the model, or
// when M(q) is not positive definite.
void aba_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u, const VecXcref& tau,
                     MatXref dudot_dq, MatXref dudot_du, MatXref dudot_dtau, const Vec6Vector* f_ext = nullptr);

}  // namespace impulse
