// Stepper: the stage list of one time step (docs/architecture.md, "One step"; Hwangbo 2018 eq. 1-3).
//
//   prepare():  dynamics   per system: kinematics, Jacobians, M~ = M + dt (Kd + D) + dt^2 Kp,
//                          h (with external wrenches), L^T D L of M~, free velocity
//                          u_free = u + M~^-1 dt (tau + Kp (q* - q - dt u) + Kd (u* - u) - D u - h)
//               collision  world poses -> ContactSet; each moving object's margin grows by the
//                          distance it can travel in dt at u_free (speculative contacts)
//               rows       G, c = J u_free, mu (contact, joint-limit, joint-friction and mimic
//                          rows; DelassusAssembler::assemble)
//               targets    the position update per island, the targets b in c = J u_free - b
//                          (targets_stage, stepper/targets.hpp)
//   finish():   solve      lambda = solver(G, c, mu), warm-started from the last step; with the
//                          Poisson restitution law, a restitution phase on impact steps (below)
//               integrate  u+ = u_free + M~^-1 J^T lambda,  q+ = q (+) dt (u+ + u_p)
//                          (PositionUpdate::Midpoint: in free flight and in an island with one
//                          impact, q+ = q (+) dt [(u + u_free)/2 + M~^-1 J^T (w o lambda)], the
//                          impulse from its time of impact; the default, Bodies, does so for the
//                          systems that are one free rigid body; stepper/integrate.hpp,
//                          docs/fidelity.md)
//                          (semi-implicit Euler; u_p the split position correction, below)
//                          In free flight (no rows), a system without implicit terms in M~
//                          (no PD gains, no joint damping) on the midpoint update takes Heun's
//                          velocity update u+ = (u + u_free)/2 + dt/2 a(q+, u_free): one more
//                          ABA, second order (Bodies: every such system, articulated ones only
//                          while in flight)
//
// Split position correction (PositionCorrection::Split, the default; Catto's split impulse). The
// penetration beyond the slop is removed by a pseudo-velocity that moves q but is not kept in u, so
// the correction adds no kinetic energy (with the velocity-level erp target the push-out velocity
// stays in u: ANYmal hanging by its feet gained up to 1.5e-3 of its energy in one step). On the
// unilateral rows U (contact normals, limits) of the same G, with b_p = erp max(0, depth - slop)/dt
// (zero on rows within the slop, which still may not be pushed in):
//   0 <= lambda_p  _|_  G_UU lambda_p - b_p >= 0          (frictionless LCP, projected Gauss-Seidel;
//                                                          after 10 sweeps, islands up to 256
//                                                          unilateral rows go to the exact
//                                                          active-set QP of bound_qp.hpp; both
//                                                          stop at rounding or at a push-out
//                                                          velocity within 1e-9 m/s)
//   u_p = M~^-1 J_U^T lambda_p
// ANYmal hanging by its feet then never gains energy after the collapse (largest one-step change
// -1.7e-8 E0, velocity-level: +1.1e-5 E0) and sinks less (mean 1.3e-5 m vs 2.2e-5 m). With the
// push-out target gone the velocity problem of the stretched legs (feet plus limit rows,
// rank-deficient G) is exactly consistent, and plain block SOR converged slowly on it (~400
// sweeps per step instead of ~15); that kept Split optional until bisection's Anderson mixing
// became the default (about 13 sweeps per step on hang; docs/architecture.md).
//
// Restitution phase (RestitutionLaw::Poisson, DelassusSettings). The targets stage leaves the
// bounce out of the targets, so the first solve is the inelastic (compression) impulse lambda_c. For the
// normal rows that bounce (e > 0, approach above the threshold, lambda_c,n > 0):
//   kick      lambda_r = s e sigma lambda_c,n           (Poisson's hypothesis: restitution impulse
//                                                      e times the compression impulse)
//             sigma = v_n- / v_n,f when v_n,f < v_n- < 0, else 1: the impact's share of lambda_c,n,
//             which also cancels this step's smooth impulse (gravity m g dt); returning that too
//             gave a ball with e = 1 +0.96 J per bounce. For one contact v+ = -e v-, which under
//             semi-implicit Euler keeps the ball's discrete energy (v - g dt/2)^2/2 + g z exactly
//             at e = 1 (tests/stepper/test_restitution.cpp: apex within 1e-6 over 100 bounces).
//   bound     s in [0, 1] largest with  E_r(s) <= eps^2 E_c   (after Stronge's energetic
//             coefficient: the restitution impulse gives back at most eps^2 of the kinetic energy the
//             compression absorbed; eps^2 = |lambda_r|_G^2 / |lambda_c,n|_G^2, = e^2 when uniform)
//               E_c    = -(lambda_c^T v_f + 1/2 lambda_c^T G lambda_c)     absorbed by the first solve
//               E_r(s) = s lambda_r^T v_c + 1/2 s^2 lambda_r^T G lambda_r  released by the kick
//             with v_f = J u_free and v_c = v_f + G lambda_c the actual (target-free) velocities
//   correct   a second solve from v_c + G lambda_r (inelastic, frictional): the kick may drive
//             other contacts into the ground or make stuck ones slide; this impulse dissipates.
// Total lambda = lambda_c + lambda_r + lambda_2, in the cone (each part is). The kinetic energy
// change of the impact is then <= -(1 - eps^2) E_c <= 0. For one contact both laws give
// v_n+ = -e v_n- exactly.
//
// Speculative impacts (both laws). A contact apart at the start of the step and not closed by the
// velocities before the solve has the speculative target v+ >= -gap/dt: the bodies may close the
// gap but not pass it. When the solve itself drives them together (a ball struck by another and
// pushed into a third, a chain of impacts within one step), that target stops the approach at
// the surface like a plastic impact, and the next step sees the touching contact with only
// -gap/dt of the approach left to bounce: 6 % of the energy of SimBenchmark's elastic 216 balls
// was lost this way over 3 s. So after the solve, each elastic speculative row that took an
// impulse gets Newton's target v+ >= -e v_hit, with v_hit the approach it stopped (its velocity
// after the solve less its own impulse's part, G_rr lambda_r), and the island is solved again
// from the first answer. The bodies part before they touch (q moves with v+), which keeps the
// overlap at zero. Bound: the second answer may give back at most e_max^2 of the kinetic
// energy the first one absorbed (Delta K = lambda^T v_f + 1/2 lambda^T G lambda relative to the
// free motion, the largest step towards it that keeps that; as the Newton bound below).
//
// Newton bound (RestitutionLaw::Newton). The target v_n+ >= e v_approach alone can add energy with
// friction (Kane and Levinson's paradox: with mu = 0.5, e = 0.7 the 12-link pendulum gained 521 J,
// 54 %, at its first floor impact). On a step with such targets the stepper also solves the
// inelastic problem (targets without restitution) for lambda_0, with Delta K_0 = the kinetic
// energy it adds to the free motion (<= 0 without push-out targets), and takes the largest s in
// [0, 1] with  Delta K(lambda_0 + s (lambda_N - lambda_0)) <= (1 - e_max^2) Delta K_0, i.e. the
// same bound as Poisson's: the restitution gives back at most e^2 of the absorbed energy. The
// combination stays in the cones and above the inelastic targets; s = 1 on ordinary impacts.
//
// Islands (contact/delassus.hpp): the solve, the restitution phase and the split position
// correction run per island, each on its own problem (dense or factored G), warm-started from
// the global impulse vector and written back to it; the integrate stage applies the global lambda.
//
// State and scratch: everything the next step depends on besides the systems' q and u (the
// warm-start memory, StepperCache) and what the step reports (contacts, impulses, StepStats) is in
// the caller's StepperState; everything else the Stepper holds is scratch that each step rewrites
// before reading it, so one Stepper may serve many Worlds of one layout in turn.
//
// World::integrate() runs both; World::integrate1()/integrate2() expose the halves so a user can
// read the contacts before the solve. Nothing here allocates once sizes have been seen.
#pragma once

