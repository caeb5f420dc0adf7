#include "impulse/stepper/stepper.hpp"

#include "impulse/core/check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "impulse/core/finite.hpp"
#include "impulse/core/prefetch.hpp"
#include "impulse/dynamics/free_body.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "impulse/model/actuator.hpp"
#include "impulse/solvers/bound_qp.hpp"
#include "impulse/stepper/integrate.hpp"
#include "impulse/stepper/lanes_step.hpp"
#include "../core/isa_dispatch.hpp"

namespace impulse {

const char* to_string(StepStatus s) {
  switch (s) {
    case StepStatus::Ok: return "ok";
    case StepStatus::SolverNotConverged: return "solver not converged";
    case StepStatus::SolverFailed: return "solver failed";
    case StepStatus::NonFinite: return "non-finite state";
    case StepStatus::ContactOverflow: return "contact overflow";
  }
  return "unknown";
}

namespace {

using Clock = std::chrono::steady_clock;
// Stage times: lap() returns the microseconds since the last boundary and starts the next stage
// (one clock read per stage boundary: the reads cost about 2 % of a robot's step); with timing
// off (StepSettings::stage_timing) no clock is read and every stage reads 0.
class StageClock {
 public:
  explicit StageClock(bool on) : on_(on) {
    if (on_) t0_ = Clock::now();
  }
  double lap() {
    if (!on_) return 0;
    const Clock::time_point t = Clock::now();
    const double us = std::chrono::duration<double, std::micro>(t - t0_).count();
    t0_ = t;
    return us;
  }

