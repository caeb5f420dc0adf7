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

namespace {

// y <- L^-T y for y supported on one root path (dofs[0..len), root first; nr of the 3 values per
// dof used): RBDA Table 6.4 first half restricted to the path, whose ancestors of dofs[t] are
// exactly dofs[0..t).
template <int NR>
void solve_LT_path(const MatX& L, const Index* dofs, Index len, Scalar* Y) {
  const Index n = L.rows();
  const Scalar* Ld = L.data();
  for (Index t = len - 1; t > 0; --t) {
    const Index k = dofs[t];
    const Scalar* yk = Y + 3 * t;
    for (Index s = t - 1; s >= 0; --s) {
      const Scalar l = Ld[k + dofs[s] * n];  // L(k, dofs[s])
      Scalar* ys = Y + 3 * s;
      for (int r = 0; r < NR; ++r) ys[r] -= l * yk[r];
    }
  }
}

// G(rp.., rq..) += B and, when `mirror`, G(rq.., rp..) += B^T for the RA x RB block
// B = sum_{t < len} Dinv[dofs[t]] Yp[:, t] Yq[:, t]^T (G column major, leading dimension ld).
template <int RA, int RB>
void add_path_product(const Scalar* Yp, const Scalar* Yq, const Index* dofs, Index len, const Scalar* Dinv,
                      Scalar* G, Index ld, Index rp, Index rq, bool mirror) {
  Scalar acc[RA][RB] = {};
  for (Index t = 0; t < len; ++t) {
    const Scalar di = Dinv[dofs[t]];
    const Scalar* a = Yp + 3 * t;
    const Scalar* b = Yq + 3 * t;
    for (int i = 0; i < RA; ++i) {
      const Scalar ai = a[i] * di;
      for (int j = 0; j < RB; ++j) acc[i][j] += ai * b[j];
    }
  }
  for (int j = 0; j < RB; ++j) {
    for (int i = 0; i < RA; ++i) G[(rp + i) + (rq + j) * ld] += acc[i][j];
  }
  if (!mirror) return;
  for (int i = 0; i < RA; ++i) {
    for (int j = 0; j < RB; ++j) G[(rq + j) + (rp + i) * ld] += acc[i][j];
  }
}

using PathProduct = void (*)(const Scalar*, const Scalar*, const Index*, Index, const Scalar*, Scalar*, Index, Index,
                             Index, bool);
// indexed by 2 (rows of p == 3) + (rows of q == 3)
const PathProduct kPathProduct[4] = {add_path_product<1, 1>, add_path_product<1, 3>, add_path_product<3, 1>,
                                     add_path_product<3, 3>};

}  // namespace

void DelassusAssembler::reserve(const std::vector<const Model*>& models, Index max_contacts) {
  Index nv_max = 1, max_limits = 0;
  limited_.assign(models.size(), {});
  for (std::size_t s = 0; s < models.size(); ++s) {
    const Model* m = models[s];
    nv_max = std::max(nv_max, m->nv);
    for (Index i = 0; i < m->nb; ++i) {
      if (m->nq_joint[i] != 1 || m->nv_joint[i] != 1) continue;
      max_limits += 2;  // lower and upper
      LimitedDof ld;
      ld.iq = m->idx_q[i];
      ld.k = m->idx_v[i];
      ld.bound[0] = m->lower_position[ld.iq];
      ld.bound[1] = m->upper_position[ld.iq];
      if (!std::isfinite(ld.bound[0]) && !std::isfinite(ld.bound[1])) continue;
      for (Index a = ld.k; a >= 0; a = m->dof_parent[a]) ++ld.len;
      limited_[s].push_back(ld);
    }
  }
  max_rows_ = 3 * max_contacts + max_limits;
  max_pieces_ = std::max<Index>(1, 2 * max_contacts + max_limits);
  nv_max_ = nv_max;
  const Index R = std::max<Index>(1, max_rows_);
  G_.setZero(R, R);
  c_.setZero(R);
  mu_.setZero(std::max<Index>(1, max_contacts));
  v_before_.setZero(R);
  depth_.setZero(R);
  restitution_.setZero(R);
  target_.setZero(R);
  inelastic_target_.setZero(R);
  bounce_.setZero(R);
  position_target_.setZero(R);
  frames_.assign(static_cast<std::size_t>(std::max<Index>(1, max_contacts)), Mat3::Identity());
  rows_.clear();
  rows_.reserve(static_cast<std::size_t>(R));
  pieces_.clear();
  pieces_.reserve(static_cast<std::size_t>(max_pieces_));
  sys_pieces_.resize(models.size());
  for (auto& list : sys_pieces_) {
    list.clear();
    list.reserve(static_cast<std::size_t>(max_pieces_));
  }
  dofs_.assign(static_cast<std::size_t>(max_pieces_ * nv_max), 0);
  Y_.setZero(3 * max_pieces_ * nv_max);
  r_.setZero(nv_max);
  nc_ = nl_ = 0;
}

