#include "impulse/stepper/stepper.hpp"

#include <algorithm>
#include <cmath>

#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "impulse/world/articulated_system.hpp"

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
double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// Dynamics stage of one system: Jacobians and poses at q, M~ factored, u_free.
//   M~ = M + dt (Kd + D) + dt^2 Kp           (implicit PD and joint damping D, DESIGN.md sec. 2)
//   u_free = u + M~^-1 dt (tau + Kp (q* - q - dt u) + Kd (u* - u) - D u - h + J^T f_ext)
// The PD torque is evaluated at the end of the step (q + dt u+, u+), which is what makes stiff
// gains stable at 1 ms; moving its u+ terms to the left gives M~.
void dynamics_stage(ArticulatedSystem& s, Scalar dt, VecX& rhs, const Vec6Vector& f_ext, bool has_f_ext, Data& d,
                    VecX& u_free) {
  const Model& m = s.model();
  const VecX& q = s.q();
  const VecX& u = s.u();
  // h - sum J^T f_ext (RNEA with zero acceleration), M and the joint Jacobians from one
  // kinematics pass
  rhs = compute_step_dynamics(m, d, q, u, has_f_ext ? &f_ext : nullptr);
  rhs = s.generalized_force() - rhs - m.damping.cwiseProduct(u);
  for (Index i = 0; i < m.nb; ++i) {
    if (m.nv_joint[i] != 1) continue;
    const Index k = m.idx_v[i], iq = m.idx_q[i];
    const Scalar kp = s.kp()[k], kd = s.kd()[k];
    rhs[k] += kp * (s.q_target()[iq] - q[iq] - dt * u[k]) + kd * (s.u_target()[k] - u[k]);
    d.M(k, k) += dt * (kd + m.damping[k]) + dt * dt * kp;
  }
  rhs *= dt;
  ltdl_factor(m, d);
  ltdl_solve(m, d, rhs);
  u_free = u + rhs;
}

}  // namespace

Stepper::Stepper() : solver_(make_contact_solver("bisection")), contacts_(256) {}

void Stepper::reserve(const std::vector<ArticulatedSystem*>& systems, const std::vector<Index>& object_system,
                      const StepSettings& st) {
  std::vector<const Model*> models;
  for (ArticulatedSystem* s : systems) models.push_back(&s->model());
  contacts_.reserve(st.max_contacts);
  assembler_.reserve(models, st.max_contacts);
  object_system_ = object_system;
  views_.resize(systems.size());
  u_next_.resize(systems.size());
  for (std::size_t i = 0; i < systems.size(); ++i) u_next_[i].setZero(systems[i]->nv());
  Index max_rows = 3 * st.max_contacts;
  for (const Model* m : models) max_rows += 2 * m->nv;
  lambda_.setZero(max_rows);
  for (VecX* v : {&kick_, &v_, &c2_, &lambda2_, &lambda_p_}) v->setZero(max_rows);
  u_pos_.resize(systems.size());
  for (std::size_t i = 0; i < systems.size(); ++i) u_pos_[i].setZero(systems[i]->nv());
  solver_->reserve(max_rows);
  cache_.memory.clear();
  cache_.memory.reserve(static_cast<std::size_t>(st.max_contacts));
  memory_next_.reserve(static_cast<std::size_t>(st.max_contacts));
  cache_.limit_memory.clear();
  cache_.limit_memory.reserve(static_cast<std::size_t>(max_rows));
  limit_memory_next_.reserve(static_cast<std::size_t>(max_rows));
  prepared_ = false;
}

void Stepper::set_solver(std::unique_ptr<ContactSolver> solver) {
  solver->reserve(lambda_.size());
  solver_ = std::move(solver);
}

void Stepper::prepare(const std::vector<ArticulatedSystem*>& systems, CollisionWorld& collision,
                      const StepSettings& st) {
  stats_ = StepStats();
  // 1. dynamics
  auto t0 = Clock::now();
  for (std::size_t i = 0; i < systems.size(); ++i) {
    ArticulatedSystem& s = *systems[i];
    dynamics_stage(s, st.dt, s.rhs_, s.f_ext_, s.has_f_ext_, s.data_, s.u_free_);
    views_[i] = SystemView{&s.model_, &s.data_, &s.q_, &s.u_, &s.u_free_};
  }
  stats_.times.dynamics = us_since(t0);

  // 2. collision
  t0 = Clock::now();
  for (ArticulatedSystem* s : systems) collision.update(s->object_, s->data_.oMi);
  collision.detect(contacts_);
  stats_.times.collision = us_since(t0);

  // 3. Delassus assembly
  t0 = Clock::now();
  assembler_.assemble(views_, object_system_, contacts_, st.dt, st.contact);
  stats_.times.delassus = us_since(t0);
  stats_.contacts = assembler_.num_contacts();
  stats_.limits = assembler_.num_limits();
  for (const Contact& c : contacts_) stats_.max_penetration = std::max(stats_.max_penetration, c.depth);
  prepared_ = true;
}

