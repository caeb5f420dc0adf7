// WorldState: save / restore / reset / clone / serialization reproduce trajectories bit for bit,
// and a state from another description is rejected with a clear error, changing nothing.
#include <cmath>
#include <cstring>
#include <random>
#include <limits>

#include "impulse/core/error.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"
#include "support/alloc_counter.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

const std::string kStateAnymal = impulse_test::source_path("models/anymal/anymal.urdf");

// ANYmal under PD control standing on the ground (plane contacts, limit rows), and free bodies
// that hit each other (broadphase pairs: box-box, sphere-capsule) with restitution, so the
// trajectory exercises warm starts of contacts and of limits.
void state_build(World& w) {
  w.add_ground();
  w.set_material_pair("rubber", "default", 0.9, 0.3);
  ArticulatedSystem& robot = w.add_articulated_system(kStateAnymal);
  VecX q = robot.model().neutral_configuration();
  q[2] = 0.62;
  const Scalar hfe[4] = {0.4, 0.4, -0.4, -0.4}, kfe[4] = {-0.8, -0.8, 0.8, 0.8};
  for (int leg = 0; leg < 4; ++leg) {
    q[7 + 3 * leg + 1] = hfe[leg];
    q[7 + 3 * leg + 2] = kfe[leg];
  }
  robot.set_q(q);
  VecX kp = VecX::Zero(robot.nv()), kd = VecX::Zero(robot.nv());
  kp.tail(12).setConstant(80);
  kd.tail(12).setConstant(2);
  robot.set_pd_gains(kp, kd);
  robot.set_pd_targets(q, VecX::Zero(robot.nv()));
  ArticulatedSystem& a = w.add_box("a", Vec3(0.2, 0.2, 0.2), 1.0, "rubber");
  ArticulatedSystem& b = w.add_box("b", Vec3(0.2, 0.2, 0.2), 1.0);
  ArticulatedSystem& s = w.add_sphere("s", 0.1, 0.5, "rubber");
  ArticulatedSystem& c = w.add_capsule("c", 0.05, 0.3, 0.4);
  auto place = [](ArticulatedSystem& x, const Vec3& p, const Vec3& v) {
    VecX qx = x.q(), ux = VecX::Zero(6);
    qx.head<3>() = p;
    ux.head<3>() = v;
    x.set_state(qx, ux);
  };
  place(a, Vec3(2, 0, 0.1), Vec3(0, 0, 0));
  place(b, Vec3(2.05, 0.02, 0.5), Vec3(0, 0, -1));
  place(s, Vec3(-2, 0, 0.3), Vec3(0.5, 0, 0));
  place(c, Vec3(-1.6, 0, 0.05), Vec3(0, 0, 0));
}

using StateTrajectory = std::vector<VecX>;

// Steps n times and records the state of every system (q then u), and the time.
StateTrajectory state_run(World& w, int n) {
  StateTrajectory t;
  for (int k = 0; k < n; ++k) {
    w.integrate();
    VecX x(1);
    x[0] = w.time();
    for (ArticulatedSystem* s : w.systems()) {
      VecX y(x.size() + s->nq() + s->nv());
      y << x, s->q(), s->u();
      x = y;
    }
    t.push_back(x);
  }
  return t;
}

