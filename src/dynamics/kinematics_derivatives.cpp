// Derivatives of frame kinematics, centre of mass and energies (Carpentier & Mansard, RSS 2018),
// world frame. See kinematics_derivatives.hpp for the equations and conventions.
#include "impulse/dynamics/kinematics_derivatives.hpp"

#include "impulse/dynamics/ltdl.hpp"
#include "joint_ops.hpp"

namespace impulse {

namespace {

void check_vec(const VecXcref& x, Index n, const char* name, const char* size_name) {
  IMPULSE_CHECK(x.size() == n, name, " has size ", x.size(), ", the model needs ", size_name, " = ", n);
}

void check_mat(const Model& model, const MatXref& X, Index rows, const char* name) {
  IMPULSE_CHECK(X.rows() == rows && X.cols() == model.nv, name, " is ", X.rows(), " x ", X.cols(),
                ", it must be ", rows, " x nv = ", rows, " x ", model.nv);
}

void check_body(const Model& model, Index body) {
  IMPULSE_CHECK(body >= 0 && body < model.nb, "body index ", body, " out of range [0, ", model.nb, ")");
}

const Frame& checked_frame(const Model& model, Index frame_id) {
  IMPULSE_CHECK(frame_id >= 0 && frame_id < static_cast<Index>(model.frames.size()), "frame index ", frame_id,
                " out of range [0, ", model.frames.size(), ")");
  return model.frames[static_cast<std::size_t>(frame_id)];
}

// Poses, S (data.J), and with u the twists data.ov, with udot the accelerations data.oa (no
// gravity); with `inertia` also the world inertias (data.oinertia, and data.oYcrb = them).
void forward_pass(const Model& model, Data& data, const VecXcref& q, const VecXcref* u, const VecXcref* udot,
                  bool inertia) {
  for (Index i = 0; i < model.nb; ++i) {
    detail::body_pose(model, data, i, q.data());
    const SE3& oMi = data.oMi[i];
    detail::world_subspace(model, i, oMi, data.J);
    if (inertia) {
      detail::world_inertia(model.inertia[i], oMi, data.oinertia[i]);
      data.oYcrb[i] = data.oinertia[i];
    }
    if (!u) continue;
    const Index k = model.idx_v[i], n = model.nv_joint[i], p = model.parent[i];
    Vec6& v = data.ov[i];
    Vec6& a = data.oa[i];
    const Vec6 vp = p < 0 ? Vec6::Zero().eval() : data.ov[p];
    const Vec6 ap = p < 0 ? Vec6::Zero().eval() : data.oa[p];
    if (model.joint_type[i] == JointType::Floating) {  // v_0 = [v + p x w; w], a_0 = [vd + p x wd + v x w; wd]
      const Vec3 vb = u->segment<3>(k), wb = u->segment<3>(k + 3);
      v << vb + oMi.p.cross(wb), wb;
      if (udot) {
        const Vec3 vd = udot->segment<3>(k), wd = udot->segment<3>(k + 3);
        a << vd + oMi.p.cross(wd) + vb.cross(wb), wd;
      }
    } else if (n == 0) {
      v = vp;
      if (udot) a = ap;
    } else {
      const Vec6 vJ = data.J.middleCols(k, n) * u->segment(k, n);
      v = vp + vJ;
      if (udot) a = ap + data.J.middleCols(k, n) * udot->segment(k, n) + cross_motion(v, vJ);
    }
  }
}

// The terms of dof j (kinematics_derivatives.hpp): s = S_j, beta, alpha (needs data.oa), gamma
// and Sdot_j, from the forward pass' twists and accelerations.
struct DofTerms {
  Vec6 s, beta, alpha, gamma, sdot;
};
DofTerms dof_terms(const Model& model, const Data& data, Index j, bool accelerations) {
  DofTerms t;
  const Index i = model.dof_body[j], p = model.parent[i];
  t.s = data.J.col(j);
  const Vec6& vi = data.ov[i];
  if (model.joint_type[i] == JointType::Floating) {
    const Index c = j - model.idx_v[i];
    const Vec3 w = vi.tail<3>(), vb = vi.head<3>() - data.oMi[i].p.cross(w);
    Vec6 dv0 = Vec6::Zero(), da0 = Vec6::Zero(), dc0 = Vec6::Zero();
    t.sdot.setZero();
    if (c < 3) {
      const Vec3 e = Vec3::Unit(c);
      dv0.head<3>() = e.cross(w);
      if (accelerations) da0.head<3>() = e.cross(Vec3(data.oa[i].tail<3>()));
      dc0.head<3>() = e.cross(w);
    } else {
      dc0.head<3>() = vb.cross(Vec3::Unit(c - 3));
      t.sdot.head<3>() = dc0.head<3>();
    }
    t.beta = dv0 - cross_motion(t.s, vi);
    t.gamma = dc0 - cross_motion(t.s, vi);
    if (accelerations) t.alpha = da0 - cross_motion(t.s, data.oa[i]) + cross_motion(vi, t.beta);
  } else {
    const Vec6 vl = p < 0 ? Vec6::Zero().eval() : data.ov[p];
    t.beta = cross_motion(vl, t.s);
    t.gamma = cross_motion(vl + vi, t.s);
    t.sdot = cross_motion(vi, t.s);
    if (accelerations) {
      const Vec6 al = p < 0 ? Vec6::Zero().eval() : data.oa[p];
      t.alpha = cross_motion(al, t.s) + cross_motion(vl, t.beta);
    }
  }
  return t;
}

// f(k) for every dof k supporting `body`, leaf to root.
template <class F>
void for_each_support_dof(const Model& model, Index body, F&& f) {
  for (Index k = branch_last_dof(model, body); k >= 0; k = model.dof_parent[k]) f(k);
}

// Backward accumulation of the subtree inertias (data.oYcrb) and momenta (data.of); returns the
// total mass.
Scalar accumulate_subtrees(const Model& model, Data& data, bool momenta) {
  Scalar m = 0;
  for (Index i = model.nb - 1; i >= 0; --i) {
    const Index p = model.parent[i];
    if (p >= 0) {
      data.oYcrb[p] += data.oYcrb[i];
      if (momenta) data.of[p] += data.of[i];
    } else {
      m += data.oYcrb[i].m;
    }
  }
  return m;
}

// Sum over the root bodies of a per-subtree quantity.
template <class T, class F>
T sum_roots(const Model& model, F&& f, T zero) {
  for (Index i = 0; i < model.nb; ++i) {
    if (model.parent[i] < 0) zero += f(i);
  }
  return zero;
}

}  // namespace

void compute_kinematics_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                    const VecXcref& udot) {
  check_vec(q, model.nq, "q", "nq");
  check_vec(u, model.nv, "u", "nv");
  check_vec(udot, model.nv, "udot", "nv");
  forward_pass(model, data, q, &u, &udot, false);
}

