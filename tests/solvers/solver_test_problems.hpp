// Random contact problems for the solver tests, built physically: G = J M^-1 J^T with a random
// SPD mass matrix M and random contact Jacobian J, c = J u (so c is in the range of J even when
// there are more constraint rows than degrees of freedom).
// The definitions are in solver_test_problems.cpp, compiled once: inline in this header they cost
// each test file that used them 17 s of compile (g++ -O3; 27 s under clang with ASan + UBSan),
// mostly the complete orthogonal decomposition (12 s on its own).
#pragma once

#include <memory>
#include <random>

#include "impulse/contact/contact_problem.hpp"
#include "impulse/core/types.hpp"

namespace impulse {
namespace test {

struct OwnedProblem {
  MatX G;
  VecX c;
  VecX mu;
  Index nc = 0;
  Index nl = 0;
  MatX J;     // (3 nc + nl) x dof
  MatX Minv;  // dof x dof
  ContactProblem view() const { return ContactProblem(G, c, mu, nc, nl); }
};

Scalar uniform(std::mt19937& rng, Scalar lo, Scalar hi);

MatX random_normal(std::mt19937& rng, Index rows, Index cols);

// Random SPD mass matrix with eigenvalues roughly in [0.05, 4].
MatX random_mass_matrix(std::mt19937& rng, Index dof);

// nc contacts + nl limit rows on a dof-DOF system (nc + nl <= dof). The normal and limit
// velocities of c are -b with b ~ U(-0.5, 1) (mostly closing), the tangential ones random.
OwnedProblem make_physical_problem(std::mt19937& rng, Index nc, Index nl, Index dof, Scalar mu_lo,
                                   Scalar mu_hi);

// A problem whose unique solution is a given sticking impulse lambda_star (inside the cones,
// limits active): c = -G lambda_star, so v = 0 at lambda_star. Needs 3 nc + nl <= dof.
OwnedProblem make_sticking_problem(std::mt19937& rng, Index nc, Index nl, Index dof,
                                   VecX& lambda_star);

// Minimum-norm least-squares solutions x of A x = b for one matrix A (a complete orthogonal
// decomposition whose rank is decided with `threshold`, relative to the largest pivot).
class LeastSquares {
 public:
  LeastSquares(const MatX& A, Scalar threshold);
  ~LeastSquares();
  VecX solve(const VecX& b) const;

 private:
  struct Factor;
  std::unique_ptr<Factor> factor_;
};

}  // namespace test
}  // namespace impulse
