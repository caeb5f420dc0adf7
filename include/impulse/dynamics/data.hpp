// Data: the workspace of the dynamics algorithms for one Model (MuJoCo mjData / Pinocchio Data
// style). Every array is sized once in the constructor; no algorithm allocates afterwards.
// Fields are grouped by the stage that writes them; each comment gives the shape.
//
// Frames and conventions (see also model/joint.hpp):
//   - Spatial 6-vectors are [linear; angular]. "body frame" = coordinates of body i at its origin;
//     "world frame" = world coordinates at the world origin (Featherstone's spatial vectors in
//     frame 0, RBDA sec. 2.8), used by CRBA, ABA and the joint Jacobians so that composite and
//     articulated inertias are summed without transforms (as Pinocchio 3 does).
//   - Generalized vectors (u, udot, tau, h) use the public layout: the floating base part is
//     [v; w] in the WORLD frame (v = velocity of the base origin).
#pragma once

#include <vector>

#include "impulse/core/types.hpp"
#include "impulse/model/model.hpp"
#include "impulse/spatial/spatial.hpp"

namespace impulse {

// Rigid-body spatial inertia in the world frame, stored by its moments about the world origin:
// mass m, first moment h = m c (c = centre of mass) and rotational inertia I_O about the origin.
// Sums of bodies are plain sums of (m, h, I_O), with no parallel-axis shift (used by CRBA).
struct WorldInertia {
  Scalar m = 0;
  Vec3 h = Vec3::Zero();
  Mat3 I_O = Mat3::Zero();

  // f = I v: [m v - h x w; I_O w + h x v] for the twist v = [v; w] at the world origin.
  Vec6 apply(const Vec6& v) const {
    Vec6 f;
    apply_to(v.data(), f.data());
    return f;
  }
  // The same into raw storage (a column of Data::F), coefficient by coefficient: Eigen's
  // head<3>/tail<3> form wrote f as 16-byte halves split at index 3, so the 16-byte load of
  // f[2..3] that CRBA's S^T F then issued waited on two stores (a store-forwarding stall; 19 % of
  // CRBA's backward pass in perf annotate).
  void apply_to(const Scalar* v, Scalar* f) const {
    const Scalar vx = v[0], vy = v[1], vz = v[2], wx = v[3], wy = v[4], wz = v[5];
    const Scalar hx = h.x(), hy = h.y(), hz = h.z();
    f[0] = m * vx - (hy * wz - hz * wy);
    f[1] = m * vy - (hz * wx - hx * wz);
    f[2] = m * vz - (hx * wy - hy * wx);
    f[3] = I_O(0, 0) * wx + I_O(0, 1) * wy + I_O(0, 2) * wz + (hy * vz - hz * vy);
    f[4] = I_O(1, 0) * wx + I_O(1, 1) * wy + I_O(1, 2) * wz + (hz * vx - hx * vz);
    f[5] = I_O(2, 0) * wx + I_O(2, 1) * wy + I_O(2, 2) * wz + (hx * vy - hy * vx);
  }
  WorldInertia& operator+=(const WorldInertia& o) {
    m += o.m;
    h += o.h;
    I_O += o.I_O;
    return *this;
  }
  // The 6x6 matrix [[m 1, -[h]]; [[h], I_O]].
  void to_matrix(Mat6& out) const {
    out.topLeftCorner<3, 3>() = m * Mat3::Identity();
    out.topRightCorner<3, 3>() = -skew(h);
    out.bottomLeftCorner<3, 3>() = skew(h);
    out.bottomRightCorner<3, 3>() = I_O;
  }
};

using Vec6Vector = std::vector<Vec6>;  // one spatial vector per body (Eigen >= 3.4 + C++17: aligned)
using Mat6Vector = std::vector<Mat6>;
using SE3Vector = std::vector<SE3>;

class Data {
 public:
  explicit Data(const Model& model);

  // Prefetches the buffers a time step reads and writes (core/prefetch.hpp; a hint, no effect on
  // results). The ABA and frame-Jacobian scratch are left out: the stepper does not use them.
  void prefetch_step() const;

  Index nb = 0, nv = 0, nq = 0;

  // Gravity acceleration (world frame, m/s^2) used by rnea, nonlinear_effects, gravity_torques,
  // aba and potential_energy. It belongs to the simulation, not to the (immutable) Model: it
  // starts as the Model's default, Model::gravity, and its owner changes it here (World::set_gravity
  // sets it in the Data of every system).
  Vec3 gravity = Vec3(0, 0, -9.81);

  // --- constants derived from the Model at construction ----------------------------------------
  // Revolute joint i about a coordinate axis a = +-e_k (nearly every URDF joint): rev_axis[i] =
  // +-(k + 1), and R_{parent,i}(q) = X_PJ.R Rot(a, q) turns two columns of the Model's X_PJ.R
  // (joint_pose). Any other axis (rev_axis 0): R = cos(q) rev_A + sin(q) rev_B + rev_C with
  // rev_A = R_P (1 - a a^T), rev_B = R_P [a], rev_C = R_P a a^T (Rodrigues, RBDA Table 2.2).
  // The Rodrigues constants are 27 doubles a joint in every Data (a World's robot rereads them
  // from memory each step: 40 cache lines of ANYmal's step); they exist only when some revolute
  // joint needs them (size nb, else empty). Both forms give the same bits on a coordinate axis.
  std::vector<signed char> rev_axis;      // nb: 0, or +-(k + 1) for a revolute joint about +-e_k
  std::vector<Mat3> rev_A, rev_B, rev_C;  // nb, or empty (see above)

