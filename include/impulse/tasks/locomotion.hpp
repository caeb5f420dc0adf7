// LocomotionTask: N ANYmal velocity-tracking environments stepped in parallel (module tasks/, above
// the engine library: it uses batch/ and world/, which know nothing of it).
// The C++ core of impulse.envs.AnymalLocomotion; it follows Gymnasium's vector-env conventions
// (auto reset, terminated vs truncated, the final observation of a finished episode) and writes
// every result into caller-provided contiguous arrays, so one call steps all environments with
// no per-environment loop and no allocation.
//
// One control step (control_dt = substeps * physics_dt, 100 Hz by default over a 2 ms physics
// step): the action a (12, clipped to +-action_clip) sets the implicit joint PD targets
// q* = q_nominal + action_scale a; the world steps `substeps` times; then the observation,
// reward and termination are computed, and a finished environment is reset at once.
//
// Observation (49, what the robot's own sensors give: no base position or linear velocity):
//   [0, 3)   gravity direction in the base frame (IMU orientation)
//   [3, 6)   base angular velocity in the base frame (IMU gyro) * 0.25
//   [6, 18)  joint positions - nominal (encoders)
//   [18, 30) joint velocities * 0.05
//   [30, 42) previous action
//   [42, 45) command: forward and lateral velocity (m/s) * 2, yaw rate (rad/s) * 0.25, base frame
//   [45, 49) foot contact flags LF RF LH RH (a contact impulse on the foot in the last physics
//            step; a foot within the collision margin but not touching is not in contact)
// Reward (per control step, times control_dt; weights after Rudin et al. 2022, legged_gym):
//   1.0 exp(-|v_cmd,xy - v_xy|^2 / 0.25) + 0.5 exp(-(w_cmd,z - w_z)^2 / 0.25)
//   - 2 v_z^2 - 0.05 |w_xy|^2 - orientation_weight |g_xy|^2 - 1e-5 |tau|^2 - 0.01 |a - a_prev|^2
//   - base_height_weight (h - base_height_target)^2
//   + air_time_weight sum_feet (t_air - air_time_target) [the foot lands this control step]
// clipped at 0 when only_positive_rewards (legged_gym's default: a negative sum would make ending
// the episode early, by falling, the best a young policy can do).
// The last term (legged_gym's feet_air_time, only while a velocity is commanded) rewards steps
// longer than air_time_target seconds and penalizes shuffling: without it PPO finds a crawl or
// a shuffle that slides the feet before it finds a gait.
// with v, w the base velocities in the base frame, g the gravity direction in the base frame and
// tau the joint torque the engine applied in the last physics step (ArticulatedSystem::
// applied_torque: the PD torque at the end of the step within the URDF effort limits).
// Privileged observation (kPriv, for an asymmetric actor-critic: the critic may see what the
// robot's sensors do not): base linear velocity in the base frame * 2 (3), base height (1), the
// swing time of each foot LF RF LH RH in s (4). privileged() gives it for the current state and
// for the last state of the environments that finished in the last step().
// Reset: World::reset() to the state marked at construction (standing PD targets, time 0, no
// warm-start memory), then a random base heading and velocity and joint positions.
// Terminated: base below min_base_height, tilted by more than acos(min_uprightness), base touching
// the ground (a contact impulse on it), or a non-finite step. Truncated: max_episode_steps control steps.
//
// Randomness: each environment has its own generator seeded from (seed, first_env + i), so
// environment k gets the same initial states and commands whatever the number of threads and
// however the environments are split over processes (MPI ranks pass first_env).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "impulse/batch/thread_pool.hpp"
#include "impulse/batch/vec_world.hpp"
#include "impulse/world/world.hpp"

