// Contract tests of the four contact solvers on random physical multi-contact problems
// (G = J M^-1 J^T, c = J u, see solver_test_problems.hpp): each solver delivers what its model
// promises, measured by the common evaluate_residuals(); on sticking problems all four agree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>
#include <random>

#include "impulse/core/error.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/cone.hpp"
#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/pgs.hpp"
#include "solver_test_problems.hpp"

using namespace impulse;

namespace {

// Solvers tightened beyond their published defaults, so the residual checks below are about
// the algorithms and not about where the defaults stop.
std::unique_ptr<ContactSolver> make_tight_solver(const std::string& name) {
  if (name == "bisection") {
    BisectionSettings s;
    s.tolerance = 1e-10;
    s.bisection_tolerance = 1e-12;
    s.max_iterations = 20000;
    s.stall_window = 0;  // converge to the floor: the plateau guard is a stepping budget policy
    return std::make_unique<BisectionSolver>(s);
  }
  if (name == "pgs") {
    PgsSettings s;
    s.tolerance = 1e-12;
    s.max_iterations = 200000;
    s.stall_window = 0;
    return std::make_unique<PgsSolver>(s);
  }
  if (name == "lm-plm") {
    LmSettings s;
    s.variant = LmVariant::Projected;
    return std::make_unique<LmSolver>(s);
  }
  return make_contact_solver(name);
}

const std::vector<std::string> kVariants = {"bisection", "pgs", "lm", "lm-plm", "noslip"};

// What each solver promises, with the tight settings above (N s and m/s).
void check_promises(const std::string& name, const ContactResiduals& r) {
  INFO(name << ": " << r.to_string());
  CHECK(r.negative_impulse <= 1e-12);
  if (name == "bisection") {  // Signorini, cone, per-contact Coulomb optimum
    CHECK(r.signorini() <= 1e-8);
    CHECK(r.cone <= 1e-12);
    CHECK(r.max_dissipation <= 1e-8);  // (Coulomb's law itself: the sliding test below)
  } else if (name == "noslip") {  // Drumwright: Signorini and zero tangential velocity
    CHECK(r.signorini() <= 1e-10);
    CHECK(r.slip <= 1e-9);
  } else {  // pgs, lm: Coulomb's law eq. 6 with velocity Signorini
    CHECK(r.signorini() <= 1e-9);
    CHECK(r.cone <= 1e-12);
    CHECK(r.coulomb <= 1e-9);
  }
}

}  // namespace

TEST_CASE("make_contact_solver knows the four solvers and names them in errors", "[solvers]") {
  for (const std::string& name : contact_solver_names()) {
    const auto solver = make_contact_solver(name);
    REQUIRE(solver);
    CHECK(solver->name() == name);
  }
  CHECK(contact_solver_names().size() == 4);
  try {
    make_contact_solver("gauss-newton");
    FAIL("no exception for an unknown solver name");
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("gauss-newton"));
    for (const char* valid : {"bisection", "pgs", "lm", "noslip"}) {
      CHECK_THAT(what, Catch::Contains(valid));
    }
  }
}

TEST_CASE("contact solvers reject malformed problems", "[solvers]") {
  const MatX G = MatX::Identity(6, 6);
  const VecX c = VecX::Zero(6), mu = VecX::Constant(2, 0.5);
  auto solver = make_contact_solver("pgs");
  VecX lambda = VecX::Zero(5);
  CHECK_THROWS_AS(solver->solve(ContactProblem(G, c, mu, 2, 0), lambda), InvalidArgument);
  lambda.setZero(6);
  CHECK_THROWS_AS(solver->solve(ContactProblem(G, c, mu, 1, 0), lambda), InvalidArgument);
  CHECK_THROWS_AS(solver->solve(ContactProblem(G, c, VecX::Constant(1, 0.5), 2, 0), lambda),
                  InvalidArgument);
  CHECK(solver->solve(ContactProblem(G, c, mu, 2, 0), lambda).converged());
}

