// StepWorkspace: a World stepped with a workspace that other Worlds share (their steps in between)
// gives the same bits as the World stepped alone with its own scratch; one Data per (Model, k).
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "impulse/dynamics/lanes.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/stepper/lanes_step.hpp"
#include "impulse/world/world.hpp"
#include "support/test_models.hpp"

using namespace impulse;

namespace {

// Two ANYmals of one shared Model (standing on PD, one pushed) and a box dropped next to them.
std::unique_ptr<World> make_scene(const std::shared_ptr<const Model>& anymal, Scalar push) {
  auto w = std::make_unique<World>();
  w->add_ground();
  for (int r = 0; r < 2; ++r) {
    ArticulatedSystem& s = w->add_articulated_system(anymal);
    VecX q = anymal->neutral_configuration();
    q[0] = 2.0 * r, q[2] = 0.56;
    const Scalar hfe[4] = {0.4, 0.4, -0.4, -0.4}, kfe[4] = {-0.8, -0.8, 0.8, 0.8};
    for (int leg = 0; leg < 4; ++leg) q[7 + 3 * leg + 1] = hfe[leg], q[7 + 3 * leg + 2] = kfe[leg];
    VecX u = VecX::Zero(anymal->nv);
    u[0] = push * (r + 1), u[5] = -push;
    s.set_state(q, u);
    VecX kp = VecX::Zero(anymal->nv), kd = VecX::Zero(anymal->nv);
    kp.tail(12).setConstant(200);
    kd.tail(12).setConstant(6);
    s.set_pd_gains(kp, kd);
    s.set_pd_targets(q, VecX::Zero(anymal->nv));
  }
  ArticulatedSystem& box = w->add_box("box", Vec3(0.3, 0.2, 0.1), 2.0);
  VecX q = box.q();
  q[0] = 1.0, q[2] = 0.3 + push;
  box.set_q(q);
  return w;
}

}  // namespace

TEST_CASE("step workspace: shared Data give the bits of the World's own", "[world][batch]") {
  Model m;
  if (!impulse::test::load_anymal(m)) return;
  const auto anymal = std::make_shared<const Model>(m);
  auto alone = make_scene(anymal, 0.2);    // integrate()
  auto shared = make_scene(anymal, 0.2);   // integrate(ws), the same scene
  auto other = make_scene(anymal, -0.5);   // integrate(ws) in between: a different state
  StepWorkspace ws;
  for (int k = 0; k < 300; ++k) {
    alone->integrate();
    other->integrate(ws);
    const StepReport r = shared->integrate(ws);
    CHECK(r.stepped);
    if (k == 150) shared->integrate(), alone->integrate();  // plain steps mixed in: same bits
  }
  CHECK(alone->system(0).q()[2] > 0.3);  // the robots stand: the scene is not vacuous
  for (Index s = 0; s < alone->num_systems(); ++s) {
    INFO("system " << s);
    CHECK(alone->system(s).q() == shared->system(s).q());  // bit-identical
    CHECK(alone->system(s).u() == shared->system(s).u());
    CHECK(alone->system(s).q() != other->system(s).q());
  }
  for (Index s = 0; s < alone->num_systems(); ++s) {
    const auto& a = alone->system(s).contact_impulses();
    const auto& b = shared->system(s).contact_impulses();
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].impulse == b[i].impulse);
  }
  CHECK(alone->contacts().size() == shared->contacts().size());
  // one Data per (Model, k): the two robots share a Model (k = 0, 1); the boxes' Models, made alike
  // in each World, are equal: one Data serves them (StepWorkspace counts equal Models as one)
  CHECK(ws.size() == 3);
  // reserve_workspace makes them before the first step (a batch's steps then allocate nothing)
  StepWorkspace fresh;
  shared->reserve_workspace(fresh);
  CHECK(fresh.size() == 3);
  shared->integrate(fresh);
  CHECK(fresh.size() == 3);
}

