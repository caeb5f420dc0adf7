// Random draws in a fixed order, for test scenes that are the same with every compiler.
//
// C++ leaves the order in which function arguments are evaluated unspecified: g++ evaluates the
// last argument first, clang++ the first one, so Vec3(d(rng), d(rng), d(rng)) gave the g++ and
// the clang++ (sanitizer) builds different random scenes from the same seed. These helpers draw
// one value per statement, in g++'s order (z, y, x; then w for a quaternion), so the scenes of the
// g++ builds are unchanged and clang++ builds now test the same ones.
#pragma once

#include "impulse/core/types.hpp"

namespace impulse {
namespace test {

template <typename Dist, typename Rng>
Vec3 draw3(Dist& d, Rng& rng) {
  const Scalar z = d(rng);
  const Scalar y = d(rng);
  const Scalar x = d(rng);
  return Vec3(x, y, z);
}

// An unnormalized quaternion (w, x, y, z) drawn as Quat(d(rng), d(rng), d(rng), d(rng)) was by g++.
template <typename Dist, typename Rng>
Quat draw_quat(Dist& d, Rng& rng) {
  const Scalar z = d(rng);
  const Scalar y = d(rng);
  const Scalar x = d(rng);
  const Scalar w = d(rng);
  return Quat(w, x, y, z);
}

}  // namespace test
}  // namespace impulse
