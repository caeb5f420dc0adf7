// Benchmark of the collision stage (`impulse bench collision`): median wall time of one collision
// pass (update of every moving object's poses + detect) for three reference worlds.
#pragma once

#include <vector>

#include "impulse/core/types.hpp"
#include "impulse/spatial/spatial.hpp"

namespace impulse {

class Model;

struct CollisionBenchResult {
  double anymal_us = 0;       // ANYmal standing on the ground (its collision shapes vs the plane)
  double boxes100_us = 0;     // 100 boxes (0.5 m) resting on the ground in a 10 x 10 grid
  Index anymal_contacts = 0;  // contacts per pass, as a sanity check (4 when standing)
  Index boxes100_contacts = 0;  // 400
  // 1000 moving boxes (0.2 m, a 10 x 10 x 10 lattice 0.25 m apart, each drifting on a 2 cm circle
  // at 1 m/s per 1 ms pass) above 100 static boxes and the ground: the broadphase at scale
  double boxes1000_us = 0;
  Index boxes1000_contacts = 0;
  long passes = 0;            // passes timed per world (the 1000-box world: passes / 100, >= 100)
};

// `anymal` with its body poses `X_WB` standing on the ground z = 0 (e.g. data.oMi after forward
// kinematics). Each world runs `passes` passes in batches of 100; the median over batches of the
// time per pass is reported.
CollisionBenchResult bench_collision(const Model& anymal, const std::vector<SE3>& X_WB, long passes = 100000);

}  // namespace impulse
