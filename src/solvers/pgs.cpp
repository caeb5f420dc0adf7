// Projected Gauss-Seidel with per-contact step sizes.
//
// Paper: J. Hwangbo, J. Lee, M. Hutter, "Per-Contact Iteration Method for Solving Contact
// Dynamics", IEEE RA-L 3(2), 2018, sec. IV:
//   eq. 17   lambda_{i,z} <- prox_z(lambda_{i,z} - r_{i,z} v_{i,z}),      prox_z = max(0, .)
//            lambda_{i,T} <- prox_T(lambda_{i,T} - r_{i,T} v_{i,T}),      prox_T = projection onto
//                                                   the friction disc |lambda_T| <= mu lambda_z
//   eq. 18   r_{i,z} = alpha / G_ii(zz),  r_{i,T} = alpha / max(G_ii(xx), G_ii(yy))
//   sec. V-C alpha = 0.6, constant; termination on the sum of the magnitudes of the impulse
//            updates plus the norms of the penetration velocities.
// Symbols: G_ii = M^-1_{i,i} (3x3 Delassus block), v_i = G_i: lambda + c_i, alpha, r_z, r_T.
//
// Details the paper leaves open (our choices):
//   * Gauss-Seidel over components: after the normal update, v_T is corrected by
//     G_Tz delta lambda_z before the tangential update (two multiply-adds), so each component
//     sees the newest values, as in a component-wise PGS.
//   * The penetration term of the error is max(0, -v_z) after the contact's own update.
//   * One-row limit constraints use lambda_j <- max(0, lambda_j - (alpha / G_jj) v_j).
//   * One-row box rows (joint Coulomb friction, |lambda_j| <= b_j) take the exact 1-D solution
//     lambda_j <- clamp(lambda_j - v_j / G_jj, -b_j, b_j) (the row's own problem given the others;
//     no relaxation is needed for one scalar) and add |delta lambda_j| to the error.
//   * A row with G_zz <= 0 (cannot move) keeps lambda = 0.
//   * A frictionless contact (mu = 0) with zero tangent impulses reads and updates its normal
//     row only: its disc has radius 0, so the tangential update would return 0 anyway.
//   * Optional Anderson acceleration of the sweeps (PgsSettings::anderson_memory, off by default;
//     solvers/anderson.hpp), as in the bisection solver.
#include "impulse/solvers/pgs.hpp"

#include <algorithm>
#include <cmath>

#include "impulse/solvers/cone.hpp"

