// drop (Hwangbo 2018 sec. V-A, task 3): ANYmal 1 m above the ground with 1 m/s horizontal velocity
// (random heading and a small random tilt), joints PD to the nominal pose; feet and torso collide
// (up to 8 contacts). When the robot has come to rest (all velocities small for 0.1 s) it is reset.
#include <algorithm>
#include <cmath>

#include "scenarios/anymal_scenarios.hpp"

namespace impulse::scenarios {

namespace {

constexpr Scalar kRestLinear = 0.02;   // m/s, base
constexpr Scalar kRestAngular = 0.05;  // rad/s, base
constexpr Scalar kRestJoint = 0.1;     // rad/s, every joint
constexpr long kRestSteps = 100;       // this long at rest before the reset
constexpr long kMaxEpisode = 10000;    // steps: reset anyway (a robot rocking forever)

class Drop final : public Scenario {
 public:
  explicit Drop(const ScenarioConfig& c) : Scenario("drop", c) {
    set_joint_pd_gains(*robot_, kJointKp, kJointKd);
    set_joint_targets(*robot_, anymal_nominal_joints());
    reset();
  }

  std::vector<Figure> figures() const override { return {{"resets", static_cast<double>(resets_)}}; }

 protected:
  void control() override {
    if (at_rest_ >= kRestSteps || episode_ >= kMaxEpisode) reset();
    ++episode_;
  }
  void observe() override {
    const VecX& u = robot_->u();
    const bool rest = u.head<3>().norm() < kRestLinear && u.segment<3>(3).norm() < kRestAngular &&
                      u.tail(12).cwiseAbs().maxCoeff() < kRestJoint;
    at_rest_ = rest ? at_rest_ + 1 : 0;
  }

 private:
  void reset() {
    std::uniform_real_distribution<Scalar> heading(-M_PI, M_PI);
    std::normal_distribution<Scalar> tilt(0.0, 0.2);
    const Scalar psi = heading(rng_);
    const Quat R = Quat(Eigen::AngleAxisd(psi, Vec3::UnitZ())) * Quat(Eigen::AngleAxisd(tilt(rng_), Vec3::UnitY())) *
                   Quat(Eigen::AngleAxisd(tilt(rng_), Vec3::UnitX()));
    VecX u = VecX::Zero(robot_->nv());
    u[0] = std::cos(psi);  // 1 m/s horizontal
    u[1] = std::sin(psi);
    place(Vec3(0, 0, 1.0), R, anymal_nominal_joints(), u);
    at_rest_ = 0;
    episode_ = 0;
  }

  long at_rest_ = 0, episode_ = 0;
};

}  // namespace

std::unique_ptr<Scenario> make_drop(const ScenarioConfig& config) { return std::make_unique<Drop>(config); }

}  // namespace impulse::scenarios
