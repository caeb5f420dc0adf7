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
// and, after the 3 nc contact rows, nl one-row unilateral constraints (joint limits) j with
//     lambda_j >= 0,  v_j+ >= 0,  lambda_j v_j+ = 0.
// Restitution and position-error targets are already folded into c by the assembler
// (c_z <- c_z - target), so a solver always works on the homogeneous conditions above.
#pragma once

#include "impulse/core/types.hpp"

namespace impulse {

struct ContactProblem {
  ContactProblem(Eigen::Ref<const MatX> G_, Eigen::Ref<const VecX> c_, Eigen::Ref<const VecX> mu_,
                 Index nc_, Index nl_)
      : G(G_), c(c_), mu(mu_), nc(nc_), nl(nl_) {}

  Eigen::Ref<const MatX> G;   // Delassus matrix J M^-1 J^T, (3 nc + nl) square, symmetric PSD
  Eigen::Ref<const VecX> c;   // free velocity of the constraint rows, size 3 nc + nl
  Eigen::Ref<const VecX> mu;  // friction coefficient per contact, size >= nc
  Index nc = 0;               // number of contacts (3 rows each)
  Index nl = 0;               // number of one-row unilateral rows after the contacts

  Index size() const { return 3 * nc + nl; }
};

}  // namespace impulse
