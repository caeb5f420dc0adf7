// Argument checks at the API boundary (throw) and internal invariants (debug-only assert).
#pragma once

#include <cassert>
#include <cmath>
#include <sstream>
#include <string>

#include "impulse/core/error.hpp"
#include "impulse/core/types.hpp"

// Throws ErrorType with a message built by streaming the trailing arguments.
#define IMPULSE_CHECK_AS(ErrorType, cond, ...)                         \
  do {                                                                 \
    if (!(cond)) {                                                     \
      throw ErrorType(::impulse::detail::concat(__VA_ARGS__));         \
    }                                                                  \
  } while (false)

#define IMPULSE_CHECK(cond, ...) IMPULSE_CHECK_AS(::impulse::InvalidArgument, cond, __VA_ARGS__)

#define IMPULSE_ASSERT(cond) assert(cond)

namespace impulse {
namespace detail {

template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace detail

// True when every entry is finite (no NaN, no Inf).
template <typename Derived>
bool all_finite(const Eigen::MatrixBase<Derived>& x) {
  return x.allFinite();
}

// Throws InvalidArgument naming `what` when x has the wrong size or a non-finite entry.
inline void check_vector(const VecXcref& x, Index expected_size, const std::string& what) {
  IMPULSE_CHECK(x.size() == expected_size, what, " has size ", x.size(), ", expected ", expected_size);
  for (Index i = 0; i < x.size(); ++i) {
    IMPULSE_CHECK(std::isfinite(x[i]), what, "[", i, "] is not finite (", x[i], ")");
  }
}

}  // namespace impulse
