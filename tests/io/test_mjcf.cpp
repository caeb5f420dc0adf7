// MJCF subset loader: agreement with the URDF loader on the same robot (mass matrix, dynamics),
// defaults and classes, angle units, free joints, inertia from geoms against numerical
// integration, several joints in one body, actuators, and warnings / errors for the rest.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "impulse/core/error.hpp"
#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/io/mjcf.hpp"
#include "impulse/io/urdf.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

// A double pendulum hanging from a welded base, as MJCF (degrees, anchors offset from the body
// origins) and as URDF.
const char* kMjcf = R"(<mujoco model="dp">
  <default><joint damping="0.1"/><default class="light"><joint damping="0.3"/></default></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="base" pos="0 0 2">
      <body name="upper" pos="0 0 -0.1" euler="0 0 90">
        <joint name="shoulder" type="hinge" axis="1 0 0" pos="0 0 0.1" range="-90 90"/>
        <inertial pos="0 0 -0.5" mass="2" diaginertia="0.2 0.2 0.01"/>
        <body name="lower" pos="0 0 -1" childclass="light">
          <joint name="elbow" axis="1 0 0"/>
          <inertial pos="0 0 -0.4" quat="1 0 0 0" mass="1" diaginertia="0.1 0.1 0.005"/>
          <geom type="sphere" size="0.1" pos="0 0 -0.8"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="shoulder" gear="50" ctrlrange="-1 1"/><position joint="elbow" kp="20"/></actuator>
</mujoco>)";

const char* kUrdf = R"(<robot name="dp">
  <link name="world"/>
  <link name="base"/>
  <joint name="weld" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 2"/></joint>
  <link name="upper"><inertial><origin xyz="0 0 -0.6"/><mass value="2"/>
    <inertia ixx="0.2" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.01"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0" rpy="0 0 1.5707963267948966"/><axis xyz="1 0 0"/>
    <limit lower="-1.5707963267948966" upper="1.5707963267948966" effort="100" velocity="10"/>
    <dynamics damping="0.1"/></joint>
  <link name="lower"><inertial><origin xyz="0 0 -0.4"/><mass value="1"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.005"/></inertial></link>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/><origin xyz="0 0 -1.1"/>
    <axis xyz="1 0 0"/><dynamics damping="0.3"/></joint>
</robot>)";

MjcfModel quiet(const std::string& xml) {
  MjcfOptions o;
  o.on_warning = [](const std::string&) {};
  return load_mjcf_string(xml, o, "m.xml");
}

void require_error(const std::string& xml, const std::vector<std::string>& fragments, bool strict = false) {
  MjcfOptions o;
  o.strict = strict;
  o.on_warning = [](const std::string&) {};
  try {
    load_mjcf_string(xml, o, "bad.xml");
    FAIL("no ModelError");
  } catch (const ModelError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.rfind("bad.xml: ", 0) == 0);
    for (const std::string& f : fragments) CHECK_THAT(what, Catch::Contains(f));
  }
}

}  // namespace

TEST_CASE("MJCF: a double pendulum agrees with the same robot loaded from URDF", "[io][mjcf]") {
  std::vector<std::string> warnings;
  MjcfOptions o;
  o.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  const MjcfModel mj = load_mjcf_string(kMjcf, o, "dp.xml");
  const Model ur = load_urdf_string(kUrdf);
  const Model& m = mj.model;
  REQUIRE(m.nv == 2);
  CHECK_FALSE(m.floating_base);
  CHECK(m.total_mass() == Approx(3.0));
  CHECK(m.lower_position[m.idx_q[m.joint_id("shoulder")]] == Approx(-M_PI / 2));
  CHECK(m.damping[0] == 0.1);
  CHECK(m.damping[1] == 0.3);  // childclass "light"
  CHECK(m.collision.size() == 1);
  REQUIRE(mj.world_geoms.size() == 1);
  CHECK(mj.world_geom_is_plane[0]);
  REQUIRE(mj.actuators.size() == 2);
  CHECK(mj.actuators[0].type == MjcfActuator::Type::Motor);
  CHECK(mj.actuators[0].gear == 50);
  CHECK(mj.actuators[0].ctrl_upper == 1);
  CHECK(mj.actuators[1].joint == m.joint_id("elbow"));
  CHECK(mj.actuators[1].kp == 20);
  CHECK(warnings.empty());

  Data dm(m), du(ur);
  std::mt19937 rng(2);
  std::uniform_real_distribution<Scalar> u(-1, 1);
  for (int k = 0; k < 20; ++k) {
    const VecX q = VecX::NullaryExpr(2, [&](Index) { return u(rng); });
    const VecX v = VecX::NullaryExpr(2, [&](Index) { return u(rng); });
    const VecX tau = VecX::NullaryExpr(2, [&](Index) { return u(rng); });
    CHECK_ALL_CLOSE(crba(m, dm, q), crba(ur, du, q), 1e-12, 1e-12);
    CHECK_ALL_CLOSE(aba(m, dm, q, v, tau), aba(ur, du, q, v, tau), 1e-10, 1e-10);
    // the sphere at the lower link's end is where URDF's lower link frame puts it
    forward_kinematics(m, dm, q);
    forward_kinematics(ur, du, q);
    const Vec3 tip_m = dm.oMi[m.body_id("lower")].act_point(m.collision[0].X_BS.p);
    const Vec3 tip_u = du.oMi[ur.body_id("lower")].act_point(Vec3(0, 0, -0.8));
    CHECK((tip_m - tip_u).norm() < 1e-12);
  }
}

