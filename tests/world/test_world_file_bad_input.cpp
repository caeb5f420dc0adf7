// Bad-input catalogue for world files: every broken file gives exactly one line
// "path:line: <element> ...: problem" naming the file, the line and the element, and leaves the
// World untouched (phase 1 fails before build_world). Also: the settings checks that the World's
// API, the world file and the CLI share (world/settings.hpp).
#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include <unistd.h>

#include "impulse/core/error.hpp"
#include "impulse/world/settings.hpp"
#include "impulse/world/world_file.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

struct Case {
  const char* name;
  const char* xml;
  const char* expected;  // "path:<expected>" must occur in the message
};

// Body of a world file around one line under test (line 2).
std::string world(const std::string& line) { return "<world>\n" + line + "\n<ground/>\n</world>\n"; }

}  // namespace

TEST_CASE("world file bad-input catalogue: one line naming file, line and element", "[world][world_file]") {
  const std::string dp = impulse_test::source_path("models/double_pendulum.urdf");
  const std::vector<std::pair<std::string, std::string>> cases = {
      // malformed XML and document structure
      {"<world>\n<ground>\n</world>", ":2: malformed XML"},
      {"", ":1: malformed XML"},
      {"<world/>\n<world/>\n", ":2: <world>: a second root element after <world> (line 1)"},
      {"<world/>\n<ground/>\n", ":2: <ground>: a second root element"},
      {"<world>\n<ground/>\nground height=\"1\"/>\n</world>", ":3: stray text 'ground height=\"1\"/>' inside <world>"},
      {"<world>\n<sphere name=\"s\" radius=\"1\" mass=\"1\">oops</sphere>\n</world>",
       ":2: stray text 'oops' inside <sphere> 's'"},
      {"<scene/>", ":1: <scene>: the root element must be <world>"},
      {world("<trampoline/>"), ":2: <trampoline>: unknown element"},
      // numbers: missing, not numbers, not finite, not decimal, huge
      {world("<sphere name=\"s\" radius=\"1\"/>"), ":2: <sphere> 's': missing attribute 'mass'"},
      {world("<sphere name=\"s\" radius=\"abc\" mass=\"1\"/>"), ":2: <sphere> 's': attribute 'radius': 'abc' is not a decimal number"},
      {world("<sphere name=\"s\" radius=\"nan\" mass=\"1\"/>"), ":2: <sphere> 's': attribute 'radius': 'nan' is not finite"},
      {world("<sphere name=\"s\" radius=\"1\" mass=\"-inf\"/>"), ":2: <sphere> 's': attribute 'mass': '-inf' is not finite"},
      {world("<sphere name=\"s\" radius=\"1\" mass=\"1e999\"/>"), ":2: <sphere> 's': attribute 'mass': '1e999' is out of range"},
      {world("<sphere name=\"s\" radius=\"0x1p-3\" mass=\"1\"/>"), ":2: <sphere> 's': attribute 'radius': '0x1p-3' is not a decimal number"},
      {world("<sphere name=\"s\" radius=\"1.\" mass=\"1e\"/>"), ":2: <sphere> 's': attribute 'mass': '1e' is not a decimal number"},
      {world("<box name=\"b\" size=\"1 1\" mass=\"1\"/>"), ":2: <box> 'b': attribute 'size': expected 3 numbers, got 2"},
      {world("<box name=\"b\" size=\"1 1 1 1\" mass=\"1\"/>"), ":2: <box> 'b': attribute 'size': expected 3 numbers, got 4"},
      {world("<ground group=\"010\"/>"), ":2: <ground>: attribute 'group': '010' is not a 32-bit unsigned integer"},
      {world("<ground mask=\"0x1FFFFFFFF\"/>"), ":2: <ground>: attribute 'mask': '0x1FFFFFFFF' is not a 32-bit unsigned integer"},
      {world("<contact max_contacts=\"0x10\"/>"), ":2: <contact>: attribute 'max_contacts': '0x10' is not an integer"},
      {world("<contact max_contacts=\"1000000\"/>"), ":2: <contact>: max_contacts must be in [1, 100000], got 1000000"},
      {world("<contact margin=\"5\"/>"), ":2: <contact>: margin must be in [0, 1] m, got 5"},
      // the time step (settings.hpp bounds) and gravity
      {"<world dt=\"1e-12\"/>", ":1: <world>: dt must be in [1e-07, 0.1] s, got 1e-12"},
      {"<world dt=\"0x1p-10\"/>", ":1: <world>: attribute 'dt': '0x1p-10' is not a decimal number"},
      {"<world dt=\"0.5\"/>", ":1: <world>: dt must be in [1e-07, 0.1] s"},
      {"<world dt=\"-0.001\"/>", ":1: <world>: dt must be in"},
      {"<world gravity=\"0 0 -1e300\"/>", ":1: <world>: gravity must be finite with norm <= 10000 m/s^2, got (0 0 -1e+300)"},
      // names
      {world("<sphere name=\"s\" radius=\"1\" mass=\"1\" material=\"rubbr\"/>"),
       ":2: <sphere> 's': attribute 'material': unknown material 'rubbr'"},
      {"<world>\n<material a=\"rubber\" b=\"floor\"/>\n<ground material=\"flor\"/>\n</world>",
       ":3: <ground>: attribute 'material': unknown material 'flor' (materials are named by <material a=... b=...> "
       "pairs; known: default, floor, rubber)"},
      {world("<solver name=\"simplex\"/>"), ":2: <solver>: attribute 'name': unknown contact solver 'simplex'"},
      {world("<solver name=\"pgs\" alpha=\"3\"/>"), ":2: <solver>: solver 'pgs': alpha must be in (0, 2], got 3"},
      {world("<solver name=\"bisection\" alpha_min=\"1.5\"/>"), ":2: <solver>: solver 'bisection': need 0 < alpha_min <= alpha"},
      {world("<robot name=\"r\" urdf=\"" + dp + "\"><q typo=\"1\"/></robot>"), ":2: <q>: unknown attribute 'typo'"},
      {world("<robot name=\"r\" urdf=\"" + dp + "\"><q>1 2 3</q></robot>"), ":2: <q>: expected 2 joint positions"},
      {world("<robot name=\"r\" urdf=\"" + dp + "\">x<q>1 2</q></robot>"), ":2: stray text 'x' inside <robot> 'r'"},
      {world("<robot name=\"r\" urdf=\"/dev/zero\"/>"), ":2: <robot> 'r': attribute 'urdf'"},
      {world("<box name=\"b\" size=\"1 1 1\" static=\"true\" quat=\"1 1 0 0\"/>"), ":2: <box> 'b': attribute 'quat': has norm"},
  };
  int k = 0;
  for (const auto& c : cases) {
    const std::string path = "/tmp/impulse_bad_world_" + std::to_string(::getpid()) + "_" + std::to_string(k++) + ".xml";
    std::ofstream(path) << c.first;
    World w;
    std::string msg;
    try {
      load_world(path, w);
    } catch (const WorldFileError& e) {
      msg = e.what();
    }
    std::remove(path.c_str());
    INFO("file:\n" << c.first << "\nmessage: " << msg);
    CHECK(msg.rfind(path + c.second, 0) == 0);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(w.collision().num_objects() == 0);  // phase 1 failed: the World is untouched
  }
}

