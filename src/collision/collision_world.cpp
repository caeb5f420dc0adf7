// CollisionWorld on FCL: closed-form shape-vs-plane manifolds, the FCL DynamicAABBTree broadphase
// for every other pair, closed-form sphere/box narrow phase and fcl::collide / fcl::distance for
// the rest. See collision_world.hpp and docs/collision.md.
#include "impulse/collision/collision_world.hpp"

#include "fcl_narrow.hpp"
#include "world_types.hpp"

#include <fcl/broadphase/broadphase_dynamic_AABB_tree.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "impulse/collision/manifold.hpp"
#include "impulse/core/check.hpp"
#include "impulse/core/finite.hpp"
#include "impulse/core/prefetch.hpp"
#include "impulse/model/model.hpp"

namespace impulse {

#define COL_MODEL_CHECK(cond, ...) IMPULSE_CHECK_AS(::impulse::ModelError, cond, __VA_ARGS__)

using namespace detail;

struct CollisionWorld::Impl {
  Scalar margin = 0.005;
  MaterialTable materials;
  std::vector<Object> objects;
  std::vector<Shape> shapes;
  std::vector<Plane> planes;
  std::vector<std::pair<Index, Index>> plane_pairs;  // (plane, shape) allowed by the filters
  std::vector<Terrain> terrains;                     // heightfields (heightfield.cpp)
  std::vector<std::pair<Index, Index>> terrain_pairs;  // (terrain, shape) allowed by the filters
  std::vector<Index> static_boxes;                     // static box shapes (ray casts of sensors)
  bool need_broadphase = false;
  // Broadphase: moving shapes in one dynamic AABB tree, static shapes in another that is built
  // once and never updated. The moving tree holds fat AABBs (the shape's AABB grown by a slack);
  // a shape is reinserted (O(log n)) only when its AABB leaves its fat AABB, so a step costs
  // O(moved log n) for the tree plus the pair queries, not O(n) refits (Box2D's dynamic tree).
  fcl::DynamicAABBTreeCollisionManagerd manager;         // moving shapes
  fcl::DynamicAABBTreeCollisionManagerd static_manager;  // static shapes
  std::vector<fcl::CollisionObjectd*> moved;             // queued shapes' FCL objects
  // The pairs of shapes whose fat AABBs overlap, in the trees' traversal order (moving vs moving,
  // then static vs moving from `first_static_pair`), recorded by one traversal and reused until a
  // tree changes (a shape reinserted, or rebuild()). A World at rest, or whose shapes stay in
  // their fat AABBs, then skips the traversal (Box2D v3 keeps its pairs the same way); the pairs
  // and their order are what the traversal gives, so the contacts are the same.
  std::vector<std::pair<Index, Index>> fat_pairs;
  std::size_t first_static_pair = 0;
  bool fat_pairs_valid = false;
  MeshCache mesh_cache;
  FclNarrow fcl_narrow;  // capsule, cylinder and mesh pairs (FCL's algorithms, no allocation)
  ContactSet* out = nullptr;

  Impl() {
    // never fall back to the top-down rebuild (it allocates); incremental balancing only
    manager.max_tree_nonbalanced_level = 1 << 30;
    static_manager.max_tree_nonbalanced_level = 1 << 30;
  }

  Index check_object(Index o) const {
    IMPULSE_CHECK(o >= 0 && o < static_cast<Index>(objects.size()), "collision object index ", o,
                  " out of range [0, ", objects.size(), ")");
    return o;
  }

  bool pair_allowed(Index i, Index j) const {
    const Shape& a = shapes[static_cast<std::size_t>(i)];
    const Shape& b = shapes[static_cast<std::size_t>(j)];
    if (i == j || (a.is_static && b.is_static)) return false;
    if (a.object == b.object) {
      const Object& o = objects[static_cast<std::size_t>(a.object)];
      if (!o.self_collision || a.body == b.body) return false;
      if (o.parent[static_cast<std::size_t>(a.body)] == b.body || o.parent[static_cast<std::size_t>(b.body)] == a.body)
        return false;
    }
    return filters_match(a.filter, b.filter);
  }

  // The description changed (an object added, a filter, the margin): the derived state below is
  // rebuilt once, on its first use (ensure()), not at every change. Building a World of n objects
  // then costs one O(n) rebuild instead of n of them (1 000 boxes: 5.8 s of set-up before).
  bool stale = false;
  void mark_stale() { stale = true; }
  void ensure() {
    if (stale) rebuild();
  }

  // Recomputes the filtered plane pairs, the active shapes and the broadphase registration.
  void rebuild() {
    stale = false;
    plane_pairs.clear();
    for (Shape& s : shapes) s.active = false;
    for (Index pl = 0; pl < static_cast<Index>(planes.size()); ++pl) {
      for (Index i = 0; i < static_cast<Index>(shapes.size()); ++i) {
        Shape& s = shapes[static_cast<std::size_t>(i)];
        if (s.is_static || !filters_match(s.filter, planes[static_cast<std::size_t>(pl)].filter)) continue;
        plane_pairs.emplace_back(pl, i);
        s.active = true;
      }
    }
    terrain_pairs.clear();
    for (Index t = 0; t < static_cast<Index>(terrains.size()); ++t) {
      for (Index i = 0; i < static_cast<Index>(shapes.size()); ++i) {
        Shape& s = shapes[static_cast<std::size_t>(i)];
        if (s.is_static || !filters_match(s.filter, terrains[static_cast<std::size_t>(t)].filter)) continue;
        terrain_pairs.emplace_back(t, i);
        s.active = true;
      }
    }
    // a shape joins the broadphase when some other shape may touch it: one partner found is
    // enough (it is marked too), so this is O(shapes) when objects may touch each other
    need_broadphase = false;
    std::vector<bool> bp(shapes.size(), false);
    for (Index i = 0; i < static_cast<Index>(shapes.size()); ++i) {
      if (bp[static_cast<std::size_t>(i)]) continue;
      for (Index j = 0; j < static_cast<Index>(shapes.size()); ++j) {
        if (!pair_allowed(i, j)) continue;
        bp[static_cast<std::size_t>(i)] = bp[static_cast<std::size_t>(j)] = true;
        need_broadphase = true;
        break;
      }
    }
    manager.clear();
    static_manager.clear();
    moved.clear();
    moved.reserve(shapes.size());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      Shape& s = shapes[i];
      s.in_manager = bp[i];
      s.active = s.active || bp[i];
      s.queued = false;
      // every shape at its object's last body poses (static shapes: X_BS is the world pose)
      const Object& o = objects[static_cast<std::size_t>(s.object)];
      set_pose(s, s.is_static ? SE3() : o.X_WB[static_cast<std::size_t>(s.body)]);
      if (s.in_manager) (s.is_static ? static_manager : manager).registerObject(s.fco.get());
    }
    for (Shape& s : shapes) s.queued = false;  // registered with their current fat AABB
    moved.clear();
    manager.setup();
    static_manager.setup();
    fat_pairs_valid = false;
  }

