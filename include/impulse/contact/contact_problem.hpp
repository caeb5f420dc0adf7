// ContactProblem: the one thing a contact solver sees (docs/architecture.md, "Contact solvers").
//
// The Delassus assembler (contact/delassus.hpp) fills it each step; solvers never include model,
// dynamics or collision headers. The problem is the velocity-level complementarity problem
//
//     v+ = G lambda + c                                   (Hwangbo 2018, eq. 3 / eq. 6)
//
// with, for each contact i (rows 3i, 3i+1, 3i+2 in the contact frame: tangent x, tangent y, normal z)
//     lambda_i in the Coulomb cone  K_i = { ||lambda_xy|| <= mu_i lambda_z },
//     v_z+ >= 0,  lambda_z >= 0,  v_z+ lambda_z = 0        (velocity Signorini),
//     maximum dissipation in the tangent plane,
// after the 3 nc contact rows, nl one-row unilateral constraints (joint limits) j with
//     lambda_j >= 0,  v_j+ >= 0,  lambda_j v_j+ = 0,
// and after those, nb one-row box constraints (joint Coulomb friction) j with bound b_j = box[j]:
//     |lambda_j| <= b_j,   |lambda_j| < b_j  =>  v_j+ = 0   (stick),
//     lambda_j = -b_j sign(v_j+) when v_j+ != 0                (slip: friction opposes the motion)
// (a box mixed complementarity problem on lo = -b_j, hi = b_j). A bound b_j = +inf makes the row
// an equality (bilateral) row, v_j+ = 0 with lambda_j free (mimic joints, contact/delassus.hpp).
// Restitution and position-error targets are already folded into c by the assembler
// (c_z <- c_z - target), so a solver always works on the homogeneous conditions above.
#pragma once

#include <vector>

#include "impulse/core/types.hpp"

namespace impulse {

// Factored storage of G (large islands, contact/delassus.hpp). With the tree-sparse
// factor M~_s = L_s^T D_s L_s of each dynamic system s and Y_s = L_s^-T J_s^T,
//     G = sum_s Y_s^T D_s^-1 Y_s                                   (RBDA sec. 6.5)
// is kept as its factors instead of its entries. Groups: contact i (rows 3i .. 3i+2) is group i,
// the one-row constraint at row 3 nc + j is group nc + j. Each group has one or two pieces (one
// per dynamic side of a contact, or per side of a one-row constraint); piece p belongs to one
// system, spans `nrows` rows (3 or 1) and holds Y_p on the path root..body of that system only:
// dof dofs[p.y + t] of the system, Y values Y[3 (p.y + t) + r], t < p.len (a point Jacobian and
// L^-T keep that support), and the same values scaled by D^-1 of their dof in DY. The island's
// systems have their velocity slots one after another: the system of piece p from slot p.z (its
// dof k at slot p.z + k), nz slots in all.
// Then G lambda = Y^T z with z = D^-1 Y lambda: a Gauss-Seidel sweep keeps z current (the
// systems' velocity change, DelassusProduct below), so reading or updating one contact costs
// O(its path) instead of O(its neighbours), and assembly costs O(pieces), not O(pieces^2).
// The diagonal blocks G_gg, which the per-contact solvers invert, are assembled (3x3 column
// major, zero-padded for one-row groups).
struct FactoredPiece {
  Index nrows = 3;  // 3: a contact side, 1: a limit, friction or mimic row
  Index len = 0;    // dofs on the path
  Index y = 0;      // first path entry in dofs / Y
  Index z = 0;      // first velocity slot of the piece's system
};

struct FactoredG {
  const Index* begin = nullptr;         // ngroups + 1: pieces of group g are [begin[g], begin[g+1])
  const FactoredPiece* piece = nullptr;
  const Index* dofs = nullptr;          // path dofs (system-local) of all pieces
  const Scalar* Y = nullptr;            // 3 values per path entry
  const Scalar* DY = nullptr;           // D^-1 Y: Y with each path entry scaled by its D^-1
  const Mat3* diag = nullptr;           // ngroups: the diagonal blocks G_gg
  Index nz = 0;                         // velocity slots of the island's systems
};

struct ContactProblem {
  // Dense G.
  ContactProblem(Eigen::Ref<const MatX> G_, Eigen::Ref<const VecX> c_, Eigen::Ref<const VecX> mu_,
                 Index nc_, Index nl_, Index nb_ = 0, Eigen::Ref<const VecX> box_ = empty_vector())
      : G(G_), c(c_), mu(mu_), box(box_), nc(nc_), nl(nl_), nb(nb_) {}
  // Factored G (G itself is then empty; use the accessors below or a DelassusProduct).
  ContactProblem(const FactoredG& F, Eigen::Ref<const VecX> c_, Eigen::Ref<const VecX> mu_, Index nc_, Index nl_,
                 Index nb_ = 0, Eigen::Ref<const VecX> box_ = empty_vector())
      : G(empty_matrix()), c(c_), mu(mu_), box(box_), nc(nc_), nl(nl_), nb(nb_), factored(&F) {}

