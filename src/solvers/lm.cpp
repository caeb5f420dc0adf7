// Levenberg-Marquardt on Todorov's implicit complementarity formulation.
//
// Papers:
//   E. Todorov, "Implicit nonlinear complementarity: a new approach to contact dynamics",
//     ICRA 2010 (slides): f(x), v(x) built so that the contact conditions hold
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
// One-row box rows (joint Coulomb friction, |lambda_j| <= b_j; contact_problem.hpp) use the same
// idea on the interval [-B, B], B = K_j b_j the scaled bound: f(x) = clamp(-x, -B, B), v = f + x.
// Inside (|x| < B) v = 0 and the impulse is free (stick); beyond, f = -B sign(x) and v = x - f has
// the sign of x, so the friction opposes the motion at its bound (slip). df/dx = -1 inside, 0
// outside; the kinks x = +-B join the kink search.
//
// Departures / choices:
//   * Warm start: x_0 = G lambda_0 + c - lambda_0, which inverts f when (lambda_0, v_0) satisfy
//     the conditions (x = v - f by eq. 51).
//   * Cold start (lambda_0 = 0; LmSettings::sticking_start): Todorov starts from x_0 = c. We also
//     try the sticking point x_s = -K lambda_s, (G + eps I) lambda_s = -c (one Cholesky of G,
//     eps = 1e-9 max G_ii for rank-deficient G), and keep whichever has the smaller psi. Since
//     f(-K lambda) = K lambda inside the cone, x_s is the solution when all contacts stick; it
//     starts contacts with lambda_s,n < 0 open. Measured (tests/solvers, ANYmal problems): RLM
//     cold starts from x_0 = c converged on 23/30 (4 contacts) and 14/30 (8); x_s alone gave
//     30/30 and 18/30.
//   * RLM starts at lambda_LM = 1e-8 instead of 1e-3 (the step is then close to the Gauss-Newton
//     point, which Todorov's dogleg tries first); 1e-3 damps the small singular directions of J
//     (Todorov's problems: eig(G) down to 2e-3) and costs 1-2 solves per problem.
//   * Rejected RLM steps (reduction factor <= 0): before raising lambda_LM only, an Armijo search
//     along the step at the kinks of f (z_n = 0 and |z_t| = mu F_n, where psi changes piece) and
//     at halvings (Todorov 2010 slides, "edge-aware line search"; no extra solve).
//   * Watchdog restart (sec. 5.2 mentions non-monotone search with watchdog stabilization, Grippo
//     et al. 1986/1991, for PLM; we apply it to both variants): when psi has not halved within
//     LmSettings::watchdog solves, or the step stalls (lambda_LM > damping_max, or no Armijo step
//     in PLM), take restart_sweeps projected Gauss-Seidel sweeps (as PgsSolver, alpha = 1) from
//     lambda = K^-1 f(x) and restart with the warm-start map (at most max_restarts). Why: with
//     more rows than DOF (8 ANYmal contacts: 24 rows, rank(G) = 18) LM stops at points where
//     several contacts stick with a residual r in null(G): J = -G K^-1 on those columns, so
//     J^T r = 0 and psi is flat in the sticking piece (a plateau, not a kink); the exit is a
//     contact reaching its cone edge, which no Gauss-Newton direction finds. The sweeps move
//     the impulse distribution along null(G) and so off the plateau. A restart after which psi
//     has not reached half the lowest psi seen before it ends the iteration (MaxIterations).
//   * Proximal step (LmSettings::proximal, rho = 1e-4; not in the papers): at the first stall after
//     a restart (or at the first stall when no restart is available) the linear solves switch to J~
//     = J + rho dF/dx, the Jacobian of r(x) + rho (f(x) - f(x_k)) at x_k, i.e. of the problem with
//     G + rho K and c - rho f(x_k) (a proximal-point regularization centred at the current
//     impulse), and lambda_LM starts again from its initial value. The extra term vanishes at x_k,
//     so the residual, psi and the solutions are those of the original problem; only the direction
//     changes. On closed contacts J~ = -(G + rho K) K^-1 instead of -G K^-1, so a residual in
//     null(G) (the plateau above, which the piles of spheres hit on most steps: an island of 52
//     contacts has rank(G) = 137 of 156) still gives a step, towards the contacts opening that the
//     plateau needs. Along it psi may stay flat until a contact changes piece, so in this phase the
//     kink search also takes the point just past the kink with the lowest psi when no point
//     decreases psi. Measured on 20 islands of the 216-sphere pile (steps 300-450): 2 of 20
//     converged without, 20 of 20 with rho = 1e-4 from the first solve (before the restart rule
//     below; 1e-5: 14, 1e-3: 15: rho too large spoils the Gauss-Newton step). It waits for a
//     restart because near a solution it slows Newton's convergence (2 solves become 4 on the easy
//     islands of a smaller pile), and a first restart is what Todorov-like problems with a plateau
//     need (tests/solvers: 16 contacts, mu = 1). Over 1 200 steps of the pile with LM (10 482
//     island solves) 4 185 solves end unconverged without it and 2 392 with it, most of them at a
//     residual floor (below), for 53 818 and 50 697 linear solves. The reduction ratio and the
//     Armijo slope use J~ (the model of the proximal problem).
//   * Reduced normal equations (exact; not in the papers): the columns of J where dF/dx is zero
//     (open contacts, the tangents of frictionless contacts, open limit rows) are -e_j, and
//     eliminating them leaves a system in the m other columns only (solve_impl), O(n m^2) or
//     less instead of O(n^3). J, the residual and the Gauss-Seidel restart also use the block
//     pattern of G (contacts on a common body), so the work follows the contact graph.
//   * Besides psi < tolerance we stop when the residual is at rounding level (LmSettings::roundoff
//     times |c| + |x| + |f| + |G| |K^-1 f|) and when stalled with no restart left (status
//     MaxIterations; the lowest-psi point is returned). Some problems have no exact solution
//     (in a settled pile, probably chains of contacts between walls that each ask for their
//     push-out speed): LM and projected Gauss-Seidel run for 1e5 sweeps then stop at the same
//     residual floor (1e-10 .. 1e-6 m/s on islands of the 216-sphere pile), not converged.
//   * A failed Cholesky of J^T J + lambda_LM I is treated as a rejected step (lambda_LM *= step).
//   * PLM solves the stacked least squares by Householder QR, with a monotone Armijo line search.
//   * The output impulse is lambda = f(x): it satisfies lambda_n >= 0 and the cone exactly; the
//     velocity conditions hold to the residual r.
#include "impulse/solvers/lm.hpp"

