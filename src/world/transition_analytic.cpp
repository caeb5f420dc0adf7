// World::analytic_transition_derivatives: the step Jacobians A = dx+/dx, B = dx+/dtau of one
// step, analytically, by the implicit function theorem on the solved contact problem's active set
// (docs/dynamics.md, "Step Jacobians"; transition_derivatives.hpp for the layout of x).
//
// The step, per system (stepper.cpp, dynamics_stage): with a+ = (u+ - u) / dt,
//   F(q, u, tau, u+, lambda) = dt rnea(q, u, a+) - dt tau + dt D u+ - dt Kp (q* - q - dt u+)
//                              - dt Kd (u* - u+) - J(q)^T lambda = 0,
// whose u+-derivative is M~ = M + dt (D + Kd) + dt^2 Kp. The solved impulses fix the mode of each
// row: an open contact (lambda_n = 0) or limit is absent; a sticking contact (inside its cone)
// holds J_i u+ = b_i on its 3 rows; a sliding one holds its normal row and
// lambda_t = -mu lambda_n s, s = v_t / |v_t|, v_t = J_t u+; an active limit, or a joint-friction
// row inside its box, holds J_r u+ = b_r; a friction row at its bound keeps its impulse. The
// targets b move with the penetration (d depth / dq = -J_r: a gap closed in this step, b = depth /
// dt). Differentiating these equations gives one linear system for (du+, dlambda) per input
// column, solved for all 3 NV columns at once.
//
// q+ = q (+) dt u_q with u_q = u+ (semi-implicit Euler), or under the split position correction
// u_q = u+ + M~^-1 J^T lambda_p, the push-out impulses of the rows where lambda_p > 0 solving
// J_P (u_q - u+) = erp max(0, depth - slop) / dt: a second linear system of the same form. Free
// bodies in flight move q by the midpoint (u + u+) / 2, and a damping-free articulated system in
// flight takes Heun's velocity update u+ = u_q + dt/2 aba(q+, u_free, tau), or with a free-flight
// history (SystemState::flight_*) the two-step update u+ = u_q + (u_free - u) - dt/2 (a_prev +
// M^-1 (g - g_prev)), whose Jacobian holds the history a_prev, g_prev fixed (as the finite
// differences do).
//
// The q-derivatives of J enter as d(J^T lambda)/dq and d(J v)/dq at fixed lambda and v. A contact
// point p (on body A, against a static plane) moves with the shape's witness point w (a vertex, or
// the centre of a sphere's or capsule's rounded end): dp = (I - n n^T / 2) dw, the contact sitting
// midway between the shape and the plane; the normal and the contact frame are fixed. Between
// two moving spheres, a moving sphere and a moving box, or two moving boxes in a face contact,
// the normal, the point and the frame
// follow both poses as the narrow phase computes them (manifold.cpp), which adds the frame's turn
// dC to both derivatives; other pairs between two moving bodies hold the normal fixed (an
// approximation, docs/dynamics.md).
// Restitution, per-row position weights (an impact under the midpoint update) and mimic rows are
// not differentiated (Error: use finite differences).
#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/Cholesky>
#include <Eigen/QR>

#include "impulse/contact/delassus.hpp"
#include "impulse/dynamics/rnea_derivatives.hpp"
#include "impulse/stepper/stepper.hpp"
#include "impulse/world/world.hpp"

