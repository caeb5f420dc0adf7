// World-frame joint, frame and point Jacobians (RBDA sec. 4.1.5). See jacobian.hpp.
#include "impulse/dynamics/jacobian.hpp"

#include <algorithm>

#include "impulse/dynamics/ltdl.hpp"
#include "../core/isa_dispatch.hpp"
#include "floating_root_columns.hpp"
#include "joint_ops.hpp"

namespace impulse {

namespace {
// J.setZero() for a Ref: one fill when the columns are contiguous (setZero on a Ref with a
// runtime outer stride zeroes column by column).
void set_zero(MatXref J) {
  if (J.outerStride() == J.rows()) {
    std::fill(J.data(), J.data() + J.size(), Scalar(0));
  } else {
    J.setZero();
  }
}
}  // namespace

const Mat6X& compute_joint_jacobians(const Model& model, Data& data, const VecXcref& q) {
  IMPULSE_ASSERT(q.size() == model.nq);
  // one forward pass: the pose of body i, then its world-frame S_i from it
  for (Index i = 0; i < model.nb; ++i) {
    detail::body_pose(model, data, i, q.data());
    detail::world_subspace(model, i, data.oMi[i], data.J);
  }
  return data.J;
}

namespace {
// Linear rows of a world-frame Jacobian column moved from the world origin to the point p:
// J_k,lin + J_k,ang x p (RBDA eq. 2.21 applied to one column).
inline void shift_to_point(const Scalar* Jk, const Vec3& p, Scalar* out) {
  out[0] = Jk[0] + (Jk[4] * p[2] - Jk[5] * p[1]);
  out[1] = Jk[1] + (Jk[5] * p[0] - Jk[3] * p[2]);
  out[2] = Jk[2] + (Jk[3] * p[1] - Jk[4] * p[0]);
}
}  // namespace

void frame_jacobian(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref J6) {
  IMPULSE_ASSERT(J6.rows() == 6 && J6.cols() == model.nv);
  const Vec3 p = data.oMi[body].act_point(p_B);
  set_zero(J6);
  // columns of the dofs supporting body: shift the reference point from the world origin to p,
  // J_P,k = [J_k,lin + J_k,ang x p; J_k,ang] (scalar code: Eigen's fixed-size blocks of a
  // MatXref column do not compile to straight-line code here)
  for (Index k = branch_last_dof(model, body); k >= 0; k = model.dof_parent[k]) {
    const Scalar* Jk = data.J.data() + 6 * k;
    Scalar* out = &J6(0, k);
    shift_to_point(Jk, p, out);
    out[3] = Jk[3];
    out[4] = Jk[4];
    out[5] = Jk[5];
  }
}

void point_jacobian(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref J3) {
  IMPULSE_ASSERT(J3.rows() == 3 && J3.cols() == model.nv);
  const Vec3 p = data.oMi[body].act_point(p_B);
  set_zero(J3);
  for (Index k = branch_last_dof(model, body); k >= 0; k = model.dof_parent[k]) {
    const Scalar* Jk = data.J.data() + 6 * k;
    shift_to_point(Jk, p, &J3(0, k));
  }
}

namespace {
// The path of point_jacobian_branch's columns for `body`: n dofs, the first `root` (6 when the
// path starts at a floating root, else 0) being dofs 0-5 in order, then dof anc[n - 2 - t] at
// place t and `last` at place n - 1. The path root..last is last's packed ancestors (Data::anc,
// nearest first) and last itself: no walk up dof_parent (a chain of dependent loads). A free body:
// n = root = 6; a body without a dof on its branch: n = 0.
struct BranchPath {
  const Index* anc = nullptr;
  Index n = 0, root = 0, last = -1;
  Index dof(Index t) const { return t < root ? t : t + 1 < n ? anc[n - 2 - t] : last; }
};
inline BranchPath branch_path(const Model& model, const Data& data, Index body) {
  BranchPath b;
  if (model.is_free_body()) {
    b.n = b.root = 6;
    return b;
  }
  b.last = branch_last_dof(model, body);
  if (b.last < 0) return b;
  const std::size_t last = static_cast<std::size_t>(b.last);
  b.anc = data.anc.data() + data.anc_begin[last];
  b.n = data.anc_begin[last + 1] - data.anc_begin[last] + 1;
  if (b.n > 6 && b.anc[b.n - 2] == 0 && model.parent[0] < 0 && model.joint_type[0] == JointType::Floating) b.root = 6;
  return b;
}

// point_jacobian_branch and point_jacobian_branch_row (ROW2)
template <bool ROW2>
Index point_jacobian_branch_impl(const Model& model, const Data& data, Index body, const Vec3& p, const Mat3& R,
                                 Index* dofs, Scalar* out) {
  const Scalar* J = data.J.data();
  const BranchPath b = branch_path(model, data, body);
  if (b.root == 6) detail::floating_root_columns<ROW2>(J, p, R, dofs, out);  // (the path's first six)
  // R and p in registers: the stores to `out` could alias them, so the compiler would reload both
  // for every dof
  const Mat3 Rl = R;
  const Vec3 pl = p;
  const Index n = b.n;
  for (Index t = b.root; t < n; ++t) {
    const Index k = t + 1 < n ? b.anc[n - 2 - t] : b.last;
    dofs[t] = k;
    Scalar v[3];
    shift_to_point(J + 6 * k, pl, v);
    Scalar* o = out + 3 * t;
    if (ROW2) {
      o[0] = o[1] = 0;
    } else {
      o[0] = Rl(0, 0) * v[0] + Rl(0, 1) * v[1] + Rl(0, 2) * v[2];
      o[1] = Rl(1, 0) * v[0] + Rl(1, 1) * v[1] + Rl(1, 2) * v[2];
    }
    o[2] = Rl(2, 0) * v[0] + Rl(2, 1) * v[1] + Rl(2, 2) * v[2];
  }
  return n;
}
}  // namespace

Index point_jacobian_branch(const Model& model, const Data& data, Index body, const Vec3& p, const Mat3& R,
                            Index* dofs, Scalar* out) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
    return point_jacobian_branch_impl<false>(model, data, body, p, R, dofs, out);
  };
  return detail::run_kernel(kernel_body);
}

