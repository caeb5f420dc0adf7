// Per-contact bisection solver.
//
// Paper: J. Hwangbo, J. Lee, M. Hutter, "Per-Contact Iteration Method for Solving Contact
// Dynamics", IEEE RA-L 3(2), 2018.
//   sec. II, eq. 5      single-contact velocity  v = c + M^-1 lambda
//   sec. II, eq. 8      model: lambda = argmin_{lambda in S} v^T M v (velocity Signorini + cone)
//   sec. III-A          opening / sticking / slipping; eq. 9-10 stationarity along eta;
//                       eq. 11-12 closest point on the conic section C in the metric M^-1;
//                       eq. 13-14 lambda_z(theta), r(theta); eq. 15-16 hybrid gradient;
//                       Algorithm 1 (incremental stepping + bisection on theta)
//   sec. III-B          Algorithm 2, nonlinear block SOR over contacts
//   sec. V-C            alpha = 1, gamma = 0.99, alpha_min = 0.7, stop at 1e-6 (N s, m/s)
//
// Symbols (paper -> code). The paper's M^-1_{i,i} is the 3x3 Delassus block, here G (G_ii), and
// M = G^-1 its inverse:
//   lambda^{v=0} = -M c   lambda_v0        zero-velocity (unconstrained) impulse
//   theta, r              theta, r         polar coordinates of lambda_T = r (cos, sin)
//   h1 = G_(r3) lambda + c_z,  grad h1 = G_(r3)          zero normal velocity plane
//   h2 = lambda_x^2 + lambda_y^2 - mu^2 lambda_z^2,  grad h2 = 2 (lambda_x, lambda_y, -mu^2 lambda_z)
//   eta~ = grad h1 x grad h2 / 2                        unnormalized eta of eq. 10
//   Mbar (3x2), cbar      Mbar, cbar       hybrid quantities of eq. 16
//   D0                    D0               sign of dE/dtheta at the initial guess
//   alpha (Alg. 1)        step             angular step; beta1..3 its initial size/shrink/growth
//   gamma (Alg. 1)        bisection_tolerance   impulse interval, relative to |lambda|, at which
//                                               bisection stops
//   alpha, gamma, alpha_min (Alg. 2)   relaxation factor, its decay and floor
//
// Departures from the paper:
//   * Line-of-sight check (Alg. 1 line 13). The paper prints "fail if grad h2 . (lambda -
//     lambda^{v=0}) < 0". With grad h2 the outward normal of the cone, a boundary point is in
//     sight of the outside point lambda^{v=0} iff grad h2 . (lambda^{v=0} - lambda) >= 0; the
//     printed inequality rejects exactly the visible points (e.g. G = I, c = (-5, 0, -1), mu = 1:
//     the optimum (1, 0, 1) has grad h2 . (lambda - lambda^{v=0}) = -8). We reject when
//     grad h2 . (lambda - lambda^{v=0}) > 0.
//   * Orientation of eta: eta~ = grad h1 x grad h2 is a positive multiple of d lambda / d theta
//     on the valid arc (r > 0): expanding, (grad h1 x grad h2) . d lambda/d theta =
//     2 r^2 [(1/mu + mu) D'^2 / D + mu D] > 0 with D = G_zz/mu + G_zx cos + G_zy sin > 0.
//     So the sign of dE/d lambda . eta~ is the sign of dE/d theta, as Alg. 1 line 6 assumes.
//   * Incremental stepping never jumps over an angle that already failed (invalid r or out of
//     sight): on a hyperbolic section (G_zz < mu |G_z,T|) the valid arc is shorter than 2 pi, and
//     a step grown by beta3 can cross the invalid arc and land on the far end of the same arc,
//     bracketing a wrong zero crossing. The failed angle is kept as a wall and steps stay short
//     of it (step <= beta2 * distance to the wall).
//   * beta1..3 are not published (our choices in BisectionSettings); the stepping and bisection
//     loops are capped by max_bisection_steps, D0 = 0 returns the initial guess, and bisection
//     also stops when the theta interval reaches the resolution of double (|lambda| ~ 1e5 N s
//     cannot be resolved to an absolute 1e-12 N s).
//   * The bisection tolerance is relative (|lambda^p - lambda| < tol |lambda|, default 1e-10)
//     instead of the paper's absolute 1e-6 N s, and the returned impulse is one regula-falsi
//     step on the final bracket [prev, p] (the gradient changes sign across it), not one of its
//     ends: a sliding sphere then keeps |v_y| < 1e-9 m/s (tests/world), where the absolute
//     tolerance let the friction direction wander by 5e-4 rad.
//   * Bracket refinement (Alg. 1 lines 24-33): by default each step takes the Illinois point
//     (regula falsi on the gradient with the weight of an end kept twice in a row halved, the
//     point clamped to [1 %, 99 %] of the bracket) instead of the midpoint. Same bracket, same
//     stopping rule, superlinear instead of linear convergence: 32.6 -> 11 Alg. 1 evaluations per
//     slipping contact in `impulse bench solvers`. `BisectionSettings::illinois = false` gives the
//     paper's plain bisection.
//   * Coulomb slip model (below): the bracket is refined by Newton steps on f(theta) with its
//     closed-form derivative (SlipSearch::coulomb_slope), safeguarded by the bracket (an
//     Illinois point where a step would leave it), stopping when a step moves the impulse by
//     less than bisection_tolerance |lambda|: 5.6 Alg. 1 evaluations per slipping contact
//     against the Illinois refinement's 10.3 on random coupled blocks, the same impulse within
//     1.4e-15 relative (tests/solvers/test_single_contact.cpp). `BisectionSettings::slip_newton
//     = false` gives the Illinois refinement.
//   * Rank-deficient G_ii (footnote 2: "a 1D or 2D problem where the solution can be trivially
//     obtained"): instead of special-casing 1D/2D, G_ii is regularized by eps * max_eig * I, which
//     keeps every step finite and changes velocities by O(eps |G| |lambda|). If the normal row of
//     G_ii vanishes (G_zz <= eps max_eig) no impulse can change v_z: the contact is Locked and
//     gets lambda = 0. mu = 0 is solved in closed form (lambda_z = -c_z / G_zz); in the sweep a
//     frictionless contact whose tangent impulses are 0 reads and updates its normal row only
//     (one row of G lambda instead of three; the same closed form for lambda_z). Which path the
//     contacts take is decided once per solve: a problem without frictionless contacts sweeps
//     with no per-contact test; one whose contacts are all frictionless (no box rows) has its
//     tangent impulses set to 0 (the projection onto a ray) and kept there, reads its normal
//     rows from pieces gathered contiguous (DelassusProduct::bind_normal_rows) and mixes the
//     normal and limit rows only (AndersonAcceleration's normal_rows).
//   * Termination of Algorithm 2 (the paper only says "exact violations of the physical
//     constraints"): during each sweep, for every contact before its update we add
//     max(0,-v_z) + max(0,-lambda_z) + min(lambda_z+, v_z+) + cone violation + |lambda* - lambda|,
//     where lambda* is the exact single-contact optimum given the other impulses; one-row limit
//     constraints add the same Signorini terms and their 1-D update. Stop when the largest of
//     these per-contact errors < tolerance (an infinity norm, like ContactResiduals: the sum
//     made the criterion scale with the island, so a 100-contact island had to reach 1e-8 per
//     contact). SweepMonitor (solver_result.hpp) also stops on a plateau just above the
//     tolerance (reported as not converged, SolverResult::stalled).
//   * Slip model (SlipModel::Coulomb, the default). Eq. 8 minimizes the energy on C; its
//     stationarity condition dE/dtheta = v_T . dlambda_T/dtheta = v_T . (r' t + r t_perp) = 0
//     (v_z = 0 on C; t = (cos, sin), t_perp = (-sin, cos), r' = dr/dtheta) is Coulomb's
//     maximal-dissipation condition v_T . t_perp = 0 (friction anti-parallel to the slip) only
//     when r' = 0, i.e. when G_zx = G_zy = 0. ANYmal's feet have strongly coupled blocks: on an
//     ANYmal landing the energy minimum's friction points up to 44 degrees away from opposing the
//     slip with 1.76x the normal impulse of the Coulomb solution PGS and LM agree on, and Fig. 6
//     finds 58.7 % agreement on the random task (docs/fidelity.md item 2). The default searches
//     instead for the zero of
//         f(theta) = v_T(theta) . t_perp(theta)                   (v = Mbar lambda_T + cbar, eq. 16)
//     with the same stepping, bracketing and Illinois refinement: f has the sign of dE/dtheta
//     when G_ii is decoupled (dE/dtheta = r f), and the wanted zero (v_T = -kappa t, kappa > 0)
//     is where f crosses from - to +, as the energy gradient does at its minimum. The
//     line-of-sight test belongs to the energy model (a closest point is visible from
//     lambda^{v=0}) and is not applied; the stepping still never crosses r <= 0.
//     SlipModel::MinimumEnergy keeps the paper's criterion.
//   * Anderson acceleration of Algorithm 2 (solvers/anderson.hpp, Walker & Ni 2011): after
//     anderson_start sweeps without convergence, each sweep's impulses are mixed with the last
//     anderson_memory sweeps'. Stacks (Kapla tower, resting boxes) converge in 5-10x fewer sweeps;
//     problems that converge within anderson_start sweeps are untouched. When the mixed sweeps
//     stop on a plateau that no stage below gets them off, up to plain_after_plateau plain
//     sweeps (Algorithm 2 alone) go on from their impulses.
//   * Frictionless problems (every mu = 0, no box rows) are a convex QP with bounds. After
//     qp_start sweeps without convergence they are solved exactly by the primal active-set
//     method (solvers/bound_qp.hpp: Lawson-Hanson NNLS in QP form, Cholesky factor updated per
//     change of the free set) when they have at most kExactQpRows variables, otherwise (or if it
//     fails) by MPRGP (conjugate gradients with bound projections). The changes of the free set,
//     or MPRGP's products with G, count as sweeps; the sweeps then go on from the solution and
//     measure the error above. On the islands of a settling pile of spheres (rank-deficient G,
//     ~50-80 contacts) Gauss-Seidel took 1 000 to 5 000+ sweeps, MPRGP 130-340 products and did
//     not always reach the tolerance (116 islands over 10 s of the pile), the active set 7-64
//     changes (every island converges).
//   * Range projection (BisectionSettings::range_projections; project_right_side below): on a
//     plateau, the right side of the rows that carry the load is projected onto the range of
//     their block of G (the part of the gap targets that no motion meets goes) and the sweeps
//     go on from their impulses; after the first projection the active-set stage (if it has
//     not run) solves the projected problem at once.
//   * One-row limit constraints are solved exactly in the same sweep: lambda* = max(0, lambda -
//     v / G_jj), relaxed with the same alpha.
//   * One-row box rows (joint Coulomb friction, |lambda_j| <= b_j; contact_problem.hpp) likewise:
//     lambda* = clamp(lambda - v / G_jj, -b_j, b_j) is the exact stick/slip solution of the row
//     given the others; the error adds its bound violation and |lambda* - lambda|.
#include "impulse/solvers/bisection.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "impulse/core/sincos.hpp"
#include "impulse/solvers/cone.hpp"
#include "../core/isa_dispatch.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define IMPULSE_BISECTION_OUT_OF_LINE __attribute__((noinline))
#else
#define IMPULSE_BISECTION_OUT_OF_LINE
#endif