 private:
  bool on_;
  Clock::time_point t0_;
};

// Pass 1's clamps (the explicit torque's first guess) into clamped and tau_clamp; whether any
// scalar dof has an actuator limit.
inline bool first_clamps(const StepperSystem& s, Scalar dt, VecX& tau_clamp, std::vector<unsigned char>& clamped) {
  const Model& m = s.model();
  const VecX& q = s.q();
  const VecX& u = s.u();
  const VecX& tau = s.generalized_force();
  constexpr Scalar inf = std::numeric_limits<Scalar>::infinity();
  const Scalar* const kp = s.kp().data();
  const Scalar* const kd = s.kd().data();
  const Scalar* const q_target = s.q_target().data();
  const Scalar* const u_target = s.u_target().data();
  std::fill(clamped.begin(), clamped.end(), 0);
  bool limited = false;
  for (Index i = 0; i < m.nb; ++i) {
    if (m.nv_joint[i] != 1) continue;
    const Index k = m.idx_v[i], iq = m.idx_q[i];
    Scalar lo, hi;
    actuator_bounds(m, k, u[k], lo, hi);
    if (!(lo > -inf) && !(hi < inf) && !(m.velocity_limit[k] > 0 && m.velocity_limit[k] < inf)) continue;
    limited = true;
    // explicit: the first guess of the clamps (actuator_torque of dynamics_stage at v = u)
    const Scalar t = tau[k] + kp[k] * (q_target[iq] - q[iq] - dt * u[k]) + kd[k] * (u_target[k] - u[k]);
    if (t < lo || t > hi) clamped[static_cast<std::size_t>(k)] = 1, tau_clamp[k] = std::clamp(t, lo, hi);
  }
  return limited;
}

// Dynamics stage of one system: Jacobians and poses at q, M~ factored, u_free.
//   M~ = M + dt (Kd + D) + dt^2 Kp           (implicit PD and joint damping D, docs/architecture.md, "One step")
//   u_free = u + M~^-1 dt (tau + Kp (q* - q - dt u) + Kd (u* - u) - D u - h + J^T f_ext)
// The PD torque is evaluated at the end of the step (q + dt u+, u+), which is what makes stiff
// gains stable at 1 ms; moving its u+ terms to the left gives M~.
//
// Actuator limits (URDF <limit effort velocity>, docs/fidelity.md item 5). The actuator torque of a
// scalar joint, tau_k + PD_k, must lie in [lo, hi] = [-effort, effort], narrowed to [-effort, 0]
// when u_k >= velocity limit and to [0, effort] when u_k <= -velocity limit (the motor cannot
// drive the joint faster; gravity or contacts still can). A joint whose actuator torque would
// leave the interval is *clamped*: its torque is the bound, applied explicitly, and its PD is no
// longer implicit (no Kp, Kd in M~ for that dof): a saturated motor is a constant torque source
// whose output does not respond to the motion within the step, so keeping dt Kd + dt^2 Kp in M~
// would model a stiffness the motor no longer has (and let the PD exceed the limit through
// the implicit terms). The test for the implicit PD torque needs u_free, so the stage is:
//   pass 1: clamp the joints whose explicit torque tau + Kp (q* - q - dt u) + Kd (u* - u) is out
//           of bounds; solve with implicit PD on the others;
//   pass 2 (only if some implicit PD torque at u_free, tau + Kp (q* - q - dt u_free) +
//           Kd (u* - u_free), is out of bounds, or a clamped joint's is no longer beyond the
//           bound it is clamped at): clamp those, release these, solve again (up to 3 passes).
// The step applies the implicit torque, so the clamps must agree with it; the explicit torque only
// guesses them in pass 1, which saves the second pass whenever it guesses right (a policy pushing
// at its limits clamps in most steps). It guesses wrong for a stiff PD on a light link: a fallen
// Talos's foot in the air at u = +6.25 rad/s asked for -1190 N m, clamped at -100 N m, which
// flipped u to -6.25, which asked for +1190 N m, and so on, a period-2 cycle forever; the
// implicit PD's own end-of-step torque is within the limit, so pass 2 releases the clamp and the
// foot stops. For a single joint the end-of-step torque decreases with the applied one, and the
// passes reach the exact saturated torque tau* = clamp(PD(u+(tau*))).
// Joints without finite limits never take a second pass. The implicit torque is decided on the
// free motion: contact impulses within the step still act through M~ on unclamped joints (the
// reported torque, applied_torque(), is the end-of-step value, exact either way).
void dynamics_stage(const StepperSystem& s, Scalar dt, VecX& rhs, const Vec6Vector& f_ext, bool has_f_ext, Data& d,
                    VecX& u_free, VecX& tau_clamp, std::vector<unsigned char>& clamped, VecX& m_diagonal,
                    LanesPending* lanes) {
  const Model& m = s.model();
  const VecX& q = s.q();
  const VecX& u = s.u();
  const VecX& tau = s.generalized_force();
  constexpr Scalar inf = std::numeric_limits<Scalar>::infinity();
  // actuator torque of scalar dof k (q index iq) when the step ends at velocity v: tau + PD at
  // (q + dt v, v)
  // (the gains' and targets' data pointers read once: reached through StepperSystem's pointers in
  // the loops, GCC 12 re-read both levels on every iteration; -160 instructions a robot step)
  const Scalar* const kp = s.kp().data();
  const Scalar* const kd = s.kd().data();
  const Scalar* const q_target = s.q_target().data();
  const Scalar* const u_target = s.u_target().data();
  auto actuator_torque = [&](Index k, Index iq, Scalar v) {
    return tau[k] + kp[k] * (q_target[iq] - q[iq] - dt * v) + kd[k] * (u_target[k] - v);
  };
  // the first pass computed in lanes (lanes_step.hpp, with the same first-guess clamps): Data
  // takes the dynamics and M~ factored from there, and the pass's solved rhs
  const LanesPending::Taken taken = lanes == nullptr || lanes->empty() ? LanesPending::Taken() : lanes->take(s.state_, d);
  const Scalar* const from_lanes = taken.rhs;
  if (!from_lanes && m.is_free_body()) {
    // A free rigid body (piles, stacks): no scalar joint, so no clamps, PD or damping terms and
    // one pass; its closed-form dynamics, the 6-dof chain factor, and the general pass's
    // arithmetic below on fixed-size vectors (the same operations: the same bits), without the
    // dynamic-size expressions' set-up and the joint loops (a 216-sphere pile runs this 216
    // times a step)
    std::fill(clamped.begin(), clamped.end(), 0);  // (first_clamps: nothing to clamp)
    compute_free_body_dynamics(m, d, q, u, has_f_ext ? &f_ext : nullptr);
    using CMap6 = Eigen::Map<const Vec6>;
    Eigen::Map<Vec6> r(rhs.data());
    r = CMap6(tau.data()) - CMap6(d.h.data()) - CMap6(m.damping.data()).cwiseProduct(CMap6(u.data()));
    r *= dt;
    ltdl_factor(m, d);
    ltdl_solve(m, d, rhs);
    Eigen::Map<Vec6>(u_free.data()) = CMap6(u.data()) + r;
    return;
  }
  // the first guess of the clamps, and whether the first pass settles them, from the lane when
  // it computed them (StepLanes::implicit_pd: the same operations), else here
  const bool lane_pd = from_lanes && taken.lanes->has_pd();
  const bool limited = lane_pd ? taken.lanes->clamps(taken.lane, clamped.data(), tau_clamp.data())
                               : first_clamps(s, dt, tau_clamp, clamped);
  const bool lane_settled = lane_pd && !taken.lanes->second_pass(taken.lane);
  for (int pass = 0; pass < 3; ++pass) {
    if (pass == 0 && from_lanes) {
      rhs = Eigen::Map<const VecX>(from_lanes, m.nv);
    } else {
      // h - sum J^T f_ext (RNEA with zero acceleration), M and the joint Jacobians from one
      // kinematics pass; a later pass (same q, u) only needs M again: ltdl_factor reads M's
      // diagonal and upper triangle and overwrites only the diagonal, so the first pass keeps the
      // diagonal (a lane keeps it as well) and a later one puts it back instead of running the
      // CRBA again (2.5k instructions of a locomotion step under random actions; a free body took
      // the one-pass path above unless a lane computed it)
      if (pass == 0) {
        compute_step_dynamics(m, d, q, u, has_f_ext ? &f_ext : nullptr);
        if (limited) m_diagonal = d.M.diagonal();
      } else if (!from_lanes) {
        d.M.diagonal() = m_diagonal;
      } else if (lane_pd) {
        taken.lanes->mass_matrix(taken.lane, d);
      } else {
        recompute_step_mass_matrix(m, d);
      }
      // (StepLanes::implicit_pd repeats these operations in this order for a system in a lane)
      rhs = tau - d.h - m.damping.cwiseProduct(u);
      for (Index i = 0; i < m.nb; ++i) {
        if (m.nv_joint[i] != 1) continue;
        const Index k = m.idx_v[i], iq = m.idx_q[i];
        d.M(k, k) += dt * m.damping[k];
        if (clamped[static_cast<std::size_t>(k)]) {
          rhs[k] += tau_clamp[k] - tau[k];  // the bound replaces tau + PD
          continue;
        }
        rhs[k] += kp[k] * (q_target[iq] - q[iq] - dt * u[k]) + kd[k] * (u_target[k] - u[k]);
        d.M(k, k) += dt * kd[k] + dt * dt * kp[k];
      }
      rhs *= dt;
      ltdl_factor(m, d);
      ltdl_solve(m, d, rhs);
    }
    u_free = u + rhs;
    if (!limited || pass == 2 || (pass == 0 && lane_settled)) break;
    bool again = false;
    for (Index i = 0; i < m.nb; ++i) {
      if (m.nv_joint[i] != 1) continue;
      const Index k = m.idx_v[i], iq = m.idx_q[i];
      Scalar lo, hi;
      actuator_bounds(m, k, u[k], lo, hi);
      if (!(lo > -inf) && !(hi < inf)) continue;
      const Scalar t = actuator_torque(k, iq, u_free[k]);  // implicit
      unsigned char& c = clamped[static_cast<std::size_t>(k)];
      // (clamp_changes of model/actuator.hpp written out with each side's action, and the loop
      // over the scalar actuators by hand: through for_each_scalar_actuator and the predicate
      // this stage's two loops took 62 instructions more a step, 0.12 % of a standing ANYmal's)
      if (!c && (t < lo || t > hi)) {
        c = 1, tau_clamp[k] = std::clamp(t, lo, hi), again = true;
      } else if (c && ((tau_clamp[k] == lo && t > lo) || (tau_clamp[k] == hi && t < hi))) {
        c = 0, again = true;  // the PD at the end of the step no longer drives past the bound
      }
    }
    if (!again) break;
  }
}

// Speculative (swept) margin of one system for the coming step: a bound on how far any point of
// its shapes can travel in dt at the free velocity, dt max_b (|v_b| + |w_b| reach), with the
// world-frame twist of body b, V_b = V_parent(b) + sum over its dofs J_k u_free_k ([v_O; w]:
// v_O the velocity of the point at the world origin, so v_b = v_O + w x p_b at the body origin).
// The contact stage then sees the surface a fast body will reach during the step one step ahead,
// as a speculative row (target -gap/dt) instead of after it has penetrated (docs/fidelity.md item 4).
// The bound uses max_b |v_b| + max_b |w_b| reach (>= max_b of the sum): two square roots per
// system instead of two per body (this runs every step, also for a robot standing still).
Scalar swept_margin(const Model& m, const Data& d, const VecX& u_free, Scalar reach, Scalar dt, Vec6Vector& V) {
  Scalar v2 = 0, w2 = 0;
  for (Index b = 0; b < m.nb; ++b) {
    // the linear and angular parts as 3-vectors throughout: the angular part read back from a
    // Vec6 (offset 3, across two 16-byte stores) stalled on store forwarding, 11 % of the
    // stepper's own time
    Vec3 vO = Vec3::Zero(), w = Vec3::Zero();
    if (m.parent[b] >= 0) {
      const Vec6& Vp = V[static_cast<std::size_t>(m.parent[b])];
      vO = Vp.head<3>();
      w = Vp.tail<3>();
    }
    for (Index k = m.idx_v[b]; k < m.idx_v[b] + m.nv_joint[b]; ++k) {
      vO += d.J.col(k).head<3>() * u_free[k];
      w += d.J.col(k).tail<3>() * u_free[k];
    }
    V[static_cast<std::size_t>(b)].head<3>() = vO;
    V[static_cast<std::size_t>(b)].tail<3>() = w;
    const Vec3 v = vO + w.cross(d.oMi[static_cast<std::size_t>(b)].p);
    v2 = std::max(v2, v.squaredNorm());
    w2 = std::max(w2, w.squaredNorm());
  }
  const Scalar extra = dt * (std::sqrt(v2) + std::sqrt(w2) * reach);
  return std::isfinite(extra) ? extra : Scalar(0);
}

// Requests the memory the dynamics stage of system s reads and writes (its state, its Data and
// the Model arrays the passes walk), while the previous system is being computed: in a World of
// many robots each one's memory is cold when its turn comes. 100 ANYmals in one World: 6-9 %
// less time per robot (in-process A/B, 200 alternations of 5 steps; docs/benchmarks.md).
void prefetch_system(const StepperSystem& s) {
  const SystemState& x = *s.state_;
  for (const VecX* v : std::initializer_list<const VecX*>{&x.q, &x.u, &x.tau, &x.kp, &x.kd, &x.q_target, &x.u_target,
                                                          &s.scratch_->u_free, &s.scratch_->rhs, &s.scratch_->tau_clamp})
    prefetch_data(*v);
  s.data_->prefetch_step();
  const Model& m = *s.model_;
  prefetch_data(m.parent);
  prefetch_data(m.joint_type);
  prefetch_data(m.joint_placement);
  prefetch_data(m.joint_axis);
  prefetch_data(m.idx_q);
  prefetch_data(m.idx_v);
  prefetch_data(m.nv_joint);
  prefetch_data(m.subtree_end);
  prefetch_data(m.inertia);
  prefetch_data(m.dof_parent);
  for (const VecX* v : {&m.velocity_limit, &m.effort_limit, &m.damping, &m.armature}) prefetch_data(*v);
}

}  // namespace

LanesPending::Taken LanesPending::take(const SystemState* state, Data& d) {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].state != state) continue;
    const StepLanes& l = *entries_[i].lanes;
    const int lane = entries_[i].lane;
    l.get_step(lane, d);
    entries_[i] = entries_.back();
    entries_.pop_back();
    return {l.solution(lane), &l, lane};
  }
  return {};
}