Index point_jacobian_branch_row(const Model& model, const Data& data, Index body, const Vec3& p, const Mat3& R,
                                Index* dofs, Scalar* out) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
    return point_jacobian_branch_impl<true>(model, data, body, p, R, dofs, out);
  };
  return detail::run_kernel(kernel_body);
}

void frame_jacobian(const Model& model, const Data& data, Index frame_id, MatXref J6) {
  const Frame& fr = model.frames.at(frame_id);
  IMPULSE_CHECK(fr.body >= 0, "frame '", fr.name, "' is attached to the world: it has no Jacobian");
  frame_jacobian(model, data, fr.body, fr.X_BF.p, J6);
}

namespace {
// Poses, then world-frame S only for the joints supporting `body`.
void branch_subspaces(const Model& model, Data& data, const VecXcref& q, Index body) {
  IMPULSE_ASSERT(q.size() == model.nq);
  detail::fk_positions(model, data, q.data());
  for (Index b = body; b >= 0; b = model.parent[b]) detail::world_subspace(model, b, data.oMi[b], data.J);
}
}  // namespace

const Mat6X& frame_jacobian(const Model& model, Data& data, const VecXcref& q, Index body, const Vec3& p_B) {
  branch_subspaces(model, data, q, body);
  frame_jacobian(model, data, body, p_B, data.Jframe);
  return data.Jframe;
}

const Mat3X& point_jacobian(const Model& model, Data& data, const VecXcref& q, Index body, const Vec3& p_B) {
  branch_subspaces(model, data, q, body);
  point_jacobian(model, data, body, p_B, data.Jpoint);
  return data.Jpoint;
}

Index point_jacobian_branch_dofs(const Model& m, const Data& d, Index body, Index* dofs) {
  const BranchPath b = branch_path(m, d, body);
  for (Index t = 0; t < b.n; ++t) dofs[t] = b.dof(t);
  return b.n;
}

}  // namespace impulse
