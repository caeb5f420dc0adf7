// After reserve(n), ContactSolver::solve on problems of up to n rows does no heap allocation.
//
// EIGEN_RUNTIME_NO_MALLOC cannot guard this: the solvers live in the compiled library (built
// without the macro) and Eigen's check is an eigen_assert, compiled out under NDEBUG. We use the
// test binary's malloc interposition instead (tests/support/alloc_counter.hpp, defined in
// tests/dynamics/test_no_alloc.cpp), which sees Eigen's and operator new's allocations.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <random>

#include "impulse/solvers/contact_solver.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "solver_test_problems.hpp"
#include "support/alloc_counter.hpp"

using namespace impulse;

TEST_CASE("contact solvers do not allocate after reserve()", "[solvers][allocation]") {
  if (!test::alloc_counter_available()) {
    WARN("allocation counting is not available in this build (sanitizer); skipped");
    return;
  }
  // the hook itself works
  test::alloc_counter_start();
  void* volatile probe = std::malloc(64);
  REQUIRE(test::alloc_counter_stop() == 1);
  std::free(probe);

  std::mt19937 rng(123);
  // problems of several sizes, all below the reserved capacity, solved in one sequence
  std::vector<test::OwnedProblem> problems;
  for (const Index nc : {4, 1, 8, 3}) problems.push_back(test::make_physical_problem(rng, nc, 2, 18, 0.2, 1.0));
  // (bisection's active-set stage keeps the pattern of the last island shape it factored, so
  // these four shapes in turn would each factor anew: its early try on a crawl, which these
  // random problems reach, is kept out; the stage's steady state is tested in
  // tests/stepper/test_resting_stack.cpp)
  for (const std::string& name : contact_solver_names()) {
    SolverSettings settings;
    settings.name = name;
    settings.bisection.active_set_early = 0;
    auto solver = make_contact_solver(settings);
    solver->reserve(3 * 8 + 2 + 3);  // more than the largest problem: exercises partial use
    std::vector<VecX> lambdas;
    for (const auto& p : problems) lambdas.push_back(VecX::Zero(p.view().size()));
    std::vector<ContactProblem> views;
    for (const auto& p : problems) views.push_back(p.view());
    long allocations = 0;
    for (int repeat = 0; repeat < 2; ++repeat) {  // cold and warm-started solves
      for (std::size_t k = 0; k < views.size(); ++k) {
        test::alloc_counter_start();
        const SolverResult r = solver->solve(views[k], lambdas[k]);
        allocations += test::alloc_counter_stop();
        INFO(name << ", problem " << k << ": " << to_string(r.status));
        CHECK(r.status != SolverStatus::NumericalIssue);
      }
    }
    INFO(name);
    CHECK(allocations == 0);
  }
  // the sweeping solvers with Anderson acceleration mixing from the second sweep on
  for (const std::string name : {"bisection", "pgs"}) {
    SolverSettings s;
    s.name = name;
    s.bisection.anderson_memory = s.pgs.anderson_memory = 5;
    s.bisection.anderson_start = s.pgs.anderson_start = 1;
    s.bisection.active_set_early = 0;
    auto solver = make_contact_solver(s);
    solver->reserve(3 * 8 + 2 + 3);
    long allocations = 0, sweeps = 0;
    for (int repeat = 0; repeat < 2; ++repeat) {
      for (const auto& p : problems) {
        VecX lambda = VecX::Zero(p.view().size());
        const ContactProblem view = p.view();
        test::alloc_counter_start();
        const SolverResult r = solver->solve(view, lambda);
        allocations += test::alloc_counter_stop();
        sweeps += r.iterations;
      }
    }
    INFO(name << " with Anderson acceleration, " << sweeps << " sweeps");
    CHECK(sweeps > 2 * static_cast<long>(problems.size()) * 2);  // mixing did run
    CHECK(allocations == 0);
  }
  // growing beyond the capacity allocates once, and is allocation-free again afterwards
  auto solver = make_contact_solver("lm");
  solver->reserve(6);
  VecX lambda = VecX::Zero(problems[0].view().size());
  test::alloc_counter_start();
  solver->solve(problems[0].view(), lambda);
  CHECK(test::alloc_counter_stop() > 0);
  CHECK(solver->capacity() == problems[0].view().size());
  lambda.setZero();
  test::alloc_counter_start();
  solver->solve(problems[0].view(), lambda);
  CHECK(test::alloc_counter_stop() == 0);
}