#include <algorithm>
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

namespace {
// Box row: f(x) = clamp(-x, -B, B) and its derivative (see the header comment).
inline Scalar box_impulse(Scalar x, Scalar B) { return std::clamp(-x, -B, B); }
inline Scalar box_slope(Scalar x, Scalar B) { return std::abs(x) < B ? Scalar(-1) : Scalar(0); }

// Blocks of rows: contact b < nc (rows 3b .. 3b+2), then one block per one-row constraint.
inline Index block_start(Index b, Index nc) { return b < nc ? 3 * b : b + 2 * nc; }
inline Index block_size(Index b, Index nc) { return b < nc ? 3 : 1; }
}  // namespace

void LmSolver::build_pattern(const ContactProblem& problem) {
  // Block a is a neighbour of block b when G(rows a, rows b) != 0 (the two constraints act on a
  // common body or system); b is its own neighbour. O(n^2) once per solve.
  const Index nc = problem.nc, nbk = nc + problem.size() - 3 * nc;
  const MatXcref& G = problem.G;
  nbr_begin_.resize(nbk + 1);  // within the capacity reserved in reserve_impl
  nbr_.clear();
  for (Index b = 0; b < nbk; ++b) {
    nbr_begin_[b] = static_cast<Index>(nbr_.size());
    const Index rb = block_start(b, nc), sb = block_size(b, nc);
    for (Index a = 0; a < nbk; ++a) {
      const Index ra = block_start(a, nc), sa = block_size(a, nc);
      if (a == b || !G.block(ra, rb, sa, sb).isZero(0)) nbr_.push_back(a);
    }
  }
  nbr_begin_[nbk] = static_cast<Index>(nbr_.size());
}

