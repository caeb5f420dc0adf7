// Shared test helpers: closeness with named absolute and relative tolerances (as RBDL's
// AllCloseVector), and paths to the project's and the shared folder's models.
#pragma once

#include <string>

#include <catch2/catch.hpp>

#include "impulse/core/types.hpp"

namespace impulse_test {

// max |a - b| <= atol + rtol * max |b|, reported with the worst entry when it fails.
template <typename A, typename B>
bool all_close(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b, double atol, double rtol = 0.0) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  const double scale = b.size() ? b.cwiseAbs().maxCoeff() : 0.0;
  return (a - b).cwiseAbs().maxCoeff() <= atol + rtol * scale;
}

inline std::string source_path(const std::string& rel) { return std::string(IMPULSE_SOURCE_DIR) + "/" + rel; }
inline std::string shared_path(const std::string& rel) { return std::string(IMPULSE_SHARED_DIR) + "/" + rel; }

}  // namespace impulse_test

#define CHECK_ALL_CLOSE(a, b, atol, rtol)                                                     \
  do {                                                                                        \
    INFO("lhs:\n" << (a) << "\nrhs:\n" << (b));                                               \
    CHECK(::impulse_test::all_close((a), (b), (atol), (rtol)));                               \
  } while (false)
