// URDF input handling: unknown elements and attributes (warnings with the line, errors in strict
// mode), a catalogue of bad inputs (each a one-line error naming the file and the element), deep
// trees without recursion limits, inertia repair, massless links, mimic joints, visual geometry
// and base overrides.
#include <Eigen/Eigenvalues>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "impulse/core/error.hpp"
#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/io/urdf.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

const char* kInertial =
    "<inertial><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/>"
    "</inertial>";

std::string body_link(const std::string& name, const std::string& extra = "") {
  return "<link name=\"" + name + "\">" + kInertial + extra + "</link>";
}

std::string hinge(const std::string& name, const std::string& parent, const std::string& child,
                  const std::string& extra = "") {
  return "<joint name=\"" + name + "\" type=\"revolute\"><parent link=\"" + parent + "\"/><child link=\"" + child +
         "\"/><origin xyz=\"0 0 -0.1\"/><axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" effort=\"10\" "
         "velocity=\"5\"/>" +
         extra + "</joint>";
}

std::string urdf_doc(const std::string& body) { return "<?xml version=\"1.0\"?>\n<robot name=\"t\">\n" + body + "\n</robot>\n"; }

struct Collect {
  std::vector<std::string> warnings;
  UrdfOptions options() {
    UrdfOptions o;
    o.on_warning = [this](const std::string& w) { warnings.push_back(w); };
    return o;
  }
};

// The error of loading `xml` as "bad.urdf": one line, starting with the file, containing every fragment.
void require_urdf_error(const std::string& xml, const std::vector<std::string>& fragments, UrdfOptions options = {}) {
  try {
    options.on_warning = [](const std::string&) {};
    load_urdf_string(xml, options, "bad.urdf");
    FAIL("no ModelError thrown for:\n" << xml);
  } catch (const ModelError& e) {
    const std::string what = e.what();
    INFO("message: " << what);
    CHECK(what.rfind("bad.urdf: ", 0) == 0);
    CHECK(what.find('\n') == std::string::npos);
    for (const std::string& f : fragments) CHECK_THAT(what, Catch::Contains(f));
  }
}

// A chain of n revolute links, written without recursion in the file either.
std::string chain(int n) {
  std::ostringstream s;
  s << "<robot name=\"chain\">\n" << body_link("l0") << "\n";
  for (int i = 1; i < n; ++i) {
    s << body_link("l" + std::to_string(i)) << hinge("j" + std::to_string(i), "l" + std::to_string(i - 1),
                                                     "l" + std::to_string(i))
      << "\n";
  }
  s << "</robot>\n";
  return s.str();
}

}  // namespace

TEST_CASE("URDF input: unknown elements and attributes are warnings naming them and their line", "[io][urdf_input]") {
  // typical typos: <orign>, <axs>, <collison>
  const std::string xml = urdf_doc(
      "<link name=\"a\">" + std::string(kInertial) +
      "</link>\n"
      "<link name=\"b\">" +
      kInertial +
      "\n<collison><geometry><sphere radius=\"0.1\"/></geometry></collison></link>\n"
      "<joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child link=\"b\"/>\n<orign xyz=\"0 0 1\"/>\n"
      "<axs xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\" stifness=\"3\"/></joint>");
  Collect c;
  const Model m = load_urdf_string(xml, c.options(), "typo.urdf");
  REQUIRE(c.warnings.size() == 4);
  CHECK_THAT(c.warnings[0], Catch::StartsWith("typo.urdf: link 'b': unknown element <collison> in <link> (line 5)"));
  CHECK_THAT(c.warnings[1], Catch::StartsWith("typo.urdf: joint 'j': unknown element <orign> in <joint> (line 7)"));
  CHECK_THAT(c.warnings[2], Catch::StartsWith("typo.urdf: joint 'j': unknown element <axs> in <joint> (line 8)"));
  CHECK_THAT(c.warnings[3], Catch::Contains("unknown attribute 'stifness' of <limit>") && Catch::Contains("line 8"));
  CHECK(m.collision.empty());  // what was loaded is what the warnings say

  // strict mode: the first one is an error
  UrdfOptions strict;
  strict.strict = true;
  require_urdf_error(xml, {"link 'b'", "unknown element <collison>", "line 5", "strict"}, strict);

  // well-known extensions are skipped silently; xacro namespaces too
  Collect quiet;
  load_urdf_string("<robot name=\"r\" xmlns:xacro=\"http://www.ros.org/wiki/xacro\">" + body_link("a",
                   "<contact><lateral_friction value=\"1\"/></contact>") +
                       "<gazebo reference=\"a\"><mu1>1</mu1></gazebo><transmission name=\"t\"/></robot>",
                   quiet.options());
  CHECK(quiet.warnings.empty());
}