void point_velocity_derivatives(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref dv_dq,
                                MatXref dv_du) {
  check_body(model, body);
  check_mat(model, dv_dq, 6, "dv_dq");
  check_mat(model, dv_du, 6, "dv_du");
  dv_dq.setZero();
  dv_du.setZero();
  const Vec3 p = data.oMi[body].act_point(p_B);
  const Vec6& V = data.ov[body];
  const Vec3 w = V.tail<3>();
  for_each_support_dof(model, body, [&](Index k) {
    const DofTerms t = dof_terms(model, data, k, false);
    const Vec6 dV = cross_motion(t.s, V) + t.beta;
    const Vec3 dp = t.s.head<3>() + t.s.tail<3>().cross(p);
    dv_dq.col(k) << dV.head<3>() + dV.tail<3>().cross(p) + w.cross(dp), dV.tail<3>();
    dv_du.col(k) << dp, t.s.tail<3>();
  });
}

void point_acceleration_derivatives(const Model& model, const Data& data, Index body, const Vec3& p_B,
                                    MatXref da_dq, MatXref da_du, MatXref da_dudot) {
  check_body(model, body);
  check_mat(model, da_dq, 6, "da_dq");
  check_mat(model, da_du, 6, "da_du");
  check_mat(model, da_dudot, 6, "da_dudot");
  da_dq.setZero();
  da_du.setZero();
  da_dudot.setZero();
  const Vec3 p = data.oMi[body].act_point(p_B);
  const Vec6& V = data.ov[body];
  const Vec6& A = data.oa[body];
  const Vec3 w = V.tail<3>(), vP = V.head<3>() + w.cross(p);
  for_each_support_dof(model, body, [&](Index k) {
    const DofTerms t = dof_terms(model, data, k, true);
    const Vec3 dp = t.s.head<3>() + t.s.tail<3>().cross(p);
    // q: a_P = A.lin + A.ang x p + w x v_P, every factor differentiated
    const Vec6 dV = cross_motion(t.s, V) + t.beta;
    const Vec6 dA = cross_motion(t.s, A) + t.alpha + cross_motion(t.beta, V);
    const Vec3 dvP = dV.head<3>() + dV.tail<3>().cross(p) + w.cross(dp);
    da_dq.col(k) << dA.head<3>() + dA.tail<3>().cross(p) + A.tail<3>().cross(dp) + dV.tail<3>().cross(vP) +
                        w.cross(dvP),
        dA.tail<3>();
    // u: p fixed, dw = s.ang, dv_P = dp
    const Vec6 dAu = cross_motion(t.s, V) + t.gamma;
    da_du.col(k) << dAu.head<3>() + dAu.tail<3>().cross(p) + t.s.tail<3>().cross(vP) + w.cross(dp), dAu.tail<3>();
    da_dudot.col(k) << dp, t.s.tail<3>();
  });
}

