// SDF loader (libsdformat): agreement with the URDF loader on the same robot written with SDF's
// frame semantics (link poses in the model frame, joint poses relative to the child link, axes
// expressed in the model frame), a world with a static ground, a static table and a box that
// comes to rest with the friction SDF gives it, the warnings for what Impulse does not simulate,
// and a named error for each bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "impulse/core/error.hpp"
#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/io/sdf.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

// The double pendulum of test_mjcf.cpp (base welded at z = 2; shoulder and elbow hinge about the
// world y axis; CoMs 0.6 and 0.4 below the joints; a sphere at the end), in SDF: the upper link's
// frame sits 0.5 m below its joint, the shoulder's axis is written in the model frame, the
// lower link is placed relative to the upper one.
const char* kSdf = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <model name="dp">
    <joint name="weld" type="fixed"><parent>world</parent><child>base</child></joint>
    <link name="base"><pose>0 0 2 0 0 0</pose></link>
    <link name="upper">
      <pose>0 0 1.5 0 0 1.5707963267948966</pose>
      <inertial><pose>0 0 -0.1 0 0 0</pose><mass>2</mass>
        <inertia><ixx>0.2</ixx><ixy>0</ixy><ixz>0</ixz><iyy>0.2</iyy><iyz>0</iyz><izz>0.01</izz></inertia></inertial>
    </link>
    <joint name="shoulder" type="revolute">
      <pose>0 0 0.5 0 0 0</pose>
      <parent>base</parent><child>upper</child>
      <axis><xyz expressed_in="__model__">0 1 0</xyz>
        <limit><lower>-1.5707963267948966</lower><upper>1.5707963267948966</upper><effort>100</effort>
          <velocity>10</velocity></limit>
        <dynamics><damping>0.1</damping></dynamics></axis>
    </joint>
    <link name="lower">
      <pose relative_to="upper">0 0 -0.6 0 0 0</pose>
      <inertial><pose>0 0 -0.4 0 0 0</pose><mass>1</mass>
        <inertia><ixx>0.1</ixx><ixy>0</ixy><ixz>0</ixz><iyy>0.1</iyy><iyz>0</iyz><izz>0.005</izz></inertia></inertial>
      <collision name="tip"><pose>0 0 -0.8 0 0 0</pose><geometry><sphere><radius>0.1</radius></sphere></geometry>
      </collision>
      <visual name="tip"><pose>0 0 -0.8 0 0 0</pose><geometry><sphere><radius>0.1</radius></sphere></geometry>
        <material><diffuse>1 0 0 1</diffuse></material></visual>
    </link>
    <joint name="elbow" type="continuous">
      <parent>upper</parent><child>lower</child>
      <axis><xyz>1 0 0</xyz><dynamics><damping>0.3</damping></dynamics></axis>
    </joint>
  </model>
</sdf>)";

const char* kSdfUrdf = R"(<robot name="dp">
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

// A world: a static ground plane (friction 0.5), a static table (default friction 1) and a box
// (2 kg, 20 cm) dropped from 0.5 m with a yaw of 0.3 rad; a plugin, a light and a sensor that
// Impulse ignores.
const char* kWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="demo">
    <physics name="fast" type="ode"><max_step_size>0.002</max_step_size></physics>
    <gravity>0 0 -9.8</gravity>
    <plugin filename="gz-sim-physics-system" name="gz::sim::systems::Physics"/>
    <light name="sun" type="directional"/>
    <model name="ground">
      <static>true</static>
      <link name="plane">
        <collision name="c"><geometry><plane><normal>0 0 1</normal><size>10 10</size></plane></geometry>
          <surface><friction><ode><mu>0.5</mu></ode></friction></surface></collision>
      </link>
    </model>
    <model name="table">
      <static>true</static>
      <pose>2 0 0 0 0 0</pose>
      <link name="top"><collision name="c"><pose>0 0 0.4 0 0 0</pose>
        <geometry><box><size>1 1 0.05</size></box></geometry></collision></link>
    </model>
    <model name="box">
      <pose>0 0 0.5 0 0 0.3</pose>
      <link name="b">
        <inertial><mass>2</mass>
          <inertia><ixx>0.01333</ixx><iyy>0.01333</iyy><izz>0.01333</izz></inertia></inertial>
        <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>
        <sensor name="imu" type="imu"/>
      </link>
    </model>
  </world>