TEST_CASE("settings checks are shared by the API, with the documented bounds", "[world][settings]") {
  World w;
  const Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
  CHECK_THROWS_WITH(w.set_time_step(1e-300), Catch::Contains("dt must be in [1e-07, 0.1] s, got 1e-300"));
  CHECK_THROWS_WITH(w.set_time_step(nan), Catch::Contains("dt must be in"));
  CHECK_THROWS_WITH(w.set_time(nan), Catch::Contains("time must be finite and >= 0 s, got nan"));
  CHECK_THROWS_WITH(w.set_time(-1), Catch::Contains("time must be finite"));
  CHECK_THROWS_WITH(w.set_contact_margin(std::numeric_limits<Scalar>::infinity()), Catch::Contains("margin must be in [0, 1] m, got inf"));
  CHECK_THROWS_WITH(w.set_max_contacts(0), Catch::Contains("max_contacts must be in [1, 100000], got 0"));
  CHECK(w.time_step() == 1e-3);
  CHECK(w.time() == 0);
  w.set_time_step(kMinTimeStep);
  w.set_time_step(kMaxTimeStep);
  w.set_time(2.5);
  CHECK(w.time() == 2.5);
  // a static box must have a rotation matrix for a pose
  Mat3 shear = Mat3::Identity();
  shear(0, 1) = 0.3;
  CHECK_THROWS_WITH(w.add_static_box("b", SE3(shear, Vec3::Zero()), Vec3::Ones()),
                    Catch::Contains("static box 'b': pose rotation is not a rotation matrix"));
  CHECK_THROWS_WITH(w.add_static_box("m", SE3(-Mat3::Identity(), Vec3::Zero()), Vec3::Ones()),
                    Catch::Contains("det -1"));
  CHECK(w.collision().num_objects() == 0);
}

TEST_CASE("solver registry: names, settings validation, and settings read back from instances", "[world][settings]") {
  CHECK(join_solver_names() == "bisection, pgs, lm, noslip");
  CHECK(contact_solver_names().size() == solver_registry().size());
  for (const SolverEntry& e : solver_registry()) {
    SolverSettings s;
    s.name = e.name;
    auto solver = make_contact_solver(s);
    CHECK(std::string(solver->name()) == e.name);
    CHECK(is_registered_solver(*solver));
    CHECK(solver_settings_of(*solver).name == e.name);
  }
  SolverSettings s;
  s.name = "pgs";
  s.pgs.alpha = 0.3;
  s.pgs.max_iterations = 17;
  const SolverSettings back = solver_settings_of(*make_contact_solver(s));
  CHECK(back.pgs.alpha == 0.3);
  CHECK(back.pgs.max_iterations == 17);
  s.pgs.tolerance = -1;
  CHECK_THROWS_WITH(make_contact_solver(s), Catch::Contains("solver 'pgs': tolerance must be finite and > 0, got -1"));
  SolverSettings l;
  l.name = "lm";
  l.lm.proximal = 1;
  CHECK_THROWS_WITH(make_contact_solver(l), Catch::Contains("solver 'lm': proximal must be in [0, 1), got 1"));
  l.lm.proximal = 0;
  CHECK(solver_settings_of(*make_contact_solver(l)).lm.proximal == 0);
  SolverSettings b;
  b.bisection.qp_start = -1;
  CHECK_THROWS_WITH(make_contact_solver(b), Catch::Contains("solver 'bisection': qp_start must be in [0, 1e8], got -1"));
  b.bisection.qp_start = 0;
  CHECK(solver_settings_of(*make_contact_solver(b)).bisection.qp_start == 0);
  CHECK_THROWS_WITH(make_contact_solver("simplex"),
                    Catch::Contains("unknown contact solver 'simplex'; valid names are: bisection, pgs, lm, noslip"));
}
