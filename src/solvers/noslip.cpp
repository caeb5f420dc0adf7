// No-slip contact model with the modified Principal Pivoting Method I.
//
// Paper: E. Drumwright, "Rapidly computable viscous friction and no-slip rigid contact models",
// arXiv:1504.00719, 2015.
//   sec. II, eq. 4-10   MLCP -> LCP (e, F) by eliminating the unconstrained variables
//   sec. V, Theorem 1   only linearly independent normals need positive impulses
//   sec. VI, eq. 45-46  no slip: S v(t+dt) = 0, T v(t+dt) = 0 at every contact
//   eq. 47-57           equality block A = [M -J^T -S^T -T^T; J 0; S 0; T 0], LCP F = N X^-1 N^T
//   Algorithm 2         FIND-INDICES: keep the rows of J, S, T that leave A non-singular
//   Algorithm 1         modified PPM I: pivot on the smallest negative w (into the non-basic
//                       set) and the smallest negative z (back to the basic set)
//
// Mapping to contact space. ContactProblem gives v = G lambda + c with G = J_c M^-1 J_c^T, not
// M and the row Jacobians. Eliminating v(t+dt) from Drumwright's MLCP (x = -A^-1 (C y + g),
// eq. 8) gives exactly the Schur complement below, so we work with G directly:
//   E = independent tangential rows (S, T), U = contact normal rows N and limit rows.
//   Equalities v_E = 0:  lambda_E = -G_EE^-1 (G_EU lambda_U + c_E)
//   LCP (eq. 56-57):     w = F z + e,  F = G_UU - G_UE G_EE^-1 G_EU,  e = c_U - G_UE G_EE^-1 c_E,
//                        0 <= z = lambda_U  _|_  w = v_U >= 0.
//   FIND-INDICES' test "X^T M^-1 X not singular" is "G_EE not singular"; we grow a Cholesky
//   factor of G_EE one row at a time (the O(m^2) update the paper suggests) and keep a row when
//   its pivot exceeds rank_tolerance * G_kk. Dependent rows get lambda = 0; their velocity is a
//   combination of the kept rows' and is zero too when c is physical (c = J_c u).
//   The paper has no bilateral rows J here: the minimal-coordinate G has already eliminated them.
//
// Cost. Drumwright's O(m^3 + m^2 n) (m DOF, n contacts) comes from factoring m x m systems built
// from M and J. In contact space with k <= min(m, 2n) kept tangential rows and p = n + nl
// unilateral rows: FIND-INDICES O(n k^2), Y = G_EE^-1 G_EU O(k^2 p), F O(p^2 k), and each PPM
// pivot refactors F_BB, O(|B|^3 + p |B|) with |B| <= m (Theorem 1), no rank-1 updates. On top,
// forming G itself (by the Delassus assembler) costs O(m^2 n + m n^2). For the few-contact robot
// problems of this engine the contact-space route is cheaper than working with M (m = 18 > 3n
// for ANYmal with <= 4 contacts); for many contacts on few DOF the paper's route scales better.
//
// Model notes: no slip ignores mu (infinite friction, the tangential impulse may leave the
// cone), and, as in eq. 45-46, the tangential velocity is zeroed at every contact of the
// problem, including contacts that separate (w_i > 0, lambda_n = 0).
// Symbols: G, c, lambda as in ContactProblem; E, U index sets; F, e, z, w the LCP; B the
// non-basic set of Algorithm 1 (whose z are solved for, w_B = 0); z-dagger, w-dagger (z_, w_).
#include "impulse/solvers/noslip.hpp"

#include <cmath>

#include "dense_kernels.hpp"

