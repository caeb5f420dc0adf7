// WorldLanes: one thread's steps of groups of Worlds with the dynamics of their systems in SIMD
// lanes (module batch/; dynamics/lanes.hpp, stepper/lanes_step.hpp; docs/dynamics.md, "Many
// worlds in SIMD lanes"). VecWorld and LocomotionTask keep one per thread.
#pragma once

#include <memory>
#include <vector>

#include "impulse/dynamics/lanes.hpp"
#include "impulse/world/world.hpp"

namespace impulse::batch {

class WorldLanes {
 public:
  // World::integrate(ws) of each of `count` Worlds (1 <= count <= width) in turn, report[i] the
  // i-th's StepReport; before them, for each system index j, the first pass of the dynamics
  // stage of the Worlds whose system j has the first World's Model and the first World's gravity
  // and no external wrench this step, in one StepLanes of this width (two such Worlds at least;
  // the others compute theirs in their step). A Model the lanes do not handle
  // (lanes_supported), a free body (its closed form is cheaper) and a second system with the
  // Model of an earlier one in the World take the scalar path. The results are the bits of
  // integrate(ws) of each World, for every width; width 1 is exactly that. The StepLanes are made
  // on first use and kept (one per Model and width): no allocation in steady state.
  void integrate(World* const* worlds, int count, int width, StepWorkspace& ws, StepReport* report);

 private:
  StepLanes* lanes(const std::shared_ptr<const Model>& model, int width);

  struct Entry {
    std::shared_ptr<const Model> model;  // (a StepLanes keeps a reference to its Model)
    int width;
    std::unique_ptr<StepLanes> lanes;  // null: the Model takes the scalar path
  };
  std::vector<Entry> entries_;  // a few Models at most: searched in order
};

}  // namespace impulse::batch