TEST_CASE("contact solvers report non-finite input as NumericalIssue", "[solvers]") {
  std::mt19937 rng(5);
  test::OwnedProblem p = test::make_physical_problem(rng, 2, 1, 18, 0.5, 1.0);
  p.c[2] = std::numeric_limits<Scalar>::quiet_NaN();
  for (const std::string& name : contact_solver_names()) {
    auto solver = make_contact_solver(name);
    VecX lambda = VecX::Zero(7);
    const SolverResult r = solver->solve(p.view(), lambda);
    INFO(name << ": " << to_string(r.status));
    CHECK(r.status == SolverStatus::NumericalIssue);
    CHECK(lambda.allFinite());
  }
  // the guard itself: NaN or Inf anywhere in G, c or mu; huge finite entries are finite
  const test::OwnedProblem clean = test::make_physical_problem(rng, 2, 1, 18, 0.5, 1.0);
  CHECK(problem_is_finite(clean.view()));
  for (int k = 0; k < 4; ++k) {
    test::OwnedProblem q = clean;
    const Scalar bad = k % 2 ? std::numeric_limits<Scalar>::infinity() : std::numeric_limits<Scalar>::quiet_NaN();
    if (k < 2) {
      q.G(6, 3) = bad;  // one off-diagonal entry of the limit row
    } else {
      q.mu[1] = bad;
    }
    CHECK_FALSE(problem_is_finite(q.view()));
  }
  test::OwnedProblem huge = clean;
  huge.G(0, 1) = huge.G(1, 0) = 1e308;  // huge but finite entries are finite
  CHECK(problem_is_finite(huge.view()));
}

TEST_CASE("every solver satisfies its model on random multi-contact problems", "[solvers]") {
  // 18 DOF; 4 contacts + 2 limits (14 rows, G regular) and 8 contacts + 2 limits (26 rows,
  // rank(G) = 18: more constraints than DOF).
  for (const Index nc : {4, 8}) {
    std::mt19937 rng(1000 + nc);
    std::map<std::string, int> converged;
    std::map<std::string, long> iterations;
    constexpr int kSeeds = 25;
    for (int seed = 0; seed < kSeeds; ++seed) {
      const test::OwnedProblem p = test::make_physical_problem(rng, nc, 2, 18, 0.2, 1.2);
      const ContactProblem problem = p.view();
      for (const std::string& name : kVariants) {
        auto solver = make_tight_solver(name);
        VecX lambda = VecX::Zero(problem.size());
        const SolverResult r = solver->solve(problem, lambda);
        INFO(nc << " contacts, seed " << seed << ", " << name << ": " << to_string(r.status)
                << " after " << r.iterations << ", residual " << r.residual);
        REQUIRE(lambda.allFinite());
        REQUIRE(r.status != SolverStatus::NumericalIssue);
        if (r.converged()) {
          ++converged[name];
          iterations[name] += r.iterations;
          check_promises(name, evaluate_residuals(problem, lambda));
        }
      }
    }
    for (const std::string& name : kVariants) {
      WARN(nc << " contacts, " << name << ": converged " << converged[name] << "/" << kSeeds
              << ", mean iterations when converged "
              << double(iterations[name]) / std::max(1, converged[name]));
    }
    CHECK(converged["pgs"] == kSeeds);
    CHECK(converged["noslip"] == kSeeds);
    if (nc == 4) {
      CHECK(converged["bisection"] == kSeeds);
      CHECK(converged["lm-plm"] == kSeeds);
      CHECK(converged["lm"] == kSeeds);
    } else {
      // Known limits (docs/solvers.md): block SOR has no convergence proof (Hwangbo sec. VI) and
      // LM on |r|^2 / 2 is a local method: it can stall at a stationary point with r != 0,
      // more often when rank(G) < rows as here.
      CHECK(converged["bisection"] >= kSeeds - 2);
      // (LM: 25/25 each with the watchdog restarts, 23/25 and 21/25 without)
      CHECK(converged["lm-plm"] >= kSeeds - 1);
      CHECK(converged["lm"] >= kSeeds - 1);
    }
  }
}

TEST_CASE("on sticking problems all four solvers agree", "[solvers]") {
  std::mt19937 rng(4242);
  for (int seed = 0; seed < 20; ++seed) {
    VecX lambda_star;
    const test::OwnedProblem p = test::make_sticking_problem(rng, 4, 2, 18, lambda_star);
    const ContactProblem problem = p.view();
    for (const std::string& name : kVariants) {
      auto solver = make_tight_solver(name);
      VecX lambda = VecX::Zero(problem.size());
      const SolverResult r = solver->solve(problem, lambda);
      INFO("seed " << seed << ", " << name << ": " << to_string(r.status) << " after "
                   << r.iterations << "\nlambda " << lambda.transpose() << "\nexpect "
                   << lambda_star.transpose());
      REQUIRE(r.converged());
      CHECK((lambda - lambda_star).norm() <= 1e-6 * lambda_star.norm());
    }
  }
}