#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "impulse/collision/collision_world.hpp"
#include "impulse/collision/contact.hpp"
#include "impulse/contact/delassus.hpp"
#include "impulse/solvers/bound_qp.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "impulse/stepper/system.hpp"
#include "impulse/stepper/targets.hpp"

namespace impulse {

enum class StepStatus {
  Ok,
  SolverNotConverged,  // the solver hit its iteration limit; its last iterate was used
  SolverFailed,        // the solver reported a numerical issue; no contact impulse was applied
  NonFinite,           // the new state was not finite; the state was left unchanged
  ContactOverflow,     // more contacts than max_contacts; the extra ones were dropped
                       // (StepStats::contacts_dropped)
};
const char* to_string(StepStatus s);

// Microseconds spent in each stage of the last step (delassus: the constraint rows and their
// targets).
struct StageTimes {
  double dynamics = 0, collision = 0, delassus = 0, solve = 0, integrate = 0;
  double total() const { return dynamics + collision + delassus + solve + integrate; }
};

// One island's solve in the last step (StepStats::island_results): its size and the solver's
// result for it, after the restitution and impact phases: status, sweeps (or the solver's own
// unit), residual, whether a sweeping solver stopped on a plateau (`stalled`: not at its
// iteration cap) and the exact stage that finished it (`method`).
struct IslandResult {
  Index systems = 0;   // dynamic systems
  Index contacts = 0;  // contacts (three rows each, or one row when frictionless)
  Index rows = 0;      // rows of the island's problem (contacts, limits, joint friction, mimic)
  SolverResult solver;
  // the iteration budget ran out (not converged and not stopped on a plateau)
  bool at_cap() const { return solver.status == SolverStatus::MaxIterations && !solver.stalled; }
};

struct StepStats {
  StepStatus status = StepStatus::Ok;
  Index contacts = 0;
  Index limits = 0;
  Index friction_rows = 0;     // joint Coulomb friction (box) rows
  Index mimic_rows = 0;        // mimic-joint couplings (equality rows)
  Index contacts_dropped = 0;  // contacts refused by the max_contacts cap (at least this many)
  // islands with constraint rows, dynamic systems in the largest, rows of the largest problem,
  // and islands whose solve did not converge
  Index islands = 0;
  Index largest_island = 0;
  Index largest_island_rows = 0;
  Index islands_not_converged = 0;
  Index islands_active_set = 0;  // islands the active-set stage finished (SolverMethod::ActiveSet)
  Index islands_newton = 0;      // islands the semismooth Newton stage finished (SolverMethod::SemismoothNewton)
  // over the islands: worst status, most sweeps (iterations), largest residual, and an exact
  // stage that finished one of them (method: the last such island's)
  SolverResult solver;
  StageTimes times;
  Scalar max_penetration = 0;  // m, largest contact depth (0 when none penetrates)
  // Poisson restitution: true if the step had a restitution phase, and the scale s of its kick
  // (1: full Poisson impulse e lambda_c,n; < 1: limited by the energy bound)
  bool restitution = false;
  Scalar restitution_scale = 1;
  // Split position correction: rows that pushed out this step, the most Gauss-Seidel sweeps of
  // an island (plus the free-set changes of the exact QP, when it took over), the islands
  // that went to the exact QP, and the islands whose push-out ended at its budget unconverged
  Index position_rows = 0;
  Index position_sweeps = 0;
  Index position_exact = 0;
  Index position_not_converged = 0;
  // Speculative rows with restitution that stopped an approach within the step and were re-solved
  // as impacts (Newton's law at the approach they stopped; see the top of this file)
  Index speculative_impacts = 0;
  // per island, in the order of the solve (the aggregates above are over these); its storage is
  // kept from step to step
  std::vector<IslandResult> island_results;

