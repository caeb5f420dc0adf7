// Threading rules (docs/threading.md): one World, VecWorld or LocomotionTask is used by one thread
// at a time. A call of a second thread while a first one steps or changes the object is refused
// with ConcurrentUseError and changes nothing; the object stays usable; calls nest on one thread;
// separate Worlds step on separate threads. Batch sizes beyond the machine are refused up front.
// CI also runs this file under ThreadSanitizer.
#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "impulse/batch/limits.hpp"
#include "impulse/batch/vec_world.hpp"
#include "impulse/core/error.hpp"
#include "impulse/sensors/sensors.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

const std::string kThreadingStand = impulse_test::source_path("models/worlds/anymal_stand.xml");
const std::string kBoxes = impulse_test::source_path("models/worlds/box_on_ground.xml");

// Runs `f` on another thread and returns whether it threw ConcurrentUseError (other exceptions
// propagate as a test failure).
template <class F>
bool refused_on_other_thread(F f) {
  bool refused = false;
  std::thread t([&] {
    try {
      f();
    } catch (const ConcurrentUseError&) {
      refused = true;
    }
  });
  t.join();
  return refused;
}

}  // namespace

TEST_CASE("a World held by one thread refuses every changing call of another, changes nothing, and stays usable",
          "[world][threading]") {
  auto w = load_world(kThreadingStand);
  ArticulatedSystem& robot = w->system(0);
  for (int k = 0; k < 5; ++k) w->integrate();
  const WorldState before = w->save_state();
  const VecX q = robot.q();
  {
    // what a stepping thread holds (the Python bindings hold it across a GIL-free step)
    const UseMarker::Scope held(w->use_marker(), "World", "integrate");
    CHECK(w->use_marker().busy());
    CHECK(refused_on_other_thread([&] { w->integrate(); }));
    CHECK(refused_on_other_thread([&] { w->integrate1(); }));
    CHECK(refused_on_other_thread([&] { w->integrate2(); }));
    CHECK(refused_on_other_thread([&] { robot.set_q(q); }));
    CHECK(refused_on_other_thread([&] { robot.set_pd_targets(robot.q_target(), robot.u_target()); }));
    CHECK(refused_on_other_thread([&] { robot.set_external_torque(0, Vec3(1, 0, 0)); }));
    CHECK(refused_on_other_thread([&] { (void)robot.mass_matrix(); }));
    CHECK(refused_on_other_thread([&] { (void)robot.frame_pose("LF_FOOT"); }));
    CHECK(refused_on_other_thread([&] { w->set_gravity(Vec3(0, 0, -1)); }));
    CHECK(refused_on_other_thread([&] { w->set_time_step(0.002); }));
    CHECK(refused_on_other_thread([&] { w->restore_state(before); }));
    CHECK(refused_on_other_thread([&] { w->reset(); }));
    CHECK(refused_on_other_thread([&] { w->add_ground(1.0); }));
    CHECK(refused_on_other_thread([&] { (void)w->save_state(); }));
    CHECK(refused_on_other_thread([&] { (void)w->contact_reports(); }));
    CHECK(refused_on_other_thread([&] { (void)w->clone(); }));
    // the holding thread itself may call everything (nested scopes)
    CHECK(w->integrate().ok());
    w->restore_state(before);
  }
  CHECK_FALSE(w->use_marker().busy());
  // nothing of the refused calls took effect
  const WorldState after = w->save_state();
  CHECK(after.time == before.time);
  CHECK(after.systems[0].q == before.systems[0].q);
  CHECK(after.systems[0].has_f_ext == before.systems[0].has_f_ext);
  CHECK(w->gravity() == Vec3(0, 0, -9.81));
  CHECK(w->time_step() == 0.001);
  // and the World is usable from any thread once released
  CHECK_FALSE(refused_on_other_thread([&] {
    for (int k = 0; k < 5; ++k) REQUIRE(w->integrate().ok());
  }));
  CHECK(w->time() == Approx(before.time + 0.005));
}

TEST_CASE("the error of a refused call names the object and the call", "[world][threading]") {
  auto w = load_world(kBoxes);
  const UseMarker::Scope held(w->use_marker(), "World", "integrate");
  std::string message;
  std::thread t([&] {
    try {
      w->integrate();
    } catch (const ConcurrentUseError& e) {
      message = e.what();
    }
  });
  t.join();
  CHECK_THAT(message, Catch::Contains("World.integrate") && Catch::Contains("another thread") &&
                          Catch::Contains("docs/threading.md"));
}