namespace impulse {

namespace {

using Vec2 = Eigen::Matrix<Scalar, 2, 1>;
using Mat2 = Eigen::Matrix<Scalar, 2, 2>;

// a x b for motion vectors [v; w] (world frame at the origin)
Vec6 motion_cross(const Vec6& a, const Vec6& b) {
  Vec6 r;
  r.head<3>() = a.tail<3>().cross(b.head<3>()) + a.head<3>().cross(b.tail<3>());
  r.tail<3>() = a.tail<3>().cross(b.tail<3>());
  return r;
}

Mat3 skew3(const Vec3& v) {
  Mat3 S;
  S << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return S;
}

// Left Jacobian of SO(3): exp(phi + d) = exp(Jl(phi) d) exp(phi) to first order.
Mat3 so3_left_jacobian(const Vec3& phi) {
  const Scalar t = phi.norm();
  const Mat3 K = skew3(phi);
  if (t < 1e-6) return Mat3::Identity() + 0.5 * K + K * K / 6;
  return Mat3::Identity() + (1 - std::cos(t)) / (t * t) * K + (t - std::sin(t)) / (t * t * t) * K * K;
}

Mat3 so3_exp(const Vec3& phi) {
  const Scalar t = phi.norm();
  if (t < 1e-12) return Mat3::Identity() + skew3(phi);
  return Eigen::AngleAxis<Scalar>(t, phi / t).toRotationMatrix();
}

// q+ = q (+) v: d dq+ = Dq dq + Dv dv in tangent coordinates (joint.cpp: world-frame left product
// for the floating joint, body-frame right product for the spherical one).
void integrate_jacobians(const Model& m, const VecX& v, MatX& Dq, MatX& Dv) {
  Dq.setIdentity(m.nv, m.nv);
  Dv.setIdentity(m.nv, m.nv);
  for (Index b = 0; b < m.nb; ++b) {
    const Index k = m.idx_v[b];
    if (m.joint_type[b] == JointType::Floating) {
      const Vec3 w = v.segment<3>(k + 3);
      Dq.block<3, 3>(k + 3, k + 3) = so3_exp(w);
      Dv.block<3, 3>(k + 3, k + 3) = so3_left_jacobian(w);
    } else if (m.joint_type[b] == JointType::Spherical) {
      const Vec3 w = v.segment<3>(k);
      Dq.block<3, 3>(k, k) = so3_exp(w).transpose();
      Dv.block<3, 3>(k, k) = so3_left_jacobian(w).transpose();
    }
  }
}

// d S_k / d q_j (S = data.J, world frame) for dof j on the path of dof k: a joint above moves S_k
// with its twist (S_j x S_k); inside one joint, the floating root's angular columns [p x e; e]
// move with its translation only, a spherical joint's body-fixed columns rotate with it.
Vec6 subspace_derivative(const Model& m, const Mat6X& S, const std::vector<Index>& body_of, Index k, Index j) {
  const Index b = body_of[static_cast<std::size_t>(k)];
  if (b == body_of[static_cast<std::size_t>(j)] && m.joint_type[b] == JointType::Floating) {
    const Index a = j - m.idx_v[b], c = k - m.idx_v[b];
    Vec6 r = Vec6::Zero();
    if (a < 3 && c >= 3) r.head<3>() = Vec3::Unit(a).cross(Vec3::Unit(c - 3));
    return r;
  }
  return motion_cross(S.col(j), S.col(k));
}

// One dynamic side of a contact: its point Jacobian on the path of its body and the derivative
// T(a, j) = d Jp_{dofs[a]} / d q_j of each path column (j over the system's dofs).
struct Side {
  Index contact = 0, system = 0;
  Scalar sign = 1;
  std::vector<Index> dofs;  // path root..body, ascending
  std::vector<Index> cols;  // the global dofs g with a nonzero T(., g): the path (and the dofs moving p)
  std::vector<Vec3> Jp;     // per path entry
  std::vector<Vec3> T;      // dofs.size() x cols.size(), row major
};

// The derivative of the contact frame C(n) = [t, n x t, n] of contact_frame_from_normal
// (delassus.cpp: t = (e - n (n . e)) / |...|, e a fixed axis) along a change dn of its normal.
Mat3 contact_frame_derivative(const Vec3& n, const Vec3& dn) {
  const Vec3 e = std::abs(n.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 t0 = e - n * n.dot(e);
  const Scalar len = t0.norm();
  const Vec3 t = t0 / len;
  const Vec3 dt0 = -(dn * n.dot(e) + n * dn.dot(e));
  const Vec3 dt = (dt0 - t * t.dot(dt0)) / len;
  Mat3 dC;
  dC.col(0) = dt;
  dC.col(1) = dn.cross(t) + n.cross(dt);
  dC.col(2) = dn;
  return dC;
}

// A contact whose frame turns with the bodies' poses: dC / dq_g for the global dofs g.
struct FrameVariation {
  Index contact = 0;
  std::vector<Index> cols;
  std::vector<Mat3> dC;
};

// S X = R for the Schur complement S of the equality rows: by LDL^T when S is symmetric (no
// sliding contact) and well conditioned, else by a complete orthogonal decomposition, whose
// minimum-norm answer serves redundant rows (a box on 4 corners: S singular, R in its range).
MatX solve_schur(const MatX& S, const MatX& R, bool symmetric) {
  if (symmetric) {
    const Eigen::LDLT<MatX> f(S);
    const VecX d = f.vectorD().cwiseAbs();
    if (f.info() == Eigen::Success && d.size() > 0 && d.minCoeff() > 1e-10 * d.maxCoeff()) return f.solve(R);
  }
  return S.completeOrthogonalDecomposition().solve(R);
}

[[noreturn]] void unsupported(const std::string& what) {
  throw Error("transition_derivatives: the analytic method does not differentiate " + what +
              " in this step; use method FiniteDifference");
}

}  // namespace

TransitionJacobians World::analytic_transition_derivatives() {
  const Scalar dt = model_->settings.dt;
  const DelassusSettings& cs = model_->settings.contact;
  const std::size_t ns = systems_.size();
  std::vector<Index> v0(ns + 1, 0);
  for (std::size_t s = 0; s < ns; ++s) v0[s + 1] = v0[s] + systems_[s]->model().nv;
  const Index NV = v0[ns];
  // the inputs of the step (the external wrenches are cleared by it)
  std::vector<VecX> q(ns), u(ns), tau(ns), force_prev(ns);
  std::vector<Vec6Vector> fext(ns);
  std::vector<unsigned char> has_f(ns, 0);
  for (std::size_t s = 0; s < ns; ++s) {
    const SystemState& x = data_.systems[s];
    q[s] = x.q;
    u[s] = x.u;
    tau[s] = x.tau;
    force_prev[s] = x.flight_force;  // (the free-flight history's input, which the step replaces)
    has_f[s] = x.has_f_ext;
    if (x.has_f_ext) fext[s] = x.f_ext;
  }
  const StepReport report = integrate();
  if (!report.stepped) {
    throw Error("transition_derivatives: the step was rejected (" + describe(report) +
                "): the state has no step Jacobian there");
  }
  const Stepper& stepper = *own_stepper_;
  const DelassusAssembler& as = stepper.assembler();
  const RowArrays& ra = as.row_arrays();
  const VecX& lambda_all = stepper.lambda();
  const Index nrows = as.num_rows();
  const VecX lambda = lambda_all.head(nrows);
  if (ra.weighted) unsupported("per-row position weights (an impact under the midpoint position update)");
  if (data_.state.stats.speculative_impacts > 0) unsupported("a speculative impact");
  std::vector<VecX> uplus(ns), qplus(ns);
  VecX U(NV);
  for (std::size_t s = 0; s < ns; ++s) {
    uplus[s] = systems_[s]->u();
    qplus[s] = systems_[s]->q();
    U.segment(v0[s], uplus[s].size()) = uplus[s];
  }
  const std::vector<unsigned char>& modes = stepper.position_modes();
  // u+ of the first linear system: the post-solve velocity (u_free on a Heun system)
  for (std::size_t s = 0; s < ns; ++s) {
    if (modes[s] >= 2) U.segment(v0[s], uplus[s].size()) = step_systems_[s].scratch_->u_free;
  }

  // smooth dynamics: rnea derivatives at a+ = (u+ - u) / dt, M~ and the PD terms
  // (the step's own Data of each system: its contents are the step's, no longer needed)
  std::vector<Data*> data(ns);
  std::vector<Mat6X> S(ns);
  std::vector<std::vector<Index>> body_of(ns);
  MatX Mt = MatX::Zero(NV, NV), Fq = MatX::Zero(NV, NV), Fu = MatX::Zero(NV, NV), Ftau = MatX::Zero(NV, NV);
  std::vector<MatX> Rq1(ns), Ru1(ns);
  for (std::size_t s = 0; s < ns; ++s) {
    const Model& m = systems_[s]->model();
    data[s] = step_systems_[s].data_;
    Data& d = *data[s];
    const VecX a = (U.segment(v0[s], m.nv) - u[s]) / dt;
    MatX Rq(m.nv, m.nv), Ru(m.nv, m.nv);
    rnea_derivatives(m, d, q[s], u[s], a, Rq, Ru, has_f[s] ? &fext[s] : nullptr);
    S[s] = d.J;
    Rq1[s] = Rq;
    Ru1[s] = Ru;
    body_of[s].assign(static_cast<std::size_t>(m.nv), 0);
    for (Index b = 0; b < m.nb; ++b)
      for (Index k = m.idx_v[b]; k < m.idx_v[b] + m.nv_joint[b]; ++k) body_of[s][static_cast<std::size_t>(k)] = b;
    const Index o = v0[s];
    Mt.block(o, o, m.nv, m.nv) = d.M;
    Fq.block(o, o, m.nv, m.nv) = dt * Rq;
    Fu.block(o, o, m.nv, m.nv) = dt * Ru - d.M;
    const ArticulatedSystem& sys = *systems_[s];
    const std::vector<unsigned char>& clamped = step_systems_[s].scratch_->clamped;
    for (Index k = 0; k < m.nv; ++k) Ftau(o + k, o + k) = -dt;
    for (Index b = 0; b < m.nb; ++b) {
      if (m.nv_joint[b] != 1) {
        for (Index k = m.idx_v[b]; k < m.idx_v[b] + m.nv_joint[b]; ++k) Fu(o + k, o + k) += dt * m.damping[k];
        continue;
      }
      const Index k = m.idx_v[b];
      Mt(o + k, o + k) += dt * m.damping[k];
      if (clamped[static_cast<std::size_t>(k)]) {
        Ftau(o + k, o + k) = 0;  // the bound replaces tau + PD
        continue;
      }
      Mt(o + k, o + k) += dt * sys.kd()[k] + dt * dt * sys.kp()[k];
      Fq(o + k, o + k) += dt * sys.kp()[k];
    }
  }

  // constraint rows: J (global rows x NV) and the contact sides' derivatives
  MatX J = MatX::Zero(nrows, NV);
  std::vector<Side> sides;
  std::vector<FrameVariation> frame_vars;
  const ContactSet& contacts = data_.state.contacts;
  std::vector<Vec3> dp(static_cast<std::size_t>(NV));  // dp / dq_g over the global dofs g
  const auto system_of = [&](Index obj) -> Index {
    if (obj < 0 || obj >= static_cast<Index>(model_->object_system.size())) return -1;
    return model_->object_system[static_cast<std::size_t>(obj)];
  };
  // d x / dq_g of a point x fixed on body b of system s, for the dofs g of its path
  const auto point_motion = [&](Index s, Index b, const Vec3& x, Scalar scale, std::vector<Vec3>& out) {
    const Model& m = systems_[static_cast<std::size_t>(s)]->model();
    const Mat6X& Ss = S[static_cast<std::size_t>(s)];
    for (; b >= 0; b = m.parent[b])
      for (Index j = m.idx_v[b]; j < m.idx_v[b] + m.nv_joint[b]; ++j)
        out[static_cast<std::size_t>(v0[static_cast<std::size_t>(s)] + j)] +=
            scale * (Ss.col(j).head<3>() + Ss.col(j).tail<3>().cross(x));
  };
  // d x / dq_g of a point x on the body b of system s: its motion, and the body's turn
  const auto body_motion = [&](Index s, Index b, const Vec3& x, std::vector<Vec3>& v, std::vector<Vec3>& w) {
    const Model& m = systems_[static_cast<std::size_t>(s)]->model();
    const Mat6X& Ss = S[static_cast<std::size_t>(s)];
    for (; b >= 0; b = m.parent[b])
      for (Index j = m.idx_v[b]; j < m.idx_v[b] + m.nv_joint[b]; ++j) {
        const std::size_t g = static_cast<std::size_t>(v0[static_cast<std::size_t>(s)] + j);
        v[g] += Ss.col(j).head<3>() + Ss.col(j).tail<3>().cross(x);
        w[g] += Ss.col(j).tail<3>();
      }
  };
  // A face contact of two moving boxes (manifold.cpp, box_box and face_contact): the reference
  // box's face normal n_r (n = n_r when B's face, -n_r when A's), the point p = x - sep / 2 n_r
  // with x a point of the incident face clipped to the reference face's side planes and sep =
  // n_r . x - offset = -depth. x lies on three planes, each fixed on one box: the three faces of
  // an incident corner, two faces of an incident edge and a side plane of the reference face, or
  // the incident face and two side planes; so N dx = (N_i . v_body(i)(x))_i, dn_r = w_r x n_r,
  // dsep = n_r . (dx - v_r(x)) and dp = dx - dsep / 2 n_r - sep / 2 dn_r. The reference face is
  // chosen again as box_box does from the two poses; false (the normal held fixed) for an
  // edge-edge contact, a point on no such three planes, or a choice that does not give n.
  const auto box_face_contact = [&](Index i, const Contact& ct, Index sys_a, Index sys_b, std::vector<Vec3>& dpo,
                                    std::vector<FrameVariation>& fvs) -> bool {
    const CollisionShape shape_a = collision_.shape_description(ct.object_a, ct.shape_a);
    const CollisionShape shape_b = collision_.shape_description(ct.object_b, ct.shape_b);
    const SE3 XA = data[static_cast<std::size_t>(sys_a)]->oMi[ct.body_a] * shape_a.X_BS;
    const SE3 XB = data[static_cast<std::size_t>(sys_b)]->oMi[ct.body_b] * shape_b.X_BS;
    const Vec3 ha = 0.5 * shape_a.size, hb = 0.5 * shape_b.size;
    const Vec3 d = XA.p - XB.p;
    const Mat3 absC = (XA.R.transpose() * XB.R).cwiseAbs();
    const Vec3 d_a = XA.R.transpose() * d, d_b = XB.R.transpose() * d;
    Scalar sa = -1e300, sb = -1e300;
    int ka = 0, kb = 0;
    for (int k = 0; k < 3; ++k) {
      const Scalar s1 = std::abs(d_a[k]) - ha[k] - hb.dot(absC.row(k));
      if (s1 > sa) sa = s1, ka = k;
      const Scalar s2 = std::abs(d_b[k]) - hb[k] - ha.dot(absC.col(k));
      if (s2 > sb) sb = s2, kb = k;
    }
    Scalar se = -1e300;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        Vec3 L = XA.R.col(a).cross(XB.R.col(b));
        const Scalar len = L.norm();
        if (len < 1e-6) continue;
        L /= len;
        const Scalar s3 = std::abs(d.dot(L)) - ha.dot((XA.R.transpose() * L).cwiseAbs()) -
                          hb.dot((XB.R.transpose() * L).cwiseAbs());
        se = std::max(se, s3);
      }
    if (se > std::max(sa, sb) + 1e-4) return false;  // edge-edge
    const bool ref_b = sb >= sa - 1e-5;
    const SE3& XR = ref_b ? XB : XA;
    const SE3& XI = ref_b ? XA : XB;
    const Vec3& hr = ref_b ? hb : ha;
    const Vec3& hi = ref_b ? ha : hb;
    const int kr = ref_b ? kb : ka;
    const Vec3 nr = ref_b ? Vec3(d_b[kb] >= 0 ? Vec3(XB.R.col(kb)) : Vec3(-XB.R.col(kb)))
                          : Vec3(d_a[ka] >= 0 ? Vec3(-XA.R.col(ka)) : Vec3(XA.R.col(ka)));
    if ((ref_b ? nr : Vec3(-nr)).dot(ct.normal) < 1 - 1e-9) return false;
    const Scalar sep = -ct.depth;
    const Vec3 x = ct.position + 0.5 * sep * nr;
    // the planes through x: the incident box's faces, then the reference face's side planes
    Mat3 N;
    int side_of[3];
    int count = 0;
    const Vec3 xi = XI.R.transpose() * (x - XI.p), xr = XR.R.transpose() * (x - XR.p);
    const Scalar tol = 1e-9 * std::max(hi.maxCoeff(), hr.maxCoeff());
    for (int k = 0; k < 3; ++k)
      if (std::abs(std::abs(xi[k]) - hi[k]) <= tol && count < 3) N.row(count) = XI.R.col(k).transpose(), side_of[count++] = 0;
    for (int k = 0; k < 3; ++k)
      if (k != kr && std::abs(std::abs(xr[k]) - hr[k]) <= tol && count < 3)
        N.row(count) = XR.R.col(k).transpose(), side_of[count++] = 1;
    if (count < 3 || std::abs(N.determinant()) < 1e-6) return false;
    const Mat3 Ninv = N.inverse();
    std::vector<Vec3> vi(static_cast<std::size_t>(NV), Vec3::Zero()), wi = vi, vr = vi, wr = vi;
    const Index sys_i = ref_b ? sys_a : sys_b, body_i = ref_b ? ct.body_a : ct.body_b;
    const Index sys_r = ref_b ? sys_b : sys_a, body_r = ref_b ? ct.body_b : ct.body_a;
    body_motion(sys_i, body_i, x, vi, wi);
    body_motion(sys_r, body_r, x, vr, wr);
    FrameVariation fv;
    fv.contact = i;
    for (Index g = 0; g < NV; ++g) {
      const std::size_t gs = static_cast<std::size_t>(g);
      if (vi[gs].isZero(0) && vr[gs].isZero(0) && wr[gs].isZero(0)) continue;
      Vec3 rhs;
      for (int r = 0; r < 3; ++r) rhs[r] = N.row(r).dot(side_of[r] == 0 ? vi[gs] : vr[gs]);
      const Vec3 dx = Ninv * rhs;
      const Vec3 dnr = wr[gs].cross(nr);
      const Scalar dsep = nr.dot(dx - vr[gs]);
      dpo[gs] = dx - 0.5 * dsep * nr - 0.5 * sep * dnr;
      fv.cols.push_back(g);
      fv.dC.push_back(contact_frame_derivative(ct.normal, ref_b ? dnr : Vec3(-dnr)));
    }
    fvs.push_back(std::move(fv));
    return true;
  };
  for (Index i = 0; i < as.num_contacts(); ++i) {
    if (as.contact_island(i) < 0) continue;
    const Contact& ct = contacts[i];
    const Mat3& C = as.contact_frame(i);
    const Vec3 n = ct.normal;
    // witness point of side A: the contact sits halfway between it and B's surface
    Vec3 w = ct.position - 0.5 * ct.depth * n;
    const Index sys_a = system_of(ct.object_a), sys_b = system_of(ct.object_b);
    ShapeType type_a = ShapeType::Box, type_b = ShapeType::Box;
    Scalar r_a = 0, r_b = 0;
    if (sys_a >= 0) {
      const CollisionShape sh = collision_.shape_description(ct.object_a, ct.shape_a);
      type_a = sh.type;
      r_a = sh.size[0];
      if (sh.type == ShapeType::Sphere || sh.type == ShapeType::Capsule) w += sh.size[0] * n;
    }
    if (sys_b >= 0) {
      const CollisionShape sh = collision_.shape_description(ct.object_b, ct.shape_b);
      type_b = sh.type;
      r_b = sh.size[0];
    }
    std::fill(dp.begin(), dp.end(), Vec3::Zero());
    if (sys_a >= 0 && sys_b >= 0 && ct.body_a >= 0 && ct.body_b >= 0 && type_a == ShapeType::Sphere &&
        type_b == ShapeType::Sphere) {
      // two moving spheres (manifold.cpp, sphere_sphere): with the centres c_a = w, c_b = c_a - d n,
      // d = r_a + r_b - depth, the normal n = (c_a - c_b) / d, the point p = (c_a + c_b) / 2 +
      // (r_b - r_a) / 2 n and the frame C(n) (contact_frame_from_normal) all move with both centres:
      // dn = (1 - n n^T) (dc_a - dc_b) / d, dp = (dc_a + dc_b) / 2 + (r_b - r_a) / 2 dn
      const Scalar d = r_a + r_b - ct.depth;
      std::vector<Vec3> dca(static_cast<std::size_t>(NV), Vec3::Zero()), dcb = dca;
      point_motion(sys_a, ct.body_a, w, 1, dca);
      point_motion(sys_b, ct.body_b, w - d * n, 1, dcb);
      const Mat3 Pt = Mat3::Identity() - n * n.transpose();
      FrameVariation fv;
      fv.contact = i;
      for (Index g = 0; g < NV; ++g) {
        const std::size_t gs = static_cast<std::size_t>(g);
        if (dca[gs].isZero(0) && dcb[gs].isZero(0)) continue;
        const Vec3 dn = Pt * (dca[gs] - dcb[gs]) / d;
        dp[gs] = 0.5 * (dca[gs] + dcb[gs]) + 0.5 * (r_b - r_a) * dn;
        fv.cols.push_back(g);
        fv.dC.push_back(contact_frame_derivative(n, dn));
      }
      frame_vars.push_back(std::move(fv));
    } else if (sys_a >= 0 && sys_b >= 0 && ct.body_a >= 0 && ct.body_b >= 0 &&
               ((type_a == ShapeType::Sphere && type_b == ShapeType::Box) ||
                (type_a == ShapeType::Box && type_b == ShapeType::Sphere))) {
      // a moving sphere against a moving box (manifold.cpp, sphere_box, with m the normal from
      // the box into the sphere, n = m or -m): in the box frame (R, o) the centre cl = R^T (c - o),
      // its clamp q to the box and the clamped coordinates K give m = R m_l, m_l = (cl - q) / |cl - q|
      // outside the box (a face, an edge or a corner), or the nearest face's e_k inside, and the
      // point p = c - (r + s) / 2 m with s = r - depth. With dcl = R^T (dc - dx), dx the box's
      // motion at c and w_g its turn:
      //   dm = w_g x m + R (1 - m_l m_l^T) K dcl / |cl - q| (the second term zero inside or on a
      //   face), ds = m_l . dcl, dp = dc - (r + s) / 2 dm - ds / 2 m
      const bool sphere_a = type_a == ShapeType::Sphere;
      const Index sys_s = sphere_a ? sys_a : sys_b, body_s = sphere_a ? ct.body_a : ct.body_b;
      const Index sys_x = sphere_a ? sys_b : sys_a, body_x = sphere_a ? ct.body_b : ct.body_a;
      const CollisionShape box = sphere_a ? collision_.shape_description(ct.object_b, ct.shape_b)
                                          : collision_.shape_description(ct.object_a, ct.shape_a);
      const Scalar r = sphere_a ? r_a : r_b;
      const Vec3 mn = sphere_a ? n : Vec3(-n);
      const Scalar sd = r - ct.depth;
      const Vec3 c = ct.position + 0.5 * (r + sd) * mn;
      const SE3 X = data[static_cast<std::size_t>(sys_x)]->oMi[body_x] * box.X_BS;
      const Vec3 h = 0.5 * box.size, cl = X.R.transpose() * (c - X.p);
      const Vec3 ml = X.R.transpose() * mn;
      Mat3 Kp = Mat3::Zero();  // (1 - m_l m_l^T) K / |cl - q| outside, 0 inside
      const Vec3 diff = cl - cl.cwiseMax(-h).cwiseMin(h);
      const Scalar dist = diff.norm();
      if (dist > 1e-12) {
        Mat3 K = Mat3::Zero();
        for (int k = 0; k < 3; ++k) K(k, k) = std::abs(cl[k]) > h[k] ? 1 : 0;
        Kp = (Mat3::Identity() - ml * ml.transpose()) * K / dist;
      }
      std::vector<Vec3> dc(static_cast<std::size_t>(NV), Vec3::Zero()), dx = dc, wx = dc;
      point_motion(sys_s, body_s, c, 1, dc);
      point_motion(sys_x, body_x, c, 1, dx);
      {
        const Model& m = systems_[static_cast<std::size_t>(sys_x)]->model();
        const Mat6X& Ss = S[static_cast<std::size_t>(sys_x)];
        for (Index b = body_x; b >= 0; b = m.parent[b])
          for (Index j = m.idx_v[b]; j < m.idx_v[b] + m.nv_joint[b]; ++j)
            wx[static_cast<std::size_t>(v0[static_cast<std::size_t>(sys_x)] + j)] += Ss.col(j).tail<3>();
      }
      FrameVariation fv;
      fv.contact = i;
      for (Index g = 0; g < NV; ++g) {
        const std::size_t gs = static_cast<std::size_t>(g);
        if (dc[gs].isZero(0) && dx[gs].isZero(0) && wx[gs].isZero(0)) continue;
        const Vec3 dcl = X.R.transpose() * (dc[gs] - dx[gs]);
        const Vec3 dm = wx[gs].cross(mn) + X.R * (Kp * dcl);
        const Scalar ds = ml.dot(dcl);
        dp[gs] = dc[gs] - 0.5 * (r + sd) * dm - 0.5 * ds * mn;
        fv.cols.push_back(g);
        fv.dC.push_back(contact_frame_derivative(n, sphere_a ? dm : Vec3(-dm)));
      }
      frame_vars.push_back(std::move(fv));
    } else if (sys_a >= 0 && sys_b >= 0 && ct.body_a >= 0 && ct.body_b >= 0 && type_a == ShapeType::Box &&
               type_b == ShapeType::Box && box_face_contact(i, ct, sys_a, sys_b, dp, frame_vars)) {
      // (a face contact of two moving boxes: box_face_contact)
    } else if (sys_a >= 0 && ct.body_a >= 0) {
      // the point moves with side A's witness point, midway to B's surface, the normal held fixed
      // (exact against a static plane; between two moving bodies other than the pairs above an
      // approximation, docs/dynamics.md)
      const Mat3 Pn = Mat3::Identity() - 0.5 * n * n.transpose();
      point_motion(sys_a, ct.body_a, w, 1, dp);
      for (Vec3& x : dp) x = Pn * x;
    }
    const Index obj[2] = {ct.object_a, ct.object_b}, body[2] = {ct.body_a, ct.body_b};
    for (int side = 0; side < 2; ++side) {
      const Index s = system_of(obj[side]);
      if (s < 0 || body[side] < 0) continue;
      const Model& m = systems_[static_cast<std::size_t>(s)]->model();
      const Mat6X& Ss = S[static_cast<std::size_t>(s)];
      const Index o = v0[static_cast<std::size_t>(s)];
      Side sd;
      sd.contact = i;
      sd.system = s;
      sd.sign = side == 0 ? 1.0 : -1.0;
      for (Index b = body[side]; b >= 0; b = m.parent[b])
        for (Index k = m.idx_v[b] + m.nv_joint[b] - 1; k >= m.idx_v[b]; --k) sd.dofs.push_back(k);
      if (sd.dofs.empty()) continue;
      std::reverse(sd.dofs.begin(), sd.dofs.end());
      const Vec3& p = ct.position;
      const std::size_t len = sd.dofs.size();
      std::vector<Index> pos(static_cast<std::size_t>(m.nv), -1);  // path entry of each dof
      for (std::size_t a = 0; a < len; ++a) pos[static_cast<std::size_t>(sd.dofs[a])] = static_cast<Index>(a);
      // the columns (global dofs): the path, and the dofs moving p
      for (const Index k : sd.dofs) sd.cols.push_back(o + k);
      for (Index g = 0; g < NV; ++g) {
        const bool on_path = g >= o && g < o + m.nv && pos[static_cast<std::size_t>(g - o)] >= 0;
        if (!on_path && !dp[static_cast<std::size_t>(g)].isZero(0)) sd.cols.push_back(g);
      }
      const std::size_t nc = sd.cols.size();
      sd.Jp.resize(len);
      sd.T.assign(len * nc, Vec3::Zero());
      const std::vector<Index>& bof = body_of[static_cast<std::size_t>(s)];
      for (std::size_t a = 0; a < len; ++a) {
        const Index k = sd.dofs[a];
        sd.Jp[a] = Ss.col(k).head<3>() + Ss.col(k).tail<3>().cross(p);
        for (int r = 0; r < 3; ++r) J(3 * i + r, o + k) += sd.sign * C.col(r).dot(sd.Jp[a]);
        const Index bk = bof[static_cast<std::size_t>(k)];
        for (std::size_t c = 0; c < nc; ++c) {
          const Index g = sd.cols[c];
          Vec3 t = Ss.col(k).tail<3>().cross(dp[static_cast<std::size_t>(g)]);
          if (g < o || g >= o + m.nv) {  // a dof of another system moves only p
            sd.T[a * nc + c] = t;
            continue;
          }
          // j on the path of k: an earlier path entry, or a dof of the same joint
          const Index j = g - o;
          const Index pj = pos[static_cast<std::size_t>(j)];
          if (bof[static_cast<std::size_t>(j)] == bk || (pj >= 0 && pj < static_cast<Index>(a))) {
            const Vec6 dS = subspace_derivative(m, Ss, bof, k, j);
            t += dS.head<3>() + dS.tail<3>().cross(p);
          }
          sd.T[a * nc + c] = t;
        }
      }
      sides.push_back(std::move(sd));
    }
  }
  for (const ConstraintRow& cr : as.rows()) {
    if (cr.kind == ConstraintRow::Kind::Contact) continue;
    if (cr.kind == ConstraintRow::Kind::Mimic) unsupported("a mimic-joint row");
    const Scalar sign = cr.kind == ConstraintRow::Kind::Limit ? cr.sign : Scalar(1);
    J(cr.row, v0[static_cast<std::size_t>(cr.system)] + cr.index) = sign;
  }
  // d(J^T f)/dq for impulses f (global rows), and d(J v)/dq for velocities v (NV): the sides'
  // terms at a fixed frame, then those of a turning frame, J_i = C_i^T sum_sides sign Jp
  const auto force_derivative = [&](const VecX& f, MatX& out) {
    out.setZero(NV, NV);
    for (const Side& sd : sides) {
      const Vec3 fl = f.segment<3>(3 * sd.contact);
      const Vec3 fw = sd.sign * (as.contact_frame(sd.contact) * fl);
      const Index o = v0[static_cast<std::size_t>(sd.system)];
      const std::size_t nc = sd.cols.size();
      for (std::size_t a = 0; a < sd.dofs.size(); ++a)
        for (std::size_t c = 0; c < nc; ++c) out(o + sd.dofs[a], sd.cols[c]) += sd.T[a * nc + c].dot(fw);
      for (const FrameVariation& fv : frame_vars) {
        if (fv.contact != sd.contact) continue;
        for (std::size_t c = 0; c < fv.cols.size(); ++c) {
          const Vec3 dfw = sd.sign * (fv.dC[c] * fl);
          for (std::size_t a = 0; a < sd.dofs.size(); ++a) out(o + sd.dofs[a], fv.cols[c]) += sd.Jp[a].dot(dfw);
        }
      }
    }
  };
  const auto velocity_derivative = [&](const VecX& v, MatX& out) {
    out.setZero(nrows, NV);
    for (const Side& sd : sides) {
      const Mat3& C = as.contact_frame(sd.contact);
      const Index o = v0[static_cast<std::size_t>(sd.system)];
      const std::size_t nc = sd.cols.size();
      for (std::size_t c = 0; c < nc; ++c) {
        Vec3 g = Vec3::Zero();
        for (std::size_t a = 0; a < sd.dofs.size(); ++a) g += sd.T[a * nc + c] * v[o + sd.dofs[a]];
        out.block<3, 1>(3 * sd.contact, sd.cols[c]) += sd.sign * (C.transpose() * g);
      }
      for (const FrameVariation& fv : frame_vars) {
        if (fv.contact != sd.contact) continue;
        Vec3 vw = Vec3::Zero();  // this side's world velocity at p
        for (std::size_t a = 0; a < sd.dofs.size(); ++a) vw += sd.Jp[a] * v[o + sd.dofs[a]];
        for (std::size_t c = 0; c < fv.cols.size(); ++c)
          out.block<3, 1>(3 * sd.contact, fv.cols[c]) += sd.sign * (fv.dC[c].transpose() * vw);
      }
    }
  };

