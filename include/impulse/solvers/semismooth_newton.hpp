// Semismooth Newton stage for an island's contact problem (src/solvers/semismooth_newton.cpp):
// the exact answer where the per-contact sweeps level off on settling piles of round bodies
// (more rows than degrees of freedom, G singular, contacts slipping) and the active-set stage's
// classification cycles (docs/benchmarks.md, "Piles of round bodies").
//
//   SemismoothNewtonStage stage;
//   SemismoothNewtonReport r = stage.solve(problem, lambda, tolerance, settings);  // lambda: start in, answer out
//
// Method: P. Alart, A. Curnier, "A mixed formulation for frictional contact problems prone to
// Newton like solution methods", Comput. Methods Appl. Mech. Eng. 92(3), 1991. With
// v = G lambda + c and, per contact i, a weight r_i > 0, the conditions of ContactProblem are the
// zeros of the augmented-Lagrangian projection function (their sec. 3, the projection form of
// eq. 14-15)
//     F_N = lambda_N - proj_{>= 0}(lambda_N - r v_N)                                   (AC1)
//     F_T = lambda_T - proj_{disc(mu proj_{>= 0}(lambda_N - r v_N))}(lambda_T - r v_T)   (AC2)
// and, for the one-row constraints, F = lambda - proj_{>= 0}(lambda - r v) (limits) and
// F = lambda - proj_{[-b, b]}(lambda - r v) (box rows; b = inf: F = r v). F is piecewise smooth
// and strongly semismooth; Newton's method takes an element of its generalized Jacobian by case
// (with y = lambda - r v, t = y_T / |y_T|, R = mu y_N):
//     open      (y_N <= 0):          dF_i = I                        (lambda_i = 0 is eliminated)
//     sticking  (|y_T| <= R):         dF_i = r G_i:
//     slipping  (|y_T| > R > 0):      dF_N = r G_N:,
//         dF_T = (I - R / |y_T| P) E_T + R r / |y_T| P G_T: - mu t E_N + mu r t G_N:   (P = I - t t^T)
// (the derivative of the projection onto the disc: R / |y_T| P along y_T, t along the radius).
//
// Proximal point outer loop (Rockafellar, SIAM J. Control Optim. 14(5), 1976): G is singular
// where redundant contacts meet, and the answer is not unique there. Each outer iteration k
// takes the problem with G + rho I and c - rho lambda_k,
//     v_rho = (G + rho I) lambda + c - rho lambda_k                                       (PP)
// (strongly monotone in the closed rows: its linearization is regular, and its answer unique and
// continuous in c and lambda_k), and makes one Newton step on F with v_rho from lambda_k, where
// F_rho = F: the step solves (A + B (G + rho I)) dx = -F (below, semismooth_newton.cpp), an
// inexact proximal point method with one Newton step per subproblem. The iterates keep the
// split of the load along the null space of G that the warm start (the sweeps' answer) had, and
// move it only as far as the residual asks. rho adapts as a Levenberg-Marquardt damping does:
// it starts at proximal * max_r G_rr, grows tenfold (up to max_r G_rr) after a step that the line
// search cut below a quarter or rejected (a poor model: the next step is shorter and better
// conditioned), and shrinks tenfold (down to proximal_min * max_r G_rr) after a longer one.
//
// Each Newton step is globalized by an Armijo line search on |F_rho|^2 (the full step accepted
// first against the largest of the last five merits at the centres: nonmonotone, Grippo,
// Lampariello & Lucidi, SIAM J. Numer. Anal. 23(4), 1986). The rows of open contacts, open
// limits, box rows at a bound and the tangent rows of frictionless contacts have dF = I: their
// step is -F, eliminated before the linear solve; the kept rows' system is solved by a dense LU
// with partial pivoting (blocked, 32-column panels, Golub & Van Loan, "Matrix Computations", 4th
// ed., sec. 3.4.7), whose trailing updates are products of blocks of at most 256 x 256.
//
// Memory: the stage's buffers (the dense G of a factored island, the LU) grow to the largest
// island seen and are reused; a solve of an island no larger than one seen before allocates
// nothing.
#pragma once

