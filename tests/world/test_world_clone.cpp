// World::clone is a copy: the clone shares the WorldModel, the systems' Models and the collision
// geometry, copies the rest, and then steps like its source bit for bit; save_state/restore_state
// round-trip on the same random worlds, before the first step included.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "impulse/world/world.hpp"
#include "support/matchers.hpp"
#include "support/random_model.hpp"

using namespace impulse;

namespace clone_test {

const std::string kAnymalUrdf = impulse_test::source_path("models/anymal/anymal.urdf");

// The state of every system (q, u), the time, the contacts' count and the whole saved state in its
// binary form (warm start included): equal bytes, not equal values within a tolerance.
struct Snapshot {
  std::vector<VecX> x;
  std::string state;
  Index contacts = 0;
  bool operator==(const Snapshot& o) const {
    if (x.size() != o.x.size() || state != o.state || contacts != o.contacts) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (x[i].size() != o.x[i].size() || std::memcmp(x[i].data(), o.x[i].data(), sizeof(Scalar) * x[i].size()) != 0)
        return false;
    }
    return true;
  }
};

Snapshot snapshot(const World& w) {
  Snapshot s;
  for (const ArticulatedSystem* a : w.systems()) {
    VecX y(a->nq() + a->nv());
    y << a->q(), a->u();
    s.x.push_back(y);
  }
  s.state = serialize_state(w.save_state());
  s.contacts = w.contacts().size();
  return s;
}

std::vector<Snapshot> steps(World& w, int n) {
  std::vector<Snapshot> out;
  for (int k = 0; k < n; ++k) {
    w.integrate();
    out.push_back(snapshot(w));
  }
  return out;
}

