// LocomotionTask (see the header for the observation, reward and termination definitions).
#include "impulse/tasks/locomotion.hpp"

#include <algorithm>
#include <cmath>

#include "impulse/batch/limits.hpp"
#include "impulse/core/error.hpp"
#include "impulse/io/urdf.hpp"

namespace impulse::tasks {

namespace {

constexpr const char* kJoints[LocomotionTask::kAct] = {"LF_HAA", "LF_HFE", "LF_KFE", "RF_HAA", "RF_HFE", "RF_KFE",
                                                       "LH_HAA", "LH_HFE", "LH_KFE", "RH_HAA", "RH_HFE", "RH_KFE"};
constexpr const char* kFeet[4] = {"LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"};
// standing pose: front legs HFE +0.4, KFE -0.8; hind legs mirrored (models/worlds/anymal_stand.xml)
constexpr Scalar kNominal[LocomotionTask::kAct] = {0, 0.4, -0.8, 0, 0.4, -0.8, 0, -0.4, 0.8, 0, -0.4, 0.8};

// splitmix64 (Steele et al. 2014): decorrelates the per-environment seeds
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// uniform in [lo, hi) from 53 random bits (portable, unlike std::uniform_real_distribution)
Scalar uniform(std::mt19937_64& rng, Scalar lo, Scalar hi) {
  return lo + (hi - lo) * static_cast<Scalar>(rng() >> 11) * 0x1.0p-53;
}

// rotation base -> world of a floating base's q = [x y z qw qx qy qz ...]
Mat3 base_rotation(const VecX& q) { return Quat(q[3], q[4], q[5], q[6]).toRotationMatrix(); }

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("LocomotionTask: " + what);
}

}  // namespace

struct LocomotionTask::Env {
  std::unique_ptr<World> world;
  ArticulatedSystem* robot = nullptr;
  std::mt19937_64 rng;
  Vec3 command = Vec3::Zero();
  Eigen::Matrix<Scalar, kAct, 1> action = Eigen::Matrix<Scalar, kAct, 1>::Zero();
  Eigen::Matrix<Scalar, kAct, 1> prev_action = Eigen::Matrix<Scalar, kAct, 1>::Zero();
  std::array<bool, 4> foot_contact{};
  std::array<Scalar, 4> air_time{};  // s since the foot left the ground (0 while in contact)
  bool base_contact = false;
  Index steps = 0;
  Scalar episode_return = 0;
  bool finished = false;            // terminated or truncated in the last step()
  Scalar final_priv[kPriv] = {};    // privileged observation of the last state, when finished
  VecX q_target, u_target, q0, u0;  // sized once
  Index index = 0;                  // global environment index (first_env + i)
};

