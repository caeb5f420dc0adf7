// VecWorld: N independent Worlds stepped in parallel by a ThreadPool (module batch/, above world/;
// docs/architecture.md, "Module layering"). The worlds share nothing, so stepping them on any number of threads gives
// bit-identical results; state is gathered into and scattered from caller-provided contiguous
// row-major arrays (one row per world), so a Python caller hands numpy arrays straight through.
//
//   VecWorld vec(parse_world_file("models/worlds/anymal_stand.xml"), 256, /*threads*/ 2);
//   RowMatX q(256, vec.world(0).system(0).nq());
//   vec.integrate(10);          // 10 steps of every world
//   vec.get_q(0, q);            // system 0 of every world
//
// integrate() and the get/set calls allocate nothing.
#pragma once

#include <memory>
#include <vector>

#include "impulse/batch/world_lanes.hpp"
#include "impulse/core/thread_pool.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"

namespace impulse::batch {

using RowMatX = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatXref = Eigen::Ref<RowMatX>;
using RowMatXcref = Eigen::Ref<const RowMatX>;

class VecWorld {
 public:
  // num_worlds copies of `description` (build_world per copy, in parallel). num_threads as in
  // ThreadPool (0: one per hardware thread). Throws InvalidArgument for num_worlds < 1.
  VecWorld(const WorldDescription& description, Index num_worlds, int num_threads = 0);
  // The same from a world file (parsed once). Throws WorldFileError.
  static std::unique_ptr<VecWorld> from_file(const std::string& path, Index num_worlds, int num_threads = 0);
  // num_worlds copies of a World (World::clone: its objects, settings and state; the systems share
  // the prototype's Models). Throws InvalidArgument as clone() does.
  VecWorld(const World& prototype, Index num_worlds, int num_threads = 0);

  Index size() const { return static_cast<Index>(worlds_.size()); }
  int num_threads() const { return pool_.num_threads(); }
  World& world(Index i);
  ThreadPool& pool() { return pool_; }

  // Advances every world by `steps` steps. status (size N, optional) receives per world the
  // first non-Ok StepStatus of these steps (as int, 0 = Ok).
  void integrate(Index steps = 1);
  // The width of the SIMD lanes integrate() computes the worlds' dynamics in (WorldLanes,
  // groups of this many consecutive worlds; the same bits for every width): lanes_default_width()
  // at construction (the environment variable IMPULSE_LANES); 1 steps the worlds one by one.
  // set_lanes throws InvalidArgument for a width other than 1, 2, 4, 8 or one this CPU lacks.
  void set_lanes(int width);
  int lanes() const { return lanes_; }
  const std::vector<int>& status() const { return status_; }

  // State of system `s` of every world: rows are worlds. Sizes are checked (InvalidArgument).
  void get_q(Index s, RowMatXref out) const;
  void get_u(Index s, RowMatXref out) const;
  void set_state(Index s, const RowMatXcref& q, const RowMatXcref& u);
  // PD targets of system s: q_target (N x nq), u_target (N x nv).
  void set_pd_targets(Index s, const RowMatXcref& q_target, const RowMatXcref& u_target);
  void set_generalized_force(Index s, const RowMatXcref& tau);

  // Masked reset: every world i with mask[i] goes back to its initial state (World::reset: the
  // state at its first step or mark_initial_state, warm-start memory cleared) and then takes row
  // i of q (N x nq) and u (N x nv) as the state of system s. The other rows are not read. Every
  // masked row is checked before any world changes.
  void reset(const Eigen::Ref<const Eigen::Matrix<bool, Eigen::Dynamic, 1>>& mask, Index s, const RowMatXcref& q,
             const RowMatXcref& u);

  // Poses of frames (Model frame indices) of system s in every world: out (N x 7 F), per frame
  // [x y z qw qx qy qz] in the world frame. One kinematics pass per world, worlds in parallel.
  void get_frame_poses(Index s, const std::vector<Index>& frames, RowMatXref out) const;
  // Linear and angular velocity of the frames' origins in the world frame: out (N x 6 F), per
  // frame [vx vy vz wx wy wz].
  void get_frame_velocities(Index s, const std::vector<Index>& frames, RowMatXref out) const;
  // Contact force on bodies of system s in the last step (the contact impulses on the body / dt,
  // world frame): out (N x 3 B), per body [fx fy fz]; zero for a body without contact.
  void get_contact_forces(Index s, const std::vector<Index>& bodies, RowMatXref out) const;