namespace impulse {

void NoSlipSolver::reserve_impl(Index max_rows) {
  const Index n = max_rows;
  E_.reserve(n);
  U_.reserve(n);
  B_.reserve(n);
  in_B_.resize(n);
  excluded_.resize(n);
  L_E_.setZero(n, n);
  Y_.setZero(n, n);
  F_.setZero(n, n);
  A_.setZero(n, n);
  for (VecX* v : {&e_, &y_c_, &z_, &w_, &tmp_}) v->setZero(n);
}

SolverResult NoSlipSolver::solve_impl(const ContactProblem& problem, VecXref lambda) {
  const NoSlipSettings& s = settings_;
  const MatXcref& G = problem.G;
  const VecXcref& c = problem.c;
  const Index nc = problem.nc, n = problem.size();
  SolverResult result;

  // --- Algorithm 2, FIND-INDICES on the tangential rows (S then T of each contact) ----------
  E_.clear();
  for (Index i = 0; i < nc; ++i) {
    for (Index k = 3 * i; k < 3 * i + 2; ++k) {
      const Scalar G_kk = G(k, k);
      if (!(G_kk > 0)) continue;
      const Index m = static_cast<Index>(E_.size());
      // l = L^-1 G_Ek (forward substitution), pivot d = G_kk - |l|^2
      Scalar d = G_kk;
      for (Index a = 0; a < m; ++a) {
        Scalar t = G(E_[a], k);
        for (Index b = 0; b < a; ++b) t -= L_E_(a, b) * L_E_(m, b);
        L_E_(m, a) = t / L_E_(a, a);
        d -= L_E_(m, a) * L_E_(m, a);
      }
      if (d > s.rank_tolerance * G_kk) {  // "X^T M^-1 X not singular": keep row k
        L_E_(m, m) = std::sqrt(d);
        E_.push_back(k);
      }
    }
  }
  nE_ = static_cast<Index>(E_.size());
  const Index nE = nE_;

  // --- Schur complement: the LCP (e, F) of eq. 56-57 in contact space -----------------------
  U_.clear();
  for (Index i = 0; i < nc; ++i) U_.push_back(3 * i + 2);
  for (Index j = 3 * nc; j < n; ++j) U_.push_back(j);
  const Index nU = static_cast<Index>(U_.size());
  // y_c = G_EE^-1 c_E,  Y = G_EE^-1 G_EU
  for (Index a = 0; a < nE; ++a) y_c_[a] = c[E_[a]];
  detail::cholesky_solve_in_place(L_E_, nE, y_c_);
  for (Index u = 0; u < nU; ++u) {
    for (Index a = 0; a < nE; ++a) tmp_[a] = G(E_[a], U_[u]);
    detail::cholesky_solve_in_place(L_E_, nE, tmp_);
    Y_.col(u).head(nE) = tmp_.head(nE);
  }
  for (Index u = 0; u < nU; ++u) {
    Scalar e_u = c[U_[u]];
    for (Index a = 0; a < nE; ++a) e_u -= G(U_[u], E_[a]) * y_c_[a];
    e_[u] = e_u;
    for (Index v = 0; v <= u; ++v) {
      Scalar F_uv = G(U_[u], U_[v]);
      for (Index a = 0; a < nE; ++a) F_uv -= G(U_[u], E_[a]) * Y_(a, v);
      F_(u, v) = F_uv;
      F_(v, u) = F_uv;
    }
  }

  // --- Algorithm 1, modified PPM I on w = F z + e ---------------------------------------------
  const Scalar w_tol =
      s.tolerance * std::max<Scalar>(1, nU > 0 ? e_.head(nU).cwiseAbs().maxCoeff() : 0);
  B_.clear();
  for (Index u = 0; u < nU; ++u) {
    in_B_[u] = 0;
    excluded_[u] = 0;
    z_[u] = 0;
    w_[u] = e_[u];
  }
  // lines 2-8 are the first pass of the loop below: with B empty, z = 0 and w = e, so the
  // trivial solution is returned at once when e >= 0, else argmin e enters B.
  result.status = SolverStatus::MaxIterations;
  for (Index pivot = 1; pivot <= s.max_pivots; ++pivot) {
    result.iterations = pivot;
    const Index nB = static_cast<Index>(B_.size());
    // lines 10-12: z_B = -F_BB^-1 e_B
    for (Index a = 0; a < nB; ++a) {
      for (Index b = 0; b <= a; ++b) A_(a, b) = F_(B_[a], B_[b]);
    }
    if (!detail::cholesky_in_place(A_, nB, 1e-12)) {
      // F_BB singular: the newest index is dependent on the others (Theorem 1 says it needs
      // no impulse); drop it for the rest of this solve.
      const Index last = B_.back();
      B_.pop_back();
      in_B_[last] = 0;
      excluded_[last] = 1;
      continue;
    }
    for (Index a = 0; a < nB; ++a) tmp_[a] = -e_[B_[a]];
    detail::cholesky_solve_in_place(A_, nB, tmp_);
    // lines 13-14: w = F_:B z_B + e
    for (Index u = 0; u < nU; ++u) {
      Scalar w = e_[u];
      for (Index a = 0; a < nB; ++a) w += F_(u, B_[a]) * tmp_[a];
      w_[u] = in_B_[u] ? Scalar(0) : w;
    }
    const Scalar z_tol =
        s.tolerance * std::max<Scalar>(1, nB > 0 ? tmp_.head(nB).cwiseAbs().maxCoeff() : 0);
    Index j_min = -1;  // most negative z in B
    for (Index a = 0; a < nB; ++a) {
      if (j_min < 0 || tmp_[a] < tmp_[j_min]) j_min = a;
    }
    const bool z_negative = j_min >= 0 && tmp_[j_min] < -z_tol;
    // line 15: most negative w outside B
    Index i = -1;
    for (Index u = 0; u < nU; ++u) {
      if (in_B_[u] || excluded_[u]) continue;
      if (i < 0 || w_[u] < w_[i]) i = u;
    }
    const bool w_negative = i >= 0 && w_[i] < -w_tol;
    if (!w_negative && !z_negative) {  // lines 24-29: solution found
      for (Index u = 0; u < nU; ++u) z_[u] = 0;
      for (Index a = 0; a < nB; ++a) z_[B_[a]] = tmp_[a];
      result.status = SolverStatus::Converged;
      break;
    }
    if (z_negative) {  // lines 19-22 and 34-38: move B(j) back to the basic set
      in_B_[B_[j_min]] = 0;
      B_.erase(B_.begin() + j_min);
    }
    if (w_negative) {  // lines 32-33: move i into the non-basic set
      B_.push_back(i);
      in_B_[i] = 1;
    }
  }
  result.residual = 0;
  for (Index u = 0; u < nU; ++u) {  // LCP residual at exit: the most negative w or z, m/s | N s
    result.residual = std::max({result.residual, -w_[u], -z_[u]});
  }
  if (result.status != SolverStatus::Converged) return result;  // lambda keeps the warm start

  // --- Impulses: lambda_U = z, lambda_E = -(y_c + Y z), dependent tangential rows 0 ----------
  lambda.setZero();
  for (Index u = 0; u < nU; ++u) lambda[U_[u]] = z_[u];
  for (Index a = 0; a < nE; ++a) {
    Scalar t = y_c_[a];
    for (Index u = 0; u < nU; ++u) t += Y_(a, u) * z_[u];
    lambda[E_[a]] = -t;
  }
  // Verify what the model promises before reporting convergence: on rank-deficient G (more
  // contact rows than DOF) the choice of independent tangential rows is decided by a pivot
  // threshold, and a near-singular pick gives huge impulses that violate Signorini. Such a
  // result is reported as NumericalIssue with lambda = 0 instead of a silent wrong answer.
  const Scalar scale = 1 + problem.c.cwiseAbs().maxCoeff();
  bool ok = lambda.allFinite();
  for (Index r = 0; ok && r < n; ++r) {
    const Scalar v = problem.G.row(r).dot(lambda) + problem.c[r];
    const bool normal = r >= 3 * problem.nc || r % 3 == 2;
    ok = normal ? v >= -settings_.verify_tolerance * scale : std::abs(v) <= settings_.verify_tolerance * scale;
  }
  if (!ok) {
    lambda.setZero();
    result.status = SolverStatus::NumericalIssue;
  }
  return result;
}

}  // namespace impulse