LocomotionTask::LocomotionTask(const LocomotionSettings& s, Index num_envs, int num_threads, Index first_env)
    : settings_(s), pool_(num_threads) {
  require(num_envs >= 1, "num_envs must be >= 1, got " + std::to_string(num_envs));
  require(first_env >= 0, "first_env must be >= 0, got " + std::to_string(first_env));
  require(s.physics_dt > 0 && std::isfinite(s.physics_dt), "physics_dt must be > 0");
  require(s.substeps >= 1, "substeps must be >= 1");
  require(s.max_episode_steps >= 1, "max_episode_steps must be >= 1");
  require(s.kp >= 0 && s.kd >= 0, "kp and kd must be >= 0");
  require(s.action_scale > 0 && s.action_clip > 0, "action_scale and action_clip must be > 0");
  require(s.command_vx_min <= s.command_vx_max, "command_vx_min must be <= command_vx_max");
  require(s.command_vy_max >= 0 && s.command_yaw_max >= 0, "command ranges must be >= 0");
  require(std::isfinite(s.air_time_weight) && std::isfinite(s.air_time_target) && s.air_time_target >= 0,
          "air_time_weight must be finite and air_time_target >= 0");
  require(std::isfinite(s.orientation_weight) && std::isfinite(s.base_height_weight) &&
              std::isfinite(s.base_height_target),
          "orientation_weight, base_height_weight and base_height_target must be finite");

  // One immutable Model for every environment: its memory and its cache lines are shared, and
  // every World reads it each physics step.
  const std::shared_ptr<const Model> shared = std::make_shared<const Model>(load_urdf(s.urdf));
  const Model& model = *shared;
  require(model.floating_base, "the robot '" + model.name + "' must have a floating base");
  for (Index k = 0; k < kAct; ++k) {
    const Index j = model.find_joint(kJoints[k]);
    require(j >= 0, "joint '" + std::string(kJoints[k]) + "' not in " + s.urdf);
    joint_q_[static_cast<std::size_t>(k)] = model.idx_q[static_cast<std::size_t>(j)];
    joint_v_[static_cast<std::size_t>(k)] = model.idx_v[static_cast<std::size_t>(j)];
    nominal_[k] = kNominal[k];
  }
  for (int f = 0; f < 4; ++f) {
    const Index fr = model.find_frame(kFeet[f]);
    require(fr >= 0, "frame '" + std::string(kFeet[f]) + "' not in " + s.urdf);
    foot_body_[static_cast<std::size_t>(f)] = model.frames[static_cast<std::size_t>(fr)].body;
  }

  envs_.resize(1);
  for (int t = 0; t < pool_.num_threads(); ++t) workspaces_.push_back(std::make_unique<StepWorkspace>());
  const auto make_env = [&](Index i) {
    auto e = std::make_unique<Env>();
    e->index = first_env + i;
    e->world = std::make_unique<World>();
    World& w = *e->world;
    w.set_time_step(s.physics_dt);
    w.set_max_contacts(s.max_contacts);
    w.set_default_material(s.friction, 0);
    w.set_contact_solver(s.solver);
    w.add_ground();
    SystemOptions o;
    o.name = "anymal";
    e->robot = &w.add_articulated_system(shared, o);
    VecX kp = VecX::Zero(model.nv), kd = VecX::Zero(model.nv);
    for (Index k = 0; k < kAct; ++k) {
      kp[joint_v_[static_cast<std::size_t>(k)]] = s.kp;
      kd[joint_v_[static_cast<std::size_t>(k)]] = s.kd;
    }
    e->robot->set_pd_gains(kp, kd);
    e->q_target = model.neutral_configuration();
    for (Index k = 0; k < kAct; ++k) e->q_target[joint_q_[static_cast<std::size_t>(k)]] = nominal_[k];
    e->u_target = VecX::Zero(model.nv);
    e->robot->set_pd_targets(e->q_target, e->u_target);
    e->q0 = e->q_target;
    e->u0 = e->u_target;
    // The state every episode starts from before its random part (reset_env): gains, the
    // standing PD targets, no force, time 0, no warm-start memory.
    w.mark_initial_state();
    envs_[static_cast<std::size_t>(i)] = std::move(e);
  };
  batch::make_first_within_memory("LocomotionTask", num_envs, [&] { make_env(0); });
  envs_.resize(static_cast<std::size_t>(num_envs));
  pool_.parallel_for(num_envs - 1, [&](Index i) { make_env(i + 1); });
  // every thread's workspace: the one robot Model's Data (all environments share the Model)
  for (auto& ws : workspaces_) envs_.front()->world->reserve_workspace(*ws);
}

LocomotionTask::~LocomotionTask() = default;

World& LocomotionTask::world(Index i) {
  use_.check("LocomotionTask", "world");
  require(i >= 0 && i < num_envs(), "environment index " + std::to_string(i) + " out of range");
  return *envs_[static_cast<std::size_t>(i)]->world;
}

Vec3 LocomotionTask::command(Index i) const {
  use_.check("LocomotionTask", "command");
  require(i >= 0 && i < num_envs(), "environment index " + std::to_string(i) + " out of range");
  return envs_[static_cast<std::size_t>(i)]->command;
}

void LocomotionTask::reset_env(Env& e) {
  const LocomotionSettings& s = settings_;
  // random heading, joints around the standing pose, small base velocities
  const Scalar yaw = uniform(e.rng, -M_PI, M_PI);
  e.q0[0] = 0;
  e.q0[1] = 0;
  e.q0[2] = s.init_height;
  e.q0[3] = std::cos(yaw / 2);
  e.q0[4] = 0;
  e.q0[5] = 0;
  e.q0[6] = std::sin(yaw / 2);
  for (Index k = 0; k < kAct; ++k)
    e.q0[joint_q_[static_cast<std::size_t>(k)]] = nominal_[k] + uniform(e.rng, -s.init_joint_noise, s.init_joint_noise);
  e.u0.setZero();
  for (int k = 0; k < 6; ++k) e.u0[k] = uniform(e.rng, -s.init_velocity_noise, s.init_velocity_noise);
  e.command = Vec3(uniform(e.rng, s.command_vx_min, s.command_vx_max),
                   uniform(e.rng, -s.command_vy_max, s.command_vy_max),
                   uniform(e.rng, -s.command_yaw_max, s.command_yaw_max));
  // World::reset restores the initial state marked in the constructor (PD targets at the standing
  // pose, no pending force, time 0) and clears the solver's warm-start memory and the warnings, so
  // an episode does not depend on the one before it; then the random q0, u0.
  e.world->reset();
  e.robot->set_state(e.q0, e.u0);
  e.q_target = e.robot->q_target();
  e.action.setZero();
  e.prev_action.setZero();
  e.foot_contact.fill(false);
  e.air_time.fill(0);
  e.base_contact = false;
  e.steps = 0;
  e.episode_return = 0;
}

