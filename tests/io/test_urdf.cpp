// URDF loader: layout and conventions on the small models in models/, exact fixed-joint merging
// (checked against the parallel-axis theorem by hand), depth-first file order, mesh path
// resolution, and one test per error case (each message names file and culprit).
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <unistd.h>

#include "impulse/core/error.hpp"
#include "impulse/io/urdf.hpp"
#include "support/matchers.hpp"
#include "support/temp_dir.hpp"

using namespace impulse;
using impulse_test::TempDir;
using impulse_test::source_path;

namespace {

namespace fs = std::filesystem;

// <link> with an inertial: mass m, COM at c, diagonal inertia d about the COM.
std::string link(const std::string& name, double m = 1.0, const std::string& c = "0 0 0",
                 const std::string& d = "0.01 0.01 0.01", const std::string& extra = "") {
  std::istringstream in(d);
  std::string ixx, iyy, izz;
  in >> ixx >> iyy >> izz;
  std::ostringstream mass;
  mass << m;
  return "<link name=\"" + name + "\"><inertial><origin xyz=\"" + c + "\"/><mass value=\"" + mass.str() +
         "\"/><inertia ixx=\"" + ixx + "\" ixy=\"0\" ixz=\"0\" iyy=\"" + iyy + "\" iyz=\"0\" izz=\"" + izz +
         "\"/></inertial>" + extra + "</link>";
}

// <link> without <inertial>: a massless frame.
std::string frame(const std::string& name) { return "<link name=\"" + name + "\"/>"; }

std::string joint(const std::string& name, const std::string& type, const std::string& parent,
                  const std::string& child, const std::string& xyz = "0 0 0", const std::string& rpy = "0 0 0",
                  const std::string& extra = "") {
  std::string s = "<joint name=\"" + name + "\" type=\"" + type + "\"><parent link=\"" + parent +
                  "\"/><child link=\"" + child + "\"/><origin xyz=\"" + xyz + "\" rpy=\"" + rpy + "\"/>";
  if (type == "revolute" || type == "prismatic") {
    s += "<axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" effort=\"10\" velocity=\"5\"/>";
  }
  return s + extra + "</joint>";
}

std::string robot(const std::string& body) { return "<?xml version=\"1.0\"?>\n<robot name=\"test\">\n" + body + "\n</robot>\n"; }

// Loads `xml` as "bad.urdf" and requires a ModelError whose message contains every fragment.
void require_model_error(const std::string& xml, const std::vector<std::string>& fragments,
                         const UrdfOptions& options = {}) {
  try {
    load_urdf_string(xml, options, "bad.urdf");
    FAIL("no ModelError thrown");
  } catch (const ModelError& e) {
    const std::string what = e.what();
    INFO("message: " << what);
    CHECK(what.rfind("bad.urdf: ", 0) == 0);
    for (const std::string& f : fragments) CHECK_THAT(what, Catch::Contains(f));
  }
}

const Scalar kInf = std::numeric_limits<Scalar>::infinity();

}  // namespace

TEST_CASE("URDF: pendulum has a fixed base, one continuous joint and a merged tip frame", "[io]") {
  const Model m = load_urdf(source_path("models/pendulum.urdf"));
  CHECK(m.name == "pendulum");
  CHECK(m.nq == 1);
  CHECK(m.nv == 1);
  CHECK(m.nb == 1);
  CHECK_FALSE(m.floating_base);
  CHECK(m.joint_names[0] == "hinge");
  CHECK(m.joint_urdf_types[0] == "continuous");
  CHECK(m.joint_type[0] == JointType::Revolute);
  CHECK(m.body_names[0] == "rod");
  CHECK(m.lower_position[0] == -kInf);
  CHECK(m.upper_position[0] == kInf);
  CHECK(m.effort_limit[0] == kInf);
  CHECK(m.total_mass() == Approx(1.0));
  // moment of inertia about the hinge axis: I_yy + m l^2
  CHECK(m.inertia[0].I_origin()(1, 1) == Approx(1.001).epsilon(1e-14));
  const Index tip = m.frame_id("tip");
  CHECK(m.frames[tip].type == FrameType::Link);
  CHECK(m.frames[tip].body == 0);
  CHECK(m.frames[tip].X_BF.p.isApprox(Vec3(0, 0, -1)));
  CHECK(m.frames[m.frame_id("tip_joint")].type == FrameType::FixedJoint);
  REQUIRE(m.collision.size() == 1);
  CHECK(m.collision[0].name == "bob");
  CHECK(m.collision[0].type == ShapeType::Sphere);
  CHECK(m.collision[0].size.x() == 0.05);
  CHECK(m.collision[0].X_BS.p.isApprox(Vec3(0, 0, -1)));
  CHECK(m.collision[0].material == "default");
}

