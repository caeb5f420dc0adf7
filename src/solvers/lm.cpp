// Levenberg-Marquardt on Todorov's implicit complementarity formulation.
//
// Papers:
//   E. Todorov, "Implicit nonlinear complementarity: a new approach to contact dynamics",
//     ICRA 2010 (slides in shared/seeds): f(x), v(x) built so that the contact conditions hold
//     for every x; solve A f(x) + c = v(x) with v(x) = f(x) + x, i.e.
//         r(x) = (A - I) f(x) - x + c = 0,
//     by minimizing l(x) = |r|^2 / 2 with x <- x - (J^T J + lambda I)^-1 J^T r.
//   H. Mylapilli, A. Jain, "Complementarity Techniques for Minimal Coordinate Contact Dynamics",
//     J. Comput. Nonlinear Dynam. 12(2), 2017:
//     eq. 49   F_n = max(0, -z_n),  nu_n = max(0, z_n)
//     eq. 50   F_t = -s z_t,  nu_t = (1 - s) z_t,  s = min(1, mu F_n / |z_t|)
//     eq. 51   nu = F + z
//     eq. 55-56 residual Phi_u = (Q Lambda Q^T - I) F(z) - z + nu^- + alpha^f dt  (no bilateral
//              block p_b here: our G = Q Lambda Q^T already eliminates the bilateral constraints)
//     eq. 57   psi = Phi^T Phi / 2
//     eq. 58   J = (G - I) dF/dz - I
//     eq. 59   dF/dz block diagonal, per contact (below)
//     sec. 5.1 RLM: H = J^T J + lambda_LM I, dz = -H^-1 J^T Phi, reduction factor r = actual /
//              predicted decrease; r < 0.3: lambda_LM *= 20; r > 0: accept; r > 0.8:
//              lambda_LM /= 20 (floor 1e-25); lambda_LM = 1e-3 initially; stop at psi < 1e-30.
//     sec. 5.2 PLM: dz = least squares of [J; sqrt(lambda_LM) I] dz = [-Phi; 0] with
//              lambda_LM = 1e-16, then z <- z + t dz.
// Symbols (paper -> code): A, G (Delassus); c (free velocity); x, z (the hybrid variable, x_);
// f(x), F_u (impulse, f_); v(x), nu_u (velocity); r, Phi (residual, r_); psi; J (J_);
// lambda_LM (damping); lambda_step (damping_step).
//
// dF/dz for one contact, with z = (z_t, z_n), F_n = max(0, -z_n), zhat = z_t / |z_t| (eq. 59,
// rederived because the extracted text of eq. 59 is garbled):
//   dF_n/dz_n = -1 if z_n < 0 else 0
//   sticking, mu F_n >= |z_t| (s = 1):  dF_t/dz_t = -I,  dF_t/dz_n = 0
//   sliding,  mu F_n <  |z_t| (s < 1):  dF_t/dz_t = -s (I - zhat zhat^T),
//                                       dF_t/dz_n = -mu zhat dF_n/dz_n
//   open, F_n = 0:                      F_t = 0 and dF_t/dz = 0 (s = 0 for z_t != 0; we take the
//                                       same branch at z_t = 0, where f is not differentiable).
// One-row limit constraints use the normal parametrization (eq. 49) alone.
//
// Departures / choices:
//   * Warm start: x_0 = G lambda_0 + c - lambda_0, which inverts f when (lambda_0, v_0) satisfy
//     the conditions (x = v - f by eq. 51); lambda_0 = 0 gives x_0 = c.
//   * Besides psi < tolerance we stop when the residual is at rounding level (LmSettings::roundoff)
//     and, in RLM, when lambda_LM exceeds damping_max (stalled: status MaxIterations).
//   * A failed Cholesky of J^T J + lambda_LM I is treated as a rejected step (lambda_LM *= step).
//   * PLM solves the stacked least squares by Householder QR, with a monotone Armijo line search.
//   * The output impulse is lambda = f(x): it satisfies lambda_n >= 0 and the cone exactly; the
//     velocity conditions hold to the residual r.
#include "impulse/solvers/lm.hpp"

#include <cmath>

#include "dense_kernels.hpp"
#include "impulse/solvers/cone.hpp"

