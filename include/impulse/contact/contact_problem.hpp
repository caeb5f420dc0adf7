// ContactProblem: the one thing a contact solver sees (DESIGN.md section 4).
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

#include "impulse/core/types.hpp"

namespace impulse {

// Block-sparse storage of G (one island, contact/delassus.hpp). Block rows are "groups": contact
// i (rows 3i .. 3i+2) is group i, the one-row constraint at row 3 nc + j (limit or box row) is
// group nc + j. Group g
// lists its nonzero blocks G(g, col[k]) for k in [begin[g], begin[g+1]), its own diagonal block at
// k = diag[g]. Every block is stored as a 3x3 (column major), zero-padded for one-row groups, and
// both G(g, h) and G(h, g) = G(g, h)^T are stored, so a sweep over group g reads only its row.
struct BlockSparseG {
  const Index* begin = nullptr;  // ngroups + 1
  const Index* col = nullptr;    // neighbour group of each block
  const Index* diag = nullptr;   // ngroups: position of the diagonal block
  const Mat3* block = nullptr;   // the blocks
};

struct ContactProblem {
  // Dense G.
  ContactProblem(Eigen::Ref<const MatX> G_, Eigen::Ref<const VecX> c_, Eigen::Ref<const VecX> mu_,
                 Index nc_, Index nl_, Index nb_ = 0, Eigen::Ref<const VecX> box_ = empty_vector())
      : G(G_), c(c_), mu(mu_), box(box_), nc(nc_), nl(nl_), nb(nb_) {}
  // Block-sparse G (G itself is then empty; use the accessors below).
  ContactProblem(const BlockSparseG& S, Eigen::Ref<const VecX> c_, Eigen::Ref<const VecX> mu_, Index nc_, Index nl_,
                 Index nb_ = 0, Eigen::Ref<const VecX> box_ = empty_vector())
      : G(empty_matrix()), c(c_), mu(mu_), box(box_), nc(nc_), nl(nl_), nb(nb_), sparse(&S) {}

  Eigen::Ref<const MatX> G;   // Delassus matrix J M^-1 J^T, (3 nc + nl + nb) square, symmetric PSD
                              // (0 x 0 when `sparse` is set)
  Eigen::Ref<const VecX> c;   // free velocity of the constraint rows, size 3 nc + nl + nb
  Eigen::Ref<const VecX> mu;  // friction coefficient per contact, size >= nc
  Eigen::Ref<const VecX> box; // bound b_j >= 0 of each box row, size >= nb
  Index nc = 0;               // number of contacts (3 rows each)
  Index nl = 0;               // number of one-row unilateral rows after the contacts
  Index nb = 0;               // number of one-row box rows after the unilateral rows
  const BlockSparseG* sparse = nullptr;  // when set, G is stored by blocks

  Index size() const { return 3 * nc + nl + nb; }
  Index first_box_row() const { return 3 * nc + nl; }
  Scalar box_bound(Index r) const { return box[r - 3 * nc - nl]; }  // b of box row r (global index)
  bool is_sparse() const { return sparse != nullptr; }

  // Access that works for both storages (O(neighbours) when sparse; the dense branch inline).
  Mat3 contact_block(Index i) const {  // G_ii, the 3x3 block of contact i
    return sparse ? sparse->block[sparse->diag[i]] : Mat3(G.block<3, 3>(3 * i, 3 * i));
  }
  Scalar diagonal(Index r) const { return sparse ? sparse_diagonal(r) : G(r, r); }  // G(r, r)
  Vec3 contact_rows(Index i, const VecXcref& x) const {  // G(3i .. 3i+2, :) x
    if (sparse) return sparse_contact_rows(i, x);
    return G.middleRows<3>(3 * i) * x;
  }
  Scalar row_dot(Index r, const VecXcref& x) const {  // G(r, :) x
    return sparse ? sparse_row_dot(r, x) : G.row(r).dot(x);
  }
  void multiply(const VecXcref& x, VecXref y) const;      // y = G x
  MatX dense() const;                                     // G as a dense matrix (allocates)
  // The same G and mu with another c.
  ContactProblem with_c(Eigen::Ref<const VecX> c_other) const {
    return sparse ? ContactProblem(*sparse, c_other, mu, nc, nl, nb, box)
                  : ContactProblem(G, c_other, mu, nc, nl, nb, box);
  }

  static const MatX& empty_matrix();
  static const VecX& empty_vector();

 private:
  Scalar sparse_diagonal(Index r) const;
  Vec3 sparse_contact_rows(Index i, const VecXcref& x) const;
  Scalar sparse_row_dot(Index r, const VecXcref& x) const;
};

}  // namespace impulse