// Bitwise equality (also of the signs of zeros), not tolerance.
bool identical(const StateTrajectory& a, const StateTrajectory& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k].size() != b[k].size() ||
        std::memcmp(a[k].data(), b[k].data(), sizeof(Scalar) * static_cast<std::size_t>(a[k].size())) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("save at 100, step 200, restore, step 200: bit-identical; also into a second World and by reset", "[world][state]") {
  World w;
  state_build(w);
  const StateTrajectory head = state_run(w, 100);
  const WorldState saved = w.save_state();
  const StateTrajectory first = state_run(w, 200);
  // the scene has contacts, limits and collisions between free bodies in the recorded window
  CHECK(w.save_state().cache.contacts.size() > 4);

  SECTION("restore into the same World") {
    w.restore_state(saved);
    CHECK(w.time() == saved.time);
    CHECK(identical(state_run(w, 200), first));
  }
  SECTION("restore into a second World built from the same description") {
    World w2;
    state_build(w2);
    state_run(w2, 7);  // a different history: its cache and state are overwritten
    w2.restore_state(saved);
    CHECK(identical(state_run(w2, 200), first));
  }
  SECTION("the warm-start cache is part of the state: restoring q, u and time alone diverges") {
    World w2;
    state_build(w2);
    for (std::size_t i = 0; i < saved.systems.size(); ++i) {
      w2.system(static_cast<Index>(i)).set_state(saved.systems[i].q, saved.systems[i].u);
    }
    w2.set_time(saved.time);
    CHECK_FALSE(identical(state_run(w2, 200), first));
  }
  SECTION("reset() reproduces the first run from its start") {
    w.reset();
    CHECK(w.time() == 0);
    StateTrajectory again = state_run(w, 100);
    CHECK(identical(again, head));
    CHECK(identical(state_run(w, 200), first));
  }
  SECTION("an explicit mark replaces the automatic initial state") {
    w.restore_state(saved);
    w.mark_initial_state();
    state_run(w, 50);
    w.reset();
    CHECK(identical(state_run(w, 200), first));
  }
  SECTION("serialization round trip restores the same trajectory") {
    const std::string bytes = serialize_state(saved);
    const WorldState back = deserialize_state(bytes);
    CHECK(serialize_state(back) == bytes);
    World w2;
    state_build(w2);
    w2.restore_state(back);
    CHECK(identical(state_run(w2, 200), first));
  }
  SECTION("clone copies description and state") {
    w.restore_state(saved);
    std::unique_ptr<World> c = w.clone();
    CHECK(identical(state_run(*c, 200), first));
    CHECK(identical(state_run(w, 200), first));  // the original is untouched by its clone's steps
  }
}

TEST_CASE("WorldState carries inputs: torque, PD targets, pending external forces", "[world][state]") {
  World w;
  state_build(w);
  state_run(w, 20);
  ArticulatedSystem& robot = w.system(0);
  robot.set_generalized_force(VecX::Constant(robot.nv(), 0.5));
  robot.set_external_force(0, Vec3(30, 0, 0), robot.body_pose(0).p);
  const WorldState saved = w.save_state();
  const StateTrajectory first = state_run(w, 50);
  // change every input, then restore
  robot.set_generalized_force(VecX::Zero(robot.nv()));
  robot.set_pd_gains(VecX::Zero(robot.nv()), VecX::Zero(robot.nv()));
  w.restore_state(saved);
  CHECK(robot.generalized_force()[3] == 0.5);
  CHECK(robot.kp()[8] == 80);
  CHECK(identical(state_run(w, 50), first));
}

TEST_CASE("restore_state rejects a state of another description and changes nothing", "[world][state]") {
  World w;
  state_build(w);
  state_run(w, 10);
  const WorldState saved = w.save_state();

  World other;
  other.add_ground();
  other.add_sphere("s", 0.1, 1.0);
  const VecX q0 = other.system(0).q();
  CHECK_THROWS_AS(other.restore_state(saved), InvalidArgument);
  CHECK_THROWS_WITH(other.restore_state(saved), Catch::Contains("restore_state: the state is of a world with 5 systems"));
  CHECK(other.system(0).q() == q0);
  CHECK(other.time() == 0);

  World renamed;
  renamed.add_ground();
  renamed.add_sphere("t", 0.1, 1.0);
  World one;
  one.add_ground();
  one.add_sphere("s", 0.1, 1.0);
  one.integrate();
  CHECK_THROWS_WITH(renamed.restore_state(one.save_state()), Catch::Contains("system 0 't': the state names it 's'"));

  WorldState bad = saved;
  bad.systems[1].q[0] = std::numeric_limits<Scalar>::quiet_NaN();
  CHECK_THROWS_AS(w.restore_state(bad), InvalidArgument);
  CHECK_THROWS_WITH(w.restore_state(bad), Catch::Contains("q has the wrong size or is not finite"));
  bad = saved;
  bad.systems[1].u_target.resize(2);
  CHECK_THROWS_WITH(w.restore_state(bad), Catch::Contains("u_target has the wrong size"));
  bad = saved;
  bad.cache.limits.push_back({0, 999, 1, 0});
  CHECK_THROWS_AS(w.restore_state(bad), InvalidArgument);
  CHECK_THROWS_WITH(w.restore_state(bad), Catch::Contains("dof 999"));
}

