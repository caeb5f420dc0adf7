// Stepper: the stage list of one time step (DESIGN.md section 2; Hwangbo 2018 eq. 1-3).
//
//   prepare():  dynamics   per system: kinematics, Jacobians, M~ = M + dt (Kd + D) + dt^2 Kp,
//                          h (with external wrenches), L^T D L of M~, free velocity
//                          u_free = u + M~^-1 dt (tau + Kp (q* - q - dt u) + Kd (u* - u) - D u - h)
//               collision  world poses -> ContactSet
//               delassus   G, c, mu (contact and joint-limit rows)
//   finish():   solve      lambda = solver(G, c, mu), warm-started from the last step
//               integrate  u+ = u_free + M~^-1 J^T lambda,  q+ = q (+) dt u+  (semi-implicit Euler)
//
// World::integrate() runs both; World::integrate1()/integrate2() expose the halves so a user can
// read the contacts before the solve. Nothing here allocates once sizes have been seen.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "impulse/collision/collision_world.hpp"
#include "impulse/collision/contact.hpp"
#include "impulse/contact/delassus.hpp"
#include "impulse/solvers/contact_solver.hpp"

namespace impulse {

class ArticulatedSystem;

enum class StepStatus {
  Ok,
  SolverNotConverged,  // the solver hit its iteration limit; its last iterate was used
  SolverFailed,        // the solver reported a numerical issue; no contact impulse was applied
  NonFinite,           // the new state was not finite; the state was left unchanged
  ContactOverflow,     // more contacts than max_contacts; the extra ones were dropped
};
const char* to_string(StepStatus s);

// Microseconds spent in each stage of the last step.
struct StageTimes {
  double dynamics = 0, collision = 0, delassus = 0, solve = 0, integrate = 0;
  double total() const { return dynamics + collision + delassus + solve + integrate; }
};

struct StepStats {
  StepStatus status = StepStatus::Ok;
  Index contacts = 0;
  Index limits = 0;
  SolverResult solver;
  StageTimes times;
  Scalar max_penetration = 0;  // m, largest contact depth (0 when none penetrates)
};

struct StepSettings {
  Scalar dt = 1e-3;
  DelassusSettings contact;
  bool warm_start = true;
  Index max_contacts = 256;
};

class Stepper {
 public:
  Stepper();

  // (Re)allocates for the current systems; called by World when objects are added.
  void reserve(const std::vector<ArticulatedSystem*>& systems, const std::vector<Index>& object_system,
               const StepSettings& settings);
  void set_solver(std::unique_ptr<ContactSolver> solver);
  ContactSolver& solver() { return *solver_; }
  const ContactSolver& solver() const { return *solver_; }

  void prepare(const std::vector<ArticulatedSystem*>& systems, CollisionWorld& collision, const StepSettings& st);
  StepStatus finish(const std::vector<ArticulatedSystem*>& systems, const StepSettings& st);

  const ContactSet& contacts() const { return contacts_; }
  const DelassusAssembler& assembler() const { return assembler_; }
  const VecX& lambda() const { return lambda_; }
  // Impulse of contact i in the world frame, acting on side A (after finish()).
  Vec3 contact_impulse(Index i) const;
  const StepStats& stats() const { return stats_; }

 private:
  void warm_start(Index n);
  void remember();
  void report_impulses(const std::vector<ArticulatedSystem*>& systems);

  std::unique_ptr<ContactSolver> solver_;
  ContactSet contacts_;
  DelassusAssembler assembler_;
  std::vector<SystemView> views_;
  std::vector<Index> object_system_;
  std::vector<VecX> u_next_;
  VecX lambda_;
  StepStats stats_;
  bool prepared_ = false;

  // warm start: last step's impulses by contact identity (world frame) and by limit row
  struct Memory {
    Index object_a, shape_a, object_b, shape_b;
    Vec3 position;
    Vec3 impulse_W;
  };
  std::vector<Memory> memory_, memory_next_;
  struct LimitMemory {
    Index system, dof;
    Scalar sign, lambda;
  };
  std::vector<LimitMemory> limit_memory_, limit_memory_next_;
};

}  // namespace impulse