void LocomotionTask::observe(const Env& e, Eigen::Ref<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>> o) const {
  const VecX& q = e.robot->q();
  const VecX& u = e.robot->u();
  const Mat3 R = base_rotation(q);
  const Vec3 g = R.transpose() * Vec3(0, 0, -1);
  const Vec3 w = R.transpose() * u.segment<3>(3);
  o.segment<3>(0) = g.transpose();
  o.segment<3>(3) = 0.25 * w.transpose();
  for (Index k = 0; k < kAct; ++k) {
    o[6 + k] = q[joint_q_[static_cast<std::size_t>(k)]] - nominal_[k];
    o[18 + k] = 0.05 * u[joint_v_[static_cast<std::size_t>(k)]];
    o[30 + k] = e.action[k];
  }
  o[42] = 2 * e.command[0];
  o[43] = 2 * e.command[1];
  o[44] = 0.25 * e.command[2];
  for (int f = 0; f < 4; ++f) o[45 + f] = e.foot_contact[static_cast<std::size_t>(f)] ? 1 : 0;
}

void LocomotionTask::observe_privileged(const Env& e, Scalar* o) {
  const VecX& q = e.robot->q();
  const VecX& u = e.robot->u();
  const Mat3 R = base_rotation(q);
  const Vec3 v = R.transpose() * u.segment<3>(0);
  for (int k = 0; k < 3; ++k) o[k] = 2 * v[k];
  o[3] = q[2];
  for (std::size_t f = 0; f < 4; ++f) o[4 + f] = e.air_time[f];
}

void LocomotionTask::privileged(RowMatXref out, RowMatXref final_out) const {
  const UseMarker::Scope in_use(use_, "LocomotionTask", "privileged");
  const Index n = num_envs();
  if (out.rows() != n || out.cols() != kPriv || final_out.rows() != n || final_out.cols() != kPriv)
    throw InvalidArgument("LocomotionTask::privileged: out and final_out must have shape (" + std::to_string(n) +
                          ", " + std::to_string(kPriv) + ")");
  for (Index i = 0; i < n; ++i) {
    const Env& e = *envs_[static_cast<std::size_t>(i)];
    observe_privileged(e, out.row(i).data());
    if (e.finished)
      for (Index k = 0; k < kPriv; ++k) final_out(i, k) = e.final_priv[k];
  }
}

void LocomotionTask::reset(std::uint64_t seed, RowMatXref obs) {
  const UseMarker::Scope in_use(use_, "LocomotionTask", "reset");
  if (obs.rows() != num_envs() || obs.cols() != kObs)
    throw InvalidArgument("LocomotionTask::reset: obs must have shape (" + std::to_string(num_envs()) + ", 49), got (" +
                          std::to_string(obs.rows()) + ", " + std::to_string(obs.cols()) + ")");
  seed_ = seed;
  pool_.parallel_for(num_envs(), [&](Index i) {
    Env& e = *envs_[static_cast<std::size_t>(i)];
    e.rng.seed(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(e.index))));
    e.finished = false;
    reset_env(e);
    observe(e, obs.row(i));
  });
}