TEST_CASE("deserialize_state rejects corrupt bytes with a clear error", "[world][state]") {
  World w;
  state_build(w);
  state_run(w, 10);
  const std::string bytes = serialize_state(w.save_state());
  CHECK(bytes.substr(0, 4) == "IMPS");
  CHECK_THROWS_AS(deserialize_state(""), StateFormatError);
  CHECK_THROWS_WITH(deserialize_state(""), Catch::Contains("bad magic"));
  CHECK_THROWS_WITH(deserialize_state(bytes.substr(0, bytes.size() - 1)), Catch::Contains("checksum"));
  std::string flipped = bytes;
  flipped[40] = static_cast<char>(flipped[40] ^ 1);
  CHECK_THROWS_AS(deserialize_state(flipped), StateFormatError);
  CHECK_THROWS_WITH(deserialize_state(flipped), Catch::Contains("checksum"));
  // every truncation is rejected (never a read past the end)
  for (std::size_t n = 0; n < bytes.size(); n += 37) CHECK_THROWS_AS(deserialize_state(bytes.substr(0, n)), StateFormatError);
}

TEST_CASE("clone rejects a custom solver instance", "[world][state]") {
  struct Custom final : ContactSolver {
    const char* name() const override { return "custom"; }
    void reserve_impl(Index) override {}
    SolverResult solve_impl(const ContactProblem&, VecXref lambda) override {
      lambda.setZero();
      return SolverResult{SolverStatus::Converged, 0, 0};
    }
  };
  World w;
  w.add_ground();
  w.set_contact_solver(std::make_unique<Custom>());
  CHECK_THROWS_AS(w.clone(), InvalidArgument);
  CHECK_THROWS_WITH(w.clone(), Catch::Contains("custom instance"));
  w.set_contact_solver("pgs");
  CHECK(std::string(w.clone()->contact_solver().name()) == "pgs");
}

TEST_CASE("clone copies filters, self-collision and margin set directly through collision()", "[world][state]") {
  // Two boxes dropped onto each other: with the upper box's filter set (directly on the collision
  // world) so that it passes through the lower one, the pair never collides; a clone that lost the
  // edit would stack them. The margin edit changes the contacts found, so it must be copied too.
  World w;
  w.add_ground();
  ArticulatedSystem& low = w.add_box("low", Vec3(0.2, 0.2, 0.2), 1.0);
  ArticulatedSystem& high = w.add_box("high", Vec3(0.2, 0.2, 0.2), 1.0);
  VecX q = low.q();
  q[2] = 0.1;
  low.set_q(q);
  q[2] = 0.35;
  high.set_q(q);
  const Index high_object = 2;  // ground 0, low 1, high 2
  REQUIRE(w.object_name(high_object) == "high");
  w.collision().set_shape_filter(high_object, 0, CollisionFilter{2, 1});  // collides with the ground only
  w.collision().set_object_filter(1, CollisionFilter{4, 1});              // low: the ground only too
  w.collision().set_self_collision(high_object, true);
  w.collision().set_margin(0.01);
  std::unique_ptr<World> c = w.clone();
  CHECK(c->collision().margin() == 0.01);
  CHECK(c->collision().self_collision(high_object));
  CHECK(c->collision().shape_filter(high_object, 0).group == 2);
  CHECK(c->collision().shape_filter(1, 0).mask == 1);
  const StateTrajectory first = state_run(w, 400);
  CHECK(identical(state_run(*c, 400), first));
  CHECK(w.system("high").q()[2] < 0.11);  // fell through the lower box onto the ground
  // an object added behind the World's back is copied like the others
  w.collision().add_static_box("shelf", SE3::Identity(), Vec3(1, 1, 0.1));
  REQUIRE(w.clone()->collision().num_objects() == 4);
  CHECK(w.clone()->object_name(3) == "shelf");
}

