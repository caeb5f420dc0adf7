// World files (docs/world-format.md): the example worlds load into the World they describe
// (objects, poses, velocities, masses, materials, solver and options, PD), they behave as their
// comments say (a box comes to rest on the ground, the Mylapilli & Jain sphere ends up rolling at
// 5/7 v0), and every kind of bad input gives an error "path:line: ..." naming the culprit,
// without touching the World.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

#include "impulse/collision/contact.hpp"
#include "impulse/solvers/pgs.hpp"
#include "impulse/world/world_file.hpp"
#include "support/matchers.hpp"

using namespace impulse;
using impulse_test::source_path;

namespace {

// Writes `xml` to a temporary world file (unique per process and name) and returns its path.
std::string temp_world(const std::string& name, const std::string& xml) {
  const std::string path = "/tmp/impulse_test_world_" + std::to_string(::getpid()) + "_" + name + ".xml";
  std::ofstream(path) << xml;
  return path;
}

// Loads `xml` (from a temporary file) into a fresh World and returns the error message.
std::string load_error(const std::string& name, const std::string& xml) {
  const std::string path = temp_world(name, xml);
  World world;
  std::string msg;
  try {
    load_world(path, world);
  } catch (const WorldFileError& e) {
    msg = e.what();
  }
  // a failed parse leaves the World as it was
  CHECK(world.num_systems() == 0);
  CHECK(world.collision().num_objects() == 0);
  std::remove(path.c_str());
  INFO(msg);
  CHECK(msg.rfind(path + ":", 0) == 0);
  return msg;
}

bool wf_contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }



}  // namespace

TEST_CASE("world file: spheres.xml builds the described world", "[world]") {
  std::unique_ptr<World> world = load_world(source_path("models/worlds/spheres.xml"));
  CHECK(world->time_step() == 1e-3);
  CHECK(world->gravity() == Vec3(0, 0, -9.81));
  CHECK(std::string(world->contact_solver().name()) == "pgs");
  CHECK(dynamic_cast<const PgsSolver&>(world->contact_solver()).settings().alpha == 0.6);
  CHECK(world->collision().margin() == 0.005);
  REQUIRE(world->num_systems() == 5);

  ArticulatedSystem& ball = world->system("ball");
  CHECK(ball.model().total_mass() == Approx(1.0));
  CHECK_ALL_CLOSE(ball.q(), (VecX(7) << 0, 0, 1, 1, 0, 0, 0).finished(), 1e-15, 0);
  CHECK_ALL_CLOSE(ball.u(), (VecX(6) << 2, 0, 0, 0, 0, 0).finished(), 1e-15, 0);
  REQUIRE(ball.model().collision.size() == 1);
  CHECK(ball.model().collision[0].material == "steel");
  CHECK(ball.model().collision[0].size.x() == 1.0);
  CHECK(world->materials().pair("steel", "floor").mu == 0.2);
  CHECK(world->materials().pair("rubber", "floor").restitution == 0.5);
  CHECK(world->materials().pair("wood", "floor").mu == 0.8);  // default pair

  // quat and rpy both give the base orientation (w x y z)
  const VecX& cube = world->system("cube").q();
  CHECK_ALL_CLOSE(cube.segment<4>(3), Vec4(0.9238795, 0, 0, 0.3826834).normalized(), 1e-12, 0);
  const Quat pill(Eigen::AngleAxis<Scalar>(1.5707963, Vec3::UnitX()));
  CHECK_ALL_CLOSE(world->system("pill").q().segment<4>(3), Vec4(pill.w(), pill.x(), pill.y(), pill.z()), 1e-12, 0);
  CHECK_ALL_CLOSE(world->system("pill").u().tail<3>(), Vec3(0, 0, 1), 1e-15, 0);
  CHECK(world->system("can").model().collision[0].type == ShapeType::Cylinder);
  CHECK(world->system("pill").model().collision[0].type == ShapeType::Capsule);

  // static objects: ground, wall, step
  std::vector<std::string> statics;
  for (Index o = 0; o < world->collision().num_objects(); ++o) {
    if (world->collision().is_static(o)) statics.push_back(world->collision().object_name(o));
  }
  CHECK(statics.size() == 3);
  CHECK(std::find(statics.begin(), statics.end(), "step") != statics.end());
  CHECK(std::find(statics.begin(), statics.end(), "wall") != statics.end());
}

