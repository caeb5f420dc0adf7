// Random contact problems for the solver tests (solver_test_problems.hpp).
#include "solver_test_problems.hpp"

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <cmath>

namespace impulse {
namespace test {

Scalar uniform(std::mt19937& rng, Scalar lo, Scalar hi) {
  return std::uniform_real_distribution<Scalar>(lo, hi)(rng);
}

MatX random_normal(std::mt19937& rng, Index rows, Index cols) {
  std::normal_distribution<Scalar> n(0, 1);
  MatX A(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i) A(i, j) = n(rng);
  return A;
}

// Random SPD mass matrix with eigenvalues roughly in [0.05, 4].
MatX random_mass_matrix(std::mt19937& rng, Index dof) {
  const MatX B = random_normal(rng, dof, dof);
  return B * B.transpose() / Scalar(dof) + 0.05 * MatX::Identity(dof, dof);
}

// nc contacts + nl limit rows on a dof-DOF system (nc + nl <= dof). The normal and limit
// velocities of c are -b with b ~ U(-0.5, 1) (mostly closing), the tangential ones random.
OwnedProblem make_physical_problem(std::mt19937& rng, Index nc, Index nl, Index dof, Scalar mu_lo,
                                   Scalar mu_hi) {
  OwnedProblem p;
  p.nc = nc;
  p.nl = nl;
  const Index n = 3 * nc + nl;
  const MatX M = random_mass_matrix(rng, dof);
  p.Minv = M.llt().solve(MatX::Identity(dof, dof));
  p.J = random_normal(rng, n, dof);
  p.G = p.J * p.Minv * p.J.transpose();
  p.G = 0.5 * (p.G + p.G.transpose());
  p.mu.resize(nc);
  for (Index i = 0; i < nc; ++i) p.mu[i] = uniform(rng, mu_lo, mu_hi);
  // u with prescribed normal/limit velocities J_N u = -b plus a random null-space part
  const Index nn = nc + nl;
  MatX J_N(nn, dof);
  VecX b(nn);
  for (Index i = 0; i < nc; ++i) J_N.row(i) = p.J.row(3 * i + 2);
  for (Index j = 0; j < nl; ++j) J_N.row(nc + j) = p.J.row(3 * nc + j);
  for (Index k = 0; k < nn; ++k) b[k] = uniform(rng, -0.5, 1.0);
  const auto qr = J_N.completeOrthogonalDecomposition();
  const VecX u_r = random_normal(rng, dof, 1);
  const VecX u = qr.solve(-b) + (u_r - qr.solve(J_N * u_r));
  p.c = p.J * u;
  return p;
}

// A problem whose unique solution is a given sticking impulse lambda_star (inside the cones,
// limits active): c = -G lambda_star, so v = 0 at lambda_star. Needs 3 nc + nl <= dof.
OwnedProblem make_sticking_problem(std::mt19937& rng, Index nc, Index nl, Index dof,
                                   VecX& lambda_star) {
  OwnedProblem p = make_physical_problem(rng, nc, nl, dof, 0.5, 1.0);
  lambda_star.resize(3 * nc + nl);
  for (Index i = 0; i < nc; ++i) {
    const Scalar lz = uniform(rng, 0.5, 2.0);
    const Scalar r = uniform(rng, 0, 0.7) * p.mu[i] * lz;
    const Scalar th = uniform(rng, -M_PI, M_PI);
    lambda_star.segment<3>(3 * i) = Vec3(r * std::cos(th), r * std::sin(th), lz);
  }
  for (Index j = 0; j < nl; ++j) lambda_star[3 * nc + j] = uniform(rng, 0.5, 2.0);
  p.c = -p.G * lambda_star;
  return p;
}

struct LeastSquares::Factor {
  Eigen::CompleteOrthogonalDecomposition<MatX> cod;
};

LeastSquares::LeastSquares(const MatX& A, Scalar threshold) : factor_(std::make_unique<Factor>()) {
  factor_->cod.setThreshold(threshold);
  factor_->cod.compute(A);
}

LeastSquares::~LeastSquares() = default;

VecX LeastSquares::solve(const VecX& b) const { return factor_->cod.solve(b); }

}  // namespace test
}  // namespace impulse
