// CollisionWorld: the collision stage. It owns the FCL objects of every collision shape of every
// object in a world (articulated robots, free bodies, static boxes, ground planes), the FCL
// broadphase manager, the filters (adjacent bodies, self-collision, group/mask) and the material
// table, and turns the world poses of all bodies into a ContactSet.
//
// Set-up (allocates, throws ModelError / InvalidArgument with the object, link or file named):
//   add_object / add_free_body / add_static_box / add_ground / add_plane, set_*_filter, materials().
// Set-up calls only mark the filters and the broadphase trees out of date; the first update(),
// detect() or ray cast after them rebuilds them once (so n objects cost one rebuild, not n; the
// rebuild also runs inside the const ray casts: a CollisionWorld is not shared across threads).
// Per step (no allocation in steady state, detect() never throws):
//   update(object, X_WB per body) for every moving object, then detect(contacts). The contacts
//   come in an order that depends on the shapes and their poses only (not on the trees' history).
//
// Filtering, in this order (RaiSim semantics for group and mask):
//   - two static shapes never collide; shapes of the same body never collide;
//   - shapes of one object collide only when its self-collision switch is on (default off), and
//     never between a parent body and its child (bodies joined by a joint);
//   - shapes i and j collide only if (group_i & mask_j) != 0 and (group_j & mask_i) != 0.
// Contact margin: pairs closer than margin() (default 5 mm) are reported with depth < 0.
// Which side is A: a static object (ground, static box) is always B; otherwise A is the shape
// added first. Planes are handled in closed form (no FCL dispatch); other pairs go through the
// FCL DynamicAABBTree broadphase (AABBs inflated by the margin), then closed-form sphere/box
// manifolds or fcl::collide / fcl::distance for the remaining pairs (capsules, cylinders, meshes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "impulse/collision/contact.hpp"
#include "impulse/collision/material.hpp"
#include "impulse/model/geometry.hpp"
#include "impulse/spatial/spatial.hpp"

namespace impulse {

class Model;
class Heightfield;

struct CollisionFilter {
  std::uint32_t group = 1;             // bits this shape belongs to
  std::uint32_t mask = 0xFFFFFFFFu;    // bits of groups this shape collides with
};

struct CollisionObjectOptions {
  CollisionFilter filter;              // applied to every shape of the object
  bool self_collision = false;         // shapes of different, non-adjacent bodies of this object
};

class CollisionWorld {
 public:
  explicit CollisionWorld(Scalar margin = 0.005);
  ~CollisionWorld();
  CollisionWorld(CollisionWorld&&) noexcept;
  CollisionWorld& operator=(CollisionWorld&&) noexcept;
  CollisionWorld(const CollisionWorld&) = delete;
  CollisionWorld& operator=(const CollisionWorld&) = delete;

  // A copy (World::clone): the same objects, shapes, filters, self-collision switches, margin,
  // materials and last poses. The geometry is immutable after set-up and shared, not copied
  // (primitives, meshes and their hulls and BVHs, heightfields); the broadphase trees are the
  // copy's own, built on its first use. Meshes added to the copy later are loaded anew.
  CollisionWorld clone() const;

  // An articulated system: all of model.collision (shape k of the object is model.collision[k]);
  // bodies follow model.parent. Meshes are loaded here. Returns the object index.
  Index add_object(const Model& model, const CollisionObjectOptions& options = {});
  // A single free rigid body (one pose) with the given shapes (their `body` fields are ignored).
  Index add_free_body(const std::string& name, const std::vector<CollisionShape>& shapes,
                      const CollisionObjectOptions& options = {});
  // A static box of full side lengths `size` at X_WS.
  Index add_static_box(const std::string& name, const SE3& X_WS, const Vec3& size,
                       const std::string& material = "default", const CollisionFilter& filter = {});
  // The infinite ground plane z = height (solid below).
  Index add_ground(Scalar height = 0, const std::string& material = "default", const CollisionFilter& filter = {});
  // A static half-space n . x <= offset (n is normalised here), e.g. a wall.
  Index add_plane(const std::string& name, const Vec3& normal, Scalar offset, const std::string& material = "default",
                  const CollisionFilter& filter = {});