namespace impulse {

SolverResult PgsSolver::solve_with_active(const ContactProblem& problem, VecXref lambda) {
  const PgsSettings& s = active();
  const VecXcref& c = problem.c;
  const Index nc = problem.nc, n = problem.size();
  SolverResult result;
  SweepMonitor monitor(s.tolerance, s.stall_window);
  anderson_.begin(problem, s.anderson_memory);
  product_.reset(problem, lambda);
  for (Index it = 1; it <= s.max_iterations; ++it) {
    const bool accelerate = s.anderson_memory > 0 && it > s.anderson_start;
    if (it == s.anderson_start) anderson_.prime();  // (this sweep's states are the first compared)
    if (accelerate) anderson_.before_sweep(lambda);
    Scalar error = 0;
    for (Index i = 0; i < nc; ++i) {
      const Index k = 3 * i;
      if (!(problem.mu[i] > 0) && lambda[k] == 0 && lambda[k + 1] == 0) {
        // Frictionless contact: the disc has radius 0, so the tangent impulses are and stay 0;
        // only the normal row is read and updated (a third of the work), same arithmetic below.
        const Scalar G_zz = problem.diagonal(k + 2);
        const Scalar v_z = c[k + 2] + product_.row(k + 2, lambda);
        const Scalar lambda_z = G_zz > 0 ? std::max<Scalar>(0, lambda[k + 2] - (s.alpha / G_zz) * v_z) : Scalar(0);
        const Scalar d_z = lambda_z - lambda[k + 2];
        anderson_.track(i, lambda_z <= 0 ? 0 : 2);
        lambda[k + 2] = lambda_z;
        product_.add_row(k + 2, d_z);
        error += std::abs(d_z) + std::max<Scalar>(0, -(v_z + G_zz * d_z));
        continue;
      }
      // v_i = G_i: lambda + c_i (factored G: from the velocity change of i's bodies), G_ii its block
      const Vec3 v = c.segment<3>(k) + product_.contact(i, lambda);
      const Mat3 G_ii = problem.contact_block(i);
      const Scalar G_zz = G_ii(2, 2);
      const Scalar G_tt = std::max(G_ii(0, 0), G_ii(1, 1));
      const Vec3 lambda_old = lambda.segment<3>(k);
      // eq. 17-18, normal component
      Scalar lambda_z = 0;
      if (G_zz > 0) lambda_z = std::max<Scalar>(0, lambda_old.z() - (s.alpha / G_zz) * v.z());
      const Scalar d_z = lambda_z - lambda_old.z();
      // newest normal impulse seen by the tangential update
      const Vec2s v_T(v.x() + G_ii(0, 2) * d_z, v.y() + G_ii(1, 2) * d_z);
      // eq. 17-18, tangential components, prox onto the disc of radius mu lambda_z
      Vec2s lambda_T = Vec2s::Zero();
      if (G_tt > 0) {
        lambda_T = project_to_disc(lambda_old.head<2>() - (s.alpha / G_tt) * v_T,
                                   problem.mu[i] * lambda_z);
      }
      const Vec3 lambda_new(lambda_T.x(), lambda_T.y(), lambda_z);
      // state for the acceleration: no normal impulse, inside the disc, on its rim
      anderson_.track(i, lambda_z <= 0 ? 0 : lambda_T.squaredNorm() < (1 - 1e-12) * problem.mu[i] * problem.mu[i] * lambda_z * lambda_z ? 1 : 2);
      const Vec3 delta = lambda_new - lambda_old;
      lambda.segment<3>(k) = lambda_new;
      product_.add_contact(i, delta);
      const Scalar v_z_new = v.z() + G_ii.row(2).dot(delta);
      error += delta.norm() + std::max<Scalar>(0, -v_z_new);
    }
    for (Index j = 3 * nc; j < problem.first_box_row(); ++j) {
      const Scalar G_jj = problem.diagonal(j);
      const Scalar v_j = product_.row(j, lambda) + c[j];
      const Scalar lambda_j = G_jj > 0 ? std::max<Scalar>(0, lambda[j] - (s.alpha / G_jj) * v_j)
                                       : Scalar(0);
      const Scalar d = lambda_j - lambda[j];
      product_.add_row(j, d);
      anderson_.track(j - 2 * nc, lambda_j > 0);
      lambda[j] = lambda_j;
      error += std::abs(d) + std::max<Scalar>(0, -(v_j + G_jj * d));
    }
    // box rows (joint friction): exact 1-D clamp
    for (Index j = problem.first_box_row(); j < n; ++j) {
      const Scalar G_jj = problem.diagonal(j), b = problem.box_bound(j);
      const Scalar v_j = product_.row(j, lambda) + c[j];
      const Scalar lambda_j = G_jj > 0 ? std::clamp(lambda[j] - v_j / G_jj, -b, b) : Scalar(0);
      product_.add_row(j, lambda_j - lambda[j]);
      error += std::abs(lambda_j - lambda[j]);
      anderson_.track(j - 2 * nc, lambda_j <= -b ? 0 : lambda_j >= b ? 2 : 1);
      lambda[j] = lambda_j;
    }
    if (monitor.stop(result, it, error)) return result;
    if (accelerate && it < s.max_iterations && anderson_.after_sweep(lambda, error)) product_.reset(problem, lambda);
  }
  return result;  // MaxIterations
}

}  // namespace impulse