  // the active set
  const Scalar lscale = lambda.size() > 0 ? lambda.cwiseAbs().maxCoeff() : Scalar(0);
  const Scalar open_tol = 1e-9 * lscale;
  const VecX Jv = J * U;
  std::vector<Index> act;                      // global rows with an unknown impulse
  std::vector<unsigned char> equality(static_cast<std::size_t>(nrows), 0);
  std::vector<Scalar> beta(static_cast<std::size_t>(nrows), 0);  // d b_r / d depth_r
  struct Slide { Index contact; Vec2 s; Scalar speed; };
  std::vector<Slide> slides;
  const auto target_slope = [&](Index r) {
    if (ra.bounce[r] > 0 || ra.target[r] != ra.inelastic_target[r]) unsupported("restitution");
    if (ra.midpoint[static_cast<std::size_t>(r)]) unsupported("a row under the midpoint position update");
    const Scalar depth = ra.depth[r];
    if (depth < 0 && -depth <= cs.gap_slop) return Scalar(0);  // closed down to gap_slop: b = 0
    if (ra.speculative[static_cast<std::size_t>(r)]) return 1 / dt;  // b = depth / dt
    Scalar slope = depth < 0 ? 1 / dt : 0, b = depth < 0 ? depth / dt : 0;
    if (cs.erp > 0 && cs.position_correction == PositionCorrection::Velocity && depth > cs.slop) {
      const Scalar push = std::min(cs.erp * (depth - cs.slop) / dt, cs.max_push_velocity);
      if (push > b) slope = push < cs.max_push_velocity ? cs.erp / dt : 0;
    }
    return slope;
  };
  for (const ConstraintRow& cr : as.rows()) {
    if (cr.kind == ConstraintRow::Kind::Contact) {
      const Index i = cr.index, rn = 3 * i + 2;
      if (as.contact_island(i) < 0 || !(lambda[rn] > open_tol)) continue;  // open
      const Scalar mu = contacts[i].mu;
      const Vec2 lt = lambda.segment<2>(3 * i), vt = Jv.segment<2>(3 * i);
      equality[static_cast<std::size_t>(rn)] = 1;
      beta[static_cast<std::size_t>(rn)] = target_slope(rn);
      if (lt.norm() >= mu * lambda[rn] * (1 - 1e-6) && vt.norm() > 1e-9) {
        slides.push_back({i, vt / vt.norm(), vt.norm()});
      } else {
        equality[static_cast<std::size_t>(3 * i)] = equality[static_cast<std::size_t>(3 * i + 1)] = 1;
      }
      for (int r = 0; r < 3; ++r) act.push_back(3 * i + r);
    } else if (cr.kind == ConstraintRow::Kind::Limit) {
      if (!(lambda[cr.row] > open_tol)) continue;
      equality[static_cast<std::size_t>(cr.row)] = 1;
      beta[static_cast<std::size_t>(cr.row)] = target_slope(cr.row);
      act.push_back(cr.row);
    } else if (cr.kind == ConstraintRow::Kind::Friction) {
      if (std::abs(lambda[cr.row]) >= as.box_bound(cr.row) * (1 - 1e-9)) continue;  // at its bound
      equality[static_cast<std::size_t>(cr.row)] = 1;
      act.push_back(cr.row);
    }
  }

