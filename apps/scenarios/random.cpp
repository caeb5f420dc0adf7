// random (Hwangbo 2018 sec. V-A, task 4): ANYmal thrown in the air (random orientation, linear and
// angular velocity) with joint PD to random targets: nominal pose + N(0, 1 rad^2) per joint, drawn
// again every 50 ms (the action rate of RL data collection); reset every 5 s. Feet and torso collide
// (up to 8 contacts); targets beyond the hip abduction limits exercise the joint-limit rows.
#include <cmath>

#include "scenarios/anymal_scenarios.hpp"

namespace impulse::scenarios {

namespace {

constexpr long kEpisodeSteps = 5000;  // 5 s
constexpr long kTargetSteps = 50;     // new random targets every 50 ms

class Random final : public Scenario {
 public:
  explicit Random(const ScenarioConfig& c) : Scenario("random", c) {
    set_joint_pd_gains(*robot_, kJointKp, kJointKd);
    reset();
  }

 protected:
  void control() override {
    if (episode_ == kEpisodeSteps) reset();
    if (episode_ % kTargetSteps == 0) draw_targets();
    ++episode_;
  }

 private:
  void draw_targets() {
    std::normal_distribution<Scalar> n(0.0, 1.0);  // variance 1 rad^2
    VecX t = anymal_nominal_joints();
    for (Index k = 0; k < t.size(); ++k) t[k] += n(rng_);
    set_joint_targets(*robot_, t);
  }

  void reset() {
    std::normal_distribution<Scalar> n(0.0, 1.0);
    std::uniform_real_distribution<Scalar> up(0.5, 2.0);
    // Draws in a fixed order: the order of function arguments is unspecified (g++ evaluates them
    // last first, clang++ first first), so Quat(n(rng), n(rng), ...) gave each compiler its own
    // episodes. The order below is g++'s, which produced the published figures.
    const Scalar qz = n(rng_), qy = n(rng_), qx = n(rng_), qw = n(rng_);
    const Quat R(qw, qx, qy, qz);  // uniform random orientation
    VecX u = VecX::Zero(robot_->nv());
    const Scalar vz = up(rng_), vy = n(rng_), vx = n(rng_);
    u.head<3>() = Vec3(vx, vy, vz);  // thrown: m/s
    const Scalar wz = n(rng_), wy = n(rng_), wx = n(rng_);
    u.segment<3>(3) = Vec3(wx, wy, wz);  // rad/s
    place(Vec3(0, 0, 1.0), R.normalized(), anymal_nominal_joints(), u);
    episode_ = 0;
  }

  long episode_ = 0;
};

}  // namespace

std::unique_ptr<Scenario> make_random(const ScenarioConfig& config) { return std::make_unique<Random>(config); }

}  // namespace impulse::scenarios
