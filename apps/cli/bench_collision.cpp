// `impulse bench collision [--json]`: median microseconds per collision pass (pose update + detect)
// for ANYmal standing on the ground and for 100 boxes resting on it (impulse::bench_collision).
// Registered in bench.cpp (declared in commands.hpp).
#include <iomanip>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/collision/bench_collision.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/io/urdf.hpp"

namespace impulse::cli {

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
