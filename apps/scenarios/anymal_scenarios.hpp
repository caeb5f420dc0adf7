// Factories of the four ANYmal scenarios (one file each) and helpers they share.
#pragma once

#include <memory>

#include "scenarios/scenario.hpp"

namespace impulse::scenarios {

std::unique_ptr<Scenario> make_trot(const ScenarioConfig& config);    // trot.cpp
std::unique_ptr<Scenario> make_hang(const ScenarioConfig& config);    // hang.cpp
std::unique_ptr<Scenario> make_drop(const ScenarioConfig& config);    // drop.cpp
std::unique_ptr<Scenario> make_random(const ScenarioConfig& config);  // random.cpp

// PD gains kp, kd (layout of u: zero on the base, `kp`, `kd` on the 12 joints).
void set_joint_pd_gains(ArticulatedSystem& robot, Scalar kp, Scalar kd);
// PD targets: joints at `joints` (12), zero joint velocity.
void set_joint_targets(ArticulatedSystem& robot, const VecX& joints);

}  // namespace impulse::scenarios
