// ContactSolver base (argument checks, workspace growth, non-finite guard) and the factory.
#include "impulse/solvers/contact_solver.hpp"

#include <typeinfo>

#include <cmath>

#include "impulse/core/check.hpp"
#include "impulse/core/finite.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/pgs.hpp"

namespace impulse {

void check_problem(const ContactProblem& problem, const VecXcref& lambda) {
  const Index n = problem.size();
  IMPULSE_CHECK(problem.nc >= 0 && problem.nl >= 0 && problem.nb >= 0, "ContactProblem: negative counts nc = ",
                problem.nc, ", nl = ", problem.nl, ", nb = ", problem.nb);
  IMPULSE_CHECK(problem.is_factored() || (problem.G.rows() == n && problem.G.cols() == n), "ContactProblem: G is ",
                problem.G.rows(), "x", problem.G.cols(), ", expected ", n, "x", n,
                " (3 nc + nl + nb with nc = ", problem.nc, ", nl = ", problem.nl, ", nb = ", problem.nb, ")");
  IMPULSE_CHECK(problem.c.size() == n, "ContactProblem: c has size ", problem.c.size(),
                ", expected ", n);
  IMPULSE_CHECK(problem.mu.size() >= problem.nc, "ContactProblem: mu has size ",
                problem.mu.size(), ", expected at least nc = ", problem.nc);
  IMPULSE_CHECK(problem.box.size() >= problem.nb, "ContactProblem: box has size ", problem.box.size(),
                ", expected at least nb = ", problem.nb);
  for (Index j = 0; j < problem.nb; ++j) {
    IMPULSE_CHECK(!(problem.box[j] < 0), "ContactProblem: box bound ", j, " is ", problem.box[j],
                  ", expected a number >= 0");
  }
  IMPULSE_CHECK(lambda.size() == n, "contact solver: lambda has size ", lambda.size(),
                ", expected ", n);
}

void ContactSolver::reserve(Index max_rows) {
  IMPULSE_CHECK(max_rows >= 0, "ContactSolver::reserve: negative size ", max_rows);
  reserve_impl(max_rows);
  capacity_ = max_rows;
}

bool problem_is_finite(const ContactProblem& problem) {
  // box bounds may be +inf (equality rows: mimic joints), never NaN (check_problem: none < 0)
  const bool box_ok = !problem.box.head(problem.nb).hasNaN();
  Scalar s[4] = {0, 0, 0, 0};
  if (problem.is_factored()) {  // the diagonal blocks, and every entry in use of Y and D^-1 Y
                                // unless the blocks cover them (ContactProblem::diagonal_covers)
    const FactoredG& F = *problem.factored;
    const Index ng = problem.nc + problem.nl + problem.nb;
    for (Index g = 0; g < ng; ++g) {
      add_zero_times(F.diag[g].data(), 9, 1, s);
      if (problem.diagonal_covers) continue;  // (the blocks are sums of the pieces' squares)
      for (Index k = F.begin[g]; k < F.begin[g + 1]; ++k) {
        const FactoredPiece& p = F.piece[k];
        // a contact side's 3 rows are contiguous; a one-row piece uses 1 value of every 3
        const Index n = p.nrows == 3 ? 3 * p.len : p.len, stride = p.nrows == 3 ? 1 : 3;
        add_zero_times(F.Y + 3 * p.y, n, stride, s);
        add_zero_times(F.DY + 3 * p.y, n, stride, s);
      }
    }
  } else if (problem.diagonal_covers) {  // (see ContactProblem::diagonal_covers)
    add_zero_times(problem.G.data(), problem.G.rows(), problem.G.outerStride() + 1, s);
  } else {
    for (Index j = 0; j < problem.G.cols(); ++j)
      add_zero_times(problem.G.col(j).data(), problem.G.rows(), 1, s);
  }
  // c and mu into the same sums: one test for all (Eigen's allFinite() per vector took more)
  add_zero_times(problem.c.data(), problem.c.size(), problem.c.innerStride(), s);
  add_zero_times(problem.mu.data(), problem.nc, problem.mu.innerStride(), s);
  return box_ok && zero_times_finite(s);
}

SolverResult ContactSolver::solve(const ContactProblem& problem, VecXref lambda) { return solve(problem, lambda, *this); }

SolverResult ContactSolver::solve(const ContactProblem& problem, VecXref lambda, const ContactSolver& settings) {
  IMPULSE_CHECK(&settings == this || typeid(settings) == typeid(*this), "contact solver '", name(),
                "' cannot solve with the settings of solver '", settings.name(), "'");
  check_problem(problem, lambda);
  IMPULSE_CHECK(!problem.is_factored() || supports_factored(), "contact solver '", name(),
                "' needs a dense G; it was given a factored problem");
  if (problem.size() > capacity_) reserve(problem.size());
  if (problem.size() == 0) {
    SolverResult empty;
    empty.status = SolverStatus::Converged;
    return empty;
  }
  if (!lambda.allFinite()) lambda.setZero();  // a poisoned warm start is worse than none
  // Non-finite input: solvers compare with max/min, which would silently drop NaNs.
  if (!problem_is_finite(problem)) {
    lambda.setZero();
    SolverResult bad;
    bad.status = SolverStatus::NumericalIssue;
    return bad;
  }
  SolverResult result = &settings == this ? solve_impl(problem, lambda) : solve_impl(problem, lambda, settings);
  if (!lambda.allFinite()) {
    lambda.setZero();
    result.status = SolverStatus::NumericalIssue;
  }
  return result;
}

// contact_solver_names() and make_contact_solver(name) live in solver_registry.cpp.

}  // namespace impulse