void LmSolver::add_block_column(const ContactProblem& problem, Index b, const Scalar* w,
                                Scalar* y) const {
  // y += G(:, rows b) w over the neighbours of b only
  const Index nc = problem.nc, rb = block_start(b, nc);
  const MatXcref& G = problem.G;
  if (b < nc) {
    const Eigen::Map<const Vec3> wv(w);
    for (Index k = nbr_begin_[b]; k < nbr_begin_[b + 1]; ++k) {
      const Index a = nbr_[k], ra = block_start(a, nc);
      if (a < nc) {
        Eigen::Map<Vec3>(y + ra).noalias() += G.block<3, 3>(ra, rb) * wv;
      } else {
        y[ra] += G.block<1, 3>(ra, rb).dot(wv.transpose());
      }
    }
  } else {
    for (Index k = nbr_begin_[b]; k < nbr_begin_[b + 1]; ++k) {
      const Index a = nbr_[k], ra = block_start(a, nc);
      for (Index t = 0; t < block_size(a, nc); ++t) y[ra + t] += G(ra + t, rb) * w[0];
    }
  }
}

void LmSolver::reserve_impl(Index max_rows) {
  const Index n = max_rows;
  for (VecX* v : {&x_, &x_best_, &f_, &r_, &x_trial_, &f_trial_, &r_trial_, &g_, &dx_, &Jdx_,
                  &lambda_}) {
    v->setZero(n);
  }
  kappa_.setOnes(n);
  b_.setZero(2 * n);
  v_.setZero(2 * n);
  J_.setZero(n, n);
  H_.setZero(2 * n, n);
  cols_.setZero(n);
  free_.setZero(n);
  col_begin_.setZero(n + 1);
  nbr_begin_.reserve(n + 1);
  nbr_.reserve(n * n);  // worst case: every block a neighbour of every other
}

Scalar LmSolver::residual(const ContactProblem& problem, const VecX& x, VecX& f, VecX& r) {
  const Index n = problem.size(), nc = problem.nc;
  for (Index i = 0; i < nc; ++i) {
    f.segment<3>(3 * i) = todorov_impulse(x.segment<3>(3 * i), problem.mu[i], nullptr);
  }
  const Index nu = problem.first_box_row();
  for (Index j = 3 * nc; j < nu; ++j) f[j] = std::max<Scalar>(0, -x[j]);
  for (Index j = nu; j < n; ++j) f[j] = box_impulse(x[j], kappa_[j] * problem.box_bound(j));
  // eq. 55-56: r = G f - f - x + c
  // with the diagonal scaling K (see the header): r = G K^-1 f - f - x + c
  // G K^-1 f by the columns of the nonzero impulses only: open contacts (and the tangents of
  // frictionless ones) have f = 0, often most of a pile's rows.
  r.head(n) = problem.c - f.head(n) - x.head(n);
  for (Index i = 0; i < nc; ++i) {
    if (f.segment<3>(3 * i).isZero(0)) continue;
    const Vec3 w = f.segment<3>(3 * i) / kappa_[3 * i];
    add_block_column(problem, i, w.data(), r.data());
  }
  for (Index j = 3 * nc; j < n; ++j) {
    if (f[j] == 0) continue;
    const Scalar w = f[j] / kappa_[j];
    add_block_column(problem, j - 2 * nc, &w, r.data());
  }
  return 0.5 * r.head(n).squaredNorm();
}