  // World AABB (inflated by margin / 2 on each side) and transform of a shape's FCL object.
  void update_fcl(Shape& s) {
    Vec3 c = s.p, half = Vec3::Zero();
    switch (s.type) {
      case ShapeType::Sphere: half.setConstant(s.r); break;
      case ShapeType::Box: half = s.R.cwiseAbs() * s.h; break;
      case ShapeType::Capsule: half = s.hl * s.R.col(2).cwiseAbs() + Vec3::Constant(s.r); break;
      case ShapeType::Cylinder: {
        const Vec3 a = s.R.col(2);
        for (int k = 0; k < 3; ++k) half[k] = s.hl * std::abs(a[k]) + s.r * std::sqrt(std::max(0.0, 1 - a[k] * a[k]));
        break;
      }
      case ShapeType::Mesh:
        c = s.R * s.mesh->centre + s.p;
        half = s.R.cwiseAbs() * s.mesh->half;
        break;
    }
    half.array() += 0.5 * margin + objects[static_cast<std::size_t>(s.object)].speculative + 1e-9;
    s.fco->setTransform(s.R, s.p);
    s.lo = c - half;
    s.hi = c + half;
    const fcl::AABBd& fat = s.fco->getAABB();
    if (!s.is_static && (s.lo.array() >= fat.min_.array()).all() && (s.hi.array() <= fat.max_.array()).all()) return;
    // a static shape's AABB is exact; a moving one gets a slack of a tenth of its largest half
    // extent, between 2 mm and 5 cm (small enough that the fat boxes of resting neighbours do not
    // overlap), then waits in `moved` for the tree update in detect()
    const Scalar slack = s.is_static ? 0.0 : std::min(0.05, std::max(0.002, 0.1 * half.maxCoeff()));
    s.fco->set_aabb(s.lo.array() - slack, s.hi.array() + slack);
    if (!s.is_static && !s.queued) {
      s.queued = true;
      moved.push_back(s.fco.get());
    }
  }

  bool aabb_overlap(const Shape& a, const Shape& b) const {
    return (a.lo.array() <= b.hi.array()).all() && (b.lo.array() <= a.hi.array()).all();
  }

  // One world-fixed shape as its own static object (static box, mesh terrain).
  Index commit_static(const CollisionShape& cs, const CollisionFilter& filter) {
    std::vector<Shape> list;
    list.push_back(make_shape(cs, cs.name, 1, materials, mesh_cache, false));  // static meshes: triangles
    list.back().filter = filter;
    list.back().is_static = true;
    list.back().body = -1;
    Object obj;
    obj.name = cs.name;
    obj.is_static = true;
    const Index first = static_cast<Index>(shapes.size());
    const Index id = commit(std::move(obj), list);
    if (cs.type == ShapeType::Box) static_boxes.push_back(first);
    return id;
  }

  void set_pose(Shape& s, const SE3& X_WB) {
    s.R.noalias() = X_WB.R * s.X_BS.R;
    s.p.noalias() = X_WB.R * s.X_BS.p;
    s.p += X_WB.p;
    if (s.in_manager) update_fcl(s);
  }

  void push(const Shape& a, Index object_b, Index body_b, Index shape_b, Index material_b, const ManifoldPoint* pts,
            int count, bool flip) {
    const MaterialPair& mp = materials.pair(a.material, material_b);
    for (int k = 0; k < count; ++k) {
      Contact* c = out->add();
      if (c == nullptr) return;
      c->object_a = a.object;
      c->body_a = a.body;
      c->shape_a = a.local;
      c->object_b = object_b;
      c->body_b = body_b;
      c->shape_b = shape_b;
      c->position = pts[k].position;
      c->normal = flip ? Vec3(-pts[k].normal) : pts[k].normal;
      c->depth = pts[k].depth;
      c->mu = mp.mu;
      c->restitution = mp.restitution;
    }
  }

  void plane_pass() {
    ManifoldPoint pts[kMaxManifoldPoints];
    for (const auto& pair : plane_pairs) {
      const Plane& pl = planes[static_cast<std::size_t>(pair.first)];
      const Shape& s = shapes[static_cast<std::size_t>(pair.second)];
      const Scalar margin = this->margin + objects[static_cast<std::size_t>(s.object)].speculative;
      if (pl.n.dot(s.p) - pl.offset > s.bound + margin) continue;  // bounding-sphere reject
      if (s.type == ShapeType::Mesh) {
        // a mesh's bound is about the link origin, often far from the mesh (a knee for a foot):
        // its oriented bounding box rejects more
        const Vec3 n_l = s.R.transpose() * pl.n;
        if (pl.n.dot(s.R * s.mesh->centre + s.p) - pl.offset - n_l.cwiseAbs().dot(s.mesh->half) > margin) continue;
      }
      int k = 0;
      switch (s.type) {
        case ShapeType::Sphere: k = sphere_plane(s.p, s.r, pl.n, pl.offset, margin, pts); break;
        case ShapeType::Box: k = box_plane(s.R, s.p, s.h, pl.n, pl.offset, margin, pts); break;
        case ShapeType::Capsule: k = capsule_plane(s.R, s.p, s.r, s.hl, pl.n, pl.offset, margin, pts); break;
        case ShapeType::Cylinder: k = cylinder_plane(s.R, s.p, s.r, s.hl, pl.n, pl.offset, margin, pts); break;
        case ShapeType::Mesh:
          k = s.hull ? convex_plane(s.R, s.p, *s.hull, pl.n, pl.offset, margin, pts)
                     : vertices_plane(s.R, s.p, s.mesh->mesh.vertices.data(),
                                      static_cast<int>(s.mesh->mesh.vertices.size()), pl.n, pl.offset, margin, pts);
          break;
      }
      push(s, pl.object, -1, 0, pl.material, pts, k, false);
    }
  }

