#include "impulse/contact/delassus.hpp"

#include <algorithm>
#include <cmath>

#include "impulse/core/check.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/ltdl.hpp"

namespace impulse {

Mat3 contact_frame_from_normal(const Vec3& n) {
  const Vec3 e = std::abs(n.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 tx = (e - n * n.dot(e)).normalized();
  Mat3 C;
  C.col(0) = tx;
  C.col(1) = n.cross(tx);
  C.col(2) = n;
  return C;
}

void DelassusAssembler::reserve(const std::vector<const Model*>& models, Index max_contacts) {
  Index nv_max = 1, max_limits = 0;
  for (const Model* m : models) {
    nv_max = std::max(nv_max, m->nv);
    for (Index i = 0; i < m->nb; ++i) {
      if (m->nq_joint[i] == 1 && m->nv_joint[i] == 1) max_limits += 2;  // lower and upper
    }
  }
  max_rows_ = 3 * max_contacts + max_limits;
  const Index R = std::max<Index>(1, max_rows_);
  G_.setZero(R, R);
  c_.setZero(R);
  mu_.setZero(std::max<Index>(1, max_contacts));
  v_before_.setZero(R);
  depth_.setZero(R);
  restitution_.setZero(R);
  frames_.assign(static_cast<std::size_t>(std::max<Index>(1, max_contacts)), Mat3::Identity());
  rows_.clear();
  rows_.reserve(static_cast<std::size_t>(R));
  J_.resize(models.size());
  sys_rows_.resize(models.size());
  for (std::size_t s = 0; s < models.size(); ++s) {
    J_[s].setZero(R, models[s]->nv);
    sys_rows_[s].clear();
    sys_rows_[s].reserve(static_cast<std::size_t>(R));
  }
  Y_.setZero(nv_max, R);
  W_.setZero(nv_max, R);
  Gs_.setZero(R, R);
  r_.setZero(nv_max);
  J3_.setZero(3, nv_max);
  Jrow_.setZero(3, nv_max);
  nc_ = nl_ = 0;
}

// Adds `rows_in_world` (3 x nv, already in the contact frame and signed) to rows row..row+2 of
// system s's Jacobian, registering the rows for the system on first use.
void DelassusAssembler::add_rows(Index s, Index row, const Mat3X& rows3, const std::vector<SystemView>& systems) {
  const Index nv = systems[s].model->nv;
  std::vector<Index>& list = sys_rows_[s];
  const bool fresh = list.empty() || list.back() < row;  // rows are added in increasing order
  if (fresh) {
    J_[s].middleRows(row, 3).setZero();
    for (Index k = 0; k < 3; ++k) list.push_back(row + k);
  }
  J_[s].middleRows(row, 3) += rows3.leftCols(nv);
}

void DelassusAssembler::assemble(const std::vector<SystemView>& systems, const std::vector<Index>& object_system,
                                 const ContactSet& contacts, Scalar dt, const DelassusSettings& st) {
  IMPULSE_ASSERT(systems.size() == J_.size());
  for (auto& list : sys_rows_) list.clear();
  rows_.clear();
  nc_ = std::min<Index>(contacts.size(), static_cast<Index>(frames_.size()));
  nl_ = 0;

  // contact rows: J_i = C_i^T (J_A(p) - J_B(p)), depth on the normal row
  for (Index i = 0; i < nc_; ++i) {
    const Contact& ct = contacts[i];
    const Mat3 C = contact_frame_from_normal(ct.normal);
    frames_[static_cast<std::size_t>(i)] = C;
    mu_[i] = ct.mu;
    depth_[3 * i + 2] = ct.depth;
    restitution_[3 * i + 2] = ct.restitution;
    rows_.push_back({ConstraintRow::Kind::Contact, i, -1, 1, 3 * i});
    const Index sides[2][2] = {{ct.object_a, ct.body_a}, {ct.object_b, ct.body_b}};
    for (int side = 0; side < 2; ++side) {
      const Index obj = sides[side][0], body = sides[side][1];
      if (obj < 0 || obj >= static_cast<Index>(object_system.size())) continue;
      const Index s = object_system[static_cast<std::size_t>(obj)];
      if (s < 0 || body < 0) continue;
      const Model& m = *systems[s].model;
      const Data& d = *systems[s].data;
      const SE3& X_WB = d.oMi[body];
      const Vec3 p_B = X_WB.R.transpose() * (ct.position - X_WB.p);
      auto J3 = J3_.leftCols(m.nv);
      point_jacobian(m, d, body, p_B, J3);
      Jrow_.leftCols(m.nv).noalias() = (side == 0 ? 1.0 : -1.0) * C.transpose() * J3;
      add_rows(s, 3 * i, Jrow_, systems);
    }
  }

  // joint-limit rows: +e_k at a lower limit, -e_k at an upper one, when within the margin or
  // when the free motion would cross the limit in this step
  Index row = 3 * nc_;
  for (std::size_t s = 0; s < systems.size() && st.joint_limits; ++s) {
    const Model& m = *systems[s].model;
    const VecX& q = *systems[s].q;
    const VecX& uf = *systems[s].u_free;
    for (Index j = 0; j < m.nb; ++j) {
      if (m.nq_joint[j] != 1 || m.nv_joint[j] != 1) continue;
      const Index iq = m.idx_q[j], k = m.idx_v[j];
      for (int side = 0; side < 2; ++side) {
        const Scalar bound = side == 0 ? m.lower_position[iq] : m.upper_position[iq];
        if (!std::isfinite(bound) || row >= max_rows_) continue;
        const Scalar sign = side == 0 ? 1.0 : -1.0;
        const Scalar dist = sign * (q[iq] - bound);
        if (dist > st.limit_margin && dist + dt * sign * uf[k] > 0) continue;
        J_[s].row(row).setZero();
        J_[s](row, k) = sign;
        sys_rows_[s].push_back(row);
        rows_.push_back({ConstraintRow::Kind::Limit, k, static_cast<Index>(s), sign, row});
        depth_[row] = -dist;
        restitution_[row] = 0;
        ++row;
        ++nl_;
      }
    }
  }
  const Index n = 3 * nc_ + nl_;

  // G = sum_s Y_s^T D_s^-1 Y_s with Y_s = L_s^-T J_s^T;  c = J u_free;  v- = J u
  G_.topLeftCorner(n, n).setZero();
  c_.head(n).setZero();
  v_before_.head(n).setZero();
  for (std::size_t s = 0; s < systems.size(); ++s) {
    const std::vector<Index>& list = sys_rows_[s];
    const Index k = static_cast<Index>(list.size());
    if (k == 0) continue;
    const Model& m = *systems[s].model;
    const Data& d = *systems[s].data;
    auto Y = Y_.topLeftCorner(m.nv, k);
    for (Index a = 0; a < k; ++a) {
      const Index r = list[a];
      Y.col(a) = J_[s].row(r).transpose();
      c_[r] += J_[s].row(r).dot(*systems[s].u_free);
      v_before_[r] += J_[s].row(r).dot(*systems[s].u);
    }
    ltdl_solve_LT(m, d, Y);
    auto W = W_.topLeftCorner(m.nv, k);
    W.noalias() = d.Dinv.asDiagonal() * Y;
    auto Gs = Gs_.topLeftCorner(k, k);
    Gs.noalias() = Y.transpose() * W;
    for (Index a = 0; a < k; ++a) {
      for (Index b = 0; b < k; ++b) G_(list[a], list[b]) += Gs(a, b);
    }
  }

  // targets b of the normal and limit rows, folded into c (see the header)
  auto target = [&](Scalar depth, Scalar v_before, Scalar e) {
    const Scalar gap = -depth;
    if (gap > 0 && gap > -v_before * dt) return -gap / dt;
    Scalar b = -std::max(gap, Scalar(0)) / dt;
    if (e > 0 && -v_before > st.restitution_threshold) b = std::max(b, -e * v_before);
    if (st.erp > 0) b = std::max(b, st.erp * std::max(Scalar(0), depth - st.slop) / dt);
    return b;
  };
  for (const ConstraintRow& cr : rows_) {
    const Index r = cr.kind == ConstraintRow::Kind::Contact ? cr.row + 2 : cr.row;
    c_[r] -= target(depth_[r], v_before_[r], restitution_[r]);
  }
}

ContactProblem DelassusAssembler::problem() const {
  const Index n = 3 * nc_ + nl_;
  return ContactProblem(G_.topLeftCorner(n, n), c_.head(n), mu_.head(std::max<Index>(nc_, 0)), nc_, nl_);
}

void DelassusAssembler::apply(const std::vector<SystemView>& systems, const VecXcref& lambda,
                              std::vector<VecX>& u_next) {
  for (std::size_t s = 0; s < systems.size(); ++s) {
    const Model& m = *systems[s].model;
    const Data& d = *systems[s].data;
    auto r = r_.head(m.nv);
    r.setZero();
    for (const Index row : sys_rows_[s]) r.noalias() += J_[s].row(row).transpose() * lambda[row];
    if (!sys_rows_[s].empty()) ltdl_solve(m, d, r);
    u_next[s] = *systems[s].u_free + r;
  }
}

}  // namespace impulse
