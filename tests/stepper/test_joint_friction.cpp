// Joint Coulomb friction (URDF <dynamics friction>, docs/fidelity.md item 6): one box row per scalar joint
// with friction f > 0, |lambda| <= f dt, target 0 (contact/delassus.hpp), solved exactly by every
// solver. Analytic checks on a 1 kg point-like link at 1 m (I = 1 + 1e-4 kg m^2):
//   held horizontal, gravity torque m g l = 9.81 N m < f = 20 N m: it sticks (every solver);
//   f = 5 N m < 9.81 N m: it slips with angular acceleration (9.81 cos q - 5) / I;
//   about a vertical axis with damping b from u0: I du/dt = -b u - f sign(u), so
//     u(t) = (u0 + f/b) exp(-b t / I) - f/b  until it stops at t* = I/b ln(1 + b u0 / f), then 0;
// plus bit-identical reruns and a save/restore in the middle of the slip.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "impulse/io/mjcf.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/batch/vec_world.hpp"
#include "impulse/world/step_workspace.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_state.hpp"
#include "support/alloc_counter.hpp"

using namespace impulse;

namespace {

constexpr Scalar kInertia = 1 + 1e-4;  // about the joint

Model friction_link(const std::string& axis, Scalar friction, Scalar damping) {
  const std::string urdf = R"(<robot name="link">
  <link name="world"/>
  <link name="arm">
    <inertial><origin xyz="1 0 0"/><mass value="1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="j" type="continuous">
    <parent link="world"/><child link="arm"/><axis xyz=")" + axis + R"("/>
    <dynamics damping=")" + std::to_string(damping) + R"(" friction=")" + std::to_string(friction) + R"("/>
  </joint>
</robot>)";
  return load_urdf_string(urdf);
}

const char* const kSolvers[] = {"bisection", "pgs", "lm", "noslip"};

}  // namespace

TEST_CASE("joint friction: 20 N m holds a link against 9.81 N m of gravity (every solver)", "[stepper][friction]") {
  for (const char* solver : kSolvers) {
    INFO(solver);
    World w;
    w.set_contact_solver(solver);
    ArticulatedSystem& arm = w.add_articulated_system(friction_link("0 1 0", 20, 0));
    Scalar worst = 0;
    for (int k = 0; k < 1000; ++k) {
      REQUIRE(w.integrate() == StepStatus::Ok);
      worst = std::max(worst, std::abs(arm.q()[0]));
      CHECK(w.stats().friction_rows == 1);
    }
    CHECK(worst < 1e-3);
    // the friction torque holds gravity's m g l (positive rotation about y lowers the link)
    CHECK(arm.joint_friction_torque()[0] == Approx(-9.81).epsilon(1e-3));
    CHECK(arm.applied_torque()[0] == 0);  // no actuator
  }
}

TEST_CASE("joint friction: 5 N m slips, angular acceleration (9.81 - 5) / I", "[stepper][friction]") {
  for (const char* solver : kSolvers) {
    INFO(solver);
    World w;
    w.set_contact_solver(solver);
    ArticulatedSystem& arm = w.add_articulated_system(friction_link("0 1 0", 5, 0));
    const int steps = 100;  // 0.1 s: q ~ 0.024 rad, cos q = 1 - 3e-4
    Scalar impulse = 0;     // integral of the expected acceleration along the path taken
    for (int k = 0; k < steps; ++k) {
      impulse += (9.81 * std::cos(arm.q()[0]) - 5) / kInertia * w.time_step();
      REQUIRE(w.integrate() == StepStatus::Ok);
      CHECK(arm.joint_friction_torque()[0] == Approx(-5).epsilon(1e-9));  // at the bound, opposing
    }
    const Scalar t = steps * w.time_step();
    CHECK(arm.u()[0] / t == Approx((9.81 - 5) / kInertia).epsilon(1e-2));
    CHECK(arm.u()[0] == Approx(impulse).epsilon(1e-3));
  }
}