namespace impulse {

const char* to_string(ContactCase c) {
  switch (c) {
    case ContactCase::Opening: return "opening";
    case ContactCase::Sticking: return "sticking";
    case ContactCase::Slipping: return "slipping";
    case ContactCase::Locked: return "locked";
  }
  return "unknown";
}

namespace {

// A contact block prepared once per solve: G (regularized if rank-deficient) and M = G^-1.
struct PreparedContact {
  Mat3 G;
  Mat3 M;
  bool locked = false;
};

PreparedContact prepare_contact(const Mat3& G_raw, Scalar eps) {
  PreparedContact p;
  // Well-conditioned blocks (the common case) take the cofactor inverse. For a PSD 3x3 matrix
  // lambda_max <= tr and lambda_min >= det / lambda_max^2 >= det / tr^2, so det >= 1e-6 tr^3
  // bounds the condition number by 1e6: no regularization applies (eps << 1e-6) and the cofactor
  // inverse is accurate to ~1e-10 relative. Anything else goes through the eigen decomposition.
  if (bisection_block_inverse(G_raw, eps, p.M)) {
    p.G = G_raw;
    return p;
  }
  // Iterative (QR) eigenvalues: accurate to eps |G| even for repeated tiny eigenvalues, where
  // the closed-form computeDirect() is not (a rank-1 block could look non-singular).
  const Eigen::SelfAdjointEigenSolver<Mat3> eig(G_raw);
  const Scalar max_eig = eig.eigenvalues()(2);
  const Scalar min_eig = eig.eigenvalues()(0);
  p.G = G_raw;
  if (!(max_eig > 0) || G_raw(2, 2) <= eps * max_eig) {
    p.locked = true;
    p.M.setZero();
    return p;
  }
  // M = V diag(1 / eig) V^T from the eigen decomposition: unlike the cofactor inverse of a
  // nearly singular block, it keeps lambda^{v=0} = -M c accurate for c in the range of G.
  const Scalar shift = min_eig < eps * max_eig ? eps * max_eig - min_eig : Scalar(0);
  p.G.diagonal().array() += shift;
  const Vec3 inv_eig = (eig.eigenvalues().array() + shift).inverse();
  p.M = eig.eigenvectors() * inv_eig.asDiagonal() * eig.eigenvectors().transpose();
  return p;
}

// A point of the conic section C at tangential angle theta (eq. 13-14).
struct ConicPoint {
  Scalar theta = 0;
  Scalar cs = 1, sn = 0;  // cos and sin of theta (computed once: the trig is most of a slip solve)
  Scalar r = 0;
  Vec3 lambda = Vec3::Zero();
  bool valid = false;  // r > 0 and finite
};

// The slip case of sec. III-A: the closest point of C to lambda^{v=0} in the metric G.
class SlipSearch {
 public:
  SlipSearch(const Mat3& G, const Vec3& c, Scalar mu, const Vec3& lambda_v0, SlipModel model)
      : G_(G), c_(c), mu_(mu), lambda_v0_(lambda_v0), coulomb_(model == SlipModel::Coulomb) {
    // eq. 16: Mbar = G_(c1,c2) - G_(c3) [G_zx/G_zz, G_zy/G_zz],  cbar = c - G_(c3) c_z / G_zz
    const Scalar inv_zz = 1 / G(2, 2);
    Mbar_.col(0) = G.col(0) - G.col(2) * (G(2, 0) * inv_zz);
    Mbar_.col(1) = G.col(1) - G.col(2) * (G(2, 1) * inv_zz);
    cbar_ = c - G.col(2) * (c.z() * inv_zz);
  }

  ConicPoint at(Scalar theta) const {
    Scalar cs, sn;
    sincos(theta, sn, cs);
    return at(theta, cs, sn);
  }

