// Recordings (docs/recording.md): what is written is what the state was (poses against an
// independent forward-kinematics query, contacts against the World's contact reports), the
// `every` subsampling, the scene, and the errors for files that are not recordings.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "impulse/core/error.hpp"
#include "impulse/record/recording.hpp"
#include "impulse/sensors/sensors.hpp"
#include "impulse/world/world_file.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

std::string temp_path(const std::string& name) { return "impulse_test_" + name + ".imprec"; }

// ANYmal standing under PD on the ground next to a free sphere and a static box: every kind of
// object, with contacts from the first steps on.
std::unique_ptr<World> make_world() {
  WorldDescription d = parse_world_file(impulse_test::source_path("models/worlds/anymal_stand.xml"));
  auto world = std::make_unique<World>();
  build_world(d, *world);
  world->add_static_box("crate", SE3(Mat3::Identity(), Vec3(2, 0, 0.25)), Vec3(0.5, 0.5, 0.5));
  world->add_sphere("ball", 0.1, 1.0).set_q((VecX(7) << 2, 0, 0.62, 1, 0, 0, 0).finished());
  return world;
}

}  // namespace

TEST_CASE("a recording reads back the poses, joint states, energies and contacts of every step", "[record]") {
  auto world = make_world();
  const std::string path = temp_path("roundtrip");
  const int steps = 120;
  std::vector<std::vector<SE3>> poses;  // [step] all bodies of all systems, from body_pose()
  std::vector<std::vector<ContactReport>> contacts;
  std::vector<Scalar> kinetic;
  {
    Recorder rec(path, *world);
    for (int k = 0; k < steps; ++k) {
      world->integrate();
      rec.record(*world);
      std::vector<SE3> p;
      for (const ArticulatedSystem* s : world->systems()) {
        for (Index b = 0; b < s->model().nb; ++b) p.push_back(s->body_pose(b));
      }
      poses.push_back(p);
      contacts.push_back(world->contact_reports());
      kinetic.push_back(world->systems()[0]->kinetic_energy());
    }
    rec.close();
    CHECK(rec.frames() == steps);
  }
  RecordingReader r(path);
  REQUIRE(r.num_frames() == static_cast<std::size_t>(steps));
  REQUIRE(r.systems().size() == 2);
  CHECK(r.dt() == world->time_step());
  CHECK(r.scene().find("\"crate\"") != std::string::npos);
  CHECK(r.scene().find("\"plane\"") != std::string::npos);
  bool saw_contacts = false;
  for (int k = 0; k < steps; ++k) {
    const RecordedFrame f = r.frame(static_cast<std::size_t>(k));
    CHECK(f.step == static_cast<std::uint64_t>(k + 1));
    CHECK(f.time == Approx(0.001 * (k + 1)).margin(1e-12));
    CHECK(f.step_us > 0);  // the Recorder turned the stage timers on (off by default)
    std::size_t i = 0;
    for (std::size_t s = 0; s < f.poses.size(); ++s) {
      for (const SE3& X : f.poses[s]) {
        // binary32: relative precision 6e-8 on metre-sized positions and unit quaternions
        CHECK((X.p - poses[k][i].p).norm() < 1e-6);
        CHECK((X.R - poses[k][i].R).norm() < 1e-6);
        ++i;
      }
    }
    CHECK(std::abs(f.kinetic[0] - kinetic[k]) <= 1e-6 * (1 + kinetic[k]));
    CHECK(f.q[0].size() == world->systems()[0]->nq());
    REQUIRE(f.contacts.size() == contacts[k].size());
    for (std::size_t c = 0; c < f.contacts.size(); ++c) {
      saw_contacts = true;
      CHECK((f.contacts[c].position - contacts[k][c].contact.position).norm() < 1e-6);
      CHECK((f.contacts[c].impulse - contacts[k][c].impulse).norm() < 1e-6 * (1 + contacts[k][c].impulse.norm()));
      CHECK(f.contacts[c].system_b == -1);  // ground and crate are static
    }
  }
  CHECK(saw_contacts);
  // the last frame's joint state is the World's final state
  const RecordedFrame last = r.frame(r.num_frames() - 1);
  CHECK((last.q[0] - world->systems()[0]->q()).cwiseAbs().maxCoeff() < 1e-6);
  CHECK((last.u[0] - world->systems()[0]->u()).cwiseAbs().maxCoeff() < 1e-5 * (1 + world->systems()[0]->u().norm()));
  std::remove(path.c_str());
}

