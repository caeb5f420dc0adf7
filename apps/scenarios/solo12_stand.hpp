// Solo12 (example-robot-data, mesh collision) standing on the ground under joint PD at 1 ms: the
// mesh-robot scene of `impulse bench scenes --scene solo12` and of impulse_peers (the same
// description, pose and gains in Impulse and MuJoCo). The URDF is found through the package
// search path (--package-path, IMPULSE_PACKAGE_PATH, ROS_PACKAGE_PATH), never copied.
#pragma once

#include <string>

#include "impulse/world/world.hpp"

namespace impulse::scenarios {

inline constexpr const char* kSolo12Uri = "package://example-robot-data/robots/solo_description/robots/solo12.urdf";
// joint PD gains (per joint) and the base height of the standing pose (feet about 1 mm deep)
inline constexpr Scalar kSolo12Kp = 20.0, kSolo12Kd = 0.5;

// Resolved path of solo12.urdf; throws ModelError listing the folders searched when absent.
std::string solo12_urdf_path();
// The standing joint angles (example-robot-data's "straight_standing": HFE +-0.8, KFE -+1.6),
// in the model's joint order (the 12 revolute joints after the floating base).
VecX solo12_standing_joints(const Model& model);
// Base height at which the lowest collision point of the standing pose is 1 mm below z = 0.
Scalar solo12_standing_height(const Model& model);
// The ground, then Solo12 (mesh collision as `mesh_collision`) in the standing pose, PD-held.
ArticulatedSystem& add_solo12_standing(World& world, MeshCollision mesh_collision = MeshCollision::ConvexHull);

}  // namespace impulse::scenarios