TEST_CASE("reset and restore_state of a saved state allocate nothing", "[world][state]") {
  // tasks::LocomotionTask resets its Worlds inside step() (one reset per episode), which must not
  // allocate; the state's buffers already have the World's sizes
  if (!test::alloc_counter_available()) return;
  World w;
  state_build(w);
  state_run(w, 50);  // the first step captured the initial state; warm-start memory is in use
  const WorldState mid = w.save_state();
  state_run(w, 50);
  test::alloc_counter_start();
  w.reset();
  w.restore_state(mid);
  w.reset();
  CHECK(test::alloc_counter_stop() == 0);
  CHECK(w.time() == 0);
}

TEST_CASE("a World built in stages steps like its clone and like one built at once", "[world][state]") {
  // The collision stage rebuilds its broadphase after set-up calls, on first use: how many
  // rebuilds a World went through (steps between its set-up calls) must not change its contacts'
  // order, or a clone (which replays the set-up at once) would diverge from its source.
  auto add_bodies = [](World& w, int first, int n) {
    for (int i = first; i < first + n; ++i) {
      ArticulatedSystem& b = (i % 2) ? w.add_sphere("s", 0.05, 1.0) : w.add_box("b", Vec3(0.08, 0.06, 0.05), 1.0);
      VecX q = b.q();
      q[0] = -0.3 + 0.15 * (i % 5);
      q[1] = -0.3 + 0.15 * ((i / 5) % 5);
      q[2] = 0.2 + 0.12 * (i / 25) + 0.01 * i;
      b.set_q(q);
    }
  };
  auto walls = [](World& w) {
    w.add_ground();
    w.add_wall("px", Vec3(-1, 0, 0), -0.5);
    w.add_wall("nx", Vec3(1, 0, 0), -0.5);
    w.add_wall("py", Vec3(0, -1, 0), -0.5);
    w.add_wall("ny", Vec3(0, 1, 0), -0.5);
  };
  World staged, at_once;
  walls(staged);
  walls(at_once);
  // staged: each batch of bodies added, then stepped once while the next batch waits high above
  for (int batch = 0; batch < 4; ++batch) {
    add_bodies(staged, 15 * batch, 15);
    add_bodies(at_once, 15 * batch, 15);
    staged.integrate();
  }
  // the same state in both (the staged World has moved for 4 steps)
  at_once.restore_state(staged.save_state());
  const std::unique_ptr<World> clone = staged.clone();
  for (int k = 0; k < 400; ++k) {
    staged.integrate();
    at_once.integrate();
    clone->integrate();
  }
  REQUIRE(staged.num_systems() == 60);
  CHECK(staged.stats().contacts > 60);
  for (Index i = 0; i < staged.num_systems(); ++i) {
    INFO("system " << i);
    CHECK(staged.system(i).q() == at_once.system(i).q());
    CHECK(staged.system(i).q() == clone->system(i).q());
    CHECK(staged.system(i).u() == clone->system(i).u());
  }
}

