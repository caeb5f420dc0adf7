// URDF loader: turns a URDF robot description into an immutable Model.
//
// Conventions (docs/conventions.md, docs/robots.md):
// - Root: when the root link is named "world" (and has no <inertial>), its single child joint
//   becomes the root joint (a fixed joint gives a fixed base). Otherwise the root link gets a
//   floating joint named "root" (q = [x y z qw qx qy qz], u = world-frame [v; w]), or a fixed
//   one when UrdfOptions::fixed_base is set. UrdfOptions::floating_base floats the robot even
//   when its root is "world".
// - Body order is depth-first from the root, siblings in the order their joints appear in the
//   file. Fixed joints are merged into the body they hang from: mass, centre of mass and
//   rotational inertia are combined exactly, collision shapes are kept with composed poses, and
//   every merged link and fixed joint stays reachable as a named frame. Every walk over the tree
//   is iterative: a chain of any depth loads (no recursion limit).
// - The body frame of a moving joint is the frame of its child link (the joint frame at q = 0).
// - A link without <inertial> (or with mass 0) is a massless frame (URDF convention). A moving
//   joint that moves only massless links (visual or sensor links) is welded: a warning names it.
// - Collision geometry: box (full sizes), sphere (radius), cylinder (radius, length along z),
//   mesh (resolved path and scale; the file is not opened here). <visual> geometry goes to
//   Model::visuals, separate from the collision geometry.
// - Physically impossible inertias (negative principal moments, triangle inequality violated)
//   are repaired with the smallest change of the principal moments and a warning naming the link.
// - Mimic joints are recorded in Model::mimic but not enforced (a warning says so).
// - package:// URIs resolve against package_search_path() (below).
// - Unknown elements and attributes are reported as warnings naming them and their line
//   (well-known extension elements: <gazebo>, <transmission>, <ros2_control>, <sensor> and
//   PyBullet's <contact> in a link are skipped silently).
//
// Warnings go to UrdfOptions::on_warning (default: "warning: <message>" on stderr); with
// UrdfOptions::strict every warning is an error instead.
//
// Errors: every problem throws ModelError with a message that starts with the file (or
// source_name) and names the offending link or joint, e.g.
//   "models/x.urdf: joint 'knee': child link 'shin' does not exist".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "impulse/model/model.hpp"

namespace impulse {

struct UrdfOptions {
  bool fixed_base = false;     // weld the root to the world even without a world link
  bool floating_base = false;  // float the root even when the URDF root link is "world"
  std::vector<std::string> package_paths;  // searched first for package:// URIs
  bool strict = false;         // every warning (unknown element, repaired inertia, ...) is an error
  // how <mesh> collision elements collide: as their convex hulls (default, as in MuJoCo and
  // Bullet; several times faster on mesh robots) or as triangle meshes, which keep concave parts
  // concave (CollisionShape::mesh_collision; docs/collision.md)
  MeshCollision mesh_collision = MeshCollision::ConvexHull;
  // Receives each warning as "<file>: <what> (line N)". Default (empty): printed to stderr.
  std::function<void(const std::string&)> on_warning;
};

// The directories searched for package://<pkg>/... URIs, in order: `user` (the API's
// UrdfOptions::package_paths, a world file's package_path attribute, the CLI's --package-path),
// then IMPULSE_PACKAGE_PATH, then ROS_PACKAGE_PATH (ROS 1: <dir>/<pkg>, or <dir> itself when it
// is named <pkg>), then AMENT_PREFIX_PATH (ROS 2: <prefix>/share/<pkg>). Each entry is
// "<dir>" or "<prefix>/share" for the AMENT ones.
std::vector<std::string> package_search_path(const std::vector<std::string>& user = {});

// Resolves package://pkg/rest, file:///abs, absolute and relative paths (relative ones against
// base_dir). Throws ModelError "<package 'pkg' not found; looked in: ...>" listing every
// directory tried (without the source prefix: callers add it).
std::string resolve_resource_uri(const std::string& uri, const std::string& base_dir,
                                 const std::vector<std::string>& package_paths);

// Loads the URDF file at `path`. Relative mesh paths resolve against the file's directory.
Model load_urdf(const std::string& path, const UrdfOptions& options = {});

// Loads URDF text. `source_name` prefixes error messages; relative mesh paths resolve against
// the current directory.
Model load_urdf_string(const std::string& xml, const UrdfOptions& options = {},
                       const std::string& source_name = "<string>");

}  // namespace impulse
