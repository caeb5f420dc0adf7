// Motors as URDF describes them (stepper.cpp, dynamics_stage): effort limits clamp the total
// actuator torque (explicit + PD, implicit PD included), velocity limits stop the motor from
// driving a joint faster, joint damping decays the speed as exp(-b t / I), and the applied torque
// is readable after each step (ArticulatedSystem::applied_torque).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "impulse/io/urdf.hpp"
#include "impulse/world/world.hpp"

using namespace impulse;

namespace {

// A 1 kg point-like link at 1 m on a revolute joint about `axis` (y: gravity acts, the link is
// horizontal at q = 0; z: no gravity torque). I = 1 + 1e-4 kg m^2 about the joint.
Model link_model(const std::string& axis, Scalar effort, Scalar velocity, Scalar damping) {
  const std::string urdf = R"(<robot name="link">
  <link name="world"/>
  <link name="arm">
    <inertial><origin xyz="1 0 0"/><mass value="1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="j" type="revolute">
    <parent link="world"/><child link="arm"/><axis xyz=")" + axis + R"("/>
    <limit lower="-10" upper="10" effort=")" + std::to_string(effort) + R"(" velocity=")" + std::to_string(velocity) +
                           R"("/>
    <dynamics damping=")" + std::to_string(damping) + R"(" friction="0"/>
  </joint>
</robot>)";
  return load_urdf_string(urdf);
}

}  // namespace

TEST_CASE("actuators: a stiff PD with a 5 N m effort limit cannot hold 9.81 N m", "[stepper]") {
  for (const Scalar effort : {5.0, 1000.0}) {
    INFO("effort limit " << effort << " N m");
    World w;
    ArticulatedSystem& arm = w.add_articulated_system(link_model("0 1 0", effort, 100, 0));
    arm.set_pd_gains(VecX::Constant(1, 2000.0), VecX::Constant(1, 100.0));
    arm.set_pd_targets(VecX::Zero(1), VecX::Zero(1));
    Scalar worst_torque = 0;
    for (int k = 0; k < 1000; ++k) {
      REQUIRE(w.integrate() == StepStatus::Ok);
      worst_torque = std::max(worst_torque, std::abs(arm.applied_torque()[0]));
    }
    // positive rotation about y lowers a link along +x
    if (effort < 10) {
      CHECK(arm.q()[0] > 1.0);  // it falls (a fraction of a turn in 1 s)
      CHECK(worst_torque <= effort * (1 + 1e-12));
      CHECK(std::abs(arm.applied_torque()[0]) == Approx(effort));
    } else {
      CHECK(std::abs(arm.q()[0]) < 1e-2);                 // held
      CHECK(arm.applied_torque()[0] == Approx(-9.81).epsilon(1e-3));  // holds gravity's m g l
    }
  }
}

TEST_CASE("actuators: the applied torque is the end-of-step PD torque when not clamped", "[stepper]") {
  World w;
  ArticulatedSystem& arm = w.add_articulated_system(link_model("0 0 1", 0, 0, 0));  // no limits
  const Scalar kp = 50, kd = 3;
  arm.set_pd_gains(VecX::Constant(1, kp), VecX::Constant(1, kd));
  arm.set_pd_targets(VecX::Constant(1, 0.7), VecX::Zero(1));
  arm.set_generalized_force(VecX::Constant(1, 0.25));
  for (int k = 0; k < 50; ++k) {
    const Scalar u0 = arm.u()[0];
    REQUIRE(w.integrate() == StepStatus::Ok);
    const Scalar tau = 0.25 + kp * (0.7 - arm.q()[0]) + kd * (0 - arm.u()[0]);
    CHECK(arm.applied_torque()[0] == Approx(tau).epsilon(1e-12));
    // and it is the torque that moved the joint: I (u+ - u) / dt (no gravity torque about z)
    CHECK((1 + 1e-4) * (arm.u()[0] - u0) / w.time_step() == Approx(tau).epsilon(1e-9));
  }
}

TEST_CASE("actuators: the motor does not drive a joint past its velocity limit", "[stepper]") {
  World w;
  const Scalar vmax = 2, effort = 40;
  ArticulatedSystem& arm = w.add_articulated_system(link_model("0 0 1", effort, vmax, 0));
  arm.set_pd_gains(VecX::Zero(1), VecX::Constant(1, 100.0));
  arm.set_pd_targets(VecX::Zero(1), VecX::Constant(1, 10.0));  // asks for 10 rad/s
  Scalar fastest = 0;
  for (int k = 0; k < 500; ++k) {
    REQUIRE(w.integrate() == StepStatus::Ok);
    fastest = std::max(fastest, arm.u()[0]);
    CHECK(std::abs(arm.applied_torque()[0]) <= effort * (1 + 1e-12));
  }
  // at most one step of full effort beyond the limit
  CHECK(fastest <= vmax + effort * w.time_step() / (1 + 1e-4) + 1e-12);
  CHECK(fastest >= vmax);
}

TEST_CASE("actuators: joint damping decays the speed as exp(-b t / I)", "[stepper]") {
  for (const Scalar b : {0.5, 2.0}) {
    World w;
    ArticulatedSystem& arm = w.add_articulated_system(link_model("0 0 1", 0, 0, b));
    arm.set_state(VecX::Zero(1), VecX::Constant(1, 1.0));
    const Scalar I = 1 + 1e-4;
    for (int k = 1; k <= 1000; ++k) {
      REQUIRE(w.integrate() == StepStatus::Ok);
      if (k % 100 == 0) {
        const Scalar t = k * w.time_step();
        INFO("b " << b << ", t " << t);
        CHECK(arm.u()[0] == Approx(std::exp(-b * t / I)).epsilon(1e-2));
      }
    }
  }
}