void LmSolver::normal_matrix(const ContactProblem& problem, Index m, Scalar w_S) {
  // Lower triangle of H = J_N^T W J_N, block row by block row: the rows of block a meet only the
  // columns of a's neighbours, so the cost follows the contact graph, not m^2 n.
  const Index nc = problem.nc, nbk = nc + problem.size() - 3 * nc;
  H_.topLeftCorner(m, m).setZero();
  for (Index a = 0; a < nbk; ++a) {
    const Index ra = block_start(a, nc), sa = block_size(a, nc);
    Scalar w[3] = {1, 1, 1};
    for (Index t = 0; t < sa; ++t) w[t] = free_[ra + t] ? w_S : 1;
    for (Index p = nbr_begin_[a]; p < nbr_begin_[a + 1]; ++p) {
      const Index b1 = nbr_[p];
      for (Index k = col_begin_[b1]; k < col_begin_[b1 + 1]; ++k) {
        const Scalar* Jk = J_.col(k).data() + ra;
        Scalar wk[3] = {0, 0, 0};
        for (Index t = 0; t < sa; ++t) wk[t] = w[t] * Jk[t];
        // neighbours are sorted, so b2 <= b1 and l <= k: the lower triangle
        for (Index q = nbr_begin_[a]; q <= p; ++q) {
          const Index b2 = nbr_[q];
          const Index l_end = b2 == b1 ? k + 1 : col_begin_[b2 + 1];
          for (Index l = col_begin_[b2]; l < l_end; ++l) {
            const Scalar* Jl = J_.col(l).data() + ra;
            Scalar sum = 0;
            for (Index t = 0; t < sa; ++t) sum += wk[t] * Jl[t];
            H_(k, l) += sum;
          }
        }
      }
    }
  }
}

Index LmSolver::jacobian(const ContactProblem& problem, const VecX& x) {
  const Index n = problem.size(), nc = problem.nc;
  const Scalar keep = 1 - prox_;
  // eq. 58 with the proximal term: column j of J is (G K^-1 - (1 - rho) I) dF/dx e_j - e_j
  // (dF/dx is block diagonal). Columns where dF/dx e_j = 0 are -e_j: they are not stored
  // (free_[j] = 1); the others are J_.col(m), m = 0, 1, ..., with cols_[m] = j.
  // Columns are stored block by block: those of block b are col_begin_[b] .. col_begin_[b+1]-1,
  // nonzero only on the rows of b's neighbours.
  Index m = 0;
  auto column = [&](Index b, Index j, const Scalar* dF_col, Index rows) {
    const Eigen::Map<const VecX> d(dF_col, rows);
    if (d.isZero(0)) {
      free_[j] = 1;
      return;
    }
    free_[j] = 0;
    cols_[m] = j;
    J_.col(m).head(n).setZero();
    Scalar w[3];
    for (Index t = 0; t < rows; ++t) w[t] = dF_col[t] / kappa_[j];
    add_block_column(problem, b, w, J_.col(m).data());
    J_.col(m).segment(j - j % rows, rows) -= keep * d;  // j % rows: the row in its block
    J_(j, m) -= 1;
    ++m;
  };
  for (Index i = 0; i < nc; ++i) {
    col_begin_[i] = m;
    Mat3 dF;
    todorov_impulse(x.segment<3>(3 * i), problem.mu[i], &dF);
    for (Index t = 0; t < 3; ++t) column(i, 3 * i + t, dF.col(t).data(), 3);
  }
  for (Index j = 3 * nc; j < n; ++j) {
    col_begin_[j - 2 * nc] = m;
    const Scalar df = j < problem.first_box_row() ? (x[j] < 0 ? -1 : 0)
                                                  : box_slope(x[j], kappa_[j] * problem.box_bound(j));
    column(j - 2 * nc, j, &df, 1);
  }
  col_begin_[n - 2 * nc] = m;
  return m;
}

