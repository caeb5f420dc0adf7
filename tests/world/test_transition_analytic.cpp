// TransitionMethod::Analytic (world/transition_derivatives.hpp): the step Jacobians by the
// implicit function theorem on the solved contact problem's active set, against centred finite
// differences, on states where no row changes its mode inside the stencil: a free body and a double
// pendulum in flight, the pendulum on a joint limit, a box resting on the ground (sticking
// friction), a box sliding on it, and ANYmal standing.
#include <catch2/catch.hpp>

#include "impulse/core/error.hpp"
#include "impulse/model/model_builder.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/world/transition_differentiator.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

Scalar analytic_rel_frob(const MatX& A, const MatX& B) { return (A - B).norm() / std::max(B.norm(), Scalar(1e-300)); }

struct AnalyticErrors {
  Scalar A = 0, B = 0;
};

// analytic against centred differences at step eps
AnalyticErrors compare_with_fd(const World& world, Scalar eps) {
  TransitionOptions o;
  o.eps = eps;
  const TransitionJacobians fd = world.transition_derivatives(o);
  o.method = TransitionMethod::Analytic;
  const TransitionJacobians an = world.transition_derivatives(o);
  REQUIRE(an.A.rows() == fd.A.rows());
  REQUIRE(an.A.cols() == fd.A.cols());
  REQUIRE(an.B.rows() == fd.B.rows());
  REQUIRE(an.B.cols() == fd.B.cols());
  return {analytic_rel_frob(an.A, fd.A), analytic_rel_frob(an.B, fd.B)};
}

Model limited_pendulum(Scalar damping, JointLimits limits = JointLimits()) {
  ModelBuilder mb("double_pendulum");
  const Inertia I(1.5, Vec3(0, 0, -0.4), Vec3(0.03, 0.03, 0.01).asDiagonal());
  const Index a = mb.add_body(-1, "j1", JointType::Revolute, SE3(), Vec3::UnitX(), JointLimits(), "l1", I);
  mb.add_body(a, "j2", JointType::Revolute, SE3(Mat3::Identity(), Vec3(0, 0.05, -0.8)), Vec3::UnitX(), limits, "l2",
              Inertia(0.8, Vec3(0, 0, -0.3), Vec3(0.02, 0.02, 0.01).asDiagonal()));
  Model m = mb.finalize();
  m.damping.setConstant(damping);
  return m;
}

}  // namespace

TEST_CASE("transition_derivatives analytic: a free body and a double pendulum in flight", "[world]") {
  {  // a tumbling box (midpoint position update in flight)
    World world;
    ArticulatedSystem& box = world.add_box("box", Vec3(0.4, 0.3, 0.2), 2.0);
    VecX q(7), u(6);
    q << 0.1, -0.2, 3.0, 0.9, 0.1, -0.3, 0.2;
    q.segment<4>(3).normalize();
    u << 0.5, -0.3, 0.2, 2.0, -1.0, 3.0;
    box.set_state(q, u);
    VecX tau(6);
    tau << 1, -2, 3, 0.1, -0.2, 0.3;
    box.set_generalized_force(tau);
    const AnalyticErrors e = compare_with_fd(world, 1e-6);
    CHECK(e.A < 1e-7);
    CHECK(e.B < 1e-7);
    // after a flight step (a history), with a push off the centre and another generalized force
    REQUIRE(world.integrate() == StepStatus::Ok);
    REQUIRE(world.save_state().systems[0].flight_dt > 0);
    tau << -1, 2, 1, 0.3, 0.1, -0.2;
    box.set_generalized_force(tau);
    box.set_external_force(0, Vec3(2, 1, -3), box.q().head<3>() + Vec3(0.1, -0.1, 0.05));
    const AnalyticErrors h = compare_with_fd(world, 1e-6);
    CHECK(h.A < 1e-7);
    CHECK(h.B < 1e-7);
  }
  for (Scalar damping : {0.0, 0.3}) {  // Heun's velocity update (undamped) and semi-implicit Euler
    World world;
    ArticulatedSystem& p = world.add_articulated_system(limited_pendulum(damping));
    VecX q(2), u(2), tau(2);
    q << 0.7, -0.4;
    u << 1.1, -0.6;
    tau << 0.5, -0.2;
    p.set_state(q, u);
    p.set_generalized_force(tau);
    const AnalyticErrors e = compare_with_fd(world, 1e-6);
    INFO("damping " << damping);
    CHECK(e.A < 1e-7);
    CHECK(e.B < 1e-7);
    if (damping > 0) continue;
    // after a flight step the undamped pendulum has a free-flight history: the two-step velocity
    // update, differentiated at that history by both methods (the finite differences perturb the
    // state with its history)
    REQUIRE(world.integrate() == StepStatus::Ok);
    REQUIRE(world.save_state().systems[0].flight_dt > 0);
    const AnalyticErrors h = compare_with_fd(world, 1e-6);
    CHECK(h.A < 1e-7);
    CHECK(h.B < 1e-7);
    // at the history with a changed torque and a pending push: the input change's term
    // M^-1 (g - g_prev) of the update, through M(q) and J(q)^T f_ext
    tau << -0.3, 0.4;
    p.set_generalized_force(tau);
    p.set_external_force(1, Vec3(0.5, -1, 2), Vec3(0.1, 0.2, -1.0));
    const AnalyticErrors c = compare_with_fd(world, 1e-6);
    CHECK(c.A < 1e-7);
    CHECK(c.B < 1e-7);
  }
}

