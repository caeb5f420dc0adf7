// Allocation-free use of FCL 0.7's narrow phase. See fcl_narrow.hpp.
#include "fcl_narrow.hpp"

#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/capsule.h>
#include <fcl/geometry/shape/cylinder.h>
#include <fcl/geometry/shape/sphere.h>
#include <fcl/narrowphase/collision.h>
#include <fcl/narrowphase/distance.h>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace impulse {
namespace detail {

namespace {

using fcl::Transform3d;
using fcl::Vector3d;
namespace fd = fcl::detail;

// The libccd object of a convex FCL shape, built in place (what GJKInitializer::createGJKObject
// builds with new).
template <typename Shape>
struct Ccd;
template <>
struct Ccd<fcl::Boxd> {
  fd::ccd_box_t o;
  Ccd(const fcl::Boxd& s, const Transform3d& tf) { fd::boxToGJK(s, tf, &o); }
};
template <>
struct Ccd<fcl::Capsuled> {
  fd::ccd_cap_t o;
  Ccd(const fcl::Capsuled& s, const Transform3d& tf) { fd::capToGJK(s, tf, &o); }
};
template <>
struct Ccd<fcl::Cylinderd> {
  fd::ccd_cyl_t o;
  Ccd(const fcl::Cylinderd& s, const Transform3d& tf) { fd::cylToGJK(s, tf, &o); }
};
template <>
struct Ccd<fcl::Sphered> {
  fd::ccd_sphere_t o;
  Ccd(const fcl::Sphered& s, const Transform3d& tf) { fd::sphereToGJK(s, tf, &o); }
};

template <typename Shape>
constexpr bool kConvex = std::is_same_v<Shape, fcl::Boxd> || std::is_same_v<Shape, fcl::Capsuled> ||
                         std::is_same_v<Shape, fcl::Cylinderd> || std::is_same_v<Shape, fcl::Sphered>;

// FCL's triCreateGJKObject (transformed triangle), in place.
struct CcdTriangle {
  fd::ccd_triangle_t o;
  CcdTriangle(const Vector3d& P1, const Vector3d& P2, const Vector3d& P3, const Transform3d& tf) {
    const Vector3d center((P1[0] + P2[0] + P3[0]) / 3, (P1[1] + P2[1] + P3[1]) / 3, (P1[2] + P2[2] + P3[2]) / 3);
    ccdVec3Set(&o.p[0], P1[0], P1[1], P1[2]);
    ccdVec3Set(&o.p[1], P2[0], P2[1], P2[2]);
    ccdVec3Set(&o.p[2], P3[0], P3[1], P3[2]);
    ccdVec3Set(&o.c, center[0], center[1], center[2]);
    const fcl::Quaterniond q(tf.linear());
    const Vector3d& T = tf.translation();
    ccdVec3Set(&o.pos, T[0], T[1], T[2]);
    ccdQuatSet(&o.rot, q.x(), q.y(), q.z(), q.w());
    ccdQuatInvert2(&o.rot_inv, &o.rot);
  }
};

// Pairs FCL's libccd solver answers in closed form (no allocation there): every sphere pair,
// box-box, and for distance also capsule-capsule.
template <typename A, typename B>
constexpr bool kClosedIntersect = std::is_same_v<A, fcl::Sphered> || std::is_same_v<B, fcl::Sphered> ||
                                  (std::is_same_v<A, fcl::Boxd> && std::is_same_v<B, fcl::Boxd>);
template <typename A, typename B>
constexpr bool kClosedDistance = std::is_same_v<A, fcl::Sphered> || std::is_same_v<B, fcl::Sphered> ||
                                 (std::is_same_v<A, fcl::Capsuled> && std::is_same_v<B, fcl::Capsuled>);

// GJKSolver_libccd with the allocating generic leaf tests replaced by the same computations on
// stack objects. FCL's traversal templates call these by name (static dispatch on the solver type).
struct Solver : fd::GJKSolver_libccd<double> {
  using Base = fd::GJKSolver_libccd<double>;
  using Base::shapeDistance;
  using Base::shapeIntersect;
  using Base::shapeTriangleDistance;
  using Base::shapeTriangleIntersect;