  // The linearized step for the 3 NV input columns X = (dq, du, dtau):
  //   M~ du+ - J_A^T dlambda_A = R                R = -(F_q - d(J^T lambda)/dq, F_u, F_tau) X
  //   J_r du+ = -(d(J_r u+)/dq + beta_r J_r) dq     equality rows (b_r = depth / dt: beta_r = 1 / dt)
  //   dlambda_t = -mu s dlambda_n - W (J_t du+ + d(J_t u+)/dq dq),  W = mu lambda_n / |v_t| (1 - s s^T)
  // The sliding rows are eliminated: H du+ - Jt^T dlambda_E = R - J_t^T W d(J_t u+)/dq dq with
  // H = M~ + J_t^T W J_t (symmetric positive definite) and Jt^T = J_E^T but for each sliding
  // normal column J_n^T - mu J_t^T s; then the Schur complement (J_E H^-1 Jt^T) dlambda_E =
  // -(d(J_E u+)/dq + beta J_E) dq - J_E H^-1 R', by a complete orthogonal decomposition: redundant
  // rows (a box on 4 corners) leave dlambda_E undetermined but du+ unique.
  MatX JTl_q, Jv_q;
  force_derivative(lambda, JTl_q);
  velocity_derivative(U, Jv_q);
  std::vector<Index> eq;  // equality rows
  for (Index r : act)
    if (equality[static_cast<std::size_t>(r)]) eq.push_back(r);
  const Index ne = static_cast<Index>(eq.size());
  MatX H = Mt;
  MatX Rt(NV, 3 * NV);
  Rt.leftCols(NV) = -(Fq - JTl_q);
  Rt.middleCols(NV, NV) = -Fu;
  Rt.rightCols(NV) = -Ftau;
  MatX JE(ne, NV), JEt(NV, ne), RE = MatX::Zero(ne, 3 * NV);
  for (Index a = 0; a < ne; ++a) {
    const Index r = eq[static_cast<std::size_t>(a)];
    JE.row(a) = J.row(r);
    JEt.col(a) = J.row(r).transpose();
    RE.block(a, 0, 1, NV) = -(Jv_q.row(r) + beta[static_cast<std::size_t>(r)] * J.row(r));
  }
  std::vector<Index> eslot(static_cast<std::size_t>(nrows), -1);
  for (Index a = 0; a < ne; ++a) eslot[static_cast<std::size_t>(eq[static_cast<std::size_t>(a)])] = a;
  std::vector<Mat2> Ws;
  for (const Slide& sl : slides) {
    const Index i = sl.contact;
    const Scalar mu = contacts[i].mu, ln = lambda[3 * i + 2];
    const Mat2 W = (Mat2::Identity() - sl.s * sl.s.transpose()) * (mu * ln / sl.speed);
    Ws.push_back(W);
    const MatX Jt = J.middleRows(3 * i, 2);
    H += Jt.transpose() * W * Jt;
    Rt.leftCols(NV) -= Jt.transpose() * (W * Jv_q.middleRows(3 * i, 2));
    JEt.col(eslot[static_cast<std::size_t>(3 * i + 2)]) -= mu * (Jt.transpose() * sl.s);
  }
  const Eigen::LLT<MatX> Hf(H);
  const MatX HiR = Hf.solve(Rt);
  MatX dU = HiR;  // du+ (u_free on a Heun system)
  if (ne > 0) {  // (Eigen's triangular solve reads the data pointer of an empty right-hand side)
    const MatX HiJ = Hf.solve(JEt);
    const MatX dLE = solve_schur(JE * HiJ, RE - JE * HiR, slides.empty());
    dU += HiJ * dLE;
  }
  MatX dUq = dU;  // d u_q: the velocity that moves q