TEST_CASE("world file: the spheres.xml ball slides, then rolls at 5/7 v0", "[world]") {
  std::unique_ptr<World> world = load_world(source_path("models/worlds/spheres.xml"));
  for (int k = 0; k < 500; ++k) world->integrate();
  const VecX& u = world->system("ball").u();
  // Mylapilli & Jain 6.1: rolling from t = 0.2912 s with vx = 10/7, wy = vx / r
  CHECK(u[0] == Approx(10.0 / 7.0).margin(2e-3));
  CHECK(u[4] == Approx(10.0 / 7.0).margin(2e-3));
}

TEST_CASE("world file: box_on_ground.xml comes to rest on the ground", "[world]") {
  std::unique_ptr<World> world = load_world(source_path("models/worlds/box_on_ground.xml"));
  REQUIRE(world->num_systems() == 1);
  ArticulatedSystem& box = world->system("crate");
  CHECK(box.model().total_mass() == Approx(1.0));
  CHECK(box.model().collision[0].size == Vec3(0.4, 0.3, 0.2));
  CHECK(box.model().collision[0].material == "wood");
  CHECK(world->materials().pair("wood", "floor").mu == 0.6);
  const Quat yaw(Eigen::AngleAxis<Scalar>(0.3, Vec3::UnitZ()));
  CHECK_ALL_CLOSE(box.q().segment<4>(3), Vec4(yaw.w(), yaw.x(), yaw.y(), yaw.z()), 1e-12, 0);
  for (int k = 0; k < 1000; ++k) world->integrate();
  CHECK(box.q()[2] == Approx(0.1).margin(1e-3));
  CHECK(box.u().norm() < 1e-3);
  CHECK(world->contacts().size() >= 4);
}

TEST_CASE("world file: anymal_stand.xml gives the robot, its state and PD", "[world]") {
  std::unique_ptr<World> world = load_world(source_path("models/worlds/anymal_stand.xml"));
  REQUIRE(world->num_systems() == 1);
  ArticulatedSystem& a = world->system("anymal");
  REQUIRE(a.nq() == 19);
  CHECK(a.q()[2] == Approx(0.549));
  const Model& m = a.model();
  CHECK(a.q()[m.idx_q[m.joint_id("LF_HFE")]] == 0.4);
  CHECK(a.q()[m.idx_q[m.joint_id("RH_KFE")]] == 0.8);
  CHECK(a.q_target()[m.idx_q[m.joint_id("LH_HFE")]] == -0.4);
  CHECK(a.kp().head<6>().isZero());
  CHECK(a.kp().tail<12>().isConstant(300));
  CHECK(a.kd().tail<12>().isConstant(8));
  CHECK(a.u().isZero());
}

TEST_CASE("world file: robots with fixed base, keyed joint values and per-joint PD", "[world]") {
  const std::string path = temp_world("fixed", R"(<world>
  <robot name="arm" urdf=")" + source_path("models/double_pendulum.urdf") + R"(" fixed_base="true" pos="0 0 2">
    <q>0.1 0.2</q>
    <u>0.3 0.4</u>
    <pd kp="10" kd="1"/>
  </robot>
</world>)");
  std::unique_ptr<World> world = load_world(path);
  std::remove(path.c_str());
  ArticulatedSystem& arm = world->system("arm");
  REQUIRE(arm.nq() == 2);
  CHECK_ALL_CLOSE(arm.q(), Eigen::Vector2d(0.1, 0.2), 0, 0);
  CHECK_ALL_CLOSE(arm.u(), Eigen::Vector2d(0.3, 0.4), 0, 0);
  CHECK_ALL_CLOSE(arm.q_target(), arm.q(), 0, 0);  // PD holds the initial pose by default
  CHECK(arm.body_pose(0).p.z() == Approx(2.0));
}

TEST_CASE("world file error: unknown element names the line", "[world]") {
  const std::string msg = load_error("elem", "<world>\n  <ground/>\n  <trampoline size=\"1\"/>\n</world>\n");
  CHECK(wf_contains(msg, ":3: <trampoline>: unknown element"));
}

