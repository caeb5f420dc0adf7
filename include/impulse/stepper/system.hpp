// What the stepper reads and writes of a system (docs/architecture.md, "Module layering": the
// stepper does not know world/): its state and inputs (SystemState), the step's outputs
// (SystemOutputs) and per-dof scratch (SystemScratch), joined by StepperSystem. The World owns the
// first two in its WorldData and the scratch in each ArticulatedSystem; the stepper advances q
// and u, clears the external wrenches after the step and reports the contact impulses.
#pragma once

#include <cstdint>
#include <string>
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

// The state and inputs of one system: everything of it that determines its next steps. A
// World keeps one per system in its WorldData (world/world.hpp); a WorldState is a copy of them.
struct SystemState {
  std::string name;          // the system's name (a saved state names the system it belongs to)
  Index nq = 0, nv = 0, nb = 0;
  VecX q, u;                 // configuration (unit quaternions) and velocity
  VecX tau;                  // generalized force (layout of u), held until changed
  VecX kp, kd;               // implicit joint PD gains (layout of u)
  VecX q_target, u_target;   // PD targets (layouts of q and u)
  Vec6Vector f_ext;          // pending external wrench per body (body frame), nb entries
  bool has_f_ext = false;    // whether any entry of f_ext is non-zero (cleared after the step)
  // Free-flight history for the two-step velocity update (stepper/integrate.hpp, ab2_velocity):
  // the last step's smooth acceleration a = M^-1 (g - h) and its generalized input force
  // g = tau (within the actuator limits) + J^T f_ext, when that step was a free-flight step on
  // the midpoint rule; flight_dt is that step's dt, 0 when there is no history. A step applies it
  // only at the same dt; the setters of q and u (ArticulatedSystem), gravity and the Model drop it.
  Scalar flight_dt = 0;
  VecX flight_accel, flight_force;  // (layout of u; zero without a history)
  void drop_flight_history() {
    if (flight_dt == 0) return;
    flight_dt = 0;
    flight_accel.setZero();
    flight_force.setZero();
  }

  SystemState() = default;
  // At rest in the Model's neutral configuration, without inputs.
  SystemState(std::string system_name, const Model& model);

  // The vectors above with the length each has (nq or nv), in the order of the binary form
  // (docs/state-format.md), with the format version that added each (an older state's bytes
  // lack it: it reads as zeros): the serializer, its reader and restore_state's checks walk this
  // one table.
  enum class Length { Nq, Nv };
  struct VectorField {
    VecX SystemState::*member;
    Length length;
    const char* name;
    std::uint32_t since;
  };
  static const VectorField kVectorFields[9];
  Index length(const VectorField& f) const { return f.length == Length::Nq ? nq : nv; }
};

// What the last step reports of one system (beside its new q and u); a part of WorldData.
struct SystemOutputs {
  VecX tau_applied;   // per dof: actuator torque of the last step (within its limits)
  VecX tau_friction;  // per dof: joint Coulomb friction torque (box row impulse / dt)
  std::vector<BodyContactImpulse> contact_impulses;  // on the system's bodies

  SystemOutputs() = default;
  explicit SystemOutputs(const Model& model);
};

// Per-dof buffers of one system's step, rewritten by every step before they are read.
struct SystemScratch {
  VecX u_free;                        // velocity without constraint impulses
  VecX q_next;                        // q+ before it is accepted
  VecX rhs;                           // the dynamics stage's right-hand side
  VecX tau_clamp;                     // per dof: the bound the actuator torque was clamped to
  std::vector<unsigned char> clamped; // per dof: 1 when clamped (explicit, no implicit PD)
  VecX m_diagonal;                    // M's diagonal before the implicit terms (for a second pass)

  SystemScratch() = default;
  explicit SystemScratch(const Model& model);
};

// The stepper's view of one system: its Model and collision object, and where its state, outputs
// and scratch are. Read accessors are named as ArticulatedSystem's, so the stage functions read
// the same for both.
struct StepperSystem {
  const Model* model_ = nullptr;
  Index object_ = -1;              // collision-world object of the system
  SystemState* state_ = nullptr;   // advanced by Stepper::finish(); f_ext cleared after the step
  SystemOutputs* out_ = nullptr;   // written by the step
  SystemScratch* scratch_ = nullptr;
  Data* data_ = nullptr;           // dynamics data at q (the World's own or a workspace's)

  const Model& model() const { return *model_; }
  Index nv() const { return model_->nv; }
  const VecX& q() const { return state_->q; }
  const VecX& u() const { return state_->u; }
  const VecX& generalized_force() const { return state_->tau; }
  const VecX& kp() const { return state_->kp; }
  const VecX& kd() const { return state_->kd; }
  const VecX& q_target() const { return state_->q_target; }
  const VecX& u_target() const { return state_->u_target; }
  void clear_external_forces() const {
    for (Vec6& f : state_->f_ext) f.setZero();
    state_->has_f_ext = false;
  }
};

}  // namespace impulse