TEST_CASE("a recording's plot series, dof series and frame ranges agree with its decoded frames", "[record]") {
  auto world = make_world();
  const std::string path = temp_path("series");
  {
    Recorder rec(path, *world);
    for (int k = 0; k < 60; ++k) {
      world->integrate();
      rec.record(*world);
    }
  }
  RecordingReader r(path);
  const std::size_t n = r.num_frames();
  REQUIRE(n == 60);
  const RecordingSeries s = r.series();
  REQUIRE(s.time.size() == n);
  const int system = 0, iq = 9, iv = 8;  // a leg joint of ANYmal
  const DofSeries d = r.dof_series(system, iq, iv);
  REQUIRE(d.q.size() == n);
  bool pressed = false;
  for (std::size_t k = 0; k < n; ++k) {
    const RecordedFrame f = r.frame(k);
    CHECK(s.time[k] == f.time);
    CHECK(s.kinetic[k] == Approx(f.kinetic[0] + f.kinetic[1]).epsilon(1e-6));
    CHECK(s.potential[k] == Approx(f.potential[0] + f.potential[1]).epsilon(1e-6));
    CHECK(s.contacts[k] == static_cast<float>(f.contacts.size()));
    CHECK(s.iterations[k] == static_cast<float>(f.iterations));
    CHECK(s.residual[k] == f.residual);
    CHECK(s.max_penetration[k] == f.max_penetration);
    double fn = 0;
    for (const RecordedContact& c : f.contacts) fn += c.impulse.dot(c.normal);
    CHECK(s.normal_force[k] == Approx(fn / r.dt()).epsilon(1e-5).margin(1e-3));
    pressed = pressed || fn > 0;
    CHECK(d.q[k] == static_cast<float>(f.q[system][iq]));
    CHECK(d.u[k] == static_cast<float>(f.u[system][iv]));
    CHECK(d.tau[k] == static_cast<float>(f.tau[system][iv]));
  }
  CHECK(pressed);
  // a range of frames is the file's bytes from the first frame's start to the last one's end
  const auto all = r.frames_bytes(0, n);
  CHECK(all.first == r.frame_data(0));
  CHECK(all.first + all.second == r.bytes().data() + r.bytes().size());
  const auto mid = r.frames_bytes(10, 3);
  CHECK(mid.second == std::size_t(r.frame_size(10)) + r.frame_size(11) + r.frame_size(12));
  CHECK_THROWS_WITH(r.frames_bytes(58, 3), Catch::Contains("frames 58 .. 61 are not inside its 60 frames"));
  CHECK_THROWS_WITH(r.frames_bytes(0, 0), Catch::Contains("not inside"));
  CHECK_THROWS_WITH(r.dof_series(2, 0, 0), Catch::Contains("no system 2 (it has 2)"));
  CHECK_THROWS_WITH(r.dof_series(0, 19, 0), Catch::Contains("has nq 19 and nv 18, not iq 19"));
  CHECK_THROWS_WITH(r.dof_series(0, 0, -1), Catch::Contains("not iq 0, iv -1"));
  std::remove(path.c_str());
}

TEST_CASE("a recording keeps every K-th step and drops a truncated last frame", "[record]") {
  auto world = make_world();
  const std::string path = temp_path("every");
  {
    Recorder rec(path, *world, 10);
    for (int k = 0; k < 95; ++k) {
      world->integrate();
      rec.record(*world);
    }
    CHECK(rec.frames() == 9);
  }
  RecordingReader r(path);
  REQUIRE(r.num_frames() == 9);
  CHECK(r.frame(0).step == 10);
  CHECK(r.frame(8).step == 90);
  // (a copy: the reader maps the file, which is rewritten below)
  const std::string bytes(r.bytes());
  const std::size_t full = bytes.size();
  const std::uint32_t last = r.frame_size(8);
  // a run killed mid-frame: the partial frame is dropped, the others stay readable
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(full - 5));
  RecordingReader cut(path);
  CHECK(cut.num_frames() == 8);
  CHECK(cut.dropped_bytes() == last - 5);
  std::remove(path.c_str());
}

TEST_CASE("reading a file that is not a recording names the file and the problem", "[record]") {
  const std::string path = temp_path("bad");
  std::ofstream(path, std::ios::binary) << "this is not a recording at all, not even close";
  CHECK_THROWS_WITH(RecordingReader(path), Catch::Contains(path) && Catch::Contains("bad magic"));
  {
    auto world = make_world();
    Recorder rec(path, *world);
    world->integrate();
    rec.record(*world);
  }
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(8);
    const std::uint32_t v = 99;
    f.write(reinterpret_cast<const char*>(&v), 4);
  }
  CHECK_THROWS_WITH(RecordingReader(path), Catch::Contains("version 99 is not supported"));
  {
    // restore the version, then give system 0 an absurd body count: sizes must not wrap around
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    const std::uint32_t v = record::kVersion, nb = 0xFFFFFFFFu;
    f.seekp(8);
    f.write(reinterpret_cast<const char*>(&v), 4);
    f.seekp(record::kHeaderBytes);
    f.write(reinterpret_cast<const char*>(&nb), 4);
  }
  CHECK_THROWS_WITH(RecordingReader(path), Catch::Contains("out of bounds") && Catch::Contains("(rule 7)"));
  CHECK_THROWS_WITH(RecordingReader("no/such/dir/x.imprec"), Catch::Contains("no/such/dir/x.imprec"));
  auto world = make_world();
  CHECK_THROWS_WITH(Recorder("no/such/dir/x.imprec", *world), Catch::Contains("cannot open for writing"));
  CHECK_THROWS_AS(Recorder(path, *world, 0), InvalidArgument);
  std::remove(path.c_str());
}