// A random World: 2-4 systems (ANYmal under PD, random kinematic trees, free bodies of every
// shape), static geometry (ground, boxes, a wall, sometimes a heightfield), random collision
// filters and self-collision, and settings changed after the objects were added (time step,
// gravity, margin, contact cap, contact settings, solver, materials), with random inputs.
std::unique_ptr<World> random_world(std::mt19937& rng) {
  std::uniform_real_distribution<Scalar> U(-1, 1);
  std::uniform_int_distribution<int> pick(0, 5);
  auto w = std::make_unique<World>();
  w->add_ground();
  const int boxes = std::uniform_int_distribution<int>(0, 2)(rng);
  for (int i = 0; i < boxes; ++i) {
    w->add_static_box("step", SE3(Mat3::Identity(), Vec3(U(rng), U(rng), -0.05)), Vec3(0.4, 0.4, 0.2),
                      i % 2 ? "rubber" : "default");
  }
  if (pick(rng) < 2) w->add_wall("wall", Vec3(-1, 0, 0), -1.5);
  if (pick(rng) < 2) {
    w->add_heightfield("terrain", std::make_shared<Heightfield>(Heightfield::random_rough(3, 3, 0.1, 0.03, rng())));
  }
  const int n = std::uniform_int_distribution<int>(2, 4)(rng);
  for (int i = 0; i < n; ++i) {
    ArticulatedSystem* s = nullptr;
    switch (pick(rng)) {
      case 0: {
        s = &w->add_articulated_system(kAnymalUrdf);
        VecX q = s->model().neutral_configuration();
        q[0] = 2 * U(rng);
        q[2] = 0.6;
        VecX kp = VecX::Zero(s->nv()), kd = VecX::Zero(s->nv());
        kp.tail(12).setConstant(80);
        kd.tail(12).setConstant(2);
        s->set_q(q);
        s->set_pd_gains(kp, kd);
        s->set_pd_targets(q, VecX::Zero(s->nv()));
        if (pick(rng) < 3) s->set_body_collision_filter("base", 2, 0xFFFFFFFFu);
        break;
      }
      case 1: {
        test::RandomTreeOptions o;
        o.num_bodies = 4 + static_cast<int>(rng() % 4);
        s = &w->add_articulated_system(test::random_tree(static_cast<unsigned>(rng() % 1000), o));
        VecX q = s->q();
        q[2] = 1 + U(rng);
        s->set_q(q);
        break;
      }
      default: {
        const int kind = pick(rng) % 4;
        if (kind == 0) s = &w->add_box("box", Vec3(0.2, 0.15, 0.1), 1.0, "rubber");
        if (kind == 1) s = &w->add_sphere("ball", 0.08, 0.5);
        if (kind == 2) s = &w->add_capsule("capsule", 0.05, 0.2, 0.4);
        if (kind == 3) s = &w->add_cylinder("cylinder", 0.06, 0.15, 0.6);
        VecX q = s->q(), u = VecX::Zero(6);
        // on or just above the ground (or a step), moving: contacts from the first steps on
        q.head<3>() = Vec3(U(rng), U(rng), 0.1 + 0.05 * (U(rng) + 1));
        u.head<3>() = Vec3(U(rng), U(rng), -0.5);
        s->set_state(q, u);
        break;
      }
    }
    if (pick(rng) < 2) s->set_collision_filter(1u << (rng() % 3), 0xFFFFFFFFu ^ (pick(rng) == 0 ? 2u : 0u));
    if (pick(rng) == 0) s->set_self_collision(true);
    VecX tau(s->nv());
    for (Index k = 0; k < tau.size(); ++k) tau[k] = 0.2 * U(rng);
    s->set_generalized_force(tau);
  }
  // settings changed after construction
  w->set_material_pair("rubber", "default", 0.9, 0.3 * (U(rng) + 1));
  if (pick(rng) < 3) w->set_time_step(pick(rng) < 3 ? 0.002 : 0.0005);
  if (pick(rng) < 3) w->set_gravity(Vec3(0.5 * U(rng), 0, -9.81 + U(rng)));
  if (pick(rng) < 3) w->set_contact_margin(0.01);
  if (pick(rng) < 2) w->set_max_contacts(64);
  if (pick(rng) < 3) {
    DelassusSettings c = w->settings().contact;
    c.erp = 0.1 + 0.1 * (U(rng) + 1);
    w->set_contact_settings(c);
  }
  const char* solvers[] = {"bisection", "pgs", "lm", "noslip"};
  w->set_contact_solver(solvers[rng() % 4]);
  if (pick(rng) == 0) w->systems().back()->set_external_force(0, Vec3(3, 0, 0), w->systems().back()->body_pose(0).p);
  return w;
}

}  // namespace clone_test

TEST_CASE("a clone steps like its source bit for bit: random worlds cloned after 0, 1 and 7 steps",
          "[world][state][clone]") {
  using namespace clone_test;
  std::mt19937 rng(8128);
  Index contacts = 0;
  for (int trial = 0; trial < 12; ++trial) {
    for (int k : {0, 1, 7}) {
      std::mt19937 world_rng(static_cast<unsigned>(rng()));
      auto w = random_world(world_rng);
      INFO("trial " << trial << ", " << w->num_systems() << " systems, cloned after " << k << " steps, solver "
                    << w->contact_solver().name());
      steps(*w, k);
      const auto c = w->clone();
      // the description is shared, not copied
      CHECK(c->shared_model() == w->shared_model());
      for (Index i = 0; i < w->num_systems(); ++i) CHECK(&c->system(i).model() == &w->system(i).model());
      CHECK(snapshot(*c) == snapshot(*w));
      CHECK(c->time() == w->time());
      CHECK(c->has_initial_state() == w->has_initial_state());
      CHECK(std::string(c->contact_solver().name()) == w->contact_solver().name());
      const auto a = steps(*w, 40);
      const auto b = steps(*c, 40);
      CHECK(a == b);
      for (const Snapshot& x : a) contacts += x.contacts;
      // a set-up call on the clone writes its own model: the source keeps its settings
      c->set_time_step(0.003);
      CHECK(c->shared_model() != w->shared_model());
      CHECK(w->time_step() != 0.003);
    }
  }
  CHECK(contacts > 1000);  // (the worlds touch: the warm start and the materials matter)
}

