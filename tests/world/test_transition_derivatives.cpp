// World::transition_derivatives (world/transition_derivatives.hpp): on a damped double pendulum
// without contact, against the analytic derivatives of its semi-implicit Euler step (from
// rnea_derivatives); on ANYmal standing, finite, forward against centred differences; the same
// bits whatever the thread count; the World left unchanged; argument checks.
#include <catch2/catch.hpp>

#include "impulse/core/error.hpp"
#include "impulse/dynamics/rnea_derivatives.hpp"
#include "impulse/model/model_builder.hpp"
#include "impulse/world/transition_differentiator.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

Scalar td_rel_frob(const MatX& A, const MatX& B) { return (A - B).norm() / std::max(B.norm(), Scalar(1e-300)); }

// Two links swinging about x, with joint damping: the stepper then takes semi-implicit Euler
// (damping in M~ keeps it off Heun's update, stepper.hpp), u+ = u + dt M~^-1 (tau - D u - h),
// q+ = q + dt u+, M~ = M + dt D.
Model double_pendulum() {
  ModelBuilder mb("double_pendulum");
  const Inertia I(1.5, Vec3(0, 0, -0.4), Vec3(0.03, 0.03, 0.01).asDiagonal());
  const Index a = mb.add_body(-1, "j1", JointType::Revolute, SE3(), Vec3::UnitX(), JointLimits(), "l1", I);
  mb.add_body(a, "j2", JointType::Revolute, SE3(Mat3::Identity(), Vec3(0, 0.05, -0.8)), Vec3::UnitX(), JointLimits(),
              "l2", Inertia(0.8, Vec3(0, 0, -0.3), Vec3(0.02, 0.02, 0.01).asDiagonal()));
  Model m = mb.finalize();
  m.damping.setConstant(0.3);
  return m;
}

}  // namespace

TEST_CASE("transition_derivatives: a damped double pendulum matches the analytic step derivatives", "[world]") {
  World world;
  const Model model = double_pendulum();
  ArticulatedSystem& p = world.add_articulated_system(model);
  const Scalar dt = world.time_step();
  VecX q(2), u(2), tau(2);
  q << 0.7, -0.4;
  u << 1.1, -0.6;
  tau << 0.5, -0.2;
  p.set_state(q, u);
  p.set_generalized_force(tau);
  TransitionOptions o;
  o.eps = 1e-6;
  const TransitionJacobians J = world.transition_derivatives(o);
  REQUIRE(J.A.rows() == 4);
  REQUIRE(J.A.cols() == 4);
  REQUIRE(J.B.rows() == 4);
  REQUIRE(J.B.cols() == 2);

  // analytic: with a* = (u+ - u) / dt, d tau/dq and d tau/du of rnea(q, u, a*) give
  //   du+/dq = -dt M~^-1 dtau/dq,  du+/du = 1 - dt M~^-1 (D + dtau/du),  du+/dtau = dt M~^-1
  Data data(model);
  const MatX D = model.damping.asDiagonal();
  MatX dq(2, 2), du(2, 2);
  // a* from the step itself: the step of a clone (this World is not stepped by the derivatives)
  std::unique_ptr<World> w2 = world.clone();
  w2->integrate();
  const VecX a = (w2->system(0).u() - u) / dt;
  rnea_derivatives(model, data, q, u, a, dq, du);
  const MatX Mt = data.M + dt * D;
  const MatX Mi = Mt.inverse();
  MatX A(4, 4), B(4, 2);
  const MatX dup_dq = -dt * Mi * dq;
  const MatX dup_du = MatX::Identity(2, 2) - dt * Mi * (D + du);
  const MatX dup_dtau = dt * Mi;
  A << MatX::Identity(2, 2) + dt * dup_dq, dt * dup_du, dup_dq, dup_du;
  B << dt * dup_dtau, dup_dtau;
  CHECK(td_rel_frob(J.A, A) < 1e-6);
  CHECK(td_rel_frob(J.B, B) < 1e-6);
  // the step that was differentiated is the one analysed: u+ = u + dt M~^-1 (tau - D u - h)
  CHECK((data.M * a + dt * D * a - (tau - D * u - (data.tau - data.M * a))).norm() < 1e-9);
}

