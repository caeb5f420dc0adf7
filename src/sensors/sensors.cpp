// Sensors read from a World after each step (sensors.hpp). Kinematics run in each sensor's own
// Data workspace (allocated at construction), so update() allocates nothing.
//
// IMU: specific force f = R^T (a - g) with a = (v(t) - v(t - dt)) / dt the velocity change of the
// frame origin over the step (it carries the contact impulses of the step), gyro = R^T w.
// Force-torque: the joint wrench of inverse dynamics (RNEA, Featherstone, RBDA 2008, Table 5.1:
// f_i = I_i a_i + v_i x* I_i v_i - f_ext,i, accumulated over the subtree) with udot the velocity
// change over the step and f_ext the contact forces of the step.
#include "impulse/sensors/sensors.hpp"

#include <cmath>
#include <limits>

#include "impulse/core/check.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/dynamics/rnea.hpp"

namespace impulse {

namespace {

void check_noise(const SensorNoise& n, const std::string& what) {
  IMPULSE_CHECK(std::isfinite(n.stddev) && n.stddev >= 0 && std::isfinite(n.bias), what, ": noise stddev ", n.stddev,
                " must be finite and >= 0, bias ", n.bias, " finite");
}

template <class Rng, class Dist>
Scalar noisy(Scalar value, const SensorNoise& n, Rng& rng, Dist& normal) {
  return n.stddev > 0 ? value + n.bias + n.stddev * normal(rng) : value + n.bias;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// IMU

Imu::Imu(const World& world, const ArticulatedSystem& system, const std::string& frame, SensorNoise accelerometer,
         SensorNoise gyroscope, std::uint64_t seed)
    : world_(world), sys_(system), acc_noise_(accelerometer), gyro_noise_(gyroscope), rng_(seed), data_(system.model()) {
  const Model& m = system.model();
  const Index f = m.frame_id(frame);
  body_ = m.frames[f].body;
  IMPULSE_CHECK(body_ >= 0, "IMU on '", system.name(), "': frame '", frame, "' is fixed to the world");
  X_BF_ = m.frames[f].X_BF;
  check_noise(accelerometer, "IMU accelerometer");
  check_noise(gyroscope, "IMU gyroscope");
  reset();
}

void Imu::kinematics(Vec3& v_W, Vec3& w_W) {
  forward_kinematics(sys_.model(), data_, sys_.q(), sys_.u());
  v_W = point_velocity(data_, body_, X_BF_.p);
  w_W = body_angular_velocity(data_, body_);
  R_.noalias() = data_.oMi[body_].R * X_BF_.R;
}

void Imu::reset() {
  Vec3 w;
  kinematics(v_prev_, w);
  acc_ = R_.transpose() * (-world_.gravity());
  gyro_ = R_.transpose() * w;
}

void Imu::update() { update(world_.time_step()); }

void Imu::update(Scalar dt) {
  const UseMarker::Scope in_use(sys_.use_marker(), "Imu", "update");
  Vec3 v, w;
  kinematics(v, w);
  const Vec3 a = (v - v_prev_) / dt;
  v_prev_ = v;
  acc_.noalias() = R_.transpose() * (a - world_.gravity());
  gyro_.noalias() = R_.transpose() * w;
  for (int k = 0; k < 3; ++k) {
    acc_[k] = noisy(acc_[k], acc_noise_, rng_, normal_);
    gyro_[k] = noisy(gyro_[k], gyro_noise_, rng_, normal_);
  }
}

// ---------------------------------------------------------------------------------------------
// joints

JointSensor::JointSensor(const ArticulatedSystem& system, SensorNoise position, SensorNoise velocity,
                         SensorNoise torque, std::uint64_t seed)
    : sys_(system), nq_(position), nu_(velocity), ntau_(torque), rng_(seed) {
  const Model& m = system.model();
  for (Index i = 0; i < m.nb; ++i) {
    if (m.nv_joint[i] != 1 || m.nq_joint[i] != 1) continue;
    names_.push_back(m.joint_names[i]);
    iq_.push_back(m.idx_q[i]);
    iv_.push_back(m.idx_v[i]);
  }
  check_noise(position, "joint position sensor");
  check_noise(velocity, "joint velocity sensor");
  check_noise(torque, "joint torque sensor");
  const Index n = static_cast<Index>(names_.size());
  q_ = VecX::Zero(n);
  u_ = VecX::Zero(n);
  tau_ = VecX::Zero(n);
  update();
}

void JointSensor::update() {
  const UseMarker::Scope in_use(sys_.use_marker(), "JointSensor", "update");
  const VecX &q = sys_.q(), &u = sys_.u(), &tau = sys_.generalized_force();
  const VecX &kp = sys_.kp(), &kd = sys_.kd(), &qt = sys_.q_target(), &ut = sys_.u_target();
  for (std::size_t k = 0; k < iq_.size(); ++k) {
    const Index a = iq_[k], b = iv_[k];
    const Scalar t = tau[b] + kp[b] * (qt[a] - q[a]) + kd[b] * (ut[b] - u[b]);
    q_[k] = noisy(q[a], nq_, rng_, normal_);
    u_[k] = noisy(u[b], nu_, rng_, normal_);
    tau_[k] = noisy(t, ntau_, rng_, normal_);
  }
}

// ---------------------------------------------------------------------------------------------
// contact

ContactSensor::ContactSensor(const World& world, const ArticulatedSystem& system, const std::string& body)
    : world_(world), sys_(system), body_(system.model().body_id(body)) {}

void ContactSensor::update() {
  const UseMarker::Scope in_use(sys_.use_marker(), "ContactSensor", "update");
  const Scalar dt = world_.time_step();
  count_ = 0;
  force_.setZero();
  Vec3 n_sum = Vec3::Zero();
  for (const BodyContactImpulse& c : sys_.contact_impulses()) {
    if (c.body != body_ || !c.touching()) continue;  // (margin contacts do not touch)
    ++count_;
    force_ += c.impulse / dt;
    if (c.contact >= 0 && c.contact < world_.contacts().size()) {
      const Contact& k = world_.contacts()[c.contact];
      // the contact normal points into side A; this body's outward-pointing normal is the one
      // pointing into it from the other side
      const bool is_a = k.object_a == sys_.collision_object() && k.body_a == body_;
      const Vec3 n = is_a ? k.normal : Vec3(-k.normal);
      n_sum += std::max<Scalar>(0, n.dot(c.impulse)) * n;
    }
  }
  const Scalar len = n_sum.norm();
  normal_ = len > 0 ? Vec3(n_sum / len) : Vec3::Zero();
}

// ---------------------------------------------------------------------------------------------
// force-torque

ForceTorqueSensor::ForceTorqueSensor(const World& world, const ArticulatedSystem& system, const std::string& joint,
                                     SensorNoise noise, std::uint64_t seed)
    : world_(world), sys_(system), body_(system.model().joint_id(joint)), noise_(noise), rng_(seed),
      data_(system.model()) {
  check_noise(noise, "force-torque sensor");
  f_ext_.assign(static_cast<std::size_t>(system.model().nb), Vec6::Zero());
  udot_ = VecX::Zero(system.nv());
  reset();
}

void ForceTorqueSensor::reset() {
  u_prev_ = sys_.u();
  force_.setZero();
  torque_.setZero();
}

void ForceTorqueSensor::update() { update(world_.time_step()); }

void ForceTorqueSensor::update(Scalar dt) {
  const UseMarker::Scope in_use(sys_.use_marker(), "ForceTorqueSensor", "update");
  const Model& m = sys_.model();
  udot_ = (sys_.u() - u_prev_) / dt;
  u_prev_ = sys_.u();
  forward_kinematics(m, data_, sys_.q());
  for (Vec6& f : f_ext_) f.setZero();
  for (const BodyContactImpulse& c : sys_.contact_impulses()) {
    if (c.body < 0) continue;
    const SE3& X = data_.oMi[c.body];
    const Vec3 f_B = X.R.transpose() * (c.impulse / dt);
    const Vec3 r_B = X.R.transpose() * (c.position - X.p);
    f_ext_[c.body].head<3>() += f_B;
    f_ext_[c.body].tail<3>() += r_B.cross(f_B);
  }
  rnea(m, data_, sys_.q(), sys_.u(), udot_, &f_ext_);
  const Vec6& f = data_.f[body_];
  for (int k = 0; k < 3; ++k) {
    force_[k] = noisy(f[k], noise_, rng_, normal_);
    torque_[k] = noisy(f[3 + k], noise_, rng_, normal_);
  }
}

// ---------------------------------------------------------------------------------------------
// height scan

std::vector<Vec2> HeightScan::grid(Scalar length, Scalar width, Scalar spacing) {
  IMPULSE_CHECK(std::isfinite(length) && std::isfinite(width) && std::isfinite(spacing) && length >= 0 && width >= 0 &&
                    spacing > 0 && length / spacing < 1e4 && width / spacing < 1e4,
                "height scan grid: length ", length, ", width ", width, " and spacing ", spacing,
                " must be finite, >= 0 and > 0");
  const int nx = static_cast<int>(std::floor(length / spacing + 1e-9)) + 1;
  const int ny = static_cast<int>(std::floor(width / spacing + 1e-9)) + 1;
  std::vector<Vec2> pts;
  pts.reserve(static_cast<std::size_t>(nx * ny));
  for (int i = 0; i < nx; ++i) {
    for (int j = 0; j < ny; ++j) pts.emplace_back((i - 0.5 * (nx - 1)) * spacing, (j - 0.5 * (ny - 1)) * spacing);
  }
  return pts;
}

HeightScan::HeightScan(const World& world, const ArticulatedSystem& system, const std::string& frame,
                       std::vector<Vec2> pattern, SensorNoise noise, std::uint64_t seed, Scalar ray_start,
                       Scalar max_distance)
    : world_(world), sys_(system), pattern_(std::move(pattern)), noise_(noise), rng_(seed), ray_start_(ray_start),
      max_distance_(max_distance), data_(system.model()) {
  const Model& m = system.model();
  const Index f = m.frame_id(frame);
  body_ = m.frames[f].body;
  X_BF_ = m.frames[f].X_BF;
  check_noise(noise, "height scan");
  IMPULSE_CHECK(std::isfinite(ray_start) && std::isfinite(max_distance) && max_distance > 0, "height scan: ray start ",
                ray_start, " must be finite and max distance ", max_distance, " finite and > 0");
  for (const Vec2& p : pattern_) IMPULSE_CHECK(p.allFinite(), "height scan: a pattern point is not finite");
  heights_ = VecX::Constant(static_cast<Index>(pattern_.size()), std::numeric_limits<Scalar>::quiet_NaN());
  points_.assign(pattern_.size(), Vec3::Zero());
  t_.assign(pattern_.size(), 0);
}

void HeightScan::update() {
  const UseMarker::Scope in_use(sys_.use_marker(), "HeightScan", "update");
  SE3 X_WF = X_BF_;
  if (body_ >= 0) {
    forward_kinematics(sys_.model(), data_, sys_.q());
    X_WF = data_.oMi[body_] * X_BF_;
  }
  // yaw-aligned: the heading of the frame's x axis in the horizontal plane
  const Scalar yaw = std::atan2(X_WF.R(1, 0), X_WF.R(0, 0));
  const Scalar c = std::cos(yaw), s = std::sin(yaw);
  // the ray origins, then all rays at once (one pass per terrain)
  const Scalar z0 = X_WF.p.z() + ray_start_;
  for (std::size_t k = 0; k < pattern_.size(); ++k) {
    const Vec2& p = pattern_[k];
    points_[k] = Vec3(X_WF.p.x() + c * p.x() - s * p.y(), X_WF.p.y() + s * p.x() + c * p.y(), z0);
  }
  world_.collision().raycast_static_down(points_.data(), points_.size(), max_distance_, t_.data());
  for (std::size_t k = 0; k < pattern_.size(); ++k) {
    if (t_[k] <= max_distance_) {
      const Scalar z = z0 - t_[k];
      heights_[static_cast<Index>(k)] = noisy(z, noise_, rng_, normal_);
      points_[k].z() = z;
    } else {
      heights_[static_cast<Index>(k)] = std::numeric_limits<Scalar>::quiet_NaN();
      points_[k] = Vec3::Constant(std::numeric_limits<Scalar>::quiet_NaN());
    }
  }
}

}  // namespace impulse
