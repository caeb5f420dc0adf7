// The step Jacobians' columns on the thread pool (world/transition_derivatives.hpp), in the
// ThreadSanitizer stage's selection (tests/batch): a World with a contact (a box resting on the
// ground) and a free sphere, differentiated on 1 and 3 threads, one-shot and through a kept
// TransitionDifferentiator: the same bits, and the World not changed.
#include <catch2/catch.hpp>

#include "impulse/world/transition_differentiator.hpp"
#include "impulse/world/world.hpp"

using namespace impulse;

TEST_CASE("transition_derivatives: columns on 1 and 3 threads give the same bits", "[batch]") {
  World world;
  world.add_ground();
  ArticulatedSystem& box = world.add_box("box", Vec3(0.2, 0.2, 0.2), 1.0);
  VecX q = box.q();
  q[2] = 0.1;
  box.set_q(q);
  ArticulatedSystem& ball = world.add_sphere("ball", 0.1, 0.5);
  q = ball.q();
  q[0] = 1.0;
  q[2] = 1.0;
  ball.set_q(q);
  for (int k = 0; k < 20; ++k) world.integrate();
  const std::string before = serialize_state(world.save_state());

  TransitionOptions o;
  const TransitionJacobians one = world.transition_derivatives(o);
  CHECK(one.A.rows() == 24);
  CHECK(one.B.cols() == 12);
  o.num_threads = 3;
  const TransitionJacobians three = world.transition_derivatives(o);
  CHECK(three.A == one.A);
  CHECK(three.B == one.B);
  TransitionDifferentiator kept(world, o);
  for (int k = 0; k < 2; ++k) {
    const TransitionJacobians again = kept.compute(world);
    CHECK(again.A == one.A);
    CHECK(again.B == one.B);
  }
  CHECK(serialize_state(world.save_state()) == before);
}