void point_jacobian_time_variation(const Model& model, const Data& data, Index body, const Vec3& p_B, MatXref dJ) {
  check_body(model, body);
  check_mat(model, dJ, 6, "dJ");
  dJ.setZero();
  const Vec3 p = data.oMi[body].act_point(p_B);
  const Vec6& V = data.ov[body];
  const Vec3 vP = V.head<3>() + V.tail<3>().cross(p);
  for_each_support_dof(model, body, [&](Index k) {
    const DofTerms t = dof_terms(model, data, k, false);
    // d/dt [s.lin + s.ang x p; s.ang]
    dJ.col(k) << t.sdot.head<3>() + t.sdot.tail<3>().cross(p) + t.s.tail<3>().cross(vP), t.sdot.tail<3>();
  });
}

void frame_velocity_derivatives(const Model& model, const Data& data, Index frame_id, MatXref dv_dq, MatXref dv_du) {
  const Frame& f = checked_frame(model, frame_id);
  if (f.body < 0) {  // a frame on the world does not move
    check_mat(model, dv_dq, 6, "dv_dq");
    check_mat(model, dv_du, 6, "dv_du");
    dv_dq.setZero();
    dv_du.setZero();
    return;
  }
  point_velocity_derivatives(model, data, f.body, f.X_BF.p, dv_dq, dv_du);
}

void frame_acceleration_derivatives(const Model& model, const Data& data, Index frame_id, MatXref da_dq,
                                    MatXref da_du, MatXref da_dudot) {
  const Frame& f = checked_frame(model, frame_id);
  if (f.body < 0) {
    check_mat(model, da_dq, 6, "da_dq");
    check_mat(model, da_du, 6, "da_du");
    check_mat(model, da_dudot, 6, "da_dudot");
    da_dq.setZero();
    da_du.setZero();
    da_dudot.setZero();
    return;
  }
  point_acceleration_derivatives(model, data, f.body, f.X_BF.p, da_dq, da_du, da_dudot);
}

void frame_jacobian_time_variation(const Model& model, const Data& data, Index frame_id, MatXref dJ) {
  const Frame& f = checked_frame(model, frame_id);
  if (f.body < 0) {
    check_mat(model, dJ, 6, "dJ");
    dJ.setZero();
    return;
  }
  point_jacobian_time_variation(model, data, f.body, f.X_BF.p, dJ);
}