TEST_CASE("transition_derivatives: ANYmal standing, forward and centred, any thread count, World unchanged",
          "[world]") {
  std::unique_ptr<World> world = load_world(impulse_test::source_path("models/worlds/anymal_stand.xml"));
  for (int k = 0; k < 50; ++k) world->integrate();
  const WorldState before = world->save_state();
  const std::string bytes = serialize_state(before);
  const Index contacts = static_cast<Index>(world->contacts().size());
  TransitionOptions o;
  o.eps = 1e-6;
  const TransitionJacobians c1 = world->transition_derivatives(o);
  REQUIRE(c1.A.rows() == 36);
  REQUIRE(c1.A.cols() == 36);
  REQUIRE(c1.B.rows() == 36);
  REQUIRE(c1.B.cols() == 18);
  CHECK(c1.A.allFinite());
  CHECK(c1.B.allFinite());
  // the state after one step moves with the state: dq+/dq ~ 1 on the base position
  CHECK(c1.A(0, 0) == Approx(1).margin(1e-3));
  // the World itself is untouched: same state, same contacts of its last step
  CHECK(serialize_state(world->save_state()) == bytes);
  CHECK(static_cast<Index>(world->contacts().size()) == contacts);

  o.num_threads = 2;
  const TransitionJacobians c2 = world->transition_derivatives(o);
  o.num_threads = 3;
  const TransitionJacobians c3 = world->transition_derivatives(o);
  CHECK(c2.A == c1.A);  // bit for bit
  CHECK(c2.B == c1.B);
  CHECK(c3.A == c1.A);
  CHECK(c3.B == c1.B);

  // a kept differentiator: the same bits on every call (its clones' scratch reused)
  o.num_threads = 2;
  TransitionDifferentiator d(*world, o);
  for (int k = 0; k < 2; ++k) {
    const TransitionJacobians again = d.compute(*world);
    CHECK(again.A == c1.A);
    CHECK(again.B == c1.B);
  }

  o.centered = false;
  const TransitionJacobians f = world->transition_derivatives(o);
  CHECK(f.A.allFinite());
  CHECK(f.B.allFinite());
  // Against u and tau the step is smooth here: forward and centred agree to the stencil error. The
  // q columns of base height, tilt and joints are not: a resting contact's depth sits where the
  // split position correction starts (the slop), a kink of the step map, so the one-sided forward
  // column and the centred one (the mean of both sides) differ there (at eps 1e-8 by 5e-4, at
  // 1e-6 by ~1, relative: mode changes inside the stencil).
  const Scalar eu = td_rel_frob(f.A.rightCols(18), c1.A.rightCols(18)), eb = td_rel_frob(f.B, c1.B);
  const Scalar eq = td_rel_frob(f.A.leftCols(18), c1.A.leftCols(18));
  WARN("ANYmal standing: forward vs centred step Jacobian, relative Frobenius: A's u columns " << eu << ", B " << eb
                                                                                              << ", A's q columns " << eq);
  CHECK(eu < 1e-4);
  CHECK(eb < 1e-4);
}

TEST_CASE("transition_derivatives: repeated one-shot calls follow the World's changes", "[world]") {
  // The one-shot call keeps its threads and step scratch between calls (on the calling thread): a
  // call after a change of the World must see that change, as a differentiator made afresh does.
  std::unique_ptr<World> world = load_world(impulse_test::source_path("models/worlds/anymal_stand.xml"));
  for (int k = 0; k < 20; ++k) world->integrate();
  const WorldState early = world->save_state();
  for (int k = 0; k < 20; ++k) world->integrate();
  TransitionOptions o;
  o.num_threads = 2;
  const auto fresh = [&] { return TransitionDifferentiator(*world, o).compute(*world); };
  const TransitionJacobians j0 = world->transition_derivatives(o);
  const TransitionJacobians again = world->transition_derivatives(o);
  CHECK(again.A == j0.A);  // bit for bit, with the kept scratch
  CHECK(again.B == j0.B);

  world->set_time_step(world->time_step() / 2);
  const TransitionJacobians dt = world->transition_derivatives(o), dt_fresh = fresh();
  CHECK(dt.A == dt_fresh.A);
  CHECK(dt.B == dt_fresh.B);
  CHECK(td_rel_frob(dt.B, j0.B) > 0.1);  // B ~ dt M^-1: the half step moves it

  world->restore_state(early);
  const TransitionJacobians back = world->transition_derivatives(o), back_fresh = fresh();
  CHECK(back.A == back_fresh.A);
  CHECK(back.B == back_fresh.B);
  CHECK(back.A != dt.A);

  // a box falling beside the robot: six more dofs, the robot's block as before
  ArticulatedSystem& box = world->add_box("box", Vec3(0.2, 0.2, 0.2), 1.0);
  VecX q = box.q();
  q.head<3>() = Vec3(3, 3, 1);
  box.set_q(q);
  const TransitionJacobians grown = world->transition_derivatives(o), grown_fresh = fresh();
  REQUIRE(grown.A.rows() == 2 * 24);
  REQUIRE(grown.B.cols() == 24);
  CHECK(grown.A == grown_fresh.A);
  CHECK(grown.B == grown_fresh.B);
  // (one thread: the scratch is made anew for the count, the same bits)
  o.num_threads = 1;
  CHECK(world->transition_derivatives(o).A == grown.A);
}

TEST_CASE("transition_derivatives: bad options throw a one-line error and change nothing", "[world]") {
  World world;
  world.add_articulated_system(double_pendulum());
  TransitionOptions o;
  o.eps = 0;
  CHECK_THROWS_WITH(world.transition_derivatives(o), "transition_derivatives: eps must be finite and > 0, got 0");
  o.eps = 1e-6;
  o.num_threads = -1;
  CHECK_THROWS_WITH(world.transition_derivatives(o), "transition_derivatives: num_threads must be >= 0, got -1");
  o.num_threads = 1;
  CHECK(world.transition_derivatives(o).A.allFinite());
}
