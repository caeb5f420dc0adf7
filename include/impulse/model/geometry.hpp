// Collision geometry attached to bodies: the description only (shape, size, pose in the body
// frame, material). World poses live in the collision stage's data, never here.
#pragma once

#include <string>

#include "impulse/core/types.hpp"
#include "impulse/spatial/spatial.hpp"

namespace impulse {

enum class ShapeType { Sphere, Box, Cylinder, Capsule, Mesh };

const char* shape_type_name(ShapeType t);

// How a mesh shape collides (docs/collision.md, "Meshes: convex hulls and triangle meshes"): as
// the convex hull of its vertices (the default; a flat mesh, which has no hull, collides as its
// triangles), or as its triangles (FCL's BVH; static meshes always do).
enum class MeshCollision { ConvexHull, Triangles };

struct CollisionShape {
  std::string name;        // "<link>/<k>" unless the URDF names it
  std::string link;        // URDF link the shape was declared on (before fixed-joint merging)
  Index body = -1;         // body it moves with
  ShapeType type = ShapeType::Sphere;
  // sphere: (radius, 0, 0); box: full side lengths (x, y, z); cylinder and capsule: (radius,
  // length, 0) with the axis along local z; mesh: scale (sx, sy, sz).
  Vec3 size = Vec3::Zero();
  SE3 X_BS;                // pose of the shape in the body frame
  std::string mesh_path;   // resolved file path, for meshes
  MeshCollision mesh_collision = MeshCollision::ConvexHull;  // meshes of moving bodies
  std::string material = "default";
};

// Visual geometry (URDF <visual>): kept for viewers and recorders, never used by the physics.
// Same shape conventions as CollisionShape; a mesh keeps its resolved path (empty when the
// package could not be found: a warning was reported and the viewer may skip it).
struct VisualShape {
  std::string name;        // "<link>/visual/<k>" unless the URDF names it
  std::string link;        // URDF link the visual was declared on
  Index body = -1;         // body it moves with
  ShapeType type = ShapeType::Sphere;
  Vec3 size = Vec3::Zero();
  SE3 X_BS;                // pose of the visual in the body frame
  std::string mesh_path;   // resolved file path, for meshes
  std::string mesh_uri;    // the URI as written in the file (package://...)
  std::string material;    // material name ("" when none)
  Vec4 rgba = Vec4(0.7, 0.7, 0.7, 1.0);  // colour (material colour when given)
};

}  // namespace impulse