TEST_CASE("a recording carries the readings of the sensors given to it, as they were at each step", "[record]") {
  auto world = make_world();
  ArticulatedSystem& robot = world->system("anymal");
  for (int k = 0; k < 500; ++k) world->integrate();  // standing still
  Imu imu(*world, robot, "base");
  JointSensor joints(robot);
  ContactSensor foot(*world, robot, "LF_SHANK");
  ForceTorqueSensor hip(*world, robot, "LF_HAA");
  HeightScan scan(*world, robot, "base", HeightScan::grid(0.4, 0.2, 0.2));  // 3 x 2 rays onto the ground
  RecordedSensors sensors;
  sensors.add("imu", imu);
  sensors.add("joints", joints);
  sensors.add("foot", foot);
  sensors.add("hip", hip);
  sensors.add("scan", scan);
  CHECK_THROWS_AS(sensors.add("imu", imu), InvalidArgument);  // names are unique
  const std::uint32_t per_frame = 6 + 3 * 12 + 7 + 6 + 3 * 6;
  REQUIRE(sensors.floats() == per_frame);
  // IMPULSE_KEEP_RECORDING: write there and keep the file (tests/record/test_recording_python.py
  // reads it with the Python reader)
  const char* keep = std::getenv("IMPULSE_KEEP_RECORDING");
  const std::string path = keep ? std::string(keep) : temp_path("sensors");
  std::vector<std::vector<float>> expected;
  {
    Recorder rec(path, *world, 1, sensors);
    for (int k = 0; k < 50; ++k) {
      world->integrate();
      imu.update();
      joints.update();
      foot.update();
      hip.update();
      scan.update();
      rec.record(*world);
      std::vector<float> e;
      for (const Vec3* v : {&imu.linear_acceleration(), &imu.angular_velocity()}) {
        for (int i = 0; i < 3; ++i) e.push_back(static_cast<float>((*v)[i]));
      }
      for (const VecX* v : {&joints.position(), &joints.velocity(), &joints.torque()}) {
        for (Index i = 0; i < v->size(); ++i) e.push_back(static_cast<float>((*v)[i]));
      }
      e.push_back(static_cast<float>(foot.count()));
      for (const Vec3* v : {&foot.force(), &foot.normal(), &hip.force(), &hip.torque()}) {
        for (int i = 0; i < 3; ++i) e.push_back(static_cast<float>((*v)[i]));
      }
      for (const Vec3& p : scan.points()) {
        for (int i = 0; i < 3; ++i) e.push_back(static_cast<float>(p[i]));
      }
      expected.push_back(e);
    }
    rec.close();
  }
  RecordingReader r(path);
  CHECK(r.version() == record::kVersion);
  REQUIRE(r.sensor_floats() == per_frame);
  REQUIRE(r.num_frames() == expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const RecordedFrame f = r.frame(k);
    REQUIRE(f.sensors.size() == per_frame);
    CHECK(f.sensors == expected[k]);  // bit for bit (float)
    for (const RecordedContact& c : f.contacts) CHECK(c.normal.norm() == Approx(1).epsilon(1e-6));  // still aligned
  }
  const RecordedFrame last = r.frame(expected.size() - 1);
  CHECK(last.sensors[2] == Approx(9.81).margin(0.05));  // the standing robot's IMU reads gravity
  CHECK(r.scene().find("\"sensors\":[{\"name\":\"imu\",\"type\":\"imu\",\"fields\":[\"acc_x\"") != std::string::npos);
  CHECK(r.scene().find("\"q:LF_HAA\"") != std::string::npos);
  if (!keep) std::remove(path.c_str());
}

TEST_CASE("the scene is UTF-8 JSON with numbers to 9 digits, also for names that are not UTF-8", "[record]") {
  World world;
  world.add_ground();
  world.set_gravity(Vec3(0, 0, -9.80665123456789));
  world.add_sphere("ball\xff", 0.1, 1.0);  // a Latin-1 byte: its name shows U+FFFD in its place
  const std::string path = temp_path("scene_text");
  {
    Recorder rec(path, world);
    world.integrate();
    rec.record(world);
    rec.close();
  }
  const RecordingReader r(path);  // checks the scene: valid UTF-8 JSON (rule 8)
  CHECK(r.scene().find("\"name\":\"ball\xEF\xBF\xBD\"") != std::string::npos);
  CHECK(r.scene().find("\"gravity\":[0.0,0.0,-9.80665123]") != std::string::npos);
  std::remove(path.c_str());
}
