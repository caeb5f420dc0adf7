// URDF loader: turns a URDF robot description into an immutable Model.
//
// Conventions (DESIGN.md section 1, docs/conventions.md):
// - Root: when the root link is named "world" (and has no <inertial>), its single child joint
//   becomes the root joint (a fixed joint gives a fixed base). Otherwise the root link gets a
//   floating joint named "root" (q = [x y z qw qx qy qz], u = world-frame [v; w]), or a fixed
//   one when UrdfOptions::fixed_base is set.
// - Body order is depth-first from the root, siblings in the order their joints appear in the
//   file. Fixed joints are merged into the body they hang from: mass, centre of mass and
//   rotational inertia are combined exactly, collision shapes are kept with composed poses, and
//   every merged link and fixed joint stays reachable as a named frame.
// - The body frame of a moving joint is the frame of its child link (the joint frame at q = 0).
// - A link without <inertial> is a massless frame (URDF convention), not a 1 kg default body.
// - Collision geometry: box (full sizes), sphere (radius), cylinder (radius, length along z),
//   mesh (resolved path and scale; the file is not opened here). <visual> is ignored.
// - package:// URIs resolve against UrdfOptions::package_paths, then ROS_PACKAGE_PATH.
//
// Errors: every problem throws ModelError with a message that starts with the file (or
// source_name) and names the offending link or joint, e.g.
//   "models/x.urdf: joint 'knee': child link 'shin' does not exist".
#pragma once

#include <string>
#include <vector>

#include "impulse/model/model.hpp"

namespace impulse {

struct UrdfOptions {
  bool fixed_base = false;                 // weld the root to the world even without a world link
  std::vector<std::string> package_paths;  // searched for package:// URIs before ROS_PACKAGE_PATH
};

// Loads the URDF file at `path`. Relative mesh paths resolve against the file's directory.
Model load_urdf(const std::string& path, const UrdfOptions& options = {});

// Loads URDF text. `source_name` prefixes error messages; relative mesh paths resolve against
// the current directory.
Model load_urdf_string(const std::string& xml, const UrdfOptions& options = {},
                       const std::string& source_name = "<string>");

}  // namespace impulse
