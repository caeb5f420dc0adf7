// Box rows (joint Coulomb friction, |lambda_j| <= b_j; contact_problem.hpp) in the four solvers.
// Only box (and limit) rows on a positive definite G: the problem is the strictly convex QP
//   min 1/2 lambda^T G lambda + c^T lambda  s.t. the box and lambda_limit >= 0,
// whose unique solution every solver must find (agreement between independent methods); with
// contacts as well, bisection, PGS and LM must satisfy the Coulomb conditions of both kinds of
// rows (evaluate_residuals: each row at its exact optimum given the others) and agree.
#include <catch2/catch.hpp>

#include <random>

#include "impulse/core/error.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/pgs.hpp"
#include "impulse/solvers/solver_result.hpp"
#include "solver_test_problems.hpp"

using namespace impulse;

namespace {

// nc contacts, nl limits and nb box rows on dof > rows DOF (G positive definite); bounds chosen
// around the size of the sticking impulse so that some rows stick and some slip.
struct BoxRowsProblem {
  test::OwnedProblem p;
  Index nb = 0;
  VecX box;
  ContactProblem view() const { return ContactProblem(p.G, p.c, p.mu, p.nc, p.nl, nb, box); }
};

BoxRowsProblem make_box_problem(std::mt19937& rng, Index nc, Index nl, Index nb) {
  BoxRowsProblem b;
  b.nb = nb;
  const Index n = 3 * nc + nl + nb, dof = n + 2;
  // contacts and limits as in make_physical_problem, then nb extra rows
  b.p = test::make_physical_problem(rng, nc, nl + nb, dof, 0.3, 1.0);
  b.p.nl = nl;
  // sticking impulse of the box rows alone, -G_bb^-1 c_b, sets the scale of the bounds
  const Index r0 = 3 * nc + nl;
  const VecX stick = -b.p.G.block(r0, r0, nb, nb).ldlt().solve(b.p.c.segment(r0, nb));
  b.box.resize(nb);
  for (Index j = 0; j < nb; ++j) b.box[j] = test::uniform(rng, 0.2, 1.5) * std::abs(stick[j]) + 1e-3;
  return b;
}

// the iterative solvers converged far below their defaults (1e-6), so that agreement is exact
void tighten(ContactSolver& solver) {
  if (auto* pgs = dynamic_cast<PgsSolver*>(&solver)) {
    pgs->settings().tolerance = 1e-13;
    pgs->settings().max_iterations = 200000;
  }
  if (auto* bis = dynamic_cast<BisectionSolver*>(&solver)) {
    bis->settings().tolerance = 1e-13;
    bis->settings().max_iterations = 200000;
  }
}

}  // namespace

TEST_CASE("box rows: the four solvers find the one solution of the box QP", "[solvers][friction]") {
  std::mt19937 rng(11);
  int slipping = 0, sticking = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Index nl = trial % 3, nb = 1 + trial % 4;
    const BoxRowsProblem b = make_box_problem(rng, 0, nl, nb);
    const ContactProblem problem = b.view();
    VecX reference;
    for (const char* name : {"noslip", "lm", "bisection", "pgs"}) {
      auto solver = make_contact_solver(name);
      tighten(*solver);
      VecX lambda = VecX::Zero(problem.size());
      const SolverResult r = solver->solve(problem, lambda);
      INFO("trial " << trial << ", " << name << ": " << to_string(r.status));
      REQUIRE(r.converged());
      const ContactResiduals res = evaluate_residuals(problem, lambda);
      INFO(res.to_string());
      CHECK(res.coulomb_violation() < 1e-8);
      CHECK(res.max_dissipation < 1e-8);
      for (Index j = 0; j < nb; ++j) CHECK(std::abs(lambda[problem.first_box_row() + j]) <= b.box[j] * (1 + 1e-12));
      if (reference.size() == 0) {
        reference = lambda;
        for (Index j = 0; j < nb; ++j) {
          const bool at_bound = std::abs(lambda[problem.first_box_row() + j]) > b.box[j] * (1 - 1e-9);
          slipping += at_bound;
          sticking += !at_bound;
        }
      } else {
        CHECK((lambda - reference).lpNorm<Eigen::Infinity>() < 1e-7 * (1 + reference.lpNorm<Eigen::Infinity>()));
      }
    }
  }
  // the sample has both kinds of rows
  CHECK(slipping > 10);
  CHECK(sticking > 10);
}