DelassusAssembler::Piece& DelassusAssembler::add_piece(Index system, Index row, Index nrows) {
  IMPULSE_ASSERT(static_cast<Index>(pieces_.size()) < max_pieces_);
  Piece p;
  p.system = system;
  p.row = row;
  p.nrows = nrows;
  p.offset = static_cast<Index>(pieces_.size()) * nv_max_;
  sys_pieces_[static_cast<std::size_t>(system)].push_back(static_cast<Index>(pieces_.size()));
  pieces_.push_back(p);
  return pieces_.back();
}

void DelassusAssembler::assemble(const std::vector<SystemView>& systems, const std::vector<Index>& object_system,
                                 const ContactSet& contacts, Scalar dt, const DelassusSettings& st) {
  IMPULSE_ASSERT(systems.size() == sys_pieces_.size());
  for (auto& list : sys_pieces_) list.clear();
  pieces_.clear();
  rows_.clear();
  nc_ = std::min<Index>(contacts.size(), static_cast<Index>(frames_.size()));
  nl_ = 0;

  // contact rows: J_i = C_i^T (J_A(p) - J_B(p)), one piece per dynamic side; Y = L^-T J^T on the
  // side's path, c = J u_free and v- = J u accumulated on it
  for (Index i = 0; i < nc_; ++i) {
    const Contact& ct = contacts[i];
    const Mat3 C = contact_frame_from_normal(ct.normal);
    frames_[static_cast<std::size_t>(i)] = C;
    mu_[i] = ct.mu;
    depth_[3 * i + 2] = ct.depth;
    restitution_[3 * i + 2] = ct.restitution;
    rows_.push_back({ConstraintRow::Kind::Contact, i, -1, 1, 3 * i});
    Vec3 c = Vec3::Zero(), v = Vec3::Zero();
    const Index sides[2][2] = {{ct.object_a, ct.body_a}, {ct.object_b, ct.body_b}};
    for (int side = 0; side < 2; ++side) {
      const Index obj = sides[side][0], body = sides[side][1];
      if (obj < 0 || obj >= static_cast<Index>(object_system.size())) continue;
      const Index s = object_system[static_cast<std::size_t>(obj)];
      if (s < 0 || body < 0) continue;
      const Model& m = *systems[s].model;
      const Data& d = *systems[s].data;
      if (branch_last_dof(m, body) < 0) continue;  // welded to the world: no dofs, zero rows
      Piece& p = add_piece(s, 3 * i, 3);
      Index* dofs = dofs_.data() + p.offset;
      Scalar* Y = Y_.data() + 3 * p.offset;
      const Mat3 R = (side == 0 ? 1.0 : -1.0) * C.transpose();
      p.len = point_jacobian_branch(m, d, body, ct.position, R, dofs, Y);
      const Scalar* uf = systems[s].u_free->data();
      const Scalar* u = systems[s].u->data();
      for (Index t = 0; t < p.len; ++t) {
        const Scalar a = uf[dofs[t]], b = u[dofs[t]];
        for (int r = 0; r < 3; ++r) {
          c[r] += Y[3 * t + r] * a;
          v[r] += Y[3 * t + r] * b;
        }
      }
      solve_LT_path<3>(d.M, dofs, p.len, Y);
    }
    c_.segment<3>(3 * i) = c;
    v_before_.segment<3>(3 * i) = v;
  }

  // joint-limit rows: +e_k at a lower limit, -e_k at an upper one, when within the margin or
  // when the free motion would cross the limit in this step; Y = L^-T (+-e_k) on the path of k
  Index row = 3 * nc_;
  for (std::size_t s = 0; s < systems.size() && st.joint_limits; ++s) {
    const Model& m = *systems[s].model;
    const Data& d = *systems[s].data;
    const VecX& q = *systems[s].q;
    const VecX& uf = *systems[s].u_free;
    for (const LimitedDof& ld : limited_[s]) {
      const Index iq = ld.iq, k = ld.k;
      for (int side = 0; side < 2; ++side) {
        const Scalar bound = ld.bound[side];
        if (!std::isfinite(bound) || row >= max_rows_) continue;
        const Scalar sign = side == 0 ? 1.0 : -1.0;
        const Scalar dist = sign * (q[iq] - bound);
        if (dist > st.limit_margin && dist + dt * sign * uf[k] > 0) continue;
        Piece& p = add_piece(static_cast<Index>(s), row, 1);
        Index* dofs = dofs_.data() + p.offset;
        Scalar* Y = Y_.data() + 3 * p.offset;
        p.len = ld.len;
        for (Index a = k, t = ld.len - 1; a >= 0; a = m.dof_parent[a], --t) {
          dofs[t] = a;
          Y[3 * t] = 0;
        }
        Y[3 * (ld.len - 1)] = sign;
        solve_LT_path<1>(d.M, dofs, ld.len, Y);
        c_[row] = sign * uf[k];
        v_before_[row] = sign * (*systems[s].u)[k];
        rows_.push_back({ConstraintRow::Kind::Limit, k, static_cast<Index>(s), sign, row});
        depth_[row] = -dist;
        restitution_[row] = 0;
        ++row;
        ++nl_;
      }
    }
  }
  const Index n = 3 * nc_ + nl_;

  // G = sum_s Y_s^T D_s^-1 Y_s, piece by piece: pieces p, q of one system overlap on the common
  // root part of their paths (the same leading dofs, as both lists are root first)
  G_.topLeftCorner(n, n).setZero();
  for (std::size_t s = 0; s < systems.size(); ++s) {
    const std::vector<Index>& list = sys_pieces_[s];
    const Scalar* Dinv = systems[s].data->Dinv.data();
    for (std::size_t a = 0; a < list.size(); ++a) {
      const Piece& p = pieces_[static_cast<std::size_t>(list[a])];
      const Index* dp = dofs_.data() + p.offset;
      const Scalar* Yp = Y_.data() + 3 * p.offset;
      for (std::size_t b = a; b < list.size(); ++b) {
        const Piece& q = pieces_[static_cast<std::size_t>(list[b])];
        const Index* dq = dofs_.data() + q.offset;
        const Index lmax = std::min(p.len, q.len);
        Index len = 0;
        while (len < lmax && dp[len] == dq[len]) ++len;
        if (len == 0) continue;
        const Scalar* Yq = Y_.data() + 3 * q.offset;
        kPathProduct[2 * (p.nrows == 3) + (q.nrows == 3)](Yp, Yq, dp, len, Dinv, G_.data(), G_.rows(), p.row, q.row,
                                                          a != b);
      }
    }
  }

  // targets b of the normal and limit rows, folded into c (see the header)
  // (`bounce`: set to e when the Poisson law leaves this row's restitution to the stepper;
  // `inelastic`: the target without the restitution term, for the stepper's Newton bound)
  // bounded push-out velocity of the position-error correction (DelassusSettings)
  auto push_out = [&](Scalar depth) {
    return std::min(st.erp * std::max(Scalar(0), depth - st.slop) / dt, st.max_push_velocity);
  };
  auto target = [&](Scalar depth, Scalar v_before, Scalar v_free, Scalar e, Scalar& bounce, Scalar& inelastic) {
    bounce = 0;
    const Scalar gap = -depth;
    // Not reached this step: neither the velocity before the step nor the free velocity after it
    // (which moves q in semi-implicit Euler) closes the gap. With v_before alone, a row reached
    // only because of this step's gravity impulse took a plastic speculative target and never
    // bounced (a 1e-3 relative energy loss at 10 m/s).
    if (gap > 0 && gap > -std::min(v_before, v_free) * dt) return inelastic = -gap / dt;
    Scalar b = -std::max(gap, Scalar(0)) / dt;
    // (only on penetrating rows: max(b, 0) on a row still apart would stop the body short of
    // the surface, hovering at up to |v| dt above it, and every later approach again)
    if (st.erp > 0 && st.position_correction == PositionCorrection::Velocity && depth > st.slop) {
      b = std::max(b, push_out(depth));
    }
    inelastic = b;
    if (e > 0 && -v_before > st.restitution_threshold) {
      if (st.restitution_law == RestitutionLaw::Newton) {
        // e times the approach velocity before the step (not the free velocity, which holds
        // this step's gravity impulse: v+ = -e v- keeps a ball's discrete energy exactly at e = 1)
        if (-e * v_before > b) ++n_newton_;
        b = std::max(b, -e * v_before);
      } else {  // the impact happens in this step: compress fully (v_n+ >= 0), bounce after
        bounce = e;
        b = std::max(b, Scalar(0));
      }
    }
    return b;
  };
  target_.head(n).setZero();
  inelastic_target_.head(n).setZero();
  bounce_.head(n).setZero();
  position_target_.head(n).setZero();
  n_bounce_ = n_position_ = n_newton_ = 0;
  const bool split = st.erp > 0 && st.position_correction == PositionCorrection::Split;
  for (const ConstraintRow& cr : rows_) {
    const Index r = cr.kind == ConstraintRow::Kind::Contact ? cr.row + 2 : cr.row;
    target_[r] = target(depth_[r], v_before_[r], c_[r], restitution_[r], bounce_[r], inelastic_target_[r]);
    c_[r] -= target_[r];
    n_bounce_ += bounce_[r] > 0;
    if (split && depth_[r] > st.slop) {
      position_target_[r] = push_out(depth_[r]);
      ++n_position_;
    }
  }
}