namespace impulse::tasks {

using batch::RowMatX;
using batch::RowMatXcref;
using batch::RowMatXref;
using batch::ThreadPool;

struct LocomotionSettings {
  std::string urdf;                  // the ANYmal URDF (required)
  Scalar physics_dt = 0.002;         // s
  Index substeps = 5;                // physics steps per control step (control_dt = 10 ms)
  std::string solver = "bisection";
  Index max_contacts = 16;
  Scalar friction = 0.8;
  Scalar kp = 80, kd = 2;            // joint PD (N m/rad, N m s/rad)
  Scalar action_scale = 0.3;         // rad per unit of action
  Scalar action_clip = 4;
  Index max_episode_steps = 1000;    // control steps (10 s)
  Scalar command_vx_min = 0.5, command_vx_max = 1.0;  // m/s, forward
  Scalar command_vy_max = 0;         // m/s, lateral: uniform in [-max, max]
  Scalar command_yaw_max = 0;        // rad/s
  Scalar init_joint_noise = 0.1;     // rad, uniform +-
  Scalar init_velocity_noise = 0.1;  // m/s and rad/s on the base, uniform +-
  Scalar init_height = 0.56;         // m, base height at reset
  Scalar min_base_height = 0.3;      // m
  Scalar min_uprightness = 0.5;      // cos of the largest tilt
  Scalar air_time_weight = 1.0;      // reward per second of a foot's swing beyond air_time_target
  Scalar air_time_target = 0.5;      // s
  Scalar orientation_weight = 5.0;   // penalty on the base tilt |g_xy|^2 (legged_gym's flat ANYmal)
  // penalty on the base height h (m) away from the standing height (0.50-0.52 m under zero
  // action): without it the policy learns to walk crouched, a hand's width above min_base_height
  Scalar base_height_weight = 20.0, base_height_target = 0.5;
  bool only_positive_rewards = true; // clip each control step's reward at 0 (legged_gym)
};

class LocomotionTask {
 public:
  static constexpr Index kObs = 49;
  static constexpr Index kAct = 12;
  static constexpr Index kPriv = 8;
  using BoolVec = Eigen::Matrix<bool, Eigen::Dynamic, 1>;

  // Throws InvalidArgument for bad settings, ModelError for a bad URDF.
  LocomotionTask(const LocomotionSettings& settings, Index num_envs, int num_threads = 0, Index first_env = 0);
  ~LocomotionTask();

  Index num_envs() const { return static_cast<Index>(envs_.size()); }
  int num_threads() const { return pool_.num_threads(); }
  const LocomotionSettings& settings() const { return settings_; }
  Scalar control_dt() const { return settings_.physics_dt * static_cast<Scalar>(settings_.substeps); }

  // Reseeds every environment from `seed`, resets them and writes the observations (N x kObs).
  void reset(std::uint64_t seed, RowMatXref obs);

  // One control step of every environment. actions (N x kAct) in; obs (N x kObs), reward,
  // terminated, truncated (N) out; for the environments that finished (terminated or truncated)
  // final_obs receives their last observation, episode_return and episode_length the sums of
  // their episode, and obs already holds the first observation of the next episode.
  void step(const RowMatXcref& actions, RowMatXref obs, VecXref reward, Eigen::Ref<BoolVec> terminated,
            Eigen::Ref<BoolVec> truncated, RowMatXref final_obs, VecXref episode_return, VecXref episode_length);

  // Privileged observation (N x kPriv, see above) of the current state into `out`, and into
  // `final_out` for the environments that finished in the last step() (their last state before
  // the reset; the other rows of final_out are left as they are).
  void privileged(RowMatXref out, RowMatXref final_out) const;

  // Inspection: the World of environment i, its command (vx, vy, yaw rate).
  World& world(Index i);
  Vec3 command(Index i) const;

  // One thread at a time (docs/threading.md): reset, step and privileged hold this marker and
  // refuse with ConcurrentUseError while another thread holds it.
  const UseMarker& use_marker() const { return use_; }

 private:
  struct Env;
  void reset_env(Env& e);
  void observe(const Env& e, Eigen::Ref<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>> obs) const;
  static void observe_privileged(const Env& e, Scalar* out);

  LocomotionSettings settings_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<Env>> envs_;
  std::vector<std::unique_ptr<StepWorkspace>> workspaces_;  // one per thread (step_workspace.hpp)
  std::array<Index, kAct> joint_q_{}, joint_v_{};  // q and u index of action k's joint
  std::array<Index, 4> foot_body_{};
  Eigen::Matrix<Scalar, kAct, 1> nominal_;
  std::uint64_t seed_ = 0;
  UseMarker use_;
};

}  // namespace impulse::tasks
