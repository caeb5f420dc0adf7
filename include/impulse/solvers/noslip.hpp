// No-slip contact model solved by the modified Principal Pivoting Method I:
// E. Drumwright, "Rapidly computable viscous friction and no-slip rigid contact models",
// arXiv:1504.00719, 2015: sec. VI (eq. 45-57), Algorithm 2 (FIND-INDICES), Algorithm 1 (modified
// PPM I), Theorem 1. Worked in contact space; see src/solvers/noslip.cpp for the mapping, the
// rank decisions and the cost (linear in the number of contacts for a fixed number of DOF).
#pragma once

#include <vector>

#include "impulse/solvers/contact_solver.hpp"

namespace impulse {

struct NoSlipSettings {
  // Rank decisions (FIND-INDICES and Theorem 1): a row is independent of the rows already kept
  // when its Schur pivot (G_kk minus its projection on the kept rows) exceeds
  // rank_tolerance * max_k G_kk. Relative to the scale of the whole problem, not to the row's own
  // G_kk: the rounding noise of a Schur pivot is ~1e-16 of the largest entries it is built from.
  Scalar rank_tolerance = 1e-10;
  // PPM: w_i < -tolerance * max(1, |e|_inf) counts as negative (m/s); z likewise (N s).
  Scalar tolerance = 1e-12;
  Index max_pivots = 1000;  // safety cap on PPM iterations (the paper expects O(n))
  // Final check of the promises on the rows the solve controls (v_n >= 0, v_T = 0 on the kept
  // tangential rows) relative to 1 + |c|_inf, m/s; a result that fails it is reported as
  // NumericalIssue (not in the paper: see noslip.cpp).
  Scalar verify_tolerance = 1e-8;
};

class NoSlipSolver final : public ContactSolverWithSettings<NoSlipSettings> {
 public:
  explicit NoSlipSolver(const NoSlipSettings& settings = NoSlipSettings())
      : ContactSolverWithSettings(settings) {}
  const char* name() const override { return "noslip"; }

  // Number of tangential rows kept as equality constraints by FIND-INDICES in the last solve.
  Index equality_rows() const { return nE_; }
  // Number of unilateral rows with a free impulse (|B| of Algorithm 1) at the last solution.
  Index active_rows() const { return static_cast<Index>(B_.size()); }
  // Unilateral rows given zero impulse as dependent in the last solve: on E alone (found before
  // pivoting) or on E and B (Theorem 1, when they would enter B); counted once per exclusion.
  Index dependent_exclusions() const { return exclusions_; }
  // Largest normal or limit velocity target that the last solve could not meet (m/s, >= 0):
  // nonzero only when c asks a row that is a combination of the kept rows for a velocity the
  // no-slip constraints forbid (e.g. erp position correction on a box whose corners may not
  // slip). Those rows keep zero impulse and v_n >= -unmet; every other promise holds. The
  // status is Converged and SolverResult::residual (the most negative w or z) includes it.
  Scalar unmet_target() const { return unmet_target_; }
  // Largest tangential velocity left on a tangential row that FIND-INDICES dropped as dependent
  // (m/s): rounding for exactly dependent rows; for a nearly dependent one (Schur pivot d below
  // rank_tolerance * max G_kk) at most sqrt(d) |u+|_M. Also included in SolverResult::residual.
  Scalar dropped_slip() const { return dropped_slip_; }

 protected:
  void reserve_impl(Index max_rows) override;
  SolverResult solve_with_active(const ContactProblem& problem, VecXref lambda) override;

 private:
  void find_indices(const MatXcref& G, Index nc, Index nu, Index n, Scalar pivot_min);
  SolverResult pivot(const MatXcref& G, const VecXcref& c, Index nc, Index nu, Scalar pivot_min);
  bool impulses(const MatXcref& G, const VecXcref& c, Index nc, Index nu, Index n, VecXref lambda);

  std::vector<Index> E_;         // kept tangential rows, in pivot order (FIND-INDICES)
  std::vector<Index> U_;         // unilateral rows: contact normals, then limits
  std::vector<Index> B_;         // PPM non-basic set (positions in U_ whose z is free)
  std::vector<Index> slot_;      // per position in U_: its cached column of F, or -1
  std::vector<unsigned char> kept_, in_B_, excluded_;
  MatX L_;                       // L(r, a) = (G_rE L_E^-T)(r, a) for every row r, a < |E|
  MatX Fc_;                      // lazily computed columns F_:u = G_Uu - L_U L_u^T (eq. 56)
  MatX A_;                       // Cholesky factor of F_BB, rows in the order of B_
  VecX d_;                       // Schur pivots G_rr - |L(r, :)|^2 (for r in U: F_rr)
  VecX y_;                       // L_E^-1 c_E
  VecX e_, z_, w_, zB_, tmp_, v_;
  VecX cb_;                      // c with the impulses of the box rows held at a bound folded in
  std::vector<signed char> at_bound_;  // per row: box row held at +b (1), -b (-1), or free (0)
  Index nE_ = 0, exclusions_ = 0;
  Scalar unmet_target_ = 0, dropped_slip_ = 0;
};

}  // namespace impulse
