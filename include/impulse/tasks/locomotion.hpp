// LocomotionTask: N legged robots tracking a commanded base velocity, stepped in parallel (module
// tasks/, above the engine library: it uses batch/ and world/, which know nothing of it). Any
// floating-base robot with a URDF: the robot, its actuated joints, its feet, its standing pose,
// gains, reward weights, terrain and randomization come from LocomotionSettings, usually read from
// a JSON config (parse_locomotion_config; docs/bring_your_own_robot.md lists every key).
// The C++ core of impulse.envs.Locomotion; it follows Gymnasium's vector-env conventions (auto
// reset, terminated vs truncated, the final observation of a finished episode) and writes every
// result into caller-provided contiguous arrays, so one call steps all environments with no
// per-environment loop and no allocation.
//
// With J = joints.size() and F = feet.size():
// One control step (control_dt = substeps * physics_dt): the action a (J, clipped to
// +-action_clip) sets the implicit joint PD targets q* = nominal + action_scale a; the world steps
// `substeps` times; then the observation, reward and termination are computed, and a finished
// environment is reset at once.
//
// Observation (9 + 3 J + F, what the robot's own sensors give: no base position or linear velocity):
//   [0, 3)            gravity direction in the base frame (IMU orientation)
//   [3, 6)            base angular velocity in the base frame (IMU gyro) * 0.25
//   [6, 6+J)          joint positions - nominal (encoders)
//   [6+J, 6+2J)       joint velocities * 0.05
//   [6+2J, 6+3J)      previous action
//   [6+3J, 9+3J)      command: forward and lateral velocity (m/s) * 2, yaw rate (rad/s) * 0.25, base frame
//   [9+3J, 9+3J+F)    foot contact flags in `feet` order (a contact impulse on the foot's body in the
//                     last physics step; a foot within the collision margin but not touching is not
//                     in contact)
// Reward (per control step, times control_dt; terms after Rudin et al. 2022, legged_gym, each with
// its weight in LocomotionRewards; negative weights penalize):
//   tracking_lin_vel exp(-|v_cmd,xy - v_xy|^2 / sigma) + tracking_ang_vel exp(-(w_cmd,z - w_z)^2 / sigma)
//   + lin_vel_z v_z^2 + ang_vel_xy |w_xy|^2 + orientation |g_xy|^2 + torques |tau|^2
//   + action_rate |a - a_prev|^2 + base_height (h - base_height_target)^2
//   + feet_air_time sum_feet (t_air - air_time_target) [the foot lands this control step]
//   + collision (number of penalize_contacts bodies touching)
// clipped at 0 when only_positive (legged_gym's default: a negative sum would make ending the
// episode early, by falling, the best a young policy can do).
// The air-time term (legged_gym's feet_air_time, only while a velocity is commanded) rewards steps
// longer than air_time_target seconds and penalizes shuffling: without it PPO finds a crawl or
// a shuffle that slides the feet before it finds a gait.
// v, w are the base velocities in the base frame, g the gravity direction in the base frame, h the
// base height above the terrain under it, and tau the joint torque the engine applied in the last
// physics step (ArticulatedSystem::applied_torque: the PD torque at the end of the step within the
// URDF effort limits).
// Privileged observation (4 + F + R, for an asymmetric actor-critic: the critic may see what the
// robot's sensors do not): base linear velocity in the base frame * 2 (3), base height above the
// terrain (1), the swing time of each foot in s (F), then the environment's randomized parameters
// (R, see LocomotionRandomization::privileged). privileged() gives it for the current state and
// for the last state of the environments that finished in the last step().
// Reset: World::reset() to the state marked at construction (standing PD targets, time 0, no
// warm-start memory), then a random base heading and velocity and joint positions, the base at
// base_height above the terrain, and the environment's randomized parameters drawn anew.
// Terminated: base below min_base_height above the terrain, tilted by more than
// acos(min_uprightness), one of terminate_contacts touching (the base by default), or a
// non-finite step. Truncated: max_episode_steps control steps.
//
// Randomness: each environment has its own generator seeded from (seed, first_env + i), so
// environment k gets the same initial states, commands and parameters whatever the number of
// threads and however the environments are split over processes (MPI ranks pass first_env).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "impulse/core/thread_pool.hpp"
#include "impulse/batch/vec_world.hpp"
#include "impulse/collision/heightfield.hpp"
#include "impulse/world/world.hpp"

