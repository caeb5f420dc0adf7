// trot (Hwangbo 2018 sec. V-A, task 1): ANYmal trotting forward with diagonal leg pairs towards
// 1.5 m/s, under a small kinematic gait controller with body-velocity feedback:
//
//   gait     period T, diagonal pairs (LF, RH) and (RF, LH) alternate stance and swing, each for
//            T/2; the robot stands for t_stand first and the speed command ramps to v* in t_ramp.
//   frames   H: the heading frame (base position, yaw-only rotation psi of the base). Foot targets
//            are set in H, relative to the base origin, then turned into the base frame with the
//            measured roll and pitch (p_B = R^T R_H p_H), so the stance legs level the body.
//   stance   the foot target starts where the swing put it and moves backwards by v_cmd T/2 (and
//            by -omega_cmd x p for the heading correction omega_cmd = -k_psi psi), at height
//            -(h* - r) below the base origin: the stance pair carries the body forward.
//   swing    from the lift-off target to the Raibert foothold
//              p_land = p_nominal + v_cmd T/4 + k_v (v_H - v_cmd)          (xy, in H)
//            with a smooth-step in xy and a sine arc of height h_swing in z.
//   joints   per leg one damped Newton step of inverse kinematics per control step (3x3, warm
//            started from the last target), joint velocity targets by differencing the targets,
//            and the implicit joint PD of the engine (Kp, Kd) tracks them.
//   forces   stance legs get the feed-forward torque tau = -J^T R^T f, f the minimum-norm foot
//            forces giving the body wrench (virtual model: weight, forward-speed and attitude
//            terms), ramped in over the first 20 % of stance.
//
// Figures: mean forward speed over the last half of the run, height, fall detection.
#include <algorithm>
#include <array>
#include <cmath>

#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "scenarios/anymal_scenarios.hpp"

namespace impulse::scenarios {

namespace {

struct TrotParams {
  Scalar speed = 1.5;        // m/s, forward speed command v*
  Scalar period = 0.36;      // s, gait period T
  Scalar t_stand = 0.5;      // s, standing before the gait starts
  Scalar t_ramp = 3.0;       // s, speed command ramp
  Scalar height = 0.0;       // m, base height h* (0: nominal pose height)
  Scalar swing_height = 0.1; // m
  Scalar k_v = 0.15;         // s, Raibert velocity feedback
  Scalar k_psi = 2.0;        // 1/s, heading feedback
  Scalar omega_max = 0.5;    // rad/s
  Scalar kp = 150, kd = 6;   // joint PD
  Scalar k_att = 800;        // N m/rad, attitude stiffness of the stance forces
  Scalar d_att = 80;         // N m s/rad
  Scalar k_vel = 1.0;        // 1/s, horizontal velocity feedback of the stance forces
};

constexpr int kLegs = 4;
// Diagonal pairs: LF and RH swing together, RF and LH together.
constexpr std::array<int, kLegs> kPair = {0, 1, 1, 0};

Scalar smoothstep(Scalar s) { return s * s * (3 - 2 * s); }

class Trot final : public Scenario {
 public:
  explicit Trot(const ScenarioConfig& c) : Scenario("trot", c), kin_(robot_->model()), kd_(kin_) {
    const Model& m = kin_;
    for (const CollisionShape& s : m.collision) {
      if (s.type != ShapeType::Sphere) continue;
      const std::string& body = m.body_names[s.body];
      const int leg = body.rfind("LF", 0) == 0 ? 0 : body.rfind("RF", 0) == 0 ? 1 : body.rfind("LH", 0) == 0 ? 2 : 3;
      foot_body_[leg] = s.body;
      foot_offset_[leg] = s.X_BS.p;
      radius_ = s.size.x();
    }
    if (p_.height <= 0) p_.height = anymal_nominal_height();
    mass_ = m.total_mass();
    {
      VecX q0 = m.neutral_configuration();
      q0.tail(12) = anymal_nominal_joints();
      com_B_ = center_of_mass(m, kd_, q0);
    }
    qk_ = m.neutral_configuration();
    J3_.setZero(3, m.nv);
    // nominal foot positions in the base frame
    q_des_ = anymal_nominal_joints();
    u_des_.setZero(12);
    qk_.tail(12) = q_des_;
    forward_kinematics(m, kd_, qk_);
    for (int l = 0; l < kLegs; ++l) {
      nominal_[l] = point_position(kd_, foot_body_[l], foot_offset_[l]);
      nominal_[l].z() = -(p_.height - radius_);
      target_[l] = nominal_[l];
    }
    set_joint_pd_gains(*robot_, p_.kp, p_.kd);
    place(Vec3(0, 0, p_.height + 0.002), Quat::Identity(), q_des_);
    tau_.setZero(robot_->nv());
  }

