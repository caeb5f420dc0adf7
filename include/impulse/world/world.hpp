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
// Set-up calls validate everything (settings through world/settings.hpp) and throw Error
// subclasses; a failed call leaves the World as it was (strong guarantee). integrate() never
// throws: it returns a StepReport (every condition of the step; converts to the worst
// StepStatus) and keeps the state finite; conditions are also counted in warnings().
// Worlds share nothing, so separate Worlds may be stepped on separate threads; one World is used
// by one thread at a time (a second thread's call is refused: ConcurrentUseError, docs/threading.md).
//
// State: save_state() / restore_state() capture and restore everything that determines the next
// steps (world_state.hpp), reset() returns to the initial state, clone() copies a whole World.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "impulse/collision/collision_world.hpp"
#include "impulse/collision/heightfield.hpp"
#include "impulse/core/exclusive_use.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/stepper/stepper.hpp"
#include "impulse/world/articulated_system.hpp"
#include "impulse/world/step_workspace.hpp"
#include "impulse/world/transition_derivatives.hpp"
#include "impulse/world/world_state.hpp"

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

// Kinds of warnings a step can raise (counted per World, like MuJoCo's mjData.warning).
enum class WarningKind {
  ContactOverflow,                // more contacts than max_contacts: the extra ones were dropped
  SolverNotConverged,             // the solver hit its iteration limit; its last iterate was used
  SolverFailed,                   // numerical issue in the solver: no contact impulse was applied
  NonFinite,                      // the new state was not finite: state and time left unchanged
  MassMatrixNotPositiveDefinite,  // LTDL pivot <= 0 or not finite: state and time left unchanged
};
constexpr int kNumWarningKinds = 5;
const char* to_string(WarningKind k);

struct WarningCounter {
  Index count = 0;      // steps that raised this warning since the last clear_warnings()
  Scalar last_time = 0; // World time at the start of the last such step
  Index last_info = -1; // kind-specific: contacts found (overflow), iterations (solver), system index
};

// Everything that happened in one step. Converts to StepStatus (the worst condition) so code
// written against the older `StepStatus integrate()` keeps working.
struct StepReport {
  StepStatus status = StepStatus::Ok;  // worst: NonFinite > SolverFailed > SolverNotConverged > ContactOverflow
  bool stepped = true;                 // false: state and time were left unchanged
  bool contact_overflow = false;
  bool solver_not_converged = false;
  bool solver_failed = false;
  bool non_finite = false;             // the new state was not finite (rejected)
  bool mass_matrix_not_positive_definite = false;
  Index system = -1;     // the system of non_finite / mass_matrix_not_positive_definite (first one)
  Index dof = -1;        // mass matrix: the dof whose LTDL pivot D failed
  Scalar pivot = 0;      // mass matrix: that pivot's value
  Index contacts = 0;    // contacts used (<= max_contacts)
  Index limits = 0;      // joint-limit rows
  Index solver_iterations = 0;
  Scalar residual = 0;   // worst solver residual of the step (both solves of a restitution phase)
  bool restitution = false;
  bool ok() const { return status == StepStatus::Ok && stepped; }
  operator StepStatus() const { return status; }  // NOLINT: implicit on purpose (compatibility)
};

// A World is one WorldModel and one WorldData (docs/architecture.md, "What a World holds").
//
// WorldModel: what is fixed while the World steps, read by every step and never written by one:
// the settings, gravity, the contact solver's registry name, the systems' Models in order and the
// collision objects' systems. It is immutable once shared: clone() shares it (one copy for a World
// and all its clones, e.g. a VecWorld's environments), and a set-up call on a World whose model is
// shared writes a copy of its own first. The collision geometry (primitives, meshes and their
// hulls, heightfields) and the Models themselves are shared the same way, by their own pointers.
struct WorldModel {
  StepSettings settings;
  Vec3 gravity = Vec3(0, 0, -9.81);
  std::string solver_name;  // registry name of the contact solver, empty for a custom instance
  std::vector<std::shared_ptr<const Model>> layout;  // the systems' Models, in order
  std::vector<Index> object_system;    // collision object -> system index, -1 for static objects
  std::vector<Index> same_model_rank;  // per system: earlier systems whose Model equals it but for inertia
};