void LmSolver::cold_start(const ContactProblem& problem) {
  // x_0 = c (Todorov); the sticking start x_s = -K lambda_s with (G + eps I) lambda_s = -c
  // replaces it when psi(x_s) < psi(c). f(-K lambda) = K lambda for lambda in the cone, so x_s
  // is the solution when every contact sticks at lambda_s; contacts with lambda_s,n < 0 start
  // open, those with lambda_s outside the cone start sliding.
  const Index n = problem.size();
  const MatXcref& G = problem.G;
  x_.head(n) = problem.c;
  if (!active().sticking_start) return;
  const Scalar eps = active().sticking_regularization * G.diagonal().cwiseAbs().maxCoeff();
  for (Index j = 0; j < n; ++j) {
    H_.col(j).segment(j, n - j) = G.col(j).segment(j, n - j);
    H_(j, j) += eps;
  }
  if (!detail::cholesky_in_place(H_, n, 1e-15)) return;
  dx_.head(n) = -problem.c;
  detail::cholesky_solve_in_place(H_, n, dx_);
  x_trial_.head(n) = -dx_.head(n).cwiseProduct(kappa_.head(n));
  const Scalar psi_c = residual(problem, x_, f_, r_);
  const Scalar psi_s = residual(problem, x_trial_, f_trial_, r_trial_);
  if (psi_s < psi_c) x_.head(n) = x_trial_.head(n);
}

void LmSolver::gauss_seidel_restart(const ContactProblem& problem, Index sweeps) {
  // Projected Gauss-Seidel (as PgsSolver with alpha = 1: normal update, then the tangential one
  // projected onto the disc mu lambda_z) from lambda = K^-1 f(x), then the warm-start map.
  const Index n = problem.size(), nc = problem.nc;
  const MatXcref& G = problem.G;
  const VecXcref& c = problem.c;
  lambda_.head(n) = f_.head(n).cwiseQuotient(kappa_.head(n));
  for (Index sweep = 0; sweep < sweeps; ++sweep) {
    for (Index i = 0; i < nc; ++i) {
      const Index k = 3 * i;
      Vec3 v = c.segment<3>(k);
      for (Index q = nbr_begin_[i]; q < nbr_begin_[i + 1]; ++q) {  // G(rows i, :) lambda
        const Index a = nbr_[q], ra = block_start(a, nc);
        if (a < nc) {
          v.noalias() += G.block<3, 3>(k, ra) * lambda_.segment<3>(ra);
        } else {
          v += G.col(ra).segment<3>(k) * lambda_[ra];
        }
      }
      const Scalar G_zz = G(k + 2, k + 2), G_tt = std::max(G(k, k), G(k + 1, k + 1));
      const Vec3 old = lambda_.segment<3>(k);
      const Scalar lz = G_zz > 0 ? std::max<Scalar>(0, old.z() - v.z() / G_zz) : old.z();
      const Scalar dz = lz - old.z();
      const Vec2s vT(v.x() + G(k, k + 2) * dz, v.y() + G(k + 1, k + 2) * dz);
      const Vec2s lT = G_tt > 0 ? project_to_disc(old.head<2>() - vT / G_tt, problem.mu[i] * lz)
                                : project_to_disc(old.head<2>(), problem.mu[i] * lz);
      lambda_.segment<3>(k) = Vec3(lT.x(), lT.y(), lz);
    }
    for (Index j = 3 * nc; j < n; ++j) {
      Scalar v_j = c[j];
      const Index b = j - 2 * nc;
      for (Index q = nbr_begin_[b]; q < nbr_begin_[b + 1]; ++q) {  // G(j, :) lambda
        const Index a = nbr_[q], ra = block_start(a, nc);
        for (Index t = 0; t < block_size(a, nc); ++t) v_j += G(j, ra + t) * lambda_[ra + t];
      }
      if (!(G(j, j) > 0)) continue;
      const Scalar next = lambda_[j] - v_j / G(j, j);
      if (j < problem.first_box_row()) {
        lambda_[j] = std::max<Scalar>(0, next);
      } else {  // box row (joint friction)
        lambda_[j] = std::clamp(next, -problem.box_bound(j), problem.box_bound(j));
      }
    }
  }
  x_.head(n).noalias() = G * lambda_.head(n);
  x_.head(n) += c - lambda_.head(n).cwiseProduct(kappa_.head(n));
}