  // Zeroes every figure, keeping island_results' storage (a step allocates nothing once the
  // island count has been seen).
  void reset() {
    std::vector<IslandResult> keep = std::move(island_results);
    *this = StepStats();
    keep.clear();
    island_results = std::move(keep);
  }
};

struct StepSettings {
  Scalar dt = 1e-3;
  DelassusSettings contact;
  bool warm_start = true;
  Index max_contacts = ContactSet::kDefaultCapacity;  // safety cap; storage grows with use
  // Per-stage wall times in StepStats::times: 8 clock reads per step, about 2 % of a robot's
  // step on this machine, so off by default (the times read 0), as MuJoCo's timers are off until
  // a clock callback is set. The CLI's run, demo and bench commands turn them on.
  bool stage_timing = false;
};

// Warm-start memory: last step's impulses by contact identity (world frame) and by limit row,
// each list sorted by its key for the lookup. Joint friction rows are kept with the limit rows,
// with sign 0, and mimic rows with sign 2 (so WorldState carries them without a format change).
struct ContactMemory {
  Index object_a, shape_a, object_b, shape_b;
  Vec3 position;
  Vec3 impulse_W;
};
struct LimitMemory {
  Index system, dof;
  Scalar sign, lambda;  // sign: +1 lower limit, -1 upper limit, 0 joint friction row, 2 mimic row
};
struct StepperCache {
  std::vector<ContactMemory> contacts;
  std::vector<LimitMemory> limits;
};

// What a step leaves for the next one and for the caller, per World (the World's data, not
// scratch): the warm-start memory, the contacts of the last step with their impulses, and its
// statistics. The Stepper reads and writes the StepperState it is given; everything else it holds
// is scratch, rewritten by each step, so one Stepper serves any number of Worlds of one layout in
// turn (a thread's StepWorkspace) with the same results, bit for bit.
struct StepperState {
  StepperCache cache;
  ContactSet contacts;
  // per contact of `contacts`: its impulse in the world frame, acting on side A; zero until a
  // solve answered the contacts (after prepare() alone, or a step the World skipped)
  std::vector<Vec3> contact_impulses;
  StepStats stats;
  void clear() {
    cache.contacts.clear();
    cache.limits.clear();
    contacts.clear();
    contact_impulses.clear();
    stats.reset();
  }
};

// The step's scratch memory and the stage functions over it. reserve() sizes it for a layout (the
// systems' Models in order and the collision objects' systems); prepare() and finish() then take
// a solver (its workspace), the World's solver (its settings: the same solver, or one of the same
// type) and the World's StepperState.
class LanesPending;  // stepper/lanes_step.hpp

class Stepper {
 public:
  Stepper() = default;