  // The point in the direction (cs, sn), labelled theta (the hinted search below counts its
  // angle from the hint's direction, whose angle it never computes).
  ConicPoint at(Scalar theta, Scalar cs, Scalar sn) const {
    ConicPoint p;
    p.theta = theta;
    p.cs = cs;
    p.sn = sn;
    // eq. 14: r = -c_z / (G_zz / mu + G_zx cos + G_zy sin)
    const Scalar D = G_(2, 2) / mu_ + G_(2, 0) * cs + G_(2, 1) * sn;
    if (!(D > 0)) return p;
    p.r = -c_.z() / D;
    // eq. 13: lambda_z = (-c_z - G_zx r cos - G_zy r sin) / G_zz
    const Scalar lx = p.r * cs, ly = p.r * sn;
    const Scalar lz = (-c_.z() - G_(2, 0) * lx - G_(2, 1) * ly) / G_(2, 2);
    p.lambda = Vec3(lx, ly, lz);
    p.valid = p.r > 0 && std::isfinite(p.r);
    return p;
  }

  // Sign-carrying projected gradient dE/dlambda . eta~ via the hybrid form eq. 15.
  // Coulomb: f(theta) = v_T . t_perp instead (see the header comment).
  Scalar gradient(const ConicPoint& p) const {
    const Vec3 v = Mbar_ * p.lambda.head<2>() + cbar_;  // = G lambda + c with v_z = 0
    if (coulomb_) return -v.x() * p.sn + v.y() * p.cs;
    const Vec3 grad_h2(p.lambda.x(), p.lambda.y(), -mu_ * mu_ * p.lambda.z());
    const Vec3 eta = G_.row(2).transpose().cross(grad_h2);  // eq. 10 without normalization
    return v.dot(eta);
  }

  // Coulomb: f and df/dtheta at p (valid), for the Newton steps of the bracket refinement. With
  // t = (cos, sin), t_perp = (-sin, cos), D' = dD/dtheta, r' = -r D' / D (eq. 14):
  //   d lambda_T / d theta = r' t + r t_perp,  d v_T / d theta = Mbar_T d lambda_T / d theta,
  //   f' = -t . v_T + t_perp . d v_T / d theta.
  // (`dl`: |d lambda_T / d theta|, which turns a step in theta into the impulse's move)
  Scalar coulomb_slope(const ConicPoint& p, Scalar& f, Scalar& dl) const {
    const Scalar cs = p.cs, sn = p.sn;
    const Scalar vx = Mbar_(0, 0) * p.lambda.x() + Mbar_(0, 1) * p.lambda.y() + cbar_.x();
    const Scalar vy = Mbar_(1, 0) * p.lambda.x() + Mbar_(1, 1) * p.lambda.y() + cbar_.y();
    f = -vx * sn + vy * cs;
    const Scalar D = G_(2, 2) / mu_ + G_(2, 0) * cs + G_(2, 1) * sn;
    const Scalar dD = -G_(2, 0) * sn + G_(2, 1) * cs;
    const Scalar dr = -p.r * dD / D;
    const Scalar lx = dr * cs - p.r * sn, ly = dr * sn + p.r * cs;
    const Scalar dvx = Mbar_(0, 0) * lx + Mbar_(0, 1) * ly, dvy = Mbar_(1, 0) * lx + Mbar_(1, 1) * ly;
    dl = std::sqrt(lx * lx + ly * ly);
    return -(vx * cs + vy * sn) + (-dvx * sn + dvy * cs);
  }

  // Coulomb: whether lambda_T opposes the tangential velocity it leaves (the maximum-dissipation
  // side of f = 0; the zero on the other side has v_T along lambda_T).
  bool dissipative(const ConicPoint& p) const {
    const Vec3 v = Mbar_ * p.lambda.head<2>() + cbar_;
    return v.x() * p.cs + v.y() * p.sn <= 0;
  }

  // Line of sight from lambda^{v=0} (corrected sign, see the header comment).
  bool in_sight(const ConicPoint& p) const {
    if (coulomb_) return true;
    const Vec3 grad_h2(p.lambda.x(), p.lambda.y(), -mu_ * mu_ * p.lambda.z());
    return grad_h2.dot(p.lambda - lambda_v0_) <= 0;
  }