  std::vector<Figure> figures() const override {
    const Scalar n = static_cast<Scalar>(std::max<long>(1, speed_samples_));
    return {{"speed_mean_mps", speed_sum_ / n},
            {"speed_command_mps", p_.speed},
            {"distance_m", robot_->q()[0]},
            {"base_height_min_m", height_min_},
            {"fallen", fallen_ ? 1.0 : 0.0}};
  }

 protected:
  void control() override {
    const Scalar dt = world_.time_step();
    const Scalar t = world_.time();
    const VecX& q = robot_->q();
    const VecX& u = robot_->u();
    const Quat Q(q[3], q[4], q[5], q[6]);
    const Mat3 R = Q.normalized().toRotationMatrix();
    const Scalar psi = std::atan2(R(1, 0), R(0, 0));
    const Mat3 RH = Eigen::AngleAxisd(psi, Vec3::UnitZ()).toRotationMatrix();
    const Mat3 R_BH = R.transpose() * RH;
    const Vec3 v_H = RH.transpose() * u.head<3>();

    // commands
    const Scalar ramp = std::clamp((t - p_.t_stand) / p_.t_ramp, 0.0, 1.0);
    const Scalar v_cmd = p_.speed * ramp;
    const Scalar omega = std::clamp(-p_.k_psi * psi, -p_.omega_max, p_.omega_max);
    const Scalar Ts = 0.5 * p_.period;

    // gait phase per leg: stance flag and phase s in [0, 1)
    const bool walking = t >= p_.t_stand;
    const Scalar phi = walking ? std::fmod(t - p_.t_stand, p_.period) / p_.period : 0.0;
    std::array<bool, kLegs> stance;
    std::array<Scalar, kLegs> s;
    for (int l = 0; l < kLegs; ++l) {
      const Scalar phase = kPair[l] == 0 ? phi : std::fmod(phi + 0.5, 1.0);
      stance[l] = !walking || phase < 0.5;
      s[l] = stance[l] ? 2 * phase : 2 * phase - 1;
      // phase transitions: remember where the target was
      if (stance[l] != was_stance_[l]) start_[l] = target_[l];
      was_stance_[l] = stance[l];
    }

    // foot targets in H
    for (int l = 0; l < kLegs; ++l) {
      const Vec3& n = nominal_[l];
      if (!walking) {
        target_[l] = n;
        start_[l] = n;
        continue;
      }
      if (stance[l]) {
        // the foot moves backwards with the body: -v_cmd along x, -omega x p around z
        const Vec3 sweep(-v_cmd * Ts - (-omega * n.y()) * Ts, -(omega * n.x()) * Ts, 0);
        target_[l] = start_[l] + s[l] * sweep;
        target_[l].z() = n.z();
      } else {
        Vec3 land = n;
        land.x() += 0.5 * v_cmd * Ts + p_.k_v * (v_H.x() - v_cmd);
        land.y() += p_.k_v * v_H.y() + 0.5 * (omega * n.x()) * Ts;
        land.x() += -0.5 * omega * n.y() * Ts;
        const Scalar a = smoothstep(s[l]);
        target_[l].head<2>() = (1 - a) * start_[l].head<2>() + a * land.head<2>();
        target_[l].z() = n.z() + p_.swing_height * std::sin(M_PI * s[l]);
      }
    }

    // inverse kinematics (one damped Newton step per leg) and feed-forward forces
    qk_.tail(12) = q_des_;
    compute_joint_jacobians(kin_, kd_, qk_);
    // stance forces (virtual model): the minimum-norm foot forces giving the body wrench
    //   F = m g e_z + m k_vxy (v_cmd - v)_xy,  tau = k_att (R e_z x e_z) - d_att (w_x, w_y, 0)
    std::array<Vec3, kLegs> f_W;
    {
      Vec3 F(0, 0, mass_ * 9.81);
      const Vec3 v_err = RH * Vec3(v_cmd, 0, 0) - u.head<3>();
      F.x() += mass_ * p_.k_vel * v_err.x();
      F.y() += mass_ * p_.k_vel * v_err.y();
      const Vec3 w = u.segment<3>(3);
      Vec3 tau = p_.k_att * (R * Vec3::UnitZ()).cross(Vec3::UnitZ()) - p_.d_att * Vec3(w.x(), w.y(), 0);
      tau.z() = -p_.d_att * (w.z() - omega);
      Eigen::Matrix<Scalar, 6, 12> A = Eigen::Matrix<Scalar, 6, 12>::Zero();
      for (int l = 0; l < kLegs; ++l) {
        if (!stance[l]) continue;
        const Vec3 r = R * point_position(kd_, foot_body_[l], foot_offset_[l]) - R * com_B_;
        A.block<3, 3>(0, 3 * l).setIdentity();
        A.block<3, 3>(3, 3 * l) << 0, -r.z(), r.y(), r.z(), 0, -r.x(), -r.y(), r.x(), 0;
      }
      Eigen::Matrix<Scalar, 6, 1> wrench;
      wrench << F, tau;
      const Eigen::Matrix<Scalar, 6, 6> AAt = A * A.transpose() + 1e-6 * Eigen::Matrix<Scalar, 6, 6>::Identity();
      const Eigen::Matrix<Scalar, 12, 1> f = A.transpose() * AAt.ldlt().solve(wrench);
      for (int l = 0; l < kLegs; ++l) {
        Vec3 fl = f.segment<3>(3 * l);
        fl.z() = std::max(0.0, fl.z());
        const Scalar ft = fl.head<2>().norm(), cap = 0.6 * fl.z();
        if (ft > cap) fl.head<2>() *= cap / ft;
        f_W[l] = fl;
      }
    }
    const VecX q_old = q_des_;
    tau_.setZero();
    for (int l = 0; l < kLegs; ++l) {
      const Vec3 p_B = R_BH * target_[l];
      const Vec3 p_now = point_position(kd_, foot_body_[l], foot_offset_[l]);
      point_jacobian(kin_, kd_, foot_body_[l], foot_offset_[l], J3_);
      const Mat3 J = J3_.block<3, 3>(0, 6 + 3 * l);
      const Mat3 A = J.transpose() * J + 1e-4 * Mat3::Identity();
      Vec3 dq = A.ldlt().solve(J.transpose() * (p_B - p_now));
      const Scalar norm = dq.norm();
      if (norm > 0.2) dq *= 0.2 / norm;
      q_des_.segment<3>(3 * l) += dq;
      if (stance[l]) {
        const Scalar w = walking ? std::min(1.0, s[l] / 0.1) : 1.0;
        tau_.segment<3>(6 + 3 * l) = -w * J.transpose() * (R.transpose() * f_W[l]);
      }
    }
    u_des_ = (q_des_ - q_old) / dt;
    VecX q_target = robot_->q_target();
    VecX u_target = VecX::Zero(robot_->nv());
    q_target.tail(12) = q_des_;
    u_target.tail(12) = u_des_;
    robot_->set_pd_targets(q_target, u_target);
    robot_->set_generalized_force(tau_);
  }