  Eigen::Ref<const MatX> G;   // Delassus matrix J M^-1 J^T, (3 nc + nl + nb) square, symmetric PSD
                              // (0 x 0 when `factored` is set)
  Eigen::Ref<const VecX> c;   // free velocity of the constraint rows, size 3 nc + nl + nb
  Eigen::Ref<const VecX> mu;  // friction coefficient per contact, size >= nc
  Eigen::Ref<const VecX> box; // bound b_j >= 0 of each box row, size >= nb
  Index nc = 0;               // number of contacts (3 rows each)
  Index nl = 0;               // number of one-row unilateral rows after the contacts
  Index nb = 0;               // number of one-row box rows after the unilateral rows
  const FactoredG* factored = nullptr;  // when set, G is stored as its factors
  // Set by the DelassusAssembler for its islands, whose G is built from path products of the same
  // Y and D^-1 on both storages, so that a NaN or an infinity anywhere shows on the diagonal and
  // the solvers' non-finite guard (problem_is_finite) reads the diagonal only:
  // - dense: G_pq = sum_t Y_p(t) D^-1_t Y_q(t) over a path that G_pp's sum of squares also covers
  //   (|G_pq| <= sqrt(G_pp G_qq));
  // - factored: the diagonal blocks' diagonals sum D^-1_t Y_rt^2 over every path entry of every
  //   piece of their group, the same products that make Y and D^-1 Y (0 * inf is NaN), so the
  //   blocks are read and the pieces are not.
  // Left false for a problem built any other way: every entry is checked.
  bool diagonal_covers = false;

  Index size() const { return 3 * nc + nl + nb; }
  Index first_box_row() const { return 3 * nc + nl; }
  Scalar box_bound(Index r) const { return box[r - 3 * nc - nl]; }  // b of box row r (global index)
  bool is_factored() const { return factored != nullptr; }

  // Access that works for both storages. The diagonal is O(1) either way; with a factored G the
  // products build G x from scratch through a DelassusProduct (O(island), allocates: for tests
  // and tools; solvers and the stepper keep their own DelassusProduct instead).
  Mat3 contact_block(Index i) const {  // G_ii, the 3x3 block of contact i
    return factored ? factored->diag[i] : Mat3(G.block<3, 3>(3 * i, 3 * i));
  }
  Scalar diagonal(Index r) const { return factored ? factored_diagonal(r) : G(r, r); }  // G(r, r)
  Scalar row_dot(Index r, const VecXcref& x) const;     // G(r, :) x
  void multiply(const VecXcref& x, VecXref y) const;     // y = G x
  MatX dense() const;                                    // G as a dense matrix (allocates)
  // The same G and mu with another c.
  ContactProblem with_c(Eigen::Ref<const VecX> c_other) const {
    ContactProblem p = factored ? ContactProblem(*factored, c_other, mu, nc, nl, nb, box)
                                : ContactProblem(G, c_other, mu, nc, nl, nb, box);
    p.diagonal_covers = diagonal_covers;
    return p;
  }