void Stepper::reserve(const std::vector<StepperSystem>& systems, const std::vector<Index>& object_system) {
  std::vector<const Model*> models;
  for (const StepperSystem& s : systems) models.push_back(s.model_);
  assembler_.reserve(models);
  object_system_ = object_system;
  views_.resize(systems.size());
  u_next_.resize(systems.size());
  for (std::size_t i = 0; i < systems.size(); ++i) u_next_[i].setZero(systems[i].nv());
  u_pos_.resize(systems.size());
  for (std::size_t i = 0; i < systems.size(); ++i) u_pos_[i].setZero(systems[i].nv());
  accel_next_.resize(systems.size());
  force_next_.resize(systems.size());
  for (std::size_t i = 0; i < systems.size(); ++i) {
    accel_next_[i].setZero(systems[i].nv());
    force_next_[i].setZero(systems[i].nv());
  }
  plan_.reserve(static_cast<Index>(systems.size()));
  memory_next_.reserve(32);  // then they grow by doubling
  limit_memory_next_.reserve(32);
  position_mode_.assign(systems.size(), 0);
}

// Buffers sized for n_rows global rows and islands of up to n_island rows (geometric growth, so
// a scene allocates only while it reaches new sizes).
void Stepper::grow(Index n_rows, Index n_island, ContactSolver& solver) {
  // (the island buffers grow together, ll_ first; every step asks)
  if (lambda_.size() >= n_rows && lambda_p_.size() >= n_rows && ll_.size() >= n_island &&
      solver.capacity() >= n_island)
    return;
  auto up = [](VecX& v, Index n) {
    if (v.size() < n) v.setZero(std::max<Index>({n, 2 * static_cast<Index>(v.size()), 32}));
  };
  up(lambda_, n_rows);
  up(lambda_p_, n_rows);
  for (VecX* v : {&ll_, &lp_, &kick_, &v_, &c2_, &lambda2_, &position_c_, &spec_v_, &spec_c_, &spec_l_, &spec_g_})
    up(*v, n_island);
  if (position_var_.size() < static_cast<std::size_t>(lp_.size())) position_var_.resize(static_cast<std::size_t>(lp_.size()));
  if (spec_done_.size() < static_cast<std::size_t>(lp_.size())) spec_done_.resize(static_cast<std::size_t>(lp_.size()));
  if (solver.capacity() < n_island) solver.reserve(ll_.size());
}

std::size_t Stepper::memory_bytes() const {
  std::size_t b = 0;
  for (const VecX* v :
       {&lambda_, &lambda_p_, &ll_, &lp_, &kick_, &v_, &c2_, &lambda2_, &position_c_, &spec_v_, &spec_c_, &spec_l_, &spec_g_})
    b += static_cast<std::size_t>(v->size()) * sizeof(Scalar);
  b += position_var_.size();
  b += static_cast<std::size_t>(position_qp_.A.size() + position_qp_.L.size()) * sizeof(Scalar);
  b += memory_next_.capacity() * sizeof(ContactMemory);
  b += limit_memory_next_.capacity() * sizeof(LimitMemory);
  return b + product_.memory_bytes() + assembler_.memory_bytes();
}

void Stepper::prefetch_step() const {
  const Index n = assembler_.num_rows();
  // (the Stepper object itself, with its assembler, is the caller's: World::prefetch)
  prefetch_head(lambda_, n);
  prefetch_head(ll_, n);
  prefetch_data(views_);
  prefetch_data(object_system_);
  for (const VecX& v : u_next_) prefetch_data(v);
  prefetch_data(spec_twist_);
  prefetch_data(memory_next_);
  prefetch_data(limit_memory_next_);
  assembler_.prefetch_step();
}

void prefetch_state(const StepperState& state) {
  prefetch_data(state.cache.contacts);
  prefetch_data(state.cache.limits);
  if (!state.contacts.empty()) {
    prefetch_bytes(state.contacts.begin(), static_cast<std::size_t>(state.contacts.size()) * sizeof(Contact));
  }
  prefetch_data(state.contact_impulses);
}

void Stepper::prepare(const std::vector<StepperSystem>& systems, CollisionWorld& collision, const StepSettings& st,
                      ContactSolver& solver, const ContactSolver& solver_settings, StepperState& state) {
  (void)solver_settings;  // (the solve's: finish())
  prepare_rows(systems, collision, st, solver, state);
  prepare_targets(st, state);
}

void Stepper::prepare_rows(const std::vector<StepperSystem>& systems, CollisionWorld& collision, const StepSettings& st,
                           ContactSolver& solver, StepperState& state, bool defer_paths) {
  velocity_updated_ = false;  // (a step that threw after set_velocity_update left it)
  solve_begun_ = presolved_ = false;  // (or after begin_solve)
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  state.stats.reset();
  // 1. dynamics
  StageClock clock(st.stage_timing);
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const StepperSystem& s = systems[i];
    // (not for a free body: its closed form reads a few lines of a small Data, and the prefetch of
    // the general passes' arrays cost more than it saved in piles)
    if (i + 1 < systems.size() && !systems[i + 1].model_->is_free_body()) prefetch_system(systems[i + 1]);
    dynamics_stage(s, st.dt, s.scratch_->rhs, s.state_->f_ext, s.state_->has_f_ext, *s.data_, s.scratch_->u_free, s.scratch_->tau_clamp, s.scratch_->clamped, s.scratch_->m_diagonal, lanes_pending_);
    const PositionUpdate pu = st.contact.position_update;
    const bool articulated = !s.model_->is_free_body();
    bool euler = pu == PositionUpdate::Euler || (s.state_->kp.array() != 0).any();
    // Bodies: an articulated system with implicit damping (PD or joint damping in M~) stays on
    // Euler; one without takes the midpoint update with Heun's velocity update in flight
    if (!euler && pu == PositionUpdate::Bodies && articulated) euler = !damping_free(s);
    const bool flight_only = pu == PositionUpdate::Bodies && articulated;
    views_[i] = SystemView{s.model_, s.data_, &s.state_->q, &s.state_->u, &s.scratch_->u_free, euler, flight_only};
  }
  state.stats.times.dynamics = clock.lap();

  // 2. collision
  for (const StepperSystem& s : systems) {
    // speculative margin of the object: how far its geometry can move this step (grows, then kept)
    if (spec_twist_.size() < static_cast<std::size_t>(s.model_->nb)) spec_twist_.resize(s.model_->nb);
    collision.set_speculative_margin(
        s.object_, swept_margin(*s.model_, *s.data_, s.scratch_->u_free, collision.reach(s.object_), st.dt, spec_twist_));
    collision.update(s.object_, s.data_->oMi);
  }
  collision.detect(state.contacts);
  state.stats.times.collision = clock.lap();

  // 3. constraint rows (contact/delassus.hpp), islands and their G
  assembler_.set_dense_limit(solver.supports_factored() ? DelassusAssembler::kDefaultDenseLimit
                                                          : std::numeric_limits<Index>::max());
  assembler_.set_one_row_frictionless(solver.one_row_frictionless());
  // bottom-up contact order of factored islands: against gravity (every system's Data holds
  // the World's gravity), +z in zero gravity
  if (!systems.empty()) {
    const Vec3& g = systems.front().data_->gravity;
    const Scalar gn = g.norm();
    assembler_.set_up_direction(gn > 0 ? Vec3(-g / gn) : Vec3(Vec3::UnitZ()));
  }
  assembler_.set_defer_paths(defer_paths);
  assembler_.assemble_rows(views_, object_system_, state.contacts, st.dt, st.contact);
  state.stats.times.delassus = clock.lap();
  };
  return detail::run_kernel(kernel_body);
}

