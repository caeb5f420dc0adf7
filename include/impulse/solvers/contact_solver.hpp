// ContactSolver: the one interface behind which the four contact solvers sit (docs/architecture.md,
// "Contact solvers"; docs/solvers.md).
//
//   auto solver = make_contact_solver("bisection");   // or "pgs", "lm", "noslip"
//   solver->reserve(max_rows);                         // allocates all workspace once
//   SolverResult r = solver->solve(problem, lambda);   // lambda: warm start in, solution out
//
// After reserve(n), solve() on any problem with problem.size() <= n does no heap allocation
// (tests/solvers/test_solver_allocation.cpp guards it). A larger problem makes solve() grow the
// workspace first (one allocation, then allocation-free again), so reserve up front in hot loops.
//
// solve() validates sizes (throws InvalidArgument on a mismatch: that is a programming error) and
// never throws on numerical trouble: for non-finite G, c or mu, or if the solver produces a
// non-finite lambda, lambda is reset to zero and the status is NumericalIssue.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "impulse/contact/contact_problem.hpp"
#include "impulse/core/types.hpp"
#include "impulse/solvers/solver_result.hpp"

namespace impulse {

class ContactSolver {
 public:
  virtual ~ContactSolver() = default;

  // Short registry name ("bisection", "pgs", "lm", "noslip").
  virtual const char* name() const = 0;

  // True when solve() accepts a factored problem (ContactProblem::factored); the others are
  // given dense G (per island, contact/delassus.hpp).
  virtual bool supports_factored() const { return false; }

  // True when the solver reads only the normal row of a frictionless contact (mu = 0) whose
  // tangent impulses are 0, and keeps them 0: the assembler may then build such a contact as one
  // row, its tangent rows zero in G and c (contact/delassus.hpp, "Frictionless contacts as one
  // row"). The others are given the three-row form.
  virtual bool one_row_frictionless() const { return false; }

  // Allocates the workspace for problems of up to max_rows = 3 nc + nl rows.
  void reserve(Index max_rows);
  Index capacity() const { return capacity_; }

  // Solves `problem`; lambda (size problem.size()) holds the warm start on entry.
  SolverResult solve(const ContactProblem& problem, VecXref lambda);
  // The same with the settings of `settings`, a solver of the same type (InvalidArgument
  // otherwise), and this one's workspace: a thread's solver serves the Worlds it steps in turn,
  // each with the settings of its own solver (World::integrate(StepWorkspace&)).
  SolverResult solve(const ContactProblem& problem, VecXref lambda, const ContactSolver& settings);

 protected:
  virtual void reserve_impl(Index max_rows) = 0;
  virtual SolverResult solve_impl(const ContactProblem& problem, VecXref lambda) = 0;
  // solve_impl with the settings of `settings` (of this solver's dynamic type); a solver type
  // that does not override it has no settings to take and solves with its own.
  virtual SolverResult solve_impl(const ContactProblem& problem, VecXref lambda, const ContactSolver& settings) {
    (void)settings;
    return solve_impl(problem, lambda);
  }

 private:
  Index capacity_ = -1;
};

// A solver with a settings struct. settings() are its own; solve(problem, lambda, other) solves
// with those of `other`, a solver of the same type, in this solver's workspace. The solver's
// algorithm (solve_with_active) reads the settings of the solve under way through active().
template <class Settings>
class ContactSolverWithSettings : public ContactSolver {
 public:
  Settings& settings() { return settings_; }
  const Settings& settings() const { return settings_; }

 protected:
  explicit ContactSolverWithSettings(const Settings& settings) : settings_(settings) {}
  const Settings& active() const { return *active_; }
  virtual SolverResult solve_with_active(const ContactProblem& problem, VecXref lambda) = 0;
  SolverResult solve_impl(const ContactProblem& problem, VecXref lambda) final {
    active_ = &settings_;
    return solve_with_active(problem, lambda);
  }
  SolverResult solve_impl(const ContactProblem& problem, VecXref lambda, const ContactSolver& settings) final {
    // (the same dynamic type: ContactSolver::solve checked it)
    active_ = &static_cast<const ContactSolverWithSettings&>(settings).settings_;
    const SolverResult r = solve_with_active(problem, lambda);
    active_ = &settings_;
    return r;
  }

  Settings settings_;

 private:
  const Settings* active_ = &settings_;
};

// Names accepted by make_contact_solver, in documentation order.
const std::vector<std::string>& contact_solver_names();

// Creates a solver with its published default settings. Throws InvalidArgument for an unknown
// name; the message lists the valid names.
std::unique_ptr<ContactSolver> make_contact_solver(const std::string& name);

// True when G, c and mu[0..nc) are all finite and no box bound is NaN (+inf is an equality row);
// the non-finite guard of ContactSolver::solve.
bool problem_is_finite(const ContactProblem& problem);

// Checks the shape of a problem and of lambda; throws InvalidArgument naming the mismatch.
void check_problem(const ContactProblem& problem, const VecXcref& lambda);

}  // namespace impulse
