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

}  // namespace impulse
