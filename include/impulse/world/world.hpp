// World: the engine a user links. It owns the dynamic objects (articulated systems from URDF
// and free rigid bodies), the static ones (ground, boxes, planes), the material table, the
// contact solver, and steps everything at a fixed time step (default 1 ms).
//
//   World world;
//   world.add_ground();
//   ArticulatedSystem& robot = world.add_articulated_system("models/anymal/anymal.urdf");
//   robot.set_state(q0, u0);
//   world.set_contact_solver("bisection");
//   for (int k = 0; k < 1000; ++k) world.integrate();
//
// Set-up calls validate everything and throw Error subclasses; a failed call leaves the World as
// it was. integrate() never throws: it returns a StepStatus and keeps the state finite.
// Worlds share nothing, so separate Worlds may be stepped on separate threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "impulse/collision/collision_world.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/stepper/stepper.hpp"
#include "impulse/world/articulated_system.hpp"

namespace impulse {

struct SystemOptions {
  std::string name;                 // default: the URDF robot name (made unique)
  UrdfOptions urdf;                 // fixed base, package paths
  CollisionFilter filter;           // for all of its collision shapes
  bool self_collision = false;
};

// A contact of the last step with its impulse (world frame, acting on A; -impulse on B).
struct ContactReport {
  Contact contact;
  Vec3 impulse = Vec3::Zero();
};

class World {
 public:
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // settings
  void set_time_step(Scalar dt);
  Scalar time_step() const { return settings_.dt; }
  void set_gravity(const Vec3& g);
  const Vec3& gravity() const { return gravity_; }
  // Contact margin of the collision stage (m), restitution threshold, error correction.
  void set_contact_margin(Scalar margin);
  void set_contact_settings(const DelassusSettings& s);
  const StepSettings& settings() const { return settings_; }
  void set_max_contacts(Index n);

  // contact solver by name ("bisection", "pgs", "lm", "noslip"), or a configured instance
  void set_contact_solver(const std::string& name);
  void set_contact_solver(std::unique_ptr<ContactSolver> solver);
  const ContactSolver& contact_solver() const { return stepper_.solver(); }
  ContactSolver& contact_solver() { return stepper_.solver(); }

  // materials (friction and restitution per pair of material names)
  MaterialTable& materials() { return collision_.materials(); }
  void set_material_pair(const std::string& a, const std::string& b, Scalar mu, Scalar restitution);
  void set_default_material(Scalar mu, Scalar restitution);

  // static objects; return the collision object index
  Index add_ground(Scalar height = 0, const std::string& material = "default", const CollisionFilter& f = {});
  Index add_static_box(const std::string& name, const SE3& pose, const Vec3& size,
                       const std::string& material = "default", const CollisionFilter& f = {});
  Index add_wall(const std::string& name, const Vec3& normal, Scalar offset, const std::string& material = "default",
                 const CollisionFilter& f = {});

  // dynamic objects
  ArticulatedSystem& add_articulated_system(const std::string& urdf_path, const SystemOptions& options = {});
  ArticulatedSystem& add_articulated_system(const Model& model, const SystemOptions& options = {});
  // Free rigid bodies (uniform density): radius; full sides; radius and length along local z.
  ArticulatedSystem& add_sphere(const std::string& name, Scalar radius, Scalar mass,
                                const std::string& material = "default", const CollisionFilter& f = {});
  ArticulatedSystem& add_box(const std::string& name, const Vec3& size, Scalar mass,
                             const std::string& material = "default", const CollisionFilter& f = {});
  ArticulatedSystem& add_capsule(const std::string& name, Scalar radius, Scalar length, Scalar mass,
                                 const std::string& material = "default", const CollisionFilter& f = {});
  ArticulatedSystem& add_cylinder(const std::string& name, Scalar radius, Scalar length, Scalar mass,
                                  const std::string& material = "default", const CollisionFilter& f = {});

  Index num_systems() const { return static_cast<Index>(systems_.size()); }
  ArticulatedSystem& system(Index i);
  ArticulatedSystem& system(const std::string& name);
  const std::vector<ArticulatedSystem*>& systems() const { return system_ptrs_; }
  CollisionWorld& collision() { return collision_; }

  // stepping
  StepStatus integrate();
  void integrate1();         // kinematics, dynamics, collision, Delassus assembly
  StepStatus integrate2();   // solve and integrate (runs integrate1 first if it was not)
  Scalar time() const { return time_; }
  void set_time(Scalar t) { time_ = t; }
  const StepStats& stats() const { return stepper_.stats(); }

  // contacts of the last integrate1 (with impulses after integrate2)
  const ContactSet& contacts() const { return stepper_.contacts(); }
  // The contact problem of the last integrate1 (G, c, mu: assembler().problem()), its rows and frames.
  const DelassusAssembler& assembler() const { return stepper_.assembler(); }
  std::vector<ContactReport> contact_reports() const;
  const std::string& object_name(Index collision_object) const { return collision_.object_name(collision_object); }

 private:
  friend class ArticulatedSystem;
  ArticulatedSystem& add_system(std::unique_ptr<ArticulatedSystem> sys, const SystemOptions& options);
  ArticulatedSystem& add_free_body(const std::string& name, ShapeType type, const Vec3& size,
                                   const std::string& material, const CollisionFilter& filter, const Inertia& inertia);
  std::string unique_name(const std::string& base) const;
  void reserve();

  Vec3 gravity_ = Vec3(0, 0, -9.81);
  StepSettings settings_;
  CollisionWorld collision_;
  Stepper stepper_;
  std::vector<std::unique_ptr<ArticulatedSystem>> systems_;
  std::vector<ArticulatedSystem*> system_ptrs_;
  std::vector<StepperSystem> step_systems_;  // the stepper's view of systems_, refreshed in reserve()
  std::vector<Index> object_system_;  // collision object -> system index, -1 for static objects
  Scalar time_ = 0;
  bool prepared_ = false;
};

}  // namespace impulse