  void terrain_pass() {
    ManifoldPoint pts[kMaxManifoldPoints];
    for (const auto& pair : terrain_pairs) {
      const Terrain& t = terrains[static_cast<std::size_t>(pair.first)];
      const Shape& s = shapes[static_cast<std::size_t>(pair.second)];
      if (s.p.z() - s.bound - margin > t.field->max_height()) continue;  // bounding-sphere reject
      TerrainShape ts;
      ts.type = s.type;
      ts.R = s.R;
      ts.p = s.p;
      ts.r = s.r;
      ts.hl = s.hl;
      ts.h = s.h;
      if (s.type == ShapeType::Mesh) {
        const std::vector<Vec3>& v = s.hull ? s.hull->vertices : s.mesh->mesh.vertices;
        ts.vertices = v.data();
        ts.vertex_count = static_cast<int>(v.size());
      }
      push(s, t.object, -1, 0, t.material, pts, heightfield_contacts(*t.field, ts, margin, pts), false);
    }
  }

  // Narrow phase of an allowed shape pair, A first.
  void narrow(const Shape& a, const Shape& b) {
    ManifoldPoint pts[kMaxManifoldPoints];
    const Index body_b = b.is_static ? -1 : b.body;
    const ShapeType ta = a.type, tb = b.type;
    // pair margin: the global one plus both objects' speculative (swept) margins
    const Scalar margin = this->margin + objects[static_cast<std::size_t>(a.object)].speculative +
                          objects[static_cast<std::size_t>(b.object)].speculative;
    if (ta == ShapeType::Sphere && tb == ShapeType::Sphere) {
      push(a, b.object, body_b, b.local, b.material, pts, sphere_sphere(a.p, a.r, b.p, b.r, margin, pts), false);
    } else if (ta == ShapeType::Sphere && tb == ShapeType::Box) {
      push(a, b.object, body_b, b.local, b.material, pts, sphere_box(a.p, a.r, b.R, b.p, b.h, margin, pts), false);
    } else if (ta == ShapeType::Box && tb == ShapeType::Sphere) {
      // sphere_box gives the normal from the box into the sphere, i.e. from A into B: flip it
      push(a, b.object, body_b, b.local, b.material, pts, sphere_box(b.p, b.r, a.R, a.p, a.h, margin, pts), true);
    } else if (ta == ShapeType::Sphere && tb == ShapeType::Capsule) {
      push(a, b.object, body_b, b.local, b.material, pts, sphere_capsule(a.p, a.r, b.R, b.p, b.r, b.hl, margin, pts),
           false);
    } else if (ta == ShapeType::Capsule && tb == ShapeType::Sphere) {
      // sphere_capsule's normal points from the capsule (A) into the sphere (B): flip it
      push(a, b.object, body_b, b.local, b.material, pts, sphere_capsule(b.p, b.r, a.R, a.p, a.r, a.hl, margin, pts),
           true);
    } else if (ta == ShapeType::Capsule && tb == ShapeType::Capsule) {
      push(a, b.object, body_b, b.local, b.material, pts,
           capsule_capsule(a.R, a.p, a.r, a.hl, b.R, b.p, b.r, b.hl, margin, pts), false);
    } else if (ta == ShapeType::Box && tb == ShapeType::Box) {
      push(a, b.object, body_b, b.local, b.material, pts, box_box(a.R, a.p, a.h, b.R, b.p, b.h, margin, pts), false);
    } else {
      narrow_fcl(a, b, body_b, margin);
    }
  }