ContactProblem DelassusAssembler::problem() const {
  const Index n = 3 * nc_ + nl_;
  return ContactProblem(G_.topLeftCorner(n, n), c_.head(n), mu_.head(std::max<Index>(nc_, 0)), nc_, nl_);
}

void DelassusAssembler::apply(const std::vector<SystemView>& systems, const VecXcref& lambda,
                              std::vector<VecX>& u_next) {
  // M~^-1 J^T lambda = L^-1 D^-1 (Y lambda), Y lambda summed over the pieces' paths
  for (std::size_t s = 0; s < systems.size(); ++s) {
    const Model& m = *systems[s].model;
    const Data& d = *systems[s].data;
    if (sys_pieces_[s].empty()) {
      u_next[s] = *systems[s].u_free;
      continue;
    }
    auto r = r_.head(m.nv);
    r.setZero();
    for (const Index pi : sys_pieces_[s]) {
      const Piece& p = pieces_[static_cast<std::size_t>(pi)];
      const Index* dofs = dofs_.data() + p.offset;
      const Scalar* Y = Y_.data() + 3 * p.offset;
      for (Index t = 0; t < p.len; ++t) {
        Scalar acc = 0;
        for (Index i = 0; i < p.nrows; ++i) acc += Y[3 * t + i] * lambda[p.row + i];
        r[dofs[t]] += acc;
      }
    }
    r.array() *= d.Dinv.array();
    ltdl_solve_L(m, d, r);
    u_next[s] = *systems[s].u_free + r;
  }
}

}  // namespace impulse