// WorldData: what a World's steps change and what is its own, beside the collision objects' poses
// (CollisionWorld): the time, each system's state and inputs (SystemState, stepper/system.hpp) and
// the last step's outputs, what the last step left for the next (warm start, contacts, impulses,
// statistics), the last report, the warnings and the initial state. clone() copies it;
// save_state() copies the part that determines the next steps (time, systems, warm start) into a
// WorldState, restore_state() copies it back.
struct WorldData {
  Scalar time = 0;
  std::vector<SystemState> systems;    // per system, in the order of World::systems()
  std::vector<SystemOutputs> outputs;  // per system: applied and friction torques, contact impulses
  StepperState state;  // warm-start memory, contacts and impulses of the last step, its statistics
  StepReport report;
  std::array<WarningCounter, kNumWarningKinds> warnings{};
  WorldState initial;
  bool has_initial = false;
};

class World {
 public:
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // A copy of this World that shares its WorldModel, the systems' Models and the collision
  // geometry, and copies everything else: the WorldData (time, warm start, contacts, warnings,
  // initial state), each system's state, inputs and last step's outputs, and the collision
  // objects with their filters, self-collision switches, margin and materials (also when set
  // directly through collision()). The solver is made anew from the registry with this one's
  // settings. Clone and source then step alike, bit for bit. Cannot be cloned (InvalidArgument,
  // nothing changed): a World whose solver is a custom instance that is not one of the registry's
  // types. Reads this World only: clones of one World may be made on several threads at once.
  std::unique_ptr<World> clone() const;

  // The two halves of the World (above): the model, shared with its clones, and the data.
  std::shared_ptr<const WorldModel> shared_model() const { return model_; }
  const WorldData& data() const { return data_; }

  // A hint for batched stepping (VecWorld, LocomotionTask): requests the memory the next step of
  // this World will use into the calling core's cache, so that a thread can ask for the World it
  // steps next while it computes the current one (core/prefetch.hpp). No effect on results.
  // With the StepWorkspace of the step to come (integrate(ws)), the systems' own Data, which that
  // step does not use, are left out.
  void prefetch(const StepWorkspace* ws = nullptr) const;

  // state (world_state.hpp)
  WorldState save_state() const;
  // Restores a state saved from this World or from one built from the same description; throws
  // InvalidArgument naming the first mismatch, and then changes nothing.
  void restore_state(const WorldState& state);
  // The initial state: captured automatically by the first step (integrate/integrate1) after the
  // last change of the World's objects, or explicitly by mark_initial_state(). reset() restores it
  // and clears the warnings; without one (never stepped, no mark) it does nothing.
  void mark_initial_state();
  void reset();
  bool has_initial_state() const { return data_.has_initial; }

  // settings
  void set_time_step(Scalar dt);
  Scalar time_step() const { return model_->settings.dt; }
  void set_gravity(const Vec3& g);
  const Vec3& gravity() const { return model_->gravity; }
  // Contact margin of the collision stage (m), restitution threshold, error correction.
  void set_contact_margin(Scalar margin);
  void set_contact_settings(const DelassusSettings& s);
  const StepSettings& settings() const { return model_->settings; }
  void set_max_contacts(Index n);
  // Wall time of each step's stages in stats().times (on by default); off saves the clock reads.
  void set_stage_timing(bool on);

  // contact solver by name ("bisection", "pgs", "lm", "noslip"), or a configured instance
  void set_contact_solver(const std::string& name);
  void set_contact_solver(std::unique_ptr<ContactSolver> solver);
  const ContactSolver& contact_solver() const { return *solver_; }
  ContactSolver& contact_solver() { return *solver_; }

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

  // terrain: a heightfield (collision/heightfield.hpp, shared) or a static triangle mesh file
  Index add_heightfield(const std::string& name, std::shared_ptr<const Heightfield> terrain,
                        const std::string& material = "default", const CollisionFilter& f = {});
  Index add_static_mesh(const std::string& name, const std::string& mesh_path, const Vec3& scale, const SE3& pose,
                        const std::string& material = "default", const CollisionFilter& f = {});