StepStatus Stepper::finish(const std::vector<ArticulatedSystem*>& systems, const StepSettings& st) {
  // 4. solve
  auto t0 = Clock::now();
  const ContactProblem problem = assembler_.problem();
  const Index n = problem.size();
  auto lambda = lambda_.head(n);
  if (st.warm_start) {
    warm_start(n);
  } else {
    lambda.setZero();
  }
  if (n > 0) {
    stats_.solver = solver_->solve(problem, lambda);
    if (st.contact.restitution_law == RestitutionLaw::Poisson && assembler_.num_bouncing() > 0 &&
        stats_.solver.status != SolverStatus::NumericalIssue) {
      stats_.restitution = restitution_phase(problem, lambda);
    }
  } else {
    stats_.solver = SolverResult{SolverStatus::Converged, 0, 0};
  }
  stats_.times.solve = us_since(t0);

  // 5. integrate: u+ = u_free + M~^-1 J^T lambda, q+ = q (+) dt u+
  t0 = Clock::now();
  StepStatus status = StepStatus::Ok;
  if (contacts_.overflow()) status = StepStatus::ContactOverflow;
  if (stats_.solver.status == SolverStatus::MaxIterations) status = StepStatus::SolverNotConverged;
  if (stats_.solver.status == SolverStatus::NumericalIssue) status = StepStatus::SolverFailed;
  assembler_.apply(views_, lambda, u_next_);
  const bool split = assembler_.num_position_rows() > 0 && status != StepStatus::SolverFailed;
  if (split) {  // q moves with u+ + u_p = u_free + M~^-1 J^T (lambda + lambda_p): one more apply
    position_correction(problem);
    lambda_p_.head(n) += lambda;
    assembler_.apply(views_, lambda_p_.head(n), u_pos_);
  }
  bool finite = true;
  for (std::size_t i = 0; i < systems.size(); ++i) {
    ArticulatedSystem& s = *systems[i];
    s.model_.integrate(s.q_, split ? u_pos_[i] : u_next_[i], st.dt, s.q_next_);
    finite = finite && u_next_[i].allFinite() && s.q_next_.allFinite();
  }
  if (finite) {
    for (std::size_t i = 0; i < systems.size(); ++i) {
      ArticulatedSystem& s = *systems[i];
      s.q_.swap(s.q_next_);
      s.u_.swap(u_next_[i]);
    }
    remember();
  } else {
    status = StepStatus::NonFinite;
    lambda.setZero();
  }
  report_impulses(systems);
  for (ArticulatedSystem* s : systems) s->clear_external_forces();
  stats_.times.integrate = us_since(t0);
  stats_.status = status;
  prepared_ = false;
  return status;
}

