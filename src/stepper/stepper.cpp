#include "impulse/stepper/stepper.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/step_dynamics.hpp"

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
void dynamics_stage(const StepperSystem& s, Scalar dt, VecX& rhs, const Vec6Vector& f_ext, bool has_f_ext, Data& d,
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

Stepper::Stepper() : solver_(make_contact_solver("bisection")) {}

void Stepper::reserve(const std::vector<StepperSystem>& systems, const std::vector<Index>& object_system,
                      const StepSettings& st) {
  std::vector<const Model*> models;
  for (const StepperSystem& s : systems) models.push_back(s.model_);
  contacts_.reserve(st.max_contacts);
  assembler_.reserve(models);
  object_system_ = object_system;
  views_.resize(systems.size());
  u_next_.resize(systems.size());
  for (std::size_t i = 0; i < systems.size(); ++i) u_next_[i].setZero(systems[i].nv());
  u_pos_.resize(systems.size());
  for (std::size_t i = 0; i < systems.size(); ++i) u_pos_[i].setZero(systems[i].nv());
  cache_.contacts.clear();
  cache_.limits.clear();
  for (auto* v : {&cache_.contacts, &memory_next_}) v->reserve(32);  // then they grow by doubling
  for (auto* v : {&cache_.limits, &limit_memory_next_}) v->reserve(32);
  prepared_ = false;
}

void Stepper::set_solver(std::unique_ptr<ContactSolver> solver) {
  solver->reserve(ll_.size());
  solver_ = std::move(solver);
}

// Buffers sized for n_rows global rows and islands of up to n_island rows (geometric growth, so
// a scene allocates only while it reaches new sizes).
void Stepper::grow(Index n_rows, Index n_island) {
  auto up = [](VecX& v, Index n) {
    if (v.size() < n) v.setZero(std::max<Index>({n, 2 * v.size(), 32}));
  };
  up(lambda_, n_rows);
  up(lambda_p_, n_rows);
  for (VecX* v : {&ll_, &lp_, &kick_, &v_, &c2_, &lambda2_}) up(*v, n_island);
  if (solver_->capacity() < n_island) solver_->reserve(ll_.size());
}

std::size_t Stepper::memory_bytes() const {
  std::size_t b = 0;
  for (const VecX* v : {&lambda_, &lambda_p_, &ll_, &lp_, &kick_, &v_, &c2_, &lambda2_})
    b += static_cast<std::size_t>(v->size()) * sizeof(Scalar);
  b += (cache_.contacts.capacity() + memory_next_.capacity()) * sizeof(ContactMemory);
  b += (cache_.limits.capacity() + limit_memory_next_.capacity()) * sizeof(LimitMemory);
  return b + assembler_.memory_bytes();
}

void Stepper::prepare(const std::vector<StepperSystem>& systems, CollisionWorld& collision,
                      const StepSettings& st) {
  stats_ = StepStats();
  // 1. dynamics
  auto t0 = Clock::now();
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const StepperSystem& s = systems[i];
    dynamics_stage(s, st.dt, *s.rhs_, *s.f_ext_, *s.has_f_ext_, *s.data_, *s.u_free_);
    views_[i] = SystemView{s.model_, s.data_, s.q_, s.u_, s.u_free_};
  }
  stats_.times.dynamics = us_since(t0);

  // 2. collision
  t0 = Clock::now();
  for (const StepperSystem& s : systems) collision.update(s.object_, s.data_->oMi);
  collision.detect(contacts_);
  stats_.times.collision = us_since(t0);

  // 3. Delassus assembly, per island
  t0 = Clock::now();
  assembler_.set_dense_limit(solver_->supports_sparse() ? DelassusAssembler::kDefaultDenseLimit
                                                        : std::numeric_limits<Index>::max());
  assembler_.assemble(views_, object_system_, contacts_, st.dt, st.contact);
  stats_.times.delassus = us_since(t0);
  stats_.contacts = assembler_.num_contacts();
  stats_.limits = assembler_.num_limits();
  stats_.contacts_dropped = contacts_.dropped();
  stats_.islands = assembler_.num_islands();
  for (Index k = 0; k < assembler_.num_islands(); ++k) {
    const IslandView isl = assembler_.island(k);
    stats_.largest_island = std::max(stats_.largest_island, isl.num_systems);
    stats_.largest_island_rows = std::max(stats_.largest_island_rows, isl.problem.size());
  }
  for (const Contact& c : contacts_) stats_.max_penetration = std::max(stats_.max_penetration, c.depth);
  prepared_ = true;
}

