// hang (Hwangbo 2018 sec. V-A, task 2): ANYmal released at rest 1 m above the ground, unactuated.
// Only the feet collide: the base box has collision mask 0, so it passes through the ground; the
// legs give way and the robot ends up hanging below the plane by its four feet, swinging (the
// contact normals point up into the feet, so the contacts hold the feet up from below the plane's
// top side). Without actuation or damping the only dissipation is contact, so the mechanical energy
// never increases (the figures report the largest one-step increase).
#include <algorithm>

#include "scenarios/anymal_scenarios.hpp"

namespace impulse::scenarios {

namespace {

class Hang final : public Scenario {
 public:
  explicit Hang(const ScenarioConfig& c) : Scenario("hang", c) {
    robot_->set_body_collision_filter("base", 1u, 0u);  // the torso collides with nothing
    place(Vec3(0, 0, 1.0), Quat::Identity(), anymal_nominal_joints());
    energy_ = energy0_ = energy();
  }

  Scalar energy() const { return robot_->kinetic_energy() + robot_->potential_energy(); }

  std::vector<Figure> figures() const override {
    Index feet = 0;
    for (const Contact& c : world_.contacts()) feet += c.depth > 0 ? 1 : 0;
    return {{"energy_initial_J", energy0_},
            {"energy_final_J", energy_},
            {"energy_increase_max_J", max_increase_},
            {"base_height_final_m", robot_->q()[2]},
            {"feet_in_contact_final", static_cast<double>(feet)}};
  }

 protected:
  void control() override {}
  void observe() override {
    const Scalar e = energy();
    max_increase_ = std::max(max_increase_, e - energy_);
    energy_ = e;
  }

 private:
  Scalar energy0_ = 0, energy_ = 0, max_increase_ = 0;
};

}  // namespace

std::unique_ptr<Scenario> make_hang(const ScenarioConfig& config) { return std::make_unique<Hang>(config); }

}  // namespace impulse::scenarios
