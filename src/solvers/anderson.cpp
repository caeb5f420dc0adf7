// Anderson acceleration of the sweeping contact solvers.
//
// Paper: H. F. Walker, P. Ni, "Anderson acceleration for fixed-point iterations", SIAM J. Numer.
// Anal. 49(4), 2011: Algorithm AA (sec. 1) with mixing parameter beta = 1 and a moving window of
// the last m differences; the least-squares problem (their eq. 3.1, the unconstrained form with
// differences) solved by its normal equations, which for m <= 8 columns costs m^2 n flops.
//
// Why: once the contacts of an island keep their cases (opening, sticking, slipping), a block
// Gauss-Seidel sweep is an affine map in the impulses, and on a stack of bodies it contracts with
// a rate close to 1 (the slow modes are the load paths through the stack). Anderson mixing on an
// affine map is closely related to GMRES on the linear system (Walker & Ni, sec. 4) and removes
// those modes. Measured (`impulse bench scenes [--anderson 0|5]`, docs/solvers.md; sweeps per
// step, the largest island's): Kapla tower, 1000 steps, 44.5 -> 8.5 (solve 17.6 -> 3.7 ms per
// step), 1000 boxes 686 -> 96 (284 -> 17 ms); a 30-body column (tests/solvers/test_anderson.cpp)
// 10824 -> 127. Where it does not help: the sweeps of the settling 216-sphere pile without
// bisection's frictionless QP (10 s: 22.1 -> 25.1). Its slow islands are inconsistent: overlaps
// measured independently at more contacts than the spheres have degrees of freedom ask for
// push-out velocities no motion meets, so Gauss-Seidel drifts along a null direction of G until
// a contact leaves; mixing cannot remove a drift.
//
// The default of bisection (BisectionSettings::anderson_memory = 5); PGS keeps 0 (the reference
// solver of Fig. 6 and of the tests). A stance that balances on a few mesh vertices is sensitive
// to solver accuracy; the mesh-plane manifold's continuous rule (docs/fidelity.md item 10) and
// the effort-limit release (item 5) keep the Talos drop-and-hold tests at rest with mixing on.
// Measured against mixing off (docs/solvers.md, docs/fidelity.md): Hwangbo 2018 Fig. 6 at
// 100 000 steps 98.48 -> 99.10 % within 1 % of PGS
// (hang 97.99 -> 99.90 %, 73.5 -> 15.1 sweeps per step); Kapla tower, 1000 steps, 43.0 -> 8.4
// sweeps per step; the settling pile 3.94 -> 2.74 (with bisection's QP taking over plateaus);
// ANYmal standing +0.17 % instructions per step.
//
#include "impulse/solvers/anderson.hpp"

#include <algorithm>
#include <cmath>

#include "impulse/solvers/cone.hpp"