</sdf>)";

SdfWorld sdf_quiet(const std::string& xml, std::vector<std::string>* warnings = nullptr) {
  SdfOptions o;
  o.on_warning = [=](const std::string& w) {
    if (warnings) warnings->push_back(w);
  };
  return load_sdf_string(xml, o, "w.sdf");
}

void sdf_require_error(const std::string& xml, const std::vector<std::string>& fragments, bool strict = false) {
  SdfOptions o;
  o.strict = strict;
  o.on_warning = [](const std::string&) {};
  try {
    load_sdf_string(xml, o, "bad.sdf");
    FAIL("no ModelError");
  } catch (const ModelError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.rfind("bad.sdf: ", 0) == 0);
    for (const std::string& f : fragments) CHECK_THAT(what, Catch::Contains(f));
  }
}

// A model whose links and joints are given as text (inertial: 1 kg, unit-ish inertia).
std::string sdf_model(const std::string& body) {
  return "<sdf version=\"1.9\"><model name=\"m\">" + body + "</model></sdf>";
}
std::string sdf_link(const std::string& name, const std::string& extra = "") {
  return "<link name=\"" + name +
         "\"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>" + extra +
         "</link>";
}
std::string sdf_joint(const std::string& name, const std::string& type, const std::string& parent,
                  const std::string& child) {
  return "<joint name=\"" + name + "\" type=\"" + type + "\"><parent>" + parent + "</parent><child>" + child +
         "</child><axis><xyz>0 0 1</xyz></axis></joint>";
}

}  // namespace

TEST_CASE("SDF: a double pendulum in SDF frame semantics agrees with the same robot from URDF", "[io][sdf]") {
  if (!sdf_supported()) {
    WARN("skipped: this build reads no SDF (libsdformat-dev not found)");
    return;
  }
  std::vector<std::string> warnings;
  const SdfWorld w = sdf_quiet(kSdf, &warnings);
  CHECK(warnings.empty());
  REQUIRE(w.models.size() == 1);
  const Model& m = w.models[0].model;
  const Model ur = load_urdf_string(kSdfUrdf);
  REQUIRE(m.nv == 2);
  CHECK_FALSE(m.floating_base);
  CHECK(m.joint_id("shoulder") >= 0);
  CHECK(m.lower_position[m.idx_q[m.joint_id("shoulder")]] == Approx(-M_PI / 2));
  CHECK(std::isinf(m.upper_position[m.idx_q[m.joint_id("elbow")]]));  // continuous
  CHECK(m.damping[0] == 0.1);
  CHECK(m.damping[1] == 0.3);
  REQUIRE(m.collision.size() == 1);
  REQUIRE(m.visuals.size() == 1);
  CHECK(m.visuals[0].rgba.isApprox(Vec4(1, 0, 0, 1)));

  Data dm(m), du(ur);
  std::mt19937 rng(2);
  std::uniform_real_distribution<Scalar> u(-1, 1);
  for (int k = 0; k < 20; ++k) {
    const VecX q = VecX::NullaryExpr(2, [&](Index) { return u(rng); });
    const VecX v = VecX::NullaryExpr(2, [&](Index) { return u(rng); });
    const VecX tau = VecX::NullaryExpr(2, [&](Index) { return u(rng); });
    CHECK_ALL_CLOSE(crba(m, dm, q), crba(ur, du, q), 1e-12, 1e-12);
    CHECK_ALL_CLOSE(aba(m, dm, q, v, tau), aba(ur, du, q, v, tau), 1e-10, 1e-10);
    forward_kinematics(m, dm, q);
    forward_kinematics(ur, du, q);
    const Vec3 tip_m = dm.oMi[m.body_id("lower")].act_point(m.collision[0].X_BS.p);
    const Vec3 tip_u = du.oMi[ur.body_id("lower")].act_point(Vec3(0, 0, -0.8));
    CHECK((tip_m - tip_u).norm() < 1e-12);
  }
}