  // dynamic objects. Systems whose descriptions are equal (Model::operator==, e.g. one URDF
  // loaded many times with the same options) share one Model: the World holds it once.
  ArticulatedSystem& add_articulated_system(const std::string& urdf_path, const SystemOptions& options = {});
  ArticulatedSystem& add_articulated_system(const Model& model, const SystemOptions& options = {});
  // The same without a copy of the Model: Worlds built from one shared Model (batched
  // environments, clone()) hold it once. A null pointer is an InvalidArgument.
  ArticulatedSystem& add_articulated_system(std::shared_ptr<const Model> model, const SystemOptions& options = {});
  // Free rigid bodies (uniform density): radius; full sides; radius and length along local z.
  ArticulatedSystem& add_sphere(const std::string& name, Scalar radius, Scalar mass,
                                const std::string& material = "default", const CollisionFilter& f = {});
  ArticulatedSystem& add_box(const std::string& name, const Vec3& size, Scalar mass,
                             const std::string& material = "default", const CollisionFilter& f = {});
  ArticulatedSystem& add_capsule(const std::string& name, Scalar radius, Scalar length, Scalar mass,
                                 const std::string& material = "default", const CollisionFilter& f = {});
  ArticulatedSystem& add_cylinder(const std::string& name, Scalar radius, Scalar length, Scalar mass,
                                  const std::string& material = "default", const CollisionFilter& f = {});

  // Per-environment physical parameters (domain randomization): replaces the inertia of one body
  // of a system (mass, centre of mass and rotational inertia about it, body frame). The system
  // then steps with a copy of its Model that differs in that inertia only (shared with the other
  // systems of this World whose Model equals it; Worlds stepped with one StepWorkspace keep sharing
  // its Data and Steppers: Model::equal_except_parameters). State, inputs and the initial state are
  // kept; the warm-start memory and the last step's contacts are cleared, as when an object is
  // added. Throws InvalidArgument (nothing changed) for an index out of range or an inertia that
  // is not physical (check_inertia, model_builder.hpp).
  void set_body_inertia(Index system, Index body, const Inertia& inertia);
  // The joints' viscous damping (N m s/rad or N s/m) and dry friction (N m or N) of a system, one
  // value per velocity dof (size nv, each finite and >= 0), as URDF's <dynamics damping friction>
  // (Model::damping, Model::friction; friction acts on one-dof joints). The system then steps with
  // a copy of its Model as set_body_inertia describes, with the same guarantees and errors.
  void set_joint_damping(Index system, const VecX& damping);
  void set_joint_friction(Index system, const VecX& friction);

  Index num_systems() const { return static_cast<Index>(systems_.size()); }
  ArticulatedSystem& system(Index i);
  ArticulatedSystem& system(const std::string& name);
  const std::vector<ArticulatedSystem*>& systems() const { return system_ptrs_; }
  CollisionWorld& collision() { return collision_; }
  const CollisionWorld& collision() const { return collision_; }

