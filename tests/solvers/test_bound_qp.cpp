// MPRGP and the active-set method on frictionless contact problems (solvers/bound_qp.hpp) and
// their use by the bisection solver (BisectionSettings::qp_start): the KKT conditions (velocity
// Signorini), agreement with LM, the singular G of more contacts than degrees of freedom, the
// sweep budget.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/bound_qp.hpp"
#include "impulse/solvers/lm.hpp"
#include "solver_test_problems.hpp"

using namespace impulse;

namespace {

// The QP's variables: normal rows of the contacts and the limit rows.
std::vector<unsigned char> qp_rows(const ContactProblem& p) {
  std::vector<unsigned char> var(static_cast<std::size_t>(p.size()));
  for (Index r = 0; r < p.size(); ++r) var[static_cast<std::size_t>(r)] = r >= 3 * p.nc || r % 3 == 2;
  return var;
}

// Largest violation of velocity Signorini on the QP's rows (m/s and N s).
Scalar signorini_violation(const ContactProblem& p, const VecX& x) {
  const VecX v = p.G * x + p.c;
  Scalar e = 0;
  for (Index r = 0; r < p.size(); ++r) {
    if (r < 3 * p.nc && r % 3 != 2) continue;
    e = std::max({e, -x[r], -v[r], std::min(std::max<Scalar>(x[r], 0), std::max<Scalar>(v[r], 0))});
  }
  return e;
}

}  // namespace

TEST_CASE("MPRGP: frictionless problems with a regular G reach the unique LM solution", "[solvers][qp]") {
  std::mt19937 rng(31);
  BoundQpWorkspace ws;
  DelassusProduct product;
  for (int seed = 0; seed < 20; ++seed) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 8, 2, 30, 0, 0);
    const ContactProblem problem = p.view();
    const std::vector<unsigned char> var = qp_rows(problem);
    VecX x = VecX::Zero(problem.size());
    const BoundQpResult r = solve_bound_qp(problem, var.data(), x, 1e-11, 10000, product, ws);
    INFO("seed " << seed << ": " << r.products << " products, projected gradient " << r.projected_gradient);
    REQUIRE(r.converged);
    CHECK(signorini_violation(problem, x) <= 1e-10);
    for (Index i = 0; i < problem.nc; ++i) CHECK(x.segment<2>(3 * i).norm() == 0);
    VecX reference = VecX::Zero(problem.size());
    REQUIRE(LmSolver().solve(problem, reference).converged());
    CHECK((x - reference).norm() <= 1e-8 * (1 + reference.norm()));
  }
}

TEST_CASE("MPRGP: more contacts than degrees of freedom (singular G): unique velocities", "[solvers][qp]") {
  // 30 frictionless contacts on 18 dof: G_NN has rank 18, the impulses are not unique but the
  // velocities v = G lambda + c are (the QP is convex and feasible: c is in the range of J).
  // Two solves from different starts must reach them (the KKT conditions make each optimal).
  std::mt19937 rng(32);
  BoundQpWorkspace ws;
  DelassusProduct product;
  int different_impulses = 0;
  for (int seed = 0; seed < 10; ++seed) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 30, 0, 18, 0, 0);
    const ContactProblem problem = p.view();
    const std::vector<unsigned char> var = qp_rows(problem);
    VecX x = VecX::Zero(problem.size()), y = VecX::Zero(problem.size());
    for (Index i = 0; i < problem.nc; ++i) y[3 * i + 2] = test::uniform(rng, 0, 2);
    for (VecX* start : {&x, &y}) {
      const BoundQpResult r = solve_bound_qp(problem, var.data(), *start, 1e-11, 20000, product, ws);
      INFO("seed " << seed << ": " << r.products << " products, projected gradient " << r.projected_gradient);
      REQUIRE(r.converged);
      CHECK(signorini_violation(problem, *start) <= 1e-10);
    }
    different_impulses += (x - y).norm() > 1e-3;  // different impulses ...
    const VecX vx = p.G * x + p.c, vy = p.G * y + p.c;
    for (Index i = 0; i < problem.nc; ++i) CHECK(std::abs(vx[3 * i + 2] - vy[3 * i + 2]) <= 1e-8);  // ... same motion
  }
  CHECK(different_impulses >= 3);  // (where all contacts open, or few close, the impulse is unique)
}

