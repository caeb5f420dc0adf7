// Scenario base: the World with a ground plane and ANYmal, the step order, the registry.
#include "scenarios/scenario.hpp"

#include <algorithm>

#include "impulse/core/error.hpp"
#include "impulse/core/version.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/io/urdf.hpp"
#include "scenarios/anymal_scenarios.hpp"
#include "scenarios/validation_scenarios.hpp"

namespace impulse::scenarios {

std::string anymal_urdf_path() { return find_model("anymal/anymal.urdf"); }

VecX anymal_nominal_joints() {
  VecX j(12);
  // LF RF (front: hip forward, knee back) and LH RH (mirrored), HAA HFE KFE each
  j << 0, 0.5, -1.0, 0, 0.5, -1.0, 0, -0.5, 1.0, 0, -0.5, 1.0;
  return j;
}

Scalar anymal_nominal_height() {
  static const Scalar h = [] {
    const Model m = load_urdf(anymal_urdf_path());
    Data d(m);
    VecX q = m.neutral_configuration();
    q.tail(12) = anymal_nominal_joints();
    forward_kinematics(m, d, q);
    Scalar lowest = 1e9;
    for (const CollisionShape& s : m.collision) {
      if (s.type == ShapeType::Sphere) lowest = std::min(lowest, d.oMi[s.body].act_point(s.X_BS.p).z() - s.size.x());
    }
    return -lowest;
  }();
  return h;
}

void set_joint_pd_gains(ArticulatedSystem& robot, Scalar kp, Scalar kd) {
  VecX p = VecX::Zero(robot.nv()), d = VecX::Zero(robot.nv());
  p.tail(12).setConstant(kp);
  d.tail(12).setConstant(kd);
  robot.set_pd_gains(p, d);
}

void set_joint_targets(ArticulatedSystem& robot, const VecX& joints) {
  VecX q = robot.model().neutral_configuration();
  q.tail(12) = joints;
  robot.set_pd_targets(q, VecX::Zero(robot.nv()));
}

Scenario::Scenario(std::string name, const ScenarioConfig& config) : rng_(config.seed), name_(std::move(name)) {
  world_.set_stage_timing(true);  // the CSV's and the summary's per-stage times
  world_.add_ground();
  robot_ = &world_.add_articulated_system(anymal_urdf_path());
  world_.set_contact_solver(config.solver);
  // Position-error correction: the velocity-level contacts let a foot that is held while its leg
  // rotates drift into the ground (second-order terms of q (+) dt u); remove 20 % of the depth
  // beyond 10 um per step (hang: mean foot penetration ~1e-3 m after 3 s without, ~3e-5 m with).
  DelassusSettings contact = world_.settings().contact;
  contact.erp = 0.2;
  contact.slop = 1e-5;
  world_.set_contact_settings(contact);
}

Scenario::Scenario(std::string name, const ScenarioConfig& config, EmptyWorld) : rng_(config.seed), name_(std::move(name)) {
  world_.set_stage_timing(true);
  world_.set_contact_solver(config.solver);
}

void Scenario::place(const Vec3& p, const Quat& R, const VecX& joints, const VecX& u) {
  VecX q = robot_->model().neutral_configuration();
  q.head<3>() = p;
  const Quat Rn = R.normalized();
  q[3] = Rn.w(), q[4] = Rn.x(), q[5] = Rn.y(), q[6] = Rn.z();
  q.tail(12) = joints;
  robot_->set_state(q, u.size() == 0 ? VecX(VecX::Zero(robot_->nv())) : u);
  if (placed_) ++resets_;
  placed_ = true;
}

StepStatus Scenario::step() {
  control();
  world_.integrate1();
  if (before_solve_) before_solve_(world_);
  const StepStatus s = world_.integrate2();
  ++steps_;
  observe();
  return s;
}

const std::vector<std::string>& scenario_names() {
  static const std::vector<std::string> names = {"trot", "hang", "drop", "random"};
  return names;
}

const std::vector<std::string>& validation_scenario_names() {
  static const std::vector<std::string> names = {"sphere", "pendulum", "grasp"};
  return names;
}

std::unique_ptr<Scenario> make_scenario(const std::string& name, const ScenarioConfig& config) {
  if (name == "trot") return make_trot(config);
  if (name == "hang") return make_hang(config);
  if (name == "drop") return make_drop(config);
  if (name == "random") return make_random(config);
  if (name == "sphere") return make_sphere(config);
  if (name == "pendulum") return make_pendulum(config);
  if (name == "grasp") return make_grasp(config);
  std::string list;
  for (const auto& n : scenario_names()) list += (list.empty() ? "" : ", ") + n;
  for (const auto& n : validation_scenario_names()) list += ", " + n;
  throw InvalidArgument("unknown scenario '" + name + "' (scenarios: " + list + ")");
}

}  // namespace impulse::scenarios