  // Generic pair through FCL's algorithms: contacts when overlapping, else the distance for the
  // margin (fcl_narrow.hpp: the same results as fcl::collide / fcl::distance, without allocation).
  void narrow_fcl(const Shape& a, const Shape& b, Index body_b, Scalar margin) {
    ManifoldPoint pts[kMaxFclContacts];
    Vec3 pos[kMaxFclContacts], nrm[kMaxFclContacts];
    Scalar dep[kMaxFclContacts];
    int k = std::max(0, fcl_narrow.collide(a, b, kMaxFclContacts, pos, nrm, dep));
    // Shapes touching to within kTouching: MPR's normal (of a penetration of nanometres, or a
    // zero normal), GJK's direction between closest points nanometres apart, or neither (MPR
    // finds no overlap, GJK reports contact) say little or nothing about the direction. Such a
    // pair is resolved by its touching faces (touching_faces) where it has them: a contact along
    // a wrong direction kicks a resting stack sideways, and one missing lets the bodies fall into
    // each other for a step. Without them it keeps FCL's point, or reports no contact when that
    // has no direction at all (it could not be solved).
    bool no_direction = false;
    for (int i = 0; i < k; ++i) {
      pts[i].position = pos[i];
      pts[i].normal = -nrm[i];  // FCL: from o1 (A) to o2 (B)
      pts[i].depth = dep[i];
      if (!(std::abs(pts[i].normal.squaredNorm() - 1) < 1e-6)) no_direction = true;
    }
    if (k == 0 && margin > 0) {
      Vec3 pa, pb;
      const Scalar dist = fcl_narrow.distance(a, b, pa, pb);
      if (dist >= 0 && dist < margin) {
        // the normal along the closest points
        const Vec3 d = pa - pb;
        const Scalar len = d.norm();
        pts[0].position = 0.5 * (pa + pb);
        pts[0].normal = len > 1e-12 ? Vec3(d / len) : Vec3::UnitZ();
        pts[0].depth = -dist;
        no_direction = len <= 1e-12;
        k = 1;
      } else if (dist < 0) {  // GJK: in contact, MPR: no overlap
        no_direction = true;
        k = 1;
      }
    }
    if (k == 0) return;
    int deepest = 0;
    for (int i = 1; i < k; ++i) {
      if (pts[i].depth > pts[deepest].depth) deepest = i;
    }
    const bool touching = no_direction || std::abs(pts[deepest].depth) <= kTouching;
    if (has_faces(a) && has_faces(b)) {
      // boxes, hulls, cylinders and capsules: MPR / GJK give one point; the supporting features
      // along its normal give the manifold of a face contact (a hull flat on a box, a can on a
      // can or on a table, a capsule lying on a box) or of two parallel side lines
      ManifoldPoint face_pts[kMaxManifoldPoints];
      const ConvexShape ca = convex_shape(a), cb = convex_shape(b);
      int m = 0;
      if (!no_direction) m = face_manifold(ca, cb, pts[deepest].normal, margin, face_pts);
      // touching shapes have no face contact deeper than kTouching: along a loose normal (MPR's of
      // a zero overlap can point the wrong way: a can's side on another's disc got the far disc
      // and points 0.14 m deep) the features cut through the bodies
      if (m > 0 && touching && deepest_depth(face_pts, m) > kTouching) m = 0;
      if (m == 0 && touching) m = touching_faces(a, b, ca, cb, margin, face_pts);
      if (m > 0) return push(a, b.object, body_b, b.local, b.material, face_pts, m, false);
    }
    if (no_direction) return;
    push(a, b.object, body_b, b.local, b.material, pts, k, false);
  }

  // The largest depth of count >= 1 points.
  static Scalar deepest_depth(const ManifoldPoint* pts, int count) {
    Scalar d = pts[0].depth;
    for (int i = 1; i < count; ++i) d = std::max(d, pts[i].depth);
    return d;
  }

  // Below this depth (or gap) MPR and GJK give no reliable direction (1 um: far above the
  // nanometre overlaps of bodies resting face on face, below any penetration that matters).
  static constexpr Scalar kTouching = 1e-6;

  // The face contact of two touching shapes along the best of their own directions: the line of
  // their centres and the face axes of each (a box's three, a cylinder's axis), each turned from
  // B towards A. Of the directions along which face_manifold finds touching faces, the one whose
  // deepest point is shallowest (the others cut through the bodies), if that point is within
  // kTouching; else 0.
  static int touching_faces(const Shape& a, const Shape& b, const ConvexShape& ca, const ConvexShape& cb,
                            Scalar margin, ManifoldPoint* out) {
    const Vec3 centre = a.p - b.p;
    Vec3 dirs[7];
    int n_dirs = 0;
    if (centre.norm() > 1e-12) dirs[n_dirs++] = centre.normalized();
    for (const Shape* s : {&b, &a}) {
      if (s->type == ShapeType::Box && !s->hull) {
        for (int j = 0; j < 3; ++j) dirs[n_dirs++] = s->R.col(j);
      } else if (s->type == ShapeType::Cylinder) {
        dirs[n_dirs++] = s->R.col(2);
      }
    }
    ManifoldPoint trial[kMaxManifoldPoints];
    int best = 0;
    Scalar best_depth = kTouching;
    for (int i = 0; i < n_dirs; ++i) {
      const Vec3 d = dirs[i].dot(centre) >= 0 ? dirs[i] : Vec3(-dirs[i]);
      const int m = face_manifold(ca, cb, d, margin, trial);
      if (m == 0) continue;
      const Scalar deepest = deepest_depth(trial, m);
      if (deepest <= best_depth) {
        best_depth = deepest;
        best = m;
        std::copy(trial, trial + m, out);
      }
    }
    return best;
  }

  // Shapes whose supporting features along a direction are faces, segments or points
  // (face_manifold): all but spheres (one point on anything) and triangle meshes.
  static bool has_faces(const Shape& s) {
    return s.hull || s.type == ShapeType::Box || s.type == ShapeType::Cylinder || s.type == ShapeType::Capsule;
  }

  static ConvexShape convex_shape(const Shape& s) {
    ConvexShape c;
    if (s.hull) {
      c.kind = ConvexShape::Kind::Hull;
      c.hull = s.hull;
    } else if (s.type == ShapeType::Cylinder) {
      c.kind = ConvexShape::Kind::Cylinder;
    } else if (s.type == ShapeType::Capsule) {
      c.kind = ConvexShape::Kind::Capsule;
    }
    c.h = s.h;
    c.r = s.r;
    c.hl = s.hl;
    c.R = s.R;
    c.p = s.p;
    return c;
  }

  // Records a pair of the traversal (fat AABBs overlap) that the filters allow (they change only
  // through rebuild(), which drops the list); never stops the traversal.
  static bool record_fat_pair(fcl::CollisionObjectd* o1, fcl::CollisionObjectd* o2, void* data) {
    Impl* w = static_cast<Impl*>(data);
    const Index i = static_cast<Index>(reinterpret_cast<std::intptr_t>(o1->getUserData()));
    const Index j = static_cast<Index>(reinterpret_cast<std::intptr_t>(o2->getUserData()));
    if (w->pair_allowed(i, j)) w->fat_pairs.emplace_back(i, j);
    return false;
  }