namespace {

// A random World for the round-trip property: one of several descriptions (a robot under PD, every
// free-body type, a heightfield, the project's world files), a random solver, random inputs, and a
// random number of steps from 0 (a state saved before the first step has an empty warm start).
std::unique_ptr<World> state_random_world(std::mt19937_64& rng, int& steps_out) {
  std::uniform_int_distribution<int> pick(0, 5), solver(0, 3), steps(0, 60);
  std::unique_ptr<World> w;
  switch (pick(rng)) {
    case 0: w = std::make_unique<World>(); state_build(*w); break;
    case 1: w = load_world(impulse_test::source_path("models/worlds/anymal_stand.xml")); break;
    case 2: w = load_world(impulse_test::source_path("models/worlds/box_on_ground.xml")); break;
    case 3: w = load_world(impulse_test::source_path("models/worlds/spheres.xml")); break;
    case 4: {
      w = std::make_unique<World>();
      w->add_heightfield("terrain", std::make_shared<Heightfield>(Heightfield::random_rough(4, 4, 0.1, 0.05, rng())));
      ArticulatedSystem& b = w->add_box("box", Vec3(0.3, 0.2, 0.1), 2.0);
      ArticulatedSystem& c = w->add_cylinder("cyl", 0.1, 0.2, 1.0);
      VecX q = b.q();
      q[2] = 0.4;
      b.set_q(q);
      q = c.q();
      q[0] = 0.5;
      q[2] = 0.6;
      c.set_q(q);
      break;
    }
    default: {  // in flight: a free robot thrown upwards with a pending push
      w = std::make_unique<World>();
      ArticulatedSystem& r = w->add_articulated_system(kStateAnymal);
      VecX q = r.model().neutral_configuration(), u = VecX::Zero(r.nv());
      q[2] = 3.0;
      u[2] = 2.0;
      u[4] = 0.3;
      r.set_state(q, u);
      r.set_external_force(0, Vec3(5, 0, 0), Vec3(0, 0, 3));
      break;
    }
  }
  const char* solvers[] = {"bisection", "pgs", "lm", "noslip"};
  w->set_contact_solver(solvers[solver(rng)]);
  std::normal_distribution<Scalar> g(0, 1);
  for (ArticulatedSystem* s : w->systems()) {
    VecX tau(s->nv());
    for (Index i = 0; i < tau.size(); ++i) tau[i] = 0.1 * g(rng);
    s->set_generalized_force(tau);
  }
  steps_out = steps(rng);
  return w;
}

}  // namespace

TEST_CASE("every state a World saves reads back: random worlds, solvers and step counts, step 0 included",
          "[world][state]") {
  std::mt19937_64 rng(20261129);
  for (int trial = 0; trial < 40; ++trial) {
    int steps = 0;
    auto w = state_random_world(rng, steps);
    for (int k = 0; k < steps; ++k) w->integrate();
    INFO("trial " << trial << ", " << w->num_systems() << " systems, " << steps << " steps, solver "
                  << w->contact_solver().name());
    const WorldState s = w->save_state();
    const std::string bytes = serialize_state(s);
    WorldState back;
    REQUIRE_NOTHROW(back = deserialize_state(bytes));
    CHECK(serialize_state(back) == bytes);  // exact round trip
    // restoring what was read back continues the trajectory bit for bit
    auto c = w->clone();
    c->restore_state(back);
    CHECK(identical(state_run(*w, 20), state_run(*c, 20)));
  }
}

TEST_CASE("serialize_state refuses a state whose vectors do not match its declared sizes", "[world][state]") {
  auto w = load_world(impulse_test::source_path("models/worlds/box_on_ground.xml"));
  WorldState s = w->save_state();
  REQUIRE_FALSE(s.systems.empty());
  s.systems[0].kp.resize(2);
  CHECK_THROWS_AS(serialize_state(s), StateFormatError);
  CHECK_THROWS_WITH(serialize_state(s), Catch::Contains("kp has 2 entries, expected 6"));
  s = w->save_state();
  s.systems[0].f_ext.clear();
  CHECK_THROWS_WITH(serialize_state(s), Catch::Contains("external wrenches"));
}