TEST_CASE("joint friction with damping: exponential decay shifted by f / b, then stuck", "[stepper][friction]") {
  const Scalar u0 = 2, f = 0.5;
  for (const Scalar b : {0.5, 2.0}) {
    World w;
    ArticulatedSystem& arm = w.add_articulated_system(friction_link("0 0 1", f, b));
    arm.set_state(VecX::Zero(1), VecX::Constant(1, u0));
    const Scalar t_stop = kInertia / b * std::log(1 + b * u0 / f);
    for (int k = 1; k <= 3000; ++k) {
      REQUIRE(w.integrate() == StepStatus::Ok);
      const Scalar t = k * w.time_step();
      INFO("b " << b << ", t " << t << ", stops at " << t_stop);
      if (t < 0.9 * t_stop && k % 50 == 0) {
        const Scalar expected = (u0 + f / b) * std::exp(-b * t / kInertia) - f / b;
        CHECK(arm.u()[0] == Approx(expected).epsilon(1e-2));
        CHECK(arm.joint_friction_torque()[0] == Approx(-f).epsilon(1e-9));
      }
      if (t > t_stop + 0.01) {
        CHECK(arm.u()[0] == 0);  // stuck: friction cancels the (zero) drive exactly
      }
    }
  }
}

TEST_CASE("joint friction: bit-identical reruns and save/restore in the middle of the slip", "[stepper][friction]") {
  // a double pendulum with friction on both joints: the friction rows couple through M~
  const std::string urdf = R"(<robot name="dp">
  <link name="world"/>
  <link name="a"><inertial><origin xyz="0.5 0 0"/><mass value="1"/><inertia ixx="0.01" iyy="0.08" izz="0.08" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.5 0 0"/><mass value="0.7"/><inertia ixx="0.01" iyy="0.06" izz="0.06" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="world"/><child link="a"/><axis xyz="0 1 0"/><dynamics friction="1.5"/></joint>
  <joint name="j2" type="continuous"><parent link="a"/><child link="b"/><origin xyz="1 0 0"/><axis xyz="0 1 0"/><dynamics friction="0.8"/></joint>
</robot>)";
  const Model model = load_urdf_string(urdf);
  for (const char* solver : kSolvers) {
    INFO(solver);
    auto run = [&](int steps, WorldState* save_at_half) {
      World w;
      w.set_contact_solver(solver);
      ArticulatedSystem& dp = w.add_articulated_system(model);
      dp.set_state(VecX::Zero(2), (VecX(2) << 0.3, -1.0).finished());
      for (int k = 0; k < steps; ++k) {
        if (save_at_half && k == steps / 2) *save_at_half = w.save_state();
        REQUIRE(w.integrate() == StepStatus::Ok);
      }
      return VecX((VecX(4) << dp.q(), dp.u()).finished());
    };
    WorldState half;
    const VecX a = run(400, &half), b = run(400, nullptr);
    CHECK((a.array() == b.array()).all());
    // the saved state carries the friction rows' warm start (sign 0 in the limit memory)
    bool has_friction_memory = false;
    for (const LimitMemory& m : half.cache.limits) has_friction_memory = has_friction_memory || m.sign == 0;
    CHECK(has_friction_memory);
    // restore (also through the byte format) and finish the run: the same end state
    World w;
    w.set_contact_solver(solver);
    ArticulatedSystem& dp = w.add_articulated_system(model);
    w.restore_state(deserialize_state(serialize_state(half)));
    for (int k = 200; k < 400; ++k) REQUIRE(w.integrate() == StepStatus::Ok);
    const VecX c = (VecX(4) << dp.q(), dp.u()).finished();
    CHECK((a.array() == c.array()).all());
    CHECK(std::abs(dp.u()[0]) + std::abs(dp.u()[1]) > 0);  // still moving at the end
  }
}