TEST_CASE("URDF: double pendulum keeps limits and dynamics and chains its joints", "[io]") {
  const Model m = load_urdf(source_path("models/double_pendulum.urdf"));
  REQUIRE(m.nv == 2);
  CHECK(m.joint_names == std::vector<std::string>{"shoulder", "elbow"});
  CHECK(m.parent == std::vector<Index>{-1, 0});
  CHECK(m.joint_placement[1].p.isApprox(Vec3(0, 0, -1)));
  CHECK(m.joint_axis[1].isApprox(Vec3::UnitY()));
  CHECK(m.lower_position[1] == Approx(-3.14159265358979));
  CHECK(m.effort_limit[1] == 100);
  CHECK(m.velocity_limit[1] == 20);
  CHECK(m.dof_parent[1] == 0);
}

TEST_CASE("URDF: free box and free sphere get a floating root joint", "[io]") {
  const Model box = load_urdf(source_path("models/box.urdf"));
  CHECK(box.nq == 7);
  CHECK(box.nv == 6);
  CHECK(box.floating_base);
  CHECK(box.joint_names[0] == "root");
  CHECK(box.joint_type[0] == JointType::Floating);
  CHECK(box.neutral_configuration().isApprox((VecX(7) << 0, 0, 0, 1, 0, 0, 0).finished()));
  REQUIRE(box.collision.size() == 1);
  CHECK(box.collision[0].type == ShapeType::Box);
  CHECK(box.collision[0].size.isApprox(Vec3(0.4, 0.3, 0.2)));
  CHECK(box.inertia[0].Ic.diagonal().isApprox(Vec3(0.13, 0.2, 0.25) / 12.0));

  const Model sphere = load_urdf(source_path("models/sphere.urdf"));
  CHECK(sphere.nv == 6);
  CHECK(sphere.total_mass() == 1.0);
  CHECK(sphere.collision[0].size.x() == 1.0);

  UrdfOptions fixed;
  fixed.fixed_base = true;
  const Model welded = load_urdf(source_path("models/box.urdf"), fixed);
  CHECK(welded.nq == 0);
  CHECK(welded.joint_type[0] == JointType::Fixed);
  CHECK_FALSE(welded.floating_base);
}