TEST_CASE("a converged solution is a fixed point: the warm start finishes at once", "[solvers]") {
  std::mt19937 rng(77);
  const test::OwnedProblem p = test::make_physical_problem(rng, 4, 1, 18, 0.3, 1.0);
  for (const std::string& name : kVariants) {
    auto solver = make_tight_solver(name);
    VecX lambda = VecX::Zero(p.view().size());
    REQUIRE(solver->solve(p.view(), lambda).converged());
    const VecX first = lambda;
    const SolverResult again = solver->solve(p.view(), lambda);
    INFO(name << ": second solve took " << again.iterations);
    CHECK(again.converged());
    if (name != "noslip") CHECK(again.iterations <= 2);  // pivoting ignores the warm start
    CHECK((lambda - first).norm() <= 1e-8 * (1 + first.norm()));
  }
}

TEST_CASE("no-slip: zero tangential velocity at every contact", "[solvers][noslip]") {
  std::mt19937 rng(31);
  Index max_equalities = 0;
  for (int seed = 0; seed < 40; ++seed) {
    const Index nc = 1 + seed % 8;  // up to 8 contacts: 16 tangential rows on 18 DOF
    const test::OwnedProblem p = test::make_physical_problem(rng, nc, seed % 3, 18, 0.1, 0.5);
    NoSlipSolver solver;
    VecX lambda = VecX::Zero(p.view().size());
    const SolverResult r = solver.solve(p.view(), lambda);
    REQUIRE(r.converged());
    const VecX v = p.G * lambda + p.c;
    for (Index i = 0; i < nc; ++i) {
      INFO("seed " << seed << ", contact " << i << ", v = " << v.segment<3>(3 * i).transpose());
      CHECK(v.segment<2>(3 * i).norm() <= 1e-9);
    }
    const ContactResiduals res = evaluate_residuals(p.view(), lambda);
    CHECK(res.signorini() <= 1e-10);
    max_equalities = std::max(max_equalities, solver.equality_rows());
  }
  CHECK(max_equalities == 16);
  // 12 contacts on 18 DOF: 24 tangential rows, FIND-INDICES keeps an independent 18 (or fewer)
  // and the dropped rows' velocity is still zero because c = J u is physical.
  const test::OwnedProblem big = test::make_physical_problem(rng, 12, 0, 18, 0.5, 0.5);
  NoSlipSolver solver;
  VecX lambda = VecX::Zero(big.view().size());
  REQUIRE(solver.solve(big.view(), lambda).converged());
  CHECK(solver.equality_rows() <= 18);
  CHECK(evaluate_residuals(big.view(), lambda).slip <= 1e-8);
  CHECK(evaluate_residuals(big.view(), lambda).signorini() <= 1e-8);
}

namespace {

Mat3 skew(const Vec3& r) {
  Mat3 S;
  S << 0, -r.z(), r.y(), r.z(), 0, -r.x(), -r.y(), r.x(), 0;
  return S;
}

// Todorov 2010's numerical experiment: n_b = 10 bodies, n_c = 16 contacts, mu = 1. Ten free
// rigid bodies (60 DOF, M block diagonal), 6 contacts with the ground and 10 between bodies;
// contact frames with normals near +z, contact points within 0.2 m of the bodies' centres,
// J_i = R_i^T [I, -[r_a]x] for body a minus the same for body b; c = J u with bodies falling at
// up to 1 m/s and random horizontal and angular velocities.
test::OwnedProblem make_todorov_problem(std::mt19937& rng) {
  constexpr Index nb = 10, nc = 16, dof = 6 * nb;
  test::OwnedProblem p;
  p.nc = nc;
  p.nl = 0;
  p.Minv = MatX::Zero(dof, dof);
  for (Index b = 0; b < nb; ++b) {
    const Scalar m = test::uniform(rng, 0.5, 2.0);
    p.Minv.block<3, 3>(6 * b, 6 * b) = Mat3::Identity() / m;
    for (int k = 0; k < 3; ++k) p.Minv(6 * b + 3 + k, 6 * b + 3 + k) = 1 / test::uniform(rng, 0.02, 0.2);
  }
  p.J = MatX::Zero(3 * nc, dof);
  for (Index i = 0; i < nc; ++i) {
    const Index a = i % nb;
    const Index b = i < 6 ? -1 : (a + 1 + i % 3) % nb;  // -1: ground
    const Vec3 tilt(test::uniform(rng, -0.2, 0.2), test::uniform(rng, -0.2, 0.2), 1);
    const Vec3 n = tilt.normalized();
    const Vec3 t1 = n.unitOrthogonal(), t2 = n.cross(t1);
    Mat3 R;
    R << t1, t2, n;
    auto add_body = [&](Index body, Scalar sign) {
      const Vec3 r(test::uniform(rng, -0.2, 0.2), test::uniform(rng, -0.2, 0.2), test::uniform(rng, -0.2, 0.2));
      p.J.block<3, 3>(3 * i, 6 * body) += sign * R.transpose();
      p.J.block<3, 3>(3 * i, 6 * body + 3) += -sign * R.transpose() * skew(r);
    };
    add_body(a, 1);
    if (b >= 0) add_body(b, -1);
  }
  p.G = p.J * p.Minv * p.J.transpose();
  p.mu = VecX::Constant(nc, 1.0);
  VecX u(dof);
  for (Index b = 0; b < nb; ++b) {
    u.segment<3>(6 * b) = Vec3(test::uniform(rng, -0.5, 0.5), test::uniform(rng, -0.5, 0.5), test::uniform(rng, -1, 0));
    u.segment<3>(6 * b + 3) = Vec3(test::uniform(rng, -1, 1), test::uniform(rng, -1, 1), test::uniform(rng, -1, 1));
  }
  p.c = p.J * u;
  return p;
}

}  // namespace