void Stepper::prepare_targets(const StepSettings& st, StepperState& state) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  StageClock clock(st.stage_timing);
  // the islands' G (unless a batched step computed them in lanes: DelassusLanes)
  assembler_.assemble_products(views_);
  // 4. targets (stepper/targets.hpp; timed with the rows)
  targets_stage(assembler_, views_, st.dt, st.contact, plan_);
  state.stats.times.delassus += clock.lap();
  state.stats.contacts = assembler_.num_contacts();
  state.stats.limits = assembler_.num_limits();
  state.stats.friction_rows = assembler_.num_friction_rows();
  state.stats.mimic_rows = assembler_.num_mimic_rows();
  state.stats.contacts_dropped = state.contacts.dropped();
  state.stats.islands = assembler_.num_islands();
  for (Index k = 0; k < assembler_.num_islands(); ++k) {
    const IslandView isl = assembler_.island(k);
    state.stats.largest_island = std::max(state.stats.largest_island, isl.num_systems);
    state.stats.largest_island_rows = std::max(state.stats.largest_island_rows, isl.problem.size());
  }
  for (const Contact& c : state.contacts) state.stats.max_penetration = std::max(state.stats.max_penetration, c.depth);
  solved_ = false;  // (lambda_ is the last solve's, for other contacts, and may be shorter)
  std::vector<Vec3>& impulses = state.contact_impulses;
  const std::size_t nc = static_cast<std::size_t>(state.contacts.size());
  if (impulses.capacity() < nc) impulses.reserve(std::max<std::size_t>({nc, 2 * impulses.capacity(), 8}));  // (grows, then kept)
  impulses.resize(nc);
  for (Vec3& p : impulses) p.setZero();  // (until a solve answers the contacts: report_impulses)
  };
  return detail::run_kernel(kernel_body);
}

StepStatus Stepper::finish(const std::vector<StepperSystem>& systems, const StepSettings& st, ContactSolver& solver,
                           const ContactSolver& solver_settings, StepperState& state) {
  finish_solve(st, solver, solver_settings, state);
  return finish_update(systems, st, state);
}

void Stepper::begin_solve(const StepSettings& st, ContactSolver& solver, StepperState& state) {
  presolved_ = false;
  const Index n = assembler_.num_rows();
  grow(n, state.stats.largest_island_rows, solver);
  solved_ = true;  // (read by finish_solve, remember() and report_impulses(), once solved)
  if (st.warm_start) {
    warm_start(n, state);
  } else {
    lambda_.head(n).setZero();
  }
  solve_begun_ = true;
}

void Stepper::set_presolved(const Scalar* lambda, Index m, const SolverResult& result) {
  IMPULSE_ASSERT(solve_begun_ && assembler_.num_islands() >= 1 && m <= ll_.size());
  for (Index a = 0; a < m; ++a) ll_[a] = lambda[a];
  presolved_result_ = result;
  presolved_ = true;
}

void Stepper::finish_solve(const StepSettings& st, ContactSolver& solver, const ContactSolver& solver_settings,
                           StepperState& state) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  const SolveContext ctx{solver, solver_settings, state.stats};
  // 5. solve, island by island (global lambda: warm start in, solution out)
  StageClock clock(st.stage_timing);
  if (!solve_begun_) begin_solve(st, solver, state);
  solve_begun_ = false;
  const bool presolved = presolved_;  // (island 0's solution is in ll_: set_presolved)
  presolved_ = false;
  const Index n = assembler_.num_rows();
  auto lambda = lambda_.head(n);
  const bool split = assembler_.row_arrays().n_position > 0;
  if (split) lambda_p_.head(n).setZero();
  SolverResult& total = state.stats.solver;
  total = SolverResult{SolverStatus::Converged, 0, 0};
  std::vector<IslandResult>& islands = state.stats.island_results;
  const std::size_t ni = static_cast<std::size_t>(assembler_.num_islands());
  if (islands.capacity() < ni) islands.reserve(std::max<std::size_t>({ni, 2 * islands.capacity(), 4}));  // (grows, then kept)
  for (Index k = 0; k < assembler_.num_islands(); ++k) {
    const IslandView isl = assembler_.island(k);
    const Index m = isl.problem.size();
    auto ll = ll_.head(m);
    SolverResult r;
    if (k == 0 && presolved) {
      r = presolved_result_;
    } else {
      for (Index a = 0; a < m; ++a) ll[a] = lambda[isl.global_row[a]];
      r = solver.solve(isl.problem, ll, solver_settings);
    }
    if (assembler_.row_arrays().n_speculative_elastic > 0 && r.status != SolverStatus::NumericalIssue) {
      speculative_impacts(ctx, isl, isl.problem.c, ll, r, st.contact.restitution_threshold);
    }
    if (st.contact.restitution_law == RestitutionLaw::Poisson && isl.num_bouncing > 0 &&
        r.status != SolverStatus::NumericalIssue) {
      state.stats.restitution = restitution_phase(ctx, isl, ll, r, st.contact.restitution_threshold) || state.stats.restitution;
    }
    if (st.contact.restitution_law == RestitutionLaw::Newton && assembler_.row_arrays().n_newton > 0 &&
        r.status != SolverStatus::NumericalIssue) {
      newton_bound(ctx, isl, ll, r);
    }
    if (r.status != SolverStatus::Converged) ++state.stats.islands_not_converged;
    islands.push_back(IslandResult{isl.num_systems, isl.problem.nc, m, r});
    if (r.status == SolverStatus::NumericalIssue) ll.setZero();
    for (Index a = 0; a < m; ++a) lambda[isl.global_row[a]] = ll[a];
    // worst status over the islands (NumericalIssue > MaxIterations > Converged)
    if (r.status == SolverStatus::NumericalIssue || total.status == SolverStatus::Converged) total.status = r.status;
    total.iterations = std::max(total.iterations, r.iterations);
    if (r.method != SolverMethod::Iteration) total.method = r.method;
    if (r.method == SolverMethod::ActiveSet && r.status == SolverStatus::Converged) ++state.stats.islands_active_set;
    if (r.method == SolverMethod::SemismoothNewton && r.status == SolverStatus::Converged) ++state.stats.islands_newton;
    total.residual = std::max(total.residual, r.residual);
    if (split && isl.num_position_rows > 0 && r.status != SolverStatus::NumericalIssue) {
      auto lp = lp_.head(m);
      position_correction(state.stats, isl, lp);
      for (Index a = 0; a < m; ++a) lambda_p_[isl.global_row[a]] = lp[a];
    }
  }
  state.stats.times.solve = clock.lap();
  };
  return detail::run_kernel(kernel_body);
}