 private:
  const Mat3& G_;
  const Vec3& c_;
  Scalar mu_;
  const Vec3& lambda_v0_;
  bool coulomb_;
  Eigen::Matrix<Scalar, 3, 2> Mbar_;
  Vec3 cbar_;
};

// Coulomb: Newton steps on f from the direction of a hint (a tangential impulse near the
// answer: the sweep's present lambda_T of the contact, which from the second sweep on is close to
// the last sweep's answer), without a bracket. Each step is bounded (|d theta| <= 0.5) and the
// point must stay on the valid arc; the stop is the bracketed search's (the Newton step moves the
// impulse by less than the tolerance), and the point must lie on the dissipative side (a zero of
// f with v_T along lambda_T is not Coulomb's). True with `out` set when it finds the answer so;
// otherwise Algorithm 1 runs as without a hint.
bool hinted_slip(const SlipSearch& search, Scalar hx, Scalar hy, const BisectionSettings& s, Index& steps,
                 Vec3& out) {
  const Scalar hn = std::sqrt(hx * hx + hy * hy);
  if (!(hn > 0) || !std::isfinite(hn)) return false;
  const Scalar ch = hx / hn, sh = hy / hn;
  // the point at angle delta from the hint's direction (cos and sin by the angle-sum formulas)
  const auto at = [&](Scalar delta) {
    Scalar cd, sd;
    sincos(delta, sd, cd);
    return search.at(delta, ch * cd - sh * sd, sh * cd + ch * sd);
  };
  ConicPoint x = search.at(0, ch, sh);
  constexpr int kSteps = 6;
  for (int k = 0; k < kSteps && x.valid; ++k) {
    Scalar fx, dl;
    const Scalar df = search.coulomb_slope(x, fx, dl);
    ++steps;
    if (fx == 0) {
      if (!search.dissipative(x)) return false;
      out = x.lambda;
      return true;
    }
    const Scalar step = -fx / df;
    if (!(std::abs(step) <= 0.5)) return false;  // (also a non-finite step)
    const ConicPoint y = at(x.theta + step);
    if (std::abs(step) * dl < s.bisection_tolerance * x.lambda.norm()) {
      const ConicPoint& z = y.valid ? y : x;
      if (!search.dissipative(z)) return false;
      out = z.lambda;
      return true;
    }
    x = y;
  }
  return false;
}

// Algorithm 1. Returns the impulse; `steps` counts stepping + bisection evaluations. `hint`
// (may be null): a tangential impulse near the answer, for hinted_slip.
Vec3 bisection_slip(const Mat3& G, const Vec3& c, Scalar mu, const Vec3& lambda_v0,
                    const BisectionSettings& s, Index& steps, const Scalar* hint = nullptr) {
  const SlipSearch search(G, c, mu, lambda_v0, s.slip_model);
  // (on an ellipse, G_zz > mu |G_zT|, the section has one dissipative zero, the one Algorithm 1
  // finds; a hyperbolic section may have several, and a hint could pick another)
  if (hint != nullptr && s.slip_newton && s.slip_model == SlipModel::Coulomb &&
      G(2, 2) > mu * std::sqrt(G(2, 0) * G(2, 0) + G(2, 1) * G(2, 1))) {
    Vec3 out;
    if (hinted_slip(search, hint[0], hint[1], s, steps, out)) return out;
  }
  // lines 2-4: initial guess E_C(lambda^{v=0}) through theta^0 = atan2 of lambda^{v=0}_T
  Scalar theta = std::atan2(lambda_v0.y(), lambda_v0.x());
  ConicPoint p = search.at(theta);
  if (!p.valid) {
    // Cannot happen in exact arithmetic (the ray from lambda^{T=0} to lambda^{v=0} leaves C);
    // fall back to the frictionless point lambda^{T=0} on the zero-velocity plane.
    return Vec3(0, 0, -c.z() / G(2, 2));
  }
  const Scalar D0 = search.gradient(p);  // line 5
  if (D0 == 0) return p.lambda;
  const Scalar dir = D0 > 0 ? -1 : 1;  // line 6: alpha = -beta1 sgn(D0), as dir * step
  Scalar step = s.beta1;
  // Distance from theta to the nearest known failed angle in the stepping direction. A full turn
  // is never useful; growing steps must not jump over a failure (see the header comment).
  Scalar wall = 2 * M_PI;
  ConicPoint prev = p;
  // lines 7-23: incremental stepping until the sign of the gradient changes
  bool bracketed = false;
  for (Index k = 0; k < s.max_bisection_steps; ++k) {
    ++steps;
    prev = p;
    if (step >= wall) step = s.beta2 * wall;
    const ConicPoint next = search.at(p.theta + dir * step);
    if (!next.valid || !search.in_sight(next)) {
      wall = step;      // the failed angle becomes the wall
      step *= s.beta2;  // line 14: back to the old parameter, smaller step
      if (wall <= 4 * std::numeric_limits<Scalar>::epsilon() * std::max<Scalar>(1, std::abs(p.theta)))
        break;
      continue;
    }
    p = next;
    wall -= step;
    if (search.gradient(p) * D0 > 0) {
      step *= s.beta3;  // line 18: still on the same side of the minimum
    } else {
      bracketed = true;
      break;
    }
  }
  if (!bracketed) return p.lambda;  // step shrank to nothing: the minimum is at p
  // lines 24-33: shrink the bracket [prev (gradient sign of D0), p (opposite sign)] on theta,
  // by bisection or by the Illinois variant of regula falsi (see the header comment)
  Scalar g_prev = search.gradient(prev), g_p = search.gradient(p);
  // the Illinois point's place in the bracket (regula falsi on the gradient values held, kept to
  // [1 %, 99 %] of the bracket); the midpoint where they cannot place it
  const auto falsi = [&] {
    if (!(g_prev != g_p && std::isfinite(g_prev) && std::isfinite(g_p))) return Scalar(0.5);
    return std::clamp(g_prev / (g_prev - g_p), Scalar(0.01), Scalar(0.99));
  };
  if (s.slip_newton && s.slip_model == SlipModel::Coulomb) {
    // Newton steps on f(theta) from the end of the bracket with the smaller |f|, each kept in
    // the bracket (the Illinois point where a step would leave it); the bracket shrinks with
    // every point as below. When the Newton step from a point moves the impulse by less than
    // the tolerance, its end is the answer: the convergence is quadratic near a simple zero, so
    // that point is well inside the tolerance (it may lie just outside the bracket, whose end
    // the point is, by round-off). A point off the valid arc (round-off at its ends) hands the
    // bracket to the loop below.
    ConicPoint x = std::abs(g_prev) < std::abs(g_p) ? prev : p;
    for (Index k = 0; k < s.max_bisection_steps; ++k) {
      Scalar fx, dl;
      const Scalar df = search.coulomb_slope(x, fx, dl);
      if (fx == 0) return x.lambda;
      Scalar th = x.theta - fx / df;
      ++steps;
      if (std::abs(th - x.theta) * dl < s.bisection_tolerance * x.lambda.norm()) {
        const ConicPoint y = search.at(th);
        return y.valid ? y.lambda : x.lambda;
      }
      const Scalar lo = std::min(prev.theta, p.theta), hi = std::max(prev.theta, p.theta);
      if (!(th > lo && th < hi)) th = prev.theta + falsi() * (p.theta - prev.theta);
      const ConicPoint y = search.at(th);
      if (!y.valid) break;
      const Scalar gy = search.gradient(y);
      if (gy * D0 > 0) prev = y, g_prev = gy; else p = y, g_p = gy;
      x = y;
      if (gy == 0) return y.lambda;
    }
  }
  int last_kept = 0;  // Illinois: +1 when prev was kept by the last step, -1 when p was
  for (Index k = 0; k < s.max_bisection_steps; ++k) {
    if ((prev.lambda - p.lambda).norm() < s.bisection_tolerance * p.lambda.norm()) break;
    // the angle interval cannot shrink below the resolution of double (huge impulses)
    if (std::abs(p.theta - prev.theta) <= 4 * std::numeric_limits<Scalar>::epsilon() *
                                              std::max<Scalar>(1, std::abs(p.theta))) break;
    ++steps;
    const Scalar t = s.illinois ? falsi() : Scalar(0.5);
    ConicPoint mid = search.at(prev.theta + t * (p.theta - prev.theta));
    if (!mid.valid && t != 0.5) mid = search.at(0.5 * (p.theta + prev.theta));
    if (!mid.valid) break;  // only by round-off at the ends of the valid arc
    const Scalar g_mid = search.gradient(mid);
    if (g_mid == 0) return mid.lambda;
    if (g_mid * D0 > 0) {
      prev = mid;
      g_prev = g_mid;
      if (last_kept == -1) g_p *= 0.5;  // p kept twice in a row: halve its weight
      last_kept = -1;
    } else {
      p = mid;
      g_p = g_mid;
      if (last_kept == +1) g_prev *= 0.5;
      last_kept = +1;
    }
  }
  // regula falsi on the final bracket: the zero of the gradient interpolated linearly in theta
  // (fresh values: Illinois has halved the stored ones)
  const Scalar g0 = search.gradient(prev), g1 = search.gradient(p);
  if (g0 != g1 && std::isfinite(g0) && std::isfinite(g1)) {
    const Scalar t = g0 / (g0 - g1);
    if (t > 0 && t < 1) {
      const ConicPoint rf = search.at(prev.theta + t * (p.theta - prev.theta));
      if (rf.valid) return rf.lambda;
    }
  }
  return p.lambda;
}

// The full single-contact solution of sec. III-A on a prepared block.
// (G, M and locked by reference: the sweep passes its stored blocks without copying them)
SingleContactSolution solve_prepared(const Mat3& G, const Mat3& M, bool locked, const Vec3& c, Scalar mu,
                                     const BisectionSettings& s, const Scalar* hint = nullptr) {
  SingleContactSolution sol;
  if (c.z() >= 0) {  // opening: lambda = 0 satisfies every condition
    sol.contact_case = ContactCase::Opening;
    return sol;
  }
  if (locked) {
    sol.contact_case = ContactCase::Locked;
    return sol;
  }
  if (!(mu > 0)) {  // frictionless: only the normal row, v_z = 0
    sol.lambda = Vec3(0, 0, -c.z() / G(2, 2));
    sol.contact_case = ContactCase::Slipping;
    return sol;
  }
  const Vec3 lambda_v0 = -M * c;  // zero-velocity impulse lambda^{v=0} = -M c
  if (mu * lambda_v0.z() >= std::sqrt(lambda_v0.x() * lambda_v0.x() + lambda_v0.y() * lambda_v0.y())) {
    sol.lambda = lambda_v0;
    sol.contact_case = ContactCase::Sticking;
    return sol;
  }
  sol.contact_case = ContactCase::Slipping;
  sol.lambda = bisection_slip(G, c, mu, lambda_v0, s, sol.steps, hint);
  if (s.slip_model == SlipModel::Coulomb) {
    // Guard: on a hyperbolic section (G_zz < mu |G_zT|, strongly coupled blocks) the Coulomb
    // search has no line-of-sight walls and can run towards an asymptote (r -> inf) or stop on a
    // non-dissipative zero. Such a contact takes the paper's energy minimum instead (bounded,
    // always found), which is the Coulomb solution whenever the block is decoupled.
    const Vec3 v = G * sol.lambda + c;
    const bool dissipative = v.head<2>().dot(sol.lambda.head<2>()) <= 1e-9 * v.norm() * sol.lambda.norm();
    if (!sol.lambda.allFinite() || !dissipative) {
      BisectionSettings energy = s;
      energy.slip_model = SlipModel::MinimumEnergy;
      sol.lambda = bisection_slip(G, c, mu, lambda_v0, energy, sol.steps);
    }
  }
  return sol;
}

}  // namespace

SingleContactSolution solve_single_contact(const Mat3& G, const Vec3& c, Scalar mu,
                                           const BisectionSettings& settings) {
  const PreparedContact pc = prepare_contact(G, settings.regularization);
  return solve_prepared(pc.G, pc.M, pc.locked, c, mu, settings);
}

SingleContactSolution solve_single_contact_inverted(const Mat3& G, const Mat3& M, const Vec3& c, Scalar mu,
                                                    const BisectionSettings& settings, const Scalar* hint) {
  // (a kernel as the solver's sweep: Algorithm 1 in the CPU's instruction set, the same bits)
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY { return solve_prepared(G, M, false, c, mu, settings, hint); };
  return detail::run_kernel(kernel_body);
}

void BisectionSolver::reserve_impl(Index max_rows) {
  const Index max_contacts = max_rows / 3;
  G_ii_.resize(max_contacts);
  M_ii_.resize(max_contacts);
  locked_.resize(max_contacts);
  G_zz_.resize(max_contacts);
  qp_rows_.resize(static_cast<std::size_t>(max_rows));
  qp_.reserve(max_rows);
  if (qp_start_lambda_.size() < max_rows) qp_start_lambda_.resize(max_rows);
  const Index retry = std::min(max_rows, settings_.active_set.retry_rows);
  if (start_lambda_.size() < retry) start_lambda_.resize(retry);
  if (stage_keep_lambda_.size() < retry) stage_keep_lambda_.resize(retry);
  if (c_proj_.size() < max_rows) c_proj_.resize(max_rows);
  proj_mask_.reserve(static_cast<std::size_t>(max_rows));
  anderson_.reserve(max_rows, settings_.anderson_memory);
  if (newton_start_lambda_.size() < max_rows) newton_start_lambda_.resize(max_rows);
  // (the Newton stage's buffers too, for islands it takes: a robot's rare unconverged step then
  // allocates nothing; a factored island's dense G grows on first use)
  if (settings_.newton_start > 0 && max_rows <= settings_.newton.max_rows) newton_.reserve(max_rows);
}

// The frictionless problem as a QP (bound_qp.hpp): the normal and limit rows are its variables,
// the tangent impulses are 0 (a frictionless contact's cone is a ray). Its products with G use
// the rest of the sweep budget and count as sweeps; returns the sweep count after them.
// Frictionless islands up to this many variables are solved exactly (bound_qp.hpp): 2 x 256^2
// doubles of workspace at most, grown on first use.
constexpr Index kExactQpRows = 256;

Index BisectionSolver::solve_frictionless_qp(const ContactProblem& problem, VecXref lambda, Index it) {
  const BisectionSettings& s = active();
  const Index nc = problem.nc, n = problem.size();
  Scalar min_diag = 1;  // min(1, G_rr): the sweep error adds |lambda* - lambda| = |v_r| / G_rr per row
  for (Index r = 0; r < n; ++r) {
    const bool var = r >= 3 * nc || r % 3 == 2;
    qp_rows_[static_cast<std::size_t>(r)] = var ? 1 : 0;
    if (!var) lambda[r] = 0;
    if (var && problem.diagonal(r) > 0) min_diag = std::min(min_diag, problem.diagonal(r));
  }
  // Up to kExactQpRows variables: the exact active-set method, each change of its free set
  // counted as a sweep (an O(|P|^2) factor update, a dense sweep's order of work). Its answer is
  // the KKT point; the next sweep measures it like any other.
  Index budget = s.max_iterations - it - 1;
  Index m = 0;
  for (Index r = 0; r < n; ++r) m += qp_rows_[static_cast<std::size_t>(r)];
  if (m <= kExactQpRows && budget > 0) {
    const BoundQpResult exact =
        solve_bound_qp_exact(problem, qp_rows_.data(), lambda, s.tolerance * min_diag / 2, budget, exact_);
    if (exact.converged) {
      product_.reset(problem, lambda);
      product_.bind_normal_rows();
      anderson_.begin(problem, s.anderson_memory, true);
      return std::min(it + std::max<Index>(1, exact.changes), s.max_iterations - 1);
    }
    budget = std::max<Index>(0, budget - exact.changes);
  }
  // MPRGP on the rest of the budget but one sweep; its best point, or the start if it made no progress
  qp_start_lambda_.head(n) = lambda;
  const BoundQpResult qp = solve_bound_qp(problem, qp_rows_.data(), lambda, s.tolerance * min_diag / 2, budget,
                                          product_, qp_);
  if (!(qp.projected_gradient < qp.start_projected_gradient)) lambda = qp_start_lambda_.head(n);  // no progress
  product_.reset(problem, lambda);
  product_.bind_normal_rows();
  anderson_.begin(problem, s.anderson_memory, true);  // (its history belongs to the sweeps before)
  return std::min(it + qp.products, s.max_iterations - 1);  // (at least one sweep measures it)
}

Index BisectionSolver::solve_active_set(const ContactProblem& problem, VecXref lambda, Index it, bool& converged,
                                        Index max_factorizations) {
  const BisectionSettings& s = active();
  ActiveSetSettings as = s.active_set;
  if (max_factorizations > 0) {  // (a short try, without the second one: the early stage on a crawl)
    as.max_factorizations = std::min(as.max_factorizations, max_factorizations);
    as.give_up_factorizations = std::min(as.give_up_factorizations, max_factorizations);
    as.retry_rows = 0;
  }
  const Index n = problem.size();
  Scalar min_diag = 1;  // min(1, G_rr): the sweep error adds |lambda* - lambda| ~ |v_r| / G_rr per row
  for (Index r = 0; r < n; ++r)
    if (problem.diagonal(r) > 0) min_diag = std::min(min_diag, problem.diagonal(r));
  // lambda: the stage's iterate of least residual, the sweeps' own if none beat theirs
  const Scalar tolerance = s.tolerance * min_diag / 2;
  const ActiveSetReport r = active_set_.solve(problem, lambda, tolerance, as);
  converged = r.converged;
  Index factorizations = std::max<Index>(1, r.factorizations);
  // Failed on a small island: once more from the solve's start (ActiveSetSettings::retry_rows),
  // whose classification is the previous step's answer where the warm start carried it. The
  // stage starts from the sign pattern of its start (active_set.hpp); after an impact the sweeps'
  // first iterates open and close contacts the answer keeps, and the classification the stage
  // derives from them can cycle where the previous step's converges.
  if (!converged && n <= as.retry_rows) {
    if (stage_keep_lambda_.size() < n) stage_keep_lambda_.resize(n);
    stage_keep_lambda_.head(n) = lambda;
    lambda = start_lambda_.head(n);
    const ActiveSetReport again = active_set_.solve(problem, lambda, tolerance, as);
    factorizations += std::max<Index>(1, again.factorizations);
    converged = again.converged;
    if (!converged) lambda = stage_keep_lambda_.head(n);
  }
  product_.reset(problem, lambda);
  anderson_.begin(problem, s.anderson_memory);
  return std::min(it + factorizations, s.max_iterations - 1);
}

// Range projection of the right side (BisectionSettings::range_projections). Each touching row
// r of the island asks for v_r = (G lambda + c)_r >= 0 with c_r = J_r v_free - b_r, the target
// b_r = -gap_r / dt closing its gap (stepper/targets.cpp). Where the rows A that carry the load
// close loops (a plank on two boxes, four corners on a face, a box wedged in a bin) the rows of
// J_A are dependent: range(G_AA) = range(J_A M^-1 J_A^T) = range(J_A) is a proper subspace, and
// the part of c_A outside it is a combination of the rows' velocities that no impulse changes.
// J_A v_free is in that range; the targets, from gaps measured contact by contact, are not:
// nanometres apart at 1 ms leave 5e-8..1.6e-6 m/s outside it (bin50, jenga54), the size of the tolerance, and the
// sweeps level off there (SweepMonitor's plateau) while the active-set stage's (G_FF + eps I)^-1
// turns it into internal impulses of order |c_N| / eps. On a plateau the sweeps' impulses tell
// which rows carry the load; their c_A is replaced by its Euclidean projection onto range(G_AA),
// G_AA G_AA^+ c_A (ActiveSetStage::project_range), which moves no target by more than that
// inconsistency, leaves consistent layouts (no loop, or gaps that agree) unchanged and gives the
// sweeps a problem whose resting rows can all meet their targets. The first projection takes
// the normal and limit rows with an impulse; a later one (the sweeps stalled again) adds the
// tangent rows of the contacts inside their friction cone, whose target 0 together with the
// normal targets can be inconsistent too (a box pressed against a wall it sticks to).
bool BisectionSolver::project_right_side(const ContactProblem& problem, const VecXcref& lambda, Index round) {
  const BisectionSettings& s = active();
  const Index nc = problem.nc, n = problem.size();
  if (n > s.range_projection_rows) return false;  // (its cost bound: one factorization)
  proj_mask_.assign(static_cast<std::size_t>(n), 0);
  Index m = 0;
  for (Index i = 0; i < nc; ++i) {
    const Scalar lz = lambda[3 * i + 2];
    if (!(lz > 0)) continue;
    proj_mask_[static_cast<std::size_t>(3 * i + 2)] = 1;
    ++m;
    const Scalar lt = std::sqrt(lambda[3 * i] * lambda[3 * i] + lambda[3 * i + 1] * lambda[3 * i + 1]);
    if (round > 0 && problem.mu[i] > 0 && lt < (1 - 1e-6) * problem.mu[i] * lz) {
      proj_mask_[static_cast<std::size_t>(3 * i)] = proj_mask_[static_cast<std::size_t>(3 * i + 1)] = 1;
      m += 2;
    }
  }
  for (Index j = 3 * nc; j < problem.first_box_row(); ++j)
    if (lambda[j] > 0) proj_mask_[static_cast<std::size_t>(j)] = 1, ++m;
  if (m < 2) return false;  // (one row: its range is everything or nothing)
  if (c_proj_.size() < n) c_proj_.resize(n);
  if (!active_set_.project_range(problem, proj_mask_.data(), s.active_set, c_proj_.head(n))) return false;
  return (c_proj_.head(n) - problem.c).cwiseAbs().maxCoeff() > 0;
}

// The sweeps' error of lambda without changing it: for every contact and row, the terms the
// sweep adds before its update (solve_with_active), all read at the same impulses.
Scalar BisectionSolver::sweep_error(const ContactProblem& problem, const VecXcref& lambda) {
  const BisectionSettings& s = active();
  const Index nc = problem.nc, n = problem.size();
  measure_.reset(problem, lambda);
  Scalar error = 0;
  for (Index i = 0; i < nc; ++i) {
    const Vec3 lambda_i = lambda.segment<3>(3 * i);
    if (!(problem.mu[i] > 0) && lambda_i.x() == 0 && lambda_i.y() == 0) {  // (the sweep's one-row contact)
      const Index r = 3 * i + 2;
      const Scalar lambda_z = lambda[r];
      const Scalar v_z = problem.c[r] + measure_.row(r, lambda);
      const Scalar c_z = v_z - G_zz_[i] * lambda_z;
      const bool open = c_z >= 0 || locked_[i] != 0;
      const Scalar lambda_star = open ? Scalar(0) : -c_z / G_ii_[i](2, 2);
      error = std::max(error, std::max<Scalar>(0, -v_z) + std::max<Scalar>(0, -lambda_z) +
                                  std::min(std::max<Scalar>(lambda_z, 0), std::max<Scalar>(v_z, 0)) +
                                  std::abs(lambda_star - lambda_z));
      continue;
    }
    const Vec3 v_i = problem.c.segment<3>(3 * i) + measure_.contact(i, lambda);
    const Vec3 c_i = v_i - problem.contact_block(i) * lambda_i;
    const SingleContactSolution sol = solve_prepared(G_ii_[i], M_ii_[i], locked_[i] != 0, c_i, problem.mu[i], s);
    error = std::max(error, std::max<Scalar>(0, -v_i.z()) + std::max<Scalar>(0, -lambda_i.z()) +
                                std::min(std::max<Scalar>(lambda_i.z(), 0), std::max<Scalar>(v_i.z(), 0)) +
                                cone_violation(lambda_i, problem.mu[i]) + (sol.lambda - lambda_i).norm());
  }
  for (Index j = 3 * nc; j < problem.first_box_row(); ++j) {
    const Scalar v_j = measure_.row(j, lambda) + problem.c[j];
    const Scalar G_jj = problem.diagonal(j);
    const Scalar lambda_star = G_jj > 0 ? std::max<Scalar>(0, lambda[j] - v_j / G_jj) : 0;
    error = std::max(error, std::max<Scalar>(0, -v_j) + std::max<Scalar>(0, -lambda[j]) +
                                std::min(std::max<Scalar>(lambda[j], 0), std::max<Scalar>(v_j, 0)) +
                                std::abs(lambda_star - lambda[j]));
  }
  for (Index j = problem.first_box_row(); j < n; ++j) {
    const Scalar v_j = measure_.row(j, lambda) + problem.c[j];
    const Scalar G_jj = problem.diagonal(j), b = problem.box_bound(j);
    const Scalar lambda_star = G_jj > 0 ? std::clamp(lambda[j] - v_j / G_jj, -b, b) : Scalar(0);
    error = std::max(error, std::max<Scalar>(0, std::abs(lambda[j]) - b) + std::abs(lambda_star - lambda[j]));
  }
  return error;
}

bool BisectionSolver::solve_newton(const ContactProblem& problem, VecXref lambda, Index& it, SolverResult& result) {
  const BisectionSettings& s = active();
  const Index nc = problem.nc, n = problem.size();
  if (newton_start_lambda_.size() < n) newton_start_lambda_.resize(n);
  newton_start_lambda_.head(n) = lambda;
  const SemismoothNewtonReport r = newton_.solve(problem, lambda, s.newton.target * s.tolerance, s.newton);
  // (its work counts as sweeps, one more for the measure below)
  it = std::min(it + r.factorizations + 1, s.max_iterations);
  // (its answer is measured when it reached the tolerance in its own measure, which is about a
  // twentieth of the sweeps' on these islands: an answer short of its target may meet theirs)
  if (r.converged || r.residual < s.tolerance) {
    // a frictionless contact's cone is a ray: its tangent impulses are 0 (the stage's are -F's
    // step from them, 0 up to its tolerance)
    for (Index i = 0; i < nc; ++i)
      if (!(problem.mu[i] > 0)) lambda[3 * i] = lambda[3 * i + 1] = 0;
    const Scalar error = sweep_error(problem, lambda);
    if (error < s.tolerance) {
      result.status = SolverStatus::Converged;
      result.iterations = it;
      result.residual = error;
      result.stalled = false;
      result.method = SolverMethod::SemismoothNewton;
      return true;
    }
  }
  lambda = newton_start_lambda_.head(n);
  return false;
}

SolverResult BisectionSolver::solve_with_active(const ContactProblem& problem, VecXref lambda) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  const BisectionSettings& s = active();
  // the problem solved: `problem`, or the same G with the right side projected (below)
  std::optional<ContactProblem> projected;
  const ContactProblem* pb = &problem;
  Index projections = 0;
  const Index nc = problem.nc, n = problem.size();