TEST_CASE("SDF: a world's box comes to rest on its static ground with the friction the file gives", "[io][sdf]") {
  if (!sdf_supported()) {
    WARN("skipped: this build reads no SDF (libsdformat-dev not found)");
    return;
  }
  std::vector<std::string> warnings;
  const SdfWorld sw = sdf_quiet(kWorld, &warnings);
  CHECK(sw.name == "demo");
  CHECK(sw.time_step == 0.002);
  CHECK(sw.gravity.isApprox(Vec3(0, 0, -9.8)));
  REQUIRE(sw.planes.size() == 1);
  CHECK(sw.planes[0].normal.isApprox(Vec3::UnitZ()));
  CHECK(sw.planes[0].offset == Approx(0).margin(1e-15));
  REQUIRE(sw.models.size() == 2);  // the table and the box (the ground holds only a plane)
  CHECK(sw.models[0].is_static);
  CHECK(sw.models[0].model.nv == 0);
  CHECK(sw.models[1].model.floating_base);
  CHECK(sw.models[1].q0[2] == Approx(0.5));
  // one warning per kind of ignored element
  REQUIRE(warnings.size() == 3);
  auto warned = [&](const std::string& tag) {
    for (const auto& w : warnings) {
      if (w.find("<" + tag + ">") != std::string::npos) return true;
    }
    return false;
  };
  CHECK(warned("plugin"));
  CHECK(warned("light"));
  CHECK(warned("sensor"));

  World world;
  build_world(world_description_from_sdf(sw, "w.sdf"), world);
  CHECK(world.time_step() == 0.002);
  ArticulatedSystem& box = world.system("box");
  for (int k = 0; k < 750; ++k) world.integrate();  // 1.5 s
  CHECK(box.q()[2] == Approx(0.1).margin(1e-3));    // resting on the plane
  CHECK(box.u().norm() < 1e-6);
  const Quat rot(box.q()[3], box.q()[4], box.q()[5], box.q()[6]);
  CHECK(rot.angularDistance(Quat(Eigen::AngleAxis<Scalar>(0.3, Vec3::UnitZ()))) < 1e-6);  // fell flat, yaw kept
  REQUIRE(!world.contacts().empty());
  for (const Contact& c : world.contacts()) CHECK(c.mu == 0.5);  // min(1, 0.5), as Gazebo
}

TEST_CASE("SDF: static models and planes make no contacts with each other", "[io][sdf]") {
  if (!sdf_supported()) {
    WARN("skipped: this build reads no SDF (libsdformat-dev not found)");
    return;
  }
  // a static wall standing 1 cm into the static ground, and a box dropped on the ground
  const SdfWorld sw = sdf_quiet(R"(<sdf version="1.9"><world name="w">
    <model name="ground"><static>true</static><link name="l"><collision name="c">
      <geometry><plane><normal>0 0 1</normal></plane></geometry></collision></link></model>
    <model name="wall"><static>true</static><pose>1 0 0.49 0 0 0</pose><link name="l"><collision name="c">
      <geometry><box><size>0.2 2 1</size></box></geometry></collision></link></model>
    <model name="box"><pose>0 0 0.3 0 0 0</pose><link name="b">
      <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
      <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision></link></model>
    </world></sdf>)");
  World world;
  build_world(world_description_from_sdf(sw, "w.sdf"), world);
  for (int k = 0; k < 500; ++k) REQUIRE(world.integrate() == StepStatus::Ok);
  const Index box = world.system("box").collision_object();
  REQUIRE(world.contacts().size() == 4);  // the box's four bottom corners, nothing of the wall
  for (const Contact& c : world.contacts()) CHECK((c.object_a == box || c.object_b == box));
  CHECK(world.system("box").q()[2] == Approx(0.1).margin(1e-3));
}

