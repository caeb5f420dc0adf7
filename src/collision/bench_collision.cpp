#include "impulse/collision/bench_collision.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

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

  // 1000 moving boxes above 100 static boxes: moving-vs-moving pairs in one tree, static boxes in
  // their own tree (never updated), each box reinserted only when it leaves its fat AABB
  {
    CollisionWorld world;
    world.add_ground();
    for (int i = 0; i < 10; ++i) {
      for (int j = 0; j < 10; ++j) {
        world.add_static_box("tile" + std::to_string(10 * i + j),
                             SE3(Mat3::Identity(), Vec3(0.25 * i, 0.25 * j, 0.05)), Vec3(0.24, 0.24, 0.1));
      }
    }
    CollisionShape box;
    box.name = "box";
    box.type = ShapeType::Box;
    box.size = Vec3::Constant(0.2);
    std::vector<Index> ids;
    std::vector<Vec3> centres;
    for (int i = 0; i < 10; ++i) {
      for (int j = 0; j < 10; ++j) {
        for (int k = 0; k < 10; ++k) {
          ids.push_back(world.add_free_body("box" + std::to_string(100 * i + 10 * j + k), {box}));
          centres.emplace_back(0.25 * i, 0.25 * j, 0.2 + 0.25 * k);
        }
      }
    }
    ContactSet many(16384);
    long pass = 0;
    const long passes1000 = std::max(kBatch, r.passes / 100);
    r.boxes1000_us = median_us(passes1000, [&] {
      const Scalar t = 0.05 * static_cast<Scalar>(pass++);  // 2 cm circle, 1 mm per pass
      for (std::size_t n = 0; n < ids.size(); ++n) {
        const Scalar phase = 0.37 * static_cast<Scalar>(n);
        const Vec3 d(0.02 * std::cos(t + phase), 0.02 * std::sin(t + phase), 0.02 * std::sin(0.5 * t + phase));
        world.update(ids[n], SE3(Mat3::Identity(), centres[n] + d));
      }
      world.detect(many);
    });
    r.boxes1000_contacts = many.size();
  }
  return r;
}

}  // namespace impulse