  // The diagonal blocks do not change during the solve: regularize and invert them once. A
  // frictionless contact reads G_zz and `locked` only (solve_prepared and the sweep's one-row
  // path): its block is prepared as the 1x1 block G_zz (locked when G_zz is not positive, the
  // rule below for a block whose largest eigenvalue is G_zz), which a one-row contact's block,
  // zero but for G_zz, needs (contact/delassus.hpp); for a three-row block the same G_zz and
  // `locked` as the 3x3 rule unless the block is ill-conditioned.
  Index frictionless_contacts = 0;
  for (Index i = 0; i < nc; ++i) {
    if (!(problem.mu[i] > 0)) {
      ++frictionless_contacts;
      const Scalar g = problem.diagonal(3 * i + 2);
      G_zz_[i] = g;
      G_ii_[i] = Mat3::Zero();
      G_ii_[i](2, 2) = g;
      locked_[i] = g > 0 ? 0 : 1;
      continue;
    }
    const Mat3 block = problem.contact_block(i);
    const PreparedContact pc = prepare_contact(block, s.regularization);
    G_zz_[i] = block(2, 2);
    G_ii_[i] = pc.G;
    M_ii_[i] = pc.M;
    locked_[i] = pc.locked ? 1 : 0;
  }

  // Which contacts the sweep reads as their normal row alone (below), decided once per solve:
  // none (every mu > 0: no per-contact read of mu), all (every mu = 0, no box rows: the problem is a
  // QP in the normal and limit rows, its tangent impulses zero throughout), or those that are
  // frictionless with zero tangent impulses (tested per contact). (frictionless_contacts: above)
  const bool all_one_row = frictionless_contacts == nc && problem.nb == 0;
  if (all_one_row)  // (a frictionless contact's cone is a ray: the projection of its tangent impulses)
    for (Index i = 0; i < nc; ++i) lambda[3 * i] = lambda[3 * i + 1] = 0;

