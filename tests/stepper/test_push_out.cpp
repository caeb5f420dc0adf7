// Bounded position-error correction (DelassusSettings::max_push_velocity): whatever the depth or
// the time step, an overlap resolves no faster than the bound, on contacts and on joint limits,
// with the velocity-level target (push-out velocity kept in u) and the split correction (q only).
#include <catch2/catch.hpp>

#include <cmath>

#include "impulse/io/urdf.hpp"
#include "impulse/world/world.hpp"

using namespace impulse;

namespace {

// A 1 kg link on a revolute joint about the vertical axis (gravity exerts no torque), limits
// [-1, 1] rad.
const char* kTurntable = R"(<robot name="turntable">
  <link name="world"/>
  <link name="arm">
    <inertial><origin xyz="0.5 0 0"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="yaw" type="revolute">
    <parent link="world"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="100" velocity="100"/>
  </joint>
</robot>)";

}  // namespace

TEST_CASE("push-out: a sphere 0.5 m deep in the ground leaves no faster than the bound", "[stepper]") {
  for (const PositionCorrection pc : {PositionCorrection::Velocity, PositionCorrection::Split}) {
    for (const Scalar dt : {1e-3, 1e-6}) {
      INFO((pc == PositionCorrection::Velocity ? "velocity-level" : "split") << ", dt " << dt);
      World w;
      w.set_time_step(dt);
      w.add_ground();
      DelassusSettings cs;
      cs.position_correction = pc;
      w.set_contact_settings(cs);
      const Scalar bound = cs.max_push_velocity;
      REQUIRE(bound == 1.0);  // the documented default
      ArticulatedSystem& ball = w.add_sphere("ball", 0.1, 1.0);
      VecX q = ball.q();
      q[2] = -0.4;  // centre 0.4 m below the surface: 0.5 m deep
      ball.set_state(q, VecX::Zero(6));
      Scalar fastest = 0;
      const int steps = dt > 1e-4 ? 700 : 2000;
      for (int k = 0; k < steps; ++k) {
        const Scalar z0 = ball.q()[2];
        REQUIRE(w.integrate() == StepStatus::Ok);
        REQUIRE(ball.q().allFinite());
        REQUIRE(ball.u().allFinite());
        // the speed at which q moves (u, or u + u_p under the split correction)
        fastest = std::max(fastest, (ball.q()[2] - z0) / dt);
        CHECK(ball.u()[2] <= bound * (1 + 1e-9));
      }
      CHECK(fastest <= bound * (1 + 1e-9));
      CHECK(fastest >= 0.5 * bound);  // it does separate, at the bound while deep
      if (dt > 1e-4) CHECK(ball.q()[2] > -0.4 + 0.5 * bound * steps * dt);
    }
  }
}

TEST_CASE("push-out: a joint 30 rad beyond its limit returns at the bounded speed", "[stepper]") {
  const Model m = load_urdf_string(kTurntable);
  for (const PositionCorrection pc : {PositionCorrection::Velocity, PositionCorrection::Split}) {
    INFO((pc == PositionCorrection::Velocity ? "velocity-level" : "split"));
    World w;
    DelassusSettings cs;
    cs.position_correction = pc;
    w.set_contact_settings(cs);
    ArticulatedSystem& arm = w.add_articulated_system(m);
    VecX q = arm.q();
    q[0] = 31.0;  // 30 rad beyond the upper limit
    arm.set_state(q, VecX::Zero(1));
    const Scalar dt = w.time_step();
    for (int k = 0; k < 2000; ++k) {
      const Scalar q0 = arm.q()[0];
      REQUIRE(w.integrate() == StepStatus::Ok);
      REQUIRE(std::isfinite(arm.q()[0]));
      REQUIRE(std::isfinite(arm.u()[0]));
      const Scalar rate = (arm.q()[0] - q0) / dt;
      CHECK(rate <= 1e-12);                               // always back towards the range
      CHECK(rate >= -cs.max_push_velocity * (1 + 1e-9));  // never faster than the bound
    }
    // 2 s at 1 rad/s
    CHECK(arm.q()[0] == Approx(29.0).margin(1e-3));
  }
}

TEST_CASE("push-out: the bound is a checked setting", "[stepper]") {
  World w;
  DelassusSettings cs;
  cs.max_push_velocity = 0;
  CHECK_THROWS(w.set_contact_settings(cs));
  cs.max_push_velocity = std::nan("");
  CHECK_THROWS(w.set_contact_settings(cs));
  cs.max_push_velocity = 0.25;
  w.set_contact_settings(cs);
  CHECK(w.settings().contact.max_push_velocity == 0.25);
}