StepStatus Stepper::finish_update(const std::vector<StepperSystem>& systems, const StepSettings& st,
                                  StepperState& state) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  StageClock clock(st.stage_timing);
  const Index n = assembler_.num_rows();
  auto lambda = lambda_.head(n);
  const bool split = assembler_.row_arrays().n_position > 0;
  // 6. integrate: u+ = u_free + M~^-1 J^T lambda, q+ = q (+) dt u+ (or the midpoint update below)
  StepStatus status = StepStatus::Ok;
  if (state.contacts.overflow()) status = StepStatus::ContactOverflow;
  if (state.stats.solver.status == SolverStatus::MaxIterations) status = StepStatus::SolverNotConverged;
  if (state.stats.solver.status == SolverStatus::NumericalIssue) status = StepStatus::SolverFailed;
  // (u_next_ may hold it already: a batched step's velocity update in lanes, set_velocity_update)
  if (!velocity_updated_) assembler_.apply(views_, lambda, u_next_);
  velocity_updated_ = false;
  // the velocity that moves q: u+ (semi-implicit Euler), or under PositionUpdate::Midpoint, for
  // the systems the assembler put on it, u_pos = (u + u_free) / 2 + M~^-1 J^T (w o lambda):
  // the smooth acceleration at the midpoint rule (exact for a constant one), each impulse from
  // its time of action; plus the split correction M~^-1 J^T lambda_p
  const bool separate = split || assembler_.row_arrays().weighted;  // q needs its own apply
  separate_ = separate;
  position_mode_.resize(systems.size());
  if (separate) {  // u_pos = u_free + M~^-1 J^T (w o lambda + lambda_p): one more apply
    if (!split) lambda_p_.head(n).setZero();
    if (assembler_.row_arrays().weighted) {
      lambda_p_.head(n) += assembler_.row_arrays().position_weight.head(n).cwiseProduct(lambda);
    } else {
      lambda_p_.head(n) += lambda;
    }
    assembler_.apply(views_, lambda_p_.head(n), u_pos_);
  }
  // the candidate state's finiteness, one test for all systems (core/finite.hpp)
  Scalar zero[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const StepperSystem& s = systems[i];
    // A free body whose velocity is its free velocity took no impulse (its rows all inactive)
    // and moved freely: on the midpoint update even if its island was held on Euler (a ball
    // among speculative contacts next to an impact elsewhere in its island; on Euler it lost
    // m g^2 dt^2 / 2 per step)
    const bool mid = plan_.midpoint(static_cast<Index>(i)) ||
                     (!views_[i].euler && !views_[i].flight_only && u_next_[i] == s.scratch_->u_free);
    if (mid) {
      midpoint_position(s, u_next_[i], separate, st.dt, u_pos_[i]);
      // free flight (no rows) of a system without implicit terms: the two-step velocity update
      // when the system's last step was a flight step at this dt (its history), else Heun's
      position_mode_[i] = 1;
      if (plan_.flight(static_cast<Index>(i)) && damping_free(s)) {
        const VecX& du = s.scratch_->rhs;  // dt a_k = u_free - u: the dynamics stage's solve (M~ = M here)
        accel_next_[i] = du / st.dt;  // (before heun_velocity reuses rhs as scratch)
        flight_input_force(s, force_next_[i]);
        if (st.contact.flight_two_step && s.state_->flight_dt == st.dt) {
          ab2_velocity(s, u_pos_[i], du, force_next_[i], st.dt, u_next_[i]);
          position_mode_[i] = 3;
        } else {
          heun_velocity(s, u_pos_[i], st.dt, u_next_[i]);
          position_mode_[i] = 2;
        }
      }
    } else {
      euler_position(s, separate ? u_pos_[i] : u_next_[i], st.dt);
      position_mode_[i] = 0;
    }
    add_zero_times(u_next_[i].data(), u_next_[i].size(), 1, zero);
    add_zero_times(s.scratch_->q_next.data(), s.scratch_->q_next.size(), 1, zero);
  }
  const bool finite = zero_times_finite(zero);
  if (finite) {
    for (std::size_t i = 0; i < systems.size(); ++i) {
      const StepperSystem& s = systems[i];
      s.state_->q.swap(s.scratch_->q_next);
      s.state_->u.swap(u_next_[i]);
      report_applied_torque(s, s.scratch_->tau_clamp, s.scratch_->clamped, s.out_->tau_applied);
      s.out_->tau_friction.setZero();
      SystemState& x = *s.state_;  // the history for the next step's velocity update
      if (position_mode_[i] >= 2) {
        x.flight_dt = st.dt;
        x.flight_accel.swap(accel_next_[i]);  // (same sizes: the buffers trade places)
        x.flight_force.swap(force_next_[i]);
      } else {
        x.drop_flight_history();
      }
    }
    for (const ConstraintRow& r : assembler_.rows()) {  // joint friction torque = impulse / dt
      if (r.kind != ConstraintRow::Kind::Friction) continue;
      const StepperSystem& s = systems[static_cast<std::size_t>(r.system)];
      s.out_->tau_friction[r.index] = lambda[r.row] / st.dt;
    }
  } else {
    status = StepStatus::NonFinite;
    lambda.setZero();
  }
  report_impulses(systems, state);  // (each contact's world-frame impulse, once: remember() reads them)
  if (finite) remember(state);
  // External wrenches apply to one step: cleared once it is taken. A rejected step keeps them, so
  // the World's whole state (WorldState includes the pending wrenches) is as it was.
  if (finite) {
    for (const StepperSystem& s : systems) s.clear_external_forces();
  }
  state.stats.times.integrate = clock.lap();
  state.stats.status = status;
  return status;
  };
  return detail::run_kernel(kernel_body);
}