  // --- forward_kinematics (positions): also run by rnea, crba, aba, jacobians -------------
  SE3Vector liMi;          // nb: X_{parent(i), i}, pose of body i in its parent (or world)
  SE3Vector oMi;           // nb: X_WB, pose of body i in the world

  // --- forward_kinematics (velocities) / rnea pass 1 ---------------------------------------
  // (v, a, f: body frame after forward_kinematics, rnea, aba; compute_step_dynamics leaves its
  // world-frame values about the world origin there instead)
  Vec6Vector v;            // nb: twist of body i, body frame
  // --- rnea ----------------------------------------------------------------------------------
  Vec6Vector a;            // nb: spatial acceleration of body i minus gravity, body frame
  Vec6Vector f;            // nb: net wrench transmitted by joint i, body frame
  VecX tau;                // nv: output of rnea (inverse dynamics)
  VecX h;                  // nv: nonlinear effects h = C(q,u) u + g(q), output of nonlinear_effects
                           //     (compute_step_dynamics: minus sum J^T f_ext)

  // --- world-frame quantities shared by crba / aba / compute_joint_jacobians ---------------
  Mat6X J;                 // 6 x nv: column k = motion subspace of dof k in the world frame
                           //        (spatial velocity of the world origin point per unit u_k)
  std::vector<WorldInertia> oinertia;  // nb: spatial inertia of body i, world frame

  // --- crba ---------------------------------------------------------------------------------
  std::vector<WorldInertia> oYcrb;  // nb: composite-rigid-body inertia of subtree(i), world frame
  Mat6X F;                 // 6 x nv: F_k = oYcrb(body of k) * J_k (RBDA Table 6.2 "F")
  MatX M;                  // nv x nv: joint-space inertia incl. armature, full symmetric.
                           //   After ltdl_factor: strictly lower triangle = L (unit diagonal
                           //   implied), diagonal = D, strictly upper triangle still = M.
  // --- ltdl_factor ---------------------------------------------------------------------------
  VecX D;                  // nv: diagonal of the L^T D L factor
  VecX Dinv;               // nv: 1 / D
  VecX ltdl_tmp;           // nv: scratch (D_k L_kj over the descendants k of dof j)
  std::vector<Index> dof_subtree_end;  // nv: the descendants of dof j are j+1 .. end_j - 1
                                       //     (constant, from the Model)
  // Row k of L over the ancestors of dof k, packed: entries anc_begin[k] .. anc_begin[k+1] - 1 hold
  // the ancestors lambda(k), lambda(lambda(k)), ... (anc, constant, from the Model) and L(k, .)
  // at them (L_anc, written by ltdl_factor, equal to the lower triangle of M). The solves and the
  // Delassus path solves read these contiguous rows instead of walking lambda and gathering
  // L(k, i) one column apart: a chain of dependent loads per ancestor.
  std::vector<Index> anc_begin;        // nv + 1
  std::vector<Index> anc;              // sum over dofs of their depth
  VecX L_anc;                          // same size as anc
  // The dofs form one chain, dof_parent[k] = k - 1 (a free body, a serial arm): M is dense, and
  // ltdl_factor / ltdl_solve run fixed-size loops for the common sizes (constant, from the Model).
  bool dof_chain = false;
  // The first six dofs form a chain from which every other dof descends, and nv > 6 (a floating
  // base carrying the rest of the tree): ltdl_factor ends with the root block's Schur complement
  // (constant, from the Model).
  bool root_chain6 = false;

  // --- aba (world-frame variant of RBDA Table 7.1) -------------------------------------------
  Vec6Vector ov;           // nb: twist of body i, world frame
  Vec6Vector oc;           // nb: velocity-product acceleration c_i = S-dot_i u_i, world frame
  Vec6Vector oa;           // nb: spatial acceleration (minus gravity), world frame
  Vec6Vector opA;          // nb: articulated bias force p^A_i, world frame
  Mat6Vector oYaba;        // nb: articulated-body inertia I^A_i, world frame
  Mat6X U;                 // 6 x nv: U_i = I^A_i S_i
  Mat6Vector Dinv_joint;   // nb: top-left nv_i x nv_i block = (S_i^T U_i + armature)^-1; for the
                           //     floating root (nv = 6) it holds D = S^T U + armature itself
  VecX u_aba;              // nv: u_i = tau_i - S_i^T p^A_i
  VecX udot;               // nv: output of aba (forward dynamics)

  // --- rnea_derivatives / aba_derivatives (also ov, oa, oinertia, oYcrb, J, F, M above) ---------
  Mat6Vector oBcrb;        // nb: B^c_i = sum over subtree(i) of v x* I - I v x + (I v) x-bar, world
                           //     frame (rnea_derivatives.hpp)
  Vec6Vector of;           // nb: composite force F_i = sum over subtree(i) of I a + v x* I v - f_ext
  Mat6X dG;                // 6 x nv: G_k = B^c(body of k)^T S_k

  // --- energy / centre of mass / momentum ------------------------------------------------------
  Vec3 com = Vec3::Zero();       // centre of mass, world frame
  Vec3 vcom = Vec3::Zero();      // velocity of the centre of mass, world frame
  Vec6 momentum = Vec6::Zero();  // [linear; angular about the WORLD origin], world frame
  Scalar kinetic = 0, potential = 0;

  // --- scratch for frame/point Jacobians ------------------------------------------------------
  Mat6X Jframe;            // 6 x nv: output of frame_jacobian(..., data) convenience overloads
  Mat3X Jpoint;            // 3 x nv: output of point_jacobian(..., data) convenience overloads
};

}  // namespace impulse
