// `impulse bench collision [--json]`: median microseconds per collision pass (pose update + detect)
// for ANYmal standing on the ground, for 100 boxes resting on it and for 1000 moving boxes above
// 100 static ones. Registered in bench.cpp (declared in commands.hpp).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "bench/timing.hpp"
#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/collision/collision_world.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/model/model.hpp"

namespace impulse::cli {

namespace {

struct CollisionBenchResult {
  double anymal_us = 0;       // ANYmal standing on the ground (its collision shapes vs the plane)
  double boxes100_us = 0;     // 100 boxes (0.5 m) resting on the ground in a 10 x 10 grid
  Index anymal_contacts = 0;  // contacts per pass, as a sanity check (4 when standing)
  Index boxes100_contacts = 0;  // 400
  // 1000 moving boxes (0.2 m, a 10 x 10 x 10 lattice 0.25 m apart, each drifting on a 2 cm circle
  // at 1 m/s per 1 ms pass) above 100 static boxes and the ground: the broadphase at scale
  double boxes1000_us = 0;
  Index boxes1000_contacts = 0;
  long passes = 0;            // passes timed per world (the 1000-box world: passes / 100, >= 100)
};

constexpr long kBatch = 100;

// Median over batches of kBatch passes of the time per pass, in microseconds (one batch of warm-up).
template <typename Pass>
double median_us(long passes, Pass&& pass) {
  return bench::median_us_per_call(passes, kBatch, kBatch, pass);
}

// `anymal` with its body poses `X_WB` standing on the ground z = 0 (e.g. data.oMi after forward
// kinematics). Each world runs `passes` passes in batches of 100; the median over batches of the
// time per pass is reported.
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

}  // namespace

int run_bench_collision(const BenchOptions& o) {
  const std::string path = o.model.empty() ? default_model_path() : o.model;
  const Model m = load_urdf(path);
  // standing posture (ANYmal: hips and knees bent, front and hind mirrored; other floating-base
  // models: neutral joints), the base lowered until the lowest collision point is 1 mm deep
  Data d(m);
  VecX q = m.neutral_configuration();
  if (m.floating_base && m.nq == 19) {
    VecX joints(12);
    joints << 0, 0.4, -0.8, 0, 0.4, -0.8, 0, -0.4, 0.8, 0, -0.4, 0.8;
    q.tail(12) = joints;
  }
  forward_kinematics(m, d, q);
  Scalar lowest = 0;
  bool any = false;
  for (const CollisionShape& s : m.collision) {
    const SE3 X = d.oMi[s.body] * s.X_BS;
    Scalar z = X.p.z();
    switch (s.type) {
      case ShapeType::Sphere: z -= s.size.x(); break;
      case ShapeType::Box: z -= 0.5 * (X.R.cwiseAbs() * s.size).z(); break;
      default: z -= 0.5 * s.size.norm(); break;
    }
    lowest = any ? std::min(lowest, z) : z;
    any = true;
  }
  if (m.floating_base) {
    q[2] -= lowest + 0.001;
    forward_kinematics(m, d, q);
  }
  const long passes = std::max(100L, std::min(o.calls, 100000L));
  const CollisionBenchResult r = bench_collision(m, d.oMi, passes);
  if (o.json) {
    json j;
    j["model"] = path;
    j["passes"] = r.passes;
    j["anymal_us"] = r.anymal_us;
    j["anymal_contacts"] = r.anymal_contacts;
    j["boxes100_us"] = r.boxes100_us;
    j["boxes100_contacts"] = r.boxes100_contacts;
    j["boxes1000_us"] = r.boxes1000_us;
    j["boxes1000_contacts"] = r.boxes1000_contacts;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "collision benchmark: median per pass (update + detect) over " << r.passes << " passes\n"
              << std::fixed << std::setprecision(3) << "  " << std::left << std::setw(36) << "ANYmal standing"
              << std::right << std::setw(9) << r.anymal_us << " us  (" << r.anymal_contacts << " contacts)\n"
              << "  " << std::left << std::setw(36) << "100 boxes resting on the ground" << std::right << std::setw(9)
              << r.boxes100_us << " us  (" << r.boxes100_contacts << " contacts)\n"
              << "  " << std::left << std::setw(36) << "1000 moving boxes, 100 static" << std::right << std::setw(9)
              << r.boxes1000_us << " us  (" << r.boxes1000_contacts << " contacts)\n";
  }
  return 0;
}

}  // namespace impulse::cli