namespace impulse {

Vec3 todorov_impulse(const Vec3& z, Scalar mu, Mat3* dF) {
  const Scalar F_n = std::max<Scalar>(0, -z.z());
  const Scalar dFn = z.z() < 0 ? -1 : 0;
  const Scalar t = std::hypot(z.x(), z.y());
  Vec3 F(0, 0, F_n);
  if (dF) dF->setZero();
  if (!(F_n > 0)) return F;  // open contact
  if (dF) (*dF)(2, 2) = dFn;
  if (mu * F_n >= t) {  // sticking, s = 1
    F.x() = -z.x();
    F.y() = -z.y();
    if (dF) {
      (*dF)(0, 0) = -1;
      (*dF)(1, 1) = -1;
    }
    return F;
  }
  const Scalar s = mu * F_n / t;  // sliding, 0 < s < 1
  const Vec2s zhat(z.x() / t, z.y() / t);
  F.x() = -s * z.x();
  F.y() = -s * z.y();
  if (dF) {
    dF->topLeftCorner<2, 2>() =
        -s * (Eigen::Matrix<Scalar, 2, 2>::Identity() - zhat * zhat.transpose());
    dF->block<2, 1>(0, 2) = -mu * dFn * zhat;
  }
  return F;
}

void LmSolver::reserve_impl(Index max_rows) {
  const Index n = max_rows;
  for (VecX* v : {&x_, &f_, &r_, &x_trial_, &f_trial_, &r_trial_, &g_, &dx_, &Jdx_}) v->setZero(n);
  kappa_.setOnes(n);
  scaled_f_.setZero(n);
  b_.setZero(2 * n);
  v_.setZero(2 * n);
  J_.setZero(n, n);
  H_.setZero(2 * n, n);
}

Scalar LmSolver::residual(const ContactProblem& problem, const VecX& x, VecX& f, VecX& r) {
  const Index n = problem.size(), nc = problem.nc;
  for (Index i = 0; i < nc; ++i) {
    f.segment<3>(3 * i) = todorov_impulse(x.segment<3>(3 * i), problem.mu[i], nullptr);
  }
  for (Index j = 3 * nc; j < n; ++j) f[j] = std::max<Scalar>(0, -x[j]);
  // eq. 55-56: r = G f - f - x + c
  // with the diagonal scaling K (see the header): r = G K^-1 f - f - x + c
  scaled_f_.head(n) = f.head(n).cwiseQuotient(kappa_.head(n));
  r.head(n).noalias() = problem.G * scaled_f_.head(n);
  r.head(n) += problem.c - f.head(n) - x.head(n);
  return 0.5 * r.head(n).squaredNorm();
}

void LmSolver::jacobian(const ContactProblem& problem, const VecX& x) {
  const Index n = problem.size(), nc = problem.nc;
  // eq. 58: J = (G - I) dF/dx - I, column block by column block (dF/dx is block diagonal)
  for (Index i = 0; i < nc; ++i) {
    Mat3 dF;
    todorov_impulse(x.segment<3>(3 * i), problem.mu[i], &dF);
    J_.block(0, 3 * i, n, 3).noalias() = problem.G.middleCols<3>(3 * i) * (dF / kappa_[3 * i]);
    J_.block<3, 3>(3 * i, 3 * i) -= dF + Mat3::Identity();
  }
  for (Index j = 3 * nc; j < n; ++j) {
    const Scalar df = x[j] < 0 ? -1 : 0;
    J_.col(j).head(n) = problem.G.col(j) * (df / kappa_[j]);
    J_(j, j) -= df + 1;
  }
}

SolverResult LmSolver::solve_impl(const ContactProblem& problem, VecXref lambda) {
  const LmSettings& s = settings_;
  const Index n = problem.size();
  const MatXcref& G = problem.G;
  // Largest absolute row sum of G, for the rounding level of r.
  Scalar G_norm = 0;
  for (Index i = 0; i < n; ++i) G_norm = std::max(G_norm, G.row(i).cwiseAbs().sum());
  const Scalar c_norm = problem.c.cwiseAbs().maxCoeff();

  // diagonal scaling K: one factor per contact (mean of its G_ii diagonal), one per limit row
  for (Index i = 0; i < problem.nc; ++i) {
    const Scalar k = settings_.scale ? G.block<3, 3>(3 * i, 3 * i).trace() / 3 : Scalar(1);
    kappa_.segment<3>(3 * i).setConstant(k > 0 ? k : Scalar(1));
  }
  for (Index j = 3 * problem.nc; j < n; ++j) {
    kappa_[j] = settings_.scale && G(j, j) > 0 ? G(j, j) : Scalar(1);
  }
  // warm start: x = v - f with v = G lambda + c and f = K lambda
  x_.head(n).noalias() = G * lambda;
  x_.head(n) += problem.c - lambda.cwiseProduct(kappa_.head(n));
  Scalar psi = residual(problem, x_, f_, r_);
  Scalar damping = s.variant == LmVariant::Regular ? s.damping : s.plm_damping;

  SolverResult result;
  result.status = SolverStatus::MaxIterations;
  auto at_rounding_level = [&](const VecX& x, const VecX& f, const VecX& r) {
    const Scalar scale = c_norm + x.head(n).cwiseAbs().maxCoeff() +
                         (G_norm + 1) * f.head(n).cwiseAbs().maxCoeff();
    return r.head(n).cwiseAbs().maxCoeff() <= s.roundoff * scale;
  };
  Index solves = 0;  // linear solves, accepted or rejected: the reported iteration count
  for (Index it = 0; it < s.max_iterations; ++it) {
    if (!std::isfinite(psi)) {
      result.status = SolverStatus::NumericalIssue;
      break;
    }
    if (psi < s.tolerance || at_rounding_level(x_, f_, r_)) {
      result.status = SolverStatus::Converged;
      break;
    }
    jacobian(problem, x_);
    ++solves;
    const auto J = J_.topLeftCorner(n, n);
    g_.head(n).noalias() = J.transpose() * r_.head(n);  // gradient of psi

    if (s.variant == LmVariant::Regular) {
      // sec. 5.1: (J^T J + lambda_LM I) dx = -J^T r
      H_.topLeftCorner(n, n).noalias() = J.transpose() * J;
      H_.topLeftCorner(n, n).diagonal().array() += damping;
      if (!detail::cholesky_in_place(H_, n, 1e-15)) {
        damping *= s.damping_step;
        if (damping > s.damping_max) break;
        continue;
      }
      dx_.head(n) = -g_.head(n);
      detail::cholesky_solve_in_place(H_, n, dx_);
      x_trial_.head(n) = x_.head(n) + dx_.head(n);
      const Scalar psi_trial = residual(problem, x_trial_, f_trial_, r_trial_);
      // reduction factor: actual / predicted decrease of the quadratic model q = |r + J dx|^2/2
      Jdx_.head(n).noalias() = J * dx_.head(n);
      const Scalar predicted = g_.head(n).dot(dx_.head(n)) + 0.5 * Jdx_.head(n).squaredNorm();
      const Scalar rho = predicted < 0 ? (psi_trial - psi) / predicted : Scalar(-1);
      if (rho < s.r_min) damping *= s.damping_step;
      if (rho > 0 && std::isfinite(psi_trial)) {
        x_.head(n) = x_trial_.head(n);
        f_.head(n) = f_trial_.head(n);
        r_.head(n) = r_trial_.head(n);
        psi = psi_trial;
        if (rho > s.r_max) damping = std::max(damping / s.damping_step, s.damping_min);
      } else if (damping > s.damping_max) {
        break;  // no descent even along the gradient: stalled
      }
    } else {
      // sec. 5.2: least squares [J; sqrt(lambda_LM) I] dx = [-r; 0]
      H_.topLeftCorner(n, n) = J;
      H_.block(n, 0, n, n).setZero();
      H_.block(n, 0, n, n).diagonal().setConstant(std::sqrt(damping));
      b_.head(n) = -r_.head(n);
      b_.segment(n, n).setZero();
      if (!detail::householder_least_squares(H_, 2 * n, n, b_, v_, dx_)) {
        result.status = SolverStatus::NumericalIssue;
        break;
      }
      // monotone Armijo backtracking on t
      const Scalar slope = g_.head(n).dot(dx_.head(n));
      Scalar t = 1;
      bool accepted = false;
      for (Index k = 0; k < s.max_line_search && slope < 0; ++k, t *= s.backtrack) {
        x_trial_.head(n) = x_.head(n) + t * dx_.head(n);
        const Scalar psi_trial = residual(problem, x_trial_, f_trial_, r_trial_);
        if (psi_trial <= psi + s.armijo * t * slope) {
          x_.head(n) = x_trial_.head(n);
          f_.head(n) = f_trial_.head(n);
          r_.head(n) = r_trial_.head(n);
          psi = psi_trial;
          accepted = true;
          break;
        }
      }
      if (!accepted) break;  // stalled
    }
  }
  if (result.status == SolverStatus::MaxIterations &&
      (psi < s.tolerance || at_rounding_level(x_, f_, r_))) {
    result.status = SolverStatus::Converged;
  }
  result.iterations = solves;
  result.residual = psi;
  lambda = f_.head(n).cwiseQuotient(kappa_.head(n));
  return result;
}

}  // namespace impulse