StepStatus Stepper::finish(const std::vector<StepperSystem>& systems, const StepSettings& st) {
  // 4. solve, island by island (global lambda: warm start in, solution out)
  auto t0 = Clock::now();
  const Index n = assembler_.num_rows();
  grow(n, stats_.largest_island_rows);
  auto lambda = lambda_.head(n);
  if (st.warm_start) {
    warm_start(n);
  } else {
    lambda.setZero();
  }
  const bool split = assembler_.num_position_rows() > 0;
  if (split) lambda_p_.head(n).setZero();
  SolverResult& total = stats_.solver;
  total = SolverResult{SolverStatus::Converged, 0, 0};
  for (Index k = 0; k < assembler_.num_islands(); ++k) {
    const IslandView isl = assembler_.island(k);
    const Index m = isl.problem.size();
    auto ll = ll_.head(m);
    for (Index a = 0; a < m; ++a) ll[a] = lambda[isl.global_row[a]];
    SolverResult r = solver_->solve(isl.problem, ll);
    if (st.contact.restitution_law == RestitutionLaw::Poisson && isl.num_bouncing > 0 &&
        r.status != SolverStatus::NumericalIssue) {
      stats_.restitution = restitution_phase(isl, ll, r) || stats_.restitution;
    }
    if (r.status != SolverStatus::Converged) ++stats_.islands_not_converged;
    if (r.status == SolverStatus::NumericalIssue) ll.setZero();
    for (Index a = 0; a < m; ++a) lambda[isl.global_row[a]] = ll[a];
    // worst status over the islands (NumericalIssue > MaxIterations > Converged)
    if (r.status == SolverStatus::NumericalIssue || total.status == SolverStatus::Converged) total.status = r.status;
    total.iterations = std::max(total.iterations, r.iterations);
    total.residual = std::max(total.residual, r.residual);
    if (split && isl.num_position_rows > 0 && r.status != SolverStatus::NumericalIssue) {
      auto lp = lp_.head(m);
      position_correction(isl, lp);
      for (Index a = 0; a < m; ++a) lambda_p_[isl.global_row[a]] = lp[a];
    }
  }
  stats_.times.solve = us_since(t0);

  // 5. integrate: u+ = u_free + M~^-1 J^T lambda, q+ = q (+) dt u+
  t0 = Clock::now();
  StepStatus status = StepStatus::Ok;
  if (contacts_.overflow()) status = StepStatus::ContactOverflow;
  if (stats_.solver.status == SolverStatus::MaxIterations) status = StepStatus::SolverNotConverged;
  if (stats_.solver.status == SolverStatus::NumericalIssue) status = StepStatus::SolverFailed;
  assembler_.apply(views_, lambda, u_next_);
  if (split) {  // q moves with u+ + u_p = u_free + M~^-1 J^T (lambda + lambda_p): one more apply
    lambda_p_.head(n) += lambda;
    assembler_.apply(views_, lambda_p_.head(n), u_pos_);
  }
  bool finite = true;
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const StepperSystem& s = systems[i];
    s.model_->integrate(*s.q_, split ? u_pos_[i] : u_next_[i], st.dt, *s.q_next_);
    finite = finite && u_next_[i].allFinite() && s.q_next_->allFinite();
  }
  if (finite) {
    for (std::size_t i = 0; i < systems.size(); ++i) {
      const StepperSystem& s = systems[i];
      s.q_->swap(*s.q_next_);
      s.u_->swap(u_next_[i]);
    }
    remember();
  } else {
    status = StepStatus::NonFinite;
    lambda.setZero();
  }
  report_impulses(systems);
  for (const StepperSystem& s : systems) s.clear_external_forces();
  stats_.times.integrate = us_since(t0);
  stats_.status = status;
  prepared_ = false;
  return status;
}

bool Stepper::restitution_phase(const IslandView& isl, VecXref lambda, SolverResult& r) {
  const ContactProblem& problem = isl.problem;
  const Index n = problem.size();
  const VecXcref& c = problem.c;
  // lambda_r = e lambda_c,n on the bouncing rows that took a compression impulse
  auto k = kick_.head(n);
  k.setZero();
  auto ln = v_.head(n);  // lambda_c,n: lambda_c on those rows, 0 elsewhere
  ln.setZero();
  for (Index a = 0; a < n; ++a) {
    const Scalar e = isl.bounce[a];
    if (!(e > 0) || !(lambda[a] > 0)) continue;
    k[a] = e * lambda[a];
    ln[a] = lambda[a];
  }
  problem.multiply(ln, c2_.head(n));
  const Scalar lGl_n = ln.dot(c2_.head(n));  // |lambda_c,n|_G^2 over those rows
  if (!(lGl_n > 0)) return false;
  // v = G lambda_c + c (target-relative), v + b the actual velocity after compression
  auto v = v_.head(n);
  auto Gk = c2_.head(n);
  problem.multiply(lambda, v);
  problem.multiply(k, Gk);
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
  stats_.restitution_scale = s;
  k *= s;
  // second problem: v2 = G lambda_2 + (v + G lambda_r), inelastic, from a cold start
  auto c2 = c2_.head(n);
  c2 = v + s * Gk;
  auto lambda2 = lambda2_.head(n);
  lambda2.setZero();
  const SolverResult r2 = solver_->solve(problem.with_c(c2), lambda2);
  r.iterations += r2.iterations;
  // a failed correction leaves the inelastic impulse lambda_c, which is a valid answer
  if (r2.status == SolverStatus::NumericalIssue) return false;
  lambda += k + lambda2;
  r.residual = std::max(r.residual, r2.residual);
  if (r.status == SolverStatus::Converged) r.status = r2.status;
  return true;
}