TEST_CASE("URDF input: bad-input catalogue, one error line naming the file and the element", "[io][urdf_input]") {
  const std::string a = body_link("a");
  // malformed XML
  require_urdf_error("<robot name=\"r\"><link name=\"a\"></robot>", {"line 1", "not well formed"});
  require_urdf_error("", {"not well formed"});
  require_urdf_error("<robt name=\"r\"/>", {"root element is <robt>"});
  // missing numbers and attributes
  require_urdf_error(urdf_doc("<link name=\"a\"><inertial><mass/></inertial></link>"), {"link 'a'", "<mass>", "'value'"});
  require_urdf_error(urdf_doc("<link name=\"a\"><inertial><mass value=\"\"/></inertial></link>"),
                {"link 'a'", "value=\"\"", "0 numbers, expected 1"});
  require_urdf_error(urdf_doc("<link name=\"a\"><collision><geometry><box/></geometry></collision></link>"),
                {"link 'a'", "<box>", "'size'"});
  require_urdf_error(urdf_doc(a + "<joint name=\"j\" type=\"fixed\"><child link=\"a\"/></joint>"), {"joint 'j'", "no <parent"});
  require_urdf_error(urdf_doc("<link/>"), {"<link>", "'name'"});
  // non-finite and non-decimal numbers
  require_urdf_error(urdf_doc("<link name=\"a\"><inertial><mass value=\"nan\"/></inertial></link>"),
                {"link 'a'", "value=\"nan\"", "not a finite number"});
  require_urdf_error(urdf_doc("<link name=\"a\"><inertial><mass value=\"0x1p-10\"/></inertial></link>"),
                {"link 'a'", "0x1p-10", "not a decimal number"});
  require_urdf_error(urdf_doc("<link name=\"a\"><inertial><mass value=\"1 kg\"/></inertial></link>"),
                {"link 'a'", "not a finite number"});
  // wrong sizes
  require_urdf_error(urdf_doc(body_link("a") + body_link("b") + hinge("j", "a", "b", "<origin xyz=\"1 2\"/>")),
                {"joint 'j'", "xyz=\"1 2\"", "2 numbers, expected 3"});
  require_urdf_error(urdf_doc("<link name=\"a\"><collision><geometry><box size=\"1 1 1 1\"/></geometry></collision></link>"),
                {"link 'a'", "4 numbers, expected 3"});
  require_urdf_error(urdf_doc("<link name=\"a\"><collision><geometry/></collision></link>"),
                {"link 'a'", "exactly one shape, it has 0"});
  // unknown names
  require_urdf_error(urdf_doc(a + hinge("j", "a", "ghost")), {"joint 'j'", "child link 'ghost' does not exist"});
  require_urdf_error(urdf_doc(a + body_link("b") + hinge("j", "a", "b", "<mimic joint=\"nobody\"/>")),
                {"joint 'j'", "<mimic> names joint 'nobody'"});
  require_urdf_error(urdf_doc(a + "<joint name=\"j\" type=\"screw\"><parent link=\"a\"/><child link=\"b\"/></joint>" +
                      body_link("b")),
                {"joint 'j'", "unknown joint type 'screw'"});
  // cyclic and disconnected trees
  require_urdf_error(urdf_doc(body_link("a") + body_link("b") + hinge("ab", "a", "b") + hinge("ba", "b", "a")),
                {"no root link", "cycle"});
  require_urdf_error(urdf_doc(body_link("r") + body_link("a") + body_link("b") + hinge("ab", "a", "b") +
                      hinge("ba", "b", "a")),
                {"link 'a'", "not connected to the root"});
  require_urdf_error(urdf_doc(a + body_link("b") + hinge("j1", "a", "b") + hinge("j2", "a", "b")),
                {"link 'b' is the child of two joints"});
  // huge values
  require_urdf_error(urdf_doc("<link name=\"a\"><inertial><mass value=\"1e300\"/></inertial></link>"),
                {"link 'a'", "1e300", "out of range"});
  require_urdf_error(urdf_doc(a + body_link("b") + hinge("j", "a", "b", "<origin xyz=\"0 0 1e12\"/>")),
                {"joint 'j'", "out of range"});
  // a joint limit may be huge ("unlimited"), but stays finite
  CHECK_NOTHROW(load_urdf_string(urdf_doc(a + "<link name=\"b\">" + kInertial +
                                       "</link><joint name=\"j\" type=\"revolute\"><parent link=\"a\"/><child "
                                       "link=\"b\"/><axis xyz=\"0 0 1\"/><limit lower=\"-1e30\" upper=\"1e30\" "
                                       "effort=\"1e30\" velocity=\"1e30\"/></joint>")));
}

