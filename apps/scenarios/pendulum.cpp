// pendulum (Mylapilli & Jain 2017 sec. 6.2): twelve 1 kg spheres of diameter 0.5 m on massless
// 1 m links joined by pin hinges (revolute joints about the world x axis), the pivot 10 m above the
// floor, so the 12 m chain cannot swing through: it is released straight at pi/4 from the vertical
// (first hinge at -pi/4, the others at 0) turning at 1 rad/s towards the wall, hits the floor,
// folds and bounces, and hits the wall. Floor z = 0 and the wall y = 4 m (the paper: "a wall on the
// right located 4 m away from the tip"; 4 m from the tip's starting point would cut through the
// chain, so we take 4 m to the right of the pivot's vertical). mu = 0.5, restitution 0.7,
// self-collision between non-adjacent links, 20 s at 1 ms (default steps 20000).
// Figures: the tip sphere's centre height at t = 0, 1, 2, 5, 10, 20 s (the paper's Fig. 15 plots
// it from the floor's mid-plane, 0.1 m below its top: add 0.1 m to compare), and the energy.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "impulse/model/model_builder.hpp"
#include "scenarios/validation_scenarios.hpp"

namespace impulse::scenarios {

namespace {

using PendulumP = TwelveLinkPendulum;

Model pendulum_model() {
  ModelBuilder b("pendulum");
  const Scalar r = PendulumP::sphere_radius, m = PendulumP::sphere_mass, L = PendulumP::link_length;
  const Inertia sphere(m, Vec3(0, 0, -L), 0.4 * m * r * r * Mat3::Identity());
  Index parent = -1;
  for (int k = 0; k < PendulumP::links; ++k) {
    const std::string n = std::to_string(k + 1);
    const SE3 X_PJ(Mat3::Identity(), k == 0 ? Vec3(0, 0, PendulumP::pivot_height) : Vec3(0, 0, -L));
    parent = b.add_body(parent, "hinge" + n, JointType::Revolute, X_PJ, Vec3::UnitX(), {}, "link" + n, sphere);
    CollisionShape s;
    s.name = "sphere" + n;
    s.link = "link" + n;
    s.body = parent;
    s.type = ShapeType::Sphere;
    s.size = Vec3(r, 0, 0);
    s.X_BS = SE3(Mat3::Identity(), Vec3(0, 0, -L));
    b.add_collision(s);
  }
  return b.finalize();
}

constexpr std::array<Scalar, 6> kSampleTimes = {0, 1, 2, 5, 10, 20};

class Pendulum final : public Scenario {
 public:
  explicit Pendulum(const ScenarioConfig& c) : Scenario("pendulum", c, EmptyWorld{}) {
    world_.add_ground();
    wall_ = world_.add_wall("wall", Vec3(0, -1, 0), -PendulumP::wall_y);  // solid for y >= wall_y
    world_.set_default_material(PendulumP::mu, PendulumP::restitution);
    SystemOptions o;
    o.self_collision = true;
    robot_ = &world_.add_articulated_system(pendulum_model(), o);
    VecX q = VecX::Zero(PendulumP::links), u = VecX::Zero(PendulumP::links);
    q[0] = PendulumP::angle0;
    u[0] = PendulumP::rate0;
    robot_->set_state(q, u);
    // the same position-error correction as the ANYmal scenarios (resting links on the floor)
    DelassusSettings contact = world_.settings().contact;
    contact.erp = 0.2;
    contact.slop = 1e-5;
    world_.set_contact_settings(contact);
    tip_.fill(std::nan(""));
    tip_[0] = tip_height();
    energy0_ = energy();
    tip_min_ = tip_[0];
  }

  long default_steps() const override { return 20000; }

  Scalar tip_height() const {
    return robot_->body_pose(PendulumP::links - 1).act_point(Vec3(0, 0, -PendulumP::link_length)).z();
  }
  Scalar energy() const { return robot_->kinetic_energy() + robot_->potential_energy(); }

  std::vector<Figure> figures() const override {
    std::vector<Figure> f;
    for (std::size_t i = 0; i < kSampleTimes.size(); ++i) {
      if (std::isnan(tip_[i])) continue;  // not reached with these --steps
      f.push_back({"tip_height_t" + std::to_string(static_cast<int>(kSampleTimes[i])) + "_m", tip_[i]});
    }
    f.push_back({"tip_height_final_m", tip_height()});
    f.push_back({"tip_height_min_m", tip_min_});
    f.push_back({"energy_initial_J", energy0_});
    f.push_back({"energy_final_J", energy()});
    f.push_back({"energy_max_J", energy_max_});
    f.push_back({"contacts_max", static_cast<double>(contacts_max_)});
    f.push_back({"self_contacts_max", static_cast<double>(self_contacts_max_)});
    f.push_back({"wall_contact_steps", static_cast<double>(wall_steps_)});
    return f;
  }

 protected:
  void control() override {}
  void observe() override {
    const Scalar h = tip_height();
    tip_min_ = std::min(tip_min_, h);
    energy_max_ = std::max(energy_max_, energy());
    const Scalar t = world_.time(), dt = world_.time_step();
    for (std::size_t i = 1; i < kSampleTimes.size(); ++i) {
      if (std::abs(t - kSampleTimes[i]) < 0.5 * dt) tip_[i] = h;
    }
    Index self = 0, wall = 0, n = 0;
    for (const Contact& c : world_.contacts()) {
      if (c.depth < -1e-3) continue;  // within the margin, not touching
      ++n;
      if (c.object_a == c.object_b) ++self;
      if (c.object_a == wall_ || c.object_b == wall_) ++wall;
    }
    contacts_max_ = std::max(contacts_max_, n);
    self_contacts_max_ = std::max(self_contacts_max_, self);
    wall_steps_ += wall > 0 ? 1 : 0;
  }

 private:
  std::array<Scalar, kSampleTimes.size()> tip_{};
  Scalar energy0_ = 0, energy_max_ = 0, tip_min_ = 0;
  Index wall_ = -1, contacts_max_ = 0, self_contacts_max_ = 0;
  long wall_steps_ = 0;
};

}  // namespace

std::unique_ptr<Scenario> make_pendulum(const ScenarioConfig& config) { return std::make_unique<Pendulum>(config); }

}  // namespace impulse::scenarios
