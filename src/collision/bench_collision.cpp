#include "impulse/collision/bench_collision.hpp"

#include <algorithm>
#include <chrono>

#include "impulse/collision/collision_world.hpp"
#include "impulse/model/model.hpp"

namespace impulse {

namespace {

constexpr long kBatch = 100;

// Median over batches of kBatch passes of the time per pass, in microseconds.
template <typename Pass>
double median_us(long passes, Pass&& pass) {
  const long batches = std::max(1L, passes / kBatch);
  std::vector<double> per_pass(static_cast<std::size_t>(batches));
  for (long k = 0; k < kBatch; ++k) pass();  // warm-up
  for (long b = 0; b < batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long k = 0; k < kBatch; ++k) pass();
    const auto t1 = std::chrono::steady_clock::now();
    per_pass[static_cast<std::size_t>(b)] = std::chrono::duration<double, std::micro>(t1 - t0).count() / kBatch;
  }
  std::nth_element(per_pass.begin(), per_pass.begin() + batches / 2, per_pass.end());
  return per_pass[static_cast<std::size_t>(batches / 2)];
}

}  // namespace

CollisionBenchResult bench_collision(const Model& anymal, const std::vector<SE3>& X_WB, long passes) {
  CollisionBenchResult r;
  r.passes = std::max(kBatch, passes);
  ContactSet contacts(1024);

  // ANYmal standing: its shapes (4 feet + torso) against the ground
  {
    CollisionWorld world;
    world.add_ground();
    const Index robot = world.add_object(anymal);
    r.anymal_us = median_us(r.passes, [&] {
      world.update(robot, X_WB);
      world.detect(contacts);
    });
    r.anymal_contacts = contacts.size();
  }

  // 100 boxes of 0.5 m resting 1 mm deep on the ground, 1 m apart (the broadphase sees all pairs)
  {
    CollisionWorld world;
    world.add_ground();
    CollisionShape box;
    box.name = "box";
    box.type = ShapeType::Box;
    box.size = Vec3::Constant(0.5);
    std::vector<Index> ids;
    std::vector<SE3> poses;
    for (int i = 0; i < 10; ++i) {
      for (int j = 0; j < 10; ++j) {
        ids.push_back(world.add_free_body("box" + std::to_string(10 * i + j), {box}));
        poses.emplace_back(Mat3::Identity(), Vec3(i, j, 0.249));
      }
    }
    r.boxes100_us = median_us(r.passes, [&] {
      for (std::size_t k = 0; k < ids.size(); ++k) world.update(ids[k], poses[k]);
      world.detect(contacts);
    });
    r.boxes100_contacts = contacts.size();
  }
  return r;
}

}  // namespace impulse