TEST_CASE("URDF input: a 4000-link chain loads and steps (no recursion anywhere)", "[io][urdf_input]") {
  const int n = 4000;
  const Model m = load_urdf_string(chain(n));
  REQUIRE(m.nb == n);
  CHECK(m.nv == 6 + n - 1);
  for (Index i = 1; i < m.nb; ++i) CHECK(m.parent[i] == i - 1);
  CHECK(m.total_mass() == Approx(n));
  // the dynamics of the deep chain are iterative too: one ABA call gives finite accelerations
  Data d(m);
  const VecX q = m.neutral_configuration();
  const VecX u = VecX::Zero(m.nv), tau = VecX::Zero(m.nv);
  const VecX a = aba(m, d, q, u, tau);
  CHECK(a.allFinite());
  CHECK(a[2] == Approx(-9.81));  // a free chain falls as a whole
}

TEST_CASE("URDF input: impossible inertias are repaired with the smallest change and a warning", "[io][urdf_input]") {
  // Allegro-like link: principal moments 1, 2, 5 (1 + 2 < 5), rotated off the axes
  const std::string bad =
      "<link name=\"finger\"><inertial><origin rpy=\"0.3 0.2 0.1\"/><mass value=\"0.1\"/>"
      "<inertia ixx=\"1e-5\" ixy=\"0\" ixz=\"0\" iyy=\"2e-5\" iyz=\"0\" izz=\"5e-5\"/></inertial></link>";
  Collect c;
  const Model m = load_urdf_string(urdf_doc(body_link("palm") + bad + hinge("j", "palm", "finger")), c.options(), "h.urdf");
  REQUIRE(c.warnings.size() == 1);
  CHECK_THAT(c.warnings[0], Catch::StartsWith("h.urdf: link 'finger'") && Catch::Contains("triangle inequality") &&
                                Catch::Contains("repaired"));
  const Mat3& Ic = m.inertia[m.body_id("finger")].Ic;
  const Vec3 e = Eigen::SelfAdjointEigenSolver<Mat3>(Ic).eigenvalues();
  // the largest moment is kept, the two others raised equally by (5 - 1 - 2) / 2 = 1
  CHECK(e[0] == Approx(2e-5).epsilon(1e-9));
  CHECK(e[1] == Approx(3e-5).epsilon(1e-9));
  CHECK(e[2] == Approx(5e-5).epsilon(1e-9));
  CHECK(e[0] + e[1] >= e[2] * (1 - 1e-12));
  // principal axes are kept: the largest moment's axis is the inertial frame's z axis
  const Vec3 z = Eigen::AngleAxisd(0.1, Vec3::UnitZ()) * Eigen::AngleAxisd(0.2, Vec3::UnitY()) *
                 Eigen::AngleAxisd(0.3, Vec3::UnitX()) * Vec3::UnitZ();
  CHECK((Ic * z - 5e-5 * z).norm() < 1e-15);
  CHECK(m.inertia[m.body_id("finger")].m == 0.1);
}

