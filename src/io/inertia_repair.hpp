// Inertia repair shared by the robot-description loaders (urdf.cpp, sdf.cpp).
#pragma once

#include <Eigen/Eigenvalues>

#include "impulse/core/types.hpp"

namespace impulse::detail {

// Principal moments e (ascending) of a physical body satisfy e0 >= 0 and e0 + e1 >= e2. Returns
// false when Ic already does (within rounding); otherwise repairs Ic in place with the smallest
// change of the moments in its principal frame: negative moments become 0, then the two
// smaller moments are raised equally until e0 + e1 = e2. `before` and `after` report the moments.
inline bool repair_inertia(Mat3& Ic, Vec3& before, Vec3& after) {
  const Eigen::SelfAdjointEigenSolver<Mat3> eig(0.5 * (Ic + Ic.transpose()));
  Vec3 e = eig.eigenvalues();
  before = e;
  const Scalar tol = 1e-12 * (1 + e.cwiseAbs().maxCoeff());
  if (e.minCoeff() >= -tol && e[0] + e[1] >= e[2] - tol) return false;
  e = e.cwiseMax(0.0);
  const Scalar deficit = e[2] - e[0] - e[1];
  if (deficit > 0) {
    e[0] += 0.5 * deficit;
    e[1] += 0.5 * deficit;
  }
  after = e;
  Ic = eig.eigenvectors() * e.asDiagonal() * eig.eigenvectors().transpose();
  return true;
}

}  // namespace impulse::detail
