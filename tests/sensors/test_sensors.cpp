// Sensors: IMU at rest reads gravity and zero rate, in free fall zero specific force; contact
// sensor carries the weight; force-torque sensor agrees with statics and with the joint torque;
// height scan agrees with the terrain's own heights; noise is seeded and has the stated moments;
// update() allocates nothing.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>

#include "impulse/io/urdf.hpp"
#include "impulse/sensors/sensors.hpp"
#include "support/alloc_counter.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

// A horizontal arm (mass 2 kg, COM 0.5 m out along x) on a y-axis hinge, welded to the world.
const char* kArm = R"(<robot name="arm">
  <link name="world"/>
  <link name="base"/>
  <joint name="weld" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 1"/></joint>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1000" velocity="10"/></joint>
</robot>)";

ArticulatedSystem& resting_box(World& world) {
  world.add_ground();
  ArticulatedSystem& box = world.add_box("box", Vec3(0.4, 0.3, 0.2), 3.0);
  VecX q = box.q();
  q[2] = 0.1;
  box.set_q(q);
  return box;
}

}  // namespace

TEST_CASE("IMU: a body at rest reads gravity within 1e-6 m/s^2 and zero rate", "[sensors]") {
  World world;
  ArticulatedSystem& box = resting_box(world);
  Imu imu(world, box, "box");
  for (int k = 0; k < 1000; ++k) {
    world.integrate();
    imu.update();
  }
  INFO("acc " << imu.linear_acceleration().transpose() << " gyro " << imu.angular_velocity().transpose());
  CHECK((imu.linear_acceleration() - Vec3(0, 0, 9.81)).norm() < 1e-6);
  CHECK(imu.angular_velocity().norm() < 1e-9);
}

TEST_CASE("IMU: free fall reads no specific force; the gyro reads the body rate in the body frame", "[sensors]") {
  World world;  // no ground
  ArticulatedSystem& ball = world.add_sphere("ball", 0.1, 1.0);
  VecX u = VecX::Zero(6);
  u.tail<3>() = Vec3(0, 0, 2.0);  // spinning about the world z axis
  ball.set_u(u);
  Imu imu(world, ball, "ball");
  for (int k = 0; k < 100; ++k) {
    world.integrate();
    imu.update();
    CHECK(imu.linear_acceleration().norm() < 1e-9);
    const Vec3 w_F = imu.orientation().transpose() * Vec3(0, 0, 2.0);
    CHECK((imu.angular_velocity() - w_F).norm() < 1e-9);
  }
}

TEST_CASE("IMU: noise is seeded, with the stated bias and standard deviation", "[sensors]") {
  World world;
  ArticulatedSystem& box = resting_box(world);
  Imu a(world, box, "box", {0.1, 0.5}, {0.01, 0.0}, 42), b(world, box, "box", {0.1, 0.5}, {0.01, 0.0}, 42);
  Imu c(world, box, "box", {0.1, 0.5}, {0.01, 0.0}, 43);
  for (int k = 0; k < 300; ++k) world.integrate();  // settle
  a.reset();
  b.reset();
  c.reset();
  const int n = 4000;
  Scalar sum = 0, sum2 = 0;
  bool differ = false;
  for (int k = 0; k < n; ++k) {
    world.integrate();
    a.update();
    b.update();
    c.update();
    REQUIRE(a.linear_acceleration() == b.linear_acceleration());
    differ = differ || c.linear_acceleration() != a.linear_acceleration();
    const Scalar e = a.linear_acceleration().z() - 9.81;
    sum += e;
    sum2 += e * e;
  }
  CHECK(differ);
  const Scalar mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
  CHECK(mean == Approx(0.5).margin(0.01));  // bias; 4 sigma of the mean is 0.0063
  CHECK(sd == Approx(0.1).epsilon(0.06));
}

TEST_CASE("Contact sensor: a resting box carries its weight along the ground normal", "[sensors]") {
  World world;
  ArticulatedSystem& box = resting_box(world);
  ContactSensor touch(world, box, "box");
  VecX q = box.q();
  q[2] = 0.5;  // in the air first
  box.set_q(q);
  world.integrate();
  touch.update();
  CHECK_FALSE(touch.in_contact());
  CHECK(touch.force().norm() == 0);
  for (int k = 0; k < 1500; ++k) world.integrate();
  touch.update();
  CHECK(touch.in_contact());
  CHECK(touch.count() >= 3);
  CHECK((touch.force() - Vec3(0, 0, 3.0 * 9.81)).norm() < 1e-6);
  CHECK((touch.normal() - Vec3::UnitZ()).norm() < 1e-9);
}

TEST_CASE("Contact sensor: a box within the contact margin but not touching is not in contact", "[sensors]") {
  World world;
  ArticulatedSystem& box = resting_box(world);
  ContactSensor touch(world, box, "box");
  VecX q = box.q();
  q[2] = 0.1 + 0.003;  // 3 mm above the ground, at rest: it falls 5 um in the first 1 ms step
  box.set_q(q);
  world.integrate();
  touch.update();
  CHECK(world.contacts().size() == 4);  // the four bottom corners, within the 5 mm margin
  for (const BodyContactImpulse& c : box.contact_impulses()) CHECK_FALSE(c.touching());
  CHECK_FALSE(touch.in_contact());
  CHECK(touch.count() == 0);
  CHECK(touch.force().norm() == 0);
  CHECK(touch.normal().norm() == 0);
}