  static const MatX& empty_matrix();
  static const VecX& empty_vector();

 private:
  Scalar factored_diagonal(Index r) const;
};

// v = G lambda kept current while a sweep changes lambda one group at a time (Gauss-Seidel).
// Dense G: a read is the row product G(rows, :) lambda and updates cost nothing. Factored G: it
// holds z = D^-1 Y lambda (the systems' velocity change), a read is Y_p^T z over the pieces of
// the group and an update adds D^-1 Y_p delta: O(path) each, whatever the number of neighbours.
// The buffer grows the first time an island needs it and is reused (no allocation after).
class DelassusProduct {
 public:
  // Binds `problem` (kept by pointer: it must outlive the reads) at the impulses `lambda`.
  void reset(const ContactProblem& problem, const VecXcref& lambda);

  Vec3 contact(Index i, const VecXcref& lambda) const {  // G(3i .. 3i+2, :) lambda
    const ContactProblem& p = *problem_;
    if (!p.factored) return dense_rows(p, i, lambda);
    return read(i);
  }
  Scalar row(Index r, const VecXcref& lambda) const {  // G(r, :) lambda
    const ContactProblem& p = *problem_;
    if (!p.factored) return dense_row(p, r, lambda);
    const Index nc = p.nc;
    return r < 3 * nc ? read_row(r / 3, r % 3) : read_row(r - 2 * nc, 0);
  }
  // lambda_i (contact i) or lambda_r (row r) was changed by delta.
  void add_contact(Index i, const Vec3& delta) {
    if (problem_->factored) update(i, delta);
  }
  void add_row(Index r, Scalar delta) {
    if (!problem_->factored) return;
    const Index nc = problem_->nc;
    if (r >= 3 * nc) return update_row(r - 2 * nc, 0, delta);
    update_row(r / 3, r % 3, delta);
  }
  // y = G x for the bound problem (rebinds at x).
  void multiply(const ContactProblem& problem, const VecXcref& x, VecXref y);

  // Frictionless problems (every contact's tangent impulses zero: their columns of G add
  // nothing): the normal row 3i + 2 of contact i alone. Dense G: the row's products with the
  // normal and one-row columns only, in the same order (the same sum: the skipped terms are
  // products with zero impulses). Factored G, after bind_normal_rows(): the normal row of each
  // piece and of its D^-1 Y, and its system's velocity slot, gathered contiguous once per solve
  // (pieces on a free body; otherwise the reads fall back to read_row), with the same sums as
  // read_row and update_row.
  void bind_normal_rows();
  // reset() at lambda for a frictionless problem (the same z, by the bound pieces when bound).
  void reset_normal(const VecXcref& lambda);
  Scalar normal_row(Index i, const VecXcref& lambda) const {
    const ContactProblem& p = *problem_;
    if (!p.factored) return dense_normal_row(p, i, lambda);
    if (!normal_bound_) return read_row(i, 2);
    Scalar v = 0;
    for (Index k = nbegin_[static_cast<std::size_t>(i)]; k < nbegin_[static_cast<std::size_t>(i) + 1]; ++k) {
      const NormalPiece& q = npiece_[static_cast<std::size_t>(k)];
      const Scalar* z6 = z_.data() + q.z;
      v += q.Y[0] * z6[0] + q.Y[1] * z6[1] + q.Y[2] * z6[2] + q.Y[3] * z6[3] + q.Y[4] * z6[4] + q.Y[5] * z6[5];
    }
    return v;
  }
  void add_normal(Index i, Scalar delta) {
    if (!problem_->factored) return;
    if (!normal_bound_) return update_row(i, 2, delta);
    for (Index k = nbegin_[static_cast<std::size_t>(i)]; k < nbegin_[static_cast<std::size_t>(i) + 1]; ++k) {
      const NormalPiece& q = npiece_[static_cast<std::size_t>(k)];
      Scalar* z6 = z_.data() + q.z;
      z6[0] += q.DY[0] * delta, z6[1] += q.DY[1] * delta, z6[2] += q.DY[2] * delta;
      z6[3] += q.DY[3] * delta, z6[4] += q.DY[4] * delta, z6[5] += q.DY[5] * delta;
    }
  }

