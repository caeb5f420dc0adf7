// Single-contact bisection (Hwangbo 2018 Alg. 1, eq. 8-16) against an independent reference.
// SlipModel::MinimumEnergy (the paper's eq. 8) is checked against the energy reference below;
// the default SlipModel::Coulomb against Coulomb's law with maximal dissipation (friction
// anti-parallel to the slip) and against PGS run to convergence, at the end of the file.
//
// The reference solves the same model, eq. 8, without any of Algorithm 1's machinery: no
// initial guess, no line-of-sight test, no hybrid gradient. It parametrizes the conic section
// C by the tangential direction phi (rho(phi) from the plane and the cone boundary), samples the
// energy E = lambda^T G lambda / 2 + c^T lambda at 720 directions, and refines the best sample by
// bisection on the analytic dE/dphi = (G lambda + c) . dlambda/dphi (polar form) to machine
// precision. Global optimality of the bisection answer is further checked against random
// feasible points of S = {lambda in cone, v_z >= 0}.
#include <catch2/catch.hpp>

#include <Eigen/Cholesky>
#include <algorithm>
#include <array>
#include <vector>
#include <random>

#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/cone.hpp"
#include "impulse/solvers/pgs.hpp"
#include "solver_test_problems.hpp"

using namespace impulse;