  // stepping
  StepReport integrate();
  // integrate() with the scratch of the workspace (the systems' Data, the stepper's buffers and
  // the solver's workspace) instead of the World's own: the same results, bit for bit; for a
  // thread that steps many Worlds in turn (batch/), whose scratch then stays in its cache
  // (step_workspace.hpp). What the step leaves (state, warm start, contacts(), stats()) is the
  // World's either way; assembler() describes the last step made without a workspace.
  StepReport integrate(StepWorkspace& ws);
  // integrate(ws) in two calls, for batch::WorldLanes, which computes the islands' G of a group of
  // Worlds together between them (contact/delassus_lanes.hpp): begin_step(ws) runs the step up to
  // the constraint rows without their G (Stepper::prepare_rows) on the workspace's scratch;
  // step_stepper() is that scratch; end_step() runs the rest and returns integrate(ws)'s report,
  // the same bits. Until end_step() or cancel_step() the workspace holds this World's step (it
  // must step no other World) and this World takes no other step call.
  // solve_step(), between them and optional, runs end_step()'s first part: the targets and the
  // solve (Stepper::finish_solve), and returns true when the step goes on to the velocity update
  // (Stepper::velocity_update: WorldLanes computes those of a group together too), false when it
  // ended there (a mass matrix not positive definite: end_step() reports it).
  // begin_solve(), before solve_step() and optional, runs solve_step()'s part before the solver
  // (the targets, the mass-matrix check, Stepper::begin_solve: the warm start), so that WorldLanes
  // can solve the islands of a group together (batch/bisection_lanes.hpp, Stepper::set_presolved);
  // false when the step ended there, as solve_step() would.
  // defer_paths: the rows' path work too is left for the group (Stepper::prepare_rows), else only
  // their G; the same bits either way.
  void begin_step(StepWorkspace& ws, bool defer_paths = true);
  Stepper& step_stepper();
  bool begin_solve();
  bool solve_step();
  StepReport end_step();
  void cancel_step() noexcept;
  // Makes the workspace's Data, stepper and solver for this World now (integrate(ws) would make
  // them on first use). A stepper made here takes the sizes of one step of a copy of this World
  // (the copy is discarded; this World is unchanged), so that the first integrate(ws) of any
  // World of this layout allocates nothing; larger problems later grow the buffers once more.
  void reserve_workspace(StepWorkspace& ws) const;
  // Step Jacobians A = d x+ / d x and B = d x+ / d tau by finite differences or analytically, on
  // clones of this World (transition_derivatives.hpp); this World is not changed. Throws
  // InvalidArgument for bad options or a World that cannot be cloned, Error when a perturbed step
  // is rejected or, analytically, when the step has what the method does not differentiate.
  TransitionJacobians transition_derivatives(const TransitionOptions& options = {}) const;
  void integrate1();         // kinematics, dynamics, collision, Delassus assembly
  StepReport integrate2();   // solve and integrate (runs integrate1 first if it was not)
  Scalar time() const { return data_.time; }
  void set_time(Scalar t);   // finite, >= 0
  const StepStats& stats() const { return data_.state.stats; }
  const StepReport& last_report() const { return data_.report; }
  // One line describing the conditions of a report ("ok", or e.g. "contact overflow (256 contacts
  // kept); mass matrix of system 'arm' not positive definite (dof 3, pivot -0.2)").
  std::string describe(const StepReport& report) const;

  // warnings: per-kind counters since construction, reset() or clear_warnings()
  const WarningCounter& warning(WarningKind k) const { return data_.warnings[static_cast<std::size_t>(k)]; }
  const std::array<WarningCounter, kNumWarningKinds>& warnings() const { return data_.warnings; }
  void clear_warnings() {
    const auto in_use = use("clear_warnings");
    data_.warnings = {};
  }

  // contacts of the last step (integrate1 or integrate(ws); with impulses after the solve)
  const ContactSet& contacts() const { return data_.state.contacts; }
  // The contact problem of the last integrate1 or integrate() (G, c, mu: assembler().problem()),
  // its rows and frames. A step with a StepWorkspace assembles in the workspace, which the next
  // World stepped with it overwrites: this then still describes the last step without one.
  const DelassusAssembler& assembler() const;
  // contacts() with their impulses; the impulses are zero until a solve answered the contacts
  // (after integrate1 alone, or a step skipped for its mass matrix)
  std::vector<ContactReport> contact_reports() const;
  const std::string& object_name(Index collision_object) const { return collision_.object_name(collision_object); }

  // Threading (docs/threading.md): a World may be used by one thread at a time. The calls that
  // step or change it hold its use marker, and refuse with ConcurrentUseError while another
  // thread holds it; bindings take it around calls that release an interpreter lock.
  const UseMarker& use_marker() const { return use_; }