  std::size_t memory_bytes() const {
    return static_cast<std::size_t>(z_.size()) * sizeof(Scalar) + npiece_.capacity() * sizeof(NormalPiece) +
           nbegin_.capacity() * sizeof(Index);
  }

 private:
  // Dense G: the rows' products as plain column loops, in the order of Eigen's matrix-vector
  // kernel (same bits) without its set-up: 0.7k instructions fewer in a standing ANYmal's step,
  // neutral in wall time (in-process A/B; docs/benchmarks.md, "Machine and method").
  static inline Vec3 dense_rows(const ContactProblem& p, Index i, const VecXcref& lambda);
  static inline Scalar dense_row(const ContactProblem& p, Index r, const VecXcref& lambda);
  static inline Scalar dense_normal_row(const ContactProblem& p, Index i, const VecXcref& lambda);
  inline Vec3 read(Index g) const;             // G(group g, :) lambda, zero-padded
  inline void update(Index g, const Vec3& delta);
  // One row r of group g only (a third of the work of a contact's three): one-row constraints and
  // the normal row of a frictionless contact.
  inline Scalar read_row(Index g, Index r) const;
  inline void update_row(Index g, Index r, Scalar delta);

  const ContactProblem* problem_ = nullptr;
  VecX z_;
  // bind_normal_rows(): row 2 of a free-body piece's Y and D^-1 Y, and its first velocity slot
  struct NormalPiece {
    Scalar Y[6];
    Scalar DY[6];
    Index z = 0;
  };
  std::vector<NormalPiece> npiece_;
  std::vector<Index> nbegin_;  // nc + 1: contact i's pieces are [nbegin_[i], nbegin_[i + 1])
  bool normal_bound_ = false;
};


namespace detail {
// A contact side on a free body (or any 6-dof path of consecutive dofs, root first): fixed-size
// kernels without the index indirection (the common piece of piles, stacks and towers).
inline bool free_body_piece(const FactoredPiece& p, const Index* dofs) {
  return p.nrows == 3 && p.len == 6 && dofs[5] - dofs[0] == 5;
}
using ConstY36 = Eigen::Map<const Eigen::Matrix<Scalar, 3, 6>>;
}  // namespace detail

inline Vec3 DelassusProduct::dense_rows(const ContactProblem& p, Index i, const VecXcref& lambda) {
  const Index n = p.G.cols(), ld = p.G.outerStride();
  const Scalar* g = p.G.data() + 3 * i;
  const Scalar* l = lambda.data();
  Scalar v0 = 0, v1 = 0, v2 = 0;
  for (Index j = 0; j < n; ++j, g += ld) {
    const Scalar lj = l[j];
    v0 += g[0] * lj;
    v1 += g[1] * lj;
    v2 += g[2] * lj;
  }
  return Vec3(v0, v1, v2);
}

inline Scalar DelassusProduct::dense_row(const ContactProblem& p, Index r, const VecXcref& lambda) {
  const Index n = p.G.cols(), ld = p.G.outerStride();
  const Scalar* g = p.G.data() + r;
  const Scalar* l = lambda.data();
  Scalar v = 0;
  for (Index j = 0; j < n; ++j, g += ld) v += *g * l[j];
  return v;
}

inline Scalar DelassusProduct::dense_normal_row(const ContactProblem& p, Index i, const VecXcref& lambda) {
  const Index nc = p.nc, n = p.G.cols(), ld = p.G.outerStride();
  const Scalar* row = p.G.data() + 3 * i + 2;
  const Scalar* l = lambda.data();
  Scalar v = 0;
  for (Index j = 2; j < 3 * nc; j += 3) v += row[j * ld] * l[j];
  for (Index j = 3 * nc; j < n; ++j) v += row[j * ld] * l[j];
  return v;
}

// G(group g, :) lambda = sum over g's pieces of Y_p^T z on the path.
inline Vec3 DelassusProduct::read(Index g) const {
  const FactoredG* F = problem_->factored;
  Vec3 v = Vec3::Zero();
  for (Index k = F->begin[g]; k < F->begin[g + 1]; ++k) {
    const FactoredPiece& p = F->piece[k];
    const Index* dofs = F->dofs + p.y;
    const Scalar* Y = F->Y + 3 * p.y;
    const Scalar* zs = z_.data() + p.z;
    if (detail::free_body_piece(p, dofs)) {
      v.noalias() += detail::ConstY36(Y) * Eigen::Map<const Vec6>(zs + dofs[0]);
    } else {
      for (Index t = 0; t < p.len; ++t) {
        const Scalar zt = zs[dofs[t]];
        for (Index r = 0; r < p.nrows; ++r) v[r] += Y[3 * t + r] * zt;
      }
    }
  }
  return v;
}

// z += D^-1 Y_p delta for g's pieces.
inline void DelassusProduct::update(Index g, const Vec3& delta) {
  const FactoredG* F = problem_->factored;
  for (Index k = F->begin[g]; k < F->begin[g + 1]; ++k) {
    const FactoredPiece& p = F->piece[k];
    const Index* dofs = F->dofs + p.y;
    const Scalar* DY = F->DY + 3 * p.y;
    Scalar* zs = z_.data() + p.z;
    if (detail::free_body_piece(p, dofs)) {
      Eigen::Map<Vec6>(zs + dofs[0]).noalias() += detail::ConstY36(DY).transpose() * delta;
    } else {
      for (Index t = 0; t < p.len; ++t) {
        Scalar acc = 0;
        for (Index r = 0; r < p.nrows; ++r) acc += DY[3 * t + r] * delta[r];
        zs[dofs[t]] += acc;
      }
    }
  }
}

// G(row r of group g, :) lambda.
inline Scalar DelassusProduct::read_row(Index g, Index r) const {
  const FactoredG* F = problem_->factored;
  Scalar v = 0;
  for (Index k = F->begin[g]; k < F->begin[g + 1]; ++k) {
    const FactoredPiece& p = F->piece[k];
    const Index* dofs = F->dofs + p.y;
    const Scalar* Y = F->Y + 3 * p.y + r;
    const Scalar* zs = z_.data() + p.z;
    if (detail::free_body_piece(p, dofs)) {
      const Scalar* z6 = zs + dofs[0];
      v += Y[0] * z6[0] + Y[3] * z6[1] + Y[6] * z6[2] + Y[9] * z6[3] + Y[12] * z6[4] + Y[15] * z6[5];
    } else {
      for (Index t = 0; t < p.len; ++t) v += Y[3 * t] * zs[dofs[t]];
    }
  }
  return v;
}

// z += D^-1 Y_p(:, r) delta for g's pieces.
inline void DelassusProduct::update_row(Index g, Index r, Scalar delta) {
  const FactoredG* F = problem_->factored;
  for (Index k = F->begin[g]; k < F->begin[g + 1]; ++k) {
    const FactoredPiece& p = F->piece[k];
    const Index* dofs = F->dofs + p.y;
    const Scalar* DY = F->DY + 3 * p.y + r;
    Scalar* zs = z_.data() + p.z;
    if (detail::free_body_piece(p, dofs)) {
      Scalar* z6 = zs + dofs[0];
      z6[0] += DY[0] * delta, z6[1] += DY[3] * delta, z6[2] += DY[6] * delta;
      z6[3] += DY[9] * delta, z6[4] += DY[12] * delta, z6[5] += DY[15] * delta;
    } else {
      for (Index t = 0; t < p.len; ++t) zs[dofs[t]] += DY[3 * t] * delta;
    }
  }
}

}  // namespace impulse