  // split position correction: lambda_p on the unilateral rows where it is positive
  if (stepper.position_separate() && ra.n_position > 0) {
    const VecX lp = stepper.position_impulses().head(nrows) - lambda;
    std::vector<Index> prow;
    const Scalar ptol = 1e-9 * (lp.size() > 0 ? lp.cwiseAbs().maxCoeff() : Scalar(0));
    for (const ConstraintRow& cr : as.rows()) {
      const Index r = cr.kind == ConstraintRow::Kind::Contact ? cr.row + 2 : cr.row;
      if ((cr.kind == ConstraintRow::Kind::Contact || cr.kind == ConstraintRow::Kind::Limit) && lp[r] > ptol) prow.push_back(r);
    }
    if (!prow.empty()) {
      const Index np = static_cast<Index>(prow.size());
      const Eigen::LLT<MatX> Mf(Mt);
      const VecX Uq = U + Mf.solve(J.transpose() * lp);
      // The u_q equation is the u+ one at a_q = (u_q - u) / dt with the impulses lambda + lambda_p:
      // M~ du_q - J_P^T dlambda_p = M~ du+ - dF X, where dF differs from F by the rnea
      // derivatives at a_q instead of a+ and by -d(J^T lambda_p)/dq.
      MatX dF = MatX::Zero(NV, 2 * NV);
      for (std::size_t s = 0; s < ns; ++s) {
        const Model& m = systems_[s]->model();
        const Index o = v0[s];
        if (Uq.segment(o, m.nv) == U.segment(o, m.nv)) continue;
        const VecX a = (Uq.segment(o, m.nv) - u[s]) / dt;
        MatX Rq(m.nv, m.nv), Ru(m.nv, m.nv);
        rnea_derivatives(m, *data[s], q[s], u[s], a, Rq, Ru, has_f[s] ? &fext[s] : nullptr);
        dF.block(o, o, m.nv, m.nv) = dt * (Rq - Rq1[s]);
        dF.block(o, NV + o, m.nv, m.nv) = dt * (Ru - Ru1[s]);
      }
      MatX JTlp_q, Jw_q;
      force_derivative(lp, JTlp_q);
      dF.leftCols(NV) -= JTlp_q;
      velocity_derivative(Uq - U, Jw_q);
      MatX MiR = dU;  // M~^-1 (M~ du+ - dF X)
      MiR.leftCols(2 * NV) -= Mf.solve(dF);
      MatX JP(np, NV), R2P(np, 3 * NV);
      for (Index a = 0; a < np; ++a) {
        const Index r = prow[static_cast<std::size_t>(a)];
        JP.row(a) = J.row(r);
        // push-out target erp (depth - slop) / dt, d depth / dq = -J_r
        const Scalar depth = ra.depth[r];
        const Scalar push = cs.erp * (depth - cs.slop) / dt;
        const Scalar gamma = depth > cs.slop && push < cs.max_push_velocity ? cs.erp / dt : 0;
        R2P.row(a) = J.row(r) * dU;
        R2P.block(a, 0, 1, NV) -= Jw_q.row(r) + gamma * J.row(r);
      }
      const MatX MiJ = Mf.solve(JP.transpose());
      const MatX dLP = solve_schur(JP * MiJ, R2P - JP * MiR, true);
      dUq = MiR + MiJ * dLP;
    }
  }