  // Actuator torque of system s applied in the last step (ArticulatedSystem::applied_torque: the
  // explicit force plus the PD torque within the URDF effort limits): out (N x nv).
  void get_applied_torques(Index s, RowMatXref out) const;
  // Height scan: the static terrain's height (world z) under points around a frame of system s, or
  // NaN where a ray finds no terrain. pattern (P x 2): the points in the frame's yaw-aligned
  // horizontal frame (x forward, y left; roll and pitch ignored), as sensors.hpp's HeightScan;
  // rays go down from ray_start above the frame for at most max_distance. out (N x P). A pattern
  // of one point (0, 0) gives the terrain under the frame: its height over the terrain is the
  // frame's z minus that.
  void get_height_scan(Index s, Index frame, const RowMatXcref& pattern, RowMatXref out, Scalar ray_start = 1.0,
                       Scalar max_distance = 10.0) const;

  // Per-environment parameters (domain randomization), each checked before any world changes.
  // gravity (N x 3, m/s^2); friction (N): the default material pair's coefficient;
  // kp, kd (N x nv): the PD gains of system s.
  void set_gravity(const RowMatXcref& gravity);
  void set_friction(const VecXcref& friction);
  void set_pd_gains(Index s, const RowMatXcref& kp, const RowMatXcref& kd);
  // The friction coefficient (N) of the pair of materials a, b (names registered in the worlds);
  // the pair's restitution is kept.
  void set_material_friction(const std::string& a, const std::string& b, const VecXcref& friction);
  // Mass (N, kg) and centre of mass (N x 3, body frame, m) of one body of system s per world; its
  // rotational inertia about the centre of mass is kept (World::set_body_inertia). Added mass and
  // a centre-of-mass shift are the nominal values (world(i).system(s).model().inertia) plus the
  // draws. A world whose values are already its body's changes nothing.
  void set_body_mass(Index s, Index body, const VecXcref& mass, const RowMatXcref& com);
  // Joint damping and dry friction (N x nv, each finite and >= 0) of system s per world
  // (World::set_joint_damping, World::set_joint_friction). A world whose row equals its Model's
  // values changes nothing.
  void set_joint_damping(Index s, const RowMatXcref& damping);
  void set_joint_friction(Index s, const RowMatXcref& friction);
  // External wrenches (pushes) on bodies of system s for the next step: per world and body
  // [fx fy fz tx ty tz] in the world frame, the force acting at the body frame's origin
  // (ArticulatedSystem::set_external_force / set_external_torque; cleared after that step).
  // wrenches (N x 6 B). A body listed twice gets the sum.
  void set_external_wrenches(Index s, const std::vector<Index>& bodies, const RowMatXcref& wrenches);

  // One thread at a time (docs/threading.md): the calls above hold this marker and refuse with
  // ConcurrentUseError while another thread holds it.
  const UseMarker& use_marker() const { return use_; }

 private:
  void check_rows(const char* what, Index rows, Index cols, Index s, bool position) const;
  void set_joint_values(const char* what, Index s, const RowMatXcref& values, void (World::*set)(Index, const VecX&));
  void check_frames(const char* what, Index s, const std::vector<Index>& ids, bool bodies, Index rows, Index cols,
                    Index per) const;
  void reserve_lanes();

  ThreadPool pool_;
  std::vector<std::unique_ptr<World>> worlds_;
  std::vector<int> status_;
  int lanes_ = 1;
  std::vector<std::unique_ptr<StepWorkspace>> workspaces_;  // one per thread (step_workspace.hpp)
  std::vector<std::unique_ptr<WorldLanes>> world_lanes_;    // one per thread
  // per thread: the ray origins and distances of get_height_scan (grown on use)
  mutable std::vector<std::vector<Vec3>> ray_from_;
  mutable std::vector<std::vector<Scalar>> ray_t_;
  UseMarker use_;
};

}  // namespace impulse::batch