namespace impulse {

void AndersonAcceleration::reserve(Index max_rows, Index memory) {
  const Index m = std::clamp<Index>(memory, 0, kMaxMemory);
  const Index rows = m > 0 ? max_rows : 0;
  if (dF_.rows() >= rows && dF_.cols() >= m) return;
  const Index r = std::max<Index>(rows, dF_.rows()), c = std::max<Index>(m, dF_.cols());
  dF_.resize(r, c);
  dG_.resize(r, c);
  for (VecX* v : {&x_, &f_, &g_, &w_, &y_}) v->resize(r);
  state_.resize(static_cast<std::size_t>(r));
  rows_.resize(static_cast<std::size_t>(r));
}

void AndersonAcceleration::begin(const ContactProblem& problem, Index memory, bool normal_rows) {
  problem_ = &problem;
  n_ = problem.size();
  m_ = std::clamp<Index>(memory, 0, kMaxMemory);
  primed_ = false;
  if (m_ == 0) return;
  reserve(n_, m_);  // no-op when reserved
  compact_ = normal_rows;  // (the mixed rows are set up by prime(): most solves never mix)
  restart();
  changed_ = false;
}

void AndersonAcceleration::prime() {
  if (primed_ || m_ == 0) return;
  const ContactProblem& problem = *problem_;
  const Index groups = problem.nc + (n_ - 3 * problem.nc);
  k_ = n_;
  if (compact_) {
    const Index nc = problem.nc;
    k_ = n_ - 2 * nc;
    for (Index i = 0; i < nc; ++i) rows_[static_cast<std::size_t>(i)] = 3 * i + 2;
    for (Index j = 3 * nc; j < n_; ++j) rows_[static_cast<std::size_t>(j - 2 * nc)] = j;
  }
  std::fill(state_.begin(), state_.begin() + groups, static_cast<unsigned char>(255));
  for (Index a = 0; a < k_; ++a) w_[a] = std::sqrt(std::max<Scalar>(problem.diagonal(row(a)), 0));
  primed_ = true;
}

void AndersonAcceleration::restart() {
  count_ = next_ = 0;
  have_prev_ = false;
}

void AndersonAcceleration::before_sweep(const VecXcref& lambda) {
  prime();
  if (compact_) {
    for (Index a = 0; a < k_; ++a) x_[a] = lambda[row(a)];
  } else {
    x_.head(n_) = lambda;
  }
  changed_ = false;
}

bool AndersonAcceleration::after_sweep(VecXref lambda, Scalar error) {
  if (m_ == 0) return false;
  if (have_prev_ && (changed_ || error > 10 * prev_error_)) {
    restart();
  }
  prev_error_ = error;
  if (!compact_) return mix(lambda);
  auto y = y_.head(k_);
  for (Index a = 0; a < k_; ++a) y[a] = lambda[row(a)];
  if (!mix(y)) return false;
  for (Index a = 0; a < k_; ++a) lambda[row(a)] = y[a];
  return true;
}

bool AndersonAcceleration::mix(VecXref lambda) {
  const Index n = k_;
  auto f = x_.head(n);
  f = w_.head(n).cwiseProduct(lambda - f);  // f_k = W (g(x_k) - x_k), over x_k
  if (have_prev_) {                         // new difference columns
    dF_.col(next_).head(n) = f - f_.head(n);
    dG_.col(next_).head(n) = lambda - g_.head(n);
    count_ = std::min(count_ + 1, m_);  // (the stored columns are 0 .. count_ - 1, next_ among them)
    for (Index c = 0; c < count_; ++c)
      gram_(next_, c) = gram_(c, next_) = dF_.col(next_).head(n).dot(dF_.col(c).head(n));
    next_ = (next_ + 1) % m_;
  }
  f_.head(n) = f;
  g_.head(n) = lambda;
  have_prev_ = true;
  if (count_ == 0) return false;

  using Small = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, 0, kMaxMemory, kMaxMemory>;
  using SmallVec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1, 0, kMaxMemory, 1>;
  Small A = gram_.topLeftCorner(count_, count_);
  SmallVec b(count_);
  for (Index a = 0; a < count_; ++a) b[a] = dF_.col(a).head(n).dot(f);
  Scalar scale = A(0, 0);  // (count_ >= 1; the largest diagonal entry)
  for (Index a = 1; a < count_; ++a) scale = std::max(scale, A(a, a));
  if (!(scale > 0) || !std::isfinite(scale)) {
    restart();
    return false;
  }
  A.diagonal().array() += 1e-10 * scale;
  const SmallVec gamma = A.ldlt().solve(b);
  if (!gamma.allFinite()) {
    restart();
    return false;
  }
  for (Index a = 0; a < count_; ++a) lambda.head(n) -= gamma[a] * dG_.col(a).head(n);
  // back onto the feasible set
  const ContactProblem& p = *problem_;
  if (compact_) {
    // (the normal rows of frictionless contacts, projected as project_to_cone projects (0, 0, z)
    // with mu = 0, and the limit rows; no box rows)
    for (Index a = 0; a < n; ++a) lambda[a] = std::max<Scalar>(lambda[a], 0);
    return true;
  }
  for (Index i = 0; i < p.nc; ++i) lambda.segment<3>(3 * i) = project_to_cone(lambda.segment<3>(3 * i), p.mu[i]);
  for (Index j = 3 * p.nc; j < p.first_box_row(); ++j) lambda[j] = std::max<Scalar>(lambda[j], 0);
  for (Index j = p.first_box_row(); j < n; ++j) {
    const Scalar bound = p.box_bound(j);
    lambda[j] = std::clamp(lambda[j], -bound, bound);
  }
  return true;
}

}  // namespace impulse
