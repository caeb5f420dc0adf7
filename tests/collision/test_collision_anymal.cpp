// ANYmal from models/anymal/anymal.urdf through load_urdf + forward_kinematics + the collision
// stage; and URDF <mesh> collision elements.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "impulse/collision/collision_world.hpp"
#include "impulse/core/error.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/io/urdf.hpp"

using namespace impulse;

namespace {

const Vec3 kAnymalUp = Vec3::UnitZ();
constexpr Scalar kFootRadius = 0.03;  // models/anymal/README.md

std::string anymal_path() { return std::string(IMPULSE_SOURCE_DIR) + "/models/anymal/anymal.urdf"; }

// q with the base at (0, 0, z), orientation quat (w, x, y, z) and all joints at `joints`.
VecX anymal_q(const Model& m, Scalar z, const Quat& orientation, const VecX& joints) {
  VecX q = m.neutral_configuration();
  q.head<3>() = Vec3(0, 0, z);
  q[3] = orientation.w();
  q[4] = orientation.x();
  q[5] = orientation.y();
  q[6] = orientation.z();
  q.tail(m.nq - 7) = joints;
  return q;
}

}  // namespace

TEST_CASE("anymal standing: exactly 4 foot contacts with the depths of the foot spheres", "[collision]") {
  const Model model = load_urdf(anymal_path());
  REQUIRE(model.collision.size() == 5);
  Data data(model);
  // a standing posture: hips and knees bent symmetrically (front and hind mirrored)
  VecX joints(12);
  joints << 0, 0.4, -0.8, 0, 0.4, -0.8, 0, -0.4, 0.8, 0, -0.4, 0.8;
  // base at z = 0 first: the lowest foot-sphere point fixes the base height for 2 mm of penetration
  forward_kinematics(model, data, anymal_q(model, 0, Quat::Identity(), joints));
  Scalar lowest = 1e9;
  for (const CollisionShape& s : model.collision) {
    if (s.type != ShapeType::Sphere) continue;
    lowest = std::min(lowest, data.oMi[s.body].act_point(s.X_BS.p).z() - kFootRadius);
  }
  const Scalar z_base = -lowest - 0.002;
  forward_kinematics(model, data, anymal_q(model, z_base, Quat::Identity(), joints));

  CollisionWorld world;
  const Index ground = world.add_ground();
  const Index robot = world.add_object(model);
  world.update(robot, data.oMi);
  ContactSet contacts(16);
  world.detect(contacts);
  REQUIRE(contacts.size() == 4);
  for (const Contact& c : contacts) {
    const CollisionShape& s = model.collision[c.shape_a];
    INFO(s.name);
    CHECK(s.type == ShapeType::Sphere);
    CHECK(c.object_a == robot);
    CHECK(c.object_b == ground);
    CHECK(c.body_a == s.body);
    CHECK(model.body_names[c.body_a].find("SHANK") != std::string::npos);
    // expected: depth = r - z_centre, position = centre - (r - depth / 2) e_z
    const Vec3 centre = data.oMi[s.body].act_point(s.X_BS.p);
    const Scalar depth = kFootRadius - centre.z();
    CHECK(depth > -world.margin());
    CHECK(c.depth == Approx(depth).margin(1e-12));
    CHECK((c.position - (centre - (kFootRadius - 0.5 * depth) * kAnymalUp)).norm() < 1e-12);
    CHECK((c.normal - kAnymalUp).norm() < 1e-12);
  }
  // symmetric posture: all four feet equally deep (2 mm)
  for (const Contact& c : contacts) CHECK(c.depth == Approx(0.002).margin(1e-9));
}