  template <typename A, typename B>
  bool shapeIntersect(const A& s1, const Transform3d& tf1, const B& s2, const Transform3d& tf2,
                      std::vector<fcl::ContactPoint<double>>* contacts) const {
    if constexpr (!kConvex<A> || !kConvex<B> || kClosedIntersect<A, B>) {
      return Base::shapeIntersect(s1, tf1, s2, tf2, contacts);
    } else {
      Ccd<A> o1(s1, tf1);
      Ccd<B> o2(s2, tf2);
      if (!contacts) {
        return fd::GJKCollide<double>(&o1.o, fd::GJKInitializer<double, A>::getSupportFunction(),
                                      fd::GJKInitializer<double, A>::getCenterFunction(), &o2.o,
                                      fd::GJKInitializer<double, B>::getSupportFunction(),
                                      fd::GJKInitializer<double, B>::getCenterFunction(), max_collision_iterations,
                                      collision_tolerance, nullptr, nullptr, nullptr);
      }
      Vector3d normal, point;
      double depth;
      const bool res = fd::GJKCollide<double>(
          &o1.o, fd::GJKInitializer<double, A>::getSupportFunction(), fd::GJKInitializer<double, A>::getCenterFunction(),
          &o2.o, fd::GJKInitializer<double, B>::getSupportFunction(), fd::GJKInitializer<double, B>::getCenterFunction(),
          max_collision_iterations, collision_tolerance, &point, &depth, &normal);
      if (res) contacts->emplace_back(normal, point, depth);
      return res;
    }
  }

  template <typename Shape>
  bool shapeTriangleIntersect(const Shape& s, const Transform3d& tf1, const Vector3d& P1, const Vector3d& P2,
                              const Vector3d& P3, const Transform3d& tf2, Vector3d* contact_points,
                              double* penetration_depth, Vector3d* normal) const {
    if constexpr (!kConvex<Shape> || std::is_same_v<Shape, fcl::Sphered>) {
      return Base::shapeTriangleIntersect(s, tf1, P1, P2, P3, tf2, contact_points, penetration_depth, normal);
    } else {
      Ccd<Shape> o1(s, tf1);
      CcdTriangle o2(P1, P2, P3, tf2);
      return fd::GJKCollide<double>(&o1.o, fd::GJKInitializer<double, Shape>::getSupportFunction(),
                                    fd::GJKInitializer<double, Shape>::getCenterFunction(), &o2.o,
                                    fd::triGetSupportFunction(), fd::triGetCenterFunction(), max_collision_iterations,
                                    collision_tolerance, contact_points, penetration_depth, normal);
    }
  }

  template <typename A, typename B>
  bool shapeDistance(const A& s1, const Transform3d& tf1, const B& s2, const Transform3d& tf2, double* dist,
                     Vector3d* p1, Vector3d* p2) const {
    if constexpr (!kConvex<A> || !kConvex<B> || kClosedDistance<A, B>) {
      return Base::shapeDistance(s1, tf1, s2, tf2, dist, p1, p2);
    } else {
      Ccd<A> o1(s1, tf1);
      Ccd<B> o2(s2, tf2);
      return fd::GJKDistance(&o1.o, fd::GJKInitializer<double, A>::getSupportFunction(), &o2.o,
                             fd::GJKInitializer<double, B>::getSupportFunction(), max_distance_iterations,
                             distance_tolerance, dist, p1, p2);
    }
  }

  template <typename Shape>
  bool shapeTriangleDistance(const Shape& s, const Transform3d& tf1, const Vector3d& P1, const Vector3d& P2,
                             const Vector3d& P3, const Transform3d& tf2, double* dist, Vector3d* p1,
                             Vector3d* p2) const {
    if constexpr (!kConvex<Shape> || std::is_same_v<Shape, fcl::Sphered>) {
      return Base::shapeTriangleDistance(s, tf1, P1, P2, P3, tf2, dist, p1, p2);
    } else {
      Ccd<Shape> o1(s, tf1);
      CcdTriangle o2(P1, P2, P3, tf2);
      return fd::GJKDistance(&o1.o, fd::GJKInitializer<double, Shape>::getSupportFunction(), &o2.o,
                             fd::triGetSupportFunction(), max_distance_iterations, distance_tolerance, dist, p1, p2);
    }
  }
};

}  // namespace

struct FclNarrow::Impl {
  Solver csolver, dsolver;
  fcl::CollisionRequestd creq;
  fcl::CollisionResultd cres;
  fcl::DistanceRequestd dreq{true};
  fcl::DistanceResultd dres;
  std::vector<fcl::ContactPoint<double>> points;

