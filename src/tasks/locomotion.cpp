// LocomotionTask (see the header for the observation, reward and termination definitions).
#include "impulse/tasks/locomotion.hpp"

#include <algorithm>
#include <cmath>

#include "impulse/batch/limits.hpp"
#include "impulse/core/error.hpp"
#include "impulse/io/urdf.hpp"

namespace impulse::tasks {

namespace {

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
// a range's value: its constant without a draw, so that a constant range changes no random stream
Scalar draw(std::mt19937_64& rng, const Range& r) { return r.varies() ? uniform(rng, r.lo, r.hi) : r.lo; }

// rotation base -> world of a floating base's q = [x y z qw qx qy qz ...]
Mat3 base_rotation(const VecX& q) { return Quat(q[3], q[4], q[5], q[6]).toRotationMatrix(); }

void require(bool ok, const std::string& what) {
  if (!ok) throw InvalidArgument("LocomotionTask: " + what);
}

bool finite_range(const Range& r) { return std::isfinite(r.lo) && std::isfinite(r.hi) && r.lo <= r.hi; }

// the body of a foot or contact name: a frame (URDF links merged into their body are frames) or a body
Index body_of(const Model& m, const std::string& name, const std::string& urdf, const char* key) {
  const Index fr = m.find_frame(name);
  if (fr >= 0) return m.frames[static_cast<std::size_t>(fr)].body;
  const Index b = m.find_body(name);
  require(b >= 0, std::string(key) + ": no frame or link '" + name + "' in " + urdf);
  return b;
}

}  // namespace

Index LocomotionRandomization::privileged() const {
  return (friction.varies() ? 1 : 0) + (kp_scale.varies() ? 1 : 0) + (kd_scale.varies() ? 1 : 0) +
         (motor_strength.varies() ? 1 : 0) + (added_mass.varies() ? 1 : 0) + (com_shift.varies() ? 3 : 0) +
         (joint_damping.varies() ? 1 : 0) + (joint_friction.varies() ? 1 : 0);
}

struct LocomotionTask::Env {
  std::unique_ptr<World> world;
  ArticulatedSystem* robot = nullptr;
  std::mt19937_64 rng;
  Vec3 command = Vec3::Zero();
  VecX action, prev_action;           // J
  std::vector<char> foot_contact;     // F
  std::vector<Scalar> air_time;       // F: s since the foot left the ground (0 while in contact)
  bool terminate_contact = false;
  Index penalized_contacts = 0;
  Index steps = 0;
  Scalar episode_return = 0;
  bool finished = false;              // terminated or truncated in the last step()
  std::vector<Scalar> final_priv;     // privileged observation of the last state, when finished
  VecX q_target, u_target, q0, u0;    // sized once
  VecX kp, kd;                        // this episode's gains (layout of u)
  VecX u_push;                        // the velocity of a push (layout of u)
  Index index = 0;                    // global environment index (first_env + i)
  // randomized parameters: this episode's (friction, gains) and the environment's (mass, com)
  Scalar friction = 0, kp_scale = 1, kd_scale = 1, motor_strength = 1, added_mass = 0;
  Scalar joint_damping = 0, joint_friction = 0;
  VecX damping, joint_friction_values;  // the Model's values with this episode's draws (layout of u)
  Vec3 com_shift = Vec3::Zero();
  Scalar next_push = 0;               // s of episode time of the next push
  // terrain: row of this episode, start position, and whether the row is the first episode's
  Index row = 0;
  Eigen::Vector2d start = Eigen::Vector2d::Zero();
  bool placed = false;
};

LocomotionTask::LocomotionTask(const LocomotionSettings& s, Index num_envs, int num_threads, Index first_env)
    : settings_(s), pool_(num_threads) {
  require(num_envs >= 1, "num_envs must be >= 1, got " + std::to_string(num_envs));
  require(first_env >= 0, "first_env must be >= 0, got " + std::to_string(first_env));
  require(!s.urdf.empty(), "urdf is required");
  require(!s.joints.empty(), "joints must name at least one joint");
  require(!s.feet.empty(), "feet must name at least one frame or link");
  require(s.nominal.size() == s.joints.size(), "nominal has " + std::to_string(s.nominal.size()) +
                                                   " values for " + std::to_string(s.joints.size()) + " joints");
  require(s.kp.size() == 1 || s.kp.size() == s.joints.size(), "kp must be one value or one per joint");
  require(s.kd.size() == 1 || s.kd.size() == s.joints.size(), "kd must be one value or one per joint");
  for (std::size_t k = 0; k < s.kp.size(); ++k) require(std::isfinite(s.kp[k]) && s.kp[k] >= 0, "kp must be >= 0");
  for (std::size_t k = 0; k < s.kd.size(); ++k) require(std::isfinite(s.kd[k]) && s.kd[k] >= 0, "kd must be >= 0");
  for (Scalar v : s.nominal) require(std::isfinite(v), "nominal must be finite");
  require(std::isfinite(s.base_height) && s.base_height > 0, "base_height must be > 0");
  require(s.physics_dt > 0 && std::isfinite(s.physics_dt), "physics_dt must be > 0");
  require(s.substeps >= 1, "substeps must be >= 1");
  require(s.max_episode_steps >= 1, "max_episode_steps must be >= 1");
  require(s.max_contacts >= 1, "max_contacts must be >= 1");
  require(std::isfinite(s.friction) && s.friction >= 0, "friction must be >= 0");
  require(s.action_scale > 0 && s.action_clip > 0 && std::isfinite(s.action_scale) && std::isfinite(s.action_clip),
          "action_scale and action_clip must be > 0");
  require(finite_range(s.command_vx) && finite_range(s.command_vy) && finite_range(s.command_yaw),
          "command ranges must be finite with lo <= hi");
  require(s.init_joint_noise >= 0 && s.init_velocity_noise >= 0, "init noises must be >= 0");
  require(std::isfinite(s.min_base_height) && std::isfinite(s.min_uprightness), "min_base_height and min_uprightness must be finite");
  const LocomotionRewards& w = s.rewards;
  for (Scalar v : {w.tracking_lin_vel, w.tracking_ang_vel, w.lin_vel_z, w.ang_vel_xy, w.orientation, w.torques,
                   w.action_rate, w.base_height, w.feet_air_time, w.air_time_target, w.collision})
    require(std::isfinite(v), "reward weights must be finite");
  require(w.tracking_sigma > 0 && std::isfinite(w.tracking_sigma), "rewards.tracking_sigma must be > 0");
  require(w.air_time_target >= 0, "rewards.air_time_target must be >= 0");
  require(std::isnan(w.base_height_target) || std::isfinite(w.base_height_target),
          "rewards.base_height_target must be finite (or absent)");
  const LocomotionTerrain& tr = s.terrain;
  require(tr.type == "flat" || tr.type == "rough", "terrain.type must be 'flat' or 'rough', got '" + tr.type + "'");
  if (tr.rough()) {
    require(tr.rows >= 1 && tr.rows <= 100, "terrain.rows must be in [1, 100]");
    require(tr.row_length > 0 && tr.width > 0 && tr.cell > 0 && tr.max_amplitude >= 0 &&
                std::isfinite(tr.row_length + tr.width + tr.cell + tr.max_amplitude),
            "terrain.row_length, width and cell must be > 0 and max_amplitude >= 0");
    require(tr.max_start_row >= 0 && tr.max_start_row < tr.rows, "terrain.max_start_row must be in [0, rows)");
  }
  const LocomotionRandomization& rz = s.randomization;
  for (const Range* r : {&rz.friction, &rz.kp_scale, &rz.kd_scale, &rz.motor_strength, &rz.added_mass, &rz.com_shift,
                         &rz.joint_damping, &rz.joint_friction})
    require(finite_range(*r), "randomization ranges must be finite with lo <= hi");
  require(rz.friction.lo >= 0 && rz.kp_scale.lo >= 0 && rz.kd_scale.lo >= 0 && rz.motor_strength.lo >= 0 &&
              rz.joint_damping.lo >= 0 && rz.joint_friction.lo >= 0,
          "randomization.friction, the gain scales, joint_damping and joint_friction must be >= 0");
  require(rz.push_interval >= 0 && rz.push_velocity >= 0 && std::isfinite(rz.push_interval + rz.push_velocity),
          "randomization.push_interval and push_velocity must be >= 0");

  // One immutable Model for every environment: its memory and its cache lines are shared, and
  // every World reads it each physics step.
  UrdfOptions uo;
  uo.package_paths = s.package_path;
  uo.mesh_collision = s.mesh_collision;
  const std::string urdf = resolve_resource_uri(s.urdf, ".", s.package_path);
  const std::shared_ptr<const Model> shared = std::make_shared<const Model>(load_urdf(urdf, uo));
  urdf_damping_ = shared->damping;
  urdf_friction_ = shared->friction;
  const Model& model = *shared;
  require(model.floating_base, "the robot '" + model.name + "' must have a floating base");
  const Index J = static_cast<Index>(s.joints.size());
  joint_q_.resize(s.joints.size());
  joint_v_.resize(s.joints.size());
  nominal_.resize(J);
  kp_.resize(J);
  kd_.resize(J);
  for (Index k = 0; k < J; ++k) {
    const std::string& name = s.joints[static_cast<std::size_t>(k)];
    const Index j = model.find_joint(name);
    require(j >= 0, "joints: no joint '" + name + "' in " + s.urdf);
    require(model.nv_joint[static_cast<std::size_t>(j)] == 1 && model.nq_joint[static_cast<std::size_t>(j)] == 1,
            "joints: '" + name + "' is not a one-degree-of-freedom joint");
    joint_q_[static_cast<std::size_t>(k)] = model.idx_q[static_cast<std::size_t>(j)];
    joint_v_[static_cast<std::size_t>(k)] = model.idx_v[static_cast<std::size_t>(j)];
    for (Index l = 0; l < k; ++l)
      require(joint_v_[static_cast<std::size_t>(l)] != joint_v_[static_cast<std::size_t>(k)],
              "joints: '" + name + "' is listed twice");
    nominal_[k] = s.nominal[static_cast<std::size_t>(k)];
    kp_[k] = s.kp.size() == 1 ? s.kp[0] : s.kp[static_cast<std::size_t>(k)];
    kd_[k] = s.kd.size() == 1 ? s.kd[0] : s.kd[static_cast<std::size_t>(k)];
  }
  for (const std::string& f : s.feet) foot_body_.push_back(body_of(model, f, s.urdf, "feet"));
  if (s.terminate_contacts.empty()) terminate_body_.push_back(0);
  for (const std::string& b : s.terminate_contacts) terminate_body_.push_back(body_of(model, b, s.urdf, "terminate_contacts"));
  for (const std::string& b : s.penalize_contacts) penalize_body_.push_back(body_of(model, b, s.urdf, "penalize_contacts"));

  if (tr.rough()) {
    // rows along x, amplitude growing linearly with the row; one random_rough field rescaled per row
    Heightfield base = Heightfield::random_rough(tr.row_length * static_cast<Scalar>(tr.rows), tr.width, tr.cell, 1.0,
                                                 /*seed*/ 1, /*smoothing*/ 1);
    MatX h = base.heights();
    for (Index i = 0; i < h.rows(); ++i) {
      const Scalar x = static_cast<Scalar>(i) * base.dx();
      const Index row = std::min<Index>(tr.rows - 1, static_cast<Index>(x / tr.row_length));
      const Scalar amp = tr.rows > 1 ? tr.max_amplitude * static_cast<Scalar>(row) / static_cast<Scalar>(tr.rows - 1) : tr.max_amplitude;
      h.row(i) *= amp;
    }
    // x from 0 (row 0 starts at the origin), y centred
    terrain_ = std::make_shared<const Heightfield>(h, base.dx(), base.dy(), 0.0, -tr.width / 2);
  }
  base_height_target_ = std::isnan(w.base_height_target) ? measure_standing_height(shared) : w.base_height_target;

  envs_.resize(1);
  for (int t = 0; t < pool_.num_threads(); ++t) workspaces_.push_back(std::make_unique<StepWorkspace>());
  for (int t = 0; t < pool_.num_threads(); ++t) world_lanes_.push_back(std::make_unique<batch::WorldLanes>());
  lanes_ = lanes_default_width();
  const auto make_env = [&](Index i) {
    auto e = std::make_unique<Env>();
    e->index = first_env + i;
    e->rng.seed(splitmix64(splitmix64(0x5eed) ^ splitmix64(static_cast<std::uint64_t>(e->index))));
    e->world = std::make_unique<World>();
    World& wd = *e->world;
    wd.set_time_step(s.physics_dt);
    wd.set_max_contacts(s.max_contacts);
    wd.set_default_material(s.friction, 0);
    wd.set_contact_solver(s.solver);
    if (terrain_)
      wd.add_heightfield("terrain", terrain_);
    else
      wd.add_ground();
    SystemOptions o;
    o.name = model.name;
    // the environment's own description when its mass or centre of mass is randomized (drawn once,
    // from a stream of its own: the episodes' streams are seeded by reset())
    std::shared_ptr<const Model> robot_model = shared;
    if (rz.added_mass.varies() || rz.com_shift.varies()) {
      e->added_mass = draw(e->rng, rz.added_mass);
      for (int k = 0; k < 3; ++k) e->com_shift[k] = draw(e->rng, rz.com_shift);
      auto m = std::make_shared<Model>(model);
      Inertia& I = m->inertia[0];
      I = Inertia(I.m + e->added_mass, I.c + e->com_shift, I.Ic);
      robot_model = std::move(m);
    } else {
      e->added_mass = rz.added_mass.lo;
      e->com_shift.setConstant(rz.com_shift.lo);
    }
    e->robot = &wd.add_articulated_system(robot_model, o);
    e->kp = VecX::Zero(model.nv);
    e->kd = VecX::Zero(model.nv);
    for (Index k = 0; k < J; ++k) {
      e->kp[joint_v_[static_cast<std::size_t>(k)]] = kp_[k];
      e->kd[joint_v_[static_cast<std::size_t>(k)]] = kd_[k];
    }
    e->robot->set_pd_gains(e->kp, e->kd);
    e->q_target = model.neutral_configuration();
    for (Index k = 0; k < J; ++k) e->q_target[joint_q_[static_cast<std::size_t>(k)]] = nominal_[k];
    e->u_target = VecX::Zero(model.nv);
    e->u_push = VecX::Zero(model.nv);
    e->robot->set_pd_targets(e->q_target, e->u_target);
    e->q0 = e->q_target;
    e->u0 = e->u_target;
    e->action = VecX::Zero(J);
    e->prev_action = VecX::Zero(J);
    e->foot_contact.assign(foot_body_.size(), 0);
    e->air_time.assign(foot_body_.size(), 0);
    e->final_priv.assign(static_cast<std::size_t>(privileged_size()), 0);
    // The state every episode starts from before its random part (reset_env): gains, the
    // standing PD targets, no force, time 0, no warm-start memory.
    wd.mark_initial_state();
    envs_[static_cast<std::size_t>(i)] = std::move(e);
  };
  batch::make_first_within_memory("LocomotionTask", num_envs, [&] { make_env(0); });
  envs_.resize(static_cast<std::size_t>(num_envs));
  pool_.parallel_for(num_envs - 1, [&](Index i) { make_env(i + 1); });
  // every thread's workspace: the robot Model's Data (the environments share it, or its topology)
  for (auto& ws : workspaces_) envs_.front()->world->reserve_workspace(*ws);
  reserve_lanes();
}

LocomotionTask::~LocomotionTask() = default;

// The base height above flat ground of the robot standing under zero action: 1 s from the nominal
// pose at base_height, with the task's gains. Deterministic (no random draw).
Scalar LocomotionTask::measure_standing_height(const std::shared_ptr<const Model>& model) const {
  const LocomotionSettings& s = settings_;
  World w;
  w.set_time_step(s.physics_dt);
  w.set_max_contacts(s.max_contacts);
  w.set_default_material(s.friction, 0);
  w.set_contact_solver(s.solver);
  w.add_ground();
  ArticulatedSystem& r = w.add_articulated_system(model);
  VecX kp = VecX::Zero(model->nv), kd = VecX::Zero(model->nv);
  VecX q = model->neutral_configuration();
  for (Index k = 0; k < num_joints(); ++k) {
    kp[joint_v_[static_cast<std::size_t>(k)]] = kp_[k];
    kd[joint_v_[static_cast<std::size_t>(k)]] = kd_[k];
    q[joint_q_[static_cast<std::size_t>(k)]] = nominal_[k];
  }
  q[2] = s.base_height;
  r.set_pd_gains(kp, kd);
  r.set_pd_targets(q, VecX::Zero(model->nv));
  r.set_state(q, VecX::Zero(model->nv));
  const Index steps = static_cast<Index>(std::ceil(1.0 / s.physics_dt));
  for (Index k = 0; k < steps; ++k) w.integrate();
  const Scalar h = r.q()[2];
  require(std::isfinite(h) && h > 0, "the robot does not stand at its nominal pose (base height " +
                                         std::to_string(h) + " m after 1 s): check nominal, base_height, kp and kd");
  return h;
}

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

Index LocomotionTask::terrain_row(Index i) const {
  use_.check("LocomotionTask", "terrain_row");
  require(i >= 0 && i < num_envs(), "environment index " + std::to_string(i) + " out of range");
  return envs_[static_cast<std::size_t>(i)]->row;
}

Scalar LocomotionTask::terrain_height(Scalar x, Scalar y) const {
  if (!terrain_) return 0;
  Scalar z = 0;
  return terrain_->height(x, y, z) ? z : terrain_->min_height();
}

void LocomotionTask::reset_env(Env& e, bool first) {
  const LocomotionSettings& s = settings_;
  const LocomotionTerrain& tr = s.terrain;
  const LocomotionRandomization& rz = s.randomization;
  // the terrain row of the coming episode (curriculum on the last one's distance)
  if (tr.rough() && e.placed && !first) {
    const VecX& q = e.robot->q();
    const Scalar walked = Eigen::Vector2d(q[0] - e.start[0], q[1] - e.start[1]).norm();
    const Scalar asked = e.command.head<2>().norm() * static_cast<Scalar>(e.steps) * control_dt();
    if (!tr.curriculum)
      e.row = static_cast<Index>(e.rng() % static_cast<std::uint64_t>(tr.rows));
    else if (walked > tr.row_length / 2)
      e.row = std::min(tr.rows - 1, e.row + 1);
    else if (walked < asked / 2)
      e.row = std::max<Index>(0, e.row - 1);
  }
  // random heading, joints around the standing pose, small base velocities
  const Scalar yaw = uniform(e.rng, -M_PI, M_PI);
  e.q0[0] = 0;
  e.q0[1] = 0;
  e.q0[2] = s.base_height;
  e.q0[3] = std::cos(yaw / 2);
  e.q0[4] = 0;
  e.q0[5] = 0;
  e.q0[6] = std::sin(yaw / 2);
  for (Index k = 0; k < num_joints(); ++k)
    e.q0[joint_q_[static_cast<std::size_t>(k)]] = nominal_[k] + uniform(e.rng, -s.init_joint_noise, s.init_joint_noise);
  e.u0.setZero();
  for (int k = 0; k < 6; ++k) e.u0[k] = uniform(e.rng, -s.init_velocity_noise, s.init_velocity_noise);
  e.command = Vec3(uniform(e.rng, s.command_vx.lo, s.command_vx.hi), uniform(e.rng, s.command_vy.lo, s.command_vy.hi),
                   uniform(e.rng, s.command_yaw.lo, s.command_yaw.hi));
  // the parameters of this episode (constant ranges draw nothing)
  e.friction = draw(e.rng, rz.friction);
  e.kp_scale = draw(e.rng, rz.kp_scale);
  e.kd_scale = draw(e.rng, rz.kd_scale);
  e.motor_strength = draw(e.rng, rz.motor_strength);
  e.joint_damping = draw(e.rng, rz.joint_damping);
  e.joint_friction = draw(e.rng, rz.joint_friction);
  if (tr.rough()) {
    if (first) e.row = tr.max_start_row > 0 ? static_cast<Index>(e.rng() % static_cast<std::uint64_t>(tr.max_start_row + 1)) : 0;
    // centre of the row, a random lateral offset within the middle half of its width
    e.start = Eigen::Vector2d((static_cast<Scalar>(e.row) + 0.5) * tr.row_length, uniform(e.rng, -tr.width / 4, tr.width / 4));
    e.q0[0] = e.start[0];
    e.q0[1] = e.start[1];
    e.q0[2] = s.base_height + terrain_height(e.start[0], e.start[1]);
    e.placed = true;
  }
  // World::reset restores the initial state marked in the constructor (PD targets at the standing
  // pose, no pending force, time 0) and clears the solver's warm-start memory and the warnings, so
  // an episode does not depend on the one before it; then the random q0, u0 and parameters.
  e.world->reset();
  e.robot->set_state(e.q0, e.u0);
  if (rz.friction.varies()) e.world->set_default_material(e.friction, 0);
  if (rz.kp_scale.varies() || rz.kd_scale.varies() || rz.motor_strength.varies()) {
    for (Index k = 0; k < num_joints(); ++k) {  // e.kp, e.kd are zero on the other dofs
      const Index v = joint_v_[static_cast<std::size_t>(k)];
      e.kp[v] = kp_[k] * e.kp_scale * e.motor_strength;
      e.kd[v] = kd_[k] * e.kd_scale * e.motor_strength;
    }
    e.robot->set_pd_gains(e.kp, e.kd);
  }
  // the URDF's values plus this episode's draws on the action joints
  if (rz.joint_damping.varies()) {
    e.damping = urdf_damping_;
    for (Index k = 0; k < num_joints(); ++k) e.damping[joint_v_[static_cast<std::size_t>(k)]] += e.joint_damping;
    e.world->set_joint_damping(0, e.damping);
  }
  if (rz.joint_friction.varies()) {
    e.joint_friction_values = urdf_friction_;
    for (Index k = 0; k < num_joints(); ++k)
      e.joint_friction_values[joint_v_[static_cast<std::size_t>(k)]] += e.joint_friction;
    e.world->set_joint_friction(0, e.joint_friction_values);
  }
  e.next_push = rz.push_interval;
  e.q_target = e.robot->q_target();
  e.action.setZero();
  e.prev_action.setZero();
  std::fill(e.foot_contact.begin(), e.foot_contact.end(), 0);
  std::fill(e.air_time.begin(), e.air_time.end(), 0);
  e.terminate_contact = false;
  e.penalized_contacts = 0;
  e.steps = 0;
  e.episode_return = 0;
}

void LocomotionTask::observe(const Env& e, Scalar* o) const {
  const VecX& q = e.robot->q();
  const VecX& u = e.robot->u();
  const Mat3 R = base_rotation(q);
  const Vec3 g = R.transpose() * Vec3(0, 0, -1);
  const Vec3 w = R.transpose() * u.segment<3>(3);
  const Index J = num_joints();
  for (int k = 0; k < 3; ++k) {
    o[k] = g[k];
    o[3 + k] = 0.25 * w[k];
  }
  for (Index k = 0; k < J; ++k) {
    o[6 + k] = q[joint_q_[static_cast<std::size_t>(k)]] - nominal_[k];
    o[6 + J + k] = 0.05 * u[joint_v_[static_cast<std::size_t>(k)]];
    o[6 + 2 * J + k] = e.action[k];
  }
  o[6 + 3 * J] = 2 * e.command[0];
  o[7 + 3 * J] = 2 * e.command[1];
  o[8 + 3 * J] = 0.25 * e.command[2];
  for (Index f = 0; f < num_feet(); ++f) o[9 + 3 * J + f] = e.foot_contact[static_cast<std::size_t>(f)] ? 1 : 0;
}

void LocomotionTask::observe_privileged(const Env& e, Scalar* o) const {
  const VecX& q = e.robot->q();
  const VecX& u = e.robot->u();
  const Mat3 R = base_rotation(q);
  const Vec3 v = R.transpose() * u.segment<3>(0);
  for (int k = 0; k < 3; ++k) o[k] = 2 * v[k];
  o[3] = q[2] - terrain_height(q[0], q[1]);
  Index n = 4;
  for (std::size_t f = 0; f < e.air_time.size(); ++f) o[n++] = e.air_time[f];
  const LocomotionRandomization& rz = settings_.randomization;
  if (rz.friction.varies()) o[n++] = e.friction;
  if (rz.kp_scale.varies()) o[n++] = e.kp_scale;
  if (rz.kd_scale.varies()) o[n++] = e.kd_scale;
  if (rz.motor_strength.varies()) o[n++] = e.motor_strength;
  if (rz.added_mass.varies()) o[n++] = e.added_mass;
  if (rz.com_shift.varies())
    for (int k = 0; k < 3; ++k) o[n++] = e.com_shift[k];
  if (rz.joint_damping.varies()) o[n++] = e.joint_damping;
  if (rz.joint_friction.varies()) o[n++] = e.joint_friction;
}

void LocomotionTask::privileged(RowMatXref out, RowMatXref final_out) const {
  const UseMarker::Scope in_use(use_, "LocomotionTask", "privileged");
  const Index n = num_envs(), p = privileged_size();
  if (out.rows() != n || out.cols() != p || final_out.rows() != n || final_out.cols() != p)
    throw InvalidArgument("LocomotionTask::privileged: out and final_out must have shape (" + std::to_string(n) +
                          ", " + std::to_string(p) + ")");
  for (Index i = 0; i < n; ++i) {
    const Env& e = *envs_[static_cast<std::size_t>(i)];
    observe_privileged(e, out.row(i).data());
    if (e.finished)
      for (Index k = 0; k < p; ++k) final_out(i, k) = e.final_priv[static_cast<std::size_t>(k)];
  }
}

void LocomotionTask::reset(std::uint64_t seed, RowMatXref obs) {
  const UseMarker::Scope in_use(use_, "LocomotionTask", "reset");
  if (obs.rows() != num_envs() || obs.cols() != obs_size())
    throw InvalidArgument("LocomotionTask::reset: obs must have shape (" + std::to_string(num_envs()) + ", " +
                          std::to_string(obs_size()) + "), got (" + std::to_string(obs.rows()) + ", " +
                          std::to_string(obs.cols()) + ")");
  seed_ = seed;
  pool_.parallel_for(num_envs(), [&](Index i) {
    Env& e = *envs_[static_cast<std::size_t>(i)];
    e.rng.seed(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(e.index))));
    e.finished = false;
    reset_env(e, /*first*/ true);
    observe(e, obs.row(i).data());
  });
}