void center_of_mass_jacobian(const Model& model, Data& data, const VecXcref& q, MatXref Jcom) {
  check_vec(q, model.nq, "q", "nq");
  check_mat(model, Jcom, 3, "Jcom");
  forward_pass(model, data, q, nullptr, nullptr, true);
  const Scalar m = accumulate_subtrees(model, data, false);
  data.com = sum_roots<Vec3>(model, [&](Index i) { return data.oYcrb[i].h; }, Vec3::Zero()) / m;
  for (Index j = 0; j < model.nv; ++j) {
    const WorldInertia& Ic = data.oYcrb[model.dof_body[j]];
    const Vec6 s = data.J.col(j);
    Jcom.col(j) = (Ic.m * s.head<3>() + s.tail<3>().cross(Ic.h)) / m;
  }
}

void center_of_mass_velocity_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                         MatXref dvcom_dq, MatXref dvcom_du, MatXref Jcom_dot) {
  check_vec(q, model.nq, "q", "nq");
  check_vec(u, model.nv, "u", "nv");
  check_mat(model, dvcom_dq, 3, "dvcom_dq");
  check_mat(model, dvcom_du, 3, "dvcom_du");
  check_mat(model, Jcom_dot, 3, "Jcom_dot");
  forward_pass(model, data, q, &u, nullptr, true);
  for (Index i = 0; i < model.nb; ++i) data.of[i] = data.oinertia[i].apply(data.ov[i]);
  const Scalar m = accumulate_subtrees(model, data, true);
  data.com = sum_roots<Vec3>(model, [&](Index i) { return data.oYcrb[i].h; }, Vec3::Zero()) / m;
  data.vcom = sum_roots<Vec3>(model, [&](Index i) { return Vec3(data.of[i].head<3>()); }, Vec3::Zero()) / m;
  for (Index j = 0; j < model.nv; ++j) {
    const Index i = model.dof_body[j];
    const WorldInertia& Ic = data.oYcrb[i];
    const Vec3 P = data.of[i].head<3>();  // linear momentum of the subtree
    const DofTerms t = dof_terms(model, data, j, false);
    dvcom_dq.col(j) = (t.s.tail<3>().cross(P) + Ic.apply(t.beta).head<3>()) / m;
    dvcom_du.col(j) = (Ic.m * t.s.head<3>() + t.s.tail<3>().cross(Ic.h)) / m;
    Jcom_dot.col(j) = (Ic.m * t.sdot.head<3>() + t.sdot.tail<3>().cross(Ic.h) + t.s.tail<3>().cross(P)) / m;
  }
}

void kinetic_energy_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                VecXref dT_dq, VecXref dT_du) {
  check_vec(q, model.nq, "q", "nq");
  check_vec(u, model.nv, "u", "nv");
  check_vec(dT_dq, model.nv, "dT_dq", "nv");
  check_vec(dT_du, model.nv, "dT_du", "nv");
  forward_pass(model, data, q, &u, nullptr, true);
  Scalar T = 0;
  for (Index i = 0; i < model.nb; ++i) {
    data.of[i] = data.oinertia[i].apply(data.ov[i]);
    T += data.ov[i].dot(data.of[i]);
  }
  data.kinetic = 0.5 * T;
  accumulate_subtrees(model, data, true);
  for (Index j = 0; j < model.nv; ++j) {
    const Vec6& H = data.of[model.dof_body[j]];
    const DofTerms t = dof_terms(model, data, j, false);
    dT_dq[j] = H.dot(t.beta);
    dT_du[j] = H.dot(t.s);
  }
}

void potential_energy_derivatives(const Model& model, Data& data, const VecXcref& q, VecXref dV_dq) {
  check_vec(q, model.nq, "q", "nq");
  check_vec(dV_dq, model.nv, "dV_dq", "nv");
  forward_pass(model, data, q, nullptr, nullptr, true);
  const Vec3& g = data.gravity;
  data.potential = 0;
  for (Index i = 0; i < model.nb; ++i) data.potential -= g.dot(data.oinertia[i].h);
  accumulate_subtrees(model, data, false);
  for (Index j = 0; j < model.nv; ++j) {
    const WorldInertia& Ic = data.oYcrb[model.dof_body[j]];
    const Vec6 s = data.J.col(j);
    dV_dq[j] = -g.dot(Ic.m * s.head<3>() + s.tail<3>().cross(Ic.h));
  }
}

}  // namespace impulse