TEST_CASE("URDF: fixed joints merge mass, COM and inertia exactly; shapes and frames compose", "[io]") {
  // body "a" (2 kg at (0.1,0,0)) carries "b" welded at (0,0.5,0) rotated 90 deg about z; "b"
  // carries "c" welded at (0.2,0,0); a revolute joint hangs from "c".
  const std::string xml = robot(
      link("a", 2.0, "0.1 0 0", "0.01 0.02 0.03") +
      joint("a_b", "fixed", "a", "b", "0 0.5 0", "0 0 1.5707963267948966") +
      link("b", 1.0, "0.3 0 0", "0.04 0.05 0.06",
           "<collision name=\"bbox\"><origin xyz=\"0.1 0 0\"/><geometry><box size=\"1 2 3\"/></geometry></collision>"
           "<collision><geometry><cylinder radius=\"0.1\" length=\"0.5\"/></geometry></collision>") +
      joint("b_c", "fixed", "b", "c", "0.2 0 0") + frame("c") +
      joint("hinge", "revolute", "c", "d", "0 0 0.7") + link("d"));
  const Model m = load_urdf_string(xml);
  REQUIRE(m.nb == 2);
  CHECK(m.body_names == std::vector<std::string>{"a", "d"});

  // by hand: b's COM (0.3,0,0) in b is (0,0.8,0) in a; b's inertia diag(4,5,6)/100 rotated by
  // 90 deg about z becomes diag(5,4,6)/100. Parallel axis about the joint COM.
  const Scalar m_a = 2, m_b = 1;
  const Vec3 c_a(0.1, 0, 0), c_b(0, 0.8, 0);
  const Vec3 c = (m_a * c_a + m_b * c_b) / (m_a + m_b);
  auto shift = [](Scalar mass, const Vec3& d) { return mass * (d.squaredNorm() * Mat3::Identity() - d * d.transpose()); };
  const Mat3 Ic = Vec3(0.01, 0.02, 0.03).asDiagonal().toDenseMatrix() + shift(m_a, c_a - c) +
                  Vec3(0.05, 0.04, 0.06).asDiagonal().toDenseMatrix() + shift(m_b, c_b - c);
  CHECK(m.inertia[0].m == 3.0);
  CHECK_ALL_CLOSE(m.inertia[0].c, c, 1e-15, 0);
  CHECK_ALL_CLOSE(m.inertia[0].Ic, Ic, 1e-15, 0);

  // the moving joint below the merged links: placement composed a -> b -> c -> joint
  CHECK_ALL_CLOSE(m.joint_placement[1].p, Vec3(0, 0.7, 0.7), 1e-15, 0);
  CHECK(m.parent[1] == 0);

  // frames of merged links and fixed joints
  const Frame& fc = m.frames[m.frame_id("c")];
  CHECK(fc.type == FrameType::Link);
  CHECK(fc.body == 0);
  CHECK_ALL_CLOSE(fc.X_BF.p, Vec3(0, 0.7, 0), 1e-15, 0);
  CHECK(m.frames[m.frame_id("a_b")].type == FrameType::FixedJoint);
  CHECK(m.frames[m.frame_id("d")].type == FrameType::Body);
  CHECK(m.frames[m.frame_id("hinge")].type == FrameType::Joint);

  // collision shapes keep their link and get the composed pose
  REQUIRE(m.collision.size() == 2);
  CHECK(m.collision[0].name == "bbox");
  CHECK(m.collision[0].link == "b");
  CHECK(m.collision[0].body == 0);
  CHECK_ALL_CLOSE(m.collision[0].X_BS.p, Vec3(0, 0.6, 0), 1e-15, 0);
  CHECK_ALL_CLOSE(m.collision[0].X_BS.R, rpy_to_matrix(0, 0, M_PI / 2), 1e-15, 0);
  CHECK(m.collision[0].size == Vec3(1, 2, 3));
  CHECK(m.collision[1].name == "b/1");
  CHECK(m.collision[1].type == ShapeType::Cylinder);
  CHECK(m.collision[1].size == Vec3(0.1, 0.5, 0));
}

TEST_CASE("URDF: bodies are depth-first with siblings in file order", "[io]") {
  // the joints appear in the file out of tree order and in non-alphabetical sibling order
  const std::string xml = robot(
      joint("z_knee", "revolute", "z_thigh", "z_shin") + joint("z_hip", "revolute", "torso", "z_thigh") +
      joint("a_hip", "revolute", "torso", "a_thigh") + joint("m_hip", "fixed", "torso", "m_mount") +
      joint("m_knee", "revolute", "m_mount", "m_shin") + joint("a_knee", "revolute", "a_thigh", "a_shin") +
      link("z_shin") + link("torso") + link("z_thigh") + link("a_thigh") + link("a_shin") + frame("m_mount") +
      link("m_shin"));
  const Model m = load_urdf_string(xml);
  CHECK(m.joint_names == std::vector<std::string>{"root", "z_hip", "z_knee", "a_hip", "a_knee", "m_knee"});
  CHECK(m.body_names == std::vector<std::string>{"torso", "z_thigh", "z_shin", "a_thigh", "a_shin", "m_shin"});
  CHECK(m.parent == std::vector<Index>{-1, 0, 1, 0, 3, 0});
  CHECK(m.nq == 7 + 5);
  CHECK(m.find_joint("m_hip") == -1);         // fixed: not a joint of the model ...
  CHECK(m.find_frame("m_hip") >= 0);          // ... but a frame
  CHECK(m.frames[m.frame_id("m_mount")].body == 0);
}