  // The narrow phase of a recorded pair; true when the contact set overflowed (stop).
  bool broadphase_pair(Index i, Index j) {
    // the trees hold fat AABBs: test the shapes' own AABBs first (the filters were applied when
    // the pair was recorded)
    if (!aabb_overlap(shapes[static_cast<std::size_t>(i)], shapes[static_cast<std::size_t>(j)])) return false;
    // a static shape is B; otherwise the shape added first is A
    const bool si = shapes[static_cast<std::size_t>(i)].is_static;
    const bool sj = shapes[static_cast<std::size_t>(j)].is_static;
    if (si || (!sj && j < i)) std::swap(i, j);
    narrow(shapes[static_cast<std::size_t>(i)], shapes[static_cast<std::size_t>(j)]);
    return out->overflow();
  }

  // Appends an object and its shapes (already validated); the filters and trees are rebuilt on use.
  Index commit(Object obj, std::vector<Shape>& new_shapes) {
    const Index o = static_cast<Index>(objects.size());
    for (std::size_t k = 0; k < new_shapes.size(); ++k) {
      Shape& s = new_shapes[k];
      s.object = o;
      s.local = static_cast<Index>(k);
      const Index gid = static_cast<Index>(shapes.size());
      s.fco->setUserData(reinterpret_cast<void*>(static_cast<std::intptr_t>(gid)));
      obj.shapes.push_back(gid);
      obj.reach = std::max(obj.reach, s.X_BS.p.norm() + s.bound);
      shapes.push_back(std::move(s));
    }
    objects.push_back(std::move(obj));
    mark_stale();
    return o;
  }
};

CollisionWorld::CollisionWorld(Scalar margin) : impl_(std::make_unique<Impl>()) { set_margin(margin); }
CollisionWorld::~CollisionWorld() = default;
CollisionWorld::CollisionWorld(CollisionWorld&&) noexcept = default;
CollisionWorld& CollisionWorld::operator=(CollisionWorld&&) noexcept = default;

CollisionWorld CollisionWorld::clone() const {
  const Impl& s = *impl_;
  CollisionWorld c(s.margin);
  Impl& d = *c.impl_;
  d.materials = s.materials;
  d.objects = s.objects;
  d.shapes = s.shapes;  // (new FCL objects of the same geometry: FclObject)
  d.planes = s.planes;
  d.terrains = s.terrains;
  d.static_boxes = s.static_boxes;
  // the filtered pairs, the active shapes and the broadphase trees follow from the above
  d.mark_stale();
  return c;
}

Index CollisionWorld::add_object(const Model& model, const CollisionObjectOptions& options) {
  Impl& w = *impl_;
  const std::string name = model.name.empty() ? "object " + std::to_string(w.objects.size()) : model.name;
  std::vector<Shape> shapes;
  for (const CollisionShape& cs : model.collision) {
    shapes.push_back(make_shape(cs, name, model.nb, w.materials, w.mesh_cache));
    shapes.back().filter = options.filter;
  }
  Object obj;
  obj.name = name;
  obj.self_collision = options.self_collision;
  obj.parent = model.parent;
  obj.body_names = model.body_names;
  obj.X_WB.assign(static_cast<std::size_t>(model.nb), SE3());
  return w.commit(std::move(obj), shapes);
}

Index CollisionWorld::add_free_body(const std::string& name, const std::vector<CollisionShape>& shapes_in,
                                    const CollisionObjectOptions& options) {
  Impl& w = *impl_;
  std::vector<Shape> shapes;
  for (CollisionShape cs : shapes_in) {
    cs.body = 0;
    if (cs.link.empty()) cs.link = name;
    shapes.push_back(make_shape(cs, name, 1, w.materials, w.mesh_cache));
    shapes.back().filter = options.filter;
  }
  Object obj;
  obj.name = name;
  obj.self_collision = false;
  obj.parent = {-1};
  obj.body_names = {name};
  obj.X_WB.assign(1, SE3());
  return w.commit(std::move(obj), shapes);
}

Index CollisionWorld::add_static_box(const std::string& name, const SE3& X_WS, const Vec3& size,
                                     const std::string& material, const CollisionFilter& filter) {
  Impl& w = *impl_;
  CollisionShape cs;
  cs.name = name;
  cs.link = name;
  cs.body = 0;
  cs.type = ShapeType::Box;
  cs.size = size;
  cs.X_BS = X_WS;
  cs.material = material;
  return w.commit_static(cs, filter);
}

Index CollisionWorld::add_heightfield(const std::string& name, std::shared_ptr<const Heightfield> terrain,
                                     const std::string& material, const CollisionFilter& filter) {
  Impl& w = *impl_;
  COL_MODEL_CHECK(terrain && !terrain->empty(), "heightfield '", name, "' is empty");
  Terrain t;
  t.object = static_cast<Index>(w.objects.size());
  t.field = std::move(terrain);
  t.filter = filter;
  t.material = w.materials.id(material.empty() ? std::string("default") : material);
  Object obj;
  obj.name = name;
  obj.is_static = true;
  obj.terrain = static_cast<Index>(w.terrains.size());
  w.terrains.push_back(std::move(t));
  std::vector<Shape> none;
  try {
    return w.commit(std::move(obj), none);
  } catch (...) {
    w.terrains.pop_back();
    throw;
  }
}

Index CollisionWorld::add_static_mesh(const std::string& name, const std::string& mesh_path, const Vec3& scale,
                                      const SE3& X_WS, const std::string& material, const CollisionFilter& filter) {
  Impl& w = *impl_;
  CollisionShape cs;
  cs.name = name;
  cs.link = name;
  cs.body = 0;
  cs.type = ShapeType::Mesh;
  cs.size = scale;
  cs.mesh_path = mesh_path;
  cs.X_BS = X_WS;
  cs.material = material;
  return w.commit_static(cs, filter);
}