TEST_CASE("SDF: files on disk through load_world; model:// meshes; warnings in strict mode are errors",
          "[io][sdf]") {
  if (!sdf_supported()) {
    WARN("skipped: this build reads no SDF (libsdformat-dev not found)");
    return;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "impulse_test_sdf";
  std::filesystem::create_directories(dir / "models" / "cube" / "meshes");
  {
    // a unit cube as OBJ, used by a model through model://cube
    std::ofstream obj(dir / "models" / "cube" / "meshes" / "cube.obj");
    obj << "v -0.5 -0.5 -0.5\nv 0.5 -0.5 -0.5\nv 0.5 0.5 -0.5\nv -0.5 0.5 -0.5\n"
           "v -0.5 -0.5 0.5\nv 0.5 -0.5 0.5\nv 0.5 0.5 0.5\nv -0.5 0.5 0.5\n"
           "f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";
    std::ofstream sdf(dir / "cube.sdf");
    sdf << R"(<sdf version="1.9"><world name="w">
      <model name="ground"><static>true</static><link name="l"><collision name="c">
        <geometry><plane><normal>0 0 1</normal></plane></geometry></collision></link></model>
      <model name="cube"><pose>0 0 0.3 0 0 0</pose><link name="l">
        <inertial><mass>1</mass><inertia><ixx>0.0017</ixx><iyy>0.0017</iyy><izz>0.0017</izz></inertia></inertial>
        <collision name="c"><geometry><mesh><uri>model://cube/meshes/cube.obj</uri><scale>0.1 0.1 0.1</scale></mesh>
        </geometry></collision></link></model></world></sdf>)";
  }
  SdfOptions o;
  o.resource_paths = {(dir / "models").string()};
  const SdfWorld sw = load_sdf((dir / "cube.sdf").string(), o);
  REQUIRE(sw.models.size() == 1);
  REQUIRE(sw.models[0].model.collision.size() == 1);
  CHECK(sw.models[0].model.collision[0].mesh_path == (dir / "models" / "cube" / "meshes" / "cube.obj").string());
  CHECK(sw.models[0].model.collision[0].size.isApprox(Vec3::Constant(0.1)));

  // without the resource path: the error lists where it looked
  try {
    load_sdf((dir / "cube.sdf").string());
    FAIL("no ModelError");
  } catch (const ModelError& e) {
    INFO(e.what());
    CHECK_THAT(std::string(e.what()), Catch::Contains("model://cube/meshes/cube.obj") && Catch::Contains("looked in"));
  }
  // SDF_PATH works like SdfOptions::resource_paths; load_world reads .sdf files
  setenv("SDF_PATH", (dir / "models").string().c_str(), 1);
  std::unique_ptr<World> world = load_world((dir / "cube.sdf").string());
  unsetenv("SDF_PATH");
  ArticulatedSystem& cube = world->system("cube");
  for (int k = 0; k < 1000; ++k) world->integrate();
  CHECK(cube.q()[2] == Approx(0.05).margin(1e-3));  // the 10 cm mesh cube rests on the plane

  // strict mode: an ignored element is an error
  sdf_require_error(kWorld, {"element(s) ignored", "strict mode"}, true);
  std::filesystem::remove_all(dir);
}

TEST_CASE("SDF: bad input is a named error", "[io][sdf]") {
  if (!sdf_supported()) {
    WARN("skipped: this build reads no SDF (libsdformat-dev not found)");
    return;
  }
  sdf_require_error("<sdf version=\"1.9\"><model name=\"m\"><link name=\"a\"></model></sdf>", {});  // not XML
  sdf_require_error(sdf_model(sdf_link("a") + sdf_link("b") + sdf_joint("u", "universal", "a", "b")), {"joint 'u'", "universal"});
  sdf_require_error(sdf_model(sdf_link("a") + sdf_link("b") + sdf_link("c") + sdf_joint("j1", "revolute", "a", "b") +
                      sdf_joint("j2", "revolute", "c", "b")),
                {"link 'b'", "two joints", "closed kinematic loop"});
  sdf_require_error(sdf_model(sdf_link("a") + sdf_link("b")), {"2 root links", "'a'", "'b'"});
  sdf_require_error(sdf_model(sdf_link("a", "<collision name=\"p\"><geometry><plane><normal>0 0 1</normal></plane></geometry>"
                                "</collision>")),
                {"collision 'p'", "plane", "static"});
  sdf_require_error(sdf_model(sdf_link("a", "<collision name=\"c\"><geometry><mesh><uri>model://nowhere/part.stl</uri></mesh>"
                                "</geometry></collision>")),
                {"model://nowhere/part.stl", "looked in"});
  sdf_require_error("<sdf version=\"1.9\"><world name=\"w\"><physics name=\"p\" type=\"ode\"><max_step_size>0</max_step_size>"
                "</physics></world></sdf>",
                {"max_step_size"});
  try {
    load_sdf("/nonexistent/world.sdf");
    FAIL("no ModelError");
  } catch (const ModelError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("/nonexistent/world.sdf"));
  }
}

