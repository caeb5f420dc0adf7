// ContactProblem accessors over its dense or block-sparse G (contact_problem.hpp).
#include "impulse/contact/contact_problem.hpp"

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
inline Index row_group(Index r, Index nc, int& sub) {
  if (r < 3 * nc) {
    sub = static_cast<int>(r % 3);
    return r / 3;
  }
  sub = 0;
  return r - 2 * nc;
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

Scalar ContactProblem::sparse_diagonal(Index r) const {
  int sub = 0;
  const Index g = row_group(r, nc, sub);
  return sparse->block[sparse->diag[g]](sub, sub);
}

Vec3 ContactProblem::sparse_contact_rows(Index i, const VecXcref& x) const {
  Vec3 v = Vec3::Zero();
  for (Index k = sparse->begin[i]; k < sparse->begin[i + 1]; ++k) {
    v.noalias() += sparse->block[k] * group_values(x, sparse->col[k], nc);
  }
  return v;
}

Scalar ContactProblem::sparse_row_dot(Index r, const VecXcref& x) const {
  int sub = 0;
  const Index g = row_group(r, nc, sub);
  Scalar v = 0;
  for (Index k = sparse->begin[g]; k < sparse->begin[g + 1]; ++k) {
    v += sparse->block[k].row(sub).dot(group_values(x, sparse->col[k], nc));
  }
  return v;
}

void ContactProblem::multiply(const VecXcref& x, VecXref y) const {
  if (!sparse) {
    y.noalias() = G * x;
    return;
  }
  const Index ng = nc + nl + nb;
  for (Index g = 0; g < ng; ++g) {
    Vec3 v = Vec3::Zero();
    for (Index k = sparse->begin[g]; k < sparse->begin[g + 1]; ++k) {
      v.noalias() += sparse->block[k] * group_values(x, sparse->col[k], nc);
    }
    y.segment(group_row(g, nc), group_rows(g, nc)) = v.head(group_rows(g, nc));
  }
}

MatX ContactProblem::dense() const {
  if (!sparse) return G;
  const Index n = size(), ng = nc + nl + nb;
  MatX D = MatX::Zero(n, n);
  for (Index g = 0; g < ng; ++g) {
    for (Index k = sparse->begin[g]; k < sparse->begin[g + 1]; ++k) {
      const Index h = sparse->col[k];
      D.block(group_row(g, nc), group_row(h, nc), group_rows(g, nc), group_rows(h, nc)) =
          sparse->block[k].topLeftCorner(group_rows(g, nc), group_rows(h, nc));
    }
  }
  return D;
}

}  // namespace impulse