TEST_CASE("active set: frictionless problems with a regular G reach the unique LM solution", "[solvers][qp]") {
  std::mt19937 rng(34);
  ActiveSetWorkspace ws;
  for (int seed = 0; seed < 20; ++seed) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 8, 2, 30, 0, 0);
    const ContactProblem problem = p.view();
    const std::vector<unsigned char> var = qp_rows(problem);
    VecX x = VecX::Zero(problem.size());
    // (tangent rows hold garbage: the method must leave the rows off var alone)
    for (Index i = 0; i < problem.nc; ++i) x[3 * i] = 7.0;
    const BoundQpResult r = solve_bound_qp_exact(problem, var.data(), x, 1e-11, 1000, ws);
    INFO("seed " << seed << ": " << r.changes << " changes of the free set, projected gradient "
                 << r.projected_gradient);
    REQUIRE(r.converged);
    CHECK(r.changes <= 3 * (problem.nc + problem.nl));
    for (Index i = 0; i < problem.nc; ++i) CHECK(x[3 * i] == 7.0);
    for (Index i = 0; i < problem.nc; ++i) x[3 * i] = 0;
    CHECK(signorini_violation(problem, x) <= 1e-10);
    VecX reference = VecX::Zero(problem.size());
    REQUIRE(LmSolver().solve(problem, reference).converged());
    CHECK((x - reference).norm() <= 1e-8 * (1 + reference.norm()));
  }
}

TEST_CASE("active set: singular G (more contacts than dof), any start: the same velocities", "[solvers][qp]") {
  // G_NN has rank 18 of 30: the factor is of G_PP + eps I, and the answer must still satisfy
  // velocity Signorini to the regularization's 1e-10 |G| |x|, from the zero start and from a
  // random one, and agree with MPRGP on the velocities (unique for a convex QP)
  std::mt19937 rng(35);
  ActiveSetWorkspace ws;
  BoundQpWorkspace mprgp;
  DelassusProduct product;
  Index changes_cold = 0, changes_warm = 0;
  for (int seed = 0; seed < 10; ++seed) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 30, 0, 18, 0, 0);
    const ContactProblem problem = p.view();
    const std::vector<unsigned char> var = qp_rows(problem);
    VecX x = VecX::Zero(problem.size()), y = VecX::Zero(problem.size()), ref = VecX::Zero(problem.size());
    for (Index i = 0; i < problem.nc; ++i) y[3 * i + 2] = test::uniform(rng, 0, 2);
    REQUIRE(solve_bound_qp(problem, var.data(), ref, 1e-11, 20000, product, mprgp).converged);
    for (VecX* start : {&x, &y}) {
      const BoundQpResult r = solve_bound_qp_exact(problem, var.data(), *start, 1e-9, 1000, ws);
      INFO("seed " << seed << ": " << r.changes << " changes, projected gradient " << r.projected_gradient);
      REQUIRE(r.converged);
      CHECK(signorini_violation(problem, *start) <= 1e-9);
      (start == &x ? changes_cold : changes_warm) += r.changes;
      const VecX v = p.G * *start + p.c, v_ref = p.G * ref + p.c;
      for (Index i = 0; i < problem.nc; ++i) CHECK(std::abs(v[3 * i + 2] - v_ref[3 * i + 2]) <= 1e-8);
    }
  }
  // warm-started from the answer of a neighbouring step, the method only corrects the free set
  for (int seed = 0; seed < 5; ++seed) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 30, 0, 18, 0, 0);
    const ContactProblem problem = p.view();
    const std::vector<unsigned char> var = qp_rows(problem);
    VecX x = VecX::Zero(problem.size());
    REQUIRE(solve_bound_qp_exact(problem, var.data(), x, 1e-9, 1000, ws).converged);
    const BoundQpResult again = solve_bound_qp_exact(problem, var.data(), x, 1e-9, 1000, ws);
    REQUIRE(again.converged);
    CHECK(again.changes == 0);
  }
  WARN("active set on 30 contacts / 18 dof: " << changes_cold / 10.0 << " changes from zero, " << changes_warm / 10.0
                                              << " from a random start");
}