bool Stepper::restitution_phase(const ContactProblem& problem, VecXref lambda) {
  const Index n = problem.size();
  const MatXcref& G = problem.G;
  const VecXcref& c = problem.c;
  // lambda_r = e lambda_c,n on the bouncing rows that took a compression impulse
  auto k = kick_.head(n);
  k.setZero();
  Scalar lGl_n = 0;  // |lambda_c,n|_G^2 over those rows
  for (Index a = 0; a < n; ++a) {
    const Scalar e = assembler_.bounce(a);
    if (!(e > 0) || !(lambda[a] > 0)) continue;
    k[a] = e * lambda[a];
    for (Index b = 0; b < n; ++b) {
      if (assembler_.bounce(b) > 0 && lambda[b] > 0) lGl_n += lambda[a] * G(a, b) * lambda[b];
    }
  }
  if (!(lGl_n > 0)) return false;
  // v = G lambda_c + c (target-relative), v + b the actual velocity after compression
  auto v = v_.head(n);
  auto Gk = c2_.head(n);
  v.noalias() = G * lambda;
  Gk.noalias() = G * k;
  v += c;
  Scalar l_vf = 0, l_G_l = 0, k_vc = 0;
  for (Index a = 0; a < n; ++a) {
    const Scalar b = assembler_.target(a);
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
  stats_.restitution_scale = s;
  k *= s;
  // second problem: v2 = G lambda_2 + (v + G lambda_r), inelastic, from a cold start
  auto c2 = c2_.head(n);
  c2 = v + s * Gk;
  auto lambda2 = lambda2_.head(n);
  lambda2.setZero();
  const SolverResult r2 = solver_->solve(ContactProblem(G, c2, problem.mu, problem.nc, problem.nl), lambda2);
  SolverResult& r = stats_.solver;
  r.iterations += r2.iterations;
  // a failed correction leaves the inelastic impulse lambda_c, which is a valid answer
  if (r2.status == SolverStatus::NumericalIssue) return false;
  lambda += k + lambda2;
  r.residual = std::max(r.residual, r2.residual);
  if (r.status == SolverStatus::Converged) r.status = r2.status;
  return true;
}

void Stepper::position_correction(const ContactProblem& problem) {
  const Index n = problem.size(), nc = problem.nc;
  const MatXcref& G = problem.G;
  auto lp = lambda_p_.head(n);
  lp.setZero();
  // unilateral rows: normal row 3i + 2 of each contact, then the limit rows
  auto row = [nc](Index k) { return k < nc ? 3 * k + 2 : 2 * nc + k; };
  const Index nu = nc + problem.nl;
  Index sweeps = 0;
  while (sweeps < 100) {
    ++sweeps;
    Scalar change = 0, size = 0;
    for (Index a = 0; a < nu; ++a) {
      const Index r = row(a);
      const Scalar G_rr = G(r, r);
      if (!(G_rr > 0)) continue;
      Scalar w = -assembler_.position_target(r);
      for (Index b = 0; b < nu; ++b) w += G(r, row(b)) * lp[row(b)];
      const Scalar next = std::max<Scalar>(0, lp[r] - w / G_rr);
      change = std::max(change, std::abs(next - lp[r]));
      size = std::max(size, next);
      lp[r] = next;
    }
    if (change <= 1e-10 * size) break;
  }
  stats_.position_rows = assembler_.num_position_rows();
  stats_.position_sweeps = sweeps;
}

void Stepper::restore_cache(const StepperCache& cache) {
  cache_.memory.assign(cache.memory.begin(), cache.memory.end());
  cache_.limit_memory.assign(cache.limit_memory.begin(), cache.limit_memory.end());
}

Vec3 Stepper::contact_impulse(Index i) const {
  if (i < 0 || i >= assembler_.num_contacts()) return Vec3::Zero();
  return assembler_.contact_frame(i) * lambda_.segment<3>(3 * i);
}

// Last step's impulses for contacts with the same shapes within 2 cm (contact frames may have
// rotated: the world-frame impulse is projected on the new frame), and for the same limit rows.
void Stepper::warm_start(Index n) {
  auto lambda = lambda_.head(n);
  lambda.setZero();
  const Scalar radius2 = 0.02 * 0.02;
  for (Index i = 0; i < assembler_.num_contacts(); ++i) {
    const Contact& c = contacts_[i];
    const Memory* best = nullptr;
    Scalar best_d2 = radius2;
    for (const Memory& m : cache_.memory) {
      if (m.object_a != c.object_a || m.shape_a != c.shape_a || m.object_b != c.object_b || m.shape_b != c.shape_b)
        continue;
      const Scalar d2 = (m.position - c.position).squaredNorm();
      if (d2 < best_d2) best = &m, best_d2 = d2;
    }
    if (best) lambda.segment<3>(3 * i) = assembler_.contact_frame(i).transpose() * best->impulse_W;
  }
  for (const ConstraintRow& r : assembler_.rows()) {
    if (r.kind != ConstraintRow::Kind::Limit) continue;
    for (const LimitMemory& m : cache_.limit_memory) {
      if (m.system == r.system && m.dof == r.index && m.sign == r.sign) lambda[r.row] = m.lambda;
    }
  }
}

void Stepper::remember() {
  memory_next_.clear();
  for (Index i = 0; i < assembler_.num_contacts(); ++i) {
    const Contact& c = contacts_[i];
    memory_next_.push_back({c.object_a, c.shape_a, c.object_b, c.shape_b, c.position, contact_impulse(i)});
  }
  cache_.memory.swap(memory_next_);
  limit_memory_next_.clear();
  for (const ConstraintRow& r : assembler_.rows()) {
    if (r.kind == ConstraintRow::Kind::Limit) limit_memory_next_.push_back({r.system, r.index, r.sign, lambda_[r.row]});
  }
  cache_.limit_memory.swap(limit_memory_next_);
}

void Stepper::report_impulses(const std::vector<ArticulatedSystem*>& systems) {
  for (ArticulatedSystem* s : systems) s->contact_impulses_.clear();
  for (Index i = 0; i < assembler_.num_contacts(); ++i) {
    const Contact& c = contacts_[i];
    const Vec3 p = contact_impulse(i);
    const Index sides[2][2] = {{c.object_a, c.body_a}, {c.object_b, c.body_b}};
    for (int side = 0; side < 2; ++side) {
      const Index obj = sides[side][0];
      if (obj < 0 || obj >= static_cast<Index>(object_system_.size())) continue;
      const Index sys = object_system_[static_cast<std::size_t>(obj)];
      if (sys < 0) continue;
      auto& list = systems[static_cast<std::size_t>(sys)]->contact_impulses_;
      if (list.size() < list.capacity()) list.push_back({sides[side][1], c.position, side == 0 ? p : Vec3(-p), i});
    }
  }
}

}  // namespace impulse