Scalar LmSolver::kink_search(const ContactProblem& problem, Scalar psi, Scalar slope) {
  const Index n = problem.size(), nc = problem.nc;
  const LmSettings& s = active();
  Scalar best_t = 0, best_psi = psi;
  // With the proximal step (prox_ > 0, a stall) the step may run along a plateau of psi, where
  // no point decreases psi before a contact changes piece: then just past the kink with the
  // lowest psi <= psi is taken (the next solve starts in the new piece).
  Scalar flat_t = 0, flat_psi = psi;
  auto probe = [&](Scalar t, bool kink) {
    if (!(t > 0 && t < 1)) return;
    x_trial_.head(n) = x_.head(n) + t * dx_.head(n);
    const Scalar p = residual(problem, x_trial_, f_trial_, r_trial_);
    if (p < best_psi && p <= psi + s.armijo * t * slope) {
      best_psi = p;
      best_t = t;
    }
    if (kink && prox_ > 0) {
      const Scalar t_past = t * (1 + 1e-9);
      x_trial_.head(n) = x_.head(n) + t_past * dx_.head(n);
      const Scalar q = residual(problem, x_trial_, f_trial_, r_trial_);
      if (q <= flat_psi && (q < flat_psi || flat_t == 0 || t_past < flat_t)) {
        flat_psi = q;
        flat_t = t_past;
      }
    }
  };
  for (Index i = 0; i < nc; ++i) {
    const Vec3 z = x_.segment<3>(3 * i), d = dx_.segment<3>(3 * i);
    const Scalar mu2 = problem.mu[i] * problem.mu[i];
    if (d.z() != 0) probe(-z.z() / d.z(), true);  // z_n = 0: opening / closing
    // |z_t + t d_t| = mu (-(z_n + t d_n)): sticking / sliding
    const Scalar a = d.head<2>().squaredNorm() - mu2 * d.z() * d.z();
    const Scalar b = 2 * (z.head<2>().dot(d.head<2>()) - mu2 * z.z() * d.z());
    const Scalar c0 = z.head<2>().squaredNorm() - mu2 * z.z() * z.z();
    const Scalar disc = b * b - 4 * a * c0;
    if (a != 0 && disc >= 0) {
      const Scalar q = -0.5 * (b + std::copysign(std::sqrt(disc), b));
      for (const Scalar t : {q / a, q != 0 ? c0 / q : Scalar(-1)}) {
        if (z.z() + t * d.z() < 0) probe(t, true);
      }
    }
  }
  for (Index j = 3 * nc; j < problem.first_box_row(); ++j) {
    if (dx_[j] != 0) probe(-x_[j] / dx_[j], true);
  }
  for (Index j = problem.first_box_row(); j < n; ++j) {  // box rows: x = +-B
    const Scalar B = kappa_[j] * problem.box_bound(j);
    if (dx_[j] != 0) probe((B - x_[j]) / dx_[j], true), probe((-B - x_[j]) / dx_[j], true);
  }
  for (Scalar t = 0.5; t > 1e-3; t *= s.backtrack) probe(t, false);
  if (!(best_t > 0)) best_t = flat_t;
  if (!(best_t > 0)) return psi;
  x_.head(n) += best_t * dx_.head(n);
  return residual(problem, x_, f_, r_);
}