TEST_CASE("active set: a linear term of the caller's (the split position correction's LCP)", "[solvers][qp]") {
  // 0 <= x _|_ G x - b >= 0 with c = -b in place of the problem's c, on the singular G of 30
  // contacts on 18 dof; b = G z for an impulse z >= 0 on every third contact (push-outs that the
  // bodies can satisfy together, as penetrations of real geometry are: an arbitrary b need not
  // be reachable, and then f is unbounded below). And the overload with the problem's own c is
  // the plain call, bit for bit.
  std::mt19937 rng(37);
  ActiveSetWorkspace ws;
  for (int seed = 0; seed < 10; ++seed) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 30, 0, 18, 0, 0);
    const ContactProblem problem = p.view();
    const std::vector<unsigned char> var = qp_rows(problem);
    VecX z = VecX::Zero(problem.size());
    for (Index i = 0; i < problem.nc; i += 3) z[3 * i + 2] = test::uniform(rng, 0, 0.05);
    VecX c = -(p.G * z);
    for (Index r = 0; r < problem.size(); ++r)
      if (!var[static_cast<std::size_t>(r)]) c[r] = 0;
    VecX x = VecX::Zero(problem.size());
    const BoundQpResult r = solve_bound_qp_exact(problem, c, var.data(), x, 1e-9, 1000, ws);
    INFO("seed " << seed << ": " << r.changes << " changes, projected gradient " << r.projected_gradient);
    REQUIRE(r.converged);
    const VecX v = p.G * x + c;
    for (Index i = 0; i < problem.nc; ++i) {
      CHECK(x[3 * i + 2] >= 0);
      CHECK(v[3 * i + 2] >= -1e-9);
      CHECK(std::min(x[3 * i + 2], v[3 * i + 2]) <= 1e-9);
    }
    CHECK(x.maxCoeff() > 0);  // some targets need an impulse
    VecX a = VecX::Zero(problem.size()), b = VecX::Zero(problem.size());
    REQUIRE(solve_bound_qp_exact(problem, var.data(), a, 1e-9, 1000, ws).converged);
    REQUIRE(solve_bound_qp_exact(problem, problem.c, var.data(), b, 1e-9, 1000, ws).converged);
    CHECK(a == b);
  }
}

TEST_CASE("active set: a budget too small, or a G that cannot move anything, leaves x unchanged", "[solvers][qp]") {
  std::mt19937 rng(36);
  ActiveSetWorkspace ws;
  const test::OwnedProblem p = test::make_physical_problem(rng, 30, 0, 18, 0, 0);
  const ContactProblem problem = p.view();
  const std::vector<unsigned char> var = qp_rows(problem);
  VecX x = VecX::Zero(problem.size());
  for (Index i = 0; i < problem.nc; ++i) x[3 * i + 2] = 0.5;
  const VecX start = x;
  const BoundQpResult r = solve_bound_qp_exact(problem, var.data(), x, 1e-9, 1, ws);
  CHECK_FALSE(r.converged);
  CHECK(x == start);
  const MatX zero = MatX::Zero(problem.size(), problem.size());
  const ContactProblem none(zero, problem.c, problem.mu, problem.nc, problem.nl);
  CHECK_FALSE(solve_bound_qp_exact(none, var.data(), x, 1e-9, 1000, ws).converged);
  CHECK(x == start);
}

TEST_CASE("bisection: frictionless problems switch to the exact QP after qp_start sweeps", "[solvers][qp][bisection]") {
  std::mt19937 rng(33);
  long sweeps_qp = 0, sweeps_plain = 0;
  int converged_qp = 0, converged_plain = 0;
  for (int seed = 0; seed < 10; ++seed) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 30, 0, 18, 0, 0);
    const ContactProblem problem = p.view();
    BisectionSettings s;  // the defaults: qp_start = 50, 1000 sweeps
    VecX lambda = VecX::Zero(problem.size());
    const SolverResult with_qp = BisectionSolver(s).solve(problem, lambda);
    INFO("seed " << seed << ": " << with_qp.iterations << " sweeps and products, residual " << with_qp.residual);
    CHECK(with_qp.iterations <= s.max_iterations);  // the products use the sweep budget
    if (with_qp.converged()) {
      ++converged_qp;
      CHECK(signorini_violation(problem, lambda) <= 1e-6);
    }
    sweeps_qp += with_qp.iterations;
    s.qp_start = 0;  // the paper's sweeps alone (without the QP the problem counts as one with
    s.active_set_early = 0;  // friction: the active-set stage's early try on a crawl is kept out too)
    VecX plain = VecX::Zero(problem.size());
    const SolverResult r_plain = BisectionSolver(s).solve(problem, plain);
    converged_plain += r_plain.converged();
    sweeps_plain += r_plain.iterations;
    // problems that the sweeps finish within qp_start are untouched, bit for bit
    if (r_plain.iterations <= 50 && r_plain.converged()) CHECK(plain == lambda);
  }
  WARN("30 frictionless contacts on 18 dof: converged " << converged_qp << "/10 with the QP ("
       << sweeps_qp / 10.0 << " sweeps and products on average), " << converged_plain << "/10 without ("
       << sweeps_plain / 10.0 << ")");
  CHECK(converged_qp == 10);
  CHECK(converged_qp >= converged_plain);
  CHECK(sweeps_qp < sweeps_plain);
}