#include <vector>

#include "impulse/contact/contact_problem.hpp"
#include "impulse/core/types.hpp"

namespace impulse {

struct SemismoothNewtonSettings {
  Scalar proximal = 1e-3;     // first rho of (PP), relative to the largest diagonal entry of G
  Scalar proximal_min = 1e-7; // smallest rho, likewise
  Scalar target = 1e-2;       // stop when the largest |F_i| (N s) is below target x the solver's tolerance
  Index max_solves = 30;      // Newton steps (each one LU factorization)
  Index max_line_search = 12; // step halvings of the Armijo search
  // Islands of more rows are left to the sweeps: the LU costs (kept rows)^3 / 3 multiply-adds,
  // about 10 ms for 500 rows.
  Index max_rows = 1200;
};

struct SemismoothNewtonReport {
  bool converged = false;  // the largest |F_i| fell below the tolerance
  Index factorizations = 0;
  Scalar residual = 0;     // largest |F_i| (N s) at exit, at the original problem
};

class SemismoothNewtonStage {
 public:
  // Grows the buffers of a solve of up to max_rows rows with a dense G (a factored one's dense
  // copy grows on first use).
  void reserve(Index max_rows);

  // Solves `problem` from `lambda`; lambda takes the answer (the iterate of least residual when
  // the stage did not converge). tolerance: on the largest per-contact |F_i| of (AC1)-(AC2), N s.
  SemismoothNewtonReport solve(const ContactProblem& problem, VecXref lambda, Scalar tolerance,
                               const SemismoothNewtonSettings& settings = SemismoothNewtonSettings());

  // The largest per-contact (per-row) |F_i| of (AC1)-(AC2) at lambda for `problem`, with the
  // stage's weights r_i (dense or factored G; a tool for tests: allocates).
  static Scalar residual(const ContactProblem& problem, const VecXcref& lambda);

  std::size_t memory_bytes() const;

 private:
  struct Piece {  // a piece of a factored G by system (dense assembly)
    Index z = 0, piece = 0, row = 0;
  };
  void assemble(const ContactProblem& problem);
  void set_weights(const ContactProblem& problem);
  // F at x_ with the velocities v_ into F_, the case of each contact / row into cls_; returns
  // the largest per-contact |F_i|; *merit (if given) takes |F|^2
  Scalar evaluate(const ContactProblem& problem, const VecXcref& x, const VecXcref& v, VecXref F,
                  Scalar* merit);
  bool newton_step(const ContactProblem& problem);  // dx_ from x_, v_, F_, cls_
  bool factor(Index m);                             // LU of lu_(0:m, 0:m) in place
  void lu_solve(Index m, VecXref b) const;          // b <- (LU)^-1 b

  Index n_ = 0;
  const Scalar* g_ = nullptr;  // G, column-major, leading dimension ld_ (the problem's or gd_)
  Index ld_ = 0;
  Scalar rho_ = 0;
  MatX gd_;   // dense G of a factored problem (top-left n x n)
  MatX lu_;   // the kept rows' Jacobian, then its LU (top-left m x m)
  std::vector<int> piv_;         // row interchanges of the LU
  std::vector<Piece> pieces_;    // factored G: pieces sorted by system
  VecX scratch_;                 // factored G: D^-1 Y of one piece, scattered by slot (3 per slot)
  VecX w_;                       // per row: r (contact weight)
  VecX x_, v_, F_, dx_, u_, xt_, vt_, Ft_, best_, rhs_;
  VecX slip_;                       // per slipping contact i: t (rows 3i, 3i + 1) and R / |y_T| (3i + 2)
  std::vector<unsigned char> cls_;  // per row: its case (semismooth_newton.cpp)
  std::vector<int> kept_, pos_;     // kept rows in order; pos_[row] = its place or -1
  std::vector<int> slips_;          // the slipping contacts of the step
};

}  // namespace impulse