TEST_CASE("actuators: joints clamped only at the free velocity move as if driven by the applied torques", "[stepper]") {
  // Two 1 kg links at 1 m and 2 m, both joints about y, held horizontal by a stiff PD at rest:
  // the explicit PD torque is zero, so no joint is clamped in the first pass; the implicit PD
  // torque at u_free holds gravity (about 29 and 10 N m), beyond the 5 N m limits, so the second
  // pass clamps both, with M recomputed at the same q (not a second kinematics/RNEA pass). With
  // both at -5 N m the outer link swings up relative to the inner one (-5 N m is more than it
  // needs to fall with it), so the PD at the end of the step would push it down, not up: the
  // third pass releases j2, whose implicit PD then keeps the two links aligned with a small
  // torque, while j1 stays at its bound. The step must equal that of the same arm driven by the
  // applied torques alone (no PD): the implicit PD's torque is its end-of-step value.
  const std::string urdf = R"(<robot name="arm2">
  <link name="world"/>
  <link name="a"><inertial><origin xyz="1 0 0"/><mass value="1"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="1 0 0"/><mass value="1"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="world"/><child link="a"/><axis xyz="0 1 0"/>
    <limit lower="-10" upper="10" effort="5" velocity="100"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="1 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-10" upper="10" effort="5" velocity="100"/></joint>
</robot>)";
  const Model model = load_urdf_string(urdf);
  World pd, driven;
  // (the driven arm, without PD, would take Heun's flight update under the default
  // PositionUpdate::Bodies; the comparison is of the torques within one integrator)
  DelassusSettings euler = driven.settings().contact;
  euler.position_update = PositionUpdate::Euler;
  driven.set_contact_settings(euler);
  ArticulatedSystem& a = pd.add_articulated_system(model);
  ArticulatedSystem& b = driven.add_articulated_system(model);
  a.set_pd_gains(VecX::Constant(2, 4000.0), VecX::Constant(2, 20000.0));  // dt Kd >> M
  a.set_pd_targets(VecX::Zero(2), VecX::Zero(2));
  REQUIRE(pd.integrate() == StepStatus::Ok);
  // j1 clamped (at -5: the PD resists the links' fall, positive about y), j2 within its limit
  REQUIRE(a.applied_torque()[0] == -5.0);
  REQUIRE(std::abs(a.applied_torque()[1]) < 1.0);
  b.set_generalized_force(a.applied_torque());
  REQUIRE(driven.integrate() == StepStatus::Ok);
  for (Index k = 0; k < 2; ++k) {
    INFO("dof " << k);
    CHECK(a.u()[k] == Approx(b.u()[k]).margin(1e-13));
    CHECK(a.q()[k] == Approx(b.q()[k]).margin(1e-15));
  }
  CHECK(std::abs(a.u()[0]) > 1e-3);  // it falls
}

TEST_CASE("actuators: a saturated stiff PD on a light link stops it, not a period-2 cycle", "[stepper]") {
  // A light link (I = 1e-2 kg m^2 about z: no gravity torque) spinning at 6 rad/s, held at q = 0
  // by a stiff PD (kd = 200: the start-of-step torque is -1200 N m) with a 100 N m effort limit.
  // One step at the bound changes u by 100 dt / I = 10 rad/s: a clamp decided on the
  // start-of-step torque flips u to -4, which asks for +800 N m, and so on forever (a fallen
  // Talos's feet did this). The implicit PD's own end-of-step torque is within the limit (about
  // -I u / dt = -60 N m): the clamp is released and the motor stops the link in one step.
  const std::string urdf = R"(<robot name="light">
  <link name="world"/>
  <link name="foot"><inertial><mass value="1"/><inertia ixx="1e-2" iyy="1e-2" izz="1e-2" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="ankle" type="revolute"><parent link="world"/><child link="foot"/><axis xyz="0 0 1"/>
    <limit lower="-10" upper="10" effort="100" velocity="50"/></joint>
</robot>)";
  World w;
  ArticulatedSystem& foot = w.add_articulated_system(load_urdf_string(urdf));
  foot.set_pd_gains(VecX::Constant(1, 5000.0), VecX::Constant(1, 200.0));
  foot.set_pd_targets(VecX::Zero(1), VecX::Zero(1));
  foot.set_state(VecX::Zero(1), VecX::Constant(1, 6.0));
  Scalar late = 0;
  for (int k = 0; k < 200; ++k) {
    REQUIRE(w.integrate() == StepStatus::Ok);
    CHECK(std::abs(foot.applied_torque()[0]) <= 100 * (1 + 1e-12));
    if (k == 0) CHECK(std::abs(foot.u()[0]) < 0.5);  // stopped in one step (the old clamping: -4)
    if (k >= 100) late = std::max(late, std::abs(foot.u()[0]));
  }
  // then the overdamped PD's slow mode, time constant kd / kp = 40 ms, brings it to q = 0
  CHECK(late < 1e-3);  // (the old clamping: 4 or 6 rad/s, every step)
  CHECK(std::abs(foot.q()[0]) < 1e-3);
}
