// Analytic RNEA and ABA derivatives (Carpentier & Mansard, RSS 2018, Alg. 1), world frame. See rnea_derivatives.hpp for the equations and conventions.
#include "impulse/dynamics/rnea_derivatives.hpp"

#include "impulse/dynamics/ltdl.hpp"
#include "joint_ops.hpp"

namespace impulse {

namespace {

// B = v x* I - I v x + (h x-bar), with (h x-bar) b = b x* h for h = I v (rnea_derivatives.hpp).
// For I = [[m 1, -[c]], [[c], I_O]] (c the first moment) and v = [v_l; w], multiplying out with
// h_l = m v_l + w x c leaves only the right half:
//   B = [[0, -2 [h_l]], [0, [w] I_O - I_O [w] - ([v_l][c] + [c][v_l]) - [h_a]]],
// so B is stored and summed as its right 6 x 3 columns (the left ones stay zero). I_O is
// symmetric, so I_O [w] = -([w] I_O)^T, and with [v_l][c] + [c][v_l] = v_l c^T + c v_l^T - 2 v_l.c
// the lower right block is Y + Y^T + 2 v_l.c - [h_a], Y = [w] I_O - v_l c^T (columns w x I_O e_k).
void body_variation(const WorldInertia& I, const Vec6& v, const Vec6& h, Mat6& B) {
  const Vec3 w = v.tail<3>(), vl = v.head<3>();
  B.topRightCorner<3, 3>() = -2 * skew(h.head<3>());
  Mat3 Y;
  for (int k = 0; k < 3; ++k) Y.col(k) = w.cross(I.I_O.col(k)) - I.h[k] * vl;
  Mat3 BR = Y + Y.transpose();
  BR.diagonal().array() += 2 * vl.dot(I.h);
  BR -= skew(h.tail<3>());
  B.bottomRightCorner<3, 3>() = BR;
}

void check_sizes(const Model& model, const VecXcref& q, const VecXcref& u, const char* u_name,
                 const VecXcref& x, const char* x_name, const Vec6Vector* f_ext) {
  IMPULSE_CHECK(q.size() == model.nq, "q has size ", q.size(), ", the model needs nq = ", model.nq);
  IMPULSE_CHECK(u.size() == model.nv, u_name, " has size ", u.size(), ", the model needs nv = ", model.nv);
  IMPULSE_CHECK(x.size() == model.nv, x_name, " has size ", x.size(), ", the model needs nv = ", model.nv);
  IMPULSE_CHECK(!f_ext || static_cast<Index>(f_ext->size()) == model.nb, "f_ext has ",
                f_ext ? f_ext->size() : 0, " wrenches, the model has nb = ", model.nb, " bodies");
}

void check_square(const Model& model, const MatXref& X, const char* name) {
  IMPULSE_CHECK(X.rows() == model.nv && X.cols() == model.nv, name, " is ", X.rows(), " x ", X.cols(),
                ", the model needs nv x nv = ", model.nv, " x ", model.nv);
}

// f.template operator()<R>(R0) over rows 0 .. n - 1 in blocks of R rows: 8 at a time, then the
// last 1 to 10 rows as one block (ANYmal's nv = 18: 8 + 10, all in registers: SSE2 has 16).
template <class F>
inline void for_row_blocks(Index n, F&& f) {
  Index R0 = 0;
  for (; n - R0 > 10; R0 += 8) f.template operator()<8>(R0);
  switch (n - R0) {
    case 10: return f.template operator()<10>(R0);
    case 9: return f.template operator()<9>(R0);
    case 8: return f.template operator()<8>(R0);
    case 7: return f.template operator()<7>(R0);
    case 6: return f.template operator()<6>(R0);
    case 5: return f.template operator()<5>(R0);
    case 4: return f.template operator()<4>(R0);
    case 3: return f.template operator()<3>(R0);
    case 2: return f.template operator()<2>(R0);
    case 1: return f.template operator()<1>(R0);
    default: return;
  }
}

// Rows R0 .. R0 + R - 1 of column k of M^-1: -sum_{a in anc(k)} L_ka (column a of M^-1), in
// registers (La, anc: the packed row k of L, entries a0 .. a1 - 1).
template <int R>
inline void minv_column_rows(Scalar* Minv, Index ld, Index R0, Index k, const Index* anc, const Scalar* La, Index a0,
                             Index a1) {
  using VecR = Eigen::Matrix<Scalar, R, 1>;
  VecR acc = VecR::Zero();
  for (Index a = a0; a < a1; ++a) acc -= La[a] * Eigen::Map<const VecR>(Minv + R0 + anc[a] * ld);
  Eigen::Map<VecR>(Minv + R0 + k * ld) = acc;
}

struct MinvColumnBlocks {
  Scalar* X;
  Index ld, k;
  const Index* anc;
  const Scalar* La;
  Index a0, a1;
  template <int R>
  void operator()(Index R0) const {
    minv_column_rows<R>(X, ld, R0, k, anc, La, a0, a1);
  }
};

// M^-1 (full, symmetric) from the factor M = L^T D L of ltdl_factor: M^-1 = L^-1 D^-1 L^-T, so
// L M^-1 = D^-1 L^-T is upper triangular with diagonal D^-1 (L^-T unit upper triangular). Its
// row k below and on the diagonal gives, for j <= k,
//   M^-1_kj = delta_kj D^-1_k - sum_{a in anc(k)} L_ka M^-1_aj ,
// which reads only rows a < k and, by symmetry, columns j < k of M^-1: in depth-first order,
// column k over rows 0 .. k - 1 is a sum of the ancestors' columns (8 rows at a time in
// registers), then the diagonal, then its mirror into row k. Sum over dofs of depth times the
// dof's index multiply-adds (ANYmal: ~1k); no L^-1 is formed.
void inverse_from_factor(const Model& model, Data& data, MatXref Minv) {
  const Index n = model.nv, ld = Minv.outerStride();
  const Index* anc = data.anc.data();
  const Index* begin = data.anc_begin.data();
  const Scalar* La = data.L_anc.data();
  Scalar* X = Minv.data();
  for (Index k = 0; k < n; ++k) {
    Scalar* c = X + k * ld;
    for_row_blocks(k, MinvColumnBlocks{X, ld, k, anc, La, begin[k], begin[k + 1]});
    Scalar d = data.Dinv[k];
    for (Index a = begin[k]; a < begin[k + 1]; ++a) d -= La[a] * c[anc[a]];
    c[k] = d;
    for (Index j = 0; j < k; ++j) X[k + j * ld] = c[j];
  }
}

// The forward pass of body i (world frame): pose, S_i, v_i, a_i (with udot), I_i, B_i, f_i; the
// composite sums I^c, B^c and F start as the body's own.
void forward_body(const Model& model, Data& data, Index i, const VecXcref& q, const VecXcref& u, const VecXcref& udot,
                  const Vec6& a_world, const Vec6Vector* f_ext) {
  detail::body_pose(model, data, i, q.data());
  const SE3& oMi = data.oMi[i];
  detail::world_subspace(model, i, oMi, data.J);
  const Index k = model.idx_v[i], n = model.nv_joint[i], p = model.parent[i];
  Vec6& v = data.ov[i];
  Vec6& a = data.oa[i];
  const Vec6 vp = p < 0 ? Vec6::Zero().eval() : data.ov[p];
  const Vec6& ap = p < 0 ? a_world : data.oa[p];
  if (model.joint_type[i] == JointType::Floating) {
    // v_0 = S_0 u = [v + p x w; w], a_0 = a_world + S_0 udot + [v x w; 0]
    const Vec3 vb = u.segment<3>(k), wb = u.segment<3>(k + 3);
    const Vec3 vd = udot.segment<3>(k), wd = udot.segment<3>(k + 3);
    v << vb + oMi.p.cross(wb), wb;
    a = a_world;
    a.head<3>() += vd + oMi.p.cross(wd) + vb.cross(wb);
    a.tail<3>() += wd;
  } else if (n == 0) {
    v = vp;
    a = ap;
  } else if (n == 1) {  // (no dynamic-size product for the common one-dof joint)
    const Vec6 vJ = data.J.col(k) * u[k];
    v = vp + vJ;
    a = ap + data.J.col(k) * udot[k] + cross_motion(v, vJ);
  } else {
    const Vec6 vJ = data.J.middleCols(k, n) * u.segment(k, n);
    v = vp + vJ;
    a = ap + data.J.middleCols(k, n) * udot.segment(k, n) + cross_motion(v, vJ);
  }
  WorldInertia& I = data.oinertia[i];
  detail::world_inertia(model.inertia[i], oMi, I);
  data.oYcrb[i] = I;
  const Vec6 h = I.apply(v);
  Vec6& f = data.of[i];
  f = I.apply(a) + cross_force(v, h);
  if (f_ext) f -= oMi.act_force((*f_ext)[i]);
  data.oBcrb[i].leftCols<3>().setZero();
  body_variation(I, v, h, data.oBcrb[i]);
}

// The backward pass of body i, its subtree summed: per dof r of joint i the columns
// F_r = I^c S_r (as CRBA) and G_r = B^c^T S_r, tau_r = S_r . F_i, and the rows of M over the
// subtree columns (as crba_backward).
void body_rows(const Model& model, Data& data, Index i) {
  const Index k0 = model.idx_v[i], n = model.nv_joint[i];
  const Index ns = detail::subtree_nv(model, i);
  const WorldInertia& Ic = data.oYcrb[i];
  const Mat6& Bc = data.oBcrb[i];
  const Vec6& Fi = data.of[i];
  for (Index r = k0; r < k0 + n; ++r) {
    const Vec6 S = data.J.col(r);
    Ic.apply_to(S.data(), data.F.col(r).data());
    data.dG.col(r).head<3>().setZero();  // B^c^T S, B^c's left half zero (body_variation)
    data.dG.col(r).tail<3>().noalias() = Bc.topRightCorner<3, 3>().transpose() * S.head<3>();
    data.dG.col(r).tail<3>().noalias() += Bc.bottomRightCorner<3, 3>().transpose() * S.tail<3>();
    data.tau[r] = S.dot(Fi);
  }
  MatX& M = data.M;
  for (Index r = k0; r < k0 + n; ++r) {
    for (Index c = r; c < k0 + ns; ++c) {
      const Scalar Mrc = data.J.col(r).dot(data.F.col(c));
      M(r, c) = Mrc;
      M(c, r) = Mrc;
    }
  }
}

// The composite sums of body i added to its parent's.
void accumulate_into_parent(const Model& model, Data& data, Index i) {
  const Index p = model.parent[i];
  if (p < 0) return;
  data.oYcrb[p] += data.oYcrb[i];
  data.oBcrb[p].rightCols<3>() += data.oBcrb[i].rightCols<3>();
  data.of[p] += data.of[i];
}

// The six columns of a floating root i (no ancestors; its dofs k0 .. k0 + 5 and subtree rows
// k0 .. k0 + ns - 1; model_builder allows a floating joint only on a root): with
// xi = S_0 dq not body-fixed, beta = dv_0 - xi x v_0, alpha = da_0 - xi x a_0 + v_0 x beta,
// gamma = dc_0 - xi x v_0, plus its own rows' dS_0^T F_0 + S_0^T (xi x* F_0) (rnea_derivatives.hpp).
// Row r of all six columns at once: [F_r; G_r] (G_r's first three entries zero) times the 9 x 6
// coefficients [alpha; beta] and [gamma; s], each a sum of rows of coefficients (three packets
// over the columns) instead of six pairs of 6-dot products.
using FloatingCoeffs = Eigen::Matrix<Scalar, 9, 6, Eigen::RowMajor>;  // rows: the six of F_r, G_r's last three

// The coefficients Pq, Pu of the columns c0 .. 5 and the root's own rows, extra (above). The
// translation columns (c < 3: s = [e_c; 0], dv = e_c) are zero: beta = e_c x w - e_c x w,
// alpha = e_c x wdot - e_c x wdot, gamma = 0 and extra = [0; e_c x F_lin - e_c x F_lin] (a
// uniform translation of the whole tree, the gravity uniform, changes no joint torque).
void floating_coeffs(const Model& model, const Data& data, Index i, const VecXcref& u, const VecXcref& udot,
                     FloatingCoeffs& Pq, FloatingCoeffs& Pu, Mat6& extra, Index c0 = 0) {
  const Index k0 = model.idx_v[i];
  const Vec6& Fi = data.of[i];
  const Vec6& vi = data.ov[i];
  const Vec3 vb = u.segment<3>(k0), wb = u.segment<3>(k0 + 3), wd = udot.segment<3>(k0 + 3);
  for (Index c = c0; c < 6; ++c) {
    const Vec6 s = data.J.col(k0 + c);
    const Vec3 dv = c < 3 ? Vec3(Vec3::Unit(c)) : Vec3(Vec3::Zero());  // translation part of dq
    Vec6 dv0 = Vec6::Zero(), da0 = Vec6::Zero(), dc0 = Vec6::Zero();
    dv0.head<3>() = dv.cross(wb);
    da0.head<3>() = dv.cross(wd);
    dc0.head<3>() = c < 3 ? Vec3(Vec3::Unit(c).cross(wb)) : Vec3(vb.cross(Vec3::Unit(c - 3)));
    const Vec6 beta = dv0 - cross_motion(s, vi);
    Pq.col(c).head<6>() = da0 - cross_motion(s, data.oa[i]) + cross_motion(vi, beta);
    Pq.col(c).tail<3>() = beta.tail<3>();
    Pu.col(c).head<6>() = dc0 - cross_motion(s, vi);
    Pu.col(c).tail<3>() = s.tail<3>();
    // the root's own rows: dS_0^T F_0 + S_0^T (xi x* F_0), S_0 = [[1, [p]], [0, 1]] not body-fixed
    const Vec6 xF = cross_force(s, Fi);
    extra.col(c).head<3>() = xF.head<3>();
    extra.col(c).tail<3>() = xF.tail<3>() - data.oMi[i].p.cross(xF.head<3>()) - dv.cross(Fi.head<3>());
  }
}

void floating_columns(const Model& model, Data& data, Index i, const VecXcref& u, const VecXcref& udot,
                      MatXref dtau_dq, MatXref dtau_du) {
  const Index k0 = model.idx_v[i], ns = detail::subtree_nv(model, i);
  // only the rotation columns 3 .. 5 (floating_coeffs: the translation columns are zero, and
  // rnea_derivatives zeroes the outputs first), as columns 2 .. 5 (two packets; column 2 zero)
  using Row4 = Eigen::Matrix<Scalar, 1, 4>;
  FloatingCoeffs Pq, Pu;
  Mat6 extra;
  floating_coeffs(model, data, i, u, udot, Pq, Pu, extra, 3);
  Pq.col(2).setZero();
  Pu.col(2).setZero();
  extra.col(2).setZero();
  const Index ldq = dtau_dq.outerStride(), ldu = dtau_du.outerStride();
  Scalar* out_q = dtau_dq.data() + k0 * ldq;
  Scalar* out_u = dtau_du.data() + k0 * ldu;
  for (Index r = k0; r < k0 + ns; ++r) {
    const Scalar* Fr = data.F.data() + 6 * r;
    const Scalar* Gr = data.dG.data() + 6 * r;
    Row4 q = Fr[0] * Pq.row(0).tail<4>(), w = Fr[0] * Pu.row(0).tail<4>();
    for (int t = 1; t < 6; ++t) {
      q += Fr[t] * Pq.row(t).tail<4>();
      w += Fr[t] * Pu.row(t).tail<4>();
    }
    for (int t = 3; t < 6; ++t) {
      q += Gr[t] * Pq.row(t + 3).tail<4>();
      w += Gr[t] * Pu.row(t + 3).tail<4>();
    }
    if (r < k0 + 6) q += extra.row(r - k0).tail<4>();
    for (Index c = 3; c < 6; ++c) {
      out_q[r + c * ldq] = q[c - 2];
      out_u[r + c * ldu] = w[c - 2];
    }
  }
}

struct FloatingPairs {
  alignas(16) Scalar v[6][9][2];
};

// Rows R0 .. R0 + R - 1 of floating_minv_columns' outputs: Y = M^-1 W_G over the subtree
// columns of M^-1 (rows R0.. of column k, by symmetry row k's entries), then each output column
// from the three columns of Y and the six of (M^-1)_0 in registers.
struct FloatingMinvBlocks {
  const Scalar* Minv;
  Index ld;
  const Scalar* G;
  Index k0, ns;
  const FloatingPairs *cq, *cu;
  bool has_arm;
  Scalar* out_q;
  Index ldq;
  Scalar* out_u;
  Index ldu;
  template <int R>
  void run(Index R0) const {
    using VecR = Eigen::Matrix<Scalar, R, 1>;
    VecR y0 = VecR::Zero(), y1 = VecR::Zero(), y2 = VecR::Zero();
    for (Index k = k0; k < k0 + ns; ++k) {
      const Eigen::Map<const VecR> m(Minv + R0 + k * ld);
      const Scalar* g = G + 6 * k + 3;
      y0 += g[0] * m;
      y1 += g[1] * m;
      y2 += g[2] * m;
    }
    for (int c = 3; c < 6; ++c) {
      const Scalar(*a)[2] = cq->v[c];
      VecR q = y0 * a[0][0] + y1 * a[1][0] + y2 * a[2][0];
      for (int t = 0; t < 6; ++t) q += a[3 + t][0] * Eigen::Map<const VecR>(Minv + R0 + (k0 + t) * ld);
      Eigen::Map<VecR>(out_q + R0 + c * ldq) = -q;
      const Scalar(*b)[2] = cu->v[c];
      VecR w = y0 * b[0][0] + y1 * b[1][0] + y2 * b[2][0];
      if (has_arm)
        for (int t = 0; t < 6; ++t) w += b[3 + t][0] * Eigen::Map<const VecR>(Minv + R0 + (k0 + t) * ld);
      Eigen::Map<VecR>(out_u + R0 + c * ldu) = -w;
    }
  }
};

// The six columns of d udot / dq and d udot / du of a floating root i, without its columns of
// d tau / dq, du (floating_columns). Those are X = W_F P_F + W_G P_G (+ extra on the root's own
// rows) with W_F, W_G the subtree rows F_r^T and G_r^T (last three entries) and P the
// coefficients above. The rows of M in the root's columns are M(r, k0 + t) = F_r . S_{k0 + t} (+
// the armature on the diagonal) for every r of the subtree and zero elsewhere, so
// W_F = (M_0 - E A) S_0^-1 with M_0 those six columns, E the identity's, A = diag(armature), and
//   -M^-1 W_F P_F = -E S_0^-1 P_F + (M^-1)_0 A S_0^-1 P_F :
// the F part costs nothing but the armature term, S_0^-1 = [[1, -[p]], [0, 1]]. What remains is
// Y = M^-1 W_G (nv x 3) and then Y P_G plus (M^-1)_0 times the root rows' terms, for the three
// rotation columns only (floating_coeffs: the translation columns are zero): ANYmal 1.6k
// multiply-adds against 5.8k for forming the six columns and multiplying them by -M^-1.
void floating_minv_columns(const Model& model, const Data& data, Index i, const VecXcref& u, const VecXcref& udot,
                           const MatXref& Minv, MatXref out_q, MatXref out_u) {
  const Index k0 = model.idx_v[i], ns = detail::subtree_nv(model, i), n = model.nv;
  FloatingCoeffs Pq, Pu;
  Mat6 Eq = Mat6::Zero();
  floating_coeffs(model, data, i, u, udot, Pq, Pu, Eq, 3);  // (the translation columns are zero)
  const Vec3& p = data.oMi[i].p;
  Mat6 Tq = Mat6::Zero(), Tu = Mat6::Zero();  // S_0^-1 P_F
  for (Index c = 3; c < 6; ++c) {
    Tq.col(c) << Pq.col(c).head<3>() - p.cross(Pq.col(c).segment<3>(3)), Pq.col(c).segment<3>(3);
    Tu.col(c) << Pu.col(c).head<3>() - p.cross(Pu.col(c).segment<3>(3)), Pu.col(c).segment<3>(3);
  }
  const Vec6 arm = model.armature.segment<6>(k0);
  const bool has_arm = !arm.isZero(0);
  Mat6 Eu = Mat6::Zero();
  if (has_arm) {
    Eq -= arm.asDiagonal() * Tq;
    Eu -= arm.asDiagonal() * Tu;
  }
  // the coefficients of the columns of [Y, (M^-1)_0] in each output column, as pairs of equal
  // doubles (one SSE2 packet each, no broadcast in the loop): q column c = sum_t Y_t PqG(t, c) +
  // sum_t (M^-1)_{k0 + t} Eq(t, c), u column c = sum_t Y_t PuG(t, c) (+ (M^-1)_0 Eu)
  FloatingPairs cq, cu;
  for (int c = 3; c < 6; ++c)
    for (int t = 0; t < 9; ++t) {
      cq.v[c][t][0] = cq.v[c][t][1] = t < 3 ? Pq(6 + t, c) : Eq(t - 3, c);
      cu.v[c][t][0] = cu.v[c][t][1] = t < 3 ? Pu(6 + t, c) : Eu(t - 3, c);
    }
  const Index ld = Minv.outerStride(), ldq = out_q.outerStride(), ldu = out_u.outerStride();
  FloatingMinvBlocks blocks{Minv.data(), ld,  data.dG.data(), k0, ns, &cq, &cu, has_arm, out_q.data() + k0 * ldq, ldq,
                            out_u.data() + k0 * ldu, ldu};
  Index R0 = 0;
  for (; n - R0 >= 4; R0 += 4) blocks.run<4>(R0);
  for (; n - R0 >= 2; R0 += 2) blocks.run<2>(R0);
  if (R0 < n) blocks.run<1>(R0);
  // the F part: -S_0^-1 P_F on the root's own rows
  for (Index c = 0; c < 3; ++c) {
    out_q.col(k0 + c).setZero();
    out_u.col(k0 + c).setZero();
  }
  for (Index c = 3; c < 6; ++c) {
    out_q.col(k0 + c).segment<6>(k0) -= Tq.col(c);
    out_u.col(k0 + c).segment<6>(k0) -= Tu.col(c);
  }
}

// The columns of d tau / dq and d tau / du of the dofs of joint i (rnea_derivatives.hpp), from
// the summed I^c_i, B^c_i, F_i, the columns F and G of the subtree and a of i and its parent. The
// entries outside the rows of the subtree and the ancestors are left as they are (rnea_derivatives
// zeroes them first; aba_derivatives never reads them).
void body_columns(const Model& model, Data& data, Index i, const VecXcref& u, const VecXcref& udot,
                  const Vec6& a_world, MatXref dtau_dq, MatXref dtau_du) {
  if (model.joint_type[i] == JointType::Floating) return floating_columns(model, data, i, u, udot, dtau_dq, dtau_du);
  const Index k0 = model.idx_v[i], n = model.nv_joint[i], p = model.parent[i];
  const Index ns = detail::subtree_nv(model, i);
  const WorldInertia& Ic = data.oYcrb[i];
  const Mat6& Bc = data.oBcrb[i];
  const Vec6& Fi = data.of[i];
  const Vec6 vl = p < 0 ? Vec6::Zero().eval() : data.ov[p];
  const Vec6& al = p < 0 ? a_world : data.oa[p];
  const Vec6& vi = data.ov[i];
  for (Index c = 0; c < n; ++c) {
    const Index j = k0 + c;
    const Vec6 s = data.J.col(j);
    const Vec6 beta = cross_motion(vl, s);
    const Vec6 alpha = cross_motion(al, s) + cross_motion(vl, beta);
    const Vec6 gamma = cross_motion(vl + vi, s);
    // rows of the subtree (this joint included): F_r . alpha + G_r . beta, G_r's first three
    // entries zero (body_rows)
    Scalar* out_q = &dtau_dq(0, j);
    Scalar* out_u = &dtau_du(0, j);
    for (Index r = k0; r < k0 + ns; ++r) {
      const Scalar* Fr = data.F.data() + 6 * r;
      const Scalar* Gr = data.dG.data() + 6 * r;
      out_q[r] = detail::dot6(Fr, alpha.data()) + (Gr[3] * beta[3] + (Gr[4] * beta[4] + Gr[5] * beta[5]));
      out_u[r] = detail::dot6(Fr, gamma.data()) + (Gr[3] * s[3] + (Gr[4] * s[4] + Gr[5] * s[5]));
    }
    // rows of the ancestors: S_r . (s x* F_i + I^c alpha + B^c beta), S_r . (I^c gamma + B^c s)
    const Index first = model.dof_parent[k0];
    if (first < 0) continue;
    Vec6 psi_q = cross_force(s, Fi) + Ic.apply(alpha);
    psi_q.noalias() += Bc.rightCols<3>() * beta.tail<3>();
    Vec6 psi_u = Ic.apply(gamma);
    psi_u.noalias() += Bc.rightCols<3>() * s.tail<3>();
    for (Index r = first; r >= 0; r = model.dof_parent[r]) {
      if (model.joint_type[model.dof_body[r]] == JointType::Floating) {
        // the floating root's six dofs r - 5 .. r at once: S = [[1, [p]], [0, 1]] gives
        // S^T psi = [psi_lin; psi_ang + psi_lin x p]
        const Vec3& p0 = data.oMi[model.dof_body[r]].p;
        out_q[r - 5] = psi_q[0], out_q[r - 4] = psi_q[1], out_q[r - 3] = psi_q[2];
        out_u[r - 5] = psi_u[0], out_u[r - 4] = psi_u[1], out_u[r - 3] = psi_u[2];
        Eigen::Map<Vec3>(out_q + r - 2) = psi_q.tail<3>() + psi_q.head<3>().cross(p0);
        Eigen::Map<Vec3>(out_u + r - 2) = psi_u.tail<3>() + psi_u.head<3>().cross(p0);
        break;
      }
      const Scalar* Sr = data.J.data() + 6 * r;
      out_q[r] = detail::dot6(Sr, psi_q.data());
      out_u[r] = detail::dot6(Sr, psi_u.data());
    }
  }
}

// acc_A += x_A[r] m_r, acc_B += x_B[r] m_r over the nonzero rows r of a column (ancestors, then
// the subtree range), m_r = rows R0 .. R0 + R - 1 of column r of M^-1: R rows of both results
// in registers, each column of M^-1 loaded once for both.
template <int R>
inline void minv_rows(const Scalar* Minv, Index ld, Index R0, const Index* anc, Index a0, Index a1, Index s0,
                      Index s1, const Scalar* xA, const Scalar* xB, Scalar* outA, Scalar* outB) {
  using VecR = Eigen::Matrix<Scalar, R, 1>;
  VecR accA = VecR::Zero(), accB = VecR::Zero();
  for (Index a = a0; a < a1; ++a) {
    const Index r = anc[a];
    const Eigen::Map<const VecR> m(Minv + R0 + r * ld);
    accA += xA[r] * m;
    accB += xB[r] * m;
  }
  for (Index r = s0; r < s1; ++r) {
    const Eigen::Map<const VecR> m(Minv + R0 + r * ld);
    accA += xA[r] * m;
    accB += xB[r] * m;
  }
  Eigen::Map<VecR>(outA + R0) = accA;
  Eigen::Map<VecR>(outB + R0) = accB;
}

struct MinvProductBlocks {
  const Scalar* M;
  Index ld;
  const Index* anc;
  Index a0, a1, s0, s1;
  const Scalar *xA, *xB;
  Scalar *outA, *outB;
  template <int R>
  void operator()(Index R0) const {
    minv_rows<R>(M, ld, R0, anc, a0, a1, s0, s1, xA, xB, outA, outB);
  }
};

// A <- -M^-1 A and B <- -M^-1 B for A, B with the branch sparsity of M (d tau / dq, d tau / du):
// column j of both is nonzero only on the ancestors of dof j and its subtree j .. end_j - 1
// (Data::dof_subtree_end), so it is a sum of those columns of M^-1 (ANYmal: 9 of 18 columns for
// a leg dof). The two share the sparsity, so each column of M^-1 serves both; the nonzero entries
// of the column pair are copied out first (xA, xB: nv each; only those are read, so the other
// entries of A and B may hold anything), then the result is formed 8 rows at a time in registers.
void minus_minv_times(const Model& model, const Data& data, const MatXref& Minv, MatXref A, MatXref B, Scalar* xA,
                      Scalar* xB) {
  const Index n = A.rows(), ld = Minv.outerStride();
  const Index* anc = data.anc.data();
  const Index* begin = data.anc_begin.data();
  const Scalar* M = Minv.data();
  for (Index j = 0; j < n; ++j) {
    if (model.joint_type[model.dof_body[j]] == JointType::Floating) continue;  // floating_minv_columns
    Scalar* outA = A.data() + j * A.outerStride();
    Scalar* outB = B.data() + j * B.outerStride();
    const Index a0 = begin[j], a1 = begin[j + 1], e = data.dof_subtree_end[static_cast<std::size_t>(j)];
    for (Index a = a0; a < a1; ++a) {
      xA[anc[a]] = -outA[anc[a]];
      xB[anc[a]] = -outB[anc[a]];
    }
    for (Index r = j; r < e; ++r) {
      xA[r] = -outA[r];
      xB[r] = -outB[r];
    }
    for_row_blocks(n, MinvProductBlocks{M, ld, anc, a0, a1, j, e, xA, xB, outA, outB});
  }
}

}  // namespace

void rnea_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u, const VecXcref& udot,
                      MatXref dtau_dq, MatXref dtau_du, const Vec6Vector* f_ext) {
  check_sizes(model, q, u, "u", udot, "udot", f_ext);
  check_square(model, dtau_dq, "dtau_dq");
  check_square(model, dtau_du, "dtau_du");
  const Vec6 a_world(-data.gravity[0], -data.gravity[1], -data.gravity[2], 0, 0, 0);  // a_0 = -g
  for (Index i = 0; i < model.nb; ++i) forward_body(model, data, i, q, u, udot, a_world, f_ext);
  // backward pass: I^c, B^c, F accumulated leaves to root; the columns of each joint's dofs
  dtau_dq.setZero();
  dtau_du.setZero();
  for (Index i = model.nb - 1; i >= 0; --i) {
    if (model.nv_joint[i] > 0) {
      body_rows(model, data, i);
      body_columns(model, data, i, u, udot, a_world, dtau_dq, dtau_du);
    }
    accumulate_into_parent(model, data, i);
  }
  data.M.diagonal() += model.armature;
  data.tau.array() += model.armature.array() * udot.array();
}

