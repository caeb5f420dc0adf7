// Friction cone helpers shared by the contact solvers (header-only, fixed-size, no allocation).
//
// Contact frame convention (contact_problem.hpp): lambda = (lambda_x, lambda_y, lambda_z) with
// z along the normal. The Coulomb cone of friction coefficient mu is
//     K_mu = { lambda : |lambda_T| <= mu lambda_z },   lambda_T = (lambda_x, lambda_y)
// (Hwangbo 2018 sec. II; Todorov 2010; Mylapilli & Jain 2017 eq. 24).
#pragma once

#include <algorithm>
#include <cmath>

#include "impulse/core/types.hpp"

namespace impulse {

using Vec2s = Eigen::Matrix<Scalar, 2, 1>;

// Euclidean projection of a tangential impulse onto the friction disc |t| <= radius (radius >= 0).
// This is prox_T of Hwangbo eq. 17.
inline Vec2s project_to_disc(const Vec2s& t, Scalar radius) {
  const Scalar n2 = t.squaredNorm();
  if (n2 <= radius * radius) return t;
  if (radius <= 0) return Vec2s::Zero();
  return t * (radius / std::sqrt(n2));
}

// Euclidean projection onto the second-order cone K_mu (mu >= 0):
//   inside            -> lambda itself;
//   in the polar cone -> 0   (mu |lambda_T| <= -lambda_z);
//   otherwise         -> the closest point on the boundary ray through lambda_T,
//                        z' = (mu |lambda_T| + lambda_z) / (1 + mu^2),  T' = mu z' lambda_T / |lambda_T|.
inline Vec3 project_to_cone(const Vec3& lambda, Scalar mu) {
  const Scalar t = std::hypot(lambda.x(), lambda.y());
  const Scalar z = lambda.z();
  if (t <= mu * z && z >= 0) return lambda;  // (z >= 0: with mu = 0, t = 0 and z < 0 is outside)
  if (mu * t <= -z) return Vec3::Zero();
  const Scalar z_new = (mu * t + z) / (1 + mu * mu);
  if (t <= 0) return Vec3(0, 0, std::max<Scalar>(z_new, 0));  // mu = 0 and z > 0
  const Scalar scale = mu * z_new / t;
  return Vec3(scale * lambda.x(), scale * lambda.y(), z_new);
}

// Amount by which lambda leaves the cone, max(0, |lambda_T| - mu lambda_z), in N s.
// sqrt(x^2 + y^2), not std::hypot: this runs for every contact of every sweep (hypot was 3.5 % of
// the 216-sphere pile's instructions) and impulses are nowhere near hypot's overflow range.
inline Scalar cone_violation(const Vec3& lambda, Scalar mu) {
  return std::max<Scalar>(0, std::sqrt(lambda.x() * lambda.x() + lambda.y() * lambda.y()) - mu * lambda.z());
}

// True when lambda is in K_mu up to `tol` (N s).
inline bool in_cone(const Vec3& lambda, Scalar mu, Scalar tol = 0) {
  return lambda.z() >= -tol && cone_violation(lambda, mu) <= tol;
}

// Violation of Coulomb's law (Hwangbo eq. 6) by an impulse / velocity pair, in m/s:
//   | v_T + |v_T| d |,  d = lambda_T / (mu lambda_z) clipped to the unit disc.
// Zero when the contact sticks (v_T = 0) or slips with lambda_T = -mu lambda_z v_T / |v_T|.
// Contacts without normal impulse carry no friction requirement (the cone check covers them).
inline Scalar coulomb_violation(const Vec3& lambda, const Vec3& v, Scalar mu) {
  const Vec2s v_T(v.x(), v.y());
  const Scalar radius = mu * lambda.z();
  if (!(radius > 0)) return 0;
  const Vec2s d = project_to_disc(Vec2s(lambda.x(), lambda.y()) / radius, 1);
  return (v_T + v_T.norm() * d).norm();
}

}  // namespace impulse
