// A lattice of n x n x n spheres (r = 0.1 m, 1 kg, 0.21 m apart, each layer shifted 2 mm in x)
// dropped into a square bin of walls |x|, |y| <= half standing on the ground: the bench's
// pile216 for n = 6 and half = 0.65 (apps/cli/bench_scenes.cpp). Frictionless and inelastic.
#pragma once

#include "impulse/world/world.hpp"

namespace impulse {
namespace test {

inline void add_sphere_bin(World& w, int n, Scalar half) {
  w.set_default_material(0.0, 0.0);
  w.add_ground();
  w.add_wall("wall", Vec3(-1, 0, 0), -half);
  w.add_wall("wall", Vec3(1, 0, 0), -half);
  w.add_wall("wall", Vec3(0, -1, 0), -half);
  w.add_wall("wall", Vec3(0, 1, 0), -half);
  const Scalar start = -0.105 * (n - 1);  // centred lattice
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) {
        ArticulatedSystem& s = w.add_sphere("ball", 0.1, 1.0);
        VecX q = s.q();
        q.head<3>() = Vec3(start + 0.21 * i + 0.002 * k, start + 0.21 * j, 0.3 + 0.21 * k);
        s.set_q(q);
      }
}

}  // namespace test
}  // namespace impulse