TEST_CASE("LM on Todorov's 16-contact, mu = 1 problem converges in a handful of iterations",
          "[solvers][lm]") {
  std::mt19937 rng(2010);
  constexpr int kProblems = 20;
  for (const LmVariant variant : {LmVariant::Regular, LmVariant::Projected}) {
    std::vector<int> iterations;  // of the converged runs
    int stalled = 0;
    for (int k = 0; k < kProblems; ++k) {
      const test::OwnedProblem p = make_todorov_problem(rng);
      LmSettings settings;
      settings.variant = variant;
      LmSolver lm(settings);
      VecX lambda = VecX::Zero(48);  // no warm start
      const SolverResult r = lm.solve(p.view(), lambda);
      if (!r.converged()) {
        ++stalled;
        continue;
      }
      iterations.push_back(r.iterations);
      const ContactResiduals res = evaluate_residuals(p.view(), lambda);
      INFO("problem " << k << ": " << res.to_string());
      CHECK(res.coulomb_violation() <= 1e-9);
    }
    std::sort(iterations.begin(), iterations.end());
    const int median = iterations.empty() ? -1 : iterations[iterations.size() / 2];
    const int max = iterations.empty() ? -1 : iterations.back();
    const char* label = variant == LmVariant::Regular ? "RLM" : "PLM";
    std::ostringstream list;
    for (int it : iterations) list << it << " ";
    WARN(label << " on 16 contacts, mu = 1, no warm start: converged " << iterations.size() << "/"
               << kProblems << ", median " << median << ", max " << max
               << " iterations (Todorov 2010: about 5); "
               << "iterations: " << list.str());
    // LM is a local method on a non-convex |r|^2 / 2; the watchdog restarts (lm.cpp) recover
    // the starts that stalled before them (3/20 RLM, 5/20 PLM). Measured: 20/20, median 7.
    CHECK(stalled <= 1);
    CHECK(median <= 8);
  }
}

TEST_CASE("Todorov parametrization: contact conditions for every z, Jacobian eq. 59 by differences",
          "[solvers][lm]") {
  std::mt19937 rng(59);
  for (int k = 0; k < 2000; ++k) {
    const Vec3 z = test::random_normal(rng, 3, 1);
    const Scalar mu = test::uniform(rng, 0.1, 2.0);
    Mat3 dF;
    const Vec3 f = todorov_impulse(z, mu, &dF);
    const Vec3 v = f + z;  // eq. 51
    INFO("z = " << z.transpose() << ", mu = " << mu);
    // the conditions hold by construction: Signorini, cone, Coulomb
    CHECK(f.z() >= 0);
    CHECK(v.z() >= 0);
    CHECK(f.z() * v.z() == 0);
    CHECK(cone_violation(f, mu) <= 1e-12);
    CHECK(coulomb_violation(f, v, mu) <= 1e-12);
    // central differences, away from the kinks (z_n = 0 and mu F_n = |z_t|)
    const Scalar h = 1e-6;
    const Scalar margin = std::min(std::abs(z.z()), std::abs(mu * std::max<Scalar>(0, -z.z()) -
                                                             z.head<2>().norm()));
    if (margin < 1e-3) continue;
    Mat3 fd;
    for (int j = 0; j < 3; ++j) {
      Vec3 dz = Vec3::Zero();
      dz[j] = h;
      fd.col(j) = (todorov_impulse(z + dz, mu) - todorov_impulse(z - dz, mu)) / (2 * h);
    }
    CHECK((fd - dF).norm() <= 1e-7);
  }
}