  Impl() {
    creq.num_max_contacts = static_cast<std::size_t>(kMaxFclContacts);
    creq.enable_contact = true;
    creq.gjk_solver_type = fcl::GST_LIBCCD;
    dreq.gjk_solver_type = fcl::GST_LIBCCD;
    // the settings fcl::collide / fcl::distance give their libccd solver
    csolver.collision_tolerance = creq.gjk_tolerance;
    dsolver.distance_tolerance = dreq.distance_tolerance;
    points.reserve(16);
  }

  // Shape-shape pair, as FCL's ShapeCollisionTraversalNode::leafTesting (contacts in FCL's order).
  template <typename A, typename B>
  int shapes(const A& sa, const Transform3d& ta, const B& sb, const Transform3d& tb, int max, Vec3* position,
             Vec3* normal, Scalar* depth) {
    points.clear();
    if (!csolver.shapeIntersect(sa, ta, sb, tb, &points)) return 0;
    if (static_cast<int>(points.size()) > max) {
      std::partial_sort(points.begin(), points.begin() + max, points.end(),
                        [](const auto& x, const auto& y) { return x.penetration_depth > y.penetration_depth; });
    }
    int k = 0;
    for (; k < max && k < static_cast<int>(points.size()); ++k) {
      position[k] = points[static_cast<std::size_t>(k)].pos;
      normal[k] = points[static_cast<std::size_t>(k)].normal;
      depth[k] = points[static_cast<std::size_t>(k)].penetration_depth;
    }
    return k;
  }

  template <typename A>
  int dispatch_b(const A& sa, const Transform3d& ta, const Shape& b, int max, Vec3* position, Vec3* normal,
                 Scalar* depth) {
    const fcl::CollisionGeometryd* g = b.fco->collisionGeometry().get();
    const Transform3d& tb = b.fco->getTransform();
    switch (b.type) {
      case ShapeType::Sphere: return shapes(sa, ta, *static_cast<const fcl::Sphered*>(g), tb, max, position, normal, depth);
      case ShapeType::Box: return shapes(sa, ta, *static_cast<const fcl::Boxd*>(g), tb, max, position, normal, depth);
      case ShapeType::Capsule:
        return shapes(sa, ta, *static_cast<const fcl::Capsuled*>(g), tb, max, position, normal, depth);
      case ShapeType::Cylinder:
        return shapes(sa, ta, *static_cast<const fcl::Cylinderd*>(g), tb, max, position, normal, depth);
      case ShapeType::Mesh: break;
    }
    return -1;
  }
};

FclNarrow::FclNarrow() : impl_(std::make_unique<Impl>()) {}
FclNarrow::~FclNarrow() = default;

int FclNarrow::collide(const Shape& a, const Shape& b, int max, Vec3* position, Vec3* normal, Scalar* depth) {
  Impl& w = *impl_;
  if (a.type != ShapeType::Mesh && b.type != ShapeType::Mesh) {
    const fcl::CollisionGeometryd* g = a.fco->collisionGeometry().get();
    const Transform3d& ta = a.fco->getTransform();
    switch (a.type) {
      case ShapeType::Sphere:
        return w.dispatch_b(*static_cast<const fcl::Sphered*>(g), ta, b, max, position, normal, depth);
      case ShapeType::Box: return w.dispatch_b(*static_cast<const fcl::Boxd*>(g), ta, b, max, position, normal, depth);
      case ShapeType::Capsule:
        return w.dispatch_b(*static_cast<const fcl::Capsuled*>(g), ta, b, max, position, normal, depth);
      case ShapeType::Cylinder:
        return w.dispatch_b(*static_cast<const fcl::Cylinderd*>(g), ta, b, max, position, normal, depth);
      case ShapeType::Mesh: break;
    }
  }
  // a mesh: FCL's BVH traversal with the allocation-free solver
  w.cres.clear();
  fcl::collide(a.fco.get(), b.fco.get(), &w.csolver, w.creq, w.cres);
  int k = 0;
  for (std::size_t i = 0; i < w.cres.numContacts() && k < max; ++i, ++k) {
    const fcl::Contactd& c = w.cres.getContact(i);
    position[k] = c.pos;
    normal[k] = c.normal;
    depth[k] = c.penetration_depth;
  }
  return k;
}

Scalar FclNarrow::distance(const Shape& a, const Shape& b, Vec3& point_a, Vec3& point_b) {
  Impl& w = *impl_;
  w.dres.clear();
  const Scalar d = fcl::distance(a.fco.get(), b.fco.get(), &w.dsolver, w.dreq, w.dres);
  point_a = w.dres.nearest_points[0];
  point_b = w.dres.nearest_points[1];
  return d;
}

}  // namespace detail
}  // namespace impulse
