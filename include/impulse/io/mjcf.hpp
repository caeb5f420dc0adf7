// MJCF (MuJoCo XML) loader for a documented subset (docs/robots.md, "MJCF"), so MuJoCo users can
// bring their models:
//   <mujoco model>, <compiler angle="degree|radian" meshdir eulerseq="xyz">, <option timestep
//   gravity>, <default> classes (nested, `class` and `childclass`), <asset><mesh name file scale>,
//   <worldbody> with nested <body name pos quat|euler|axisangle childclass>, <inertial pos quat|euler
//   mass diaginertia|fullinertia>, <joint type="hinge|slide|ball|free" name pos axis range limited
//   damping armature frictionloss>, <freejoint>, <geom type="sphere|box|capsule|cylinder|mesh"
//   size fromto pos quat|euler|axisangle mass density rgba>, <actuator><motor joint gear ctrlrange>
//   and <position joint kp ctrlrange>.
// Everything else is reported as a warning naming the element and its line (an error in strict
// mode) and ignored: the unsupported parts are listed in docs/robots.md.
//
// Mapping: every body with joints becomes a body of the Model (several joints in one body become
// a chain of massless intermediate bodies at the joint anchors, composed in file order as MuJoCo
// does); the body frame is placed at its last joint's anchor. A body without joints is welded to
// its parent (merged, as URDF fixed joints). A body without <inertial> gets its inertia from its
// geoms (uniform density, default 1000 kg/m^3, MuJoCo's inertiafromgeom="auto"). Top-level
// bodies without a joint are welded to the world; a free joint gives a floating root whose
// initial pose (the body's pos and quat) is in MjcfModel::q0. Geoms of the worldbody itself (a
// ground plane, say) are not part of the robot: they are returned in MjcfModel::world_geoms.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "impulse/model/model.hpp"

namespace impulse {

struct MjcfOptions {
  bool strict = false;  // every warning is an error
  // Receives each warning as "<file>: <what> (line N)". Default (empty): printed to stderr.
  std::function<void(const std::string&)> on_warning;
};

struct MjcfActuator {
  enum class Type { Motor, Position };
  std::string name;
  Type type = Type::Motor;
  Index joint = -1;  // body/joint index in the Model
  Scalar gear = 1;   // motor: tau = gear * ctrl
  Scalar kp = 0;     // position: tau = kp (ctrl - q)
  Scalar ctrl_lower = -std::numeric_limits<Scalar>::infinity();
  Scalar ctrl_upper = std::numeric_limits<Scalar>::infinity();
};

struct MjcfModel {
  Model model;
  VecX q0;                             // initial configuration (free bodies at their pos/quat)
  Scalar timestep = 0.002;             // <option timestep>
  Vec3 gravity = Vec3(0, 0, -9.81);    // <option gravity>
  std::vector<MjcfActuator> actuators;
  std::vector<CollisionShape> world_geoms;  // geoms of <worldbody> itself (pose in the world); planes: size (0,0,0)
  std::vector<bool> world_geom_is_plane;
};

MjcfModel load_mjcf(const std::string& path, const MjcfOptions& options = {});
MjcfModel load_mjcf_string(const std::string& xml, const MjcfOptions& options = {},
                           const std::string& source_name = "<string>");

}  // namespace impulse