TEST_CASE("transition_derivatives analytic: a double pendulum reaching its joint limit", "[world]") {
  JointLimits lim;
  lim.lower = -0.3;
  lim.upper = 0.3;
  World world;
  ArticulatedSystem& p = world.add_articulated_system(limited_pendulum(0.0, lim));
  VecX q(2), u(2), tau(2);
  // 1 mm before the upper limit of joint 2 at 2 rad/s: the step closes the gap (target -gap / dt)
  q << 0.7, 0.299;
  u << 0.2, 2.0;
  tau << 0.5, 2.0;
  p.set_state(q, u);
  p.set_generalized_force(tau);
  TransitionOptions o;
  o.method = TransitionMethod::Analytic;
  const TransitionJacobians an = world.transition_derivatives(o);
  // the limit holds u2+ = -gap / dt whatever u: du2+/du = 0, du2+/dq2 = -1 / dt
  CHECK(std::abs(an.A(3, 3)) < 1e-12);
  CHECK(an.A(3, 1) == Approx(-1 / world.time_step()));
  const AnalyticErrors e = compare_with_fd(world, 1e-7);
  CHECK(e.A < 1e-6);
  CHECK(e.B < 1e-5);
}

TEST_CASE("transition_derivatives analytic: a box resting and a box sliding on the ground", "[world]") {
  for (bool sliding : {false, true}) {
    World world;
    // The analytic Jacobian is that of the exact solution of the contact problem; the bisection
    // solver stops at 1e-6 m/s by default, and on a box held by 4 corners (a singular G) the
    // truncated iteration's own dependence on u shows in the differences (1.4e-4 relative in A).
    // Solved to 1e-12 they agree.
    SolverSettings ss;
    ss.bisection.tolerance = 1e-12;
    world.set_contact_solver(make_contact_solver(ss));
    world.add_ground();
    ArticulatedSystem& box = world.add_box("box", Vec3(0.4, 0.3, 0.2), 2.0);
    VecX q(7), u = VecX::Zero(6);
    q << 0, 0, 0.1, 1, 0, 0, 0;
    box.set_state(q, u);
    for (int k = 0; k < 200; ++k) world.integrate();  // settled
    // A body that landed rests at depth 0 (the landing target -gap / dt ends the step on the
    // surface), the kink between that target (apart) and 0 (touching): 1 mm deeper, the split
    // correction pushes out at 0.2 m/s and the step is smooth.
    VecX qd = box.q();
    qd[2] -= 1e-3;
    box.set_state(qd, box.u());
    VecX tau = VecX::Zero(6);
    if (sliding) {
      u = box.u();
      u[0] = 1.0;
      box.set_state(box.q(), u);
    } else {
      tau << 1.0, -0.5, 0, 0, 0, 0.05;  // inside the friction cone: sticks
      box.set_generalized_force(tau);
    }
    // (eps 1e-5: the solver stops at a tolerance, and a smaller stencil resolves its residual)
    const AnalyticErrors e = compare_with_fd(world, 1e-5);
    INFO((sliding ? "sliding" : "sticking") << ": A " << e.A << ", B " << e.B);
    CHECK(e.A < 1e-5);
    if (sliding) {
      CHECK(e.B < 1e-5);
    } else {  // held by 4 sticking corners, the box does not respond to tau at all: B = 0
      TransitionOptions o;
      o.method = TransitionMethod::Analytic;
      CHECK(world.transition_derivatives(o).B.norm() < 1e-12);
    }
  }
}

