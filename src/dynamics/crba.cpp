// Composite-rigid-body algorithm, RBDA Table 6.2 (world-frame form). See crba.hpp.
#include "impulse/dynamics/crba.hpp"

#include <algorithm>

#include "joint_ops.hpp"
#include "../core/isa_dispatch.hpp"
#include "passes.hpp"

namespace impulse {

namespace detail {

void crba_from_poses(const Model& model, Data& data) {
  // forward pass: world-frame S_i and I_i (I^c_i starts at I_i)
  for (Index i = 0; i < model.nb; ++i) {
    world_subspace(model, i, data.oMi[i], data.J);
    world_inertia(model.inertia[i], data.oMi[i], data.oYcrb[i]);
  }
  crba_backward(model, data);
}

void crba_backward(const Model& model, Data& data) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  // backward pass: F_i = I^c_i S_i; row block i of M over the subtree columns; I^c_lambda += I^c_i
  MatX& M = data.M;
  Scalar* const J = data.J.data();
  Scalar* const F = data.F.data();
  for (Index i = model.nb - 1; i >= 0; --i) {
    const Index k = model.idx_v[i], n = model.nv_joint[i];
    if (n > 0) {
      const Index ns = subtree_nv(model, i);
      const WorldInertia& Y = data.oYcrb[i];
      for (Index r = k; r < k + n; ++r) Y.apply_to(J + 6 * r, F + 6 * r);
      // M_{i, subtree(i)} = S_i^T F_subtree (F of descendants was written earlier in this pass),
      // mirrored into the lower triangle; M_ij for the ancestors j of i is row block j
      if (model.joint_type[i] == JointType::Floating) {
        // S_i = [[1, [p]], [0, 1]] (world_subspace), so S_i^T f = [f_lin; f_ang - p x f_lin]: a
        // copy and a cross product per column instead of six 6-dot products. The floating base
        // carries a third of the entries of M for a legged robot.
        const Vec3& pb = data.oMi[i].p;
        const Scalar px = pb.x(), py = pb.y(), pz = pb.z();
        for (Index c = k; c < k + ns; ++c) {
          const Scalar* f = F + 6 * c;
          const Scalar col[6] = {f[0], f[1], f[2], f[3] - (py * f[2] - pz * f[1]),
                                 f[4] - (pz * f[0] - px * f[2]), f[5] - (px * f[1] - py * f[0])};
          if (c >= k + 6) {  // a descendant's column: all six rows (unrolled)
#pragma GCC unroll 6
            for (Index r = 0; r < 6; ++r) {
              M(k + r, c) = col[r];
              M(c, k + r) = col[r];
            }
            continue;
          }
          for (Index r = k; r <= c; ++r) {  // the base block: its upper triangle
            M(r, c) = col[r - k];
            M(c, r) = col[r - k];
          }
        }
      } else {
        for (Index r = k; r < k + n; ++r) {
          const Scalar* Sr = J + 6 * r;
          for (Index c = r; c < k + ns; ++c) {
            const Scalar Mrc = dot6(Sr, F + 6 * c);
            M(r, c) = Mrc;
            M(c, r) = Mrc;
          }
        }
      }
    }
    const Index p = model.parent[i];
    if (p >= 0) data.oYcrb[p] += data.oYcrb[i];
  }
  M.diagonal() += model.armature;
  };
  return detail::run_kernel(kernel_body);
}

}  // namespace detail

const MatX& crba(const Model& model, Data& data, const VecXcref& q) {
  IMPULSE_ASSERT(q.size() == model.nq);
  // forward pass: poses, world-frame S_i and I_i (I^c_i starts at I_i), in one loop
  for (Index i = 0; i < model.nb; ++i) {
    detail::body_pose(model, data, i, q.data());
    detail::world_subspace(model, i, data.oMi[i], data.J);
    detail::world_inertia(model.inertia[i], data.oMi[i], data.oYcrb[i]);
  }
  detail::crba_backward(model, data);
  return data.M;
}

}  // namespace impulse