TEST_CASE("MJCF: free joints, radians, several joints in one body", "[io][mjcf]") {
  const MjcfModel a = quiet(R"(<mujoco><compiler angle="radian"/><worldbody>
      <body name="box" pos="1 2 3" quat="0 0 0 1"><freejoint/><geom type="box" size="0.1 0.2 0.3"/>
        <body name="gimbal" pos="0 0 -0.5">
          <joint name="rx" axis="1 0 0"/><joint name="ry" axis="0 1 0" range="-1 1"/>
          <geom type="sphere" size="0.05"/>
        </body>
      </body></worldbody></mujoco>)");
  const Model& m = a.model;
  REQUIRE(m.floating_base);
  CHECK(m.nv == 8);
  CHECK(a.q0.head<7>() == (VecX(7) << 1, 2, 3, 0, 0, 0, 1).finished());
  CHECK(m.upper_position[m.idx_q[m.joint_id("ry")]] == 1.0);
  // box: density 1000, 0.2 x 0.4 x 0.6 m
  CHECK(m.inertia[0].m == Approx(1000 * 0.2 * 0.4 * 0.6));
  CHECK(m.inertia[0].Ic(0, 0) == Approx(48 * (0.16 + 0.36) / 12));
  // two hinges compose in file order: R = Rx(a) Ry(b)
  Data d(m);
  VecX q = a.q0;
  q[7] = 0.3;
  q[8] = -0.4;
  forward_kinematics(m, d, q);
  const Mat3 R_box = d.oMi[0].R;
  const Mat3 R = R_box.transpose() * d.oMi[m.body_id("gimbal")].R;
  const Mat3 expected = (Eigen::AngleAxisd(0.3, Vec3::UnitX()) * Eigen::AngleAxisd(-0.4, Vec3::UnitY())).toRotationMatrix();
  CHECK((R - expected).norm() < 1e-12);
}

TEST_CASE("MJCF: inertia of a capsule from density matches numerical integration", "[io][mjcf]") {
  const Scalar r = 0.1, hl = 0.25;
  const MjcfModel a = quiet(R"(<mujoco><worldbody><body name="c"><freejoint/>
      <geom type="capsule" size="0.1 0.25" density="500"/></body></worldbody></mujoco>)");
  const Inertia& I = a.model.inertia[0];
  // midpoint rule on a grid over the bounding box
  const int n = 60;
  Scalar mass = 0, ixx = 0, izz = 0;
  const Scalar hx = 2 * r / n, hz = 2 * (hl + r) / n, dv = hx * hx * hz;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) {
        const Vec3 p(-r + (i + 0.5) * hx, -r + (j + 0.5) * hx, -(hl + r) + (k + 0.5) * hz);
        const Scalar zc = std::clamp(p.z(), -hl, hl);
        if ((p - Vec3(0, 0, zc)).norm() > r) continue;
        mass += 500 * dv;
        ixx += 500 * dv * (p.y() * p.y() + p.z() * p.z());
        izz += 500 * dv * (p.x() * p.x() + p.y() * p.y());
      }
    }
  }
  CHECK(I.m == Approx(mass).epsilon(5e-3));
  CHECK(I.Ic(0, 0) == Approx(ixx).epsilon(1e-2));
  CHECK(I.Ic(2, 2) == Approx(izz).epsilon(1e-2));
  CHECK(I.m == Approx(500 * M_PI * r * r * (2 * hl + 4.0 / 3.0 * r)));
}

