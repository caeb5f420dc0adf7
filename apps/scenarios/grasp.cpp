// grasp (Drumwright 2015 sec. VII-A, Fig. 1): two fingers ("red boxes") push inward and hold two
// cubes ("blue boxes") side by side against gravity by friction only. Here the fingers are the two
// bodies of a fixed-base model on prismatic joints along y (no vertical freedom), each pushed
// towards the middle with a constant `squeeze` force and damped implicitly; the cubes are free
// bodies. mu = 0.5 and squeeze = 50 N, so Coulomb friction can hold each cube with margin
// (mu F = 25 N > m g = 9.81 N; by symmetry the cube-cube contact carries no friction). The
// paper's Coulomb runs used mu = 100; the no-slip solver ignores mu (no slip at all).
// Figures: how far each cube slid down (m) over the run, and in the last half (creep).
#include <algorithm>
#include <cmath>

#include "impulse/model/model_builder.hpp"
#include "scenarios/validation_scenarios.hpp"

namespace impulse::scenarios {

namespace {

using GraspP = GraspSetup;

Mat3 box_inertia(Scalar m, const Vec3& s) {
  return (m / 12.0 * Vec3(s.y() * s.y() + s.z() * s.z(), s.x() * s.x() + s.z() * s.z(), s.x() * s.x() + s.y() * s.y()))
      .asDiagonal();
}

Model gripper_model() {
  ModelBuilder b("gripper");
  const Vec3 size(GraspP::box_side, GraspP::finger_thickness, GraspP::box_side);
  const Inertia finger(GraspP::finger_mass, Vec3::Zero(), box_inertia(GraspP::finger_mass, size));
  const Scalar y = GraspP::box_side + 0.5 * GraspP::finger_thickness;  // finger centre: touching the cube
  for (int side = 0; side < 2; ++side) {
    const std::string n = side == 0 ? "left" : "right";
    const SE3 X_PJ(Mat3::Identity(), Vec3(0, side == 0 ? -y : y, GraspP::height));
    const Index body = b.add_body(-1, n + "_slide", JointType::Prismatic, X_PJ, Vec3::UnitY(), {}, n + "_finger", finger);
    CollisionShape s;
    s.name = n + "_pad";
    s.link = n + "_finger";
    s.body = body;
    s.type = ShapeType::Box;
    s.size = size;
    b.add_collision(s);
  }
  return b.finalize();
}

class Grasp final : public Scenario {
 public:
  explicit Grasp(const ScenarioConfig& c) : Scenario("grasp", c, EmptyWorld{}) {
    world_.add_ground();
    world_.set_default_material(GraspP::mu, 0.0);
    gripper_ = &world_.add_articulated_system(gripper_model());
    gripper_->set_pd_gains(VecX::Zero(2), VecX::Constant(2, GraspP::finger_damping));
    gripper_->set_pd_targets(VecX::Zero(2), VecX::Zero(2));
    VecX squeeze(2);
    squeeze << GraspP::squeeze, -GraspP::squeeze;
    gripper_->set_generalized_force(squeeze);
    const Vec3 side = Vec3::Constant(GraspP::box_side);
    for (int k = 0; k < 2; ++k) {
      boxes_[k] = &world_.add_box(k == 0 ? "left_box" : "right_box", side, GraspP::box_mass);
      VecX q = boxes_[k]->q();
      q.head<3>() = Vec3(0, (k == 0 ? -0.5 : 0.5) * GraspP::box_side, GraspP::height);
      boxes_[k]->set_q(q);
      z0_[k] = GraspP::height;
    }
    robot_ = boxes_[0];
    DelassusSettings contact = world_.settings().contact;
    contact.erp = 0.2;
    contact.slop = 1e-5;
    world_.set_contact_settings(contact);
  }

  long default_steps() const override { return 5000; }

  Scalar slip(int k) const { return z0_[k] - boxes_[k]->q()[2]; }

  std::vector<Figure> figures() const override {
    const Scalar slip_max = std::max(slip(0), slip(1));
    const Scalar slip_half = history_.empty() ? 0 : history_[history_.size() / 2];
    return {{"slip_left_m", slip(0)},
            {"slip_right_m", slip(1)},
            {"slip_max_m", slip_max},
            {"slip_last_half_m", slip_max - slip_half},
            {"box_speed_final_mps", std::max(boxes_[0]->u().head<3>().norm(), boxes_[1]->u().head<3>().norm())},
            {"finger_left_y_m", gripper_->q()[0]},
            {"finger_right_y_m", gripper_->q()[1]}};
  }

 protected:
  void control() override {}
  // the larger slip after each step (slip_last_half_m: the creep over the second half of the run)
  void observe() override { history_.push_back(std::max(slip(0), slip(1))); }

 private:
  ArticulatedSystem* gripper_ = nullptr;
  ArticulatedSystem* boxes_[2] = {nullptr, nullptr};
  Scalar z0_[2] = {0, 0};
  std::vector<Scalar> history_;
};

}  // namespace

std::unique_ptr<Scenario> make_grasp(const ScenarioConfig& config) { return std::make_unique<Grasp>(config); }

}  // namespace impulse::scenarios