  // a frictionless problem is a convex QP with bounds: MPRGP after qp_start sweeps (below)
  const bool frictionless = s.qp_start > 0 && all_one_row;
  bool qp_done = false;

  const bool frictional = !frictionless && s.active_set_start > 0;
  bool active_set_done = false;
  if (frictional && n <= s.active_set.retry_rows && n <= s.active_set.max_rows) {  // (its second try's start)
    if (start_lambda_.size() < n) start_lambda_.resize(n);  // (reserved up to retry_rows: reserve_impl)
    start_lambda_.head(n) = lambda;
  }
  SolverMethod method = SolverMethod::Iteration;
  bool newton_done = s.newton_start <= 0;

  SolverResult result;
  SweepMonitor monitor(s.tolerance, s.stall_window);
  // The least-squares stage's answer solves its moved right side (active_set.hpp): the sweeps go
  // on from it on that problem, as after a range projection. A move larger than max_shift is
  // not a disagreement of gaps (nanometres a step) but a wrong classification: the answer is
  // then measured against c as it is.
  const Scalar max_shift = 100 * s.tolerance;
  auto adopt_stage_right_side = [&]() {
    if (!s.active_set.least_squares || active_set_.right_side().size() != n) return;
    const Scalar moved = (active_set_.right_side() - problem.c).cwiseAbs().maxCoeff();
    if (!(moved > 0) || !(moved <= max_shift)) return;
    c_proj_.head(n) = active_set_.right_side();
    projected.emplace(problem.with_c(c_proj_.head(n)));
    pb = &*projected;
    product_.reset(*pb, lambda);
    anderson_.begin(*pb, s.anderson_memory, all_one_row);
  };
  Scalar alpha = s.alpha;
  anderson_.begin(problem, s.anderson_memory, all_one_row);
  product_.reset(problem, lambda);