TEST_CASE("two threads stepping one World: every step is taken or refused, never both at once", "[world][threading]") {
  auto w = load_world(kThreadingStand);
  constexpr int kSteps = 400;
  std::atomic<int> taken{0}, refused{0};
  std::atomic<bool> start{false};
  auto run = [&] {
    while (!start.load()) std::this_thread::yield();
    for (int k = 0; k < kSteps; ++k) {
      try {
        w->integrate();
        ++taken;
      } catch (const ConcurrentUseError&) {
        ++refused;
      }
      try {  // a reader between the steps
        (void)w->system(0).center_of_mass();
      } catch (const ConcurrentUseError&) {
      }
    }
  };
  std::thread a(run), b(run);
  start = true;
  a.join();
  b.join();
  CHECK(taken + refused == 2 * kSteps);
  // the time counts exactly the steps taken: no step was lost or doubled by a race
  CHECK(w->time() == Approx(taken * 0.001).epsilon(1e-12));
  CHECK(w->system(0).q().allFinite());
  CHECK_FALSE(w->use_marker().busy());
}

TEST_CASE("separate Worlds step on separate threads as they do alone", "[world][threading]") {
  auto a = load_world(kThreadingStand), b = load_world(kThreadingStand), ref = load_world(kThreadingStand);
  std::thread ta([&] {
    for (int k = 0; k < 300; ++k) a->integrate();
  });
  std::thread tb([&] {
    for (int k = 0; k < 300; ++k) b->integrate();
  });
  ta.join();
  tb.join();
  for (int k = 0; k < 300; ++k) ref->integrate();
  CHECK(a->system(0).q() == ref->system(0).q());
  CHECK(b->system(0).q() == ref->system(0).q());
}

TEST_CASE("a sensor's update is refused while another thread steps its World", "[world][threading][sensors]") {
  auto w = load_world(kThreadingStand);
  ArticulatedSystem& robot = w->system(0);
  JointSensor joints(robot);
  ContactSensor foot(*w, robot, "LF_SHANK");
  w->integrate();
  const UseMarker::Scope held(w->use_marker(), "World", "integrate");
  CHECK(refused_on_other_thread([&] { joints.update(); }));
  CHECK(refused_on_other_thread([&] { foot.update(); }));
  joints.update();  // the holding thread may
}

TEST_CASE("VecWorld refuses a second thread while one steps it, and both orders give the same worlds",
          "[batch][threading]") {
  batch::VecWorld vec(parse_world_file(kThreadingStand), 4, 2);
  {
    const UseMarker::Scope held(vec.use_marker(), "VecWorld", "integrate");
    CHECK(refused_on_other_thread([&] { vec.integrate(1); }));
    batch::RowMatX q(4, 19);
    CHECK(refused_on_other_thread([&] { vec.get_q(0, q); }));
    CHECK(refused_on_other_thread([&] { (void)vec.world(0); }));
  }
  std::atomic<int> taken{0};
  auto run = [&] {
    for (int k = 0; k < 50; ++k) {
      try {
        vec.integrate(1);
        ++taken;
      } catch (const ConcurrentUseError&) {
      }
    }
  };
  std::thread a(run), b(run);
  a.join();
  b.join();
  auto ref = load_world(kThreadingStand);
  for (int k = 0; k < taken; ++k) ref->integrate();
  for (Index i = 0; i < vec.size(); ++i) CHECK(vec.world(i).system(0).q() == ref->system(0).q());
}

TEST_CASE("batch sizes beyond the machine are refused up front, naming the limit", "[batch][threading]") {
  const WorldDescription d = parse_world_file(kBoxes);
  CHECK_THROWS_AS(batch::VecWorld(d, 2, 1000000), InvalidArgument);
  CHECK_THROWS_WITH(batch::VecWorld(d, 2, 1000000), Catch::Contains("num_threads 1000000 exceeds the limit of 256"));
  CHECK_THROWS_AS(batch::VecWorld(d, 2, -1), InvalidArgument);
  CHECK_THROWS_WITH(batch::VecWorld(d, 2, -1), Catch::Contains("num_threads"));
  // 2e9 worlds would need far more memory than any machine: refused after the first is built
  CHECK_THROWS_AS(batch::VecWorld(d, 2000000000, 1), InvalidArgument);
  CHECK_THROWS_WITH(batch::VecWorld(d, 2000000000, 1), Catch::Contains("more than this machine's"));
  CHECK(batch::physical_memory_bytes() > 0);
  CHECK_THROWS_AS(batch::check_batch_memory("VecWorld", 1000, batch::physical_memory_bytes()), InvalidArgument);
  CHECK_THROWS_WITH(batch::check_batch_memory("VecWorld", 1000, batch::physical_memory_bytes()), Catch::Contains("1000 environments need about"));
  CHECK_NOTHROW(batch::check_batch_memory("VecWorld", 1, 1024));
  // the floor assumed where the heap cannot be measured is below what an empty World takes
  const std::size_t before = batch::heap_bytes_in_use();
  auto empty = std::make_unique<World>();
  const std::size_t after = batch::heap_bytes_in_use();
  if (after > before) CHECK(after - before >= batch::kMinEnvironmentBytes);
}