// The workspace's solver solves with each World's own solver settings: Worlds whose solvers differ
// (settings and type) stepped in turn with one workspace give the bits of each stepped alone, and
// what a step leaves (contacts with their impulses, statistics) is the World's.
TEST_CASE("step workspace: each World solves with its own solver settings", "[world][batch]") {
  Model m;
  if (!impulse::test::load_anymal(m)) return;
  const auto anymal = std::make_shared<const Model>(m);
  auto configure = [](World& w, int kind) {
    if (kind == 1) {
      auto s = std::make_unique<BisectionSolver>();
      s->settings().max_iterations = 2;  // stops early: results differ from the default's
      s->settings().anderson_memory = 0;
      w.set_contact_solver(std::move(s));
    } else if (kind == 2) {
      w.set_contact_solver("pgs");
    }
  };
  std::vector<std::unique_ptr<World>> alone, shared;
  for (int kind = 0; kind < 3; ++kind) {
    alone.push_back(make_scene(anymal, 0.3));
    shared.push_back(make_scene(anymal, 0.3));
    configure(*alone.back(), kind);
    configure(*shared.back(), kind);
  }
  StepWorkspace ws;
  for (int k = 0; k < 200; ++k) {
    for (int i = 0; i < 3; ++i) {
      alone[static_cast<std::size_t>(i)]->integrate();
      shared[static_cast<std::size_t>(i)]->integrate(ws);
    }
  }
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("world " << i);
    CHECK(alone[i]->system(0).q() == shared[i]->system(0).q());  // bit-identical
    CHECK(alone[i]->stats().solver.iterations == shared[i]->stats().solver.iterations);
    const auto a = alone[i]->contact_reports(), b = shared[i]->contact_reports();
    REQUIRE(a.size() == b.size());
    CHECK(!a.empty());
    for (std::size_t c = 0; c < a.size(); ++c) CHECK(a[c].impulse == b[c].impulse);
  }
  // the settings matter here (the test is not vacuous)
  CHECK(alone[0]->system(0).q() != alone[1]->system(0).q());
  CHECK(alone[0]->system(0).q() != alone[2]->system(0).q());
}

// A body's inertia replaced per World (domain randomization): the system steps with a copy of its
// Model that differs only there, a workspace keeps serving it with the same Data, clone() carries
// it, and the workspace does not keep the replaced Models alive (randomizing every episode would
// otherwise grow every thread's workspace without bound).
TEST_CASE("step workspace: set_body_inertia per World, replaced Models released", "[world][batch]") {
  Model m;
  if (!impulse::test::load_anymal(m)) return;
  const auto anymal = std::make_shared<const Model>(m);
  auto heavy = make_scene(anymal, 0.0);
  auto light = make_scene(anymal, 0.0);
  StepWorkspace ws;
  for (int k = 0; k < 5; ++k) heavy->integrate(ws), light->integrate(ws);
  const Index data_before = ws.size();
  const Inertia base = anymal->inertia[0];
  std::weak_ptr<const Model> replaced;
  for (int episode = 0; episode < 3; ++episode) {
    heavy->set_body_inertia(0, 0, Inertia(base.m + 5 + episode, base.c + Vec3(0.01, 0, 0), base.Ic));
    if (episode == 0) replaced = heavy->system(0).shared_model();
    for (int k = 0; k < 5; ++k) heavy->integrate(ws), light->integrate(ws);
  }
  CHECK(replaced.expired());  // stepped with the workspace, then replaced: released
  CHECK(ws.size() == data_before);  // equal but for inertia: the same Data
  CHECK(heavy->system(0).model().total_mass() == Approx(anymal->total_mass() + 7));
  CHECK(heavy->system(1).model().total_mass() == Approx(anymal->total_mass()));  // one system only
  CHECK(heavy->system(0).model().equal_except_parameters(*anymal));
  // a heavier base sinks its standing robot deeper than the other World's
  for (int k = 0; k < 400; ++k) heavy->integrate(ws), light->integrate(ws);
  CHECK(heavy->system(0).q()[2] < light->system(0).q()[2] - 1e-4);
  CHECK(heavy->system(1).q() == light->system(1).q());
  // the stepping path does not matter: the World's own scratch gives the same bits
  auto copy = heavy->clone();
  CHECK(copy->system(0).model() == heavy->system(0).model());
  for (int k = 0; k < 20; ++k) heavy->integrate(ws), copy->integrate();
  CHECK(copy->system(0).q() == heavy->system(0).q());
  // bad input: named, nothing changed
  const Model before = heavy->system(0).model();
  CHECK_THROWS_WITH(heavy->set_body_inertia(0, 0, Inertia(-1, base.c, base.Ic)),
                    Catch::Contains("negative mass") && Catch::Contains("body 'base'"));
  CHECK_THROWS_WITH(heavy->set_body_inertia(0, 99, base), Catch::Contains("body index 99"));
  CHECK_THROWS_WITH(heavy->set_body_inertia(7, 0, base), Catch::Contains("system index 7"));
  CHECK(heavy->system(0).model() == before);
}

