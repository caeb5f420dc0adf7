// Eigen and spatial types to and from JSON for the CLI.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "impulse/core/error.hpp"
#include "impulse/core/types.hpp"
#include "impulse/spatial/spatial.hpp"

namespace impulse::cli {

using nlohmann::json;

// Infinite limits become null (JSON has no infinity).
inline json number(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

template <typename Derived>
json vector_json(const Eigen::MatrixBase<Derived>& v) {
  json a = json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) a.push_back(number(v(i)));
  return a;
}

template <typename Derived>
json matrix_json(const Eigen::MatrixBase<Derived>& m) {
  json a = json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) a.push_back(vector_json(m.row(r)));
  return a;
}

inline json pose_json(const SE3& X) {
  const Quat q(X.R);
  return json{{"position", vector_json(X.p)}, {"quaternion_wxyz", {q.w(), q.x(), q.y(), q.z()}}};
}

// Thrown for malformed user input on the command line or stdin: exit code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace impulse::cli
