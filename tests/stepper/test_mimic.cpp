// Mimic joints (URDF <mimic>, docs/robots.md): q_j = m q_master + o kept by one equality row per
// coupling in the contact problem (contact/delassus.hpp). Checked against analytic and
// independent answers with every solver:
//   two sibling prismatic fingers (the Panda's gripper), m = -1: a force F on the master
//   accelerates both at F / (m1 + m^2 m2), opposite ways, the relation holding to 1e-9;
//   a revolute chain whose child follows its parent (m = 2, paths that overlap): the velocity
//   after one step equals the reduced one-coordinate dynamics built from CRBA,
//   u = dt T^T tau / (T^T M T) with T = (1, m);
//   an initial coupling error is removed no faster than max_push_velocity;
//   mimic_joints = false leaves the joints independent; save/restore reruns bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_state.hpp"

using namespace impulse;
using Vec2 = Eigen::Matrix<Scalar, 2, 1>;

namespace {

const char* const kMimicSolvers[] = {"bisection", "pgs", "lm", "noslip"};

std::string point_link(const std::string& name, Scalar mass, const std::string& com = "0 0 0") {
  return "<link name=\"" + name + "\"><inertial><origin xyz=\"" + com + "\"/><mass value=\"" + std::to_string(mass) +
         "\"/><inertia ixx=\"1e-4\" iyy=\"1e-4\" izz=\"1e-4\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>";
}

// A hand welded to the world with two fingers sliding along y; finger2 = -finger1 + 0.01.
Model gripper(Scalar m1, Scalar m2) {
  const std::string limit = "<limit lower=\"-1\" upper=\"1\" effort=\"100\" velocity=\"10\"/>";
  return load_urdf_string(
      "<robot name=\"gripper\"><link name=\"world\"/>" + point_link("hand", 1) +
      "<joint name=\"weld\" type=\"fixed\"><parent link=\"world\"/><child link=\"hand\"/></joint>" +
      point_link("left", m1) + point_link("right", m2) +
      "<joint name=\"finger1\" type=\"prismatic\"><parent link=\"hand\"/><child link=\"left\"/><axis xyz=\"0 1 0\"/>" +
      limit + "</joint>" +
      "<joint name=\"finger2\" type=\"prismatic\"><parent link=\"hand\"/><child link=\"right\"/><axis xyz=\"0 1 0\"/>" +
      limit + "<mimic joint=\"finger1\" multiplier=\"-1\" offset=\"0.01\"/></joint></robot>");
}

// Two links in a horizontal plane (axes along z, so gravity exerts no torque); the elbow follows
// the shoulder: q_elbow = 2 q_shoulder + 0.1.
Model coupled_arm() {
  return load_urdf_string(
      "<robot name=\"arm\"><link name=\"world\"/>" + point_link("upper", 2, "0.5 0 0") + point_link("fore", 1, "0.4 0 0") +
      "<joint name=\"shoulder\" type=\"continuous\"><parent link=\"world\"/><child link=\"upper\"/>"
      "<axis xyz=\"0 0 1\"/></joint>"
      "<joint name=\"elbow\" type=\"continuous\"><parent link=\"upper\"/><child link=\"fore\"/>"
      "<origin xyz=\"1 0 0\"/><axis xyz=\"0 0 1\"/><mimic joint=\"shoulder\" multiplier=\"2\" offset=\"0.1\"/>"
      "</joint></robot>");
}

}  // namespace

TEST_CASE("mimic joints: sibling fingers move together at F / (m1 + m^2 m2) (every solver)", "[stepper][mimic]") {
  const Scalar m1 = 0.5, m2 = 0.3, F = 2;
  const Scalar a = F / (m1 + m2);  // m^2 = 1
  for (const char* solver : kMimicSolvers) {
    INFO(solver);
    World w;
    w.set_contact_solver(solver);
    ArticulatedSystem& g = w.add_articulated_system(gripper(m1, m2));
    REQUIRE(g.model().mimic.size() == 1);
    g.set_state(Vec2(0, 0.01), Vec2::Zero());
    const int steps = 200;
    for (int k = 0; k < steps; ++k) {
      g.set_generalized_force(Vec2(F, 0));
      REQUIRE(w.integrate() == StepStatus::Ok);
      CHECK(std::abs(g.q()[1] - (-g.q()[0] + 0.01)) < 1e-9);
      CHECK(std::abs(g.u()[1] + g.u()[0]) < 1e-9);
    }
    const Scalar t = steps * w.time_step();
    CHECK(g.u()[0] == Approx(a * t).epsilon(1e-9));
    // semi-implicit Euler: q_n = a dt^2 n (n + 1) / 2
    CHECK(g.q()[0] == Approx(a * w.time_step() * w.time_step() * steps * (steps + 1) / 2).epsilon(1e-9));
  }
}

