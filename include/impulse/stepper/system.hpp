// StepperSystem: what the stepper reads and writes of a system (docs/architecture.md, "Module layering": the
// stepper does not know world/). The owner of the system (world/ArticulatedSystem) fills the
// pointers with its state, inputs and workspace; the stepper advances q and u, clears the external
// wrenches after the step and reports the contact impulses on the system's bodies.
#pragma once

#include <vector>

#include "impulse/core/types.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/model/model.hpp"

namespace impulse {

// A contact impulse acting on one body of a system during the last step (world frame). Every
// contact of the step is listed, also the pairs within the collision margin that did not touch
// (a foot skimming the ground, a body about to land): their impulse is zero.
struct BodyContactImpulse {
  Index body = -1;
  Vec3 position = Vec3::Zero();
  Vec3 impulse = Vec3::Zero();  // N s, acting on this body
  Index contact = -1;           // index in the step's ContactSet (World::contacts())

  // Impulses up to this size do not count as touching: 1e-6 N s is 1 mN over a 1 ms step, far
  // below what a robot's foot or a grasped object carries; open contacts are left at exactly 0.
  static constexpr Scalar kTouchImpulse = 1e-6;
  // Whether the contact carried an impulse, i.e. the bodies touched during the step.
  bool touching() const { return impulse.squaredNorm() > kTouchImpulse * kTouchImpulse; }
};

// Pointers (named as the owner's members) and read accessors named as ArticulatedSystem's, so the
// stage functions read the same for both.
struct StepperSystem {
  const Model* model_ = nullptr;
  Index object_ = -1;  // collision-world object of the system
  // state, advanced by Stepper::finish()
  VecX* q_ = nullptr;
  VecX* u_ = nullptr;
  // inputs: generalized force, implicit PD (gains, targets), external wrenches (body frame, per
  // body; cleared after the step)
  const VecX* tau_ = nullptr;
  const VecX* kp_ = nullptr;
  const VecX* kd_ = nullptr;
  const VecX* q_target_ = nullptr;
  const VecX* u_target_ = nullptr;
  Vec6Vector* f_ext_ = nullptr;
  bool* has_f_ext_ = nullptr;
  // workspace: dynamics data at q, u_free, q+, right-hand side
  Data* data_ = nullptr;
  VecX* u_free_ = nullptr;
  VecX* q_next_ = nullptr;
  VecX* rhs_ = nullptr;
  // actuator limits: per dof, the bound a clamped torque took, whether it was clamped, and the
  // actuator torque applied in the last step (output)
  VecX* tau_clamp_ = nullptr;
  std::vector<unsigned char>* clamped_ = nullptr;
  VecX* tau_applied_ = nullptr;
  // output: joint Coulomb friction torque of the last step (box row impulse / dt), per dof
  VecX* tau_friction_ = nullptr;
  // output: contact impulses on the system's bodies in the last step
  std::vector<BodyContactImpulse>* contact_impulses_ = nullptr;

  const Model& model() const { return *model_; }
  Index nv() const { return model_->nv; }
  const VecX& q() const { return *q_; }
  const VecX& u() const { return *u_; }
  const VecX& generalized_force() const { return *tau_; }
  const VecX& kp() const { return *kp_; }
  const VecX& kd() const { return *kd_; }
  const VecX& q_target() const { return *q_target_; }
  const VecX& u_target() const { return *u_target_; }
  void clear_external_forces() const {
    for (Vec6& f : *f_ext_) f.setZero();
    *has_f_ext_ = false;
  }
};

}  // namespace impulse