TEST_CASE("transition_derivatives analytic: ANYmal standing", "[world]") {
  std::unique_ptr<World> world = load_world(impulse_test::source_path("models/worlds/anymal_stand.xml"));
  for (int k = 0; k < 50; ++k) world->integrate();
  SolverSettings ss;  // (solved to 1e-12, see the box above)
  ss.bisection.tolerance = 1e-12;
  world->set_contact_solver(make_contact_solver(ss));
  // the feet rest where the split correction stops pushing out (depth = slop), a kink: 0.2 mm
  // lower, all four push out
  ArticulatedSystem& robot = world->system(0);
  VecX q = robot.q();
  q[2] -= 2e-4;
  robot.set_state(q, robot.u());
  const AnalyticErrors e = compare_with_fd(*world, 1e-6);
  INFO("A " << e.A << ", B " << e.B);
  CHECK(e.A < 1e-6);
  CHECK(e.B < 1e-5);
}

TEST_CASE("transition_derivatives analytic: an impact is refused with a one-line error, the World unchanged",
          "[world]") {
  World world;
  world.set_default_material(0.5, 0.8);
  world.add_ground();
  ArticulatedSystem& ball = world.add_sphere("ball", 0.1, 1.0);
  VecX q(7), u = VecX::Zero(6);
  q << 0, 0, 0.102, 1, 0, 0, 0;
  u[2] = -3;  // reaches the ground within the step and bounces
  ball.set_state(q, u);
  TransitionOptions o;
  o.method = TransitionMethod::Analytic;
  CHECK_THROWS_WITH(world.transition_derivatives(o),
                    Catch::StartsWith("transition_derivatives: the analytic method does not differentiate") &&
                        Catch::EndsWith("in this step; use method FiniteDifference"));
  CHECK(world.time() == 0);
  CHECK(ball.q() == q);
  o.method = static_cast<TransitionMethod>(7);
  CHECK_THROWS_WITH(world.transition_derivatives(o), "transition_derivatives: unknown method 7");
}

TEST_CASE("transition_derivatives analytic: two spheres pressed together on the ground", "[world]") {
  // Between two moving spheres the normal n = (c_a - c_b) / |c_a - c_b|, the contact point and the
  // contact frame turn with both centres: d(J^T lambda)/dq and d(J v)/dq carry those terms. A big
  // and a small sphere on the ground (the normal between them tilted), pushed together; sticking
  // (at rest) and sliding (the small one spinning against the big one).
  for (bool sliding : {false, true}) {
    World world;
    SolverSettings ss;
    ss.bisection.tolerance = 1e-12;
    world.set_contact_solver(make_contact_solver(ss));
    world.add_ground();
    ArticulatedSystem& big = world.add_sphere("big", 0.3, 2.0);
    ArticulatedSystem& small = world.add_sphere("small", 0.1, 0.5);
    // resting on the ground 1 mm deep (the split correction acts: the step is smooth), touching
    // each other 1 mm deep along a tilted normal
    const Scalar rb = 0.3, rs = 0.1, dz = rb - rs;
    const Scalar dx = std::sqrt((rb + rs - 1e-3) * (rb + rs - 1e-3) - dz * dz);
    VecX qb(7), qs(7);
    qb << 0, 0, rb - 1e-3, 1, 0, 0, 0;
    qs << dx, 0.02, rs - 1e-3, 1, 0, 0, 0;
    VecX ub = VecX::Zero(6), us = VecX::Zero(6);
    if (sliding) us[4] = 3.0;  // spinning about y: slides on the big sphere and on the ground
    big.set_state(qb, ub);
    small.set_state(qs, us);
    VecX fb = VecX::Zero(6), fs = VecX::Zero(6);
    fb << 2.0, 0.3, 0, 0, 0, 0;
    fs << -2.0, 0, 0, 0, 0, 0;
    big.set_generalized_force(fb);
    small.set_generalized_force(fs);
    const AnalyticErrors e = compare_with_fd(world, 1e-6);
    INFO((sliding ? "sliding" : "sticking") << ": A " << e.A << ", B " << e.B);
    CHECK(e.A < 1e-5);
    CHECK(e.B < 1e-5);
  }
}

