// Sensors: what a robot's controller reads, computed from a World after each step. A module above
// world (sensors -> world -> stepper -> ...): sensors only read the World, never change it.
//
//   World world; ... ArticulatedSystem& robot = world.add_articulated_system(...);
//   Imu imu(world, robot, "imu_link");                       // a frame of the model
//   HeightScan scan(world, robot, "base", HeightScan::grid(1.0, 0.6, 0.1));
//   for (;;) { world.integrate(); imu.update(); scan.update(); use(imu.linear_acceleration()); }
//
// Every sensor allocates at construction only: update() and the readings allocate nothing and
// never throw (but for ConcurrentUseError while another thread steps or changes the World:
// docs/threading.md), so they can run every step of a control loop. update() must be called once after
// every World::integrate() (the IMU differentiates velocities over the step).
//
// Noise: each reading component gets value + bias + N(0, stddev^2), drawn from the sensor's own
// generator (std::mt19937_64 seeded by the user): runs are reproducible and sensors independent.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "impulse/dynamics/data.hpp"
#include "impulse/world/world.hpp"

namespace impulse {

using Vec2 = Eigen::Matrix<Scalar, 2, 1>;

struct SensorNoise {
  Scalar stddev = 0;  // white noise per component
  Scalar bias = 0;    // constant offset per component
};

// Inertial measurement unit at a frame of a robot. The accelerometer measures the specific force
// (acceleration minus gravity) of the frame origin, in the frame: a robot at rest reads +9.81 on
// its up axis. The acceleration is the velocity change over the last step divided by the step,
// so it contains every force of the step, contact impulses included. The gyroscope measures the
// angular velocity of the frame, in the frame.
class Imu {
 public:
  Imu(const World& world, const ArticulatedSystem& system, const std::string& frame, SensorNoise accelerometer = {},
      SensorNoise gyroscope = {}, std::uint64_t seed = 0);
  // Reads the system after a step (no allocation). The first call after construction or reset()
  // differentiates against the state at that time.
  void update(Scalar dt);
  void update();  // dt = the World's time step
  void reset();   // the current velocity becomes the reference of the next update
  const Vec3& linear_acceleration() const { return acc_; }  // m/s^2, frame coordinates
  const Vec3& angular_velocity() const { return gyro_; }    // rad/s, frame coordinates
  const Mat3& orientation() const { return R_; }            // true frame orientation in the world

 private:
  const World& world_;
  const ArticulatedSystem& sys_;
  Index body_;
  SE3 X_BF_;
  SensorNoise acc_noise_, gyro_noise_;
  std::mt19937_64 rng_;
  std::normal_distribution<Scalar> normal_{0.0, 1.0};
  Data data_;
  Vec3 v_prev_ = Vec3::Zero(), acc_ = Vec3::Zero(), gyro_ = Vec3::Zero();
  Mat3 R_ = Mat3::Identity();
  void kinematics(Vec3& v_W, Vec3& w_W);
};

// Joint position, velocity and actuation torque of every 1-dof joint (in model order), with
// optional noise. The torque is the generalized force applied by the user (set_generalized_force)
// plus the implicit PD torque evaluated at the end of the step, as the stepper applies it.
class JointSensor {
 public:
  explicit JointSensor(const ArticulatedSystem& system, SensorNoise position = {}, SensorNoise velocity = {},
                       SensorNoise torque = {}, std::uint64_t seed = 0);
  void update();
  const std::vector<std::string>& names() const { return names_; }
  const VecX& position() const { return q_; }
  const VecX& velocity() const { return u_; }
  const VecX& torque() const { return tau_; }

 private:
  const ArticulatedSystem& sys_;
  std::vector<std::string> names_;
  std::vector<Index> iq_, iv_;
  SensorNoise nq_, nu_, ntau_;
  std::mt19937_64 rng_;
  std::normal_distribution<Scalar> normal_{0.0, 1.0};
  VecX q_, u_, tau_;
};

// Contacts of one body in the last step: total force (impulse / dt, world frame), the mean contact
// normal weighted by the normal force, the number of contact points, and whether it touches.
// Only contacts that carried an impulse count (BodyContactImpulse::touching): a body within the
// collision margin of another, not touching it, is not in contact.
class ContactSensor {
 public:
  ContactSensor(const World& world, const ArticulatedSystem& system, const std::string& body);
  void update();
  bool in_contact() const { return count_ > 0; }
  Index count() const { return count_; }
  const Vec3& force() const { return force_; }    // N, world frame, acting on the body
  const Vec3& normal() const { return normal_; }  // unit, world frame (zero when not in contact)

 private:
  const World& world_;
  const ArticulatedSystem& sys_;
  Index body_;
  Index count_ = 0;
  Vec3 force_ = Vec3::Zero(), normal_ = Vec3::Zero();
};

// Wrench transmitted by a joint from its parent to its child body, as a force-torque sensor
// mounted in the joint measures it: [force; torque about the joint frame origin] in the joint
// frame. Computed by inverse dynamics (RNEA, RBDA Table 5.1) of the child's subtree with the
// accelerations of the last step and its contact forces.
class ForceTorqueSensor {
 public:
  ForceTorqueSensor(const World& world, const ArticulatedSystem& system, const std::string& joint,
                    SensorNoise noise = {}, std::uint64_t seed = 0);
  void update(Scalar dt);
  void update();
  void reset();
  const Vec3& force() const { return force_; }
  const Vec3& torque() const { return torque_; }

 private:
  const World& world_;
  const ArticulatedSystem& sys_;
  Index body_;
  SensorNoise noise_;
  std::mt19937_64 rng_;
  std::normal_distribution<Scalar> normal_{0.0, 1.0};
  Data data_;
  VecX u_prev_, udot_;
  Vec6Vector f_ext_;
  Vec3 force_ = Vec3::Zero(), torque_ = Vec3::Zero();
};

// Height scan: vertical rays cast down onto the static terrain (heightfields, planes, static boxes) from
// a pattern of points around a frame. The pattern is in the frame's yaw-aligned horizontal frame
// (x forward, y left; the frame's roll and pitch are ignored, as legged-robot policies use it).
// Readings: the terrain height under each point (world z), or NaN where no terrain was hit.
class HeightScan {
 public:
  // A centred grid of points spaced `spacing` covering length x width.
  static std::vector<Vec2> grid(Scalar length, Scalar width, Scalar spacing);

  HeightScan(const World& world, const ArticulatedSystem& system, const std::string& frame,
             std::vector<Vec2> pattern, SensorNoise noise = {}, std::uint64_t seed = 0, Scalar ray_start = 1.0,
             Scalar max_distance = 10.0);
  void update();
  Index size() const { return static_cast<Index>(pattern_.size()); }
  const VecX& heights() const { return heights_; }       // world z of the terrain, NaN: no hit
  const std::vector<Vec3>& points() const { return points_; }  // hit points, world frame

 private:
  const World& world_;
  const ArticulatedSystem& sys_;
  Index body_;
  SE3 X_BF_;
  std::vector<Vec2> pattern_;
  SensorNoise noise_;
  std::mt19937_64 rng_;
  std::normal_distribution<Scalar> normal_{0.0, 1.0};
  Scalar ray_start_, max_distance_;
  Data data_;
  VecX heights_;
  std::vector<Vec3> points_;
  std::vector<Scalar> t_;  // ray distances (scratch)
};

}  // namespace impulse