  // A frictionless contact whose tangent impulses are 0 reads and updates its normal row only
  // (they are and stay 0), a third of the work. Same closed form as solve_prepared:
  // lambda_z* = max(0, -c_z / G_zz) with c_z = v_z - G_zz lambda_z. Returns its error.
  // (ALL: every contact is one, so the row's product may skip every tangent column)
  auto one_row_contact = [&](Index i, Scalar alpha_k, auto all) IMPULSE_KERNEL_BODY {
    const Index r = 3 * i + 2;
    const Scalar lambda_z = lambda[r];
    Scalar v_z;
    if constexpr (decltype(all)::value) {
      v_z = pb->c[r] + product_.normal_row(i, lambda);
    } else {
      v_z = pb->c[r] + product_.row(r, lambda);
    }
    const Scalar c_z = v_z - G_zz_[i] * lambda_z;
    const bool open = c_z >= 0 || locked_[i] != 0;
    const Scalar lambda_star = open ? Scalar(0) : -c_z / G_ii_[i](2, 2);
    anderson_.track(i, static_cast<unsigned char>(c_z >= 0 ? ContactCase::Opening
                                                   : locked_[i] != 0 ? ContactCase::Locked
                                                                     : ContactCase::Slipping));
    const Scalar lambda_new = alpha_k * lambda_star + (1 - alpha_k) * lambda_z;
    lambda[r] = lambda_new;
    product_.add_normal(i, lambda_new - lambda_z);
    return std::max<Scalar>(0, -v_z) + std::max<Scalar>(0, -lambda_z) +
           std::min(std::max<Scalar>(lambda_z, 0), std::max<Scalar>(v_z, 0)) + std::abs(lambda_star - lambda_z);
  };
  // (out of line: the loop of a problem with friction keeps its frictional body alone)
  auto one_row_mixed = [&](Index i, Scalar alpha_k) IMPULSE_BISECTION_OUT_OF_LINE {
    return one_row_contact(i, alpha_k, std::false_type{});
  };
  bool mixing = s.anderson_memory > 0;
  Scalar first_error = 0;  // the first sweep's error
  Index last_sweep = s.max_iterations;
  for (Index it = 1; it <= last_sweep; ++it) {
    // mixing from sweep anderson_start + 1 on (never after the last sweep: lambda stays a sweep's)
    const bool accelerate = mixing && it > s.anderson_start;
    if (it == s.anderson_start) anderson_.prime();  // (this sweep's states are the first compared)
    if (accelerate) anderson_.before_sweep(lambda);
    // (from the second sweep: a solve that one sweep ends does not gather the pieces)
    if (all_one_row && it == 2) product_.bind_normal_rows();
    Scalar error = 0;
    // Algorithm 2, lines 2-11: one nonlinear block Gauss-Seidel sweep over the contacts. With a
    // factored G (large islands) v_i reads only the velocity change of contact i's bodies.
    if (all_one_row) {
      for (Index i = 0; i < nc; ++i) error = std::max(error, one_row_contact(i, alpha, std::true_type{}));
    } else {
      for (Index i = 0; i < nc; ++i) {
        const Vec3 lambda_i = lambda.segment<3>(3 * i);
        if (frictionless_contacts > 0 && !(problem.mu[i] > 0) && lambda_i.x() == 0 && lambda_i.y() == 0) {
          error = std::max(error, one_row_mixed(i, alpha));
          continue;
        }
        // eq. 4-5: v_i = G_i: lambda + c_i, and c~_i = v_i - G_ii lambda_i holds the other contacts
        const Vec3 v_i = pb->c.segment<3>(3 * i) + product_.contact(i, lambda);
        const Vec3 c_i = v_i - problem.contact_block(i) * lambda_i;
        // (the hint of the slip search: lambda_i's tangential part)
        const SingleContactSolution sol =
            solve_prepared(G_ii_[i], M_ii_[i], locked_[i] != 0, c_i, problem.mu[i], s, lambda_i.data());
        const Vec3& lambda_star = sol.lambda;
        anderson_.track(i, static_cast<unsigned char>(sol.contact_case));
        error = std::max(error, std::max<Scalar>(0, -v_i.z()) + std::max<Scalar>(0, -lambda_i.z()) +
                                    std::min(std::max<Scalar>(lambda_i.z(), 0), std::max<Scalar>(v_i.z(), 0)) +
                                    cone_violation(lambda_i, problem.mu[i]) + (lambda_star - lambda_i).norm());
        // lines 4, 6, 9: lambda_i <- alpha lambda_i^* + (1 - alpha) lambda_i
        const Vec3 lambda_new = alpha * lambda_star + (1 - alpha) * lambda_i;
        lambda.segment<3>(3 * i) = lambda_new;
        product_.add_contact(i, lambda_new - lambda_i);
      }
    }
    // One-row unilateral (limit) constraints: exact 1-D projection in the same sweep.
    for (Index j = 3 * nc; j < problem.first_box_row(); ++j) {
      const Scalar v_j = product_.row(j, lambda) + pb->c[j];
      const Scalar G_jj = problem.diagonal(j);
      const Scalar lambda_star = G_jj > 0 ? std::max<Scalar>(0, lambda[j] - v_j / G_jj) : 0;
      anderson_.track(j - 2 * nc, lambda_star > 0);
      error = std::max(error, std::max<Scalar>(0, -v_j) + std::max<Scalar>(0, -lambda[j]) +
                                  std::min(std::max<Scalar>(lambda[j], 0), std::max<Scalar>(v_j, 0)) +
                                  std::abs(lambda_star - lambda[j]));
      const Scalar lambda_new = alpha * lambda_star + (1 - alpha) * lambda[j];
      product_.add_row(j, lambda_new - lambda[j]);
      lambda[j] = lambda_new;
    }
    // Box rows (joint friction): exact 1-D stick/slip clamp in the same sweep.
    for (Index j = problem.first_box_row(); j < n; ++j) {
      const Scalar v_j = product_.row(j, lambda) + pb->c[j];
      const Scalar G_jj = problem.diagonal(j), b = problem.box_bound(j);
      const Scalar lambda_star = G_jj > 0 ? std::clamp(lambda[j] - v_j / G_jj, -b, b) : Scalar(0);
      anderson_.track(j - 2 * nc, lambda_star <= -b ? 0 : lambda_star >= b ? 2 : 1);
      error = std::max(error, std::max<Scalar>(0, std::abs(lambda[j]) - b) + std::abs(lambda_star - lambda[j]));
      const Scalar lambda_new = alpha * lambda_star + (1 - alpha) * lambda[j];
      product_.add_row(j, lambda_new - lambda[j]);
      lambda[j] = lambda_new;
    }
    alpha = s.alpha_min + s.gamma * (alpha - s.alpha_min);  // line 12
    const bool stop = monitor.stop(result, it, error);
    if (it == 1) first_error = error;  // (the crawl test of the active-set stage, below)
    // Range projection on a plateau (above): the sweeps go on, from their impulses, on the
    // problem with the projected right side (and its own plateau watch)
    // (the least-squares stage, while it can still run, takes the plateau itself: it moves c as
    // the projection does, in its own factorization, and solves the problem as given)
    const bool stage_next = s.active_set.least_squares && frictional && !active_set_done && n <= s.active_set.max_rows;
    if (stop && result.stalled && !stage_next && projections < s.range_projections && it < s.max_iterations &&
        project_right_side(problem, lambda, projections)) {
      ++projections;
      projected.emplace(problem.with_c(c_proj_.head(n)));
      pb = &*projected;
      result.stalled = false;
      monitor = SweepMonitor(s.tolerance, s.stall_window);
      product_.reset(*pb, lambda);
      if (all_one_row && it >= 2) product_.bind_normal_rows();
      anderson_.begin(*pb, s.anderson_memory, all_one_row);
      // The active-set stage on the projected problem at once, after the first projection (if
      // it has not run): what makes it fail on the original problem is the right side's
      // inconsistency, which (G_FF + eps I)^-1 turns into internal impulses of order 1 / eps
      // (docs/benchmarks.md, "Why the active-set stage alone does not finish them"). Heavy on
      // light stacks (masses 1 to 1 000 kg) converge in it where the sweeps that follow a
      // projection crawl until active_set_start.
      if (frictional && !active_set_done && n <= s.active_set.max_rows) {
        active_set_done = true;
        bool converged = false;
        it = solve_active_set(*pb, lambda, it, converged);
        if (converged) method = SolverMethod::ActiveSet;
      }
      continue;
    }
    // The exact QP of a frictionless problem: at sweep qp_start, or earlier if the sweeps stop on
    // a plateau first. Anderson mixing (after anderson_start) can flatten the error just above
    // the tolerance for the stall window before qp_start: 216-sphere pile, 2 s, 42 islands
    // stopped that way at 1.3e-6..4.5e-6 instead of being solved by the QP.
    const bool plateau = stop && result.stalled && it < s.qp_start;
    if (frictionless && !qp_done && it < s.max_iterations && (it == s.qp_start || plateau)) {
      result.stalled = false;
      qp_done = true;
      method = SolverMethod::BoundQp;
      it = solve_frictionless_qp(*pb, lambda, it);
      continue;  // (the sweeps go on from the QP's solution; the next one measures its error)
    }
    // The active-set stage of a problem with friction: at sweep active_set_start, or earlier on
    // a plateau; the sweeps go on from its answer when it converged, else from theirs
    // (or at sweep active_set_early when the sweeps crawl: BisectionSettings::active_set_crawl)
    const bool crawl = !stop && s.active_set_crawl(n, it, error, first_error);
    const bool stalled = stop && result.stalled && it < s.active_set_start;
    if (frictional && !active_set_done && it < s.max_iterations && (it == s.active_set_start || stalled || crawl) &&
        n <= s.active_set.max_rows) {
      // (an early try that fails leaves the stage to its sweep or plateau: active_set_early)
      active_set_done = !crawl;
      bool converged = false;
      const Index after = solve_active_set(*pb, lambda, it, converged, crawl ? s.active_set_early_factorizations : 0);
      if (converged) {
        active_set_done = true;
        result.stalled = false;
        method = SolverMethod::ActiveSet;
        adopt_stage_right_side();
        it = after;
        continue;
      }
      it = after;
    }
    // The semismooth Newton stage: at sweep newton_start, or when the solve is about to end
    // unconverged (a plateau that the stages above did not get the sweeps off, or the cap).
    // Refused, the sweeps go on (or end) from their own impulses.
    if (!newton_done && result.status == SolverStatus::MaxIterations && n <= s.newton.max_rows &&
        (it == s.newton_start || (stop && result.stalled) || it == s.max_iterations)) {
      newton_done = true;
      const Index before = it;
      if (solve_newton(*pb, lambda, it, result)) return result;
      if (stop || before == s.max_iterations) {
        result.iterations = it;
        result.method = method;
        return result;
      }
      it = std::min(it, s.max_iterations - 1);  // (the sweeps go on from their impulses, which are back)
    }
    // Plain sweeps after the mixed ones stop on a plateau that the stages above did not get
    // them off (the settings' plain_after_plateau): the mixing's history restarts whenever a
    // contact changes case, which on large resting islands and settling piles happens every few
    // sweeps, and the mixed iterates level off just above the tolerance; the plain sweeps are
    // Algorithm 2 itself, which on the large resting islands of boxes (Box2D's large pyramid)
    // goes on converging, slowly (two islands of the cylinder pile took 909 and 558 plain sweeps
    // from their warm starts, docs/benchmarks.md "Piles of round bodies"). No plateau stop for
    // them: they end at the tolerance or at the budget.
    if (stop && result.stalled && mixing && s.plain_after_plateau > 0 && it > s.anderson_start &&
        it < s.max_iterations) {
      mixing = false;
      result.stalled = false;
      monitor = SweepMonitor(s.tolerance, 0);
      last_sweep = std::min(s.max_iterations, it + s.plain_after_plateau);
      continue;
    }
    if (stop) {
      result.method = method;
      return result;
    }
    // (the mixed point moves every contact: G lambda is rebuilt)
    if (accelerate && it < s.max_iterations && anderson_.after_sweep(lambda, error)) {
      if (all_one_row) {
        product_.reset_normal(lambda);
      } else {
        product_.reset(*pb, lambda);
      }
    }
  }
  result.method = method;
  if (last_sweep < s.max_iterations) result.stalled = true;  // (the plain sweeps' budget, after a plateau)
  return result;  // MaxIterations
  };
  return detail::run_kernel(kernel_body);
}

}  // namespace impulse
