// Internal records of the collision world (src/collision only; includes FCL).
#pragma once

#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/geometry/shape/convex.h>
#include <fcl/narrowphase/collision_object.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "impulse/collision/collision_world.hpp"
#include "impulse/collision/convex_hull.hpp"
#include "impulse/collision/heightfield.hpp"
#include "impulse/collision/mesh.hpp"

namespace impulse {
namespace detail {

using Bvh = fcl::BVHModel<fcl::OBBRSSd>;
constexpr int kMaxFclContacts = 4;

// FCL keeps the world AABB protected; the broadphase must see it inflated by the margin.
struct MarginObject : fcl::CollisionObjectd {
  using fcl::CollisionObjectd::CollisionObjectd;
  void set_aabb(const Vec3& lo, const Vec3& hi) {
    aabb.min_ = lo;
    aabb.max_ = hi;
  }
};

// The convex hull of a mesh and its FCL geometry (for the pairs other than hull-plane and
// hull-heightfield), shared by every World in the process that loads the same vertices.
struct HullData {
  ConvexHull hull;
  std::shared_ptr<fcl::Convexd> geometry;
};

struct MeshData {
  TriangleMesh mesh;
  std::shared_ptr<Bvh> bvh;                 // built for the first shape that collides as triangles
  std::shared_ptr<const HullData> hull;     // computed for the first shape that collides as a hull
  bool flat = false;                        // no hull (the vertices lie in a plane): triangles
  Vec3 centre = Vec3::Zero(), half = Vec3::Zero();  // local AABB
  Scalar bound = 0;                                  // max vertex distance from the origin
};

// A shape's FCL object. Copying it makes a new FCL object of the same geometry (immutable after
// set-up, so shared) with the same pose, AABB and user data: the broadphase trees register FCL
// objects, so each CollisionWorld holds its own (CollisionWorld::clone). (fcl::CollisionObject's
// copy does not touch the geometry; its constructors from a geometry write the geometry's local
// AABB, which clones made on several threads at once must not do.)
struct FclObject : std::unique_ptr<MarginObject> {
  using Base = std::unique_ptr<MarginObject>;
  FclObject() = default;
  FclObject(Base p) : Base(std::move(p)) {}  // NOLINT: implicit, like the unique_ptr it wraps
  FclObject(FclObject&&) noexcept = default;
  FclObject& operator=(FclObject&&) noexcept = default;
  FclObject(const FclObject& o) : Base(o ? std::make_unique<MarginObject>(*o) : nullptr) {}
  FclObject& operator=(const FclObject& o) { return *this = FclObject(o); }
};

struct Shape {
  Index object = -1, local = -1, body = -1;
  ShapeType type = ShapeType::Sphere;
  Scalar r = 0, hl = 0;  // sphere, capsule, cylinder
  Vec3 h = Vec3::Zero();  // box half extents
  Scalar bound = 0;       // radius of a sphere about the shape origin enclosing the shape
  SE3 X_BS;
  Mat3 R = Mat3::Identity();  // world pose
  Vec3 p = Vec3::Zero();
  CollisionFilter filter;
  Index material = 0;
  bool is_static = false;
  bool active = false;     // has some partner (plane or shape) that the filters allow
  bool in_manager = false;  // registered in a broadphase manager (the static or the moving one)
  bool queued = false;      // its fat AABB changed since the last detect(): reinsert in the tree
  Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();  // world AABB, inflated by margin / 2 (pair test)
  std::shared_ptr<MeshData> mesh;
  const ConvexHull* hull = nullptr;  // a mesh that collides as its convex hull (mesh->hull)
  FclObject fco;
  std::string name;
};

struct Plane {
  Index object = -1;
  Vec3 n = Vec3::UnitZ();
  Scalar offset = 0;
  CollisionFilter filter;
  Index material = 0;
};

struct Terrain {
  Index object = -1;
  std::shared_ptr<const Heightfield> field;
  CollisionFilter filter;
  Index material = 0;
};

struct Object {
  std::string name;
  bool is_static = false;
  bool self_collision = false;
  Index plane = -1;
  Index terrain = -1;
  std::vector<Index> parent;             // per body
  std::vector<std::string> body_names;   // per body
  std::vector<Index> shapes;             // global shape ids
  std::vector<SE3> X_WB;                 // last poses
  Scalar speculative = 0;                // m: extra margin of this step (swept bound, >= 0)
  Scalar reach = 0;                      // m: max over its shapes of |body origin to shape| + bound
};

inline bool filters_match(const CollisionFilter& a, const CollisionFilter& b) {
  return (a.group & b.mask) != 0 && (b.group & a.mask) != 0;
}

using MeshCache = std::map<std::string, std::shared_ptr<MeshData>>;

bool finite(const SE3& X);

// Validates a shape description of `object_name` (bodies 0..nb-1) and builds its record with its
// FCL geometry; meshes are loaded once per (file, scale) through `cache`. A mesh collides as its
// convex hull when cs.mesh_collision asks for it and `allow_hull` (moving shapes; static meshes
// are triangles) and the mesh has a hull. Throws ModelError.
Shape make_shape(const CollisionShape& cs, const std::string& object_name, Index nb, MaterialTable& materials,
                 MeshCache& cache, bool allow_hull = true);

}  // namespace detail
}  // namespace impulse