bool Stepper::restitution_phase(const SolveContext& ctx, const IslandView& isl, VecXref lambda, SolverResult& r,
                                Scalar threshold) {
  const ContactProblem& problem = isl.problem;
  const Index n = problem.size();
  const VecXcref& c = problem.c;
  // lambda_r = e lambda_c,n on the bouncing rows that took a compression impulse
  // times the share of the approach in the free approach velocity: lambda_c,n also cancels the
  // impulse of this step's smooth forces (gravity: m g dt), which is no part of the impact and
  // must not be returned (it gave a ball with e = 1 +0.96 J per bounce). With v- the normal
  // velocity before the step and v_f = J u_free, the impact's share is v- / v_f when v_f < v- < 0
  // (exact for one contact: lambda_r = -e m v-, so v+ = -e v-).
  auto k = kick_.head(n);
  k.setZero();
  auto ln = v_.head(n);  // lambda_c,n: lambda_c on those rows, 0 elsewhere
  ln.setZero();
  for (Index a = 0; a < n; ++a) {
    const Scalar e = isl.bounce[a];
    if (!(e > 0) || !(lambda[a] > 0)) continue;
    const Index g = isl.global_row[a];
    const Scalar v_minus = assembler_.row_arrays().v_before[g], v_free = c[a] + isl.target[a];
    const Scalar share = v_free < v_minus && v_minus < 0 ? v_minus / v_free : Scalar(1);
    Scalar per_impulse = e * share;
    if ((assembler_.row_arrays().midpoint[static_cast<std::size_t>(g)] || assembler_.row_arrays().at_start[static_cast<std::size_t>(g)]) && v_free < 0 && v_minus < 0) {
      // Midpoint position update: the impact happens at tau = f dt with the approach v- + a tau
      // (a = (v_free - v-) / dt), and after it the smooth acceleration acts for (1 - f) dt, so
      // for one contact v+ = -e (v- + a tau) + a (dt - tau): lambda_r = lambda_c (e (v- + a tau)
      // - a (dt - tau)) / v_free (>= 0: a kick smaller than the rest of the step's pull is none)
      const Scalar f = assembler_.row_arrays().midpoint[static_cast<std::size_t>(g)] ? assembler_.row_arrays().impact_time[g] : 0, dv = v_free - v_minus;
      per_impulse = std::max<Scalar>(0, (e * (v_minus + dv * f) - dv * (1 - f)) / v_free);
    }
    k[a] = per_impulse * lambda[a];
    ln[a] = lambda[a];
  }
  product_.multiply(problem, ln, c2_.head(n));
  const Scalar lGl_n = ln.dot(c2_.head(n));  // |lambda_c,n|_G^2 over those rows
  if (!(lGl_n > 0)) return false;
  // v = G lambda_c + c (target-relative), v + b the actual velocity after compression
  auto v = v_.head(n);
  auto Gk = c2_.head(n);
  product_.multiply(problem, lambda, v);
  product_.multiply(problem, k, Gk);
  v += c;
  Scalar l_vf = 0, l_G_l = 0, k_vc = 0;
  for (Index a = 0; a < n; ++a) {
    const Scalar b = isl.target[a];
    l_vf += lambda[a] * (c[a] + b);
    l_G_l += lambda[a] * (v[a] - c[a]);
    k_vc += k[a] * (v[a] + b);
  }
  const Scalar E_c = std::max<Scalar>(0, -(l_vf + 0.5 * l_G_l));
  const Scalar kGk = k.dot(Gk);
  if (!(kGk > 0)) return false;
  const Scalar cap = kGk / lGl_n * E_c;  // eps^2 E_c
  // largest s in [0, 1] with a s^2 + k_vc s <= cap, a = kGk / 2 > 0 (cap >= 0: s = 0 qualifies)
  const Scalar a2 = 0.5 * kGk;
  Scalar s = 1;
  if (a2 + k_vc > cap) s = std::clamp((-k_vc + std::sqrt(k_vc * k_vc + 4 * a2 * cap)) / (2 * a2), Scalar(0), Scalar(1));
  ctx.stats.restitution_scale = s;
  k *= s;
  // second problem: v2 = G lambda_2 + (v + G lambda_r), inelastic, from a cold start
  auto c2 = c2_.head(n);
  c2 = v + s * Gk;
  auto lambda2 = lambda2_.head(n);
  lambda2.setZero();
  SolverResult r2 = ctx.solver.solve(problem.with_c(c2), lambda2, ctx.settings);
  // a failed correction leaves the inelastic impulse lambda_c, which is a valid answer
  if (r2.status == SolverStatus::NumericalIssue) {
    r.iterations += r2.iterations;
    return false;
  }
  // the kick can drive bodies into speculative contacts (a chain of balls): impacts there too
  if (assembler_.row_arrays().n_speculative_elastic > 0) speculative_impacts(ctx, isl, c2, lambda2, r2, threshold);
  r.iterations += r2.iterations;
  lambda += k + lambda2;
  r.residual = std::max(r.residual, r2.residual);
  if (r.status == SolverStatus::Converged) r.status = r2.status;
  return true;
}

namespace {
// Largest s in [0, 1] with dK0 + lin s + quad s^2 <= bound (quad >= 0: convex in s), or 0 when
// none qualifies (then dK0 > bound: the caller's reference impulse alone)
Scalar largest_energy_step(Scalar dK0, Scalar lin, Scalar quad, Scalar bound) {
  if (dK0 + lin + quad <= bound) return 1;
  const Scalar c_q = dK0 - bound;
  if (!(c_q <= 0 && quad > 0)) return 0;
  return std::clamp((-lin + std::sqrt(std::max<Scalar>(0, lin * lin - 4 * quad * c_q))) / (2 * quad), Scalar(0),
                    Scalar(1));
}
}  // namespace

bool Stepper::speculative_impacts(const SolveContext& ctx, const IslandView& isl, const VecXcref& c, VecXref lambda,
                                  SolverResult& r, Scalar threshold) {
  const ContactProblem& problem = isl.problem;
  const Index n = problem.size();
  auto v = spec_v_.head(n);  // G lambda + c: the velocities after the solve, relative to the targets
  product_.multiply(problem, lambda, v);
  v += c;
  auto c2 = spec_c_.head(n);  // the problem with the impacts' targets
  c2 = c;
  auto l2 = spec_l_.head(n);
  l2 = lambda;
  auto Gl2 = spec_g_.head(n);  // G l2 + c2 after each solve
  Gl2 = v;
  for (Index i = 0; i < problem.nc; ++i) spec_done_[static_cast<std::size_t>(i)] = 0;
  Scalar e_max = 0;
  Index impacts = 0;
  // A solve with the new targets can stop further approaches (the next ball of a chain): up to
  // 4 rounds, each converting the rows newly clipped.
  for (int round = 0; round < 4; ++round) {
    Index found = 0;
    for (Index i = 0; i < problem.nc; ++i) {
      const Index a = 3 * i + 2, g = isl.global_row[a];
      const Scalar e = assembler_.row_arrays().restitution[g];
      if (spec_done_[static_cast<std::size_t>(i)] || !assembler_.row_arrays().speculative[static_cast<std::size_t>(g)] || !(e > 0) || !(l2[a] > 0)) continue;
      // the approach this row stopped: its velocity after the solve less its own impulse's part
      // (exact for two bodies; the others' impulses held)
      const Scalar b = isl.target[a];
      const Scalar v_hit = Gl2[a] + b - problem.diagonal(a) * l2[a];
      if (!(-v_hit > threshold)) continue;
      c2[a] = c[a] + b + e * v_hit;  // target v+ >= -e v_hit (Newton's law at the impact)
      spec_done_[static_cast<std::size_t>(i)] = 1;
      e_max = std::max(e_max, e);
      ++found;
    }
    if (found == 0) break;
    impacts += found;
    const SolverResult r2 = ctx.solver.solve(problem.with_c(c2), l2, ctx.settings);
    r.iterations += r2.iterations;
    if (r2.status == SolverStatus::NumericalIssue) return false;  // keep the speculative answer
    if (r.status == SolverStatus::Converged) r.status = r2.status;
    r.residual = std::max(r.residual, r2.residual);
    product_.multiply(problem, l2, Gl2);
    Gl2 += c2;
  }
  if (impacts == 0) return false;
  // Energy: Delta K(lambda) = lambda^T v_f + 1/2 lambda^T G lambda (v_f = c + b, the velocities
  // without this solve's impulse), the kinetic energy the impulse adds. The speculative answer
  // lambda absorbed the impacts' energy; the bounce may give back at most e_max^2 of what it
  // absorbed (the Newton bound's rule; with friction a Newton target alone can add energy).
  auto d = spec_c_.head(n);  // (c2 no longer needed)
  d = l2 - lambda;
  auto Gd = spec_g_.head(n);
  product_.multiply(problem, d, Gd);
  Scalar dK0 = 0, lin = 0;
  for (Index a = 0; a < n; ++a) {
    const Scalar vf = c[a] + isl.target[a], Gl = v[a] - c[a];
    dK0 += lambda[a] * (vf + 0.5 * Gl);
    lin += d[a] * (vf + Gl);
  }
  const Scalar quad = 0.5 * d.dot(Gd);
  const Scalar bound = (1 - e_max * e_max) * std::min<Scalar>(dK0, 0) + std::max<Scalar>(dK0, 0);
  const Scalar step = largest_energy_step(dK0, lin, quad, bound);
  lambda += step * d;
  ctx.stats.speculative_impacts += impacts;
  ctx.stats.restitution_scale = std::min(ctx.stats.restitution_scale, step);
  return true;
}