// The dynamics stage of a World stepped with a workspace takes its system's first pass from the
// workspace's lanes list (stepper/lanes_step.hpp) when an entry names that system: the same bits
// as the World's own pass when the lane holds the system's state, another step when it holds
// another state (so the stage did read the lane), and the entry is taken.
TEST_CASE("step workspace: the dynamics stage takes a first pass from the workspace's lanes list", "[world][lanes]") {
  Model m;
  if (!impulse::test::load_anymal(m)) return;
  const auto anymal = std::make_shared<const Model>(m);
  for (const bool saturated : {false, true})
  for (const bool same_state : {true, false}) {
    INFO((same_state ? "the lane holds the system's state" : "the lane holds another velocity"));
    INFO((saturated ? "actuators beyond their effort and velocity limits" : "actuators within their limits"));
    auto plain = make_scene(anymal, 0.2);
    auto handed = make_scene(anymal, 0.2);
    StepWorkspace ws;
    for (int k = 0; k < 3; ++k) plain->integrate(ws), handed->integrate(ws);
    if (saturated) {
      // ANYmal's actuators: 80 N m, 7.5 rad/s. Torques of +-150 clamp (the first guess), and two
      // joints beyond the velocity limit narrow their interval to one sign.
      for (World* x : {plain.get(), handed.get()}) {
        VecX tau = VecX::Zero(anymal->nv), u = x->system(0).u();
        for (Index k = 6; k < anymal->nv; ++k) tau[k] = (k % 2 ? 150.0 : -150.0);
        tau[8] = tau[9] = 0;
        u[8] = 8.0, u[9] = -8.0;
        x->system(0).set_generalized_force(tau);
        x->system(0).set_u(u);
      }
    }
    const SystemState& st = handed->data().systems[0];
    StepLanes lanes(*anymal, 2);
    const VecX u_lane = same_state ? st.u : VecX(st.u + VecX::Constant(anymal->nv, 0.05));
    for (int w = 0; w < 2; ++w) {
      lanes.set_state(w, st.q, u_lane);
      lanes.set_drive(w, st.tau, st.kp, st.kd, st.q_target, st.u_target);
    }
    lanes.compute();
    lanes.implicit_pd(handed->settings().dt);
    lanes.factor();
    lanes.solve();
    ws.lanes_pending().put(&st, &lanes, 0);
    plain->integrate(ws);
    CHECK(!ws.lanes_pending().empty());  // (another World's system: not taken)
    handed->integrate(ws);
    CHECK(ws.lanes_pending().empty());
    const bool equal = plain->system(0).u() == handed->system(0).u() && plain->system(0).q() == handed->system(0).q();
    CHECK(equal == same_state);
    CHECK(plain->system(1).u() == handed->system(1).u());  // (the second robot computed its own)
  }
}