  void observe() override {
    const VecX& q = robot_->q();
    height_min_ = std::min(height_min_, q[2]);
    // fallen: the base is low or tilted more than 60 degrees
    const Quat Q(q[3], q[4], q[5], q[6]);
    const Scalar up = (Q.normalized().toRotationMatrix() * Vec3::UnitZ()).z();
    if (q[2] < 0.25 || up < 0.5) fallen_ = true;
    if (steps_ > 0 && world_.time() > p_.t_stand + p_.t_ramp) {
      // mean forward speed once the command has reached v*
      speed_sum_ += robot_->u()[0];
      ++speed_samples_;
    }
  }

 private:
  TrotParams p_;
  Model kin_;  // the robot model, evaluated with the base at the origin (base-frame kinematics)
  Data kd_;
  VecX qk_, q_des_, u_des_, tau_;
  MatX J3_;
  std::array<Index, kLegs> foot_body_{};
  std::array<Vec3, kLegs> foot_offset_, nominal_, target_, start_;
  std::array<bool, kLegs> was_stance_ = {true, true, true, true};
  Vec3 com_B_ = Vec3::Zero();
  Scalar radius_ = 0.03, mass_ = 0;
  Scalar height_min_ = 1e9, speed_sum_ = 0;
  long speed_samples_ = 0;
  bool fallen_ = false;
};

}  // namespace

std::unique_ptr<Scenario> make_trot(const ScenarioConfig& config) { return std::make_unique<Trot>(config); }

}  // namespace impulse::scenarios
