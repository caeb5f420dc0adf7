// No-slip contact model solved by the modified Principal Pivoting Method I:
// E. Drumwright, "Rapidly computable viscous friction and no-slip rigid contact models",
// arXiv:1504.00719, 2015: sec. VI (eq. 45-57), Algorithm 2 (FIND-INDICES), Algorithm 1 (modified
// PPM I). Worked in contact space; see src/solvers/noslip.cpp for the mapping and its cost.
#pragma once

#include <vector>

#include "impulse/solvers/contact_solver.hpp"

namespace impulse {

struct NoSlipSettings {
  // FIND-INDICES: a tangential row joins the equality set when its Cholesky pivot
  // G_kk - |L^-1 G_Ek|^2 exceeds rank_tolerance * G_kk ("X^T M^-1 X not singular").
  Scalar rank_tolerance = 1e-9;
  // PPM: w_i < -tolerance * max(1, |e|_inf) counts as negative (m/s); z likewise (N s).
  Scalar tolerance = 1e-12;
  Index max_pivots = 1000;  // safety cap on PPM iterations (the paper expects O(n))
  // Final check of the promises (v_n >= 0, v_T = 0) relative to 1 + |c|_inf, m/s; a result that
  // fails it is reported as NumericalIssue (not in the paper: see noslip.cpp).
  Scalar verify_tolerance = 1e-8;
};

class NoSlipSolver final : public ContactSolver {
 public:
  explicit NoSlipSolver(const NoSlipSettings& settings = NoSlipSettings()) : settings_(settings) {}
  const char* name() const override { return "noslip"; }
  NoSlipSettings& settings() { return settings_; }
  const NoSlipSettings& settings() const { return settings_; }

  // Number of tangential rows kept as equality constraints by FIND-INDICES in the last solve.
  Index equality_rows() const { return nE_; }

 protected:
  void reserve_impl(Index max_rows) override;
  SolverResult solve_impl(const ContactProblem& problem, VecXref lambda) override;

 private:
  NoSlipSettings settings_;
  std::vector<Index> E_;         // independent tangential rows (FIND-INDICES)
  std::vector<Index> U_;         // unilateral rows: contact normals, then limits
  std::vector<Index> B_;         // PPM non-basic set (positions in U_ whose z is free)
  std::vector<unsigned char> in_B_, excluded_;
  MatX L_E_;                     // Cholesky factor of G_EE
  MatX Y_;                       // G_EE^-1 G_EU
  MatX F_;                       // LCP matrix F = G_UU - G_UE G_EE^-1 G_EU   (eq. 56)
  MatX A_;                       // factor of F_BB
  VecX e_, y_c_, z_, w_, tmp_;
  Index nE_ = 0;
};

}  // namespace impulse
