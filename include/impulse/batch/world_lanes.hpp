// WorldLanes: one thread's steps of groups of Worlds with the dynamics of their systems and the
// G of their constraint rows in SIMD lanes (module batch/; dynamics/lanes.hpp,
// stepper/lanes_step.hpp, contact/delassus_lanes.hpp; docs/dynamics.md, "Many worlds in SIMD
// lanes"). VecWorld and LocomotionTask keep one per thread.
#pragma once

#include <memory>
#include <vector>

#include "impulse/contact/delassus_lanes.hpp"
#include "impulse/dynamics/lanes.hpp"
#include "impulse/world/step_workspace.hpp"
#include "impulse/batch/bisection_lanes.hpp"
#include "impulse/world/world.hpp"

namespace impulse::batch {

class WorldLanes {
 public:
  // What a caller that steps one group several times keeps for it between integrate() calls.
  struct GroupMemory {
    bool defer_paths = true;  // the last step's layouts shared by kMinShared Worlds or more
  };
  static constexpr int kMinShared = 3;

  // World::integrate(ws) of each of `count` Worlds (1 <= count <= width) in turn, report[i] the
  // i-th's StepReport, with the first pass of their dynamics and the G of their constraint rows
  // in SIMD lanes of this width:
  //   1. for each system index j, the first pass of the dynamics stage of the Worlds whose system
  //      j has the first World's Model and the first World's gravity and no external wrench this
  //      step, in one StepLanes (two such Worlds at least; the others compute theirs in their
  //      step). A Model the lanes do not handle (lanes_supported), a free body (its closed form
  //      is cheaper) and a second system with the Model of an earlier one in the World take the
  //      scalar path;
  //   2. each World's step up to its rows without their G (World::begin_step), World i on
  //      workspace i of the group (ws for the first, the others this object's); with `memory`
  //      (kept by the caller for the group from one step to the next), the rows' path work too
  //      when the group's last step shared a layout among at least kMinShared Worlds, else the
  //      World computes it with its rows (a World whose layout no other shares makes its deferred
  //      path work alone, which costs more than making it with its rows: docs/benchmarks.md,
  //      "Which of the lanes' stages pay");
  //   3. the G of the Worlds whose rows have one layout together (DelassusLanes);
  //   4. each World's targets and solve (World::begin_solve, World::solve_step), the islands the
  //      bisection sweeps in lanes take solved together in between (BisectionLanes);
  //   5. the velocity updates of the Worlds whose rows have one layout together
  //      (DelassusLanes::update_velocities);
  //   6. each World's position update and reports (World::end_step).
  // The results are the bits of integrate(ws) of each World, for every width; width 1 is exactly
  // that, World by World on ws. The StepLanes (one per Model and width) and the workspaces are
  // made on first use and kept: no allocation in steady state.
  void integrate(World* const* worlds, int count, int width, StepWorkspace& ws, StepReport* report,
                 GroupMemory* memory = nullptr);

  // Makes what a group of `width` Worlds like `prototype` uses on this object and on ws (the
  // StepLanes, the group's workspaces, the rows' and the sweeps' buffers) by one step of `width`
  // copies of it (discarded), as World::reserve_workspace does for one World: a thread pool hands
  // out groups dynamically, and a thread that takes its first group late then allocates nothing.
  // A World that cannot be cloned (custom solver) leaves them to first use.
  void reserve(const World& prototype, int width, StepWorkspace& ws);

 private:
  StepLanes* lanes(const std::shared_ptr<const Model>& model, int width);
  StepWorkspace& workspace(int w, StepWorkspace& ws);

  struct Entry {
    std::shared_ptr<const Model> model;  // (a StepLanes keeps a reference to its Model)
    int width;
    std::unique_ptr<StepLanes> lanes;  // null: the Model takes the scalar path
  };
  std::vector<Entry> entries_;  // a few Models at most: searched in order
  // the step scratch of Worlds 1 .. width - 1 of a group (World 0 steps on the caller's)
  std::vector<std::unique_ptr<StepWorkspace>> workspaces_;
  DelassusLanes rows_;
  BisectionLanes sweeps_;
  std::vector<DelassusAssembler*> assemblers_;
  std::vector<const std::vector<SystemView>*> views_;
};

}  // namespace impulse::batch