TEST_CASE("URDF input: mimic joints are recorded (enforced, no warning); visuals are kept apart", "[io][urdf_input]") {
  const std::string xml = urdf_doc(
      body_link("hand", "<visual><origin xyz=\"0 0 0.5\"/><geometry><box size=\"1 2 3\"/></geometry>"
                        "<material name=\"red\"><color rgba=\"1 0 0 1\"/></material></visual>") +
      body_link("left") + body_link("right") + hinge("finger1", "hand", "left") +
      hinge("finger2", "hand", "right", "<mimic joint=\"finger1\" multiplier=\"-1\" offset=\"0.01\"/>"));
  Collect c;
  const Model m = load_urdf_string(xml, c.options(), "g.urdf");
  REQUIRE(m.mimic.size() == 1);
  CHECK(m.mimic[0].joint == m.joint_id("finger2"));
  CHECK(m.mimic[0].master == m.joint_id("finger1"));
  CHECK(m.mimic[0].multiplier == -1);
  CHECK(m.mimic[0].offset == 0.01);
  CHECK(c.warnings.empty());  // enforced by the stepper (tests/stepper/test_mimic.cpp)
  UrdfOptions strict;
  strict.strict = true;
  CHECK(load_urdf_string(xml, strict, "g.urdf").mimic.size() == 1);
  // couplings that cannot hold: a joint following itself through another, two masters
  require_urdf_error(urdf_doc(body_link("hand") + body_link("left") + body_link("right") +
                      hinge("finger1", "hand", "left", "<mimic joint=\"finger2\"/>") +
                      hinge("finger2", "hand", "right", "<mimic joint=\"finger1\"/>")),
                {"finger", "cycle"});

  REQUIRE(m.visuals.size() == 1);
  CHECK(m.collision.empty());
  CHECK(m.visuals[0].type == ShapeType::Box);
  CHECK(m.visuals[0].size == Vec3(1, 2, 3));
  CHECK(m.visuals[0].X_BS.p == Vec3(0, 0, 0.5));
  CHECK(m.visuals[0].rgba == Vec4(1, 0, 0, 1));
  CHECK(m.visuals[0].material == "red");
  CHECK(m.visuals[0].body == m.body_id("hand"));
}

TEST_CASE("URDF input: the base follows the file unless overridden", "[io][urdf_input]") {
  const std::string welded = urdf_doc("<link name=\"world\"/>" + body_link("base") +
                                   "<joint name=\"weld\" type=\"fixed\"><parent link=\"world\"/><child "
                                   "link=\"base\"/><origin xyz=\"0 0 1\"/></joint>" +
                                   body_link("arm") + hinge("j", "base", "arm"));
  const Model fixed = load_urdf_string(welded);
  CHECK_FALSE(fixed.floating_base);
  CHECK(fixed.nv == 1);
  UrdfOptions floating;
  floating.floating_base = true;
  const Model free = load_urdf_string(welded, floating);
  CHECK(free.floating_base);
  CHECK(free.nv == 7);
  CHECK(free.body_names[0] == "base");
  const std::string loose = urdf_doc(body_link("base") + body_link("arm") + hinge("j", "base", "arm"));
  CHECK(load_urdf_string(loose).floating_base);
  UrdfOptions fixed_base;
  fixed_base.fixed_base = true;
  CHECK_FALSE(load_urdf_string(loose, fixed_base).floating_base);
}

TEST_CASE("URDF input: a joint name the two XML parses read differently is an error, not a crash", "[io][urdf_input]") {
  // Found by fuzz_urdf: bytes that are not text and a bare '&' in a joint name. urdfdom's model
  // then has no joint under the name of our own tree walk; the loader dereferenced a null joint.
  const std::string bad_name = std::string("sh") + std::string(40, '\xff') + "ou&r";
  const std::string urdf = R"(<robot name="p"><link name="world"/>
    <joint name=")" + bad_name + R"(" type="revolute"><parent link="world"/><child link="upper"/>
      <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    <link name="upper"><inertial><mass value="1"/>
      <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>)";
  try {
    const Model m = load_urdf_string(urdf);
    CHECK(m.nv == 1);  // a parser that reads the name alike may load it: fine, as long as it is whole
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("not found by the URDF parser") != std::string::npos);
  }
}