TEST_CASE("SDF: massless moving links are welded, nested models reported, impossible inertias rejected",
          "[io][sdf]") {
  if (!sdf_supported()) {
    WARN("skipped: this build reads no SDF (libsdformat-dev not found)");
    return;
  }
  std::vector<std::string> warnings;
  // link "sensor" has mass 0 on a revolute joint
  const SdfWorld w = sdf_quiet(sdf_model(sdf_link("a") + "<link name=\"sensor\"><inertial><mass>0</mass></inertial></link>" +
                                 sdf_joint("s", "revolute", "a", "sensor") + sdf_link("b") + sdf_joint("j", "revolute", "a", "b") +
                                 "<model name=\"inner\">" + sdf_link("x") + "</model>"),
                           &warnings);
  REQUIRE(w.models.size() == 1);
  const Model& m = w.models[0].model;
  CHECK(m.nv == 6 + 1);  // floating base, j; s welded
  auto warned = [&](const std::string& what) {
    for (const auto& s : warnings) {
      if (s.find(what) != std::string::npos) return true;
    }
    return false;
  };
  CHECK(warned("joint 's'"));
  CHECK(warned("nested model"));
  // a link whose moments violate the triangle inequality: libsdformat's error, naming the link
  sdf_require_error(sdf_model(sdf_link("a") + "<link name=\"bad\"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy>"
                                  "<izz>0.5</izz></inertia></inertial></link>" + sdf_joint("j", "revolute", "a", "bad")),
                {"bad", "inertia"});
}

TEST_CASE("SDF: models/worlds/shapes.sdf runs: the shapes come to rest, the pendulum keeps its energy",
          "[io][sdf]") {
  if (!sdf_supported()) {
    WARN("skipped: this build reads no SDF (libsdformat-dev not found)");
    return;
  }
  std::unique_ptr<World> world = load_world(impulse_test::source_path("models/worlds/shapes.sdf"));
  CHECK(world->time_step() == 0.001);
  ArticulatedSystem& pendulum = world->system("pendulum");
  REQUIRE(pendulum.model().nv == 1);
  const Scalar e0 = pendulum.kinetic_energy() + pendulum.potential_energy();
  Scalar drift = 0;
  for (int k = 0; k < 3000; ++k) {
    REQUIRE(world->integrate() != StepStatus::NonFinite);
    drift = std::max(drift, std::abs(pendulum.kinetic_energy() + pendulum.potential_energy() - e0));
  }
  // rest heights: box and sphere 0.1, the cylinder and capsule standing on an end 0.1 and 0.2
  const std::pair<const char*, Scalar> rest[] = {{"box", 0.1}, {"sphere", 0.1}, {"cylinder", 0.1}, {"capsule", 0.2}};
  for (const auto& [name, z] : rest) {
    INFO(name);
    CHECK(world->system(name).q()[2] == Approx(z).margin(2e-3));
    CHECK(world->system(name).u().norm() < 1e-3);
  }
  // the frictionless hinge: energy kept to the integrator's O(dt) oscillation (m g L/2 = 1.23 J)
  CHECK(drift < 0.01 * 0.5 * 9.81 * 0.25);
  CHECK(pendulum.u().norm() > 0.1);  // still swinging
}
