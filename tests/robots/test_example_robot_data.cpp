// Every public robot description of ../shared/models/example-robot-data (Solo, Solo12, Panda,
// Talos, HyQ, Allegro hands, double pendulums) as a user gets it: loads with at most warnings,
// the model's mass is the sum of the file's link masses, and it survives a drop onto the ground
// followed by a PD hold: every step finite, no contact overflow, on the ground, mimic couplings
// held; and at rest at the end (reported only, [!mayfail], for double_pendulum_simple). The
// models are read from the shared folder next to the repository (never copied into it); the
// test is skipped with a message when the folder is absent.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/world/world.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

namespace fs = std::filesystem;

#ifdef NDEBUG
constexpr Scalar kDropTime = 2.0, kHoldTime = 4.0;  // (a rocking hand settles in 3 s)
#else
constexpr Scalar kDropTime = 0.3, kHoldTime = 0.0;  // Debug / sanitizer builds: the drop only
#endif

std::string models_dir() { return impulse_test::shared_path("models"); }

// Sum of every <mass value="..."> of the file (comments removed), read independently of the loader.
Scalar file_mass(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = std::regex_replace(ss.str(), std::regex("<!--[\\s\\S]*?-->"), "");
  const std::regex mass("<mass\\s+value\\s*=\\s*\"([^\"]+)\"");
  Scalar sum = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), mass), end; it != end; ++it) sum += std::stod((*it)[1]);
  return sum;
}

// Largest |u| over the last 0.1 s of the hold, per robot (absent: not run), for the at-rest test.
std::map<std::string, Scalar>& final_speed() {
  static std::map<std::string, Scalar> m;
  return m;
}
// Mechanical energy T + V at the start of the hold and its largest value during the hold.
std::map<std::string, std::pair<Scalar, Scalar>>& hold_energy() {
  static std::map<std::string, std::pair<Scalar, Scalar>> m;
  return m;
}

// The start of the drop test: joints at 0 clamped into their limits, held there by an implicit
// PD stiff enough to hold each robot's own weight (kp = 50 m_total, kd = 2 m_total per joint).
// Returns that pose (the base where the model puts it).
VecX hold_zero_pose(const Model& model, ArticulatedSystem& robot) {
  VecX q = model.neutral_configuration();
  for (Index i = 0; i < model.nb; ++i) {
    if (model.nq_joint[i] != 1) continue;
    const Index k = model.idx_q[i];
    q[k] = std::min(std::max(q[k], model.lower_position[k]), model.upper_position[k]);
  }
  VecX kp = VecX::Zero(model.nv), kd = VecX::Zero(model.nv);
  const Scalar m = model.total_mass();
  for (Index i = 0; i < model.nb; ++i) {
    if (model.nv_joint[i] != 1) continue;
    kp[model.idx_v[i]] = 50.0 * m;
    kd[model.idx_v[i]] = 2.0 * m;
  }
  robot.set_pd_gains(kp, kd);
  robot.set_pd_targets(q, VecX::Zero(model.nv));
  robot.set_state(q, VecX::Zero(model.nv));
  return q;
}