TEST_CASE("joint friction combines with a stiff implicit PD and can be switched off", "[stepper][friction]") {
  // PD towards 0.5 rad about a vertical axis with 2 N m of friction: the PD torque
  // kp (0.5 - q) overcomes friction until |kp (0.5 - q)| <= 2, so the link stops short of the
  // target by at most f / kp (stick), never beyond it.
  const Scalar kp = 100, kd = 20, f = 2;
  World w;
  ArticulatedSystem& arm = w.add_articulated_system(friction_link("0 0 1", f, 0));
  arm.set_pd_gains(VecX::Constant(1, kp), VecX::Constant(1, kd));
  arm.set_pd_targets(VecX::Constant(1, 0.5), VecX::Zero(1));
  for (int k = 0; k < 3000; ++k) REQUIRE(w.integrate() == StepStatus::Ok);
  CHECK(arm.u()[0] == Approx(0).margin(1e-9));
  CHECK(arm.q()[0] <= 0.5 + 1e-9);
  CHECK(arm.q()[0] >= 0.5 - f / kp - 1e-6);
  CHECK(std::abs(arm.joint_friction_torque()[0]) <= f * (1 + 1e-9));
  // joint_friction = false: no rows, the PD reaches its target
  World off;
  DelassusSettings st = off.settings().contact;
  st.joint_friction = false;
  off.set_contact_settings(st);
  ArticulatedSystem& free_arm = off.add_articulated_system(friction_link("0 0 1", f, 0));
  free_arm.set_pd_gains(VecX::Constant(1, kp), VecX::Constant(1, kd));
  free_arm.set_pd_targets(VecX::Constant(1, 0.5), VecX::Zero(1));
  for (int k = 0; k < 3000; ++k) REQUIRE(off.integrate() == StepStatus::Ok);
  CHECK(off.stats().friction_rows == 0);
  CHECK(free_arm.q()[0] == Approx(0.5).margin(1e-6));
}

TEST_CASE("joint friction: steady-state stepping does not allocate", "[stepper][friction]") {
  if (!test::alloc_counter_available()) {
    SUCCEED("allocation counter unavailable under sanitizers");
    return;
  }
  for (const char* solver : kSolvers) {
    INFO(solver);
    World w;
    w.set_contact_solver(solver);
    ArticulatedSystem& arm = w.add_articulated_system(friction_link("0 1 0", 5, 0.1));
    for (int k = 0; k < 50; ++k) REQUIRE(w.integrate() == StepStatus::Ok);  // sizes seen, slipping
    test::alloc_counter_start();
    for (int k = 0; k < 200; ++k) w.integrate();
    const long n = test::alloc_counter_stop();
    CHECK(arm.u()[0] != 0);
    CHECK(n == 0);
  }
}

TEST_CASE("joint friction from MJCF frictionloss acts the same way", "[stepper][friction]") {
  // 0.2 kg at 1 m on a hinge about y: gravity torque 1.962 N m; frictionloss 3 holds it, 1 lets it
  // accelerate at (1.962 - 1) / I
  for (const Scalar loss : {3.0, 1.0}) {
    const std::string xml = R"(<mujoco><worldbody><body name="arm">
      <joint name="j" type="hinge" axis="0 1 0" frictionloss=")" + std::to_string(loss) + R"("/>
      <inertial pos="1 0 0" mass="0.2" diaginertia="1e-4 1e-4 1e-4"/>
    </body></worldbody></mujoco>)";
    const MjcfModel mj = load_mjcf_string(xml);
    World w;
    ArticulatedSystem& arm = w.add_articulated_system(mj.model);
    for (int k = 0; k < 100; ++k) REQUIRE(w.integrate() == StepStatus::Ok);
    INFO("frictionloss " << loss);
    const Scalar I = 0.2 + 1e-4;
    if (loss > 2) {
      CHECK(arm.q()[0] == 0);
      CHECK(arm.joint_friction_torque()[0] == Approx(-0.2 * 9.81).epsilon(1e-9));
    } else {
      CHECK(arm.u()[0] / 0.1 == Approx((0.2 * 9.81 - loss) / I).epsilon(1e-2));
    }
  }
}