TEST_CASE("URDF: a world link makes its child joint the root joint", "[io]") {
  const Model welded = load_urdf_string(robot(frame("world") + joint("weld", "fixed", "world", "base", "0 0 1") +
                                              link("base") + joint("j", "revolute", "base", "arm") + link("arm")));
  CHECK(welded.nb == 2);
  CHECK(welded.nq == 1);
  CHECK(welded.joint_type[0] == JointType::Fixed);
  CHECK(welded.joint_names[0] == "weld");
  CHECK(welded.joint_placement[0].p == Vec3(0, 0, 1));
  CHECK_FALSE(welded.floating_base);

  const Model hinged =
      load_urdf_string(robot(frame("world") + joint("j", "prismatic", "world", "slider") + link("slider")));
  CHECK(hinged.nb == 1);
  CHECK(hinged.joint_type[0] == JointType::Prismatic);
  CHECK(hinged.upper_position[0] == 1);

  const Model floating = load_urdf_string(
      robot(frame("world") + joint("free", "floating", "world", "body") + link("body")));
  CHECK(floating.floating_base);
  CHECK(floating.joint_names[0] == "free");
  CHECK(floating.nv == 6);
  require_model_error(robot(frame("world") + joint("free", "floating", "world", "body", "0 0 1") + link("body")),
                      {"joint 'free'", "identity <origin>"});
}

TEST_CASE("URDF: joint limits and dynamics are kept", "[io]") {
  const std::string xml = robot(
      link("base") +
      "<joint name=\"j\" type=\"revolute\"><parent link=\"base\"/><child link=\"arm\"/><axis xyz=\"0 2 0\"/>"
      "<limit lower=\"-0.5\" upper=\"1.5\" effort=\"40\" velocity=\"3\"/><dynamics damping=\"0.2\" friction=\"0.1\"/>"
      "</joint>" +
      link("arm") +
      "<joint name=\"w\" type=\"continuous\"><parent link=\"arm\"/><child link=\"wheel\"/><axis xyz=\"1 0 0\"/>"
      "<limit effort=\"7\" velocity=\"30\"/></joint>" +
      link("wheel"));
  const Model m = load_urdf_string(xml);
  const Index j = m.joint_id("j"), w = m.joint_id("w");
  CHECK(m.joint_axis[j] == Vec3(0, 1, 0));  // normalised
  CHECK(m.lower_position[m.idx_q[j]] == -0.5);
  CHECK(m.upper_position[m.idx_q[j]] == 1.5);
  CHECK(m.effort_limit[m.idx_v[j]] == 40);
  CHECK(m.velocity_limit[m.idx_v[j]] == 3);
  CHECK(m.damping[m.idx_v[j]] == 0.2);
  CHECK(m.friction[m.idx_v[j]] == 0.1);
  CHECK(m.lower_position[m.idx_q[w]] == -kInf);
  CHECK(m.upper_position[m.idx_q[w]] == kInf);
  CHECK(m.effort_limit[m.idx_v[w]] == 7);
  CHECK(m.velocity_limit[m.idx_v[w]] == 30);
  CHECK(m.joint_urdf_types[w] == "continuous");
}

