// Composite-rigid-body algorithm, RBDA Table 6.2 (world-frame form). See crba.hpp.
#include "impulse/dynamics/crba.hpp"

#include "joint_ops.hpp"
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
  // backward pass: F_i = I^c_i S_i; row block i of M over the subtree columns; I^c_lambda += I^c_i
  MatX& M = data.M;
  for (Index i = model.nb - 1; i >= 0; --i) {
    const Index k = model.idx_v[i], n = model.nv_joint[i];
    if (n > 0) {
      const Index ns = subtree_nv(model, i);
      const WorldInertia& Y = data.oYcrb[i];
      // M_{i, subtree(i)} = S_i^T F_subtree (F of descendants was written earlier in this pass),
      // mirrored into the lower triangle; M_ij for the ancestors j of i is row block j
      for (Index r = k; r < k + n; ++r) data.F.col(r) = Y.apply(data.J.col(r));
      for (Index r = k; r < k + n; ++r) {
        const Vec6 Sr = data.J.col(r);
        for (Index c = r; c < k + ns; ++c) {
          const Scalar Mrc = Sr.dot(data.F.col(c));
          M(r, c) = Mrc;
          M(c, r) = Mrc;
        }
      }
    }
    const Index p = model.parent[i];
    if (p >= 0) data.oYcrb[p] += data.oYcrb[i];
  }
  M.diagonal() += model.armature;
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