  // q+ and the midpoint / Heun systems
  MatX A = MatX::Zero(2 * NV, 2 * NV), B = MatX::Zero(2 * NV, NV);
  for (std::size_t s = 0; s < ns; ++s) {
    const Model& m = systems_[s]->model();
    const Index o = v0[s], nv = m.nv;
    MatX dq_plus(nv, 3 * NV);
    MatX duq = dUq.middleRows(o, nv);
    if (modes[s] != 0) {  // u_q = (u + u+) / 2 (u+ = u_free on a Heun system)
      duq *= 0.5;
      duq.middleCols(NV + o, nv).diagonal().array() += 0.5;
    }
    VecX step(nv);
    m.difference(q[s], qplus[s], step);  // dt u_q
    MatX Dq, Dv;
    integrate_jacobians(m, step, Dq, Dv);
    dq_plus = dt * duq;
    for (Index b = 0; b < m.nb; ++b) {  // (Dv is the identity but on the rotations' 3x3 blocks)
      const Index k = m.idx_v[b] + (m.joint_type[b] == JointType::Floating ? 3 : 0);
      if (m.joint_type[b] == JointType::Floating || m.joint_type[b] == JointType::Spherical)
        dq_plus.middleRows(k, 3) = Dv.block<3, 3>(k, k) * dq_plus.middleRows(k, 3).eval();
    }
    dq_plus.middleCols(o, nv) += Dq;
    MatX du_plus = dU.middleRows(o, nv);
    if (modes[s] == 2) {  // u+ = u_q + dt/2 aba(q+, u_free, tau)
      MatX Aq(nv, nv), Au(nv, nv), At(nv, nv);
      aba_derivatives(m, *data[s], qplus[s], step_systems_[s].scratch_->u_free, tau[s], Aq, Au, At, has_f[s] ? &fext[s] : nullptr);
      du_plus = duq + 0.5 * dt * (Aq * dq_plus + Au * dU.middleRows(o, nv));
      du_plus.middleCols(2 * NV + o, nv) += 0.5 * dt * At;
    } else if (modes[s] == 3) {
      // u+ = u_q + (u_free - u) - dt/2 (a_prev + c), c = M^-1 (g - g_prev) (ab2_velocity) with
      // the history a_prev, g_prev held and this step's input g = tau (unclamped dofs) + J^T f_ext:
      // M dc = dg - (dM/dq c) dq, and d(M c - J^T f)/dq is the q-derivative of RNEA at u = 0,
      // udot = c without gravity
      du_plus = duq + dU.middleRows(o, nv);
      du_plus.middleCols(NV + o, nv).diagonal().array() -= 1;
      const Eigen::LLT<MatX> Mk(Mt.block(o, o, nv, nv));  // (M~ = M in flight)
      MatX rhs_c = MatX::Zero(nv, 3 * NV);
      const std::vector<unsigned char>& clamped = step_systems_[s].scratch_->clamped;
      for (Index k = 0; k < nv; ++k) {
        if (!clamped[static_cast<std::size_t>(k)]) rhs_c(k, 2 * NV + o + k) = 1;
      }
      const VecX c = Mk.solve(data_.systems[s].flight_force - force_prev[s]);
      if (has_f[s] || (c.array() != 0).any()) {
        Data& d = *data[s];
        const Vec3 gravity = d.gravity;
        d.gravity.setZero();
        MatX Rq(nv, nv), Ru(nv, nv);
        rnea_derivatives(m, d, q[s], VecX::Zero(nv), c, Rq, Ru, has_f[s] ? &fext[s] : nullptr);
        d.gravity = gravity;
        rhs_c.middleCols(o, nv) -= Rq;
      }
      du_plus -= 0.5 * dt * Mk.solve(rhs_c);
    }
    A.block(o, 0, nv, 2 * NV) = dq_plus.leftCols(2 * NV);
    B.block(o, 0, nv, NV) = dq_plus.rightCols(NV);
    A.block(NV + o, 0, nv, 2 * NV) = du_plus.leftCols(2 * NV);
    B.block(NV + o, 0, nv, NV) = du_plus.rightCols(NV);
  }
  TransitionJacobians out;
  out.A = std::move(A);
  out.B = std::move(B);
  return out;
}

}  // namespace impulse
