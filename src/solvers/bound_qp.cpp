// MPRGP on the frictionless rows of a contact problem: see bound_qp.hpp for the paper, the
// symbols and why.
#include "impulse/solvers/bound_qp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace impulse {

BoundQpResult solve_bound_qp(const ContactProblem& problem, const unsigned char* var, VecXref x, Scalar tol,
                             Index max_products, DelassusProduct& product, BoundQpWorkspace& ws) {
  const Index n = problem.size();
  ws.reserve(n);
  auto g = ws.g.head(n), p = ws.p.head(n), Ap = ws.Ap.head(n), phi = ws.phi.head(n), w = ws.w.head(n);
  auto best = ws.best.head(n);
  Scalar best_gp = std::numeric_limits<Scalar>::infinity();
  BoundQpResult result;
  auto multiply = [&](const VecXcref& in, VecXref out) {
    product.multiply(problem, in, out);
    for (Index r = 0; r < n; ++r)
      if (!var[r]) out[r] = 0;
    ++result.products;
  };
  // alpha_bar: |G| on the rows in var by power iteration from the all-ones vector (G is PSD)
  for (Index r = 0; r < n; ++r) p[r] = var[r] ? 1 : 0;
  Scalar norm_G = 0;
  for (int k = 0; k < 8; ++k) {
    const Scalar len = p.norm();
    if (!(len > 0)) break;
    p /= len;
    multiply(p, w);
    norm_G = std::max(norm_G, p.dot(w));  // Rayleigh quotient: a lower bound of |G|
    p = w;
  }
  if (!(norm_G > 0)) return result;  // nothing can move (x unchanged)
  const Scalar alpha_bar = 1 / norm_G;

  for (Index r = 0; r < n; ++r) x[r] = var[r] ? std::max<Scalar>(0, x[r]) : x[r];
  // g = G x + c on the rows in var
  multiply(x, g);
  for (Index r = 0; r < n; ++r) g[r] = var[r] ? g[r] + problem.c[r] : 0;
  auto free_gradient = [&]() {
    for (Index r = 0; r < n; ++r) phi[r] = var[r] && x[r] > 0 ? g[r] : 0;
  };
  free_gradient();
  p = phi;
  for (;;) {
    // projected gradient, chopped gradient and the proportioning test
    Scalar gp = 0, beta2 = 0, phit_phi = 0;
    for (Index r = 0; r < n; ++r) {
      if (!var[r]) continue;
      if (x[r] > 0) {
        gp = std::max(gp, std::abs(g[r]));
        phit_phi += std::min(x[r] / alpha_bar, g[r]) * g[r];
      } else if (g[r] < 0) {
        gp = std::max(gp, -g[r]);
        beta2 += g[r] * g[r];
      }
    }
    if (!std::isfinite(gp)) break;
    if (result.start_projected_gradient == 0) result.start_projected_gradient = gp;
    if (gp < best_gp) best_gp = gp, best = x;
    if (gp < tol || result.products >= max_products) break;
    if (beta2 <= phit_phi) {
      // conjugate gradient step along p, or its feasible part and an expansion step
      multiply(p, Ap);
      const Scalar pAp = p.dot(Ap);
      const Scalar a_cg = pAp > 0 ? g.dot(p) / pAp : std::numeric_limits<Scalar>::infinity();
      Scalar a_f = std::numeric_limits<Scalar>::infinity();
      for (Index r = 0; r < n; ++r)
        if (var[r] && p[r] > 0) a_f = std::min(a_f, x[r] / p[r]);
      if (a_cg <= a_f) {
        x -= a_cg * p;
        g -= a_cg * Ap;
        for (Index r = 0; r < n; ++r)
          if (var[r]) x[r] = std::max<Scalar>(0, x[r]);  // (rounding when a_cg ~ a_f)
        free_gradient();
        p = phi - (phi.dot(Ap) / pAp) * p;
      } else {
        if (std::isfinite(a_f)) {  // to the first bound: that row becomes exactly 0
          x -= a_f * p;
          g -= a_f * Ap;
          for (Index r = 0; r < n; ++r)
            if (var[r] && (x[r] < 0 || (p[r] > 0 && x[r] <= 1e-15 * a_f * p[r]))) x[r] = 0;
        }
        free_gradient();
        for (Index r = 0; r < n; ++r)
          if (var[r]) x[r] = std::max<Scalar>(0, x[r] - alpha_bar * phi[r]);
        multiply(x, g);
        for (Index r = 0; r < n; ++r) g[r] = var[r] ? g[r] + problem.c[r] : 0;
        free_gradient();
        p = phi;
      }
    } else {
      // proportioning step: exact line search along the chopped gradient
      for (Index r = 0; r < n; ++r) w[r] = var[r] && !(x[r] > 0) ? std::min<Scalar>(g[r], 0) : 0;
      multiply(w, Ap);
      const Scalar dAd = w.dot(Ap);
      if (!(dAd > 0)) break;  // (a descent direction with no curvature: f unbounded below)
      const Scalar a = g.dot(w) / dAd;
      x -= a * w;
      g -= a * Ap;
      free_gradient();
      p = phi;
    }
  }
  if (std::isfinite(best_gp)) x = best;
  result.projected_gradient = best_gp;
  result.converged = best_gp < tol;
  return result;
}

}  // namespace impulse
