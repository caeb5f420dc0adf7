// SolverResult and the common residual report of every contact solver (docs/architecture.md,
// "Contact solvers").
//
// Each solver stops on its own criterion (Hwangbo 2018 Alg. 2 uses the exact constraint violation,
// PGS eq. 17 the impulse change plus penetration velocity, LM the least-squares cost of Todorov's
// residual, no-slip PPM the sign of the pivoted variables) and reports it in SolverResult::residual.
// To compare solvers on the same problem, evaluate_residuals() measures one solution against the
// physical conditions of ContactProblem, identically for all solvers. With v = G lambda + c and,
// per contact i, lambda_i = (lambda_x, lambda_y, lambda_z), v_i = (v_x, v_y, v_z):
//
//   penetration       max(0, -v_z)                       [m/s]  velocity Signorini, v_z >= 0
//   negative_impulse  max(0, -lambda_z)                  [N s]  lambda_z >= 0
//   complementarity   min(max(lambda_z,0), max(v_z,0))   [N s or m/s, whichever is smaller]
//                     the "min" natural map of lambda_z v_z = 0; zero iff one of the two is zero
//   cone              max(0, |lambda_T| - mu lambda_z)   [N s]  Coulomb cone
//   coulomb           |v_T + |v_T| lambda_T / (mu lambda_z)|   [m/s]  Coulomb's law, Hwangbo eq. 6:
//                     friction opposes slip and is on the cone boundary while slipping
//                     (lambda_T / (mu lambda_z) is clipped to the unit disc; 0 when lambda_z = 0)
//   max_dissipation   |lambda_i - lambda_i^*|            [N s]  Hwangbo eq. 8 (Preclik's maximum
//                     dissipation model): distance of each contact impulse to the exact
//                     single-contact optimum of eq. 8 with all other impulses held fixed
//                     (computed with solve_single_contact, bisection.hpp). Zero at a solution of
//                     the eq. 8 model; for a solution of the Coulomb model eq. 6 it is zero when
//                     every contact sticks or opens and small (but not zero) when contacts slip.
//   slip              |v_T| over all contacts            [m/s]  what the no-slip model promises
//
// One-row limit constraints contribute to penetration, negative_impulse and complementarity.
// Box rows (joint Coulomb friction, |lambda_j| <= b_j) contribute to cone (max(0, |lambda_j| - b_j)),
// coulomb (|v_j + |v_j| lambda_j / b_j|: v_j = 0 inside the box, v_j opposite to lambda_j at the
// bound; rad/s or m/s) and max_dissipation (distance to the exact 1-D optimum
// clamp(lambda_j - v_j / G_jj, -b_j, b_j) with the other impulses fixed), never to slip.
// Every field is the maximum over contacts (an infinity norm), so tolerances read in N s and m/s.
// exact_violation() is the sum penetration + negative_impulse + complementarity + cone +
// max_dissipation: the "exact violation of the physical constraints" of Hwangbo sec. V-C for
// the eq. 8 model (the paper sums N s and m/s terms the same way and stops at 1e-6).
#pragma once

#include <cmath>
#include <limits>
#include <string>

#include "impulse/contact/contact_problem.hpp"
#include "impulse/core/types.hpp"

namespace impulse {

enum class SolverStatus {
  Converged,       // the solver's own termination criterion was met
  MaxIterations,   // iteration budget exhausted; lambda is the last iterate (finite)
  NumericalIssue,  // non-finite values or a failed factorization; lambda was reset to zero
};

const char* to_string(SolverStatus status);

// What finished a solve: the solver's own iteration, or one of the exact stages a sweeping solver
// hands a stalled problem to (bisection.hpp: qp_start, active_set_start, newton_start).
enum class SolverMethod {
  Iteration,  // the solver's own iterations (sweeps, linear solves, pivots)
  BoundQp,    // the frictionless QP (bound_qp.hpp)
  ActiveSet,  // the active-set Newton stage (active_set.hpp)
  SemismoothNewton,  // the semismooth Newton stage (semismooth_newton.hpp)
};

const char* to_string(SolverMethod method);

struct SolverResult {
  SolverStatus status = SolverStatus::MaxIterations;
  Index iterations = 0;  // solver-specific unit: sweeps (bisection, pgs), linear solves (lm),
                         // pivots (noslip)
  Scalar residual = 0;   // the solver's own termination measure at exit (see each solver)
  bool stalled = false;  // sweeping solvers: stopped early on a plateau just above the tolerance
                         // (SweepMonitor); the status stays MaxIterations (not converged)
  SolverMethod method = SolverMethod::Iteration;  // the last exact stage that ran, if any