TEST_CASE("world file error: unknown attribute names the line and the attribute", "[world]") {
  const std::string msg =
      load_error("attr", "<world>\n  <sphere name=\"s\" radius=\"1\" mass=\"1\"\n    colour=\"red\"/>\n</world>\n");
  CHECK(wf_contains(msg, ":2: <sphere> 's': unknown attribute 'colour'"));
  CHECK(wf_contains(load_error("attr2", "<world dt=\"0.001\" gravty=\"0 0 -9.81\"/>"), ":1: <world>: unknown attribute 'gravty'"));
}

TEST_CASE("world file error: bad numbers, NaN, wrong counts and ranges", "[world]") {
  CHECK(wf_contains(load_error("num", "<world>\n<box name=\"b\" size=\"1 1 x\" mass=\"1\"/>\n</world>"),
                 ":2: <box> 'b': attribute 'size': 'x' is not a decimal number"));
  CHECK(wf_contains(load_error("nan", "<world dt=\"nan\"/>"), ":1: <world>: attribute 'dt': 'nan' is not finite"));
  CHECK(wf_contains(load_error("inf", "<world>\n\n<sphere name=\"s\" radius=\"1\" mass=\"inf\"/></world>"),
                 ":3: <sphere> 's': attribute 'mass': 'inf' is not finite"));
  CHECK(wf_contains(load_error("count", "<world gravity=\"0 -9.81\"/>"), "attribute 'gravity': expected 3 numbers, got 2"));
  CHECK(wf_contains(load_error("neg", "<world>\n<sphere name=\"s\" radius=\"-1\" mass=\"1\"/></world>"),
                 ":2: <sphere> 's': attribute 'radius': must be > 0"));
  CHECK(wf_contains(load_error("quat", "<world>\n<sphere name=\"s\" radius=\"1\" mass=\"1\" quat=\"1 1 0 0\"/></world>"),
                 "attribute 'quat': has norm"));
  CHECK(wf_contains(load_error("mu", "<world>\n<material a=\"x\" b=\"y\" friction=\"-0.1\"/></world>"),
                 ":2: <material>: attribute 'friction': must be >= 0"));
  CHECK(wf_contains(load_error("missing", "<world>\n<sphere name=\"s\" radius=\"1\"/></world>"),
                 ":2: <sphere> 's': missing attribute 'mass'"));
  CHECK(wf_contains(load_error("dup", "<world>\n<sphere name=\"s\" radius=\"1\" mass=\"1\"/>\n"
                                   "<box name=\"s\" size=\"1 1 1\" mass=\"1\"/></world>"),
                 ":3: <box> 's': attribute 'name': 's' is already used"));
  CHECK(wf_contains(load_error("xml", "<world>\n<ground>\n</world>"), "malformed XML"));
}

TEST_CASE("world file error: missing URDF file names the line and the path", "[world]") {
  const std::string msg =
      load_error("urdf", "<world>\n  <ground/>\n  <robot name=\"r\" urdf=\"no/such/robot.urdf\"/>\n</world>\n");
  CHECK(wf_contains(msg, ":3: <robot> 'r': attribute 'urdf': cannot open URDF file"));
  CHECK(wf_contains(msg, "no/such/robot.urdf"));
}

TEST_CASE("world file error: unknown joint name and wrong joint vector size", "[world]") {
  const std::string robot = "<robot name=\"r\" urdf=\"" + source_path("models/double_pendulum.urdf") + "\">\n";
  CHECK(wf_contains(load_error("joint", "<world>\n" + robot + "<q elbow_typo=\"1\"/>\n</robot></world>"),
                 ":3: <q>: unknown attribute 'elbow_typo': not a 1-dof joint"));
  CHECK(wf_contains(load_error("qsize", "<world>\n" + robot + "<q>1 2 3</q>\n</robot></world>"),
                 ":3: <q>: expected 2 joint positions in joint order, got 3"));
}

TEST_CASE("world file error: unknown solver name lists the valid names", "[world]") {
  const std::string msg = load_error("solver", "<world>\n\n  <solver name=\"simplex\"/>\n</world>\n");
  CHECK(wf_contains(msg, ":3: <solver>: attribute 'name': unknown contact solver 'simplex'"));
  CHECK(wf_contains(msg, "bisection, pgs, lm, noslip"));
  CHECK(wf_contains(load_error("solveropt", "<world>\n<solver name=\"pgs\" gamma=\"0.9\"/></world>"),
                 ":2: <solver>: unknown attribute 'gamma' (valid: name, max_iterations, tolerance, alpha, "
                 "stall_window, anderson_memory, anderson_start)"));
  CHECK(wf_contains(load_error("anderson", "<world>\n<solver name=\"bisection\" anderson_memory=\"9\"/></world>"),
                 ":2: <solver>: solver 'bisection': anderson_memory must be in [0, 8], got 9"));
}

