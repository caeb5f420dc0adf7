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
//   The paper has no bilateral rows J here: the minimal-coordinate G has already eliminated them.
//
// Rank decisions (departure: the paper tests "X^T M^-1 X not singular" by a Cholesky that
// succeeds or fails, which in floating point needs a threshold). G is rank-deficient whenever
// the contacts have more rows than the system has DOF (ANYmal with feet and four torso corners:
// 24 rows on 18 DOF), and the Schur pivot of a dependent row is then rounding noise, ~1e-16 of
// the entries it is computed from. A threshold relative to the row's own pivot candidate fails
// on it: the PPM used to test F_BB's Cholesky pivots against 1e-12 |F_kk|, and for a normal row
// that is a combination of the kept tangential rows F_kk itself is that noise, so the test
// passed and z = -e_k / noise gave impulses of 1e14 N s. So every pivot here is compared with
// one scale, pivot_min = rank_tolerance * max_k G_kk (measured on the ANYmal problems: the same
// answers for rank_tolerance from 1e-6 to 1e-14, wrong ones from 1e-15 on):
//   FIND-INDICES is a greedy (diagonally pivoted) Cholesky of G_EE over the tangential rows: at
//   each step the tangential row with the largest Schur pivot G_kk - |L_k|^2 joins E, until none
//   exceeds pivot_min. Same O(n m^2) as the paper's sequential scan, but rank-revealing: the
//   kept rows are the best-conditioned choice, not the first ones in contact order. Dependent
//   tangential rows get lambda = 0; their velocity is a combination of the kept rows' velocities
//   (zero) when c is in range(J), as it is for the tangential rows (no targets are folded in).
//   The same factorization step also yields L_U = G_UE L_E^-T for the unilateral rows, so e and
//   any column of F are available without forming G_EE^-1 G_EU.
//   Algorithm 1 with Theorem 1: a unilateral row whose F_kk (its Schur pivot against E) is below
//   pivot_min is a combination of E alone and is excluded (z = 0) before pivoting. When the index
//   i chosen by line 15 would enter B, its Schur pivot F_ii - |A^-1 F_Bi|^2 against the factor A
//   of F_BB is tested the same way; below it, row i is a combination of E and B and is excluded
//   while B only grows (exclusions against B are lifted when an index leaves B).
//   What a rank decision costs: a tangential row k dropped with Schur pivot d_k <= pivot_min is
//   J_k = alpha^T J_E + r_k with r_k M^-1 r_k^T = d_k, so its velocity is v_k = r_k u+ and
//   |v_k| <= sqrt(d_k) |u+|_M (the M-norm of the velocity after the step). Exactly dependent
//   rows (the ANYmal torso corners, duplicated contacts) slip by rounding only. A nearly
//   dependent one (two contacts at one point whose frames differ by theta ~ 1e-4 rad, seen
//   once in the "random" scenario) slips by ~theta times the opening speed of its twin; keeping
//   it instead would lock the point with impulses ~ v / d_k (1e4 N s there) whose rounding is
//   amplified by 1 / theta into the other rows. That slip is reported (dropped_slip(), and in
//   SolverResult::residual), not hidden, and the status stays Converged.
//
// Infeasible targets. The Delassus assembler folds targets into c (erp position correction,
// restitution: c_n = J_n u - b_n), and b is not in range(J). On a normal row that is a
// combination of the kept rows, the velocity w_i = v_i is then fixed at the inconsistency of b
// whatever lambda is, and if that is negative no lambda meets Signorini with zero slip: a box
// whose four corners have differently tilted tangent planes cannot move at all when none may
// slip, so it cannot be pushed out of a penetration (the ANYmal torso corners: 0.018 m/s erp
// target, unmeetable). An LCP solver that does not detect this pivots towards z = infinity.
// Here the row is excluded by Theorem 1 (z_i = 0) and keeps w_i < 0; every other promise holds
// (v_T = 0, Signorini on the remaining rows). The status is Converged, and
// SolverResult::residual and unmet_target() give the largest unmet target (m/s).
//
// Cost, for n contacts plus nl limits (p = n + nl unilateral rows) on a system of m DOF, with
// k = |E| <= min(m, 2n) and |B| <= m by Theorem 1:
//   FIND-INDICES          k steps of O((3n + nl) k)            O(n m^2)
//   e                     O(k^2 + p k)
//   one index entering B  its column of F O(p k), plus A update O(|B|^2)
//   one exclusion         O(|B|^2) (its F_Bi is read from the cached columns of B)
//   one change of B       z_B by two triangular solves O(|B|^2), w = F_:B z_B + e O(p |B|);
//                         leaving B refactors A from that position, O(|B|^3)
//   lambda_E              O(k |B| + k^2);  final check v = G_:nz lambda_nz + c  O(n (k + |B|))
// so a solve with P pivots costs O(n m^2 + P (p m + m^3)) plus an O(p) scan per pivot for the
// most negative w; rows dependent on E cost no pivot. With P = O(m) (the paper's expectation;
// measured: 1 to 4 pivots on average for 4 to 32 ANYmal contacts) it is linear in n. Worst case
// (every unilateral row pivots) it is O(n^2 m). Not
// counted: forming G (Delassus assembler, O(m^2 n + m n^2)) and ContactSolver::solve's check
// of G for non-finite entries, O(n^2), which dominates a no-slip solve from ~32 contacts on.
//
// Box rows (joint Coulomb friction, |lambda_j| <= b_j; contact_problem.hpp). Not part of
// Drumwright's model; added as an outer active set around the solve above. A free box row is an
// equality row like the tangential ones (it joins the FIND-INDICES candidates: v_j = 0, stick);
// a box row held at a bound has lambda_j = +-b_j, moved into c (c' = c + G_:j lambda_j) and out of
// the solve. After each solve the free row whose |lambda_j| / b_j exceeds 1 most is held at
// sign(lambda_j) b_j, and a held row whose velocity does not oppose its impulse (v_j lambda_j > 0
// beyond the tolerance) is freed again; then solve again, until neither happens (each pass one
// change, at most 4 nb + 4 passes; more is reported as MaxIterations). Joint friction is a
// property of the joint, not of a contact, so the no-slip model keeps its bound.
//
// Model notes: no slip ignores mu (infinite friction, the tangential impulse may leave the
// cone), and, as in eq. 45-46, the tangential velocity is zeroed at every contact of the
// problem, including contacts that separate (w_i > 0, lambda_n = 0).
// Symbols: G, c, lambda as in ContactProblem; E, U index sets; F, e, z, w the LCP; B the
// non-basic set of Algorithm 1 (whose z are solved for, w_B = 0); L the pivoted Cholesky columns
// of G on E; A the Cholesky factor of F_BB.
#include "impulse/solvers/noslip.hpp"