TEST_CASE("URDF: a link without <inertial> is a massless frame", "[io]") {
  // massless leaf on a fixed joint: fine, adds no mass
  const Model a = load_urdf_string(robot(link("base", 2.0) + joint("f", "fixed", "base", "sensor") + frame("sensor")));
  CHECK(a.total_mass() == 2.0);
  CHECK(a.frames[a.frame_id("sensor")].type == FrameType::Link);

  // a massless intermediate link of a universal joint is fine: the child moves mass for it
  const Model b = load_urdf_string(robot(link("base") + joint("u1", "revolute", "base", "cross") + frame("cross") +
                                         joint("u2", "revolute", "cross", "arm", "0 0 0", "1.5707963267948966 0 0") +
                                         link("arm", 1.0, "0 0 0.5")));
  CHECK(b.total_mass() == 2.0);
  CHECK(b.inertia[b.body_id("cross")].m == 0.0);

  // massless leaf as the only thing a moving joint moves (a visual or sensor link): welded with a
  // warning naming the joint; an error in strict mode
  const std::string ghost = robot(link("base") + joint("spin", "revolute", "base", "ghost") + frame("ghost"));
  std::vector<std::string> warnings;
  UrdfOptions opt;
  opt.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  const Model c = load_urdf_string(ghost, opt, "ghost.urdf");
  CHECK(c.nv == 6);
  CHECK(c.find_joint("spin") < 0);
  CHECK(c.frames[c.frame_id("ghost")].type == FrameType::Link);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::StartsWith("ghost.urdf: joint 'spin'") && Catch::Contains("massless"));
  UrdfOptions strict;
  strict.strict = true;
  require_model_error(ghost, {"joint 'spin'", "massless", "strict"}, strict);
}

TEST_CASE("URDF: collision meshes resolve package://, file:// and relative paths", "[io]") {
  TempDir tmp;
  tmp.write("pkgs/my_robot/meshes/m.stl", "solid x\nendsolid x\n");
  auto mesh_robot = [](const std::string& uri) {
    return robot(link("base", 1.0, "0 0 0", "0.01 0.01 0.01",
                      "<collision name=\"hull\"><geometry><mesh filename=\"" + uri +
                          "\" scale=\"1 2 3\"/></geometry></collision>"));
  };
  const std::string pkg_dir = (tmp.path / "pkgs").string();
  const std::string expected = (tmp.path / "pkgs/my_robot/meshes/m.stl").string();

  UrdfOptions opt;
  opt.package_paths = {"/nonexistent/dir", pkg_dir};
  const Model a = load_urdf_string(mesh_robot("package://my_robot/meshes/m.stl"), opt);
  REQUIRE(a.collision.size() == 1);
  CHECK(a.collision[0].type == ShapeType::Mesh);
  CHECK(a.collision[0].mesh_path == expected);
  CHECK(a.collision[0].size == Vec3(1, 2, 3));

  // a search-path entry may be the package folder itself
  opt.package_paths = {pkg_dir + "/my_robot"};
  CHECK(load_urdf_string(mesh_robot("package://my_robot/meshes/m.stl"), opt).collision[0].mesh_path == expected);

  // ROS_PACKAGE_PATH after the explicit paths
  const char* old = std::getenv("ROS_PACKAGE_PATH");
  const std::string saved = old ? old : "";
  ::setenv("ROS_PACKAGE_PATH", ("/nonexistent:" + pkg_dir).c_str(), 1);
  const Model b = load_urdf_string(mesh_robot("package://my_robot/meshes/m.stl"));
  CHECK(b.collision[0].mesh_path == expected);
  ::unsetenv("ROS_PACKAGE_PATH");
  const char* old_ament = std::getenv("AMENT_PREFIX_PATH");
  const std::string saved_ament = old_ament ? old_ament : "";
  ::unsetenv("AMENT_PREFIX_PATH");
  require_model_error(mesh_robot("package://my_robot/meshes/m.stl"),
                      {"link 'base'", "cannot resolve collision mesh 'package://my_robot/meshes/m.stl'",
                       "package 'my_robot'", "looked in: nowhere"});
  opt.package_paths = {"/nonexistent/a", "/nonexistent/b"};
  require_model_error(mesh_robot("package://my_robot/meshes/m.stl"),
                      {"looked in: /nonexistent/a/my_robot, /nonexistent/b/my_robot"}, opt);
  // ROS 2: AMENT_PREFIX_PATH entries hold packages under share/
  tmp.write("prefix/share/my_robot/meshes/m.stl", "solid x\nendsolid x\n");
  ::setenv("AMENT_PREFIX_PATH", ("/nonexistent:" + (tmp.path / "prefix").string()).c_str(), 1);
  CHECK(load_urdf_string(mesh_robot("package://my_robot/meshes/m.stl")).collision[0].mesh_path ==
        (tmp.path / "prefix/share/my_robot/meshes/m.stl").string());
  ::unsetenv("AMENT_PREFIX_PATH");
  if (old_ament) ::setenv("AMENT_PREFIX_PATH", saved_ament.c_str(), 1);
  if (old) ::setenv("ROS_PACKAGE_PATH", saved.c_str(), 1);

  // file:// and paths relative to the URDF's folder
  CHECK(load_urdf_string(mesh_robot("file://" + expected)).collision[0].mesh_path == expected);
  const std::string file = tmp.write("pkgs/my_robot/urdf/r.urdf", mesh_robot("../meshes/m.stl"));
  CHECK(load_urdf(file).collision[0].mesh_path == expected);
}