TEST_CASE("save_state and restore_state round-trip on random worlds, before the first step included",
          "[world][state][clone]") {
  using namespace clone_test;
  std::mt19937 rng(496);
  for (int trial = 0; trial < 12; ++trial) {
    for (int k : {0, 1, 7}) {
      std::mt19937 world_rng(static_cast<unsigned>(rng()));
      auto w = random_world(world_rng);
      auto other = w->clone();
      INFO("trial " << trial << ", " << w->num_systems() << " systems, saved after " << k << " steps");
      steps(*w, k);
      const WorldState saved = w->save_state();
      const std::string bytes = serialize_state(saved);
      const auto first = steps(*w, 20);
      // into the same World
      w->restore_state(saved);
      CHECK(serialize_state(w->save_state()) == bytes);
      CHECK(steps(*w, 20) == first);
      // into another World of the same description, through the binary form
      WorldState back;
      REQUIRE_NOTHROW(back = deserialize_state(bytes));
      other->restore_state(back);
      CHECK(serialize_state(other->save_state()) == bytes);
      CHECK(steps(*other, 20) == first);
    }
  }
}

TEST_CASE("a clone shares the collision geometry and keeps objects added through collision()", "[world][clone]") {
  // Objects added to the collision world directly (not through the World's add_* calls) are
  // copied like the others: the clone steps like its source.
  World w;
  w.add_ground();
  ArticulatedSystem& b = w.add_box("box", Vec3(0.2, 0.2, 0.2), 1.0);
  VecX q = b.q();
  q[2] = 0.5;
  b.set_q(q);
  w.collision().add_static_box("shelf", SE3(Mat3::Identity(), Vec3(0, 0, 0.2)), Vec3(1, 1, 0.1));
  const auto c = w.clone();
  REQUIRE(c->collision().num_objects() == w.collision().num_objects());
  CHECK(c->object_name(2) == "shelf");
  CHECK(clone_test::steps(w, 300) == clone_test::steps(*c, 300));
  CHECK(w.system(0).q()[2] > 0.3);  // resting on the shelf, not on the ground
}

TEST_CASE("the systems' state is the World's data: save_state copies it, a clone has its own", "[world][clone]") {
  World w;
  w.add_ground();
  ArticulatedSystem& a = w.add_box("a", Vec3(0.2, 0.2, 0.2), 1.0);
  // a second and third system move the data's per-system vectors: the first system follows
  w.add_sphere("b", 0.1, 1.0);
  ArticulatedSystem& r = w.add_articulated_system(clone_test::kAnymalUrdf);
  REQUIRE(w.data().systems.size() == 3);
  REQUIRE(w.data().outputs.size() == 3);
  CHECK(&a.q() == &w.data().systems[0].q);
  CHECK(&r.u() == &w.data().systems[2].u);
  CHECK(&r.applied_torque() == &w.data().outputs[2].tau_applied);
  CHECK(w.data().systems[2].name == r.name());
  CHECK(w.data().systems[2].nq == r.nq());
  VecX q = a.q();
  q[2] = 1.0;
  a.set_q(q);
  CHECK(w.data().systems[0].q[2] == 1.0);
  w.integrate();
  const WorldState s = w.save_state();
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(s.systems[i].q == w.data().systems[i].q);
    CHECK(s.systems[i].u == w.data().systems[i].u);
  }
  // the clone's systems read and write the clone's data, not the source's
  const auto c = w.clone();
  CHECK(&c->system(0).q() == &c->data().systems[0].q);
  CHECK(&c->system(0).q() != &a.q());
  q[2] = 2.0;
  c->system(0).set_q(q);
  CHECK(a.q()[2] < 1.0);
  CHECK(c->system(0).q()[2] == 2.0);
  c->integrate();
  CHECK(w.data().systems[0].q[2] < 1.0);
}
