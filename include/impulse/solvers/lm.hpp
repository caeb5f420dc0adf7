// Levenberg-Marquardt on Todorov's implicit complementarity formulation (MNCP):
// E. Todorov, "Implicit nonlinear complementarity: a new approach to contact dynamics", ICRA 2010;
// H. Mylapilli, A. Jain, "Complementarity Techniques for Minimal Coordinate Contact Dynamics",
// J. Comput. Nonlinear Dynam. 12(2), 2017, sec. 4 (eq. 49-59) and sec. 5 (RLM, PLM).
// See src/solvers/lm.cpp.
#pragma once

#include <vector>

#include "impulse/solvers/contact_solver.hpp"

namespace impulse {

enum class LmVariant {
  Regular,    // RLM, Mylapilli & Jain sec. 5.1 (after Bazaraa et al.)
  Projected,  // PLM, sec. 5.2: fixed tiny damping, stacked least squares, line search
};

struct LmSettings {
  LmVariant variant = LmVariant::Regular;
  // Solve for the scaled impulse f = K lambda, K = mean diagonal of G per contact (and G_jj per
  // limit row), so that impulse and velocity parts of x have the same units (m/s). The solution
  // set is unchanged; false gives Todorov's unscaled r(x) = (G - I) f(x) - x + c.
  bool scale = true;
  // Proximal weight rho of the step (lm.cpp, "Departures"): once psi stalls again after a
  // watchdog restart (or at the first stall when no restart is available), each linear solve
  // uses the Jacobian of r(x) + rho (f(x) - f(x_k)), the residual of the problem with G + rho K
  // and the impulse pulled towards the current one. Same solutions (the term vanishes at
  // x = x_k); the step no longer vanishes where G is singular (more contact rows than the
  // bodies' dofs: piles, stacks), where the plain Gauss-Newton step stalls on a plateau of psi.
  // 0: the paper's step throughout.
  Scalar proximal = 1e-4;
  Index max_iterations = 100;  // linear solves (accepted or rejected)
  Scalar tolerance = 1e-30;    // stop when psi = |r|^2 / 2 < tolerance (sec. 5: eps = 1e-30)
  // Also stop when |r|_inf <= roundoff * (|c| + |x| + |G| |f|): the residual is at rounding
  // level and psi < 1e-30 may be unreachable for large impulses (not in the paper).
  Scalar roundoff = 1e-14;

  // RLM (sec. 5.1): lambda_LM = 1e-3, lambda_step = 20, lambda_min = 1e-25, r 0.3 / 0.8. We
  // start from lambda_LM = 1e-8 (near the Gauss-Newton point, as Todorov's dogleg tries first;
  // lm.cpp "Departures"); the scaled J^T J has entries of order 1.
  Scalar damping = 1e-8;
  Scalar damping_step = 20;
  Scalar damping_min = 1e-25;
  Scalar damping_max = 1e20;  // give up (stalled) beyond this (not in the paper)
  Scalar r_min = 0.3;
  Scalar r_max = 0.8;

  // Cold start (lambda = 0 on entry; not in the paper, see lm.cpp): x_0 = -K lambda_s from the
  // sticking impulse lambda_s = -(G + eps I)^-1 c, eps = sticking_regularization * max G_ii, when
  // psi(x_0) < psi(c); false gives Todorov's x_0 = c.
  bool sticking_start = true;
  Scalar sticking_regularization = 1e-9;
  // RLM: when the reduction factor rejects a step, search along it (Armijo) at the kinks of f
  // (Todorov's "edge-aware line search") and at halvings, instead of only raising lambda_LM.
  bool kink_search = true;
  // Watchdog restart (after the paper's remark in sec. 5.2): when psi has not halved within
  // `watchdog` solves, or lambda_LM exceeds damping_max, take restart_sweeps projected
  // Gauss-Seidel sweeps from lambda = K^-1 f(x) and restart from there (at most max_restarts,
  // and no more once a restart has not halved the lowest psi: the iteration then stops as
  // MaxIterations with the lowest-psi point).
  Index watchdog = 4;  // 0: off
  Index restart_sweeps = 100;
  Index max_restarts = 10;

