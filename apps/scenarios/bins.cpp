// The benches' bins (see the header).
#include "scenarios/bins.hpp"

namespace impulse::scenarios {

void place_free_body(ArticulatedSystem& b, const Vec3& p, const Quat& r) {
  VecX q = b.q();
  q.head<3>() = p;
  q.segment<4>(3) << r.w(), r.x(), r.y(), r.z();
  b.set_q(q);
}

void add_square_box(World& w, Scalar half) {
  w.add_ground();
  w.add_wall("wall_px", Vec3(-1, 0, 0), -half);
  w.add_wall("wall_nx", Vec3(1, 0, 0), -half);
  w.add_wall("wall_py", Vec3(0, -1, 0), -half);
  w.add_wall("wall_ny", Vec3(0, 1, 0), -half);
}

void add_bin(World& w) {
  w.set_default_material(0.6, 0.0);
  add_square_box(w, 0.25);
}

void build_box_bin(World& w) {
  add_bin(w);
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) {
        ArticulatedSystem& b = w.add_box("box", Vec3(0.08, 0.08, 0.08), 0.5);
        const Scalar yaw = 0.3 * (i + 2 * j + 3 * k);
        place_free_body(b, Vec3(-0.2 + 0.1 * i, -0.2 + 0.1 * j, 0.15 + 0.12 * k),
                        Quat(Eigen::AngleAxisd(yaw, Vec3::UnitZ())));
      }
}

void build_clutter(World& w, int shape) {
  add_bin(w);
  for (int k = 0; k < 48; ++k) {
    const Scalar mass = 0.2;
    const int kind = shape >= 0 ? shape : k % 4;
    ArticulatedSystem& b = kind == 0   ? w.add_box("box", Vec3(0.08, 0.05, 0.04), mass)
                           : kind == 1 ? w.add_cylinder("cylinder", 0.03, 0.08, mass)
                           : kind == 2 ? w.add_capsule("capsule", 0.025, 0.08, mass)
                                       : w.add_sphere("sphere", 0.03, mass);
    const Vec3 p(-0.18 + 0.12 * (k % 4), -0.18 + 0.12 * ((k / 4) % 4), 0.08 + 0.14 * (k / 16) + 0.003 * k);
    const Quat r = Eigen::AngleAxisd(0.11 * k, Vec3::UnitZ()) * Eigen::AngleAxisd(0.7 * k, Vec3::UnitY()) *
                   Eigen::AngleAxisd(0.3 * k, Vec3::UnitX());
    place_free_body(b, p, r);
  }
}

}  // namespace impulse::scenarios