void Stepper::newton_bound(const SolveContext& ctx, const IslandView& isl, VecXref lambda, SolverResult& r) {
  const ContactProblem& problem = isl.problem;
  const Index n = problem.size();
  const VecXcref& c = problem.c;
  // v_f = J u_free (target-free); Delta K(lambda) = lambda^T v_f + 1/2 lambda^T G lambda is the
  // kinetic energy the impulse adds to the free motion
  auto vf = v_.head(n);
  Scalar e_max = 0;
  for (Index a = 0; a < n; ++a) {
    const Index g = isl.global_row[a];
    vf[a] = c[a] + isl.target[a];
    if (assembler_.row_arrays().inelastic_target[g] != assembler_.row_arrays().target[g]) e_max = std::max(e_max, assembler_.row_arrays().restitution[g]);
  }
  if (!(e_max > 0)) return;  // no restitution target in this island
  // inelastic impulse lambda_0: the same problem without the restitution targets, cold start
  auto c0 = c2_.head(n);
  for (Index a = 0; a < n; ++a) c0[a] = vf[a] - assembler_.row_arrays().inelastic_target[isl.global_row[a]];
  auto l0 = lambda2_.head(n);
  l0.setZero();
  const SolverResult r0 = ctx.solver.solve(problem.with_c(c0), l0, ctx.settings);
  r.iterations += r0.iterations;
  auto Gl = kick_.head(n);
  product_.multiply(problem, l0, Gl);
  const Scalar dK0 = l0.dot(vf) + 0.5 * l0.dot(Gl);  // <= 0 unless a push-out target acts
  const Scalar bound = (1 - e_max * e_max) * std::min<Scalar>(dK0, 0) + std::max<Scalar>(dK0, 0);
  // Delta K(lambda_0 + s d), d = lambda_N - lambda_0: dK0 + s d^T (v_f + G lambda_0) + s^2/2 d^T G d
  auto d = c2_.head(n);  // c0 no longer needed
  d = lambda - l0;
  const Scalar lin = d.dot(vf) + d.dot(Gl);
  product_.multiply(problem, d, Gl);
  const Scalar quad = 0.5 * d.dot(Gl);
  // (no inelastic reference when its solve failed: keep the Newton impulse)
  const Scalar s = r0.status == SolverStatus::NumericalIssue ? 1 : largest_energy_step(dK0, lin, quad, bound);
  if (s < 1) lambda = l0 + s * d;
  ctx.stats.restitution_scale = std::min(ctx.stats.restitution_scale, s);
}

void Stepper::position_correction(StepStats& stats, const IslandView& isl, VecXref lp) {
  const ContactProblem& problem = isl.problem;
  const Index nc = problem.nc;
  lp.setZero();
  // unilateral rows: normal row 3i + 2 of each contact, then the limit rows
  auto row = [nc](Index k) { return k < nc ? 3 * k + 2 : 2 * nc + k; };
  const Index nu = nc + problem.nl;
  product_.reset(problem, lp);
  // Projected Gauss-Seidel: a few sweeps settle the usual island. Where they crawl (the
  // stretched legs of a hanging robot: feet and limit rows of a rank-deficient G, ~90 sweeps),
  // the exact active-set QP (bound_qp.hpp) ends in a few changes of its free set; up to
  // kExactRows unilateral rows (its dense O(m^2) workspace).
  constexpr Index kSweepsBeforeExact = 10, kMaxSweeps = 100, kExactRows = 256;
  // Both stop at 1e-10 of the impulses (rounding) or when no row's push-out velocity is off by
  // more than a floor: an error e moves a body by dt e (1e-12 m at 1 ms) in a correction that
  // leaves the slop's 1e-5 m, and the next step's correction sees it again. Resting boxes sit a
  // fraction of a nanometre beyond the slop, whose targets are of that order: without the floor
  // the relative stop asked for their rounding, and the sweeps of a bin of 50 boxes (one island
  // of up to 472 normal rows, above the exact QP's bound) ran to their cap on every step.
  // Above the exact QP's bound the sweeps are the whole correction, each over every row, and the
  // floor is 1e-8 m/s (1 % of the contact solvers' default tolerance): at 1e-9 the push-out of a
  // tower of 102 planks (1 792 normal rows, 10 ms) ended at its cap on 1 349 of its first 10 000
  // steps, 12 ms each, with its rows off by 2e-8 m/s (the median; 2e-10 m of the step).
  constexpr Scalar kVelocityFloor = 1e-9, kLargeIslandFloor = 1e-8;  // m/s
  const Scalar velocity_floor = nu > kExactRows ? kLargeIslandFloor : kVelocityFloor;
  auto sweep = [&]() {
    Scalar change = 0, size = 0, velocity = 0;
    for (Index a = 0; a < nu; ++a) {
      const Index r = row(a);
      const Scalar G_rr = problem.diagonal(r);
      if (!(G_rr > 0)) continue;
      // lp is zero off the unilateral rows, so G(r, :) lp sums over the unilateral rows only
      const Scalar w = product_.row(r, lp) - isl.position_target[r];
      const Scalar next = std::max<Scalar>(0, lp[r] - w / G_rr);
      change = std::max(change, std::abs(next - lp[r]));
      velocity = std::max(velocity, std::abs(next - lp[r]) * G_rr);
      size = std::max(size, next);
      product_.add_row(r, next - lp[r]);
      lp[r] = next;
    }
    return change <= 1e-10 * size || velocity <= velocity_floor;
  };
  Index sweeps = 0;
  bool done = false;
  while (!done && sweeps < kSweepsBeforeExact) ++sweeps, done = sweep();
  if (!done && nu <= kExactRows) {
    const Index m = problem.size();
    Scalar b_max = 0;
    for (Index r = 0; r < m; ++r) {
      position_var_[static_cast<std::size_t>(r)] = 0;
      position_c_[r] = -isl.position_target[r];
    }
    for (Index a = 0; a < nu; ++a) {
      position_var_[static_cast<std::size_t>(row(a))] = 1;
      b_max = std::max(b_max, isl.position_target[row(a)]);
    }
    // velocity Signorini of the push-out to 1e-9 of the largest target or the floor (PGS's stop
    // is 1e-10 of the change of lambda_p, which the exact answer meets to rounding)
    const BoundQpResult exact =
        solve_bound_qp_exact(problem, position_c_.head(m), position_var_.data(), lp,
                             std::max(1e-9 * b_max, velocity_floor), kMaxSweeps - sweeps, position_qp_);
    sweeps += exact.changes;
    if (exact.converged) {
      done = true;
      ++stats.position_exact;
    }
    // (not converged: lp is unchanged, and product_ still holds G lp for the sweeps below)
  }
  while (!done && sweeps < kMaxSweeps) ++sweeps, done = sweep();
  if (!done) ++stats.position_not_converged;
  stats.position_rows += isl.num_position_rows;
  stats.position_sweeps = std::max(stats.position_sweeps, sweeps);
}

Vec3 Stepper::contact_impulse(Index i) const {
  if (!solved_ || i < 0 || i >= assembler_.num_contacts()) return Vec3::Zero();
  return assembler_.contact_frame(i) * lambda_.segment<3>(3 * i);
}