TEST_CASE("Force-torque and joint sensors: a held horizontal arm matches statics", "[sensors]") {
  World world;
  ArticulatedSystem& arm = world.add_articulated_system(load_urdf_string(kArm));
  arm.set_pd_gains(VecX::Constant(1, 1e5), VecX::Constant(1, 1e3));
  arm.set_pd_targets(VecX::Zero(1), VecX::Zero(1));
  ForceTorqueSensor ft(world, arm, "hinge");
  JointSensor joints(arm);
  for (int k = 0; k < 3000; ++k) {
    world.integrate();
    ft.update();
  }
  joints.update();
  REQUIRE(joints.names().size() == 1);
  CHECK(joints.names()[0] == "hinge");
  const Scalar q = arm.q()[0];
  CHECK(joints.position()[0] == q);
  CHECK(std::abs(arm.u()[0]) < 1e-9);
  // in the arm's frame (rotated by q about y): weight supported, gravity moment countered
  const Mat3 R = Eigen::AngleAxisd(q, Vec3::UnitY()).toRotationMatrix();
  const Vec3 support = R.transpose() * Vec3(0, 0, 2 * 9.81);
  const Vec3 moment = Vec3(0.5, 0, 0).cross(support);
  INFO("force " << ft.force().transpose() << " torque " << ft.torque().transpose() << " q " << q);
  CHECK((ft.force() - support).norm() < 1e-6);
  CHECK((ft.torque() - moment).norm() < 1e-6);
  // the joint's motor torque is the y component of the transmitted moment (S^T f)
  CHECK(joints.torque()[0] == Approx(ft.torque().y()).margin(1e-6));
  // gravity pulls the arm down with +9.81 N m about y (r x F): the motor holds it with -9.81
  CHECK(joints.torque()[0] == Approx(-0.5 * 2 * 9.81).epsilon(1e-3));
}

TEST_CASE("Height scan: heights of the terrain under a yaw-aligned grid; NaN off the terrain", "[sensors]") {
  World world;
  auto terrain = std::make_shared<Heightfield>(Heightfield::random_rough(4, 4, 0.05, 0.05, 3));
  world.add_heightfield("terrain", terrain);
  ArticulatedSystem& ball = world.add_sphere("ball", 0.1, 1.0);
  VecX q = ball.q();
  q.head<3>() = Vec3(0.3, -0.2, 0.6);
  const Quat yaw(Eigen::AngleAxisd(0.7, Vec3::UnitZ()) * Eigen::AngleAxisd(0.2, Vec3::UnitX()));
  q.segment<4>(3) = Vec4(yaw.w(), yaw.x(), yaw.y(), yaw.z());
  ball.set_q(q);
  HeightScan scan(world, ball, "ball", HeightScan::grid(1.0, 0.6, 0.1));
  REQUIRE(scan.size() == 11 * 7);
  scan.update();
  for (Index k = 0; k < scan.size(); ++k) {
    const Vec3& p = scan.points()[static_cast<std::size_t>(k)];
    Scalar z;
    REQUIRE(terrain->height(p.x(), p.y(), z));
    CHECK(scan.heights()[k] == Approx(z).margin(1e-12));
  }
  // the pattern is rotated by the yaw only: the first point is at (-0.5, -0.3) in the heading frame
  const Vec3 p0 = scan.points()[0];
  const Vec3 expected = Vec3(0.3, -0.2, 0) + Eigen::AngleAxisd(0.7, Vec3::UnitZ()) * Vec3(-0.5, -0.3, 0);
  CHECK((p0.head<2>() - expected.head<2>()).norm() < 1e-12);

  // off the terrain: NaN
  q.head<3>() = Vec3(10, 10, 0.6);
  ball.set_q(q);
  scan.update();
  CHECK(std::isnan(scan.heights()[0]));
}

TEST_CASE("Sensors: update() allocates nothing", "[sensors]") {
  if (!test::alloc_counter_available()) {
    SUCCEED("allocation counter not available in this build");
    return;
  }
  World world;
  world.add_heightfield("terrain", std::make_shared<Heightfield>(Heightfield::random_rough(4, 4, 0.05, 0.05, 3)));
  ArticulatedSystem& box = world.add_box("box", Vec3(0.4, 0.3, 0.2), 3.0);
  VecX q = box.q();
  q[2] = 0.2;
  box.set_q(q);
  Imu imu(world, box, "box", {0.1, 0}, {0.1, 0}, 1);
  JointSensor joints(box, {0.1, 0}, {0.1, 0}, {0.1, 0}, 2);
  ContactSensor touch(world, box, "box");
  ForceTorqueSensor ft(world, box, "root", {0.1, 0}, 3);
  HeightScan scan(world, box, "box", HeightScan::grid(1.0, 1.0, 0.05), {0.01, 0}, 4);
  for (int k = 0; k < 50; ++k) world.integrate();
  test::alloc_counter_start();
  imu.update();
  joints.update();
  touch.update();
  ft.update();
  scan.update();
  CHECK(test::alloc_counter_stop() == 0);
}
