// Composite-rigid-body algorithm, RBDA Table 6.2 (world-frame form). See crba.hpp.
#include "impulse/dynamics/crba.hpp"

#include "joint_ops.hpp"

namespace impulse {

const MatX& crba(const Model& model, Data& data, const VecXcref& q) {
  IMPULSE_ASSERT(q.size() == model.nq);
  // forward pass: poses, world-frame S_i and I_i
  detail::fk_positions(model, data, q.data());
  for (Index i = 0; i < model.nb; ++i) {
    detail::world_subspace(model, i, data.oMi[i], data.J);
    detail::world_inertia(model.inertia[i], data.oMi[i], data.oYcrb[i]);  // I^c_i starts at I_i
  }
  // backward pass: F_i = I^c_i S_i; row block i of M over the subtree columns; I^c_lambda += I^c_i
  MatX& M = data.M;
  for (Index i = model.nb - 1; i >= 0; --i) {
    const Index k = model.idx_v[i], n = model.nv_joint[i];
    if (n > 0) {
      const Index ns = detail::subtree_nv(model, i);
      data.F.middleCols(k, n).noalias() = data.oYcrb[i] * data.J.middleCols(k, n);
      // M_{i, subtree(i)} = S_i^T F_subtree (F of descendants was written earlier in this pass)
      if (n == 1) {
        M.block(k, k, 1, ns).noalias() = data.J.col(k).transpose() * data.F.middleCols(k, ns);
      } else {
        M.block(k, k, n, ns).noalias() = data.J.middleCols(k, n).transpose() * data.F.middleCols(k, ns);
      }
      // symmetric copy into the lower triangle
      M.block(k + n, k, ns - n, n) = M.block(k, k + n, n, ns - n).transpose();
      for (Index r = 1; r < n; ++r) {
        for (Index c = 0; c < r; ++c) M(k + r, k + c) = M(k + c, k + r);
      }
      // M_ij for the ancestors j of i: S_j^T F_i is written when j is processed (row block j)
    }
    const Index p = model.parent[i];
    if (p >= 0) data.oYcrb[p] += data.oYcrb[i];
  }
  M.diagonal() += model.armature;
  return M;
}

}  // namespace impulse