// Last step's impulses for contacts with the same shapes within 2 cm (contact frames may have
// rotated: the world-frame impulse is projected on the new frame), and for the same limit rows.
// The memories are sorted by key (remember()), so each lookup is a binary search plus a scan of
// the contacts of one shape pair: O(n log n) per step instead of O(n^2) for large piles.
namespace {
bool key_less(const ContactMemory& m, const Contact& c) {
  if (m.object_a != c.object_a) return m.object_a < c.object_a;
  if (m.shape_a != c.shape_a) return m.shape_a < c.shape_a;
  if (m.object_b != c.object_b) return m.object_b < c.object_b;
  return m.shape_b < c.shape_b;
}
// the shape pair of a contact or a memory
template <class A, class B>
bool same_key(const A& m, const B& c) {
  return m.object_a == c.object_a && m.shape_a == c.shape_a && m.object_b == c.object_b && m.shape_b == c.shape_b;
}
// key, then position: a total order, so the sorted memory (and the warm start) is deterministic
bool memory_less(const ContactMemory& x, const ContactMemory& y) {
  if (x.object_a != y.object_a) return x.object_a < y.object_a;
  if (x.shape_a != y.shape_a) return x.shape_a < y.shape_a;
  if (x.object_b != y.object_b) return x.object_b < y.object_b;
  if (x.shape_b != y.shape_b) return x.shape_b < y.shape_b;
  return std::lexicographical_compare(x.position.data(), x.position.data() + 3, y.position.data(), y.position.data() + 3);
}
bool limit_less(const LimitMemory& x, const LimitMemory& y) {
  if (x.system != y.system) return x.system < y.system;
  if (x.dof != y.dof) return x.dof < y.dof;
  return x.sign < y.sign;
}
}  // namespace

void Stepper::warm_start(Index n, const StepperState& state) {
  auto lambda = lambda_.head(n);
  lambda.setZero();
  const Scalar radius2 = 0.02 * 0.02;
  const std::vector<ContactMemory>& memory = state.cache.contacts;
  // the contacts of one shape pair (a manifold) are consecutive in the ContactSet: one binary
  // search per pair, or none when the pair's entries start where the previous pair's ended (`next`):
  // the pairs come in long ascending runs (remember()), so in a steady scene most pairs follow
  // their predecessor in the memory too. There, `next` is what the search would return: the
  // entries before it are below the previous key, itself at most this one.
  auto first = memory.end(), next = memory.end();
  const Contact* previous = nullptr;
  for (Index i = 0; i < assembler_.num_contacts(); ++i) {
    if (assembler_.contact_island(i) < 0) continue;  // no rows (nothing dynamic): no impulse
    const Contact& c = state.contacts[i];
    const ContactMemory* best = nullptr;
    Scalar best_d2 = radius2;
    if (!previous || !same_key(c, *previous)) {
      first = next != memory.end() && same_key(*next, c)  // (next starts at the end)
                  ? next
                  : std::lower_bound(memory.begin(), memory.end(), c, key_less);
    }
    previous = &c;
    auto it = first;
    for (; it != memory.end() && same_key(*it, c); ++it) {
      const Scalar d2 = (it->position - c.position).squaredNorm();
      if (d2 < best_d2) best = &*it, best_d2 = d2;
    }
    next = it;
    if (!best) continue;
    if (assembler_.one_row(i)) {  // (its tangent impulses are 0: contact/delassus.hpp)
      lambda[3 * i + 2] = assembler_.contact_frame(i).col(2).dot(best->impulse_W);
    } else {
      lambda.segment<3>(3 * i) = assembler_.contact_frame(i).transpose() * best->impulse_W;
    }
  }
  const std::vector<LimitMemory>& limits = state.cache.limits;
  // limit rows, joint friction rows (sign 0) and mimic rows (sign 2) by (system, dof, sign)
  for (const ConstraintRow& r : assembler_.rows()) {
    if (r.kind == ConstraintRow::Kind::Contact) continue;
    const LimitMemory key{r.system, r.index, r.sign, 0};
    auto it = std::lower_bound(limits.begin(), limits.end(), key, limit_less);
    if (it != limits.end() && !limit_less(key, *it)) lambda[r.row] = it->lambda;
  }
}

void Stepper::remember(StepperState& state) {
  memory_next_.clear();
  const Vec3* const impulses = state.contact_impulses.data();  // (report_impulses(): this step's)
  for (Index i = 0; i < assembler_.num_contacts(); ++i) {
    const Contact& c = state.contacts[i];
    memory_next_.push_back({c.object_a, c.shape_a, c.object_b, c.shape_b, c.position, impulses[i]});
  }
  // Sorted by memory_less, a total order (so the result is the same as one std::sort). The
  // contacts come pair by pair, and the pairs in a few long ascending runs (the broadphase records
  // them by shape: the pairs with each static shape, then those between moving bodies), so each
  // pair's points are sorted, then the runs are merged (a natural merge sort, O(n log runs)),
  // into the previous step's memory as scratch: the warm start has used it. A full sort was 4 % of
  // a settled 216-sphere pile's step. (No allocation in the steady state.) Already sorted (a
  // robot's feet, each its own shape pair, in shape order): copied as it is, which is what the
  // merge would write (into the state's own buffer, as there: the buffers stay where they are).
  if (std::is_sorted(memory_next_.begin(), memory_next_.end(), memory_less)) {
    state.cache.contacts.assign(memory_next_.begin(), memory_next_.end());
  } else {
    for (auto run = memory_next_.begin(); run != memory_next_.end();) {
      auto end = run + 1;
      while (end != memory_next_.end() && same_key(*end, *run)) ++end;
      if (end - run > 1) std::sort(run, end, memory_less);
      run = end;
    }
    std::vector<ContactMemory>* src = &memory_next_;
    std::vector<ContactMemory>* dst = &state.cache.contacts;
    dst->resize(src->size());
    for (bool merged = false; !merged;) {  // one pass merges consecutive pairs of runs
      Index runs = 0;
      auto out = dst->begin();
      for (auto b = src->begin(); b != src->end(); ++runs) {
        const auto m = std::is_sorted_until(b, src->end(), memory_less);
        const auto e = std::is_sorted_until(m, src->end(), memory_less);
        out = std::merge(b, m, m, e, out, memory_less);
        b = e;
      }
      std::swap(src, dst);
      merged = runs <= 1;
    }
    if (src == &memory_next_) state.cache.contacts.swap(memory_next_);  // the result in state.cache.contacts
  }
  limit_memory_next_.clear();
  for (const ConstraintRow& r : assembler_.rows()) {
    if (r.kind != ConstraintRow::Kind::Contact) limit_memory_next_.push_back({r.system, r.index, r.sign, lambda_[r.row]});
  }
  std::sort(limit_memory_next_.begin(), limit_memory_next_.end(), limit_less);
  state.cache.limits.swap(limit_memory_next_);
}

void Stepper::report_impulses(const std::vector<StepperSystem>& systems, StepperState& state) {
  for (const StepperSystem& s : systems) s.out_->contact_impulses.clear();
  const ContactSet& contacts = state.contacts;
  Vec3* const impulses = state.contact_impulses.data();  // (sized in prepare())
  for (Index i = 0; i < assembler_.num_contacts(); ++i) {
    const Contact& c = contacts[i];
    const Vec3 p = contact_impulse(i);
    impulses[i] = p;
    const Index sides[2][2] = {{c.object_a, c.body_a}, {c.object_b, c.body_b}};
    for (int side = 0; side < 2; ++side) {
      const Index obj = sides[side][0];
      if (obj < 0 || obj >= static_cast<Index>(object_system_.size())) continue;
      const Index sys = object_system_[static_cast<std::size_t>(obj)];
      if (sys < 0) continue;
      auto& list = systems[static_cast<std::size_t>(sys)].out_->contact_impulses;
      list.push_back({sides[side][1], c.position, side == 0 ? p : Vec3(-p), i});
    }
  }
  for (std::size_t i = static_cast<std::size_t>(assembler_.num_contacts()); i < state.contact_impulses.size(); ++i)
    state.contact_impulses[i].setZero();  // (contacts the assembler left out)
}

}  // namespace impulse
