// Speculative contacts (stepper.hpp, CollisionWorld::set_speculative_margin): each moving
// object's contact margin grows with the distance it can travel in one step, so a fast body meets
// the surface as a speculative row (target -gap / dt) instead of penetrating and being thrown back
// by the push-out (docs/fidelity.md item 4).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "impulse/world/world.hpp"

using namespace impulse;

TEST_CASE("speculative contacts: a fast ball lands without penetrating or rebounding", "[stepper]") {
  for (const Scalar speed : {20.0, 50.0}) {
    for (const char* solver : {"bisection", "pgs"}) {
      INFO(speed << " m/s, " << solver);
      World w;  // default settings: 5 mm margin, velocity-level erp 0.2, Poisson law
      w.set_contact_solver(solver);
      w.add_ground();
      w.set_default_material(0.8, 0.0);
      ArticulatedSystem& ball = w.add_sphere("ball", 0.1, 1.0);
      VecX q = ball.q(), u = VecX::Zero(6);
      q[2] = 1.0 + 0.00123;  // an arbitrary phase of the last step before impact
      u[2] = -speed;
      ball.set_state(q, u);
      Scalar deepest = 0, rebound = 0;
      bool landed = false;
      for (int k = 0; k < 600; ++k) {
        REQUIRE(w.integrate() == StepStatus::Ok);
        deepest = std::max(deepest, 0.1 - ball.q()[2]);
        if (w.stats().contacts > 0 && ball.q()[2] < 0.1 + 1e-6) landed = true;
        if (landed) rebound = std::max(rebound, ball.u()[2]);
      }
      REQUIRE(landed);
      CHECK(deepest <= 1e-3);
      CHECK(rebound <= 0.01);
      CHECK(std::abs(ball.q()[2] - 0.1) <= 1e-3);  // resting on the ground at the end
    }
  }
}

TEST_CASE("speculative contacts: the margin is the distance a body can travel in one step", "[stepper]") {
  World w;
  w.add_ground();
  ArticulatedSystem& ball = w.add_sphere("ball", 0.1, 1.0);
  VecX q = ball.q(), u = VecX::Zero(6);
  // 12 mm above the ground, falling at 10 m/s: beyond the 5 mm margin, within the 10 mm a step moves
  q[2] = 0.112;
  u[2] = -10.0;
  ball.set_state(q, u);
  w.integrate1();
  REQUIRE(w.contacts().size() == 1);
  CHECK(w.contacts()[0].depth == Approx(-0.012));
  // at rest 12 mm above the ground: no contact
  World w2;
  w2.add_ground();
  ArticulatedSystem& b2 = w2.add_sphere("ball", 0.1, 1.0);
  q[2] = 0.112;
  b2.set_state(q, VecX::Zero(6));
  w2.integrate1();
  CHECK(w2.contacts().size() == 0);
  // a spinning box (no linear velocity): its corners sweep |w| reach dt
  World w3;
  w3.add_ground();
  ArticulatedSystem& box = w3.add_box("box", Vec3(1, 1, 0.1), 1.0);
  VecX qb = box.q(), ub = VecX::Zero(6);
  qb[2] = 0.05 + 0.008;  // 8 mm gap
  ub[3] = 20.0;          // 20 rad/s about x: corners at reach ~0.71 m sweep ~14 mm per step
  box.set_state(qb, ub);
  w3.integrate1();
  CHECK(w3.contacts().size() > 0);
}