// Per-environment joint dynamics (domain randomization): damping and friction set at run time
// step as the same values built into the Model, bit for bit, also when Worlds that differ only
// there share one StepWorkspace (its Stepper reads each World's Model at each step).
TEST_CASE("joint friction and damping set per World: the bits of a Model built with them", "[stepper][friction][batch]") {
  World set, built, plain;
  set.add_articulated_system(friction_link("0 1 0", 0, 0));
  built.add_articulated_system(friction_link("0 1 0", 20, 0.5));
  plain.add_articulated_system(friction_link("0 1 0", 0, 0));
  set.set_joint_friction(0, VecX::Constant(1, 20));
  set.set_joint_damping(0, VecX::Constant(1, 0.5));
  CHECK(set.system(0).model().friction[0] == 20);
  CHECK(set.system(0).model().equal_except_parameters(plain.system(0).model()));
  CHECK_FALSE(set.system(0).model() == plain.system(0).model());
  StepWorkspace ws;
  for (int k = 0; k < 300; ++k) {
    REQUIRE(plain.integrate(ws) == StepStatus::Ok);  // no friction row, same Stepper
    REQUIRE(set.integrate(ws) == StepStatus::Ok);
    REQUIRE(built.integrate() == StepStatus::Ok);
    REQUIRE(set.stats().friction_rows == 1);
    REQUIRE(plain.stats().friction_rows == 0);
  }
  CHECK(set.system(0).q() == built.system(0).q());
  CHECK(set.system(0).u() == built.system(0).u());
  CHECK(std::abs(set.system(0).q()[0]) < 1e-3);  // held
  CHECK(plain.system(0).q()[0] > 0.3);           // fell
  // 5 N m slips at (9.81 - 5) / I from rest, damping 0
  set.system(0).set_state(VecX::Zero(1), VecX::Zero(1));
  set.set_joint_damping(0, VecX::Zero(1));
  set.set_joint_friction(0, VecX::Constant(1, 5));
  for (int k = 0; k < 100; ++k) REQUIRE(set.integrate(ws) == StepStatus::Ok);
  CHECK(set.system(0).u()[0] / 0.1 == Approx((9.81 - 5) / kInertia).epsilon(1e-2));
  // bad input: named, nothing changed
  const Model before = set.system(0).model();
  CHECK_THROWS_WITH(set.set_joint_friction(0, VecX::Constant(1, -1)),
                    Catch::Contains("set_joint_friction") && Catch::Contains(">= 0"));
  CHECK_THROWS_WITH(set.set_joint_damping(0, VecX::Constant(1, std::nan(""))), Catch::Contains("finite"));
  CHECK_THROWS_WITH(set.set_joint_damping(0, VecX::Zero(2)), Catch::Contains("1 velocity dofs, got 2"));
  CHECK_THROWS_WITH(set.set_joint_friction(3, VecX::Zero(1)), Catch::Contains("system index 3"));
  CHECK(set.system(0).model() == before);
}

TEST_CASE("VecWorld: joint friction per environment holds, slips or lets fall", "[stepper][friction][batch]") {
  World proto;
  proto.add_articulated_system(friction_link("0 1 0", 0, 0));
  batch::VecWorld vec(proto, 3, 2);
  batch::RowMatX f(3, 1);
  f << 0, 20, 5;
  vec.set_joint_friction(0, f);
  vec.set_joint_damping(0, batch::RowMatX::Zero(3, 1));
  vec.integrate(100);
  batch::RowMatX u(3, 1);
  vec.get_u(0, u);
  CHECK(u(0, 0) / 0.1 == Approx(9.81 / kInertia).epsilon(2e-2));
  CHECK(u(1, 0) == 0);
  CHECK(u(2, 0) / 0.1 == Approx((9.81 - 5) / kInertia).epsilon(1e-2));
  f(2, 0) = -1;
  CHECK_THROWS_WITH(vec.set_joint_friction(0, f), Catch::Contains("finite and >= 0"));
  CHECK_THROWS_WITH(vec.set_joint_damping(0, batch::RowMatX::Zero(2, 1)), Catch::Contains("shape (3, 1)"));
  CHECK(vec.world(2).system(0).model().friction[0] == 5);
}