void LocomotionTask::step(const RowMatXcref& actions, RowMatXref obs, VecXref reward, Eigen::Ref<BoolVec> terminated,
                          Eigen::Ref<BoolVec> truncated, RowMatXref final_obs, VecXref episode_return,
                          VecXref episode_length) {
  const UseMarker::Scope in_use(use_, "LocomotionTask", "step");
  const Index n = num_envs(), J = num_joints(), F = num_feet(), no = obs_size();
  if (actions.rows() != n || actions.cols() != J)
    throw InvalidArgument("LocomotionTask::step: actions must have shape (" + std::to_string(n) + ", " +
                          std::to_string(J) + "), got (" + std::to_string(actions.rows()) + ", " +
                          std::to_string(actions.cols()) + ")");
  if (!actions.allFinite()) throw InvalidArgument("LocomotionTask::step: actions must be finite");
  if (obs.rows() != n || obs.cols() != no || final_obs.rows() != n || final_obs.cols() != no)
    throw InvalidArgument("LocomotionTask::step: obs and final_obs must have shape (" + std::to_string(n) + ", " +
                          std::to_string(no) + ")");
  if (reward.size() != n || terminated.size() != n || truncated.size() != n || episode_return.size() != n ||
      episode_length.size() != n)
    throw InvalidArgument("LocomotionTask::step: reward, terminated, truncated, episode_return and episode_length "
                          "must have size " + std::to_string(n));

  const LocomotionSettings& s = settings_;
  const LocomotionRewards& wt = s.rewards;
  const LocomotionRandomization& rz = s.randomization;
  const Scalar dt_c = control_dt();
  // action -> PD targets, push (before the physics steps of environment i)
  auto act = [&](Index i) {
    Env& e = *envs_[static_cast<std::size_t>(i)];
    ArticulatedSystem& robot = *e.robot;
    e.prev_action = e.action;
    for (Index k = 0; k < J; ++k) {
      const Scalar a = std::min(s.action_clip, std::max(-s.action_clip, actions(i, k)));
      e.action[k] = a;
      e.q_target[joint_q_[static_cast<std::size_t>(k)]] = nominal_[k] + s.action_scale * a;
    }
    robot.set_pd_targets(e.q_target, e.u_target);
    // a push: the base's horizontal velocity set to a random one (legged_gym's push_robots)
    if (rz.push_interval > 0 && static_cast<Scalar>(e.steps) * dt_c >= e.next_push) {
      e.next_push += rz.push_interval;
      e.u_push = robot.u();  // sized once: no allocation
      e.u_push[0] = uniform(e.rng, -rz.push_velocity, rz.push_velocity);
      e.u_push[1] = uniform(e.rng, -rz.push_velocity, rz.push_velocity);
      robot.set_u(e.u_push);
    }
  };
  // contacts, reward, termination, observation (after them; failed: a step was not finite or the
  // solver failed)
  auto conclude = [&](Index i, bool failed) {
    Env& e = *envs_[static_cast<std::size_t>(i)];
    ArticulatedSystem& robot = *e.robot;
    // contacts of the last physics step that carried an impulse: feet, terminating and penalized
    // bodies (the contact set also holds pairs within the collision margin, which a swinging foot
    // skims without touching)
    std::fill(e.foot_contact.begin(), e.foot_contact.end(), 0);
    e.terminate_contact = false;
    e.penalized_contacts = 0;
    for (const BodyContactImpulse& c : robot.contact_impulses()) {
      if (!c.touching()) continue;
      for (Index b : terminate_body_) e.terminate_contact = e.terminate_contact || c.body == b;
      for (Index b : penalize_body_) e.penalized_contacts += c.body == b ? 1 : 0;
      for (Index f = 0; f < F; ++f)
        if (c.body == foot_body_[static_cast<std::size_t>(f)]) e.foot_contact[static_cast<std::size_t>(f)] = 1;
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
    for (Index k = 0; k < J; ++k) {
      const Scalar t = tau[joint_v_[static_cast<std::size_t>(k)]];
      tau2 += t * t;
    }
    const Scalar lin_err = (e.command.head<2>() - v.head<2>()).squaredNorm();
    const Scalar yaw_err = (e.command[2] - w[2]) * (e.command[2] - w[2]);
    // swing time of each foot, rewarded when it lands (legged_gym's feet_air_time)
    Scalar air = 0;
    for (std::size_t f = 0; f < e.air_time.size(); ++f) {
      const bool landed = e.foot_contact[f] && e.air_time[f] > 0;  // in the air at the last step
      e.air_time[f] += dt_c;
      if (landed) air += e.air_time[f] - wt.air_time_target;
      if (e.foot_contact[f]) e.air_time[f] = 0;
    }
    if (e.command.head<2>().norm() < 0.1) air = 0;  // standing still is not a reason to step
    const Scalar h = q[2] - terrain_height(q[0], q[1]);
    Scalar r = wt.tracking_lin_vel * std::exp(-lin_err / wt.tracking_sigma) +
               wt.tracking_ang_vel * std::exp(-yaw_err / wt.tracking_sigma) + wt.lin_vel_z * v[2] * v[2] +
               wt.ang_vel_xy * w.head<2>().squaredNorm() + wt.orientation * g.head<2>().squaredNorm() +
               wt.torques * tau2 + wt.action_rate * (e.action - e.prev_action).squaredNorm() +
               wt.feet_air_time * air +
               wt.base_height * (h - base_height_target_) * (h - base_height_target_);
    if (wt.collision != 0) r += wt.collision * static_cast<Scalar>(e.penalized_contacts);
    if (wt.only_positive) r = std::max(r, Scalar(0));
    reward[i] = std::isfinite(r) ? r * dt_c : 0;
    e.episode_return += reward[i];
    ++e.steps;
    // termination and truncation
    const bool term = failed || !q.allFinite() || h < s.min_base_height || -g[2] < s.min_uprightness ||
                      e.terminate_contact;
    const bool trunc = !term && e.steps >= s.max_episode_steps;
    terminated[i] = term;
    truncated[i] = trunc;
    e.finished = term || trunc;
    if (e.finished) {
      observe(e, final_obs.row(i).data());
      observe_privileged(e, e.final_priv.data());
      episode_return[i] = e.episode_return;
      episode_length[i] = static_cast<Scalar>(e.steps);
      reset_env(e, /*first*/ false);
    }
    observe(e, obs.row(i).data());
  };
  // the physics: groups of lanes_ consecutive environments, their dynamics in SIMD lanes
  // (batch::WorldLanes: the same bits as one by one, so the grouping changes no result)
  const Index width = lanes_;
  pool_.parallel_for((n + width - 1) / width, [&](Index g) {
    const Index begin = g * width, count = std::min<Index>(width, n - begin);
    const std::size_t t = static_cast<std::size_t>(ThreadPool::thread_index());
    World* worlds[8];
    bool failed[8] = {};
    StepReport report[8];
    for (Index w = 0; w < count; ++w) {
      act(begin + w);
      worlds[w] = envs_[static_cast<std::size_t>(begin + w)]->world.get();
    }
    batch::WorldLanes::GroupMemory memory;
    for (Index k = 0; k < s.substeps; ++k) {
      world_lanes_[t]->integrate(worlds, static_cast<int>(count), static_cast<int>(width), *workspaces_[t], report, &memory);
      for (Index w = 0; w < count; ++w) {
        const StepStatus st = report[w].status;
        failed[w] = failed[w] || st == StepStatus::NonFinite || st == StepStatus::SolverFailed;
      }
    }
    for (Index w = 0; w < count; ++w) conclude(begin + w, failed[w]);
  }, [&](Index next) {
    // the thread's next group: its memory arrives while this one steps (World::prefetch; its
    // Data are this thread's workspace's, already in the cache)
    envs_[static_cast<std::size_t>(next * width)]->world->prefetch(workspaces_[static_cast<std::size_t>(ThreadPool::thread_index())].get());
  });
}

void LocomotionTask::set_lanes(int width) {
  const UseMarker::Scope in_use(use_, "LocomotionTask", "set_lanes");
  check_lanes_width(width, "LocomotionTask::set_lanes");
  if (width == lanes_) return;
  lanes_ = width;
  reserve_lanes();
}

void LocomotionTask::reserve_lanes() {
  // every thread's lanes of this width made now (batch::WorldLanes::reserve), not when it first
  // takes a group
  for (std::size_t t = 0; t < world_lanes_.size(); ++t)
    world_lanes_[t]->reserve(*envs_.front()->world, lanes_, *workspaces_[t]);
}

}  // namespace impulse::tasks