TEST_CASE("URDF errors: file not found", "[io]") {
  CHECK_THROWS_AS(load_urdf("no/such/robot.urdf"), ModelError);
  CHECK_THROWS_WITH(load_urdf("no/such/robot.urdf"), Catch::Contains("URDF file 'no/such/robot.urdf': file not found"));
}

TEST_CASE("URDF errors: only regular files are read (no devices, FIFOs, directories)", "[io]") {
  // /dev/zero once made the loader read forever while its memory grew
  CHECK_THROWS_WITH(load_urdf("/dev/zero"), Catch::Contains("URDF file '/dev/zero': is not a regular file"));
  TempDir tmp;
  const std::string dir = tmp.write("d/x.urdf", "<robot name=\"r\"/>");
  CHECK_THROWS_WITH(load_urdf(dir.substr(0, dir.size() - 6)), Catch::Contains("is a directory"));
}

TEST_CASE("URDF errors: XML not well formed, with the line", "[io]") {
  TempDir tmp;
  const std::string path = tmp.write("broken.urdf", "<robot name=\"r\">\n  <link name=\"a\">\n  </lnk>\n</robot>\n");
  try {
    load_urdf(path);
    FAIL("no ModelError thrown");
  } catch (const ModelError& e) {
    const std::string what = e.what();
    INFO(what);
    // tinyxml2 reports the line of the element left open
    CHECK_THAT(what, Catch::StartsWith(path + ": line 2: XML is not well formed"));
    CHECK_THAT(what, Catch::Contains("XML_ERROR_MISMATCHED_ELEMENT"));
  }
  require_model_error("<robot name=\"r\">\n  <link name=\"a\"/>\n  <joint name=j/>\n</robot>",
                      {"line 3: XML is not well formed"});
  require_model_error("<robot name=\"r\"><link name=\"a\"/>", {"line 1", "not well formed"});
  require_model_error("<robt name=\"r\"/>", {"expected <robot>"});
}

TEST_CASE("URDF errors: no root or several roots", "[io]") {
  require_model_error(robot(link("a") + link("b") + joint("ab", "fixed", "a", "b") + joint("ba", "fixed", "b", "a")),
                      {"no root link"});
  require_model_error(robot(link("a") + link("b") + link("c") + joint("ab", "fixed", "a", "b")),
                      {"several root links", "'a'", "'c'"});
  // one root, but a cycle the root cannot reach
  require_model_error(robot(link("r") + link("b") + link("c") + joint("bc", "revolute", "b", "c") +
                            joint("cb", "revolute", "c", "b")),
                      {"link 'b' is not connected to the root"});
  require_model_error(robot(link("a") + link("b") + link("c") + joint("ab", "fixed", "a", "c") +
                            joint("bc", "fixed", "b", "c")),
                      {"link 'c' is the child of two joints", "'ab'", "'bc'"});
}