  // Reads the systems' models (limited joints); called when the layout changes. The per-contact
  // buffers grow during stepping.
  void reserve(const std::vector<StepperSystem>& systems, const std::vector<Index>& object_system);

  void prepare(const std::vector<StepperSystem>& systems, CollisionWorld& collision, const StepSettings& st,
               ContactSolver& solver, const ContactSolver& solver_settings, StepperState& state);
  StepStatus finish(const std::vector<StepperSystem>& systems, const StepSettings& st, ContactSolver& solver,
                    const ContactSolver& solver_settings, StepperState& state);
  // prepare() in two halves (the same bits), for a batched step that computes the islands' G of
  // several Worlds together (batch::WorldLanes, contact/delassus_lanes.hpp) between them:
  // prepare_rows() runs the dynamics and collision stages and the rows without their G
  // (DelassusAssembler::assemble_rows), prepare_targets() the G still pending and the targets.
  // defer_paths: the rows' path work too is left pending (DelassusAssembler::set_defer_paths),
  // for the batched step to compute it in lanes with the G.
  void prepare_rows(const std::vector<StepperSystem>& systems, CollisionWorld& collision, const StepSettings& st,
                    ContactSolver& solver, StepperState& state, bool defer_paths = false);
  void prepare_targets(const StepSettings& st, StepperState& state);
  // Between the halves: the assembler and the systems' views it reads.
  DelassusAssembler& pending_rows() { return assembler_; }
  const std::vector<SystemView>& system_views() const { return views_; }
  // finish() in two halves (the same bits), for a batched step that computes the velocity update
  // u+ = u_free + M~^-1 J^T lambda of several Worlds together between them (contact/
  // delassus_lanes.hpp, DelassusLanes::update_velocities): finish_solve() solves the islands
  // (solved_lambda()), finish_update() updates the velocities, unless set_velocity_update()
  // said they are in velocity_update(), and the positions, and reports.
  void finish_solve(const StepSettings& st, ContactSolver& solver, const ContactSolver& solver_settings,
                    StepperState& state);
  // finish_solve()'s start, for a batched step that solves the islands of several Worlds together
  // (batch/bisection_lanes.hpp): begin_solve() sizes the buffers and writes the warm start into
  // solved_lambda(); set_presolved() hands over island 0's solution (its m local rows) and result,
  // which finish_solve() then takes instead of calling the solver, the rest as usual.
  void begin_solve(const StepSettings& st, ContactSolver& solver, StepperState& state);
  void set_presolved(const Scalar* lambda, Index m, const SolverResult& result);
  StepStatus finish_update(const std::vector<StepperSystem>& systems, const StepSettings& st, StepperState& state);
  // Between the halves: the solution (global rows: the assembler's num_rows() first entries) and
  // the per-system velocity update u+, which finish_update() takes as computed when told so.
  const VecX& solved_lambda() const { return lambda_; }
  std::vector<VecX>& velocity_update() { return u_next_; }
  void set_velocity_update() { velocity_updated_ = true; }

  // The contact problem of the last prepare() and its solution (global rows).
  const DelassusAssembler& assembler() const { return assembler_; }
  const VecX& lambda() const { return lambda_; }
  // How the last finish() moved each system's q (in system order): 0 semi-implicit Euler, with u+
  // or, under the split correction or per-row weights, with u_free + M~^-1 J^T lambda_q; 1 the
  // midpoint update; 2 the midpoint update with Heun's velocity update (free flight); 3 the
  // midpoint update with the two-step velocity update (free flight with a history, ab2_velocity).
  const std::vector<unsigned char>& position_modes() const { return position_mode_; }
  // lambda_q of the last finish() (global rows): lambda + lambda_p under the split correction
  // (lambda_p its push-out impulses), w o lambda (+ lambda_p) under per-row position weights;
  // meaningful only when position_separate() is true.
  const VecX& position_impulses() const { return lambda_p_; }
  bool position_separate() const { return separate_; }