#include <algorithm>
#include <cmath>

#include "dense_kernels.hpp"

namespace impulse {

void NoSlipSolver::reserve_impl(Index max_rows) {
  const Index n = max_rows;
  E_.reserve(n);
  U_.reserve(n);
  B_.reserve(n);
  slot_.resize(n);
  kept_.resize(n);
  in_B_.resize(n);
  excluded_.resize(n);
  L_.setZero(n, n);
  Fc_.setZero(n, n);
  A_.setZero(n, n);
  for (VecX* v : {&d_, &y_, &e_, &z_, &w_, &zB_, &tmp_, &v_, &cb_}) v->setZero(n);
  at_bound_.assign(static_cast<std::size_t>(n), 0);
}

// --- Algorithm 2, FIND-INDICES as a greedy pivoted Cholesky on the tangential rows -----------
void NoSlipSolver::find_indices(const MatXcref& G, Index nc, Index nu, Index n, Scalar pivot_min) {
  // Column a of L holds (G_:,E_a - L_:,0:a L_E_a,0:a^T) / L_E_a,a for every row: the rows in E form
  // the factor L_E of G_EE (in pivot order), the unilateral rows form L_U = G_UE L_E^-T, and
  // d_r = G_rr - |L_r|^2 is the Schur pivot of any row against the kept ones.
  for (;;) {
    Index best = -1;
    Scalar d_best = pivot_min;
    for (Index i = 0; i < nc; ++i) {
      for (Index k = 3 * i; k < 3 * i + 2; ++k) {
        if (!kept_[k] && d_[k] > d_best) best = k, d_best = d_[k];
      }
    }
    for (Index k = nu; k < n; ++k) {  // free box rows (joint friction, stick): equality rows too
      if (!kept_[k] && !at_bound_[k] && d_[k] > d_best) best = k, d_best = d_[k];
    }
    if (best < 0) break;  // every remaining tangential row is dependent (or |E| = rank)
    const Index j = static_cast<Index>(E_.size());
    const Scalar l_jj = std::sqrt(d_best);
    for (Index r = 0; r < n; ++r) tmp_[r] = G(r, best);
    for (Index a = 0; a < j; ++a) {
      const Scalar l_ba = L_(best, a);
      for (Index r = 0; r < n; ++r) tmp_[r] -= L_(r, a) * l_ba;
    }
    kept_[best] = 1;
    for (Index r = 0; r < n; ++r) {
      if (kept_[r]) {
        L_(r, j) = 0;  // rows already in E: upper triangle of L_E
      } else {
        L_(r, j) = tmp_[r] / l_jj;
        d_[r] -= L_(r, j) * L_(r, j);
      }
    }
    L_(best, j) = l_jj;
    E_.push_back(best);
  }
  nE_ = static_cast<Index>(E_.size());
}

// --- the LCP (e, F) of eq. 56-57 in contact space and Algorithm 1 on it ------------------------
SolverResult NoSlipSolver::pivot(const MatXcref& G, const VecXcref& c, Index nc, Index nu, Scalar pivot_min) {
  const NoSlipSettings& s = active();
  const Index nE = nE_;
  SolverResult result;
  U_.clear();
  for (Index i = 0; i < nc; ++i) U_.push_back(3 * i + 2);
  for (Index j = 3 * nc; j < nu; ++j) U_.push_back(j);
  const Index nU = static_cast<Index>(U_.size());
  for (Index a = 0; a < nE; ++a) {  // y = L_E^-1 c_E
    Scalar t = c[E_[a]];
    for (Index b = 0; b < a; ++b) t -= L_(E_[a], b) * y_[b];
    y_[a] = t / L_(E_[a], a);
  }
  for (Index u = 0; u < nU; ++u) {  // e = c_U - L_U y  (= c_U - G_UE G_EE^-1 c_E)
    Scalar t = c[U_[u]];
    for (Index a = 0; a < nE; ++a) t -= L_(U_[u], a) * y_[a];
    e_[u] = t;
  }

  // --- Algorithm 1, modified PPM I on w = F z + e ---------------------------------------------
  Index n_slots = 0;
  // column F_:i (i a position in U_), computed once per solve when i first enters B
  auto F_column = [&](Index i) -> Index {
    if (slot_[i] >= 0) return slot_[i];
    const Index col = n_slots++;
    const Index ri = U_[i];
    for (Index u = 0; u < nU; ++u) Fc_(u, col) = G(U_[u], ri);
    for (Index a = 0; a < nE; ++a) {
      const Scalar l_ia = L_(ri, a);
      for (Index u = 0; u < nU; ++u) Fc_(u, col) -= L_(U_[u], a) * l_ia;
    }
    slot_[i] = col;
    return col;
  };
  // Cholesky rows pos.. of A = chol(F_BB) after B changed at pos (rows before pos are unchanged).
  // Removing an index only raises the later pivots, but rounding could still leave one at or
  // below the threshold: that index is then dependent and leaves B too (Theorem 1).
  auto refactor_from = [&](Index pos) {
    for (Index i = pos; i < static_cast<Index>(B_.size());) {
      const Index ci = slot_[B_[i]];
      Scalar d = 0;
      for (Index b = 0; b <= i; ++b) {
        Scalar t = Fc_(B_[b], ci);
        for (Index q = 0; q < b; ++q) t -= A_(i, q) * A_(b, q);
        if (b < i) {
          A_(i, b) = t / A_(b, b);
        } else {
          d = t;
        }
      }
      if (d > pivot_min) {
        A_(i, i) = std::sqrt(d);
        ++i;
      } else {
        in_B_[B_[i]] = 0;
        excluded_[B_[i]] = 1;
        ++exclusions_;
        B_.erase(B_.begin() + i);
      }
    }
  };

  const Scalar w_tol =
      s.tolerance * std::max<Scalar>(1, nU > 0 ? e_.head(nU).cwiseAbs().maxCoeff() : 0);
  B_.clear();
  exclusions_ = 0;
  for (Index u = 0; u < nU; ++u) {
    in_B_[u] = 0;
    // F_uu = d_u below the threshold: row u is a combination of the rows in E alone, whatever B
    // is, so Theorem 1 excludes it for the whole solve (2: never lifted) without a pivot.
    excluded_[u] = d_[U_[u]] > pivot_min ? 0 : 2;
    exclusions_ += excluded_[u] != 0;
    slot_[u] = -1;
    z_[u] = 0;
    w_[u] = e_[u];
  }
  // lines 2-8 are the first pass of the loop below: with B empty, z = 0 and w = e, so the
  // trivial solution is returned at once when e >= 0, else argmin e enters B.
  result.status = SolverStatus::MaxIterations;
  for (Index pivot = 1; pivot <= s.max_pivots; ++pivot) {
    result.iterations = pivot;
    Index nB = static_cast<Index>(B_.size());
    // z-dagger = zB_ (lines 10-12) and w-dagger = w_ (lines 13-14) are current for B here
    const Scalar z_tol =
        s.tolerance * std::max<Scalar>(1, nB > 0 ? zB_.head(nB).cwiseAbs().maxCoeff() : 0);
    Index j_min = -1;  // most negative z in B
    for (Index a = 0; a < nB; ++a) {
      if (j_min < 0 || zB_[a] < zB_[j_min]) j_min = a;
    }
    const bool z_negative = j_min >= 0 && zB_[j_min] < -z_tol;
    // line 15: most negative w outside B (and not excluded as dependent)
    Index i = -1;
    for (Index u = 0; u < nU; ++u) {
      if (in_B_[u] || excluded_[u]) continue;
      if (i < 0 || w_[u] < w_[i]) i = u;
    }
    const bool w_negative = i >= 0 && w_[i] < -w_tol;
    if (!w_negative && !z_negative) {  // lines 24-29: solution found
      result.status = SolverStatus::Converged;
      break;
    }
    bool changed = false;
    if (z_negative) {  // lines 19-22 and 34-38: move B(j) back to the basic set
      in_B_[B_[j_min]] = 0;
      B_.erase(B_.begin() + j_min);
      refactor_from(j_min);
      // B shrank: an index excluded as a combination of the old B may be independent now
      for (Index u = 0; u < nU; ++u) excluded_[u] = excluded_[u] == 2 ? 2 : 0;
      changed = true;
    }
    if (w_negative) {  // lines 32-33: move i into the non-basic set, unless dependent (Thm. 1)
      nB = static_cast<Index>(B_.size());
      // l = A^-1 F_Bi from the cached columns of B (F symmetric), pivot d = F_ii - |l|^2
      Scalar d = d_[U_[i]];
      for (Index a = 0; a < nB; ++a) {
        Scalar t = Fc_(i, slot_[B_[a]]);
        for (Index b = 0; b < a; ++b) t -= A_(a, b) * tmp_[b];
        tmp_[a] = t / A_(a, a);
        d -= tmp_[a] * tmp_[a];
      }
      if (d > pivot_min) {
        for (Index a = 0; a < nB; ++a) A_(nB, a) = tmp_[a];
        A_(nB, nB) = std::sqrt(d);
        F_column(i);
        B_.push_back(i);
        in_B_[i] = 1;
        changed = true;
      } else {
        excluded_[i] = 1;
        ++exclusions_;
      }
    }
    if (!changed) continue;  // only an exclusion: z-dagger and w-dagger stand
    // lines 10-12: z_B = -F_BB^-1 e_B
    nB = static_cast<Index>(B_.size());
    for (Index a = 0; a < nB; ++a) zB_[a] = -e_[B_[a]];
    detail::cholesky_solve_in_place(A_, nB, zB_);
    // lines 13-14: w = F_:B z_B + e (w_B = 0 up to rounding; set exactly)
    for (Index u = 0; u < nU; ++u) w_[u] = e_[u];
    for (Index a = 0; a < nB; ++a) {
      const Index col = slot_[B_[a]];
      const Scalar zb = zB_[a];
      for (Index u = 0; u < nU; ++u) w_[u] += Fc_(u, col) * zb;
    }
    for (Index a = 0; a < nB; ++a) w_[B_[a]] = 0;
  }
  const Index nB = static_cast<Index>(B_.size());
  for (Index u = 0; u < nU; ++u) z_[u] = 0;
  for (Index a = 0; a < nB; ++a) z_[B_[a]] = zB_[a];
  result.residual = 0;
  for (Index u = 0; u < nU; ++u) {  // LCP residual at exit: the most negative w or z, m/s | N s
    result.residual = std::max({result.residual, -w_[u], -z_[u]});
  }
  return result;
}

// --- Impulses from z_B, and the check of the promises ------------------------------------------
bool NoSlipSolver::impulses(const MatXcref& G, const VecXcref& c, Index nc, Index nu, Index n, VecXref lambda) {
  const NoSlipSettings& s = active();
  const Index nE = nE_, nB = static_cast<Index>(B_.size());
  const Scalar w_tol =
      s.tolerance * std::max<Scalar>(1, U_.empty() ? 0 : e_.head(static_cast<Index>(U_.size())).cwiseAbs().maxCoeff());
  // lambda_U = z, lambda_E = -G_EE^-1 (c_E + G_EB z_B), dependent rows 0
  // G_EE^-1 (c_E + G_EB z_B) = L_E^-T (y + L_B^T z_B) with L_B = G_BE L_E^-T the rows of L.
  lambda.setZero();
  for (Index a = 0; a < nE; ++a) tmp_[a] = y_[a];
  for (Index b = 0; b < nB; ++b) {
    const Index rb = U_[B_[b]];
    lambda[rb] = zB_[b];
    for (Index a = 0; a < nE; ++a) tmp_[a] += L_(rb, a) * zB_[b];
  }
  for (Index a = nE - 1; a >= 0; --a) {  // L_E^T x = tmp
    Scalar t = tmp_[a];
    for (Index b = a + 1; b < nE; ++b) t -= L_(E_[b], a) * tmp_[b];
    tmp_[a] = t / L_(E_[a], a);
    lambda[E_[a]] = -tmp_[a];
  }
  // Verify what the model promises before reporting convergence, from the nonzero impulses
  // only: v = c + G_:E lambda_E + G_:B z_B, computed from G directly (not through L and F).
  // On the rows the solve controls, slip must be zero and v_n >= 0, except on rows excluded by
  // Theorem 1 with w < 0 (targets outside range(G), see the header): there v must be the w the
  // LCP computed, which is then the unmet target. The slip left on dropped tangential rows is
  // what the rank decision costs (see the header); it is measured and reported, not checked.
  for (Index r = 0; r < n; ++r) v_[r] = c[r];
  for (Index a = 0; a < nE; ++a) v_.head(n) += G.col(E_[a]) * lambda[E_[a]];
  for (Index b = 0; b < nB; ++b) v_.head(n) += G.col(U_[B_[b]]) * zB_[b];
  const Scalar tol = s.verify_tolerance * (1 + c.cwiseAbs().maxCoeff());
  bool ok = lambda.allFinite();
  unmet_target_ = 0;
  for (Index r = 0; ok && r < n; ++r) {
    if ((r < 3 * nc && r % 3 != 2) || r >= nu) {  // tangential or box rows
      if (r >= nu && at_bound_[r]) continue;  // held at a bound: checked by the outer loop
      if (kept_[r]) {
        ok = std::abs(v_[r]) <= tol;
      } else {
        dropped_slip_ = std::max(dropped_slip_, std::abs(v_[r]));
      }
      continue;
    }
    const Index u = r < 3 * nc ? r / 3 : nc + (r - 3 * nc);
    if (excluded_[u] && w_[u] < -w_tol) {  // a target outside range(G), not rounding
      ok = std::abs(v_[r] - w_[u]) <= tol;
      unmet_target_ = std::max(unmet_target_, -v_[r]);
    } else {
      ok = v_[r] >= -tol;
    }
  }
  return ok;
}

SolverResult NoSlipSolver::solve_with_active(const ContactProblem& problem, VecXref lambda) {
  const MatXcref& G = problem.G;
  const Index nc = problem.nc, nu = problem.first_box_row(), n = problem.size();
  Scalar g_max = 0;
  for (Index r = 0; r < n; ++r) g_max = std::max(g_max, G(r, r));
  const Scalar pivot_min = active().rank_tolerance * g_max;  // the one rank threshold
  const Scalar v_tol = active().verify_tolerance * (1 + problem.c.cwiseAbs().maxCoeff());
  for (Index r = 0; r < n; ++r) at_bound_[static_cast<std::size_t>(r)] = 0;
  cb_.head(n) = problem.c;
  SolverResult result;
  Index pivots = 0;
  // outer active set over the box rows (see the header); one pass without box rows
  const Index max_passes = 4 * problem.nb + 4;
  for (Index pass = 0; pass < max_passes; ++pass) {
    unmet_target_ = 0;
    dropped_slip_ = 0;
    E_.clear();
    for (Index r = 0; r < n; ++r) {
      d_[r] = G(r, r);
      kept_[r] = 0;
    }
    find_indices(G, nc, nu, n, pivot_min);
    result = pivot(G, cb_.head(n), nc, nu, pivot_min);
    pivots += result.iterations;
    result.iterations = pivots;
    if (result.status != SolverStatus::Converged) return result;  // lambda keeps the warm start
    if (!impulses(G, cb_.head(n), nc, nu, n, lambda)) {
      // a violated promise on a row the solve controls: report it, not a wrong answer
      lambda.setZero();
      unmet_target_ = 0;
      dropped_slip_ = 0;
      result.status = SolverStatus::NumericalIssue;
      return result;
    }
    // box rows: hold the worst free row beyond its bound, or free a held row that does not slip
    // against its impulse (v_ holds G lambda + c for the free rows, c' for the held ones)
    Index worst = -1;
    Scalar worst_ratio = 1 + 1e-12;
    for (Index r = nu; r < n; ++r) {
      const Scalar b = problem.box_bound(r);
      const signed char held = at_bound_[static_cast<std::size_t>(r)];
      if (held) {
        lambda[r] = held * b;
        if (held * v_[r] > v_tol && worst < 0) worst = r;  // moving along its impulse: free it
        continue;
      }
      const Scalar ratio = b > 0 ? std::abs(lambda[r]) / b : (std::abs(lambda[r]) > 0 ? 2 : 0);
      if (ratio > worst_ratio) worst = r, worst_ratio = ratio;
    }
    if (worst < 0) {
      result.residual = std::max(result.residual, dropped_slip_);
      return result;
    }
    signed char& held = at_bound_[static_cast<std::size_t>(worst)];
    const Scalar b = problem.box_bound(worst);
    if (held) {
      cb_.head(n) -= G.col(worst) * (held * b);
      held = 0;
    } else {
      held = lambda[worst] > 0 ? 1 : -1;
      cb_.head(n) += G.col(worst) * (held * b);
    }
  }
  result.status = SolverStatus::MaxIterations;  // the active set did not settle
  return result;
}

}  // namespace impulse
