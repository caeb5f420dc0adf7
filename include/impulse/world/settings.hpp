// The one place that validates World settings. The World's setters, the world-file parser and
// the CLI all call these, so a value is accepted or rejected the same way everywhere and the
// message is the same. Each function throws InvalidArgument with a one-line message naming the
// setting, the bounds and the value; callers add their context (file and line, option name).
#pragma once

#include "impulse/contact/delassus.hpp"
#include "impulse/core/types.hpp"

namespace impulse {

// Time step bounds (s). Above 0.1 s the semi-implicit integration of a robot's joints is no
// longer meaningful (a 1 kg pendulum of 0.1 m has a period of 0.6 s); below 1e-7 s the step is
// within ~1e9 ulps of any time of day in seconds, so time and position increments lose their
// digits (q + dt u rounds to q) and a run of one simulated second needs 1e7 steps.
constexpr Scalar kMinTimeStep = 1e-7;
constexpr Scalar kMaxTimeStep = 0.1;
constexpr Index kMaxContactsLimit = 100000;
constexpr Scalar kMaxContactMargin = 1.0;  // m

void validate_time_step(Scalar dt);
void validate_time(Scalar t);  // finite, >= 0
void validate_gravity(const Vec3& g);
void validate_contact_margin(Scalar margin);
void validate_contact_settings(const DelassusSettings& s);
void validate_max_contacts(Index n);

}  // namespace impulse
