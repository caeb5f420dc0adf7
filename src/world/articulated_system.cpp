#include "impulse/world/articulated_system.hpp"

#include <algorithm>
#include <cmath>

#include "impulse/core/check.hpp"
#include "impulse/core/prefetch.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "impulse/world/world.hpp"

namespace impulse {

namespace {
// check_vector, but the message (a heap string) is built only on failure: the setters run every
// control step of a batched RL loop, which must not allocate (tests/tasks/test_locomotion.cpp).
void check_input(const VecXcref& x, Index n, const std::string& system, const char* what) {
  if (x.size() == n && x.allFinite()) return;
  check_vector(x, n, "system '" + system + "': " + what);
}
}  // namespace

ArticulatedSystem::ArticulatedSystem(std::string name, std::shared_ptr<const Model> model)
    : name_(std::move(name)), model_(std::move(model)), gravity_(model_->gravity), scratch_(*model_) {}

ArticulatedSystem::ArticulatedSystem(const ArticulatedSystem& o)
    : name_(o.name_), model_(o.model_), gravity_(o.gravity_), scratch_(o.scratch_), object_(o.object_) {}

void ArticulatedSystem::changed() const {
  world_->prepared_ = false;
}

Data& ArticulatedSystem::query() const {
  if (!query_) query_ = std::make_unique<Data>(*model_);
  query_->gravity = gravity_;
  return *query_;
}

void ArticulatedSystem::prefetch_step(bool with_data) const {
  prefetch_bytes(this, sizeof(ArticulatedSystem));
  prefetch_bytes(st_, sizeof(SystemState));
  prefetch_bytes(out_, sizeof(SystemOutputs));
  for (const VecX* v : std::initializer_list<const VecX*>{&st_->q, &st_->u, &st_->tau, &st_->kp, &st_->kd, &st_->q_target, &st_->u_target,
                        &st_->flight_accel, &st_->flight_force, &out_->tau_applied, &out_->tau_friction, &scratch_.u_free, &scratch_.q_next, &scratch_.rhs,
                        &scratch_.tau_clamp})
    prefetch_data(*v);
  prefetch_data(st_->f_ext);
  prefetch_data(scratch_.clamped);
  prefetch_data(out_->contact_impulses);
  if (with_data && data_) data_->prefetch_step();
}

const UseMarker& ArticulatedSystem::use_marker() const { return world_->use_marker(); }

StepperSystem ArticulatedSystem::stepper_system() {
  StepperSystem v;
  v.model_ = model_.get();
  v.object_ = object_;
  v.state_ = st_;
  v.out_ = out_;
  v.scratch_ = &scratch_;
  v.data_ = data_.get();
  return v;
}

void ArticulatedSystem::check_q(const VecXcref& q, const char* what) const {
  check_input(q, model_->nq, name_, what);
  for (Index i = 0; i < model_->nb; ++i) {
    Index k = -1;
    if (model_->joint_type[i] == JointType::Floating) k = model_->idx_q[i] + 3;
    if (model_->joint_type[i] == JointType::Spherical) k = model_->idx_q[i];
    if (k < 0) continue;
    const Scalar n = q.segment<4>(k).norm();
    IMPULSE_CHECK(std::abs(n - 1) < 1e-3, "system '", name_, "': ", what, " quaternion of joint '",
                  model_->joint_names[i], "' (q[", k, "..", k + 3, "], order w x y z) has norm ", n,
                  ", expected 1");
  }
}

namespace {
// Normalises the quaternions of q exactly (inputs are checked to be unit to 1e-3).
void normalise(const Model& m, VecX& q) {
  for (Index i = 0; i < m.nb; ++i) {
    Index k = -1;
    if (m.joint_type[i] == JointType::Floating) k = m.idx_q[i] + 3;
    if (m.joint_type[i] == JointType::Spherical) k = m.idx_q[i];
    if (k >= 0) q.segment<4>(k).normalize();
  }
}
}  // namespace

void ArticulatedSystem::set_q(const VecXcref& q) {
  const auto in_use = use("set_q");
  check_q(q, "q");
  st_->q = q;
  normalise(*model_, st_->q);
  st_->drop_flight_history();  // (the free-flight history is of the state the last step left)
  changed();
}

void ArticulatedSystem::set_u(const VecXcref& u) {
  const auto in_use = use("set_u");
  check_input(u, model_->nv, name_, "u");
  st_->u = u;
  st_->drop_flight_history();
  changed();
}

void ArticulatedSystem::check_state(const VecXcref& q, const VecXcref& u) const {
  check_q(q, "q");
  check_input(u, model_->nv, name_, "u");
}

void ArticulatedSystem::set_state(const VecXcref& q, const VecXcref& u) {
  const auto in_use = use("set_state");
  check_state(q, u);
  st_->q = q;
  normalise(*model_, st_->q);
  st_->u = u;
  st_->drop_flight_history();
  changed();
}

void ArticulatedSystem::set_generalized_force(const VecXcref& tau) {
  const auto in_use = use("set_generalized_force");
  check_input(tau, model_->nv, name_, "generalized force");
  st_->tau = tau;
  changed();
}

void ArticulatedSystem::set_pd_gains(const VecXcref& kp, const VecXcref& kd) {
  const auto in_use = use("set_pd_gains");
  check_input(kp, model_->nv, name_, "kp");
  check_input(kd, model_->nv, name_, "kd");
  for (Index i = 0; i < model_->nb; ++i) {
    for (Index k = model_->idx_v[i]; k < model_->idx_v[i] + model_->nv_joint[i]; ++k) {
      IMPULSE_CHECK(kp[k] >= 0 && kd[k] >= 0, "system '", name_, "': PD gains must be >= 0 (dof ", k, ")");
      IMPULSE_CHECK(model_->nv_joint[i] == 1 || (kp[k] == 0 && kd[k] == 0), "system '", name_,
                    "': PD gains must be zero on the ", joint_type_name(model_->joint_type[i]), " joint '",
                    model_->joint_names[i], "' (dof ", k, "); only 1-dof joints are PD-controlled");
    }
  }
  st_->kp = kp;
  st_->kd = kd;
  changed();
}

void ArticulatedSystem::set_pd_targets(const VecXcref& q_target, const VecXcref& u_target) {
  const auto in_use = use("set_pd_targets");
  check_input(q_target, model_->nq, name_, "q_target");
  check_input(u_target, model_->nv, name_, "u_target");
  st_->q_target = q_target;
  st_->u_target = u_target;
  changed();
}

void ArticulatedSystem::set_external_force(Index body, const Vec3& force_W, const Vec3& point_W) {
  const auto in_use = use("set_external_force");
  Data& Q = query();
  IMPULSE_CHECK(body >= 0 && body < model_->nb, "system '", name_, "': body index ", body, " out of range");
  IMPULSE_CHECK(force_W.allFinite() && point_W.allFinite(), "system '", name_, "': external force on body '",
                model_->body_names[body], "' is not finite");
  forward_kinematics(*model_, Q, st_->q);
  const SE3& X = Q.oMi[body];
  const Vec3 f_B = X.R.transpose() * force_W;
  const Vec3 r_B = X.R.transpose() * (point_W - X.p);
  st_->f_ext[body].head<3>() += f_B;
  st_->f_ext[body].tail<3>() += r_B.cross(f_B);
  st_->has_f_ext = true;
  changed();
}

void ArticulatedSystem::set_external_torque(Index body, const Vec3& torque_W) {
  const auto in_use = use("set_external_torque");
  Data& Q = query();
  IMPULSE_CHECK(body >= 0 && body < model_->nb, "system '", name_, "': body index ", body, " out of range");
  IMPULSE_CHECK(torque_W.allFinite(), "system '", name_, "': external torque on body '", model_->body_names[body],
                "' is not finite");
  forward_kinematics(*model_, Q, st_->q);
  st_->f_ext[body].tail<3>() += Q.oMi[body].R.transpose() * torque_W;
  st_->has_f_ext = true;
  changed();
}

void ArticulatedSystem::clear_external_forces() {
  const auto in_use = use("clear_external_forces");
  for (Vec6& f : st_->f_ext) f.setZero();
  st_->has_f_ext = false;
}

const MatX& ArticulatedSystem::mass_matrix() const {
  const auto in_use = use("mass_matrix");
  Data& Q = query();
  crba(*model_, Q, st_->q);
  Q.M.triangularView<Eigen::StrictlyLower>() = Q.M.transpose();
  return Q.M;
}

const VecX& ArticulatedSystem::nonlinear_effects() const {
  const auto in_use = use("nonlinear_effects");
  Data& Q = query();
  return impulse::nonlinear_effects(*model_, Q, st_->q, st_->u);
}

SE3 ArticulatedSystem::body_pose(Index body) const {
  const auto in_use = use("body_pose");
  Data& Q = query();
  IMPULSE_CHECK(body >= 0 && body < model_->nb, "system '", name_, "': body index ", body, " out of range");
  forward_kinematics(*model_, Q, st_->q);
  return Q.oMi[body];
}

SE3 ArticulatedSystem::frame_pose(const std::string& frame) const {
  const auto in_use = use("frame_pose");
  Data& Q = query();
  const Index f = model_->frame_id(frame);
  forward_kinematics(*model_, Q, st_->q);
  return frame_placement(*model_, Q, f);
}

void ArticulatedSystem::frame_poses(const std::vector<Index>& frames, Scalar* out) const {
  const auto in_use = use("frame_poses");
  Data& Q = query();
  for (Index f : frames)
    IMPULSE_CHECK(f >= 0 && f < static_cast<Index>(model_->frames.size()), "system '", name_, "': frame index ", f,
                  " out of range");
  forward_kinematics(*model_, Q, st_->q);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const SE3 X = frame_placement(*model_, Q, frames[k]);
    const Quat r(X.R);
    Scalar* o = out + 7 * k;
    o[0] = X.p[0];
    o[1] = X.p[1];
    o[2] = X.p[2];
    o[3] = r.w();
    o[4] = r.x();
    o[5] = r.y();
    o[6] = r.z();
  }
}

