// World files: an XML scene description (like a MuJoCo model file) turned into a World.
// The format is documented in docs/world-format.md; in short:
//
//   <world dt="0.001" gravity="0 0 -9.81">
//     <solver name="bisection" max_iterations="1000" tolerance="1e-6"/>
//     <contact margin="0.005" erp="0" restitution_threshold="0.01"/>
//     <default_material friction="0.8" restitution="0"/>
//     <material a="rubber" b="floor" friction="0.9" restitution="0.1"/>
//     <ground height="0" material="floor"/>
//     <box name="table" size="1 1 0.1" pos="0 0 0.05" static="true"/>
//     <sphere name="ball" radius="0.1" mass="1" pos="0 0 1" vel="1 0 0" material="rubber"/>
//     <robot name="anymal" urdf="../anymal/anymal.urdf" pos="0 0 0.6">
//       <q LF_HFE="0.4" LF_KFE="-0.8"/>
//       <pd kp="80" kd="2"/>
//       <pd_target LF_HFE="0.4" LF_KFE="-0.8"/>
//     </robot>
//   </world>
//
// Loading happens in two phases:
//   1. parse_world_file(): reads and checks the whole file into a WorldDescription (plain data):
//      XML syntax, unknown elements and attributes, numbers (NaN and Inf are rejected), ranges,
//      duplicate names, solver names and options, and every URDF (loaded here, so a missing or
//      broken URDF, an unknown joint name or a wrong vector size is found before any World is
//      touched).
//   2. build_world(): adds the described objects to a World through its public API.
// Errors of phase 1 throw WorldFileError "path:line: <problem>" naming the element and the
// attribute. Phase 2 can still fail on what only the World checks (e.g. a URDF mesh that cannot
// be read by the collision stage); the World may then be partly built and should be discarded.
// load_world() does both into a fresh World, so its callers never see a half-built World.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "impulse/collision/collision_world.hpp"
#include "impulse/contact/delassus.hpp"
#include "impulse/core/error.hpp"
#include "impulse/io/sdf.hpp"
#include "impulse/model/model.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/world/world.hpp"

namespace impulse {

// A world file that cannot be read or is invalid. what() = "path:line: problem".
class WorldFileError : public Error {
 public:
  using Error::Error;
};

// The <solver> element: a name of the solver registry and its settings.
using WorldSolverDescription = SolverSettings;

struct MaterialPairDescription {
  std::string a, b;
  Scalar friction = 0.8;
  Scalar restitution = 0;
};

struct GroundDescription {
  Scalar height = 0;
  std::string material = "default";
  CollisionFilter filter;
};

struct PlaneDescription {
  std::string name;
  Vec3 normal = Vec3::UnitZ();
  Scalar offset = 0;
  std::string material = "default";
  CollisionFilter filter;
};

// A heightfield terrain (docs/terrain.md), built and validated in phase 1.
struct HeightfieldDescription {
  std::string name;
  std::shared_ptr<const Heightfield> field;
  std::string material = "default";
  CollisionFilter filter;
  int line = 0;
};

// A box, sphere, capsule or cylinder: static (boxes only) or a free rigid body.
struct BodyDescription {
  enum class Shape { Box, Sphere, Capsule, Cylinder } shape = Shape::Box;
  std::string name;
  Vec3 size = Vec3::Zero();  // box: full sides; sphere: (radius, 0, 0); capsule/cylinder: (radius, length, 0)
  bool is_static = false;
  Scalar mass = 0;
  Vec3 position = Vec3::Zero();
  Quat orientation = Quat::Identity();
  Vec3 linear_velocity = Vec3::Zero();   // world frame
  Vec3 angular_velocity = Vec3::Zero();  // world frame
  std::string material = "default";
  CollisionFilter filter;
  int line = 0;
};

struct RobotDescription {
  std::string name;
  std::string urdf;  // resolved path (relative to the world file's directory)
  // loaded in phase 1 (root placement applied for fixed bases); shared, immutable: every World
  // built from this description (VecWorld) holds the one copy
  std::shared_ptr<const Model> model;
  bool fixed_base = false;
  bool self_collision = false;
  CollisionFilter filter;
  VecX q, u;            // full state, checked against the model
  VecX kp, kd;          // layout of u; empty when no <pd>
  VecX q_target, u_target;
  int line = 0;
};

struct WorldDescription {
  std::string path;
  Scalar dt = 1e-3;
  Vec3 gravity = Vec3(0, 0, -9.81);
  Index max_contacts = ContactSet::kDefaultCapacity;
  WorldSolverDescription solver;
  Scalar margin = 0.005;
  DelassusSettings contact;
  bool stage_timing = false;  // World::set_stage_timing
  bool has_default_material = false;
  MaterialPairDescription default_material;
  std::vector<MaterialPairDescription> materials;
  std::vector<GroundDescription> grounds;
  std::vector<PlaneDescription> planes;
  std::vector<HeightfieldDescription> heightfields;
  std::vector<BodyDescription> bodies;  // static boxes and free bodies, in file order
  std::vector<RobotDescription> robots;
};

// Phase 1: reads and validates the file. Throws WorldFileError. A path ending in .sdf or .world
// is an SDFormat file (io/sdf.hpp, through world_description_from_sdf).
WorldDescription parse_world_file(const std::string& path);
// An SDF world as a WorldDescription: its time step and gravity, every model as a robot (static
// ones welded to the world), planes of static models as half-spaces, and one material per
// collision friction (a pair takes the smaller coefficient, as in Gazebo).
WorldDescription world_description_from_sdf(const SdfWorld& sdf, const std::string& path);
// Phase 1 on XML text; `path` is used for messages and to resolve relative URDF paths.
WorldDescription parse_world_string(const std::string& xml, const std::string& path);

// The settings of `description` as a world file: the <world> attributes, <solver> and <contact>,
// each setting that differs from its default (world/world_fields.hpp and the tables it names);
// objects, materials and the path are not written. parse_world_string reads it back to the same
// settings.
std::string world_settings_xml(const WorldDescription& description);
// Sets one setting of `description` from "ELEMENT.ATTRIBUTE=VALUE" (ELEMENT world, solver or
// contact; e.g. "solver.alpha=0.5", the CLI's --set), read as that world-file attribute with the
// same checks. Throws WorldFileError "--set ASSIGNMENT: problem"; `description` is then unchanged.
void apply_world_setting(WorldDescription& description, const std::string& assignment);

// Phase 2: adds everything to `world` (settings, solver, materials, objects, states, PD).
// Meant for a fresh World; on an exception the World may be partly built: discard it.
void build_world(const WorldDescription& description, World& world);

// Both phases into a new World.
std::unique_ptr<World> load_world(const std::string& path);
// Both phases into an existing (normally fresh) World; the World is not touched when the file
// is invalid (phase 1 failed), and should be discarded when phase 2 throws.
void load_world(const std::string& path, World& world);

// The contact-solver instance a WorldSolverDescription asks for: make_contact_solver(const
// SolverSettings&) of the solver registry (solver_registry.hpp).

}  // namespace impulse