void aba_derivatives(const Model& model, Data& data, const VecXcref& q, const VecXcref& u, const VecXcref& tau,
                     MatXref dudot_dq, MatXref dudot_du, MatXref dudot_dtau, const Vec6Vector* f_ext) {
  check_sizes(model, q, u, "u", tau, "tau", f_ext);
  check_square(model, dudot_dq, "dudot_dq");
  check_square(model, dudot_du, "dudot_du");
  check_square(model, dudot_dtau, "dudot_dtau");
  const Index nb = model.nb;
  const Vec6 a_world(-data.gravity[0], -data.gravity[1], -data.gravity[2], 0, 0, 0);
  data.u_aba = tau;  // (tau may be a field of data that the passes below write, e.g. data.tau)
  // 1. the passes of rnea_derivatives at udot = 0: the bias accelerations a^0 and composite
  //    forces F^0, I^c, B^c, F, G, M, and tau^0 = h(q, u) (the nonlinear effects)
  VecX& udot = data.udot;
  udot.setZero();
  for (Index i = 0; i < nb; ++i) forward_body(model, data, i, q, u, udot, a_world, f_ext);
  for (Index i = nb - 1; i >= 0; --i) {
    if (model.nv_joint[i] > 0) body_rows(model, data, i);
    accumulate_into_parent(model, data, i);
  }
  data.M.diagonal() += model.armature;
  // 2. udot = M^-1 (tau - h), the forward dynamics, by the tree-sparse factor (ltdl.hpp)
  IMPULSE_CHECK(ltdl_factor(model, data), "aba_derivatives: the mass matrix M(q) is not positive definite");
  udot = data.u_aba - data.tau;
  ltdl_solve(model, data, udot);
  // 3. a_i = a^0_i + da_i with da_i = da_lambda + S_i udot_i (a is linear in udot), and
  //    F_i = F^0_i + sum over subtree(i) of I_k da_k (opA as scratch), summed leaves to root just
  //    before the columns of body i read it; then the columns of d tau / dq, d tau / du at udot
  for (Index i = 0; i < nb; ++i) {
    const Index k = model.idx_v[i], n = model.nv_joint[i], p = model.parent[i];
    Vec6& da = data.oc[i];
    if (p < 0) da.setZero(); else da = data.oc[p];
    if (n == 1) da += data.J.col(k) * udot[k];
    else if (n > 0) da.noalias() += data.J.middleCols(k, n) * udot.segment(k, n);
    data.oa[i] += da;
    data.opA[i] = data.oinertia[i].apply(da);
  }
  // (dudot_dq, dudot_du hold the columns of d tau / dq, d tau / du on their nonzero entries only:
  // the products below read nothing else)
  for (Index i = nb - 1; i >= 0; --i) {
    data.of[i] += data.opA[i];
    const Index p = model.parent[i];
    if (p >= 0) data.opA[p] += data.opA[i];
    if (model.nv_joint[i] > 0 && model.joint_type[i] != JointType::Floating)
      body_columns(model, data, i, u, udot, a_world, dudot_dq, dudot_du);
  }
  data.tau = data.u_aba;
  // 4. d udot / d tau = M^-1, d udot / dq = -M^-1 d tau / dq, d udot / du = -M^-1 d tau / du
  //    (a floating root's six columns directly, floating_minv_columns)
  inverse_from_factor(model, data, dudot_dtau);
  minus_minv_times(model, data, dudot_dtau, dudot_dq, dudot_du, data.ltdl_tmp.data(), data.u_aba.data());
  for (Index i = 0; i < nb; ++i)
    if (model.joint_type[i] == JointType::Floating)
      floating_minv_columns(model, data, i, u, udot, dudot_dtau, dudot_dq, dudot_du);
}

}  // namespace impulse