  // PLM (sec. 5.2): lambda_LM = 1e-16 and a step length t from a monotone Armijo backtracking
  // line search (the paper mentions non-monotone search with watchdog as possible additions).
  Scalar plm_damping = 1e-16;
  Scalar armijo = 1e-4;
  Scalar backtrack = 0.5;
  Index max_line_search = 40;
};

// Todorov's impulse f(z) of one contact (Mylapilli & Jain eq. 49-50; z = (z_t, z_n)) and, if
// dF is given, its Jacobian dF/dz (eq. 59). The velocity is v(z) = f(z) + z (eq. 51).
Vec3 todorov_impulse(const Vec3& z, Scalar mu, Mat3* dF = nullptr);

class LmSolver final : public ContactSolverWithSettings<LmSettings> {
 public:
  explicit LmSolver(const LmSettings& settings = LmSettings())
      : ContactSolverWithSettings(settings) {}
  const char* name() const override { return "lm"; }

 protected:
  void reserve_impl(Index max_rows) override;
  SolverResult solve_with_active(const ContactProblem& problem, VecXref lambda) override;

 private:
  // Todorov's f(x) (eq. 49-50) into f, and r(x) = G K^-1 f(x) - f(x) - x + c (eq. 55-56) into r.
  // Returns psi = |r|^2 / 2.
  Scalar residual(const ContactProblem& problem, const VecX& x, VecX& f, VecX& r);
  // Jacobian eq. 58-59 with the proximal term, J = (G K^-1 - (1 - rho) I) dF/dx - I: its
  // columns that are not -e_j into J_.col(0 .. m-1) (their indices in cols_, free_[j] = 1 for
  // the others); returns m.
  Index jacobian(const ContactProblem& problem, const VecX& x);
  // The neighbour lists of the row blocks (nbr_begin_, nbr_) from the zero pattern of G.
  void build_pattern(const ContactProblem& problem);
  // y += G(:, rows of block b) w, over b's neighbours only.
  void add_block_column(const ContactProblem& problem, Index b, const Scalar* w, Scalar* y) const;
  // Lower triangle of H_(0:m, 0:m) = J_N^T W J_N, W = diag(w_S on the rows of the -e_j columns, 1).
  void normal_matrix(const ContactProblem& problem, Index m, Scalar w_S);
  // Cold start point into x_ (sticking_start); uses H_ as workspace.
  void cold_start(const ContactProblem& problem);
  // `sweeps` projected Gauss-Seidel sweeps from lambda_ = K^-1 f_, then the warm-start map
  // x_ = G lambda + c - K lambda.
  void gauss_seidel_restart(const ContactProblem& problem, Index sweeps);
  // Armijo search along dx_ at the kinks of f and at halvings; on success x_, f_, r_ take the
  // best point and its psi is returned, else psi.
  Scalar kink_search(const ContactProblem& problem, Scalar psi, Scalar slope);

  VecX x_, x_best_, f_, r_, x_trial_, f_trial_, r_trial_, g_, dx_, Jdx_, b_, v_, kappa_, lambda_;
  Scalar prox_ = 0;  // the proximal weight of the current solve (0, then settings_.proximal)
  MatX J_, H_;
  Eigen::Matrix<Index, Eigen::Dynamic, 1> cols_;
  Eigen::Matrix<unsigned char, Eigen::Dynamic, 1> free_;
  Eigen::Matrix<Index, Eigen::Dynamic, 1> col_begin_;  // stored columns of each block
  std::vector<Index> nbr_begin_, nbr_;                 // neighbours of each block (sorted)
};

}  // namespace impulse
