// What the robot-description loaders share (urdf.cpp, mjcf.cpp, sdf.cpp): the error of a load,
// its warnings, and the repair of impossible inertias.
#pragma once

#include <Eigen/Eigenvalues>
#include <functional>
#include <iostream>
#include <string>
#include <utility>

#include "impulse/core/check.hpp"
#include "impulse/core/error.hpp"
#include "impulse/core/types.hpp"

namespace impulse::detail {

// Throws ModelError "<source>: <message>".
template <typename... Args>
[[noreturn]] void fail(const std::string& source, const Args&... args) {
  throw ModelError(concat(source, ": ", args...));
}

// Warnings of one load: to the user's callback (the options' on_warning) or stderr; errors in
// strict mode (the options' strict). Options: UrdfOptions, SdfOptions, ...
class Reporter {
 public:
  template <class Options>
  Reporter(const Options& options, std::string source)
      : strict_(options.strict), on_warning_(options.on_warning), source_(std::move(source)) {}
  template <typename... Args>
  void warn(const Args&... args) const {
    const std::string what = concat(args...);
    if (strict_) fail(source_, what, " (an error in strict mode)");
    const std::string message = source_ + ": " + what;
    if (on_warning_) {
      on_warning_(message);
    } else {
      std::cerr << "warning: " << message << "\n";
    }
  }
  const std::string& source() const { return source_; }

 private:
  bool strict_;
  std::function<void(const std::string&)> on_warning_;
  std::string source_;
};

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