  bool converged() const { return status == SolverStatus::Converged; }
};

// Records the error of sweep `it` of an iterative solver: sets iterations and residual and
// returns true when the solver should stop (converged below `tolerance`, or a non-finite error).
// While it returns false the status reads MaxIterations, which is right if the budget ends.
inline bool record_sweep(SolverResult& result, Index it, Scalar error, Scalar tolerance) {
  result.iterations = it;
  result.residual = error;
  if (!std::isfinite(error)) {
    result.status = SolverStatus::NumericalIssue;
    return true;
  }
  result.status = error < tolerance ? SolverStatus::Converged : SolverStatus::MaxIterations;
  return error < tolerance;
}

// Plateau guard of the sweeping solvers (bisection, PGS). On an over-constrained island (a pile
// of spheres pressed against each other and the walls: more normal rows than degrees of freedom,
// targets from independently measured gaps) block Gauss-Seidel settles on a plateau just above
// the tolerance: in the 216-sphere pile of `impulse bench scenes` the worst contact's error went
// 1.46e-6 -> 1.26e-6 -> 1.15e-6 at sweeps 1, 100 and 1000 against a tolerance of 1e-6, with
// velocity residuals of 1e-7 m/s, every step, until the sweep cap. Sweeps there buy nothing, so
// the monitor stops (status MaxIterations, result.stalled) when the error is within
// kStallBand x tolerance and has not fallen by kStallProgress over the last `window` sweeps.
// Errors far above the tolerance keep the whole budget (a slowly converging tower still uses
// every sweep it is given). window = 0 disables the guard.
class SweepMonitor {
 public:
  static constexpr Scalar kStallBand = 10;       // plateau: error < kStallBand * tolerance
  static constexpr Scalar kStallProgress = 0.9;  // progress: best error < 0.9 * the window's start

  SweepMonitor(Scalar tolerance, Index window) : tolerance_(tolerance), window_(window) {}

  // record_sweep() plus the plateau test; true when the solver should stop.
  bool stop(SolverResult& result, Index it, Scalar error) {
    if (record_sweep(result, it, error, tolerance_)) return true;
    if (window_ <= 0) return false;
    if (error < kStallProgress * reference_) {  // progress: a new reference, a new window
      reference_ = error;
      start_ = it;
      return false;
    }
    if (it - start_ >= window_ && error < kStallBand * tolerance_) {
      result.stalled = true;
      return true;
    }
    return false;
  }

 private:
  Scalar tolerance_;
  Index window_;
  Scalar reference_ = std::numeric_limits<Scalar>::infinity();
  Index start_ = 0;
};

struct ContactResiduals {
  Scalar penetration = 0;       // m/s
  Scalar negative_impulse = 0;  // N s
  Scalar complementarity = 0;   // N s or m/s
  Scalar cone = 0;              // N s
  Scalar coulomb = 0;           // m/s
  Scalar max_dissipation = 0;   // N s
  Scalar slip = 0;              // m/s

  // Signorini (normal and limit rows): penetration, negative impulse and complementarity.
  Scalar signorini() const;
  // Hwangbo eq. 8 model: Signorini + cone + max_dissipation.
  Scalar exact_violation() const;
  // Coulomb model (eq. 6): Signorini + cone + coulomb.
  Scalar coulomb_violation() const;

  std::string to_string() const;
};

// Measures lambda against the conditions of `problem` (see the table above), dense or factored.
// A tool for tests and benchmarks: allocates its product G lambda. Throws InvalidArgument if lambda
// or a dense G has the wrong size.
ContactResiduals evaluate_residuals(const ContactProblem& problem, const VecXcref& lambda);

}  // namespace impulse