  // A static heightfield terrain (heightfield.hpp; shared, never copied): every shape collides
  // with it through multi-point manifolds (heightfield_contacts).
  Index add_heightfield(const std::string& name, std::shared_ptr<const Heightfield> terrain,
                        const std::string& material = "default", const CollisionFilter& filter = {});
  // A static triangle-mesh terrain (any mesh file load_mesh reads, scaled) at X_WS.
  Index add_static_mesh(const std::string& name, const std::string& mesh_path, const Vec3& scale, const SE3& X_WS,
                        const std::string& material = "default", const CollisionFilter& filter = {});
  // First hit of the ray from + t dir, t in [0, max_t], with the static terrain (heightfields,
  // planes, static boxes; not static meshes); t and the surface normal. For sensors (height
  // scan); no allocation. A ray that starts inside a box does not hit that box.
  bool raycast_static(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t, Vec3& normal) const;
  // The same without the normal (saves a square root per ray).
  bool raycast_static(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t) const;
  // Vertical rays down (direction -z) from from[0 .. count), all at once (one pass per terrain):
  // t[k] the distance to the first static surface hit within max_t, +inf when none. Equal to
  // raycast_static with dir (0, 0, -1) ray by ray. For height scans; no allocation.
  void raycast_static_down(const Vec3* from, std::size_t count, Scalar max_t, Scalar* t) const;

  // Filters (set-up time). `shape` indexes the object's shapes; `body` its bodies.
  void set_object_filter(Index object, const CollisionFilter& filter);
  void set_body_filter(Index object, Index body, const CollisionFilter& filter);
  void set_shape_filter(Index object, Index shape, const CollisionFilter& filter);
  void set_self_collision(Index object, bool enabled);
  CollisionFilter shape_filter(Index object, Index shape) const;
  bool self_collision(Index object) const;

  // Contact margin >= 0 (metres).
  void set_margin(Scalar margin);
  Scalar margin() const;
  // Speculative contacts (swept bound): extra margin (m, >= 0) of a moving object for the next
  // update()/detect(), the distance its shapes may travel in the coming step; a pair is reported
  // when closer than margin() + the extra of both sides (AABBs inflated alike), so fast bodies
  // meet their contact one step ahead instead of penetrating. Set by the Stepper every step.
  void set_speculative_margin(Index object, Scalar extra);
  // Largest distance from a body origin of the object to any point of that body's shapes (m).
  Scalar reach(Index object) const;

  MaterialTable& materials();
  const MaterialTable& materials() const;

  // Prefetches what update() and detect() of the moving objects touch (World::prefetch; a hint):
  // the objects, their shapes and the shapes' FCL objects, the planes.
  void prefetch_step() const;

  // World poses X_WB of every body of a moving object (size = its number of bodies), e.g.
  // Data::oMi after forward kinematics. Throws InvalidArgument on a size mismatch or a non-finite
  // pose (naming the object and body); nothing is changed then.
  void update(Index object, const std::vector<SE3>& X_WB);
  void update(Index object, const SE3* X_WB, Index count);
  void update(Index object, const SE3& X_WB);  // free bodies

  // All contacts at the current poses. Clears `contacts` first; sets contacts.overflow() when the
  // capacity is exceeded. No allocation in steady state, never throws.
  void detect(ContactSet& contacts);

  // Introspection.
  Index num_objects() const;
  Index num_shapes(Index object) const;
  Index num_bodies(Index object) const;
  const std::string& object_name(Index object) const;
  bool is_static(Index object) const;
  // World pose of a shape at the last update.
  SE3 shape_pose(Index object, Index shape) const;
  // For drawing and recording: whether an object is a plane (ground, wall; shape_pose() gives its
  // frame, z = normal), and the description of one of its shapes (type, size, X_BS, body, mesh).
  bool is_plane(Index object) const;
  CollisionShape shape_description(Index object, Index shape) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace impulse
