// Test models for the dynamics tests (header-only): random kinematic trees and a hand-built
// ANYmal-like quadruped, both through ModelBuilder.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "impulse/model/model_builder.hpp"
#include "support/draw.hpp"

namespace impulse {
namespace test {

struct RandomTreeOptions {
  int num_bodies = 12;       // bodies to add (the tree stops early only if depth runs out)
  int max_depth = 6;         // longest root-to-leaf chain
  int max_children = 3;      // branching factor
  bool floating_root = true; // floating root joint, else a random 1- or 3-dof joint to the world
  bool spherical = true;     // allow spherical joints
  bool fixed = true;         // allow fixed joints (bodies welded to their parent)
  bool armature = true;      // random armature on scalar joints
};

// A random physical inertia: a box of random sides with random mass, rotated randomly, with its
// centre of mass offset from the body origin.
inline Inertia random_inertia(std::mt19937& rng) {
  std::uniform_real_distribution<Scalar> side(0.05, 0.6), mass(0.3, 3.0), off(-0.3, 0.3);
  std::normal_distribution<Scalar> n01(0, 1);
  const Scalar m = mass(rng), a = side(rng), b = side(rng), c = side(rng);
  const Vec3 d(m / 12 * (b * b + c * c), m / 12 * (a * a + c * c), m / 12 * (a * a + b * b));
  const Mat3 R = draw_quat(n01, rng).normalized().toRotationMatrix();
  const Vec3 com = draw3(off, rng);
  return Inertia(m, com, R * d.asDiagonal() * R.transpose());
}

inline SE3 random_placement(std::mt19937& rng, Scalar reach = 0.5) {
  std::uniform_real_distribution<Scalar> off(-reach, reach);
  std::normal_distribution<Scalar> n01(0, 1);
  const Vec3 p = draw3(off, rng);  // (g++ drew the translation first)
  return SE3(draw_quat(n01, rng).normalized().toRotationMatrix(), p);
}

inline Vec3 random_axis(std::mt19937& rng) {
  std::normal_distribution<Scalar> n01(0, 1);
  std::uniform_int_distribution<int> pick(0, 3);
  const int k = pick(rng);
  if (k < 3) return Vec3::Unit(k) * (n01(rng) < 0 ? -1.0 : 1.0);  // URDF-like aligned axes too
  return draw3(n01, rng).normalized();
}

// Random tree in depth-first order (ModelBuilder requires parents first and contiguous subtrees).
inline Model random_tree(unsigned seed, const RandomTreeOptions& opt = RandomTreeOptions()) {
  std::mt19937 rng(seed);
  ModelBuilder mb("random_" + std::to_string(seed));
  std::uniform_real_distribution<Scalar> unit(0, 1), arm(0.0, 0.1);
  std::uniform_int_distribution<int> nchild(1, opt.max_children);
  int count = 0;
  auto pick_type = [&](bool root) {
    const Scalar r = unit(rng);
    if (opt.fixed && !root && r < 0.1) return JointType::Fixed;
    if (opt.spherical && r < 0.3) return JointType::Spherical;
    if (r < 0.5) return JointType::Prismatic;
    return JointType::Revolute;
  };
  std::function<void(Index, int)> grow = [&](Index parent, int depth) {
    const int n = nchild(rng);
    for (int c = 0; c < n && count < opt.num_bodies; ++c) {
      const JointType t = pick_type(false);
      JointLimits lim;
      if (opt.armature && (t == JointType::Revolute || t == JointType::Prismatic)) lim.armature = arm(rng);
      const std::string name = std::to_string(count);
      const Inertia inertia = random_inertia(rng);  // in g++'s order of the arguments below
      const Vec3 axis = random_axis(rng);
      const SE3 placement = random_placement(rng);
      const Index b = mb.add_body(parent, "j" + name, t, placement, axis, lim, "b" + name, inertia);
      ++count;
      if (depth + 1 < opt.max_depth) grow(b, depth + 1);
    }
  };
  // root
  const JointType root_type = opt.floating_root ? JointType::Floating : pick_type(true);
  JointLimits lim;
  if (opt.armature && (root_type == JointType::Revolute || root_type == JointType::Prismatic)) lim.armature = arm(rng);
  const SE3 X_root = opt.floating_root ? SE3() : random_placement(rng);
  const Inertia root_inertia = random_inertia(rng);
  const Vec3 root_axis = random_axis(rng);
  mb.add_body(-1, "j0root", root_type, X_root, root_axis, lim, "root", root_inertia);
  count = 1;
  while (count < opt.num_bodies) grow(0, 1);
  return mb.finalize();
}

// ANYmal-like quadruped: floating trunk, 4 legs x (HAA about x, HFE about y, KFE about y), with
// masses and lengths close to ANYmal C. Foot frames "<LEG>_FOOT" at the shank tips.
inline Model quadruped(Scalar armature = 0.0) {
  ModelBuilder mb("quadruped");
  auto box = [](Scalar m, Scalar a, Scalar b, Scalar c, const Vec3& com) {
    return Inertia(m, com, Vec3(m / 12 * (b * b + c * c), m / 12 * (a * a + c * c), m / 12 * (a * a + b * b)).asDiagonal());
  };
  mb.add_body(-1, "root", JointType::Floating, SE3(), Vec3::UnitZ(), JointLimits(), "base",
              box(19.2, 0.6, 0.3, 0.2, Vec3(0.01, 0.0, 0.02)));
  const char* legs[4] = {"LF", "LH", "RF", "RH"};
  JointLimits lim;
  lim.armature = armature;
  for (int l = 0; l < 4; ++l) {
    const Scalar sx = (l % 2 == 0) ? 1 : -1, sy = (l < 2) ? 1 : -1;
    const std::string L = legs[l];
    const Index hip = mb.add_body(0, L + "_HAA", JointType::Revolute, SE3(Mat3::Identity(), Vec3(0.3 * sx, 0.1 * sy, 0)),
                                  Vec3::UnitX(), lim, L + "_HIP", box(2.0, 0.1, 0.1, 0.1, Vec3(0.05 * sx, 0.02 * sy, 0)));
    const Index thigh = mb.add_body(hip, L + "_HFE", JointType::Revolute,
                                    SE3(Mat3::Identity(), Vec3(0.06 * sx, 0.08 * sy, 0)), Vec3::UnitY(), lim,
                                    L + "_THIGH", box(1.5, 0.08, 0.08, 0.3, Vec3(0, 0.03 * sy, -0.12)));
    const Index shank = mb.add_body(thigh, L + "_KFE", JointType::Revolute,
                                    SE3(Mat3::Identity(), Vec3(0.0, 0.1 * sy, -0.285)), Vec3::UnitY(), lim,
                                    L + "_SHANK", box(0.4, 0.05, 0.05, 0.3, Vec3(0.03 * sx, -0.01 * sy, -0.15)));
    mb.add_frame(L + "_FOOT", FrameType::Link, shank, SE3(Mat3::Identity(), Vec3(0.08 * sx, -0.01 * sy, -0.33)));
  }
  return mb.finalize();
}

}  // namespace test
}  // namespace impulse
