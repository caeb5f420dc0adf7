// Common residual report of the contact solvers (see solver_result.hpp for the definitions).
#include "impulse/solvers/solver_result.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "impulse/core/check.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/cone.hpp"

namespace impulse {

const char* to_string(SolverStatus status) {
  switch (status) {
    case SolverStatus::Converged: return "converged";
    case SolverStatus::MaxIterations: return "max-iterations";
    case SolverStatus::NumericalIssue: return "numerical-issue";
  }
  return "unknown";
}

const char* to_string(SolverMethod method) {
  switch (method) {
    case SolverMethod::Iteration: return "iteration";
    case SolverMethod::BoundQp: return "bound-qp";
    case SolverMethod::ActiveSet: return "active-set";
    case SolverMethod::SemismoothNewton: return "semismooth-newton";
  }
  return "unknown";
}

Scalar ContactResiduals::signorini() const {
  return penetration + negative_impulse + complementarity;
}

Scalar ContactResiduals::exact_violation() const { return signorini() + cone + max_dissipation; }

Scalar ContactResiduals::coulomb_violation() const { return signorini() + cone + coulomb; }

std::string ContactResiduals::to_string() const {
  std::ostringstream os;
  os << "penetration " << penetration << " m/s, negative impulse " << negative_impulse
     << " N s, complementarity " << complementarity << ", cone " << cone << " N s, coulomb "
     << coulomb << " m/s, max dissipation " << max_dissipation << " N s, slip " << slip << " m/s";
  return os.str();
}

namespace {

// Signorini terms of one unilateral row (contact normal or limit).
void add_signorini(Scalar lambda_n, Scalar v_n, ContactResiduals& r) {
  r.penetration = std::max(r.penetration, -v_n);
  r.negative_impulse = std::max(r.negative_impulse, -lambda_n);
  r.complementarity = std::max(
      r.complementarity, std::min(std::max<Scalar>(lambda_n, 0), std::max<Scalar>(v_n, 0)));
}

}  // namespace

ContactResiduals evaluate_residuals(const ContactProblem& problem, const VecXcref& lambda) {
  IMPULSE_CHECK(lambda.size() == problem.size(), "evaluate_residuals: lambda has size ",
                lambda.size(), ", expected ", problem.size());
  IMPULSE_CHECK(problem.is_factored() || (problem.G.rows() == problem.size() && problem.G.cols() == problem.size()),
                "evaluate_residuals: G is ", problem.G.rows(), "x", problem.G.cols(), ", expected ", problem.size(),
                "x", problem.size());
  ContactResiduals r;
  // A tight per-contact bisection, so that max_dissipation measures the solver under test and
  // not the precision of the reference optimum.
  BisectionSettings exact;
  exact.bisection_tolerance = 1e-12;
  exact.max_bisection_steps = 400;
  // v = G lambda + c through the storage-independent product: a factored problem (a large
  // island: World::assembler().island(k).problem) has no dense G to read
  VecX v(problem.size());
  problem.multiply(lambda, v);
  v += problem.c;
  for (Index i = 0; i < problem.nc; ++i) {
    const Vec3 lambda_i = lambda.segment<3>(3 * i);
    const Vec3 v_i = v.segment<3>(3 * i);
    const Scalar mu = problem.mu[i];
    add_signorini(lambda_i.z(), v_i.z(), r);
    r.cone = std::max(r.cone, cone_violation(lambda_i, mu));
    r.coulomb = std::max(r.coulomb, coulomb_violation(lambda_i, v_i, mu));
    r.slip = std::max(r.slip, std::hypot(v_i.x(), v_i.y()));
    // eq. 8 with the other impulses fixed: c~_i = v_i - G_ii lambda_i
    const Mat3 G_ii = problem.contact_block(i);
    const Vec3 c_i = v_i - G_ii * lambda_i;
    const Vec3 lambda_star = solve_single_contact(G_ii, c_i, mu, exact).lambda;
    r.max_dissipation = std::max(r.max_dissipation, (lambda_star - lambda_i).norm());
  }
  for (Index j = 3 * problem.nc; j < problem.first_box_row(); ++j) {
    add_signorini(lambda[j], v[j], r);
  }
  // box rows (joint Coulomb friction): the bound, the stick/slip law and the 1-D optimum
  for (Index j = problem.first_box_row(); j < problem.size(); ++j) {
    const Scalar b = problem.box_bound(j), l = lambda[j], G_jj = problem.diagonal(j), v_j = v[j];
    r.cone = std::max(r.cone, std::abs(l) - b);
    const Scalar s = b > 0 ? std::clamp(l / b, Scalar(-1), Scalar(1)) : Scalar(0);
    r.coulomb = std::max(r.coulomb, std::abs(v_j + std::abs(v_j) * s));
    // (min/max, not std::clamp: a bad problem with b < 0 is measured, not undefined behaviour)
    const Scalar star = G_jj > 0 ? std::max(-b, std::min(b, l - v_j / G_jj)) : Scalar(0);
    r.max_dissipation = std::max(r.max_dissipation, std::abs(star - l));
  }
  return r;
}

}  // namespace impulse