namespace {

Scalar energy(const Mat3& G, const Vec3& c, const Vec3& lambda) {
  return 0.5 * lambda.dot(G * lambda) + c.dot(lambda);
}

// Point of C in tangential direction phi; false when the direction never meets the cone.
bool conic_point(const Mat3& G, const Vec3& c, Scalar mu, Scalar phi, Vec3& lambda, Vec3& dlambda) {
  const Scalar cs = std::cos(phi), sn = std::sin(phi);
  // plane: G_zx rho cs + G_zy rho sn + G_zz lz + c_z = 0, cone: rho = mu lz
  const Scalar den = G(2, 2) + mu * (G(2, 0) * cs + G(2, 1) * sn);
  if (!(den > 0)) return false;
  const Scalar rho = -mu * c.z() / den;
  const Scalar dden = mu * (-G(2, 0) * sn + G(2, 1) * cs);
  const Scalar drho = mu * c.z() * dden / (den * den);
  lambda = Vec3(rho * cs, rho * sn, rho / mu);
  dlambda = Vec3(drho * cs - rho * sn, drho * sn + rho * cs, drho / mu);
  return true;
}

struct Reference {
  Vec3 lambda = Vec3::Zero();
  ContactCase contact_case = ContactCase::Opening;
};

Reference reference_solution(const Mat3& G, const Vec3& c, Scalar mu) {
  Reference ref;
  if (c.z() >= 0) return ref;
  const Vec3 lambda_v0 = -G.ldlt().solve(c);
  if (in_cone(lambda_v0, mu)) {
    ref.lambda = lambda_v0;
    ref.contact_case = ContactCase::Sticking;
    return ref;
  }
  ref.contact_case = ContactCase::Slipping;
  // den(phi) = G_zz (1 + a cos(phi - phi_a)): for a > 1 the section is a hyperbola whose
  // branch ends at phi_a +- phi_c; the optimum can sit within 1e-6 rad of an asymptote, so the
  // samples are uniform in phi plus log-spaced towards both asymptotic directions.
  const Scalar a = mu * std::hypot(G(2, 0), G(2, 1)) / G(2, 2);
  const Scalar phi_a = std::atan2(G(2, 1), G(2, 0));
  std::vector<Scalar> phis;
  constexpr int kSamples = 720;
  for (int k = 0; k < kSamples; ++k) phis.push_back(phi_a - M_PI + 2 * M_PI * k / kSamples);
  if (a > 1) {
    const Scalar phi_c = std::acos(-1 / a);
    for (int k = 0; k < 300; ++k) {
      const Scalar delta = phi_c * std::pow(10.0, -15.0 + 15.0 * k / 299);
      phis.push_back(phi_a + phi_c - delta);
      phis.push_back(phi_a - phi_c + delta);
    }
  }
  std::sort(phis.begin(), phis.end());
  Scalar best_E = std::numeric_limits<Scalar>::infinity();
  std::size_t best = 0;
  Vec3 lam, dlam;
  for (std::size_t k = 0; k < phis.size(); ++k) {
    if (!conic_point(G, c, mu, phis[k], lam, dlam)) continue;
    const Scalar E = energy(G, c, lam);
    if (E < best_E) {
      best_E = E;
      best = k;
    }
  }
  Scalar best_phi = phis[best];
  // bisection on the sign of dE/dphi between the neighbours of the best sample
  auto slope = [&](Scalar phi, bool& ok) {
    ok = conic_point(G, c, mu, phi, lam, dlam);
    return (G * lam + c).dot(dlam);
  };
  Scalar lo = phis[best > 0 ? best - 1 : phis.size() - 1] - (best > 0 ? 0 : 2 * M_PI);
  Scalar hi = phis[best + 1 < phis.size() ? best + 1 : 0] + (best + 1 < phis.size() ? 0 : 2 * M_PI);
  bool ok_lo = false, ok_hi = false;
  const Scalar s_lo = slope(lo, ok_lo), s_hi = slope(hi, ok_hi);
  if (ok_lo && ok_hi && s_lo < 0 && s_hi > 0) {
    for (int k = 0; k < 200 && hi - lo > 1e-16; ++k) {
      const Scalar mid = 0.5 * (lo + hi);
      bool ok = false;
      if (slope(mid, ok) < 0) lo = mid; else hi = mid;
    }
    best_phi = 0.5 * (lo + hi);
  }
  conic_point(G, c, mu, best_phi, ref.lambda, dlam);
  return ref;
}

Mat3 random_rotation(std::mt19937& rng) {
  const Vec4 q = test::random_normal(rng, 4, 1);
  return Quat(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix();
}

// G = R diag(eig) R^T with log10(eig) uniform in [lo, hi], times a random overall scale.
Mat3 random_delassus(std::mt19937& rng, Scalar log_lo, Scalar log_hi) {
  const Mat3 R = random_rotation(rng);
  Vec3 eig;
  for (int k = 0; k < 3; ++k) eig[k] = std::pow(10.0, test::uniform(rng, log_lo, log_hi));
  const Scalar scale = std::pow(10.0, test::uniform(rng, -1, 1));
  return scale * R * eig.asDiagonal() * R.transpose();
}

// Random points of S never beat the solution. For a closing contact (c_z < 0) the velocity
// Signorini condition leaves S = K_mu intersected with the plane v_z = G_(r3) lambda + c_z = 0
// (lambda = 0 would penetrate), the filled conic section.
bool random_feasible_point(std::mt19937& rng, const Mat3& G, const Vec3& c, Scalar mu,
                           Scalar span, Vec3& x) {
  const Scalar r = span * std::sqrt(test::uniform(rng, 0, 1));
  const Scalar th = test::uniform(rng, -M_PI, M_PI);
  x.x() = r * std::cos(th);
  x.y() = r * std::sin(th);
  x.z() = (-c.z() - G(2, 0) * x.x() - G(2, 1) * x.y()) / G(2, 2);
  return in_cone(x, mu);
}

void check_no_better_feasible_point(std::mt19937& rng, const Mat3& G, const Vec3& c, Scalar mu,
                                    const Vec3& lambda, Scalar rel_tol) {
  const Scalar E = energy(G, c, lambda);
  const Scalar span = 2 * lambda.norm() + 1e-3;
  int tested = 0;
  for (int k = 0; k < 200 && tested < 20; ++k) {
    Vec3 x;
    if (!random_feasible_point(rng, G, c, mu, span, x)) continue;
    ++tested;
    INFO("G =\n" << G << "\nc = " << c.transpose() << ", mu = " << mu << "\nlambda = "
                  << lambda.transpose() << "\nbetter? " << x.transpose());
    REQUIRE(E <= energy(G, c, x) + rel_tol * (std::abs(E) + 1e-12));
  }
}

}  // namespace

TEST_CASE("bisection single contact equals the reference solution of eq. 8", "[solvers][bisection]") {
  std::mt19937 rng(20180419);
  BisectionSettings precise;
  precise.slip_model = SlipModel::MinimumEnergy;
  precise.bisection_tolerance = 1e-12;
  std::array<int, 4> count{};  // opening, sticking, slipping, locked
  Index max_steps = 0;
  for (int seed = 0; seed < 4000; ++seed) {
    const bool ill = seed % 2 == 1;  // cond(G) up to 1e1 (well) or 1e6 (ill)
    const Mat3 G = ill ? random_delassus(rng, -6, 0) : random_delassus(rng, -0.5, 0.5);
    const Vec3 c(test::uniform(rng, -1, 1), test::uniform(rng, -1, 1), test::uniform(rng, -1, 0.25));
    const Scalar mu = test::uniform(rng, 0.1, 1.5);
    const SingleContactSolution sol = solve_single_contact(G, c, mu, precise);
    const Reference ref = reference_solution(G, c, mu);
    INFO("seed " << seed << (ill ? " (ill-conditioned)" : "") << ", case " << to_string(sol.contact_case)
                 << "\nG =\n" << G << "\nc = " << c.transpose() << ", mu = " << mu
                 << "\nbisection " << sol.lambda.transpose() << "\nreference " << ref.lambda.transpose());
    REQUIRE(sol.contact_case == ref.contact_case);
    REQUIRE((sol.lambda - ref.lambda).norm() <= 1e-6 * std::max<Scalar>(ref.lambda.norm(), 1e-9));
    REQUIRE(sol.lambda.allFinite());
    ++count[static_cast<int>(sol.contact_case)];
    max_steps = std::max(max_steps, sol.steps);
    if (sol.contact_case == ContactCase::Slipping) {
      // on the conic section: v_z = 0 and |lambda_T| = mu lambda_z
      REQUIRE(std::abs(G.row(2).dot(sol.lambda) + c.z()) <= 1e-9 * (std::abs(c.z()) + 1e-12));
      REQUIRE(std::abs(sol.lambda.head<2>().norm() - mu * sol.lambda.z()) <= 1e-9 * sol.lambda.norm());
    }
    if (seed % 4 == 0 && sol.contact_case != ContactCase::Opening) {
      check_no_better_feasible_point(rng, G, c, mu, sol.lambda, 1e-9);
    }
  }
  WARN("single-contact cases: opening " << count[0] << ", sticking " << count[1] << ", slipping "
                                        << count[2] << "; max Algorithm 1 steps " << max_steps);
  CHECK(count[0] >= 300);
  CHECK(count[1] >= 300);
  CHECK(count[2] >= 300);
  CHECK(count[3] == 0);
}

TEST_CASE("bisection with the published precision stays within 1e-6 N s", "[solvers][bisection]") {
  std::mt19937 rng(7);
  BisectionSettings paper;
  paper.slip_model = SlipModel::MinimumEnergy;
  for (int seed = 0; seed < 1000; ++seed) {
    const Mat3 G = random_delassus(rng, -3, 0);
    const Vec3 c(test::uniform(rng, -2, 2), test::uniform(rng, -2, 2), test::uniform(rng, -1, 0));
    const Scalar mu = test::uniform(rng, 0.2, 1.0);
    const Vec3 lambda = solve_single_contact(G, c, mu, paper).lambda;  // gamma = 1e-6 N s
    const Vec3 ref = reference_solution(G, c, mu).lambda;
    INFO("seed " << seed << "\nG =\n" << G << "\nc = " << c.transpose() << ", mu = " << mu
                 << "\nbisection " << lambda.transpose() << "\nreference " << ref.transpose());
    REQUIRE((lambda - ref).norm() <= 2e-6);
  }
}

TEST_CASE("bisection handles rank-deficient and degenerate G_ii without NaN", "[solvers][bisection]") {
  std::mt19937 rng(99);
  for (int seed = 0; seed < 600; ++seed) {
    const int rank = 1 + seed % 2;  // rank 1 or 2
    const Eigen::Matrix<Scalar, 3, Eigen::Dynamic> A = test::random_normal(rng, 3, rank);
    const Mat3 G = A * A.transpose();
    // physical c lies in the range of G (c = J u with G = J M^-1 J^T)
    const Vec3 c = A * test::random_normal(rng, rank, 1) + Vec3(0, 0, 0);
    const Scalar mu = test::uniform(rng, 0.1, 1.5);
    BisectionSettings paper;
    paper.slip_model = SlipModel::MinimumEnergy;
    const SingleContactSolution sol = solve_single_contact(G, c, mu, paper);
    INFO("seed " << seed << ", rank " << rank << ", case " << to_string(sol.contact_case)
                 << "\nG =\n" << G << "\nc = " << c.transpose() << "\nlambda = " << sol.lambda.transpose());
    REQUIRE(sol.lambda.allFinite());
    REQUIRE(in_cone(sol.lambda, mu, 1e-9 * (1 + sol.lambda.norm())));
    const Vec3 v = G * sol.lambda + c;
    if (sol.contact_case != ContactCase::Locked) {
      REQUIRE(v.z() >= -1e-6 * (1 + c.norm()));
    }
    if (sol.contact_case != ContactCase::Opening && sol.contact_case != ContactCase::Locked) {
      // never worse than feasible points, up to the O(eps |G| |lambda|) of the regularization
      check_no_better_feasible_point(rng, G, c, mu, sol.lambda, 1e-6);
    }
  }
  // A normal direction that no impulse can move (G_zz = 0) is "locked": lambda = 0.
  Mat3 G = Mat3::Zero();
  G(0, 0) = 1;
  const SingleContactSolution locked = solve_single_contact(G, Vec3(0.3, 0, -1), 0.5);
  CHECK(locked.contact_case == ContactCase::Locked);
  CHECK(locked.lambda == Vec3::Zero());
  // all-zero block and frictionless contact
  CHECK(solve_single_contact(Mat3::Zero(), Vec3(1, 1, -1), 0.5).lambda.allFinite());
  const SingleContactSolution frictionless = solve_single_contact(Mat3::Identity(), Vec3(1, 0, -2), 0);
  CHECK(frictionless.lambda.isApprox(Vec3(0, 0, 2)));
}

TEST_CASE("bisection line-of-sight example from the source comment", "[solvers][bisection]") {
  // G = I, c = (-5, 0, -1), mu = 1: the optimum is (1, 0, 1) (closest point of the unit disc
  // at lambda_z = 1 to lambda^{v=0} = (5, 0, 1)).
  const SingleContactSolution sol = solve_single_contact(Mat3::Identity(), Vec3(-5, 0, -1), 1);
  CHECK(sol.contact_case == ContactCase::Slipping);
  CHECK((sol.lambda - Vec3(1, 0, 1)).norm() < 1e-6);
}

TEST_CASE("bisection (Coulomb) slips with friction opposite to the slip, as converged PGS", "[solvers][bisection]") {
  // Coupled random blocks (G_zx, G_zy != 0, where eq. 8's energy minimum and Coulomb's law
  // differ): the default slip model must give v_z = 0, |lambda_T| = mu lambda_z and v_T
  // anti-parallel to lambda_T, and agree with PGS (a different algorithm for Coulomb's law, whose
  // fixed point lambda_T = proj(lambda_T - r v_T) is anti-parallel) run to 1e-14.
  std::mt19937 rng(11);
  BisectionSettings precise;
  precise.bisection_tolerance = 1e-13;
  PgsSettings ps;
  ps.tolerance = 1e-14;
  ps.max_iterations = 2000000;
  PgsSolver pgs(ps);
  int slipping = 0, compared = 0;
  Scalar worst_energy_model = 0;
  for (int seed = 0; seed < 1500; ++seed) {
    const Mat3 G = random_delassus(rng, -1.5, 0);
    const Vec3 c(test::uniform(rng, -1, 1), test::uniform(rng, -1, 1), test::uniform(rng, -1, 0));
    const Scalar mu = test::uniform(rng, 0.2, 1.2);
    // the single-contact Coulomb problem has a unique solution when the conic section is an
    // ellipse (G_zz > mu |G_zT|); on hyperbolic sections Coulomb's law can have several
    if (!(G(2, 2) > mu * std::hypot(G(2, 0), G(2, 1)))) continue;
    const SingleContactSolution sol = solve_single_contact(G, c, mu, precise);
    if (sol.contact_case != ContactCase::Slipping) continue;
    ++slipping;
    const Vec3 v = G * sol.lambda + c;
    INFO("seed " << seed << "\nG =\n" << G << "\nc = " << c.transpose() << ", mu = " << mu << "\nlambda = "
                 << sol.lambda.transpose() << ", v = " << v.transpose());
    REQUIRE(std::abs(v.z()) <= 1e-9 * (std::abs(c.z()) + 1e-12));
    REQUIRE(std::abs(sol.lambda.head<2>().norm() - mu * sol.lambda.z()) <= 1e-9 * sol.lambda.norm());
    const Vec2s t = sol.lambda.head<2>().normalized();
    const Vec2s vT = v.head<2>();
    REQUIRE(vT.dot(t) <= 0);                                          // dissipative
    REQUIRE(std::abs(vT.x() * t.y() - vT.y() * t.x()) <= 1e-9 * (vT.norm() + c.norm()));  // anti-parallel
    if (compared < 300) {
      ++compared;
      const MatX Gd = G;
      const VecX cd = c, mud = VecX::Constant(1, mu);
      VecX lp = VecX::Zero(3);
      pgs.solve(ContactProblem(Gd, cd, mud, 1, 0), lp);
      REQUIRE((sol.lambda - lp).norm() <= 1e-6 * lp.norm());
    }
    BisectionSettings paper = precise;
    paper.slip_model = SlipModel::MinimumEnergy;
    const Vec3 le = solve_single_contact(G, c, mu, paper).lambda;
    worst_energy_model = std::max(worst_energy_model, (le - sol.lambda).norm() / sol.lambda.norm());
  }
  WARN("Coulomb slip: " << slipping << " slipping blocks, " << compared << " compared with PGS; eq. 8's energy "
                        << "minimum differs by up to " << worst_energy_model * 100 << " %");
  CHECK(slipping >= 300);
  CHECK(worst_energy_model > 1e-2);  // the two models genuinely differ on coupled blocks
}

TEST_CASE("bisection (Coulomb): the Newton refinement finds the Illinois refinement's zero in fewer evaluations",
          "[solvers][bisection]") {
  // Two refinements of the same bracket on f(theta) (bisection.cpp): each ends within the
  // tolerance of the zero, so they agree to it; Newton's closed-form slope converges
  // quadratically, Illinois superlinearly. A wrong slope makes Newton's steps leave the bracket
  // (Illinois points then) or converge linearly: more evaluations, or an end off the zero.
  std::mt19937 rng(23);
  BisectionSettings newton, illinois;
  illinois.slip_newton = false;
  REQUIRE(newton.slip_newton);
  Index steps_newton = 0, steps_illinois = 0;
  int slipping = 0;
  Scalar worst = 0;
  for (int seed = 0; seed < 3000; ++seed) {
    const Mat3 G = random_delassus(rng, -1.5, 0.5);
    const Vec3 c(test::uniform(rng, -1, 1), test::uniform(rng, -1, 1), test::uniform(rng, -1, 0));
    const Scalar mu = test::uniform(rng, 0.2, 1.2);
    if (!(G(2, 2) > mu * std::hypot(G(2, 0), G(2, 1)))) continue;  // (one Coulomb zero: an ellipse)
    const SingleContactSolution a = solve_single_contact(G, c, mu, newton);
    const SingleContactSolution b = solve_single_contact(G, c, mu, illinois);
    REQUIRE(a.contact_case == b.contact_case);
    if (a.contact_case != ContactCase::Slipping) continue;
    ++slipping;
    steps_newton += a.steps, steps_illinois += b.steps;
    worst = std::max(worst, (a.lambda - b.lambda).norm() / b.lambda.norm());
  }
  WARN("Coulomb slip, " << slipping << " slipping blocks: Newton " << Scalar(steps_newton) / slipping
                        << " evaluations each, Illinois " << Scalar(steps_illinois) / slipping
                        << "; impulses apart by up to " << worst << " relative");
  CHECK(slipping >= 500);
  CHECK(worst < 3 * newton.bisection_tolerance);
  CHECK(Scalar(steps_newton) < 0.7 * Scalar(steps_illinois));
}

TEST_CASE("bisection (Coulomb): Newton steps from a hint find the answer without a hint", "[solvers][bisection]") {
  // The sweep hands the slip search the contact's present lambda_T (bisection.cpp, hinted_slip).
  // From a hint near the answer the steps converge in a few evaluations; from one opposite to it
  // they reach f's other zero (v_T along lambda_T), which the search must reject for Algorithm 1;
  // from any hint the answer is the unhinted one within the tolerance.
  std::mt19937 rng(29);
  const BisectionSettings s;
  Index steps_plain = 0, steps_near = 0;
  int slipping = 0, opposite_rejected = 0;
  Scalar worst_near = 0, worst_far = 0;
  for (int seed = 0; seed < 3000; ++seed) {
    const Mat3 G = random_delassus(rng, -1.5, 0.5);
    const Vec3 c(test::uniform(rng, -1, 1), test::uniform(rng, -1, 1), test::uniform(rng, -1, 0));
    const Scalar mu = test::uniform(rng, 0.2, 1.2);
    if (!(G(2, 2) > mu * std::hypot(G(2, 0), G(2, 1)))) continue;  // (one Coulomb zero: an ellipse)
    Mat3 M;
    if (!bisection_block_inverse(G, s.regularization, M)) continue;
    const SingleContactSolution plain = solve_single_contact_inverted(G, M, c, mu, s);
    if (plain.contact_case != ContactCase::Slipping) continue;
    ++slipping;
    steps_plain += plain.steps;
    const Scalar scale = plain.lambda.norm();
    // near: the answer's direction turned by up to 0.2 rad, any length
    const Scalar turn = test::uniform(rng, -0.2, 0.2), len = test::uniform(rng, 0.1, 3);
    const Scalar near[2] = {len * (std::cos(turn) * plain.lambda.x() - std::sin(turn) * plain.lambda.y()),
                            len * (std::sin(turn) * plain.lambda.x() + std::cos(turn) * plain.lambda.y())};
    const SingleContactSolution a = solve_single_contact_inverted(G, M, c, mu, s, near);
    steps_near += a.steps;
    worst_near = std::max(worst_near, (a.lambda - plain.lambda).norm() / scale);
    // far: the opposite direction, and a random one
    const Scalar opposite[2] = {-plain.lambda.x(), -plain.lambda.y()};
    const Scalar phi = test::uniform(rng, -M_PI, M_PI);
    const Scalar any[2] = {std::cos(phi), std::sin(phi)};
    for (const Scalar* h : {opposite, any}) {
      const SingleContactSolution b = solve_single_contact_inverted(G, M, c, mu, s, h);
      REQUIRE(b.contact_case == ContactCase::Slipping);
      worst_far = std::max(worst_far, (b.lambda - plain.lambda).norm() / scale);
      if (h == opposite && b.steps > 2) ++opposite_rejected;
    }
  }
  WARN("Coulomb slip from a hint, " << slipping << " slipping blocks: " << Scalar(steps_near) / slipping
                                    << " evaluations each from a near hint, " << Scalar(steps_plain) / slipping
                                    << " without; impulses apart by up to " << worst_near << " (near), "
                                    << worst_far << " (far) relative; " << opposite_rejected
                                    << " opposite hints took more than two evaluations");
  CHECK(slipping >= 500);
  CHECK(worst_near < 3 * s.bisection_tolerance);
  CHECK(worst_far < 3 * s.bisection_tolerance);
  CHECK(Scalar(steps_near) < 0.7 * Scalar(steps_plain));
}

TEST_CASE("project_to_cone is the Euclidean projection onto K_mu, mu = 0 included", "[solvers][cone]") {
  // Moreau's decomposition: lambda = P(lambda) + r with P(lambda) in K_mu, r in the polar cone
  // (|r_T| <= -r_z / mu; for mu = 0 r_z <= 0 and r_T free) and P(lambda) . r = 0
  std::mt19937 rng(7);
  std::uniform_real_distribution<Scalar> u(-1, 1);
  for (const Scalar mu : {0.0, 0.3, 1.0, 2.5}) {
    for (int k = 0; k < 2000; ++k) {
      const Vec3 l(u(rng), u(rng), u(rng));
      const Vec3 p = project_to_cone(l, mu);
      const Vec3 r = l - p;
      INFO("mu " << mu << " lambda " << l.transpose() << " projection " << p.transpose());
      CHECK(p.z() >= 0);
      CHECK(cone_violation(p, mu) <= 1e-14);
      CHECK(std::abs(p.dot(r)) <= 1e-14);
      CHECK(r.z() <= 1e-14);
      CHECK(mu * std::hypot(r.x(), r.y()) <= -r.z() + 1e-14);
      CHECK((project_to_cone(p, mu) - p).norm() <= 1e-14);
    }
  }
  // the frictionless ray: a negative normal impulse projects to 0
  CHECK(project_to_cone(Vec3(0, 0, -0.5), 0).norm() == 0);
  CHECK(project_to_cone(Vec3(0.2, -0.1, 0.7), 0) == Vec3(0, 0, 0.7));
}
