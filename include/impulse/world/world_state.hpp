// WorldState: everything that determines the next steps of a World, so a user can save a state,
// step, restore, branch and replay (World::save_state / restore_state / reset / clone).
//
// A state holds, per articulated system, its SystemState (stepper/system.hpp: q, u, the
// generalized force tau, PD gains and targets, the external wrenches still pending for the
// next step, and the free-flight history of the two-step velocity update); for the World: the time and the stepper's warm-start memory (StepperCache). It is a
// copy of those parts of the World's WorldData. Restoring a state and stepping reproduces the
// trajectory of the World it was saved from bit for bit (tests/world/test_world_state.cpp).
//
// Not in the state: the description (objects, models, materials, filters, the time step, gravity,
// contact and solver settings). A state can be restored into any World built from the same
// description (same systems with the same names and sizes, same number of collision objects);
// restore_state checks that and throws InvalidArgument naming the first mismatch.
//
// Binary form (serialize_state / deserialize_state): a compact little-endian layout with a
// magic, a version and a checksum, documented in docs/state-format.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "impulse/core/error.hpp"
#include "impulse/core/types.hpp"
#include "impulse/stepper/stepper.hpp"

namespace impulse {

struct WorldState {
  Scalar time = 0;
  Index num_objects = 0;  // collision objects of the World (static ones included)
  std::vector<SystemState> systems;  // (stepper/system.hpp)
  StepperCache cache;     // warm start of the next step
};

// A byte string that is not a valid serialized WorldState (bad magic, version, size, checksum).
class StateFormatError : public Error {
 public:
  using Error::Error;
};

constexpr std::uint32_t kWorldStateVersion = 2;  // (reads 1 too: without the free-flight history)

// Compact binary form (docs/state-format.md).
std::string serialize_state(const WorldState& state);
// Throws StateFormatError naming the problem; never reads past the end of `bytes`.
WorldState deserialize_state(const std::string& bytes);

}  // namespace impulse