TEST_CASE("on sliding contacts bisection agrees with PGS and LM (Coulomb's law)", "[solvers][bisection]") {
  // Random physical problems with coupled Delassus blocks; the ones whose converged solution slips
  // somewhere. Where PGS and LM (two other Coulomb algorithms) agree with each other (a unique
  // solution), bisection converged to 1e-10 is within 1 % of them on every contact. Before the
  // Coulomb slip model, bisection solved eq. 8's energy minimum, which differs at slipping contacts.
  std::mt19937 rng(4242);
  auto bis = make_tight_solver("bisection");
  auto pgs = make_tight_solver("pgs");
  auto lm = make_contact_solver("lm");
  int problems = 0, slipping = 0, worse = 0;
  Scalar worst = 0;
  for (int seed = 0; seed < 60; ++seed) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 3, 0, 18, 0.2, 0.6);
    const Index n = p.view().size();
    VecX lb = VecX::Zero(n), lp = VecX::Zero(n), ll = VecX::Zero(n);
    if (!bis->solve(p.view(), lb).converged() || !pgs->solve(p.view(), lp).converged() ||
        !lm->solve(p.view(), ll).converged())
      continue;
    const VecX v = p.G * lp + p.c;
    bool slip = false;
    for (Index i = 0; i < p.nc; ++i) slip = slip || (lp[3 * i + 2] > 1e-8 && v.segment<2>(3 * i).norm() > 1e-6);
    if (!slip || (lp - ll).norm() > 1e-6 * lp.norm()) continue;  // no slip, or not unique
    ++problems;
    for (Index i = 0; i < p.nc; ++i) {
      const Vec3 b = lb.segment<3>(3 * i), q = lp.segment<3>(3 * i);
      if (q.norm() <= 1e-9 * lp.norm()) continue;
      slipping += v.segment<2>(3 * i).norm() > 1e-6;
      const Scalar rel = (b - q).norm() / q.norm();
      worst = std::max(worst, rel);
      worse += rel > 1e-2;
    }
  }
  WARN("sliding problems " << problems << ", slipping contacts " << slipping << ", worst bisection/PGS difference "
                           << worst);
  CHECK(problems >= 10);
  CHECK(slipping >= 10);
  CHECK(worse == 0);
}

TEST_CASE("frictionless contacts: the one-row sweeps of bisection and PGS solve the normal LCP",
          "[solvers][bisection]") {
  // mu = 0 everywhere: bisection and PGS read and update only the normal row of each contact.
  // The normal rows form an LCP with a regular G here (10 normal and limit rows, 24 DOF), so
  // its solution is unique: both must reach it, agree with LM, and keep the tangents at 0, also
  // from a warm start whose tangents are not 0 (the first sweep takes the full 3-row update).
  std::mt19937 rng(77);
  for (int seed = 0; seed < 10; ++seed) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 8, 2, 24, 0, 0);
    const ContactProblem problem = p.view();
    VecX reference = VecX::Zero(problem.size());
    REQUIRE(make_tight_solver("lm")->solve(problem, reference).converged());
    for (const char* name : {"bisection", "pgs"}) {
      for (const bool tangent_warm_start : {false, true}) {
        VecX lambda = VecX::Zero(problem.size());
        for (Index i = 0; tangent_warm_start && i < problem.nc; ++i) lambda.segment<2>(3 * i) << 0.3, -0.2;
        const SolverResult r = make_tight_solver(name)->solve(problem, lambda);
        INFO("seed " << seed << ", " << name << (tangent_warm_start ? ", tangents warm-started" : "") << ": "
                     << to_string(r.status) << " after " << r.iterations);
        REQUIRE(r.converged());
        check_promises(name, evaluate_residuals(problem, lambda));
        for (Index i = 0; i < problem.nc; ++i) CHECK(lambda.segment<2>(3 * i).norm() == 0);
        CHECK((lambda - reference).norm() <= 1e-7 * (1 + reference.norm()));
      }
    }
  }
}
