// Convex QP with lower bounds on some rows of a contact problem (used by the sweeping solvers):
//
//   min_x  f(x) = 1/2 x^T G x + c^T x   over the rows r with var[r] != 0, subject to x_r >= 0;
//                                        the other rows stay at their value (0 for the callers)
//
// This is the frictionless contact problem (normal and limit rows; the tangent rows of a
// frictionless contact carry no impulse): its KKT conditions are velocity Signorini,
// x >= 0, v = G x + c >= 0, x^T v = 0, with v the gradient of f.
//
// Method: MPRGP, modified proportioning with reduced gradient projections. Z. Dostal and
// J. Schoeberl, "Minimizing quadratic functions subject to bound constraints with the rate of
// convergence and finite termination", Comput. Optim. Appl. 30 (2005) 23-43, Algorithm 2.1
// (also Z. Dostal, Optimal Quadratic Programming Algorithms, Springer 2009, sec. 5.8):
//   free gradient      phi_i  = g_i on the free rows (x_i > 0), 0 on the active ones
//   chopped gradient   beta_i = min(g_i, 0) on the active rows (x_i = 0), 0 on the free ones
//   projected gradient g^P = phi + beta  (= max violation of velocity Signorini, in m/s)
//   reduced free grad. phi~_i = min(x_i / alpha_bar, phi_i)
//   proportional x:    |beta|^2 <= Gamma^2 phi~^T phi   (Gamma = 1)
//   proportional:  conjugate gradient step along p; if it would leave x >= 0, the feasible part
//                  of it and then an expansion step x <- P(x - alpha_bar phi(x)), p <- phi
//   otherwise:     proportioning step along beta (exact line search), p <- phi
// alpha_bar (the paper wants (0, 2 / |G|]) is 1 / (8 power iterations' Rayleigh quotient, a lower
// bound of |G| on the rows in var, close enough to stay within 2 / |G| on contact problems).
// Conjugate gradients reach the solution of a consistent singular G in the range of G, where
// projected Gauss-Seidel crawls: on islands of a settling pile of spheres (50-55 contacts,
// rank(G_NN) 47-50) MPRGP needed 130-340 products with G where block Gauss-Seidel had not
// converged after 5 000 sweeps.
#pragma once

#include <vector>

#include "impulse/contact/contact_problem.hpp"
#include "impulse/core/types.hpp"

namespace impulse {

struct BoundQpWorkspace {
  VecX g, p, Ap, phi, w, best;
  void reserve(Index n) {
    for (VecX* v : {&g, &p, &Ap, &phi, &w, &best})
      if (v->size() < n) v->resize(n);
  }
};

struct BoundQpResult {
  Index products = 0;                   // products with G
  Index changes = 0;                    // changes of the free set (the exact method)
  Scalar start_projected_gradient = 0;  // max |g^P| at the (clamped) start (m/s)
  Scalar projected_gradient = 0;        // max |g^P| at the returned point (m/s)
  bool converged = false;               // projected_gradient < tol
};

// x: start on entry (rows in var clamped to >= 0 here); on exit the iterate with the lowest
// projected gradient (on a slow tail, or a problem without solution, where f is unbounded
// below, the iterates need not improve). Stops below tol or after max_products products (a
// step may take one more). `product` is used for the products with G and is left bound to the
// problem at an unspecified point.
BoundQpResult solve_bound_qp(const ContactProblem& problem, const unsigned char* var, VecXref x, Scalar tol,
                             Index max_products, DelassusProduct& product, BoundQpWorkspace& ws);

// The same QP solved exactly, for problems with few variables, by the primal active-set method
// for bound constraints (Lawson and Hanson, Solving Least Squares Problems, 1974, ch. 23, NNLS;
// in QP form: Nocedal and Wright, Numerical Optimization, 2nd ed., Algorithm 16.3):
//   free set P (the rows with x_r > 0 at the start), x feasible;
//   inner loop: z = the minimizer of f on P (x_r = 0 off P), G_PP z_P = -c_P; if z_P > 0 take
//               x = z, else step from x towards z to the first row reaching 0 and drop it from P;
//   outer loop: stop when every row off P has v_r = (G x + c)_r >= -tol, else add the most
//               negative one to P.
// f decreases strictly at every change of P, so no free set repeats: the method ends after
// finitely many steps with the exact KKT point (velocity Signorini to rounding), where the
// sweeps and MPRGP crawl on rank-deficient stacks (a settling pile: 15-30 ms of 1 000 sweeps per
// island that this solves in tens of Cholesky updates; docs/solvers.md).
// G_PP is factored as U^T U (U upper triangular, stored by columns), grown by one column when a
// row joins P and shrunk by Givens rotations when one leaves (both O(|P|^2); Golub and Van Loan, Matrix Computations, sec. 6.5). G of a pile is singular (statically indeterminate stacks), so the factor is of
// G_PP + eps I with eps = 1e-10 max_r G_rr: a finite z on any P, at the cost of velocities off by
// eps |x| (1e-10 m/s on the pile, where the tolerance is 1e-6).
// x: start on entry (rows in var clamped to >= 0); on exit the solution when `converged`, else
// unchanged. G on the variables is gathered from a dense G, or computed from a factored G's
// pieces (only the pairs of rows sharing a system). Stops without a result after max_changes changes of P. Grows its buffers to the
// number of variables the first time (kept and reused).
struct ActiveSetWorkspace {
  MatX A, L;  // G on the variables (gathered); the factor of G_PP + eps I (in P's order), stored
              // transposed: U = L^T, U^T U = G_PP + eps I
  VecX b, x, z, v;
  VecX zs;  // velocity slots of a factored G's systems (zero between uses)
  std::vector<Index> rows, P;  // problem row of each variable; the free ones in L's order
  std::vector<unsigned char> in_P;
  std::vector<Index> sys_start, sys_var, stamp;  // a factored G: the variables of each system
  void reserve(Index m);
};

BoundQpResult solve_bound_qp_exact(const ContactProblem& problem, const unsigned char* var, VecXref x, Scalar tol,
                                   Index max_changes, ActiveSetWorkspace& ws);
// The same with the linear term c in place of problem.c (the split position correction:
// c = -position_target, bound_qp.hpp's f with G of the problem).
BoundQpResult solve_bound_qp_exact(const ContactProblem& problem, const VecXcref& c, const unsigned char* var,
                                   VecXref x, Scalar tol, Index max_changes, ActiveSetWorkspace& ws);

}  // namespace impulse
