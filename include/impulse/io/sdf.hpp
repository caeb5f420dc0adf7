// SDFormat (Gazebo's SDF) loader, through libsdformat (Debian's libsdformat-dev, SDFormat 12), so
// Gazebo users can bring their worlds and models. libsdformat parses and validates the file
// (schema, frame semantics, pose `relative_to`, `<include>` of model:// URIs); this loader maps
// what Impulse simulates (docs/robots.md, "SDF"):
//   <world>: <gravity>, <physics><max_step_size> (the time step), every <model>;
//   <model>: <static>, <self_collide>, <pose>, <link>, <joint>;
//   <link>: <pose>, <inertial> (mass, pose, inertia; SDF's default when absent: 1 kg, unit
//   moments), <collision> and <visual> with <geometry> box, sphere, cylinder, capsule, mesh
//   (scale; model:// and relative URIs) and plane (static models only), <surface><friction>
//   <ode><mu> (or <bullet><friction>) as the collision's friction (SDF's default 1; a pair takes
//   the smaller, as Gazebo does);
//   <joint>: revolute, continuous, prismatic, ball, fixed, with <axis><xyz expressed_in>,
//   <limit lower upper effort velocity>, <dynamics damping friction>; a joint to "world" welds or
//   hinges the root to the world.
// Everything else that affects nothing Impulse simulates (plugins, sensors, lights, actors, the
// scene, GUI, audio, wind, atmosphere) is reported in one warning per kind of element; what
// Impulse cannot simulate faithfully (universal, revolute2, screw and gearbox joints, closed
// kinematic loops, nested models, ellipsoid, heightmap and polyline geometry, joint springs) is
// an error or a warning naming the element. Strict mode turns every warning into an error.
//
// Mapping: each model becomes one Model (one tree: a single root link). The body of a link moved
// by a joint has its frame at the joint frame (SDF places the joint in the child link's frame);
// the link's inertia and shapes are moved into it and the link is kept as a frame. Fixed joints
// merge the child link into its parent body and moving joints that carry no mass are welded
// (with a warning), as for URDF; an impossible inertia is an error of libsdformat naming the link.
// A static model is welded to the world link by link. Joint positions start at 0 (SDF has no
// initial state).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "impulse/model/model.hpp"

namespace impulse {

struct SdfOptions {
  bool strict = false;  // every warning is an error
  // Directories searched for model://<name>/... URIs (<include> and meshes), before the
  // SDF_PATH, GZ_SIM_RESOURCE_PATH and IGN_GAZEBO_RESOURCE_PATH environment variables.
  std::vector<std::string> resource_paths;
  // Receives each warning as "<file>: <what>". Default (empty): printed to stderr.
  std::function<void(const std::string&)> on_warning;
};

struct SdfModel {
  std::string name;
  Model model;             // a fixed base carries its placement in the world (root joint placement)
  VecX q0;                 // initial configuration: floating base at its pose in the world, joints 0
  bool is_static = false;  // <static>: welded to the world
  bool self_collision = false;
};

// A <plane> collision of a static model: the half-space normal . x <= offset (world frame).
struct SdfPlane {
  std::string name;  // "<model>/<link>/<collision>"
  Vec3 normal = Vec3::UnitZ();
  Scalar offset = 0;
  std::string material;
};

// The friction of the collisions of one material name (Impulse material: "sdf:mu=<value>").
struct SdfFriction {
  std::string material;
  Scalar mu = 1;
};

struct SdfWorld {
  std::string name;
  Scalar time_step = 0.001;           // <physics><max_step_size>
  Vec3 gravity = Vec3(0, 0, -9.81);
  std::vector<SdfModel> models;       // in file order (models with only planes are not listed)
  std::vector<SdfPlane> planes;
  std::vector<SdfFriction> frictions;  // every material name the shapes and planes use
};

// True when this build reads SDF (libsdformat was found at configure time).
bool sdf_supported();

// Loads an SDF file holding a <world> (the first one) or a single <model>. Throws ModelError
// "<file>: <problem>" (with the line where libsdformat gives one).
SdfWorld load_sdf(const std::string& path, const SdfOptions& options = {});
// The same from text; relative URIs resolve against the current directory.
SdfWorld load_sdf_string(const std::string& xml, const SdfOptions& options = {},
                         const std::string& source_name = "<string>");

}  // namespace impulse