SolverResult LmSolver::solve_with_active(const ContactProblem& problem, VecXref lambda) {
  const LmSettings& s = active();
  const Index n = problem.size();
  const MatXcref& G = problem.G;
  // Largest absolute row sum of G (= column sum: G is symmetric), for the rounding level of r.
  Scalar G_norm = 0;
  for (Index i = 0; i < n; ++i) G_norm = std::max(G_norm, G.col(i).cwiseAbs().sum());  // G = G^T
  const Scalar c_norm = problem.c.cwiseAbs().maxCoeff();

  // diagonal scaling K: one factor per contact (mean of its G_ii diagonal), one per limit or box row
  for (Index i = 0; i < problem.nc; ++i) {
    const Scalar k = active().scale ? G.block<3, 3>(3 * i, 3 * i).trace() / 3 : Scalar(1);
    kappa_.segment<3>(3 * i).setConstant(k > 0 ? k : Scalar(1));
  }
  for (Index j = 3 * problem.nc; j < n; ++j) {
    kappa_[j] = active().scale && G(j, j) > 0 ? G(j, j) : Scalar(1);
  }
  build_pattern(problem);
  if (lambda.isZero(0)) {
    cold_start(problem);
  } else {
    // warm start: x = v - f with v = G lambda + c and f = K lambda
    x_.head(n).noalias() = G * lambda;
    x_.head(n) += problem.c - lambda.cwiseProduct(kappa_.head(n));
  }
  Scalar psi = residual(problem, x_, f_, r_);
  const Scalar damping_0 = s.variant == LmVariant::Regular ? s.damping : s.plm_damping;
  Scalar damping = damping_0;

  SolverResult result;
  result.status = SolverStatus::MaxIterations;
  auto at_rounding_level = [&](const VecX& x, const VecX& f, const VecX& r) {
    // r = G K^-1 f + c - f - x: G acts on lambda = K^-1 f
    const Scalar scale = c_norm + x.head(n).cwiseAbs().maxCoeff() +
                         f.head(n).cwiseAbs().maxCoeff() +
                         G_norm * f.head(n).cwiseQuotient(kappa_.head(n)).cwiseAbs().maxCoeff();
    return r.head(n).cwiseAbs().maxCoeff() <= s.roundoff * scale;
  };
  prox_ = 0;  // Gauss-Newton steps until the watchdog sees a stall
  Index solves = 0;  // linear solves, accepted or rejected: the reported iteration count
  // watchdog: the best psi and the solve count at which psi last halved
  Index restarts = 0, progress = 0;
  Scalar best = psi;
  // the lowest psi so far and its point (returned if the iteration ends elsewhere), and the lowest
  // psi when the last restart was taken: a restart after which psi did not reach half of that is
  // the last one (the problem has no exact solution, or its rows are too dependent for the
  // sweeps to find it: more restarts cost time and change nothing)
  Scalar lowest = psi, lowest_at_restart = psi;
  x_best_.head(n) = x_.head(n);
  bool stalled = false;  // a restart was refused by the rule above: stop
  auto restart = [&]() {
    if (restarts >= s.max_restarts || s.restart_sweeps <= 0) return false;
    if (restarts > 0 && !(lowest < 0.5 * lowest_at_restart)) {
      stalled = true;
      return false;
    }
    lowest_at_restart = lowest;
    ++restarts;
    gauss_seidel_restart(problem, s.restart_sweeps);
    psi = residual(problem, x_, f_, r_);
    damping = damping_0;
    best = psi;
    progress = solves;
    return true;
  };
  while (solves < s.max_iterations) {
    if (!std::isfinite(psi)) {
      result.status = SolverStatus::NumericalIssue;
      break;
    }
    if (psi < s.tolerance || at_rounding_level(x_, f_, r_)) {
      result.status = SolverStatus::Converged;
      break;
    }
    if (psi < lowest) {
      lowest = psi;
      x_best_.head(n) = x_.head(n);
    }
    if (psi < 0.5 * best) {
      best = psi;
      progress = solves;
    } else if (s.watchdog > 0 && solves - progress >= s.watchdog) {
      const bool can_restart = s.restart_sweeps > 0 && restarts < s.max_restarts;
      if (prox_ == 0 && s.proximal > 0 && (restarts > 0 || !can_restart)) {
        // a stall after a restart (or with none available): proximal steps from here on
        prox_ = s.proximal;
        damping = damping_0;  // the stall has raised it: the proximal step needs it small
        best = psi;
        progress = solves;
      } else if (restart()) {
        continue;
      } else if (stalled) {
        break;
      }
    }
    const Index m = jacobian(problem, x_);
    ++solves;
    const auto JN = J_.topLeftCorner(n, m);  // the stored columns; the others are -e_j
    // gradient of psi (of the proximal model, see the header): J^T r
    g_.head(n) = -r_.head(n);
    v_.head(m).noalias() = JN.transpose() * r_.head(n);
    for (Index k = 0; k < m; ++k) g_[cols_[k]] = v_[k];

    if (s.variant == LmVariant::Regular) {
      // sec. 5.1: (J^T J + lambda_LM I) dx = -J^T r. With J = [J_N, -E_S] (S: the columns -e_j)
      // the S rows of the normal equations give dx_S = (r_S + (J_N dx_N)_S) / (1 + lambda_LM),
      // and eliminating them leaves the m x m system
      //     (J_N^T W J_N + lambda_LM I) dx_N = -J_N^T W r,   W = diag(1 on rows not in S,
      //                                                             lambda_LM / (1 + lambda_LM) on S)
      // (exact, no approximation): O(n m^2) instead of O(n^3); m counts the closed and sliding
      // contacts' active columns, so open contacts and frictionless tangents cost nothing.
      const Scalar w_S = damping / (1 + damping);
      for (Index i = 0; i < n; ++i) b_[i] = free_[i] ? w_S * r_[i] : r_[i];  // W r
      normal_matrix(problem, m, w_S);
      H_.topLeftCorner(m, m).diagonal().array() += damping;
      if (!detail::cholesky_in_place(H_, m, 1e-15)) {
        damping *= s.damping_step;
        if (damping > s.damping_max && !restart()) break;
        continue;
      }
      v_.head(m).noalias() = -JN.transpose() * b_.head(n);
      detail::cholesky_solve_in_place(H_, m, v_);
      Jdx_.head(n).noalias() = JN * v_.head(m);  // J_N dx_N
      for (Index i = 0; i < n; ++i) {
        if (!free_[i]) continue;
        dx_[i] = (r_[i] + Jdx_[i]) / (1 + damping);
        Jdx_[i] -= dx_[i];  // J dx = J_N dx_N - E_S dx_S
      }
      for (Index k = 0; k < m; ++k) dx_[cols_[k]] = v_[k];
      x_trial_.head(n) = x_.head(n) + dx_.head(n);
      const Scalar psi_trial = residual(problem, x_trial_, f_trial_, r_trial_);
      // reduction factor: actual / predicted decrease of the quadratic model q = |r + J dx|^2/2
      const Scalar predicted = g_.head(n).dot(dx_.head(n)) + 0.5 * Jdx_.head(n).squaredNorm();
      const Scalar rho = predicted < 0 ? (psi_trial - psi) / predicted : Scalar(-1);
      if (rho < s.r_min) damping *= s.damping_step;
      if (rho > 0 && std::isfinite(psi_trial)) {
        x_.head(n) = x_trial_.head(n);
        f_.head(n) = f_trial_.head(n);
        r_.head(n) = r_trial_.head(n);
        psi = psi_trial;
        if (rho > s.r_max) damping = std::max(damping / s.damping_step, s.damping_min);
      } else if (s.kink_search && predicted < 0) {
        psi = kink_search(problem, psi, g_.head(n).dot(dx_.head(n)));
      }
      if (damping > s.damping_max && !restart()) break;  // no descent even along the gradient
    } else {
      // sec. 5.2: least squares [J; sqrt(lambda_LM) I] dx = [-r; 0]
      H_.topLeftCorner(n, n).setZero();
      H_.topLeftCorner(n, n).diagonal().setConstant(-1);  // the columns -e_j ...
      for (Index k = 0; k < m; ++k) H_.col(cols_[k]).head(n) = JN.col(k);  // ... and the others
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
      if (!accepted && !restart()) break;  // stalled
    }
  }
  if (result.status == SolverStatus::MaxIterations && lowest < psi) {
    x_.head(n) = x_best_.head(n);
    psi = residual(problem, x_, f_, r_);
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