TEST_CASE("mimic joints: a coupled chain follows the reduced one-coordinate dynamics (every solver)",
          "[stepper][mimic]") {
  const Model model = coupled_arm();
  REQUIRE(model.nv == 2);
  const Scalar tau = 3, mult = 2;
  for (const Scalar q0 : {0.0, 0.7, -2.0}) {
    const Vec2 q(q0, mult * q0 + 0.1);
    Data data(model);
    const MatX M = crba(model, data, q);
    const Vec2 T(1, mult);
    const Scalar qdd = T.dot(Vec2(tau, 0)) / T.dot(M * T);  // at rest: no velocity product terms
    for (const char* solver : kMimicSolvers) {
      INFO(solver << " q0 " << q0);
      World w;
      w.set_contact_solver(solver);
      ArticulatedSystem& arm = w.add_articulated_system(model);
      arm.set_state(q, Vec2::Zero());
      arm.set_generalized_force(Vec2(tau, 0));
      REQUIRE(w.integrate() == StepStatus::Ok);
      CHECK(arm.u()[0] == Approx(qdd * w.time_step()).epsilon(1e-9));
      CHECK(std::abs(arm.u()[1] - mult * arm.u()[0]) < 1e-12);
      CHECK(std::abs(arm.q()[1] - mult * arm.q()[0] - 0.1) < 1e-12);
    }
  }
}

TEST_CASE("mimic joints: an initial coupling error goes at most max_push_velocity", "[stepper][mimic]") {
  for (const char* solver : kMimicSolvers) {
    INFO(solver);
    World w;
    w.set_contact_solver(solver);
    ArticulatedSystem& g = w.add_articulated_system(gripper(0.5, 0.3));
    g.set_state(Vec2(0, 0.31), Vec2::Zero());  // 0.3 m off the coupling
    const Scalar vmax = w.settings().contact.max_push_velocity;
    Scalar err = 0.3;
    for (int k = 0; k < 2000; ++k) {
      REQUIRE(w.integrate() == StepStatus::Ok);
      const Scalar e = g.q()[1] + g.q()[0] - 0.01;
      CHECK(std::abs(g.u()[1] + g.u()[0]) <= vmax * (1 + 1e-9));  // the error's rate, bounded
      CHECK(std::abs(e) <= err + 1e-12);                           // never grows
      err = std::abs(e);
    }
    CHECK(err < 1e-9);
  }
}

TEST_CASE("mimic joints: a limit the master's limits imply gets no row (no dependent rows)", "[stepper][mimic]") {
  // finger2 = -finger1 + 0.01 with finger1 in [-1, 1] stays in [-0.99, 1.01]: its lower limit -1
  // is implied, its upper limit 1 is not. The master at its upper limit puts finger2 near -0.99,
  // within the limit margin of -1: a limit row without the coupling, none with it.
  for (const bool mimic : {true, false}) {
    World w;
    DelassusSettings c = w.settings().contact;
    c.mimic_joints = mimic;
    w.set_contact_settings(c);
    ArticulatedSystem& g = w.add_articulated_system(gripper(0.5, 0.3));
    g.set_state(Vec2(0.999, -0.992), Vec2::Zero());  // 3 mm off the coupling
    REQUIRE(w.integrate() == StepStatus::Ok);
    CHECK(w.stats().mimic_rows == (mimic ? 1 : 0));
    CHECK(w.stats().limits == (mimic ? 1 : 2));
    // the upper limit of finger2 is not implied: it holds the master through the coupling
    World w2;
    w2.set_contact_settings(c);
    ArticulatedSystem& g2 = w2.add_articulated_system(gripper(0.5, 0.3));
    g2.set_state(Vec2(-0.985, 0.995), Vec2::Zero());
    for (int k = 0; k < 200; ++k) {
      g2.set_generalized_force(Vec2(-2, 0));
      REQUIRE(w2.integrate() == StepStatus::Ok);
    }
    if (mimic) {
      CHECK(g2.q()[1] <= 1 + 1e-4);
      CHECK(g2.q()[0] >= -0.99 - 1e-4);  // stopped by finger2's limit, short of its own (-1)
    } else {
      CHECK(g2.q()[0] < -0.99 - 1e-3);
    }
  }
}

TEST_CASE("mimic joints: mimic_joints = false leaves the joints independent", "[stepper][mimic]") {
  World w;
  DelassusSettings c = w.settings().contact;
  c.mimic_joints = false;
  w.set_contact_settings(c);
  ArticulatedSystem& g = w.add_articulated_system(gripper(0.5, 0.3));
  for (int k = 0; k < 100; ++k) {
    g.set_generalized_force(Vec2(2, 0));
    REQUIRE(w.integrate() == StepStatus::Ok);
  }
  CHECK(g.u()[1] == 0);
  CHECK(g.u()[0] == Approx(2 / 0.5 * 0.1).epsilon(1e-9));
}

TEST_CASE("mimic joints: save/restore reruns bit for bit (warm start of the coupling row)", "[stepper][mimic]") {
  World w;
  ArticulatedSystem& arm = w.add_articulated_system(coupled_arm());
  arm.set_state(Vec2(0.3, 0.7), Vec2::Zero());
  auto run = [&](int n) {
    for (int k = 0; k < n; ++k) {
      arm.set_generalized_force(Vec2(std::sin(0.01 * k), 0));
      REQUIRE(w.integrate() == StepStatus::Ok);
    }
  };
  run(50);
  const WorldState s = w.save_state();
  run(100);
  const VecX q = arm.q(), u = arm.u();
  w.restore_state(s);
  run(100);
  CHECK(arm.q() == q);
  CHECK(arm.u() == u);
}