void drop_and_hold(const std::string& rel) {
  const std::string path = models_dir() + "/example-robot-data/robots/" + rel;
  if (!fs::exists(path)) {
    WARN("skipped: " << path << " not found (the shared models folder is not next to the repository)");
    return;
  }
  UrdfOptions options;
  options.package_paths = {models_dir()};  // package://example-robot-data/... lives there
  std::vector<std::string> warnings;
  options.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  Model model;
  REQUIRE_NOTHROW(model = load_urdf(path, options));
  for (const std::string& w : warnings) UNSCOPED_INFO("load warning: " << w);
  CHECK(model.total_mass() == Approx(file_mass(path)).epsilon(1e-12));
  CHECK(model.total_mass() > 0);
  CHECK(!model.collision.empty());
  CHECK(!model.visuals.empty());

  World world;
  world.set_max_contacts(2048);  // a humanoid lying on the ground touches it with ~50 mesh shapes
  world.add_ground();
  SystemOptions so;
  so.urdf = options;
  ArticulatedSystem& robot = world.add_articulated_system(model, so);

  VecX q = hold_zero_pose(model, robot);
  if (model.floating_base) {
    // lift the base so that every body origin is at least 0.5 m above the ground
    Scalar lowest = 0;
    for (Index b = 0; b < model.nb; ++b) lowest = std::min(lowest, robot.body_pose(b).p.z());
    q[2] = 0.5 - lowest;
    robot.set_q(q);
  }

  const long drop = std::lround(kDropTime / world.time_step()), hold = std::lround(kHoldTime / world.time_step());
  long overflow = 0, not_converged = 0;
  Scalar max_speed_hold = 0, energy_start = 0, energy_max = 0;
  for (long k = 0; k < drop + hold; ++k) {
    const StepStatus st = world.integrate();
    INFO(rel << ": step " << k << " status " << to_string(st));
    REQUIRE(st != StepStatus::NonFinite);
    REQUIRE(st != StepStatus::SolverFailed);
    overflow += st == StepStatus::ContactOverflow;
    not_converged += st == StepStatus::SolverNotConverged;
    REQUIRE(robot.q().allFinite());
    REQUIRE(robot.u().allFinite());
    if (k >= drop + hold - 100) max_speed_hold = std::max(max_speed_hold, robot.u().cwiseAbs().maxCoeff());
    if (k >= drop - 1) {
      const Scalar e = robot.kinetic_energy() + robot.potential_energy();
      if (k == drop - 1) energy_start = energy_max = e;
      energy_max = std::max(energy_max, e);
    }
  }
  INFO(rel << ": " << overflow << " overflow steps, " << not_converged << " steps not converged, "
           << world.contacts().size() << " contacts at the end");
  CHECK(overflow == 0);
  if (model.floating_base) CHECK(robot.q()[2] > -0.05);  // on the ground, not through it
  // Mimic couplings (the Panda's fingers, Talos' grippers) held throughout. Not to round-off: a
  // step the solver leaves unconverged leaves a small coupling velocity that erp then removes, and
  // how many such steps a drop has depends on the compiler and the libm (talos_full_v2: 1.0e-6 rad
  // after 3 unconverged steps in CI's g++ Debug build). tests/stepper/test_mimic.cpp holds the
  // coupling to 1e-9 where the solver converges.
  for (const MimicJoint& mj : model.mimic) {
    const Scalar qj = robot.q()[model.idx_q[mj.joint]], qm = robot.q()[model.idx_q[mj.master]];
    CHECK(std::abs(qj - mj.multiplier * qm - mj.offset) < 1e-5);
  }
  if (hold > 0) final_speed()[rel] = max_speed_hold;
  if (hold > 0) hold_energy()[rel] = {energy_start, energy_max};
}

// At rest: every generalized velocity below 1 cm/s or 0.01 rad/s over the last 0.1 s of the hold.
// Required of every robot but double_pendulum_simple, which cannot be: see the test below.
void at_rest(const std::string& rel) {
  if (final_speed().count(rel) == 0) drop_and_hold(rel);
  if (final_speed().count(rel) == 0) return;  // skipped, or a Debug build (drop only)
  INFO(rel << ": largest |u| over the last 0.1 s " << final_speed()[rel]);
  CHECK(final_speed()[rel] < 1e-2);
}

}  // namespace

#define ROBOT_TEST_TAGS(file, rest_tags)                                                           \
  TEST_CASE("example-robot-data: " file " loads, drops and holds", "[robots]") { drop_and_hold(file); } \
  TEST_CASE("example-robot-data: " file " is at rest after the hold", rest_tags) { at_rest(file); }
#define ROBOT_TEST(file) ROBOT_TEST_TAGS(file, "[robots]")

