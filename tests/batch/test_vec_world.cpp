// VecWorld: N copies of a world file stepped in parallel agree bit for bit with one World stepped
// alone, whatever the thread count; the gather/scatter calls check shapes and change nothing on
// a bad row; integrate() allocates nothing.
#include <catch2/catch.hpp>

#include "impulse/batch/vec_world.hpp"
#include "impulse/core/error.hpp"
#include "support/alloc_counter.hpp"

using namespace impulse;
using impulse::batch::RowMatX;
using impulse::batch::VecWorld;

namespace {
const std::string kStand = std::string(IMPULSE_SOURCE_DIR) + "/models/worlds/anymal_stand.xml";
}

TEST_CASE("VecWorld equals single Worlds bit for bit with 1 and 2 threads", "[batch]") {
  const Index n = 4, steps = 200;
  VecWorld one(parse_world_file(kStand), n, 1), two(parse_world_file(kStand), n, 2);
  // different initial velocities per world, so the worlds differ from each other
  RowMatX q(n, 19), u = RowMatX::Zero(n, 18);
  one.get_q(0, q);
  for (Index i = 0; i < n; ++i) u(i, 0) = 0.1 * i, u(i, 5) = -0.2 * i;
  one.set_state(0, q, u);
  two.set_state(0, q, u);
  one.integrate(steps);
  two.integrate(steps);
  RowMatX q1(n, 19), q2(n, 19);
  one.get_q(0, q1);
  two.get_q(0, q2);
  CHECK(q1 == q2);  // bit-identical
  for (Index i = 0; i < n; ++i) {
    auto w = load_world(kStand);
    w->system(0).set_state(q.row(i).transpose(), u.row(i).transpose());
    for (Index k = 0; k < steps; ++k) w->integrate();
    CHECK(VecX(q1.row(i).transpose()) == w->system(0).q());
  }
  // the worlds really differ (the test is not vacuous)
  CHECK(q1(0, 0) != q1(3, 0));
}

// The worlds share their Models and every thread's step scratch (StepWorkspace): one more
// environment costs its own data only (state, inputs, warm start, last contacts, collision
// objects), at most 32 KiB for ANYmal on the ground after it has stepped and grown its buffers.
TEST_CASE("one more VecWorld environment costs at most 32 KiB", "[batch]") {
  if (!test::alloc_counter_available()) return;
  const WorldDescription d = parse_world_file(kStand);
  auto held = [&](Index n) {
    test::alloc_counter_start();
    auto vec = std::make_unique<VecWorld>(d, n, 1);
    vec->integrate(50);
    test::alloc_counter_stop();
    const long bytes = test::alloc_counter_bytes();
    vec.reset();
    return bytes;
  };
  const long small = held(8), large = held(72);
  const double per_environment = static_cast<double>(large - small) / 64;
  INFO("bytes per environment: " << per_environment);
  CHECK(per_environment > 1024);  // (the measure sees the environments' memory at all)
  CHECK(per_environment <= 32 * 1024);
}

TEST_CASE("VecWorld checks shapes and indices; a bad row changes nothing", "[batch]") {
  VecWorld vec(parse_world_file(kStand), 3, 1);
  RowMatX q(3, 19), u = RowMatX::Zero(3, 18), wrong(2, 19);
  vec.get_q(0, q);
  CHECK_THROWS_WITH(vec.get_q(0, wrong), Catch::Contains("expected an array of shape (3, 19), got (2, 19)"));
  CHECK_THROWS_WITH(vec.get_q(1, q), Catch::Contains("system index 1 out of range"));
  CHECK_THROWS_AS(vec.world(3), InvalidArgument);
  CHECK_THROWS_AS(VecWorld(parse_world_file(kStand), 0, 1), InvalidArgument);
  RowMatX bad = q;
  bad(0, 2) += 0.1;         // row 0 valid and different
  bad.row(2).segment<4>(3).setZero();  // row 2: zero quaternion
  CHECK_THROWS_WITH(vec.set_state(0, bad, u), Catch::Contains("row 2"));
  RowMatX after(3, 19);
  vec.get_q(0, after);
  CHECK(after == q);
  bad(1, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(vec.set_state(0, bad, u), Catch::Contains("row 1 is not finite"));
}

// A rejected set_state leaves every world as it was, including the free-flight history that a
// successful set_state drops (the two-step update needs the last step's acceleration): the next
// steps equal those of a VecWorld that never saw the call, bit for bit.
TEST_CASE("VecWorld::set_state with a bad row keeps the other worlds' flight history", "[batch]") {
  const WorldDescription d = parse_world_string(
      "<world dt=\"0.001\" gravity=\"0 0 -9.81\">"
      "<box name=\"b\" size=\"0.4 0.3 0.2\" mass=\"1\" pos=\"0 0 10\" rpy=\"0.2 0.1 0.3\"/></world>",
      "spinning_box.xml");
  const Index n = 3;
  VecWorld a(d, n, 1), b(d, n, 1), c(d, n, 1);
  RowMatX q(n, 7), u = RowMatX::Zero(n, 6);
  a.get_q(0, q);
  for (Index i = 0; i < n; ++i) u(i, 3) = 3 + i, u(i, 4) = -2, u(i, 5) = 1;  // spinning about no principal axis
  for (VecWorld* v : {&a, &b, &c}) {
    v->set_state(0, q, u);
    v->integrate(5);
  }
  RowMatX now_q(n, 7), now_u(n, 6);
  a.get_q(0, now_q);
  a.get_u(0, now_u);
  RowMatX bad = now_q;
  bad.row(2).segment<4>(3) *= 2;  // row 2: not a unit quaternion; rows 0 and 1 valid
  CHECK_THROWS_WITH(a.set_state(0, bad, now_u), Catch::Contains("row 2"));
  c.set_state(0, now_q, now_u);  // the same state, set: the history is dropped
  for (VecWorld* v : {&a, &b, &c}) v->integrate(5);
  RowMatX ua(n, 6), ub(n, 6), uc(n, 6);
  a.get_u(0, ua);
  b.get_u(0, ub);
  c.get_u(0, uc);
  CHECK(ua == ub);
  CHECK(uc != ub);  // (the history changes the bits: the check above can fail)
}

TEST_CASE("VecWorld::integrate allocates nothing after the first steps", "[batch]") {
  if (!test::alloc_counter_available()) return;
  VecWorld vec(parse_world_file(kStand), 4, 2);
  vec.integrate(20);
  test::alloc_counter_start();
  vec.integrate(20);
  CHECK(test::alloc_counter_stop() == 0);
}

TEST_CASE("the worlds of a VecWorld, and clones, share one immutable Model", "[batch]") {
  VecWorld vec(parse_world_file(kStand), 3, 2);
  const auto& shared = vec.world(0).system(0).shared_model();
  REQUIRE(shared != nullptr);
  for (Index i = 1; i < 3; ++i) CHECK(vec.world(i).system(0).shared_model().get() == shared.get());
  const auto copy = vec.world(1).clone();
  CHECK(copy->system(0).shared_model().get() == shared.get());
  // a World built from a Model value holds its own copy
  World w;
  const ArticulatedSystem& own = w.add_articulated_system(*shared);
  CHECK(own.shared_model().get() != shared.get());
  CHECK(own.model().nv == shared->nv);
  // a null Model is refused and adds nothing
  CHECK_THROWS_WITH(w.add_articulated_system(std::shared_ptr<const Model>()),
                    Catch::Contains("add_articulated_system: the Model is null"));
  CHECK(w.num_systems() == 1);
}
