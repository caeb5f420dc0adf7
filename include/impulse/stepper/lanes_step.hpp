// The first pass of the step's dynamics stage for many systems of one Model at once, in SIMD
// lanes (module stepper/; dynamics/lanes.hpp; docs/dynamics.md, "Many worlds in SIMD lanes").
//
// Per step, for the systems (one per lane) that share a Model, gravity and dt and have no
// external wrench: StepLanes::set_state, set_drive (tau, gains, targets) and compute(), then
// implicit_pd(dt) for all lanes at once (the first guess of the actuator clamps; M~'s terms
// dt damping, dt Kd + dt^2 Kp, added to M's diagonal, and the right-hand side dt (tau - h -
// damping u + PD or clamped torque), as the dynamics stage computes them), factor(), solve(), and
// LanesPending::put for each into the list of the StepWorkspace the systems step with. The next
// dynamics stage of such a system on a Stepper of that workspace copies its lane's poses,
// subspaces, h and factor into the system's Data (StepLanes::get_step) and takes the solved rhs
// instead of computing compute_step_dynamics + the diagonal + ltdl_factor + ltdl_solve, and goes
// on from u_free: the same bits, since the lanes repeat the scalar functions' operations.
// LanesPending::clear drops what no stage took (call it after the group's steps, also when one
// threw).
#pragma once

#include <vector>

#include "impulse/dynamics/lanes.hpp"
#include "impulse/stepper/system.hpp"

namespace impulse {

// The systems whose first dynamics pass is in a lane (a StepWorkspace's member: its Steppers'
// dynamics stages take from it). No allocation once the largest group was seen.
class LanesPending {
 public:
  // The dynamics stage of the system whose state is `state` takes lane `lane` of `lanes`.
  void put(const SystemState* state, const StepLanes* lanes, int lane) { entries_.push_back({state, lanes, lane}); }
  void clear() { entries_.clear(); }
  bool empty() const { return entries_.empty(); }
  // The lane of the system whose state is `state` copied into d (StepLanes::get_step), dropped
  // from the list: its solved right-hand side (rhs; null when no lane holds that system) and the
  // lane itself (for StepLanes::clamps and second_pass when it has_pd()).
  struct Taken {
    const Scalar* rhs = nullptr;
    const StepLanes* lanes = nullptr;
    int lane = 0;
  };
  Taken take(const SystemState* state, Data& d);

 private:
  struct Entry {
    const SystemState* state;
    const StepLanes* lanes;
    int lane;
  };
  std::vector<Entry> entries_;
};

}  // namespace impulse