void ArticulatedSystem::frame_velocities(const std::vector<Index>& frames, Scalar* out) const {
  const auto in_use = use("frame_velocities");
  Data& Q = query();
  for (Index f : frames)
    IMPULSE_CHECK(f >= 0 && f < static_cast<Index>(model_->frames.size()), "system '", name_, "': frame index ", f,
                  " out of range");
  forward_kinematics(*model_, Q, st_->q, st_->u);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const Frame& f = model_->frames[static_cast<std::size_t>(frames[k])];
    Scalar* o = out + 6 * k;
    const Vec3 v = f.body < 0 ? Vec3::Zero() : point_velocity(Q, f.body, f.X_BF.p);
    const Vec3 w = f.body < 0 ? Vec3::Zero() : body_angular_velocity(Q, f.body);
    for (int i = 0; i < 3; ++i) {
      o[i] = v[i];
      o[3 + i] = w[i];
    }
  }
}

Vec3 ArticulatedSystem::frame_linear_velocity(const std::string& frame) const {
  const auto in_use = use("frame_linear_velocity");
  Data& Q = query();
  const Frame& f = model_->frames[model_->frame_id(frame)];
  if (f.body < 0) return Vec3::Zero();
  forward_kinematics(*model_, Q, st_->q, st_->u);
  return point_velocity(Q, f.body, f.X_BF.p);
}