void Stepper::position_correction(const IslandView& isl, VecXref lp) {
  const ContactProblem& problem = isl.problem;
  const Index nc = problem.nc;
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
      const Scalar G_rr = problem.diagonal(r);
      if (!(G_rr > 0)) continue;
      // lp is zero off the unilateral rows, so G(r, :) lp sums over the unilateral rows only
      const Scalar w = problem.row_dot(r, lp) - isl.position_target[r];
      const Scalar next = std::max<Scalar>(0, lp[r] - w / G_rr);
      change = std::max(change, std::abs(next - lp[r]));
      size = std::max(size, next);
      lp[r] = next;
    }
    if (change <= 1e-10 * size) break;
  }
  stats_.position_rows += isl.num_position_rows;
  stats_.position_sweeps = std::max(stats_.position_sweeps, sweeps);
}

Vec3 Stepper::contact_impulse(Index i) const {
  if (i < 0 || i >= assembler_.num_contacts()) return Vec3::Zero();
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
bool same_key(const ContactMemory& m, const Contact& c) {
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

void Stepper::warm_start(Index n) {
  auto lambda = lambda_.head(n);
  lambda.setZero();
  const Scalar radius2 = 0.02 * 0.02;
  const std::vector<ContactMemory>& memory = cache_.contacts;
  for (Index i = 0; i < assembler_.num_contacts(); ++i) {
    if (assembler_.contact_island(i) < 0) continue;  // no rows (nothing dynamic): no impulse
    const Contact& c = contacts_[i];
    const ContactMemory* best = nullptr;
    Scalar best_d2 = radius2;
    auto it = std::lower_bound(memory.begin(), memory.end(), c, key_less);
    for (; it != memory.end() && same_key(*it, c); ++it) {
      const Scalar d2 = (it->position - c.position).squaredNorm();
      if (d2 < best_d2) best = &*it, best_d2 = d2;
    }
    if (best) lambda.segment<3>(3 * i) = assembler_.contact_frame(i).transpose() * best->impulse_W;
  }
  const std::vector<LimitMemory>& limits = cache_.limits;
  for (const ConstraintRow& r : assembler_.rows()) {
    if (r.kind != ConstraintRow::Kind::Limit) continue;
    const LimitMemory key{r.system, r.index, r.sign, 0};
    auto it = std::lower_bound(limits.begin(), limits.end(), key, limit_less);
    if (it != limits.end() && !limit_less(key, *it)) lambda[r.row] = it->lambda;
  }
}

void Stepper::remember() {
  memory_next_.clear();
  for (Index i = 0; i < assembler_.num_contacts(); ++i) {
    const Contact& c = contacts_[i];
    memory_next_.push_back({c.object_a, c.shape_a, c.object_b, c.shape_b, c.position, contact_impulse(i)});
  }
  std::sort(memory_next_.begin(), memory_next_.end(), memory_less);  // (std::sort: no allocation)
  cache_.contacts.swap(memory_next_);
  limit_memory_next_.clear();
  for (const ConstraintRow& r : assembler_.rows()) {
    if (r.kind == ConstraintRow::Kind::Limit) limit_memory_next_.push_back({r.system, r.index, r.sign, lambda_[r.row]});
  }
  std::sort(limit_memory_next_.begin(), limit_memory_next_.end(), limit_less);
  cache_.limits.swap(limit_memory_next_);
}

void Stepper::report_impulses(const std::vector<StepperSystem>& systems) {
  for (const StepperSystem& s : systems) s.contact_impulses_->clear();
  for (Index i = 0; i < assembler_.num_contacts(); ++i) {
    const Contact& c = contacts_[i];
    const Vec3 p = contact_impulse(i);
    const Index sides[2][2] = {{c.object_a, c.body_a}, {c.object_b, c.body_b}};
    for (int side = 0; side < 2; ++side) {
      const Index obj = sides[side][0];
      if (obj < 0 || obj >= static_cast<Index>(object_system_.size())) continue;
      const Index sys = object_system_[static_cast<std::size_t>(obj)];
      if (sys < 0) continue;
      auto& list = *systems[static_cast<std::size_t>(sys)].contact_impulses_;
      list.push_back({sides[side][1], c.position, side == 0 ? p : Vec3(-p), i});
    }
  }
}

}  // namespace impulse