TEST_CASE("box rows with contacts: Coulomb conditions on both, bisection = PGS = LM", "[solvers][friction]") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 30; ++trial) {
    const BoxRowsProblem b = make_box_problem(rng, 1 + trial % 2, trial % 2, 2);
    const ContactProblem problem = b.view();
    VecX reference;
    for (const char* name : {"lm", "bisection", "pgs"}) {
      auto solver = make_contact_solver(name);
      tighten(*solver);
      VecX lambda = VecX::Zero(problem.size());
      const SolverResult r = solver->solve(problem, lambda);
      INFO("trial " << trial << ", " << name << ": " << to_string(r.status));
      REQUIRE(r.converged());
      const ContactResiduals res = evaluate_residuals(problem, lambda);
      INFO(res.to_string());
      // (not coulomb: bisection's relaxation leaves an opening contact at lambda ~ 1e-99, where
      // the ratio lambda_T / (mu lambda_z) of that measure is rounding; max_dissipation is the
      // distance to each row's exact Coulomb optimum given the others, box rows included)
      CHECK(res.signorini() + res.cone + res.max_dissipation < 1e-6);
      if (reference.size() == 0) {
        reference = lambda;
      } else {
        CHECK((lambda - reference).lpNorm<Eigen::Infinity>() < 1e-5 * (1 + reference.lpNorm<Eigen::Infinity>()));
      }
    }
  }
}

TEST_CASE("box rows: residuals flag a wrong answer, bad bounds are rejected", "[solvers][friction]") {
  // one box row, G = 2, c = -3, bound 1: slips at lambda = 1 with v = 2 - 3 = -1 (opposes)
  MatX G(1, 1);
  G << 2;
  VecX c(1), mu(0), box(1);
  c << -3;
  box << 1;
  const ContactProblem problem(G, c, mu, 0, 0, 1, box);
  VecX right = VecX::Constant(1, 1.0), inside = VecX::Constant(1, 0.5), outside = VecX::Constant(1, 1.5);
  CHECK(evaluate_residuals(problem, right).coulomb_violation() == 0);
  CHECK(evaluate_residuals(problem, inside).coulomb > 0.5);   // inside the box but moving
  CHECK(evaluate_residuals(problem, outside).cone == Approx(0.5));
  for (const char* name : {"bisection", "pgs", "lm", "noslip"}) {
    VecX lambda = VecX::Zero(1);
    REQUIRE(make_contact_solver(name)->solve(problem, lambda).converged());
    CHECK(lambda[0] == Approx(1).epsilon(1e-12));
  }
  VecX negative(1);
  negative << -1;
  VecX lambda = VecX::Zero(1);
  CHECK_THROWS_AS(make_contact_solver("pgs")->solve(ContactProblem(G, c, mu, 0, 0, 1, negative), lambda),
                  InvalidArgument);
  const VecX empty(0);
  CHECK_THROWS_AS(make_contact_solver("pgs")->solve(ContactProblem(G, c, mu, 0, 0, 1, empty), lambda), InvalidArgument);
  // a non-finite bound is numerical trouble, not an exception
  VecX nan_box(1);
  nan_box << std::nan("");
  CHECK(make_contact_solver("pgs")->solve(ContactProblem(G, c, mu, 0, 0, 1, nan_box), lambda).status ==
        SolverStatus::NumericalIssue);
}