 private:
  friend class ArticulatedSystem;
  World(std::shared_ptr<WorldModel> model, CollisionWorld collision, std::unique_ptr<ContactSolver> solver);
  friend class TransitionDifferentiator;
  // The analytic step Jacobians at the current state (TransitionMethod::Analytic): takes one step
  // (this World is changed: the caller restores it).
  TransitionJacobians analytic_transition_derivatives();
  ArticulatedSystem& add_system(std::unique_ptr<ArticulatedSystem> sys, const SystemOptions& options);
  ArticulatedSystem& add_free_body(const std::string& name, ShapeType type, const Vec3& size,
                                   const std::string& material, const CollisionFilter& filter, const Inertia& inertia);
  std::string unique_name(const std::string& base) const;
  // the names taken by systems and collision objects (unique_name), updated on use
  struct TakenNames {
    std::unordered_set<std::string> taken;
    std::unordered_map<std::string, int> next_suffix;  // first suffix that may be free, per base
    std::size_t systems = 0;                           // systems_ already in `taken`
    Index objects = 0;                                 // collision objects already in `taken`
  };
  mutable TakenNames names_;
  // the Model of a system whose description equals `model`, or null
  std::shared_ptr<const Model> shared_model_equal_to(const Model& model) const;
  // the system steps with `model` (a changed copy of its Model) from now on
  void replace_model(ArticulatedSystem& s, Model model);
  void set_joint_values(const char* call, Index system, const VecX& values, VecX Model::*member);
  void reserve();
  void objects_changed();
  void save_state_into(WorldState& st) const;
  void prepare_initial_state();
  void check_compatible(const WorldState& state) const;
  void warn(WarningKind k, Index info);
  // points the step at the workspace's Data, stepper and solver (integrate(ws), begin_step), and
  // back at the World's own
  void bind_workspace(StepWorkspace& ws);
  void release_workspace() noexcept;
  // the two halves of a step, without the use marker (integrate* hold it)
  void collide_and_assemble();
  StepReport solve_and_integrate();
  // solve_and_integrate() in two: solve_part() checks the mass matrices and solves (false: the
  // step ends with report r, already stored), update_part() updates the state and reports
  bool solve_part(StepReport& r);
  bool mass_matrix_ok(StepReport& r);  // false (and r, the warning): a mass matrix is not positive definite
  StepReport update_part(StepReport r);
  // the step scratch of integrate() and integrate1() without a workspace (made on first use)
  Stepper& own_stepper();
  UseMarker::Scope use(const char* call) const { return UseMarker::Scope(use_, "World", call); }
  // The model to change in a set-up call: this World's own (copied first when a clone shares it).
  WorldModel& edit_model();
  // the step's views of the systems and scratch for the current objects (reserve(), clone())
  void refresh_step();

  // never null; shared with the clones, and then never written (edit_model)
  std::shared_ptr<WorldModel> model_;
  WorldData data_;
  CollisionWorld collision_;
  std::unique_ptr<ContactSolver> solver_;
  // The step's scratch: the World's own (integrate(), integrate1(); made on first use, so a World
  // stepped only with workspaces holds none) or a workspace's (integrate(ws)), one per layout.
  std::unique_ptr<Stepper> own_stepper_;
  Stepper* stepper_ = nullptr;  // the scratch of the step under way
  // the last workspace's stepper and solver (a custom solver type solves in the World's own)
  struct WorkspaceParts {
    std::uint64_t id = 0;
    Stepper* stepper = nullptr;
    ContactSolver* solver = nullptr;
  } workspace_parts_;
  ContactSolver* step_solver_ = nullptr;  // the solver workspace of the step under way
  std::vector<std::unique_ptr<ArticulatedSystem>> systems_;
  std::vector<ArticulatedSystem*> system_ptrs_;
  std::vector<StepperSystem> step_systems_;  // the stepper's view of systems_, refreshed in reserve()
  // per system: the workspace (id) whose Data the last integrate(ws) used, and that Data
  std::vector<std::pair<std::uint64_t, Data*>> workspace_data_;
  bool prepared_ = false;
  bool step_begun_ = false;  // begin_step() ran, end_step() or cancel_step() not yet
  int step_solved_ = 0;      // solve_step() ran in the begun step: 1 going on, 2 ended (report_)
  bool solve_begun_ = false; // begin_solve() ran in the begun step, solve_step() not yet
  StepReport step_report_;   // the begun step's report so far (solve_step)
  UseMarker use_;
};

}  // namespace impulse