Vec3 ArticulatedSystem::frame_angular_velocity(const std::string& frame) const {
  const auto in_use = use("frame_angular_velocity");
  Data& Q = query();
  const Frame& f = model_->frames[model_->frame_id(frame)];
  if (f.body < 0) return Vec3::Zero();
  forward_kinematics(*model_, Q, st_->q, st_->u);
  return body_angular_velocity(Q, f.body);
}

MatX ArticulatedSystem::frame_jacobian(const std::string& frame) const {
  const auto in_use = use("frame_jacobian");
  Data& Q = query();
  const Index f = model_->frame_id(frame);
  MatX J = MatX::Zero(6, model_->nv);
  if (model_->frames[f].body < 0) return J;
  compute_joint_jacobians(*model_, Q, st_->q);
  impulse::frame_jacobian(*model_, Q, f, J);
  return J;
}

MatX ArticulatedSystem::point_jacobian(Index body, const Vec3& p_B) const {
  const auto in_use = use("point_jacobian");
  Data& Q = query();
  IMPULSE_CHECK(body >= 0 && body < model_->nb, "system '", name_, "': body index ", body, " out of range");
  MatX J = MatX::Zero(3, model_->nv);
  compute_joint_jacobians(*model_, Q, st_->q);
  impulse::point_jacobian(*model_, Q, body, p_B, J);
  return J;
}

Scalar ArticulatedSystem::kinetic_energy() const {
  const auto in_use = use("kinetic_energy");
  Data& Q = query();
  return impulse::kinetic_energy(*model_, Q, st_->q, st_->u);
}
Scalar ArticulatedSystem::potential_energy() const {
  const auto in_use = use("potential_energy");
  Data& Q = query();
  return impulse::potential_energy(*model_, Q, st_->q);
}
Vec3 ArticulatedSystem::center_of_mass() const {
  const auto in_use = use("center_of_mass");
  Data& Q = query();
  return impulse::center_of_mass(*model_, Q, st_->q);
}

void ArticulatedSystem::set_collision_filter(std::uint32_t group, std::uint32_t mask) {
  const auto in_use = use("set_collision_filter");
  world_->collision_.set_object_filter(object_, CollisionFilter{group, mask});
}

void ArticulatedSystem::set_body_collision_filter(const std::string& body, std::uint32_t group, std::uint32_t mask) {
  const auto in_use = use("set_body_collision_filter");
  world_->collision_.set_body_filter(object_, model_->body_id(body), CollisionFilter{group, mask});
}

void ArticulatedSystem::set_self_collision(bool enabled) {
  const auto in_use = use("set_self_collision");
  world_->collision_.set_self_collision(object_, enabled);
}

}  // namespace impulse