ROBOT_TEST("allegro_hand_description/urdf/allegro_left_hand.urdf")
ROBOT_TEST("allegro_hand_description/urdf/allegro_right_hand.urdf")
ROBOT_TEST("double_pendulum_description/urdf/double_pendulum.urdf")
ROBOT_TEST("double_pendulum_description/urdf/double_pendulum_continuous.urdf")
TEST_CASE("example-robot-data: double_pendulum_description/urdf/double_pendulum_simple.urdf loads, drops and holds",
          "[robots]") {
  drop_and_hold("double_pendulum_description/urdf/double_pendulum_simple.urdf");
}
// double_pendulum_simple set upright on its base cannot come to rest: both joints are locked by
// limits [0, 0], and the chain hangs off the base's +x face, so the robot's centre of mass lies
// 2.1 mm beyond the base's support edge (x 0.0271 m in the base frame, half-width 0.025 m). It
// topples over that edge, slowly, because the file gives its 0.1 kg base an inertia of 1 kg m^2
// (the tilt grows by e every 1.1 s). Asserted instead: that geometry, and that the mechanical energy
// never rises during the hold (nothing acts but gravity and the contacts).
TEST_CASE("example-robot-data: double_pendulum_simple topples over its base edge without gaining energy",
          "[robots]") {
  const std::string rel = "double_pendulum_description/urdf/double_pendulum_simple.urdf";
  const std::string path = models_dir() + "/example-robot-data/robots/" + rel;
  if (!fs::exists(path)) {
    WARN("skipped: " << path << " not found");
    return;
  }
  UrdfOptions options;
  options.package_paths = {models_dir()};
  const Model model = load_urdf(path, options);
  Data data(model);
  const Vec3 com = center_of_mass(model, data, model.neutral_configuration());
  CHECK(com.x() > 0.025 + 1e-3);  // beyond the 5 cm base box's +x face: no upright rest exists
  if (hold_energy().count(rel) == 0) drop_and_hold(rel);
  if (hold_energy().count(rel) == 0) return;  // a Debug build (drop only)
  const auto [start, largest] = hold_energy()[rel];
  INFO("energy at the start of the hold " << start << " J, largest during it " << largest << " J");
  CHECK(largest <= start + 1e-6 * std::abs(start));  // (its kinetic energy reaches about 0.05 J)
  CHECK(final_speed()[rel] > 1e-2);  // and it is moving: toppling, not resting
}
ROBOT_TEST("hyq_description/robots/hyq_no_sensors.urdf")
ROBOT_TEST("panda_description/urdf/panda.urdf")
ROBOT_TEST("panda_description/urdf/panda_collision.urdf")
ROBOT_TEST("solo_description/robots/solo.urdf")
ROBOT_TEST("solo_description/robots/solo12.urdf")
ROBOT_TEST("talos_data/robots/talos_full_v2.urdf")
ROBOT_TEST("talos_data/robots/talos_full_v2_box.urdf")
ROBOT_TEST("talos_data/robots/talos_left_arm.urdf")
ROBOT_TEST("talos_data/robots/talos_reduced.urdf")
ROBOT_TEST("talos_data/robots/talos_reduced_box.urdf")
ROBOT_TEST("talos_data/robots/talos_reduced_corrected.urdf")

// A humanoid pushed over, its joints still held by the stiff PD of the drop test (and Talos'
// URDF effort limits), falls on its face or its back and comes to rest lying there. Before the
// effort clamps were decided on the implicit PD torque, a foot in the air after the fall kept
// flipping between +6.25 and -6.25 rad/s every step (a saturated PD deciding on the start-of-step
// velocity; test_actuators.cpp has the one-link case).
TEST_CASE("example-robot-data: Talos pushed over comes to rest lying down", "[robots]") {
  const std::string path = models_dir() + "/example-robot-data/robots/talos_data/robots/talos_reduced.urdf";
  if (!fs::exists(path)) {
    WARN("skipped: " << path << " not found");
    return;
  }
#ifndef NDEBUG
  WARN("skipped in a Debug build (5 s of a humanoid)");
  return;
#endif
  UrdfOptions options;
  options.package_paths = {models_dir()};
  options.on_warning = [](const std::string&) {};
  const Model model = load_urdf(path, options);
  for (const Scalar pitch_rate : {6.0, -6.0}) {  // forward, backward
    INFO("initial pitch rate " << pitch_rate << " rad/s");
    World world;
    world.set_max_contacts(2048);
    world.add_ground();
    SystemOptions so;
    so.urdf = options;
    ArticulatedSystem& robot = world.add_articulated_system(model, so);
    VecX q = hold_zero_pose(model, robot);
    Scalar lowest = 0;
    for (Index b = 0; b < model.nb; ++b) lowest = std::min(lowest, robot.body_pose(b).p.z());
    q[2] = 0.02 - lowest;  // standing, soles 2 cm above the ground
    VecX u = VecX::Zero(model.nv);
    u[4] = pitch_rate;  // the base's angular velocity about y (world frame)
    robot.set_state(q, u);
    Scalar late = 0;
    for (int k = 0; k < 5000; ++k) {
      const StepStatus st = world.integrate();
      REQUIRE(st != StepStatus::NonFinite);
      REQUIRE(st != StepStatus::ContactOverflow);
      if (k >= 4900) late = std::max(late, robot.u().cwiseAbs().maxCoeff());
    }
    CHECK(robot.q()[2] < 0.3);  // lying (standing: 1.08 m)
    CHECK(robot.q()[2] > 0.05);
    CHECK(late < 1e-3);  // at rest (before: 6.25 rad/s falling forward)
  }
}

TEST_CASE("example-robot-data: every URDF of the folder has a test above", "[robots]") {
  const fs::path root = models_dir() + "/example-robot-data/robots";
  if (!fs::exists(root)) {
    WARN("skipped: " << root << " not found");
    return;
  }
  long n = 0;
  for (const auto& e : fs::recursive_directory_iterator(root)) n += e.path().extension() == ".urdf";
  CHECK(n == 16);
}