void LocomotionTask::step(const RowMatXcref& actions, RowMatXref obs, VecXref reward, Eigen::Ref<BoolVec> terminated,
                          Eigen::Ref<BoolVec> truncated, RowMatXref final_obs, VecXref episode_return,
                          VecXref episode_length) {
  const UseMarker::Scope in_use(use_, "LocomotionTask", "step");
  const Index n = num_envs();
  if (actions.rows() != n || actions.cols() != kAct)
    throw InvalidArgument("LocomotionTask::step: actions must have shape (" + std::to_string(n) + ", 12), got (" +
                          std::to_string(actions.rows()) + ", " + std::to_string(actions.cols()) + ")");
  if (!actions.allFinite()) throw InvalidArgument("LocomotionTask::step: actions must be finite");
  if (obs.rows() != n || obs.cols() != kObs || final_obs.rows() != n || final_obs.cols() != kObs)
    throw InvalidArgument("LocomotionTask::step: obs and final_obs must have shape (" + std::to_string(n) + ", 49)");
  if (reward.size() != n || terminated.size() != n || truncated.size() != n || episode_return.size() != n ||
      episode_length.size() != n)
    throw InvalidArgument("LocomotionTask::step: reward, terminated, truncated, episode_return and episode_length "
                          "must have size " + std::to_string(n));

  const LocomotionSettings& s = settings_;
  const Scalar dt_c = control_dt();
  pool_.parallel_for(n, [&](Index i) {
    Env& e = *envs_[static_cast<std::size_t>(i)];
    ArticulatedSystem& robot = *e.robot;
    // action -> PD targets
    e.prev_action = e.action;
    for (Index k = 0; k < kAct; ++k) {
      const Scalar a = std::min(s.action_clip, std::max(-s.action_clip, actions(i, k)));
      e.action[k] = a;
      e.q_target[joint_q_[static_cast<std::size_t>(k)]] = nominal_[k] + s.action_scale * a;
    }
    robot.set_pd_targets(e.q_target, e.u_target);
    // physics
    bool failed = false;
    StepWorkspace& ws = *workspaces_[static_cast<std::size_t>(ThreadPool::thread_index())];  // this thread's
    for (Index k = 0; k < s.substeps; ++k) {
      const StepStatus st = e.world->integrate(ws);
      failed = failed || st == StepStatus::NonFinite || st == StepStatus::SolverFailed;
    }
    // contacts of the last physics step that carried an impulse: feet and base (the contact set
    // also holds pairs within the collision margin, which a swinging foot skims without touching)
    e.foot_contact.fill(false);
    e.base_contact = false;
    for (const BodyContactImpulse& c : robot.contact_impulses()) {
      if (!c.touching()) continue;
      if (c.body == 0) e.base_contact = true;
      for (int f = 0; f < 4; ++f)
        if (c.body == foot_body_[static_cast<std::size_t>(f)]) e.foot_contact[static_cast<std::size_t>(f)] = true;
    }
    // reward (see the header)
    const VecX& q = robot.q();
    const VecX& u = robot.u();
    const Mat3 R = base_rotation(q);
    const Vec3 v = R.transpose() * u.segment<3>(0);
    const Vec3 w = R.transpose() * u.segment<3>(3);
    const Vec3 g = R.transpose() * Vec3(0, 0, -1);
    Scalar tau2 = 0;  // the actuator torque the engine applied (PD within the URDF effort limits)
    const VecX& tau = robot.applied_torque();
    for (Index k = 0; k < kAct; ++k) {
      const Scalar t = tau[joint_v_[static_cast<std::size_t>(k)]];
      tau2 += t * t;
    }
    const Scalar lin_err = (e.command.head<2>() - v.head<2>()).squaredNorm();
    const Scalar yaw_err = (e.command[2] - w[2]) * (e.command[2] - w[2]);
    // swing time of each foot, rewarded when it lands (legged_gym's feet_air_time)
    Scalar air = 0;
    for (std::size_t f = 0; f < 4; ++f) {
      const bool landed = e.foot_contact[f] && e.air_time[f] > 0;  // in the air at the last step
      e.air_time[f] += dt_c;
      if (landed) air += e.air_time[f] - s.air_time_target;
      if (e.foot_contact[f]) e.air_time[f] = 0;
    }
    if (e.command.head<2>().norm() < 0.1) air = 0;  // standing still is not a reason to step
    Scalar r = 1.0 * std::exp(-lin_err / 0.25) + 0.5 * std::exp(-yaw_err / 0.25) - 2.0 * v[2] * v[2] -
               0.05 * w.head<2>().squaredNorm() - s.orientation_weight * g.head<2>().squaredNorm() - 1e-5 * tau2 -
               0.01 * (e.action - e.prev_action).squaredNorm() + s.air_time_weight * air -
               s.base_height_weight * (q[2] - s.base_height_target) * (q[2] - s.base_height_target);
    if (s.only_positive_rewards) r = std::max(r, Scalar(0));
    reward[i] = std::isfinite(r) ? r * dt_c : 0;
    e.episode_return += reward[i];
    ++e.steps;
    // termination and truncation
    const bool term = failed || !q.allFinite() || q[2] < s.min_base_height || -g[2] < s.min_uprightness ||
                      e.base_contact;
    const bool trunc = !term && e.steps >= s.max_episode_steps;
    terminated[i] = term;
    truncated[i] = trunc;
    e.finished = term || trunc;
    if (e.finished) {
      observe(e, final_obs.row(i));
      observe_privileged(e, e.final_priv);
      episode_return[i] = e.episode_return;
      episode_length[i] = static_cast<Scalar>(e.steps);
      reset_env(e);
    }
    observe(e, obs.row(i));
  }, [&](Index next) {
    // the thread's next environment: its memory arrives while this one steps (World::prefetch;
    // its Data are this thread's workspace's, already in the cache)
    envs_[static_cast<std::size_t>(next)]->world->prefetch(workspaces_[static_cast<std::size_t>(ThreadPool::thread_index())].get());
  });
}

}  // namespace impulse::tasks