namespace {
// First entry of the ray from + t dir into a box (half extents h, world pose R, p) with t in
// [0, max_t] (slab test, Kay and Kajiya 1986); the outward normal of the face it enters. A ray
// that starts inside the box does not hit it.
bool raycast_box(const Mat3& R, const Vec3& p, const Vec3& h, const Vec3& from, const Vec3& dir, Scalar max_t,
                 Scalar& t, Vec3* normal) {
  const Vec3 o = R.transpose() * (from - p), d = R.transpose() * dir;
  Scalar t0 = -std::numeric_limits<Scalar>::infinity(), t1 = std::numeric_limits<Scalar>::infinity();
  int axis = -1;
  for (int k = 0; k < 3; ++k) {
    if (d[k] == 0) {
      if (o[k] < -h[k] || o[k] > h[k]) return false;
      continue;
    }
    Scalar ta = (-h[k] - o[k]) / d[k], tb = (h[k] - o[k]) / d[k];
    if (ta > tb) std::swap(ta, tb);
    if (ta > t0) t0 = ta, axis = k;
    t1 = std::min(t1, tb);
    if (t0 > t1) return false;
  }
  if (axis < 0 || !(t0 >= 0) || t0 > max_t) return false;  // inside, behind or too far
  t = t0;
  if (normal) *normal = R.col(axis) * (d[axis] > 0 ? -1.0 : 1.0);
  return true;
}

// raycast_static with or without the normal (normal == nullptr): the first hit of the terrains,
// the planes and the static boxes.
bool raycast_terrain(const std::vector<Terrain>& terrains, const std::vector<Plane>& planes,
                     const std::vector<Shape>& shapes, const std::vector<Index>& static_boxes, const Vec3& from,
                     const Vec3& dir, Scalar max_t, Scalar& t, Vec3* normal) {
  bool hit = false;
  Scalar best = max_t;
  for (const Terrain& tr : terrains) {
    Scalar tt;
    Vec3 n;
    if ((normal ? tr.field->raycast(from, dir, best, tt, n) : tr.field->raycast(from, dir, best, tt)) && tt <= best) {
      best = tt;
      if (normal) *normal = n;
      hit = true;
    }
  }
  for (const Plane& pl : planes) {
    const Scalar dn = pl.n.dot(dir);
    if (dn >= 0) continue;  // parallel, or leaving the half-space
    const Scalar tt = (pl.offset - pl.n.dot(from)) / dn;
    if (tt >= 0 && tt <= best) {
      best = tt;
      if (normal) *normal = pl.n;
      hit = true;
    }
  }
  for (Index b : static_boxes) {
    const Shape& box = shapes[static_cast<std::size_t>(b)];
    Scalar tt;
    if (raycast_box(box.R, box.p, box.h, from, dir, best, tt, normal)) {
      best = tt;
      hit = true;
    }
  }
  if (hit) t = best;
  return hit;
}
}  // namespace

bool CollisionWorld::raycast_static(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t, Vec3& normal) const {
  impl_->ensure();
  const Impl& w = *impl_;
  return raycast_terrain(w.terrains, w.planes, w.shapes, w.static_boxes, from, dir, max_t, t, &normal);
}

bool CollisionWorld::raycast_static(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t) const {
  impl_->ensure();
  const Impl& w = *impl_;
  return raycast_terrain(w.terrains, w.planes, w.shapes, w.static_boxes, from, dir, max_t, t, nullptr);
}

void CollisionWorld::raycast_static_down(const Vec3* from, std::size_t count, Scalar max_t, Scalar* t) const {
  impl_->ensure();
  const Impl& w = *impl_;
  std::fill(t, t + count, std::numeric_limits<Scalar>::infinity());
  if (!(max_t >= 0)) return;
  for (const Terrain& tr : w.terrains) tr.field->raycast_down(from, count, max_t, t);
  for (const Plane& pl : w.planes) {
    const Scalar dn = -pl.n.z();  // n . dir
    if (dn >= 0) continue;        // parallel, or leaving the half-space
    for (std::size_t k = 0; k < count; ++k) {
      const Scalar tt = (pl.offset - pl.n.dot(from[k])) / dn;
      if (tt >= 0 && tt <= max_t && tt <= t[k]) t[k] = tt;
    }
  }
  const Vec3 down(0, 0, -1);
  for (Index b : w.static_boxes) {
    const Shape& box = w.shapes[static_cast<std::size_t>(b)];
    for (std::size_t k = 0; k < count; ++k) {
      Scalar tt;
      if (raycast_box(box.R, box.p, box.h, from[k], down, std::min(max_t, t[k]), tt, nullptr)) t[k] = tt;
    }
  }
}

Index CollisionWorld::add_ground(Scalar height, const std::string& material, const CollisionFilter& filter) {
  return add_plane("ground", Vec3::UnitZ(), height, material, filter);
}

Index CollisionWorld::add_plane(const std::string& name, const Vec3& normal, Scalar offset,
                                const std::string& material, const CollisionFilter& filter) {
  Impl& w = *impl_;
  COL_MODEL_CHECK(normal.allFinite() && normal.norm() > 1e-12 && std::isfinite(offset), "plane '", name,
                  "': normal ", normal.transpose(), " must be finite and non-zero and offset ", offset, " finite");
  Plane pl;
  pl.object = static_cast<Index>(w.objects.size());
  pl.n = normal.normalized();
  pl.offset = offset / normal.norm();
  pl.filter = filter;
  pl.material = w.materials.id(material.empty() ? std::string("default") : material);
  Object obj;
  obj.name = name;
  obj.is_static = true;
  obj.plane = static_cast<Index>(w.planes.size());
  w.planes.push_back(pl);
  std::vector<Shape> none;
  return w.commit(std::move(obj), none);
}

void CollisionWorld::set_object_filter(Index object, const CollisionFilter& filter) {
  Impl& w = *impl_;
  Object& o = w.objects[static_cast<std::size_t>(w.check_object(object))];
  if (o.plane >= 0) w.planes[static_cast<std::size_t>(o.plane)].filter = filter;
  if (o.terrain >= 0) w.terrains[static_cast<std::size_t>(o.terrain)].filter = filter;
  for (Index gid : o.shapes) w.shapes[static_cast<std::size_t>(gid)].filter = filter;
  w.mark_stale();
}