TEST_CASE("world file: the solver element sets Anderson acceleration", "[world]") {
  for (const std::string name : {"bisection", "pgs"}) {
    const std::string path =
        temp_world("anderson", "<world><solver name=\"" + name + "\" anderson_memory=\"5\" anderson_start=\"3\"/></world>");
    World world;
    load_world(path, world);
    std::remove(path.c_str());
    const SolverSettings s = solver_settings_of(world.contact_solver());
    REQUIRE(s.name == name);
    CHECK((name == "pgs" ? s.pgs.anderson_memory : s.bisection.anderson_memory) == 5);
    CHECK((name == "pgs" ? s.pgs.anderson_start : s.bisection.anderson_start) == 3);
  }
}

TEST_CASE("world file: the contact element selects the position correction", "[world]") {
  const std::string path = temp_world("split", "<world><contact position_correction=\"split\"/></world>");
  World world;
  load_world(path, world);
  std::remove(path.c_str());
  CHECK(world.settings().contact.position_correction == PositionCorrection::Split);
  CHECK(wf_contains(load_error("pc", "<world>\n<contact position_correction=\"nope\"/></world>"),
                 ":2: <contact>: attribute 'position_correction': unknown position correction 'nope' (valid: velocity, split)"));
}

TEST_CASE("world file: the contact element selects the position update", "[world]") {
  const std::string path = temp_world("midpoint", "<world><contact position_update=\"midpoint\"/></world>");
  World world;
  CHECK(world.settings().contact.position_update == PositionUpdate::Bodies);  // the default
  load_world(path, world);
  std::remove(path.c_str());
  CHECK(world.settings().contact.position_update == PositionUpdate::Midpoint);
  for (const auto& [name, value] : {std::pair{"euler", PositionUpdate::Euler}, std::pair{"bodies", PositionUpdate::Bodies}}) {
    const std::string p = temp_world(name, std::string("<world><contact position_update=\"") + name + "\"/></world>");
    World w;
    load_world(p, w);
    std::remove(p.c_str());
    CHECK(w.settings().contact.position_update == value);
  }
  CHECK(wf_contains(load_error("pu", "<world>\n<contact position_update=\"verlet\"/></world>"),
                 ":2: <contact>: attribute 'position_update': unknown position update 'verlet' (valid: euler, midpoint, bodies)"));
}

TEST_CASE("world file: the contact element selects the restitution law", "[world]") {
  for (const char* law : {"newton", "poisson"}) {
    const std::string path = temp_world(law, std::string("<world><contact restitution=\"") + law + "\"/></world>");
    World world;
    load_world(path, world);
    std::remove(path.c_str());
    CHECK(world.settings().contact.restitution_law ==
          (std::string(law) == "newton" ? RestitutionLaw::Newton : RestitutionLaw::Poisson));
  }
  CHECK(wf_contains(load_error("law", "<world>\n<contact restitution=\"stronge\"/></world>"),
                 ":2: <contact>: attribute 'restitution': unknown restitution law 'stronge' (valid: poisson, newton)"));
}

TEST_CASE("world file error: a missing world file is named", "[world]") {
  World world;
  CHECK_THROWS_WITH(load_world("/no/such/world.xml", world), Catch::Contains("world file '/no/such/world.xml': file not found"));
}

TEST_CASE("world file: anymal_stand.xml stands on its four feet", "[world]") {
  std::unique_ptr<World> world = load_world(source_path("models/worlds/anymal_stand.xml"));
  ArticulatedSystem& a = world->system("anymal");
  for (int k = 0; k < 1000; ++k) world->integrate();
  CHECK(world->contacts().size() == 4);
  CHECK(a.q()[2] == Approx(0.541).margin(5e-3));         // base height, m
  CHECK(std::abs(a.q()[3]) == Approx(1.0).margin(1e-4));  // level
  CHECK(a.u().norm() < 1e-2);
}