TEST_CASE("transition_derivatives analytic: a sphere on a free box on the ground", "[world]") {
  // Between a moving sphere and a moving box the normal turns with the box (a face contact), the
  // point moves with the sphere's centre and the box: a sphere resting on a box that rests on the
  // ground, tilted by a pushing torque; sticking (a small push), and sliding (the sphere spinning).
  for (bool sliding : {false, true}) {
    World world;
    SolverSettings ss;
    ss.bisection.tolerance = 1e-12;
    world.set_contact_solver(make_contact_solver(ss));
    world.add_ground();
    ArticulatedSystem& box = world.add_box("box", Vec3(0.4, 0.3, 0.2), 2.0);
    ArticulatedSystem& ball = world.add_sphere("ball", 0.1, 0.5);
    VecX qx(7), qs(7);
    qx << 0, 0, 0.1 - 1e-3, 1, 0, 0, 0;  // 1 mm deep: the split correction acts, the step is smooth
    qs << 0.05, -0.03, 0.2 - 2e-3 + 0.1 - 1e-3, 1, 0, 0, 0;
    VecX us = VecX::Zero(6);
    if (sliding) us[3] = 4.0;  // spinning about x: slides on the box's top face
    box.set_state(qx, VecX::Zero(6));
    ball.set_state(qs, us);
    VecX fx = VecX::Zero(6), fs = VecX::Zero(6);
    fx << 0.5, 0, 0, 0, 0, 0.05;
    fs << 0.2, 0.1, 0, 0, 0, 0;
    box.set_generalized_force(fx);
    ball.set_generalized_force(fs);
    const AnalyticErrors e = compare_with_fd(world, 1e-5);
    INFO((sliding ? "sliding" : "sticking") << ": A " << e.A << ", B " << e.B);
    CHECK(e.A < 1e-5);
    CHECK(e.B < 1e-5);
  }
}

TEST_CASE("transition_derivatives analytic: a box on a free box on the ground", "[world]") {
  // A face contact between two moving boxes: the normal turns with the reference box, the points
  // (the top box's corners over the lower box's face, and, turned and overhanging, the clip points
  // of its edges with the lower face's sides) move with both. Sticking under a small push (both
  // boxes held by their corners: B = 0), and the top box sliding in translation (every corner
  // slides the same way: the normal impulses that 4 corners leave undetermined give one friction
  // resultant).
  for (bool sliding : {false, true}) {
    for (bool overhang : {false, true}) {
      World world;
      SolverSettings ss;
      ss.bisection.tolerance = 1e-12;
      world.set_contact_solver(make_contact_solver(ss));
      world.add_ground();
      ArticulatedSystem& low = world.add_box("low", Vec3(0.4, 0.3, 0.2), 2.0);
      ArticulatedSystem& top = world.add_box("top", overhang ? Vec3(0.3, 0.3, 0.1) : Vec3(0.2, 0.1, 0.1), 0.8);
      VecX ql(7), qt(7);
      ql << 0, 0, 0.1 - 1e-3, 1, 0, 0, 0;
      const Scalar yaw = overhang ? 0.5 : 0.2;
      qt << 0.03, 0.02, 0.2 - 2e-3 + 0.05 - 1e-3, std::cos(yaw / 2), 0, 0, std::sin(yaw / 2);
      VecX ut = VecX::Zero(6);
      if (sliding) ut[0] = 0.5;
      low.set_state(ql, VecX::Zero(6));
      top.set_state(qt, ut);
      VecX fl = VecX::Zero(6), ft = VecX::Zero(6);
      fl << 0.5, 0, 0, 0, 0, sliding ? 0 : 0.05;
      ft << 0.2, 0.1, 0, 0, 0, sliding ? 0 : 0.01;
      low.set_generalized_force(fl);
      top.set_generalized_force(ft);
      const AnalyticErrors e = compare_with_fd(world, 1e-5);
      INFO((sliding ? "sliding" : "sticking") << (overhang ? ", overhanging" : "") << ": A " << e.A << ", B " << e.B);
      CHECK(e.A < 1e-5);
      if (sliding) {
        CHECK(e.B < 1e-5);
      } else {
        TransitionOptions o;
        o.method = TransitionMethod::Analytic;
        CHECK(world.transition_derivatives(o).B.norm() < 1e-12);
      }
    }
  }
}
