// The per-step collision calls (update + detect) do not allocate in steady state: counted with the
// shared malloc counter of tests/support/alloc_counter.hpp.
#include <catch2/catch.hpp>

#include "impulse/collision/collision_world.hpp"
#include "impulse/model/model_builder.hpp"
#include "support/alloc_counter.hpp"

using namespace impulse;

namespace {

CollisionShape make(ShapeType t, const Vec3& size) {
  CollisionShape s;
  s.type = t;
  s.size = size;
  s.name = shape_type_name(t);
  return s;
}

}  // namespace

TEST_CASE("collision update + detect do not allocate in steady state", "[collision]") {
  if (!test::alloc_counter_available()) return;
  CollisionWorld world;
  world.add_ground();
  world.add_static_box("table", SE3(Mat3::Identity(), Vec3(5, 0, 0.5)), Vec3(2, 2, 1));
  // every closed-form route (plane manifolds, box-box, sphere-box, sphere-sphere) plus the FCL
  // broadphase, touching and within the margin. Pairs that fall back to fcl::collide (capsule,
  // cylinder or mesh against a non-plane shape) are NOT allocation-free: FCL 0.7 news its GJK shape
  // wrappers and a contact vector inside every call (see docs/collision.md).
  std::vector<Index> bodies;
  bodies.push_back(world.add_free_body("box", {make(ShapeType::Box, Vec3(1, 1, 1))}));
  bodies.push_back(world.add_free_body("ball", {make(ShapeType::Sphere, Vec3(0.2, 0, 0))}));
  bodies.push_back(world.add_free_body("ball2", {make(ShapeType::Sphere, Vec3(0.2, 0, 0))}));
  bodies.push_back(world.add_free_body("cyl", {make(ShapeType::Cylinder, Vec3(0.1, 0.4, 0))}));
  bodies.push_back(world.add_free_body("box_on_table", {make(ShapeType::Box, Vec3(0.5, 0.5, 0.5))}));
  bodies.push_back(world.add_free_body("ball_on_table", {make(ShapeType::Sphere, Vec3(0.1, 0, 0))}));
  std::vector<SE3> poses = {
      SE3(Mat3::Identity(), Vec3(0, 0, 0.499)),   SE3(Mat3::Identity(), Vec3(0, 0, 1.19)),
      SE3(Mat3::Identity(), Vec3(0, 0.35, 1.19)), SE3(Mat3::Identity(), Vec3(-3, 0, 0.199)),
      SE3(Mat3::Identity(), Vec3(5, 0, 1.249)),   SE3(Mat3::Identity(), Vec3(5.6, 0.6, 1.099))};
  ContactSet contacts(64);
  auto step = [&](int k) {
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      SE3 X = poses[i];
      X.p.z() += 0.001 * ((k + static_cast<int>(i)) % 3);  // touching and within-margin variants
      world.update(bodies[i], X);
    }
    world.detect(contacts);
  };
  for (int k = 0; k < 10; ++k) step(k);  // warm-up: FCL result buffers reach their capacity
  REQUIRE(contacts.size() >= 8);
  test::alloc_counter_start();
  for (int k = 0; k < 100; ++k) step(k);
  const long n = test::alloc_counter_stop();
  CHECK(n == 0);
  CHECK_FALSE(contacts.overflow());
}