TEST_CASE("URDF errors: a joint whose parent or child link does not exist", "[io]") {
  require_model_error(robot(link("thigh") + joint("knee", "revolute", "thigh", "shin")),
                      {"joint 'knee': child link 'shin' does not exist"});
  require_model_error(robot(link("shin") + joint("knee", "revolute", "thigh", "shin")),
                      {"joint 'knee': parent link 'thigh' does not exist"});
}

TEST_CASE("URDF errors: a moving body with non-physical mass or inertia", "[io]") {
  auto arm = [](const std::string& arm_link) {
    return robot(link("base") + joint("elbow", "revolute", "base", "arm") + arm_link);
  };
  UrdfOptions strict;
  strict.strict = true;
  require_model_error(arm(link("arm", 0.0)), {"joint 'elbow'", "massless"}, strict);
  require_model_error(arm(link("arm", -1.0)), {"link 'arm'", "negative mass"});
  require_model_error(arm(link("arm", 1.0, "0 0 0", "0.1 -0.2 0.1")), {"link 'arm'", "not all positive"}, strict);
  require_model_error(arm(link("arm", 1.0, "0 0 0", "0.1 0.1 0.5")), {"link 'arm'", "triangle inequality"}, strict);
  // the floating root is a moving body too
  require_model_error(robot(link("base", 1.0, "0 0 0", "1 0.1 0.1")), {"link 'base'", "joint 'root'", "triangle"},
                      strict);
  // a merged part may be unphysical on its own (ANYmal C's camera inertias are): only the
  // merged body is checked
  const Model ok = load_urdf_string(robot(link("base", 1.0) + joint("f", "fixed", "base", "cam") +
                                          link("cam", 0.001, "0 0 0", "0.0001 0.0001 0.0005")));
  CHECK(ok.total_mass() == Approx(1.001));
}

TEST_CASE("URDF errors: unsupported joint types", "[io]") {
  require_model_error(robot(link("a") + joint("slide", "planar", "a", "b") + link("b")),
                      {"joint 'slide'", "'planar' is not supported"});
  require_model_error(robot(link("a") + joint("free", "floating", "a", "b") + link("b")),
                      {"joint 'free'", "floating joint inside the tree"});
  require_model_error(robot(link("a") + joint("odd", "screw", "a", "b") + link("b")),
                      {"joint 'odd'", "unknown joint type 'screw'"});
}

TEST_CASE("URDF errors: NaN or Inf in any number", "[io]") {
  require_model_error(robot(link("a", 1.0, "0 nan 0")), {"link 'a'", "xyz=\"0 nan 0\"", "not a finite number"});
  require_model_error(robot(link("a", 1.0, "0 0 0", "inf 1 1")), {"link 'a'", "ixx=\"inf\""});
  require_model_error(robot(link("a") + joint("j", "fixed", "a", "b", "0 0 1e999") + link("b")),
                      {"joint 'j'", "1e999"});
  require_model_error(robot(link("a") + "<joint name=\"k\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>"
                                        "<axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"NaN\" effort=\"1\" "
                                        "velocity=\"1\"/></joint>" +
                            link("b")),
                      {"joint 'k'", "upper=\"NaN\""});
  require_model_error(robot(link("a", 1.0, "0 0 0", "0.01 0.01 0.01",
                                 "<collision><geometry><sphere radius=\"-inf\"/></geometry></collision>")),
                      {"link 'a'", "radius"});
}

TEST_CASE("URDF errors: urdfdom rejections are reported, not printed", "[io]") {
  // a revolute joint without <limit> is invalid URDF; urdfdom's own message is kept
  require_model_error(robot(link("a") + "<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>"
                                        "</joint>" +
                            link("b")),
                      {"urdfdom rejected the file", "j"});
}
