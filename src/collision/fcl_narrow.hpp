// Private (src/collision): the narrow phase of the shape pairs that have no closed form here
// (capsule, cylinder or mesh against a non-plane shape), run through FCL 0.7's own algorithms
// (libccd MPR for penetration, FCL's GJK for distance, its closed forms for sphere pairs, its BVH
// traversal for meshes) but without FCL's per-call heap allocations, so that steady-state
// detect() allocates nothing (tests/collision/test_collision_alloc.cpp).
//
// Where FCL allocates and what is done instead (same arithmetic, same results):
//   - fcl::collide on two shapes: a std::vector<ContactPoint> local to the traversal node and two
//     libccd shape objects from new (GJKInitializer::createGJKObject). Here the shape-shape pair
//     skips the traversal node and fills a reused vector; the libccd objects live on the stack.
//   - fcl::distance and the mesh traversals: the same libccd objects (shape and triangle) from new
//     in every leaf test. Here a solver type derived from GJKSolver_libccd overrides those leaf
//     tests with stack objects, and FCL's collide/distance templates run with it.
#pragma once

#include <memory>

#include "world_types.hpp"

namespace impulse {
namespace detail {

class FclNarrow {
 public:
  FclNarrow();
  ~FclNarrow();
  FclNarrow(const FclNarrow&) = delete;
  FclNarrow& operator=(const FclNarrow&) = delete;

  // Contacts of two overlapping shapes as fcl::collide reports them (at most `max`, normal from a
  // to b, depth > 0); 0 when they do not overlap.
  int collide(const Shape& a, const Shape& b, int max, Vec3* position, Vec3* normal, Scalar* depth);
  // Distance between two non-overlapping shapes and the nearest points (world frame), as
  // fcl::distance with nearest points; returns the distance (< 0 if FCL found an overlap).
  Scalar distance(const Shape& a, const Shape& b, Vec3& point_a, Vec3& point_b);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace detail
}  // namespace impulse