void CollisionWorld::set_body_filter(Index object, Index body, const CollisionFilter& filter) {
  Impl& w = *impl_;
  Object& o = w.objects[static_cast<std::size_t>(w.check_object(object))];
  IMPULSE_CHECK(body >= 0 && body < static_cast<Index>(o.parent.size()), "object '", o.name, "': body index ", body,
                " out of range");
  for (Index gid : o.shapes) {
    if (w.shapes[static_cast<std::size_t>(gid)].body == body) w.shapes[static_cast<std::size_t>(gid)].filter = filter;
  }
  w.mark_stale();
}

void CollisionWorld::set_shape_filter(Index object, Index shape, const CollisionFilter& filter) {
  Impl& w = *impl_;
  Object& o = w.objects[static_cast<std::size_t>(w.check_object(object))];
  if (o.plane >= 0 && shape == 0) {
    w.planes[static_cast<std::size_t>(o.plane)].filter = filter;
  } else if (o.terrain >= 0 && shape == 0) {
    w.terrains[static_cast<std::size_t>(o.terrain)].filter = filter;
  } else {
    IMPULSE_CHECK(shape >= 0 && shape < static_cast<Index>(o.shapes.size()), "object '", o.name, "': shape index ",
                  shape, " out of range");
    w.shapes[static_cast<std::size_t>(o.shapes[static_cast<std::size_t>(shape)])].filter = filter;
  }
  w.mark_stale();
}

void CollisionWorld::set_self_collision(Index object, bool enabled) {
  Impl& w = *impl_;
  w.objects[static_cast<std::size_t>(w.check_object(object))].self_collision = enabled;
  w.mark_stale();
}

CollisionFilter CollisionWorld::shape_filter(Index object, Index shape) const {
  const Impl& w = *impl_;
  const Object& o = w.objects[static_cast<std::size_t>(w.check_object(object))];
  if (o.plane >= 0 && shape == 0) return w.planes[static_cast<std::size_t>(o.plane)].filter;
  if (o.terrain >= 0 && shape == 0) return w.terrains[static_cast<std::size_t>(o.terrain)].filter;
  IMPULSE_CHECK(shape >= 0 && shape < static_cast<Index>(o.shapes.size()), "object '", o.name, "': shape index ", shape,
                " out of range");
  return w.shapes[static_cast<std::size_t>(o.shapes[static_cast<std::size_t>(shape)])].filter;
}

bool CollisionWorld::self_collision(Index object) const {
  return impl_->objects[static_cast<std::size_t>(impl_->check_object(object))].self_collision;
}

void CollisionWorld::set_margin(Scalar margin) {
  IMPULSE_CHECK(std::isfinite(margin) && margin >= 0, "contact margin ", margin, " must be finite and >= 0");
  impl_->margin = margin;
  impl_->mark_stale();  // AABBs grow or shrink with the margin: rebuild the trees (set-up time)
}

Scalar CollisionWorld::margin() const { return impl_->margin; }

void CollisionWorld::set_speculative_margin(Index object, Scalar extra) {
  Impl& w = *impl_;
  IMPULSE_CHECK(std::isfinite(extra) && extra >= 0, "speculative margin ", extra, " of object ", object,
                " must be finite and >= 0");
  w.objects[static_cast<std::size_t>(w.check_object(object))].speculative = extra;
}

Scalar CollisionWorld::reach(Index object) const {
  // computed when the object is added (its shapes are fixed then): the stepper asks every step
  return impl_->objects[static_cast<std::size_t>(impl_->check_object(object))].reach;
}
void CollisionWorld::prefetch_step() const {
  impl_->ensure();
  const Impl& w = *impl_;
  prefetch_bytes(&w, sizeof(Impl));
  prefetch_data(w.objects);
  prefetch_data(w.shapes);
  prefetch_data(w.planes);
  prefetch_data(w.plane_pairs);
  prefetch_data(w.fat_pairs);
  for (const Object& o : w.objects) {
    if (o.is_static) continue;
    prefetch_data(o.shapes);
    prefetch_data(o.X_WB);
    for (const Index id : o.shapes) {
      const Shape& s = w.shapes[static_cast<std::size_t>(id)];
      if (s.fco) prefetch_bytes(s.fco.get(), sizeof(MarginObject));
    }
  }
}

MaterialTable& CollisionWorld::materials() { return impl_->materials; }
const MaterialTable& CollisionWorld::materials() const { return impl_->materials; }

void CollisionWorld::update(Index object, const std::vector<SE3>& X_WB) {
  update(object, X_WB.data(), static_cast<Index>(X_WB.size()));
}

void CollisionWorld::update(Index object, const SE3& X_WB) { update(object, &X_WB, 1); }

void CollisionWorld::update(Index object, const SE3* X_WB, Index count) {
  Impl& w = *impl_;
  Object& o = w.objects[static_cast<std::size_t>(w.check_object(object))];
  IMPULSE_CHECK(!o.is_static, "collision object '", o.name, "' is static: it has no poses to update");
  IMPULSE_CHECK(count == static_cast<Index>(o.X_WB.size()), "collision object '", o.name, "': got ", count,
                " body poses, expected ", o.X_WB.size());
  // all poses at once (core/finite.hpp), as one array of 12 count values: an SE3 is R then p
  // without padding (a scan of 9 and one of 3 values per body took 150 instructions a body, the
  // loops' set-up more than the arithmetic); the body is looked up only to name it in the error
  static_assert(sizeof(Mat3) == 9 * sizeof(Scalar) && sizeof(SE3) == 12 * sizeof(Scalar),
                "SE3 is R then p, 12 contiguous scalars");
  Scalar zero[4] = {0, 0, 0, 0};
  add_zero_times(reinterpret_cast<const Scalar*>(X_WB), 12 * count, 1, zero);
  for (Index b = 0; b < count && !zero_times_finite(zero); ++b) {
    IMPULSE_CHECK(finite(X_WB[b]), "collision object '", o.name, "': pose of body '",
                  o.body_names[static_cast<std::size_t>(b)], "' (index ", b, ") is not finite");
  }
  w.ensure();  // (first, as when the description changed: the poses below are then the newest)
  std::copy(X_WB, X_WB + count, o.X_WB.begin());
  for (Index gid : o.shapes) {
    Shape& s = w.shapes[static_cast<std::size_t>(gid)];
    if (s.active) w.set_pose(s, o.X_WB[static_cast<std::size_t>(s.body)]);
  }
}

