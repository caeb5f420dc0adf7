// The ANYmal reference scenarios of Hwangbo, Lee, Hutter, RA-L 2018, sec. V-A (docs/architecture.md, "Reference scenarios"):
//
//   trot    trotting forward in diagonal pairs towards 1.5 m/s (gait controller in trot.cpp)
//   hang    released at rest 1 m up, unactuated, only the feet collide: the torso passes through
//           the ground and the robot ends up hanging below it by its feet, swinging
//   drop    1 m up with 1 m/s horizontal velocity, joint PD to a nominal pose, feet and torso
//           collide; reset when at rest
//   random  thrown in the air, joint PD to random targets (normal, variance 1 rad^2), reset every 5 s
//
// and the papers' validation scenarios (validation_scenarios.hpp): sphere (Mylapilli & Jain 2017
// sec. 6.1), pendulum (their sec. 6.2), grasp (Drumwright 2015 sec. VII-A).
//
// A Scenario owns its World (ground, ANYmal or its own objects, contact solver) and its controller;
// step() runs the controller, then World::integrate(). robot() is the scenario's main dynamic
// object (ANYmal; the sphere, the pendulum chain, the held box). The runner (runner.hpp) records
// per-step statistics, the CSV log and the summary; `impulse demo NAME` (apps/cli/demo.cpp) drives both.
//
//   auto s = make_scenario("hang", {"bisection", 1});
//   for (int k = 0; k < 2000; ++k) s->step();
#pragma once

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "impulse/world/world.hpp"

namespace impulse::scenarios {

struct ScenarioConfig {
  std::string solver = "bisection";  // "bisection", "pgs", "lm", "noslip"
  unsigned seed = 1;
};

// A named figure of a scenario for the summary; the name carries the unit (`speed_mean_mps`).
using Figure = std::pair<std::string, double>;

class Scenario {
 public:
  virtual ~Scenario() = default;
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  const std::string& name() const { return name_; }
  World& world() { return world_; }
  const World& world() const { return world_; }
  // The main dynamic object: ANYmal, or the validation scenario's sphere / chain / held box.
  ArticulatedSystem& robot() { return *robot_; }
  const ArticulatedSystem& robot() const { return *robot_; }

  // One time step: controller and resets, World::integrate1(), the optional hook (sees the
  // assembled contact problem, world.assembler().problem()), World::integrate2().
  StepStatus step();
  void set_before_solve(std::function<void(const World&)> hook) { before_solve_ = std::move(hook); }

  long steps() const { return steps_; }
  long resets() const { return resets_; }
  // Steps `impulse demo NAME` runs without --steps (1 ms each).
  virtual long default_steps() const { return 20000; }
  // The scenario's own figures for the summary (units in the names).
  virtual std::vector<Figure> figures() const { return {{"resets", static_cast<double>(resets_)}}; }

 protected:
  // A World with the ground and ANYmal (robot_), the contact solver and error correction.
  Scenario(std::string name, const ScenarioConfig& config);
  // An empty World with only the contact solver set: the scenario adds its objects and sets robot_.
  struct EmptyWorld {};
  Scenario(std::string name, const ScenarioConfig& config, EmptyWorld);
  // Called before each step: set PD targets, feed-forward torques, reset the state.
  virtual void control() = 0;
  // Called after each step.
  virtual void observe() {}

  // Puts the robot at rest at base position p, orientation R, joints `joints`, velocity u
  // (size nv; empty: zero), and counts a reset unless `first`.
  void place(const Vec3& p, const Quat& R, const VecX& joints, const VecX& u = VecX());

  World world_;
  ArticulatedSystem* robot_ = nullptr;
  std::mt19937 rng_;
  long steps_ = 0;
  long resets_ = 0;

 private:
  std::string name_;
  std::function<void(const World&)> before_solve_;
  bool placed_ = false;
};

// The four ANYmal scenarios, in the order of the paper's Table II.
const std::vector<std::string>& scenario_names();
// The papers' validation scenarios: sphere, pendulum, grasp.
const std::vector<std::string>& validation_scenario_names();
// Any of the above. Throws InvalidArgument for an unknown scenario or solver name (listing the valid ones).
std::unique_ptr<Scenario> make_scenario(const std::string& name, const ScenarioConfig& config);

// The project's ANYmal: find_model("anymal/anymal.urdf") (installed share/impulse/models, or
// the source tree's models/; core/version.hpp).
std::string anymal_urdf_path();
// The nominal standing pose (12 joints, LF RF LH RH x HAA HFE KFE): knees bent, X configuration.
VecX anymal_nominal_joints();
// Base height at which the nominal pose stands with the foot spheres touching the ground.
Scalar anymal_nominal_height();

// Joint PD gains used by the actuated scenarios (N m/rad, N m s/rad).
constexpr Scalar kJointKp = 200.0;
constexpr Scalar kJointKd = 6.0;

}  // namespace impulse::scenarios