TEST_CASE("anymal lying on its back: 4 torso-box contacts, no feet", "[collision]") {
  const Model model = load_urdf(anymal_path());
  Data data(model);
  const VecX joints = VecX::Zero(12);
  // upside down (180 degrees about x); box half height 0.09, 2 mm into the ground
  const Quat flipped(Eigen::AngleAxisd(M_PI, Vec3::UnitX()));
  forward_kinematics(model, data, anymal_q(model, 0.088, flipped, joints));
  CollisionWorld world;
  world.add_ground();
  const Index robot = world.add_object(model);
  world.update(robot, data.oMi);
  ContactSet contacts(16);
  world.detect(contacts);
  REQUIRE(contacts.size() == 4);
  for (const Contact& c : contacts) {
    CHECK(model.collision[c.shape_a].type == ShapeType::Box);
    CHECK(c.body_a == 0);
    CHECK(c.depth == Approx(0.002).margin(1e-12));
    CHECK(std::abs(c.position.x()) == Approx(0.29).margin(1e-12));
    CHECK(std::abs(c.position.y()) == Approx(0.07).margin(1e-12));
    CHECK(c.position.z() == Approx(-0.001).margin(1e-12));
  }
}

TEST_CASE("anymal hang filter: torso passes through the ground, feet still collide", "[collision]") {
  const Model model = load_urdf(anymal_path());
  Data data(model);
  // base 5 cm below the ground: the torso box crosses the plane, the (straight) legs are far below
  forward_kinematics(model, data, anymal_q(model, -0.05, Quat::Identity(), VecX::Zero(12)));
  CollisionWorld world;
  CollisionFilter ground;
  ground.group = 1u << 1;
  world.add_ground(0, "default", ground);
  const Index robot = world.add_object(model);
  CollisionFilter torso;
  torso.mask = ~ground.group;
  world.update(robot, data.oMi);
  ContactSet contacts(16);
  world.detect(contacts);
  CHECK(contacts.size() == 4 + 4);  // unfiltered: 4 feet and the 4 lower torso corners
  world.set_body_filter(robot, model.body_id("base"), torso);
  world.detect(contacts);
  // feet are far below the plane (all penetrating), the torso is ignored
  REQUIRE(contacts.size() == 4);
  for (const Contact& c : contacts) CHECK(model.collision[c.shape_a].type == ShapeType::Sphere);
}

TEST_CASE("URDF mesh collision: a unit-cube OBJ on a link rests like a box; missing file is named", "[collision]") {
  const std::string obj = "/tmp/impulse_col_urdf_cube.obj";
  {
    std::ofstream f(obj);
    for (int c = 0; c < 8; ++c)
      f << "v " << ((c & 1) ? 0.5 : -0.5) << ' ' << ((c & 2) ? 0.5 : -0.5) << ' ' << ((c & 4) ? 0.5 : -0.5) << '\n';
    f << "f 1 3 4 2\nf 5 6 8 7\nf 1 2 6 5\nf 3 7 8 4\nf 1 5 7 3\nf 2 4 8 6\n";  // quads, fan-triangulated
  }
  auto urdf = [](const std::string& mesh) {
    return "<robot name='cube'><link name='body'><inertial><mass value='1'/>"
           "<inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial>"
           "<collision><origin xyz='0 0 0.1'/><geometry><mesh filename='" +
           mesh + "'/></geometry></collision></link></robot>";
  };
  const Model model = load_urdf_string(urdf(obj));
  REQUIRE(model.collision.size() == 1);
  REQUIRE(model.collision[0].type == ShapeType::Mesh);
  CollisionWorld world;
  world.add_ground();
  const Index o = world.add_object(model);
  world.update(o, {SE3(Mat3::Identity(), Vec3(0, 0, 0.397))});  // cube bottom at z = -0.003
  ContactSet contacts;
  world.detect(contacts);
  REQUIRE(contacts.size() == 4);
  for (const Contact& c : contacts) {
    CHECK(c.depth == Approx(0.003).margin(1e-12));
    CHECK(std::abs(c.position.x()) == Approx(0.5));
    CHECK(std::abs(c.position.y()) == Approx(0.5));
  }
  const Model missing = load_urdf_string(urdf("/tmp/impulse_no_such_mesh.stl"));
  CHECK_THROWS_WITH(world.add_object(missing),
                    Catch::Contains("/tmp/impulse_no_such_mesh.stl") && Catch::Contains("link 'body'"));
}
