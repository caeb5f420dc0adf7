// After reserve(n), ContactSolver::solve on problems of up to n rows does no heap allocation.
//
// EIGEN_RUNTIME_NO_MALLOC cannot guard this: the solvers live in the compiled library (built
// without the macro) and Eigen's check is an eigen_assert, compiled out under NDEBUG. Instead
// this translation unit interposes malloc/calloc/realloc for the whole test binary (glibc:
// forwarding to __libc_*) and counts calls while `g_counting` is set. Eigen allocates through
// malloc, and operator new does too in libstdc++. Skipped under AddressSanitizer, which owns
// malloc itself.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <random>

#include "impulse/solvers/contact_solver.hpp"
#include "solver_test_problems.hpp"

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define IMPULSE_COUNT_MALLOC 1
namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t n, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);

void* malloc(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  return __libc_realloc(p, size);
}
}
#endif

using namespace impulse;

TEST_CASE("contact solvers do not allocate after reserve()", "[solvers][allocation]") {
#ifndef IMPULSE_COUNT_MALLOC
  WARN("allocation counting needs glibc without AddressSanitizer; skipped");
#else
  // the hook itself works
  g_allocations = 0;
  g_counting = true;
  void* volatile probe = std::malloc(64);
  g_counting = false;
  std::free(probe);
  REQUIRE(g_allocations == 1);

  std::mt19937 rng(123);
  // problems of several sizes, all below the reserved capacity, solved in one sequence
  std::vector<test::OwnedProblem> problems;
  for (const Index nc : {4, 1, 8, 3}) problems.push_back(test::make_physical_problem(rng, nc, 2, 18, 0.2, 1.0));
  for (const std::string& name : contact_solver_names()) {
    auto solver = make_contact_solver(name);
    solver->reserve(3 * 8 + 2 + 3);  // more than the largest problem: exercises partial use
    std::vector<VecX> lambdas;
    for (const auto& p : problems) lambdas.push_back(VecX::Zero(p.view().size()));
    std::vector<ContactProblem> views;
    for (const auto& p : problems) views.push_back(p.view());
    long allocations = 0;
    for (int repeat = 0; repeat < 2; ++repeat) {  // cold and warm-started solves
      for (std::size_t k = 0; k < views.size(); ++k) {
        g_allocations = 0;
        g_counting = true;
        const SolverResult r = solver->solve(views[k], lambdas[k]);
        g_counting = false;
        allocations += g_allocations;
        INFO(name << ", problem " << k << ": " << to_string(r.status));
        CHECK(r.status != SolverStatus::NumericalIssue);
      }
    }
    INFO(name);
    CHECK(allocations == 0);
  }
  // growing beyond the capacity allocates once, and is allocation-free again afterwards
  auto solver = make_contact_solver("lm");
  solver->reserve(6);
  VecX lambda = VecX::Zero(problems[0].view().size());
  g_allocations = 0;
  g_counting = true;
  solver->solve(problems[0].view(), lambda);
  g_counting = false;
  CHECK(g_allocations > 0);
  CHECK(solver->capacity() == problems[0].view().size());
  lambda.setZero();
  g_allocations = 0;
  g_counting = true;
  solver->solve(problems[0].view(), lambda);
  g_counting = false;
  CHECK(g_allocations == 0);
#endif
}
