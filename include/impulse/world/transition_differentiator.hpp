// TransitionDifferentiator: the reusable form of World::transition_derivatives
// (transition_derivatives.hpp), for a controller that asks for the step Jacobians at every
// control step: it keeps its clones of the World (with their step scratch, whose first step costs
// about a hundred steps) and its thread pool between calls. World::transition_derivatives clones
// the World anew on each call (so that it follows every change of the World) and keeps only the
// threads and the step scratch, on the calling thread (transition_derivatives.cpp). The same
// Jacobians, bit for bit.
#pragma once

#include <memory>
#include <vector>

#include "impulse/world/transition_derivatives.hpp"

namespace impulse {

class World;
class ThreadPool;

class TransitionDifferentiator {
 public:
  // Clones `world` once per thread. Throws InvalidArgument for bad options or a World that cannot
  // be cloned (World::clone).
  explicit TransitionDifferentiator(const World& world, const TransitionOptions& options = {});
  ~TransitionDifferentiator();
  TransitionDifferentiator(const TransitionDifferentiator&) = delete;
  TransitionDifferentiator& operator=(const TransitionDifferentiator&) = delete;

  // The Jacobians at the current state of `world`, a World with the description of the one this
  // was made from (else InvalidArgument from restore_state, naming the mismatch). Throws Error when
  // a perturbed step is rejected (StepReport::stepped false). `world` is not changed.
  TransitionJacobians compute(const World& world);
  const TransitionOptions& options() const { return options_; }

 private:
  TransitionOptions options_;
  std::vector<std::unique_ptr<World>> worlds_;  // one per thread
  std::unique_ptr<ThreadPool> pool_;     // null for one thread
};

}  // namespace impulse