namespace impulse::tasks {

using batch::RowMatX;
using batch::RowMatXcref;
using batch::RowMatXref;
using batch::ThreadPool;

// A closed interval [lo, hi] to draw uniformly from; lo == hi is a constant.
struct Range {
  Scalar lo = 0, hi = 0;
  bool varies() const { return lo != hi; }
};

// Reward weights (see the header comment); 0 switches a term off.
struct LocomotionRewards {
  Scalar tracking_lin_vel = 1.0;
  Scalar tracking_ang_vel = 0.5;
  Scalar tracking_sigma = 0.25;      // (m/s)^2 and (rad/s)^2
  Scalar lin_vel_z = -2.0;
  Scalar ang_vel_xy = -0.05;
  Scalar orientation = -5.0;         // legged_gym's flat ANYmal
  Scalar torques = -1e-5;
  Scalar action_rate = -0.01;
  // without it the policy learns to walk crouched, a hand's width above min_base_height
  Scalar base_height = -20.0;
  // m above the terrain; NaN: the height the robot stands at under zero action (measured at
  // construction: 1 s from the nominal pose on flat ground)
  Scalar base_height_target = std::numeric_limits<Scalar>::quiet_NaN();
  Scalar feet_air_time = 1.0;        // per second of a foot's swing beyond air_time_target
  Scalar air_time_target = 0.5;      // s
  Scalar collision = 0;              // per penalize_contacts body touching
  bool only_positive = true;         // clip each control step's reward at 0 (legged_gym)
};

// Terrain shared by every environment: flat ground, or one heightfield of `rows` strips along x,
// each row_length long and `width` wide, rough ground whose amplitude grows linearly from 0
// (row 0) to max_amplitude (the last row). An environment starts each episode at the centre of
// its row; with curriculum, it moves one row up after an episode in which it walked more than
// half the row's length, and one row down after one in which it walked less than half the
// distance its command asked for (Rudin et al. 2022's game-inspired curriculum); without, its row
// is drawn at random each episode.
struct LocomotionTerrain {
  std::string type = "flat";         // "flat" or "rough"
  Index rows = 10;
  Scalar row_length = 8, width = 8;  // m
  Scalar max_amplitude = 0.1;        // m, height span of the roughest row
  Scalar cell = 0.1;                 // m, heightfield grid spacing
  bool curriculum = true;
  Index max_start_row = 0;           // first episode: a row drawn in [0, max_start_row]
  bool rough() const { return type == "rough"; }
};

// Domain randomization, per environment. Ranges equal at both ends (the default) are constants
// and draw nothing. friction, kp_scale, kd_scale, motor_strength, joint_damping and
// joint_friction are drawn at each reset (the joint ones give the environment a copy of the
// robot's Model with those values: World::set_joint_damping);
// added_mass and com_shift once, when the environment is made (they change its Model: the
// environments then share nothing of the robot's description but its topology). Pushes set the
// base's horizontal velocity to a random one of at most push_velocity every push_interval seconds
// (legged_gym's push_robots).
struct LocomotionRandomization {
  Range friction{0.8, 0.8};          // ground friction coefficient (set per environment)
  Range kp_scale{1, 1}, kd_scale{1, 1};
  Range motor_strength{1, 1};        // scales kp and kd together: the PD torque
  Range added_mass{0, 0};            // kg, added to the base
  Range com_shift{0, 0};             // m, each axis of the base's centre of mass, independently
  // added to the URDF's <dynamics> of every action joint, one draw for all of them
  Range joint_damping{0, 0};         // N m s/rad (N s/m for prismatic joints)
  Range joint_friction{0, 0};        // N m (N): dry friction
  Scalar push_interval = 0;          // s, 0: no pushes
  Scalar push_velocity = 0;          // m/s
  // the number of randomized parameters in the privileged observation: friction, kp_scale,
  // kd_scale, motor_strength, added_mass, com_shift (3), joint_damping and joint_friction when
  // they vary
  Index privileged() const;
};

struct LocomotionSettings {
  // the robot
  std::string urdf;                        // path (relative: to the config file) or package:// URI
  std::vector<std::string> package_path;   // searched first for package:// URIs
  // how the URDF's collision meshes collide (UrdfOptions::mesh_collision): their convex hulls
  // (the default: a mesh robot steps about 10x faster) or their triangles
  MeshCollision mesh_collision = MeshCollision::ConvexHull;
  std::vector<std::string> joints;         // actuated joints, in action order
  std::vector<std::string> feet;           // frame or link names
  std::vector<Scalar> nominal;             // standing pose, joints order (rad or m)
  Scalar base_height = 0.5;                // m, base above the terrain at reset
  std::vector<Scalar> kp{80}, kd{2};       // joint PD: one value for all joints or one per joint
  Scalar action_scale = 0.3;               // rad per unit of action
  Scalar action_clip = 4;
  std::vector<std::string> terminate_contacts;  // bodies whose contact ends an episode (empty: the base)
  std::vector<std::string> penalize_contacts;   // bodies counted by the collision reward
  // the simulation
  Scalar physics_dt = 0.002;               // s
  Index substeps = 5;                      // physics steps per control step (control_dt = 10 ms)
  std::string solver = "bisection";
  Index max_contacts = 16;
  Scalar friction = 0.8;                   // ground friction (without friction randomization)
  // the episode
  Index max_episode_steps = 1000;          // control steps (10 s)
  Range command_vx{0.5, 1.0};              // m/s, forward, uniform
  Range command_vy{0, 0};                  // m/s, lateral
  Range command_yaw{0, 0};                 // rad/s
  Scalar init_joint_noise = 0.1;           // rad, uniform +-
  Scalar init_velocity_noise = 0.1;        // m/s and rad/s on the base, uniform +-
  Scalar min_base_height = 0.3;            // m above the terrain
  Scalar min_uprightness = 0.5;            // cos of the largest tilt
  LocomotionRewards rewards;
  LocomotionTerrain terrain;
  LocomotionRandomization randomization;
};

// A config as JSON text (an object whose keys are LocomotionSettings' fields; "rewards",
// "terrain" and "randomization" are objects of theirs; ranges are [lo, hi]; kp and kd a number or
// one per joint). Relative paths (urdf, package_path) resolve against base_dir. `source` names
// the config in errors. Throws InvalidArgument naming the key for unknown keys, wrong types and
// missing required keys (urdf, joints, feet, nominal, base_height).
LocomotionSettings parse_locomotion_config(const std::string& json_text, const std::string& base_dir,
                                           const std::string& source = "locomotion config");
// The same from a file (relative paths against its directory). Throws InvalidArgument.
LocomotionSettings load_locomotion_config(const std::string& path);
// The keys a config may have, for the docs and the Python stubs: "key", "rewards.key", ...
std::vector<std::string> locomotion_config_keys();

class LocomotionTask {
 public:
  using BoolVec = Eigen::Matrix<bool, Eigen::Dynamic, 1>;

