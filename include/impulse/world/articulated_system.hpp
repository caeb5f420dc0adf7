// ArticulatedSystem: one dynamic object of a World (a robot from URDF or a free rigid body),
// with its state (q, u), inputs (generalized force, implicit joint PD, external wrenches) and
// queries (mass matrix, frames, Jacobians, contact impulses).
//
// Every setter validates its input (size, NaN/Inf, unit quaternions) and throws
// InvalidArgument naming the system and the problem; a failed call changes nothing. Setters and
// queries called while another thread steps the World throw ConcurrentUseError.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "impulse/collision/collision_world.hpp"
#include "impulse/core/exclusive_use.hpp"
#include "impulse/core/types.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/model/model.hpp"
#include "impulse/stepper/system.hpp"

namespace impulse {

class World;

class ArticulatedSystem {
 public:
  // Made by the World (add_articulated_system, add_free_body, ...). The Model is immutable and
  // may be shared by the systems of many Worlds (batched environments, World::clone): one copy in
  // memory and in the cache, whatever their number.
  ArticulatedSystem& operator=(const ArticulatedSystem&) = delete;

  const std::string& name() const { return name_; }
  const Model& model() const { return *model_; }
  // The shared description itself, to add the same robot to another World without a copy.
  const std::shared_ptr<const Model>& shared_model() const { return model_; }
  Index nq() const { return model_->nq; }
  Index nv() const { return model_->nv; }

  // state
  const VecX& q() const { return st_->q; }
  const VecX& u() const { return st_->u; }
  void set_q(const VecXcref& q);
  void set_u(const VecXcref& u);
  void set_state(const VecXcref& q, const VecXcref& u);
  // Throws what set_state(q, u) would throw (sizes, finite values, unit quaternions to 1e-3) and
  // changes nothing: a caller that sets many systems checks them all before setting any.
  void check_state(const VecXcref& q, const VecXcref& u) const;

  // explicit generalized force tau (layout of u), held until changed
  const VecX& generalized_force() const { return st_->tau; }
  void set_generalized_force(const VecXcref& tau);

  // Joint PD, applied implicitly (M + dt Kd + dt^2 Kp): tau_pd = Kp (q_target - q) + Kd (u_target - u)
  // evaluated at the end of the step. Gains have the layout of u and must be zero on the
  // floating base and on spherical joints; q_target has the layout of q, u_target that of u.
  void set_pd_gains(const VecXcref& kp, const VecXcref& kd);
  void set_pd_targets(const VecXcref& q_target, const VecXcref& u_target);
  const VecX& kp() const { return st_->kp; }
  const VecX& kd() const { return st_->kd; }
  const VecX& q_target() const { return st_->q_target; }
  const VecX& u_target() const { return st_->u_target; }

  // External force (world frame, applied at the world point p) or torque on a body, for the
  // next step only (cleared after it; a step rejected as non-finite keeps them).
  void set_external_force(Index body, const Vec3& force_W, const Vec3& point_W);
  void set_external_torque(Index body, const Vec3& torque_W);
  void clear_external_forces();

  // queries at the current state (computed on demand in a separate workspace)
  const MatX& mass_matrix() const;
  const VecX& nonlinear_effects() const;
  SE3 body_pose(Index body) const;
  SE3 frame_pose(const std::string& frame) const;
  Vec3 frame_linear_velocity(const std::string& frame) const;   // origin velocity, world frame
  Vec3 frame_angular_velocity(const std::string& frame) const;  // world frame
  MatX frame_jacobian(const std::string& frame) const;           // 6 x nv, world frame
  // Several frames (Model frame indices, checked) in one kinematics pass: out[7 k ..] the pose of
  // frame k as [x y z qw qx qy qz]; out[6 k ..] its origin's linear and angular velocity.
  void frame_poses(const std::vector<Index>& frames, Scalar* out) const;
  void frame_velocities(const std::vector<Index>& frames, Scalar* out) const;
  MatX point_jacobian(Index body, const Vec3& p_B) const;        // 3 x nv, world frame
  Scalar kinetic_energy() const;
  Scalar potential_energy() const;
  Vec3 center_of_mass() const;

  // Actuator torque applied in the last step, per dof (layout of u): the explicit force plus the
  // PD torque at the end of the step, within the URDF effort limit (and zero in the direction of
  // motion beyond the velocity limit); damping, friction and constraint forces not included.
  // (This is what the motor delivers: what a torque sensor on the actuator reads, and what a
  // policy trained on it may command. The joint's own friction acts beside it, below.)
  const VecX& applied_torque() const { return out_->tau_applied; }
  // Joint Coulomb friction torque of the last step, per dof (URDF <dynamics friction>): the box
  // row's impulse / dt, |tau_f| <= friction; 0 on dofs without friction. The net joint torque
  // is applied_torque() + joint_friction_torque() - damping * u (+ limit and contact forces).
  const VecX& joint_friction_torque() const { return out_->tau_friction; }

  // contact impulses on this system's bodies in the last step
  const std::vector<BodyContactImpulse>& contact_impulses() const { return out_->contact_impulses; }

  // collision filtering (RaiSim group/mask), for the whole system or one body
  void set_collision_filter(std::uint32_t group, std::uint32_t mask);
  void set_body_collision_filter(const std::string& body, std::uint32_t group, std::uint32_t mask);
  void set_self_collision(bool enabled);

  Index collision_object() const { return object_; }

  // The World's use marker (docs/threading.md): the setters and queries hold it, so a call made
  // while another thread steps the World is refused (ConcurrentUseError).
  const UseMarker& use_marker() const;

  // Prefetches the memory a step of this system uses (World::prefetch); with_data = false leaves
  // out its Data (a step with a StepWorkspace uses the workspace's).
  void prefetch_step(bool with_data = true) const;

 private:
  friend class World;
  // Made by World only: a system always belongs to one World, whose data holds its state.
  ArticulatedSystem(std::string name, std::shared_ptr<const Model> model);
  // A copy for World::clone(): the same name and Model (shared) and the scratch; the clone's
  // World points it at its own copy of the state (bind).
  ArticulatedSystem(const ArticulatedSystem& other);
  // Points the system at its state and outputs in its World's data (moved when the World's
  // systems are added or the World is cloned).
  void bind(World* world, SystemState* state, SystemOutputs* outputs) {
    world_ = world;
    st_ = state;
    out_ = outputs;
  }
  // The stepper's view of this system (its state, outputs and scratch), for World.
  StepperSystem stepper_system();
  void check_q(const VecXcref& q, const char* what) const;
  UseMarker::Scope use(const char* call) const { return UseMarker::Scope(use_marker(), "ArticulatedSystem", call); }
  void changed() const;  // an input or the state changed: the World prepares its next step anew

  std::string name_;
  std::shared_ptr<const Model> model_;  // never null
  SystemState* st_ = nullptr;           // state and inputs: the World's data (WorldData::systems)
  SystemOutputs* out_ = nullptr;        // the last step's outputs: the World's data

  // Gravity of the World (the Model's default outside one): the Data below and a workspace's
  // take it before they are used.
  Vec3 gravity_;
  // step scratch: the Data of a step without a StepWorkspace (made on the first such step: a
  // system stepped only with workspaces holds none) and the per-dof buffers
  std::unique_ptr<Data> data_;
  SystemScratch scratch_;

  // query workspace (made on the first query)
  mutable std::unique_ptr<Data> query_;
  Data& query() const;

  World* world_ = nullptr;  // set by bind() before the World hands the system out
  Index object_ = -1;
};

}  // namespace impulse