TEST_CASE("MJCF: unsupported parts are warnings (errors in strict mode); bad input is a named error", "[io][mjcf]") {
  std::vector<std::string> warnings;
  MjcfOptions o;
  o.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  const std::string xml = R"(<mujoco><worldbody><body name="b"><freejoint/>
      <geom type="sphere" size="0.1" contype="2"/><site name="s"/></body></worldbody>
      <sensor><accelerometer site="s"/></sensor></mujoco>)";
  load_mjcf_string(xml, o, "w.xml");
  REQUIRE(warnings.size() == 3);
  CHECK_THAT(warnings[0], Catch::Contains("unsupported attribute 'contype' of <geom> (line 2)"));
  CHECK_THAT(warnings[1], Catch::Contains("unsupported element <site> in body 'b'"));
  CHECK_THAT(warnings[2], Catch::Contains("unsupported element <sensor>") && Catch::Contains("line 3"));
  require_error(xml, {"unsupported attribute 'contype'", "strict"}, true);

  require_error("<robot/>", {"expected <mujoco>"});
  require_error("<mujoco><worldbody><body><geom type=\"sphere\" size=\"nan\"/></body></worldbody></mujoco>",
                {"<geom> (line 1)", "size=\"nan\"", "not a finite"});
  require_error("<mujoco><worldbody><body><joint type=\"hinge\" pos=\"1 2\"/><geom size=\"0.1\"/></body></worldbody></mujoco>",
                {"<joint> (line 1)", "2 numbers, expected 3"});
  require_error("<mujoco><worldbody><body><joint type=\"screw\"/></body></worldbody></mujoco>",
                {"<joint> (line 1)", "hinge, slide, ball or free"});
  require_error("<mujoco><worldbody><body><geom type=\"mesh\" mesh=\"m\"/></body></worldbody></mujoco>",
                {"unknown mesh 'm'"});
  require_error("<mujoco><worldbody><body><freejoint/><geom size=\"0.1\"/></body></worldbody>"
                "<actuator><motor joint=\"nope\"/></actuator></mujoco>",
                {"<motor> (line 1)", "unknown joint 'nope'"});
  require_error("<mujoco><worldbody><body><geom size=\"0.1\" class=\"x\"/></body></worldbody></mujoco>",
                {"no <default class=\"x\">"});
  require_error("<mujoco><worldbody><body><freejoint/><body><freejoint/><geom size=\"1\"/></body><geom size=\"1\"/>"
                "</body></worldbody></mujoco>",
                {"free joint is supported only on a top-level body"});
}

TEST_CASE("MJCF: <equality><joint> becomes a mimic coupling; other equalities are reported", "[io][mjcf]") {
  const std::string body = std::string(kMjcf).substr(0, std::string(kMjcf).find("  <actuator>"));
  std::vector<std::string> warnings;
  MjcfOptions o;
  o.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  // elbow = 0.1 + 2 shoulder (MuJoCo's joint1 = c0 + c1 joint2)
  const MjcfModel m = load_mjcf_string(body + R"(<equality>
      <joint joint1="elbow" joint2="shoulder" polycoef="0.1 2 0 0 0" solref="0.02 1"/>
      <joint joint1="elbow" joint2="shoulder" active="false"/>
      <connect body1="upper" body2="lower" anchor="0 0 0"/>
      <joint joint1="shoulder" joint2="elbow" polycoef="0 1 0.5"/>
    </equality></mujoco>)", o, "e.xml");
  REQUIRE(m.model.mimic.size() == 1);
  CHECK(m.model.mimic[0].joint == m.model.find_joint("elbow"));
  CHECK(m.model.mimic[0].master == m.model.find_joint("shoulder"));
  CHECK(m.model.mimic[0].multiplier == 2);
  CHECK(m.model.mimic[0].offset == 0.1);
  REQUIRE(warnings.size() == 2);
  CHECK_THAT(warnings[0], Catch::Contains("unsupported equality <connect>") && Catch::Contains("line 20"));
  CHECK_THAT(warnings[1], Catch::Contains("beyond linear") && Catch::Contains("line 21"));
  // joint1 = joint2 by default (polycoef "0 1 0 0 0")
  CHECK(quiet(body + R"(<equality><joint joint1="elbow" joint2="shoulder"/></equality></mujoco>)")
            .model.mimic[0].multiplier == 1);
  require_error(body + R"(<equality><joint joint1="elbow" joint2="knee"/></equality></mujoco>)",
                {"<equality><joint> (line", "unknown joint 'knee'"});
  require_error(body + R"(<equality><joint joint1="elbow" joint2="shoulder"/>
      <joint joint1="shoulder" joint2="elbow"/></equality></mujoco>)",
                {"cycle"});
}