  // The list of systems whose first dynamics pass is in SIMD lanes (lanes_step.hpp; its
  // StepWorkspace's, set when the workspace makes this Stepper); null: none.
  void set_lanes_pending(LanesPending* pending) { lanes_pending_ = pending; }

  // Bytes held by the stepper's growable buffers (assembler included; solver and state not).
  std::size_t memory_bytes() const;
  // Prefetches the buffers the last step used (World::prefetch; a hint).
  void prefetch_step() const;

 private:
  // What the solve stage's helpers borrow for one finish(): the solver (its workspace), the
  // solver whose settings it solves with, and the step's statistics.
  struct SolveContext {
    ContactSolver& solver;
    const ContactSolver& settings;
    StepStats& stats;
  };
  // impulse of contact i of the step (world frame, on side A); zero before the solve
  Vec3 contact_impulse(Index i) const;
  void warm_start(Index n, const StepperState& state);
  void remember(StepperState& state);
  void report_impulses(const std::vector<StepperSystem>& systems, StepperState& state);
  // Poisson restitution phase on one island's solved problem (see the top of this file); lambda
  // holds lambda_c on entry and the total impulse on exit (r: the island's solver result, gets the
  // second solve's sweeps). Returns false if nothing bounced.
  bool restitution_phase(const SolveContext& ctx, const IslandView& isl, VecXref lambda, SolverResult& r,
                         Scalar threshold);
  // Split position correction of one island: lambda_p into lp (local rows; see the top of this file).
  void position_correction(StepStats& stats, const IslandView& isl, VecXref lp);
  void grow(Index n_rows, Index n_island, ContactSolver& solver);
  // Newton law: bounds one island's impulse of a step with restitution targets (top of this file).
  void newton_bound(const SolveContext& ctx, const IslandView& isl, VecXref lambda, SolverResult& r);
  // Speculative impacts of one island's solved problem (top of this file): re-solves with Newton
  // targets on the elastic speculative rows that stopped an approach; false if there were none.
  // c: the solved problem's linear term (the island's, or the restitution phase's correction).
  bool speculative_impacts(const SolveContext& ctx, const IslandView& isl, const VecXcref& c, VecXref lambda,
                           SolverResult& r, Scalar threshold);

  DelassusAssembler assembler_;
  LanesPending* lanes_pending_ = nullptr;
  PositionUpdatePlan plan_;       // the targets stage's choice of position update per system
  std::vector<SystemView> views_;
  std::vector<Index> object_system_;
  std::vector<VecX> u_next_;
  bool velocity_updated_ = false;  // u_next_ holds this step's u+ (set_velocity_update)
  bool solve_begun_ = false;       // begin_solve() ran, finish_solve() not yet
  bool presolved_ = false;         // ll_ holds island 0's solution (set_presolved)
  SolverResult presolved_result_;
  VecX lambda_;                   // global rows
  VecX lambda_p_;                 // split position correction impulse (global rows)
  std::vector<unsigned char> position_mode_;  // per system: position_modes()
  bool separate_ = false;         // position_separate()
  VecX ll_, lp_;                  // one island's lambda and lambda_p (local rows)
  DelassusProduct product_;       // G x of an island (restitution phase, split correction)
  std::vector<unsigned char> position_var_;  // split correction: the unilateral rows (local)
  VecX position_c_;                          // and its linear term -b_p (local rows)
  ActiveSetWorkspace position_qp_;           // its exact QP (bound_qp.hpp)
  VecX kick_, v_, c2_, lambda2_;  // restitution phase: lambda_r, velocities, second problem
  VecX spec_v_, spec_c_, spec_l_, spec_g_;  // speculative impacts: velocities, problem, answer, G answer
  std::vector<unsigned char> spec_done_;  // per contact of the island: its row took an impact target
  std::vector<VecX> u_pos_;       // per system: u+ + u_p, the velocity that moves q
  // per system: the step's smooth acceleration and generalized input force (the free-flight
  // history it leaves, SystemState::flight_accel and flight_force)
  std::vector<VecX> accel_next_, force_next_;
  Vec6Vector spec_twist_;         // per body: world twist at u_free (speculative margin)
  bool solved_ = false;  // lambda_ answers the assembled contacts (finish() ran after prepare())
  std::vector<ContactMemory> memory_next_;
  std::vector<LimitMemory> limit_memory_next_;
};

// Prefetches the parts of a StepperState a step reads (World::prefetch; a hint).
void prefetch_state(const StepperState& state);

}  // namespace impulse