void CollisionWorld::detect(ContactSet& contacts) {
  Impl& w = *impl_;
  w.ensure();
  contacts.clear();
  w.out = &contacts;
  w.plane_pass();
  if (!contacts.overflow()) w.terrain_pass();
  if (w.need_broadphase && !contacts.overflow()) {
    if (!w.moved.empty()) {
      w.manager.update(w.moved);  // reinserts only the shapes that left their fat AABB
      for (fcl::CollisionObjectd* o : w.moved) {
        w.shapes[static_cast<std::size_t>(reinterpret_cast<std::intptr_t>(o->getUserData()))].queued = false;
      }
      w.moved.clear();
      w.fat_pairs_valid = false;
    }
    if (!w.fat_pairs_valid) {  // (the list keeps its capacity: no allocation once its size was seen)
      w.fat_pairs.clear();
      w.manager.collide(&w, &Impl::record_fat_pair);  // moving vs moving
      w.first_static_pair = w.fat_pairs.size();
      if (w.static_manager.size() > 0 && w.manager.size() > 0) {
        w.static_manager.collide(&w.manager, &w, &Impl::record_fat_pair);  // static vs moving
      }
      // in shape order, not the trees' traversal order: the trees' structure depends on the
      // order of past insertions (a clone or a restored World has other trees), the contacts'
      // order must not (it is the Gauss-Seidel order of the solvers)
      const auto by_shapes = [](const std::pair<Index, Index>& a, const std::pair<Index, Index>& b) {
        return std::minmax(a.first, a.second) < std::minmax(b.first, b.second);
      };
      const auto split = w.fat_pairs.begin() + static_cast<std::ptrdiff_t>(w.first_static_pair);
      std::sort(w.fat_pairs.begin(), split, by_shapes);
      std::sort(split, w.fat_pairs.end(), by_shapes);
      w.fat_pairs_valid = true;
    }
    for (std::size_t k = 0; k < w.first_static_pair; ++k) {
      if (w.broadphase_pair(w.fat_pairs[k].first, w.fat_pairs[k].second)) break;
    }
    for (std::size_t k = w.first_static_pair; k < w.fat_pairs.size() && !contacts.overflow(); ++k) {
      if (w.broadphase_pair(w.fat_pairs[k].first, w.fat_pairs[k].second)) break;
    }
  }
  w.out = nullptr;
}

Index CollisionWorld::num_objects() const { return static_cast<Index>(impl_->objects.size()); }

Index CollisionWorld::num_shapes(Index object) const {
  const Object& o = impl_->objects[static_cast<std::size_t>(impl_->check_object(object))];
  return o.plane >= 0 || o.terrain >= 0 ? 1 : static_cast<Index>(o.shapes.size());
}

Index CollisionWorld::num_bodies(Index object) const {
  return static_cast<Index>(impl_->objects[static_cast<std::size_t>(impl_->check_object(object))].X_WB.size());
}

const std::string& CollisionWorld::object_name(Index object) const {
  return impl_->objects[static_cast<std::size_t>(impl_->check_object(object))].name;
}

bool CollisionWorld::is_static(Index object) const {
  return impl_->objects[static_cast<std::size_t>(impl_->check_object(object))].is_static;
}

SE3 CollisionWorld::shape_pose(Index object, Index shape) const {
  const Impl& w = *impl_;
  const Object& o = w.objects[static_cast<std::size_t>(w.check_object(object))];
  if (o.plane >= 0) {
    const Plane& pl = w.planes[static_cast<std::size_t>(o.plane)];
    const Vec3 x = pl.n.unitOrthogonal(), y = pl.n.cross(x);
    Mat3 R;
    R << x, y, pl.n;
    return SE3(R, pl.offset * pl.n);
  }
  if (o.terrain >= 0) return SE3();  // heightfields are placed by their own grid origin
  IMPULSE_CHECK(shape >= 0 && shape < static_cast<Index>(o.shapes.size()), "object '", o.name, "': shape index ",
                shape, " out of range");
  const Shape& s = w.shapes[static_cast<std::size_t>(o.shapes[static_cast<std::size_t>(shape)])];
  if (s.is_static) return s.X_BS;
  return o.X_WB[static_cast<std::size_t>(s.body)] * s.X_BS;
}

bool CollisionWorld::is_plane(Index object) const {
  return impl_->objects[static_cast<std::size_t>(impl_->check_object(object))].plane >= 0;
}

CollisionShape CollisionWorld::shape_description(Index object, Index shape) const {
  const Impl& w = *impl_;
  const Object& o = w.objects[static_cast<std::size_t>(w.check_object(object))];
  IMPULSE_CHECK(o.plane < 0, "object '", o.name, "' is a plane: it has no shape description");
  IMPULSE_CHECK(shape >= 0 && shape < static_cast<Index>(o.shapes.size()), "object '", o.name, "': shape index ",
                shape, " out of range");
  const Shape& s = w.shapes[static_cast<std::size_t>(o.shapes[static_cast<std::size_t>(shape)])];
  CollisionShape cs;
  cs.name = s.name;
  cs.body = s.body;
  cs.type = s.type;
  cs.X_BS = s.X_BS;
  switch (s.type) {
    case ShapeType::Sphere: cs.size = Vec3(s.r, 0, 0); break;
    case ShapeType::Box: cs.size = 2 * s.h; break;
    case ShapeType::Capsule:
    case ShapeType::Cylinder: cs.size = Vec3(s.r, 2 * s.hl, 0); break;
    case ShapeType::Mesh: cs.size = Vec3::Ones(); break;  // the stored mesh is already scaled
  }
  return cs;
}

}  // namespace impulse