namespace {

// ANYmal without PD gains thrown in the air, no ground: every step a free-flight step, which after
// the first one takes the two-step velocity update from the last step's acceleration.
void build_flight(World& w) {
  DelassusSettings cs = w.settings().contact;
  cs.joint_limits = false;  // (no rows)
  w.set_contact_settings(cs);
  ArticulatedSystem& r = w.add_articulated_system(kStateAnymal);
  VecX q = r.model().neutral_configuration(), u = VecX::Zero(r.nv());
  q[2] = 5;
  u.head<6>() << 1, 0.5, 3, 1, -2, 0.5;
  for (Index k = 6; k < r.nv(); ++k) u[k] = k % 2 ? 2 : -2;
  r.set_state(q, u);
}

// FNV-1a 64 of the bytes (the format's checksum, docs/state-format.md)
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

TEST_CASE("the free-flight history is part of the state: a robot in flight restores bit for bit", "[world][state]") {
  World w;
  build_flight(w);
  state_run(w, 100);
  const WorldState saved = w.save_state();
  CHECK(saved.systems[0].flight_dt == w.settings().dt);
  const StateTrajectory first = state_run(w, 200);
  w.restore_state(saved);
  CHECK(identical(state_run(w, 200), first));
  // through the binary form, into a second World
  const std::string bytes = serialize_state(saved);
  const WorldState back = deserialize_state(bytes);
  CHECK(serialize_state(back) == bytes);
  World w2;
  build_flight(w2);
  w2.restore_state(back);
  CHECK(identical(state_run(w2, 200), first));
  // without the history the first step takes Heun's update: another trajectory, as accurate
  WorldState bare = saved;
  bare.systems[0].flight_dt = 0;
  bare.systems[0].flight_accel.setZero();
  bare.systems[0].flight_force.setZero();
  w.restore_state(bare);
  const StateTrajectory other = state_run(w, 200);
  CHECK_FALSE(identical(other, first));
  CHECK((other.back() - first.back()).cwiseAbs().maxCoeff() < 1e-6);
  // a version-1 state (no history) still reads: the same bytes without the history's vectors
  // (2 nv doubles after u_target) and its dt (the last double of the system's record)
  const SystemState& x = bare.systems[0];
  std::string v1 = serialize_state(bare);
  v1[4] = 1;  // version 1 (u32, little-endian)
  const std::size_t record = 28 + 4 + x.name.size() + 12;  // header, name, sizes
  const std::size_t vectors = 8 * static_cast<std::size_t>(2 * x.nq + 5 * x.nv);  // version 1's
  const std::size_t dt_at = record + vectors + 16 * static_cast<std::size_t>(x.nv) + 1 + 48 * static_cast<std::size_t>(x.nb);
  v1.erase(dt_at, 8);
  v1.erase(record + vectors, 16 * static_cast<std::size_t>(x.nv));
  v1.resize(v1.size() - 8);
  const std::uint64_t h = fnv1a(v1);
  for (int k = 0; k < 8; ++k) v1.push_back(static_cast<char>(h >> (8 * k)));
  WorldState old;
  REQUIRE_NOTHROW(old = deserialize_state(v1));
  CHECK(old.systems[0].flight_dt == 0);
  CHECK(serialize_state(old) == serialize_state(bare));
  w.restore_state(old);
  CHECK(identical(state_run(w, 200), other));
}

TEST_CASE("restore_state rejects a free-flight history that does not fit, changing nothing", "[world][state]") {
  World w;
  build_flight(w);
  state_run(w, 10);
  const WorldState saved = w.save_state();
  WorldState bad = saved;
  bad.systems[0].flight_accel.resize(3);
  CHECK_THROWS_WITH(w.restore_state(bad), Catch::Contains("free-flight acceleration has the wrong size"));
  bad = saved;
  bad.systems[0].flight_force[2] = std::nan("");
  CHECK_THROWS_WITH(w.restore_state(bad), Catch::Contains("free-flight input force has the wrong size or is not finite"));
  bad = saved;
  bad.systems[0].flight_dt = -1;
  CHECK_THROWS_WITH(w.restore_state(bad), Catch::Contains("free-flight dt is negative"));
  CHECK_THROWS_WITH(deserialize_state(serialize_state(bad)), Catch::Contains("free-flight dt is negative"));
  bad = saved;
  bad.systems[0].flight_force.resize(2);
  CHECK_THROWS_AS(serialize_state(bad), StateFormatError);
  CHECK(w.save_state().systems[0].flight_accel == saved.systems[0].flight_accel);  // unchanged
}
