// The papers' validation scenarios (docs/architecture.md, "Reference scenarios"), one file each:
//
//   sphere    Mylapilli & Jain 2017 sec. 6.1: a sphere (m = 1, r = 1) launched at 2 m/s on a plane
//             with mu = 0.2 slides until t = 2 v0 / (7 mu g) = 0.2912 s, then rolls with
//             vx = wy r = 5/7 v0 = 1.4286; vy = wx = wz = 0 throughout (sphere.cpp)
//   pendulum  their sec. 6.2: a 12-link pendulum of 1 kg spheres released at pi/4 against a floor
//             and a wall, self-collision, mu = 0.5, restitution 0.7, 20 s (pendulum.cpp)
//   grasp     Drumwright 2015 sec. VII-A: two boxes held side by side between two squeezing
//             fingers by friction only (grasp.cpp)
#pragma once

#include <memory>

#include "scenarios/scenario.hpp"

namespace impulse::scenarios {

std::unique_ptr<Scenario> make_sphere(const ScenarioConfig& config);    // sphere.cpp
std::unique_ptr<Scenario> make_pendulum(const ScenarioConfig& config);  // pendulum.cpp
std::unique_ptr<Scenario> make_grasp(const ScenarioConfig& config);     // grasp.cpp

// Sphere on a plane (Mylapilli & Jain 6.1): parameters and the analytic solution.
struct SphereOnPlane {
  static constexpr Scalar mass = 1.0, radius = 1.0, mu = 0.2, v0 = 2.0, g = 9.81;
  static constexpr Scalar slide_to_roll_s() { return 2 * v0 / (7 * mu * g); }  // 0.2912 s
  static constexpr Scalar v_roll() { return 5.0 / 7.0 * v0; }                  // 1.4286 m/s (and wy r)
};

// 12-link pendulum (Mylapilli & Jain 6.2).
struct TwelveLinkPendulum {
  static constexpr int links = 12;
  static constexpr Scalar link_length = 1.0, sphere_radius = 0.25, sphere_mass = 1.0;
  static constexpr Scalar pivot_height = 10.0;   // above the floor (z = 0)
  static constexpr Scalar wall_y = 4.0;          // the wall y = 4 (solid beyond), the pivot at y = 0
  static constexpr Scalar angle0 = -0.78539816339744831;  // -pi/4 about +x: the tip starts at y < 0
  static constexpr Scalar rate0 = 1.0;           // rad/s about +x: towards the wall
  static constexpr Scalar mu = 0.5, restitution = 0.7;
};

// The grasp: fingers on prismatic joints along y, each pushed inward with `squeeze` N, holding two
// cubes side by side (Drumwright's Fig. 1: red fingers, blue boxes) by friction only.
struct GraspSetup {
  static constexpr Scalar box_side = 0.1, box_mass = 1.0;
  static constexpr Scalar finger_thickness = 0.05, finger_mass = 1.0;
  static constexpr Scalar height = 0.5;    // box centres above the ground
  static constexpr Scalar squeeze = 50.0;  // N per finger: mu squeeze = 25 N > m g = 9.81 N per box
  static constexpr Scalar mu = 0.5;
  static constexpr Scalar finger_damping = 20.0;  // N s/m on each finger joint (implicit)
};

}  // namespace impulse::scenarios