  // Throws InvalidArgument for bad settings (naming the setting, joint or frame), ModelError for
  // a bad URDF.
  LocomotionTask(const LocomotionSettings& settings, Index num_envs, int num_threads = 0, Index first_env = 0);
  ~LocomotionTask();

  Index num_envs() const { return static_cast<Index>(envs_.size()); }
  int num_threads() const { return pool_.num_threads(); }
  const LocomotionSettings& settings() const { return settings_; }
  Scalar control_dt() const { return settings_.physics_dt * static_cast<Scalar>(settings_.substeps); }
  Index obs_size() const { return 9 + 3 * num_joints() + num_feet(); }
  Index action_size() const { return num_joints(); }
  Index privileged_size() const { return 4 + num_feet() + settings_.randomization.privileged(); }
  Index num_joints() const { return static_cast<Index>(joint_q_.size()); }
  Index num_feet() const { return static_cast<Index>(foot_body_.size()); }
  // The standing height above the terrain the base-height reward aims at (m).
  Scalar base_height_target() const { return base_height_target_; }

  // Reseeds every environment from `seed`, resets them and writes the observations (N x obs_size).
  void reset(std::uint64_t seed, RowMatXref obs);

  // One control step of every environment. actions (N x action_size) in; obs (N x obs_size),
  // reward, terminated, truncated (N) out; for the environments that finished (terminated or
  // truncated) final_obs receives their last observation, episode_return and episode_length the
  // sums of their episode, and obs already holds the first observation of the next episode.
  void step(const RowMatXcref& actions, RowMatXref obs, VecXref reward, Eigen::Ref<BoolVec> terminated,
            Eigen::Ref<BoolVec> truncated, RowMatXref final_obs, VecXref episode_return, VecXref episode_length);

  // The width of the SIMD lanes step() computes the environments' dynamics in (batch::WorldLanes:
  // groups of this many consecutive environments; the same bits for every width):
  // lanes_default_width() at construction (IMPULSE_LANES); 1 steps them one by one. set_lanes
  // throws InvalidArgument for a width other than 1, 2, 4, 8 or one this CPU lacks.
  void set_lanes(int width);
  int lanes() const { return lanes_; }

  // Privileged observation (N x privileged_size, see above) of the current state into `out`, and
  // into `final_out` for the environments that finished in the last step() (their last state
  // before the reset; the other rows of final_out are left as they are).
  void privileged(RowMatXref out, RowMatXref final_out) const;

  // Inspection: the World of environment i, its command (vx, vy, yaw rate), its terrain row.
  World& world(Index i);
  Vec3 command(Index i) const;
  Index terrain_row(Index i) const;

  // One thread at a time (docs/threading.md): reset, step and privileged hold this marker and
  // refuse with ConcurrentUseError while another thread holds it.
  const UseMarker& use_marker() const { return use_; }

 private:
  struct Env;
  void reset_env(Env& e, bool first);
  void observe(const Env& e, Scalar* obs) const;
  void observe_privileged(const Env& e, Scalar* out) const;
  Scalar terrain_height(Scalar x, Scalar y) const;
  Scalar measure_standing_height(const std::shared_ptr<const Model>& model) const;
  void reserve_lanes();

  LocomotionSettings settings_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<Env>> envs_;
  std::vector<std::unique_ptr<StepWorkspace>> workspaces_;  // one per thread (step_workspace.hpp)
  std::vector<std::unique_ptr<batch::WorldLanes>> world_lanes_;  // one per thread
  int lanes_ = 1;
  std::vector<Index> joint_q_, joint_v_;  // q and u index of action k's joint
  std::vector<Index> foot_body_;
  std::vector<Index> terminate_body_, penalize_body_;
  VecX nominal_, kp_, kd_;                // per action joint
  VecX urdf_damping_, urdf_friction_;     // the URDF's <dynamics> (layout of u)
  std::shared_ptr<const Heightfield> terrain_;
  Scalar base_height_target_ = 0;
  std::uint64_t seed_ = 0;
  UseMarker use_;
};

}  // namespace impulse::tasks
