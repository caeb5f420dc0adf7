// ContactProblem accessors over its dense or factored G, and DelassusProduct (contact_problem.hpp).
#include "impulse/contact/contact_problem.hpp"

#include <algorithm>

namespace impulse {

namespace {
// first row and row count of group g in a problem with nc contacts
inline Index group_row(Index g, Index nc) { return g < nc ? 3 * g : 2 * nc + g; }
inline int group_rows(Index g, Index nc) { return g < nc ? 3 : 1; }
// x restricted to group g, zero-padded to 3
inline Vec3 group_values(const VecXcref& x, Index g, Index nc) {
  if (g < nc) return x.segment<3>(3 * g);
  return Vec3(x[2 * nc + g], 0, 0);
}
}  // namespace

const MatX& ContactProblem::empty_matrix() {
  static const MatX empty(0, 0);
  return empty;
}

const VecX& ContactProblem::empty_vector() {
  static const VecX empty(0);
  return empty;
}

Scalar ContactProblem::factored_diagonal(Index r) const {
  if (r < 3 * nc) return factored->diag[r / 3](r % 3, r % 3);
  return factored->diag[r - 2 * nc](0, 0);
}

Scalar ContactProblem::row_dot(Index r, const VecXcref& x) const {
  DelassusProduct product;
  product.reset(*this, x);
  return product.row(r, x);
}

void ContactProblem::multiply(const VecXcref& x, VecXref y) const {
  DelassusProduct product;
  product.multiply(*this, x, y);
}

MatX ContactProblem::dense() const {
  if (!factored) return G;
  // column by column: G e_r
  const Index n = size();
  MatX D(n, n);
  VecX e = VecX::Zero(n), y(n);
  DelassusProduct product;
  for (Index r = 0; r < n; ++r) {
    e[r] = 1;
    product.multiply(*this, e, y);
    D.col(r) = y;
    e[r] = 0;
  }
  return D;
}

// z = sum_p D^-1 Y_p lambda_p over all pieces: every group's update from z = 0.
void DelassusProduct::reset(const ContactProblem& problem, const VecXcref& lambda) {
  problem_ = &problem;
  normal_bound_ = false;  // (bind_normal_rows() binds this problem's pieces)
  const FactoredG* F = problem.factored;
  if (!F) return;
  if (z_.size() < F->nz) z_.resize(std::max<Index>(F->nz, 2 * z_.size()));
  z_.head(F->nz).setZero();
  const Index nc = problem.nc, ng = nc + problem.nl + problem.nb;
  for (Index g = 0; g < ng; ++g) {
    // a frictionless contact with zero tangent impulses (always so for one built as one row,
    // contact/delassus.hpp): its normal row's update alone, a third of the work (the same
    // values: the tangent terms are products with zero impulses)
    if (g < nc && !(problem.mu[g] > 0) && lambda[3 * g] == 0 && lambda[3 * g + 1] == 0) {
      update_row(g, 2, lambda[3 * g + 2]);
      continue;
    }
    update(g, group_values(lambda, g, nc));
  }
}

void DelassusProduct::bind_normal_rows() {
  normal_bound_ = false;
  const ContactProblem& problem = *problem_;
  const FactoredG* F = problem.factored;
  if (!F) return;
  const Index nc = problem.nc;
  const Index np = F->begin[nc] - F->begin[0];
  if (static_cast<Index>(npiece_.size()) < np) npiece_.resize(static_cast<std::size_t>(std::max<Index>(np, 2 * npiece_.size())));
  if (static_cast<Index>(nbegin_.size()) < nc + 1) nbegin_.resize(static_cast<std::size_t>(std::max<Index>(nc + 1, 2 * nbegin_.size())));
  Index k = 0;
  for (Index g = 0; g < nc; ++g) {
    nbegin_[static_cast<std::size_t>(g)] = k;
    for (Index j = F->begin[g]; j < F->begin[g + 1]; ++j, ++k) {
      const FactoredPiece& p = F->piece[j];
      const Index* dofs = F->dofs + p.y;
      if (!detail::free_body_piece(p, dofs)) return;  // (read_row's general path)
      NormalPiece& q = npiece_[static_cast<std::size_t>(k)];
      const Scalar* Y = F->Y + 3 * p.y + 2;
      const Scalar* DY = F->DY + 3 * p.y + 2;
      for (int t = 0; t < 6; ++t) q.Y[t] = Y[3 * t], q.DY[t] = DY[3 * t];
      q.z = p.z + dofs[0];
    }
  }
  nbegin_[static_cast<std::size_t>(nc)] = k;
  normal_bound_ = true;
}

void DelassusProduct::reset_normal(const VecXcref& lambda) {
  const ContactProblem& problem = *problem_;
  const FactoredG* F = problem.factored;
  if (!F) return;
  if (!normal_bound_) return reset(problem, lambda);
  z_.head(F->nz).setZero();
  const Index nc = problem.nc, ng = nc + problem.nl + problem.nb;
  for (Index g = 0; g < nc; ++g) add_normal(g, lambda[3 * g + 2]);
  for (Index g = nc; g < ng; ++g) update_row(g, 0, lambda[2 * nc + g]);
}

void DelassusProduct::multiply(const ContactProblem& problem, const VecXcref& x, VecXref y) {
  if (!problem.factored) {
    y.noalias() = problem.G * x;
    return;
  }
  reset(problem, x);
  const Index ng = problem.nc + problem.nl + problem.nb;
  for (Index g = 0; g < ng; ++g) {
    const Vec3 v = read(g);
    y.segment(group_row(g, problem.nc), group_rows(g, problem.nc)) = v.head(group_rows(g, problem.nc));
  }
}

}  // namespace impulse
