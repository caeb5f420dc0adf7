// SweepMonitor (solver_result.hpp): the plateau guard of the sweeping solvers stops only on a
// plateau near the tolerance, never far above it, never while the error keeps falling.
#include <catch2/catch.hpp>

#include <cmath>

#include "impulse/solvers/solver_result.hpp"

using namespace impulse;

namespace {

// Feeds error(it) for it = 1..max_it; returns the sweep at which the monitor stopped (0: never).
template <class F>
Index run(SweepMonitor monitor, Index max_it, F error, SolverResult& r) {
  for (Index it = 1; it <= max_it; ++it) {
    if (monitor.stop(r, it, error(it))) return it;
  }
  return 0;
}

}  // namespace

TEST_CASE("sweep monitor: a plateau just above the tolerance stops after one window", "[solvers]") {
  SolverResult r;
  // the pile's shape: 1.46e-6 falling by ~0.02 % per sweep towards a floor of 1.15e-6 (tol 1e-6)
  const Index stopped = run(SweepMonitor(1e-6, 20), 1000,
                            [](Index it) { return 1.15e-6 + 0.31e-6 * std::exp(-2e-3 * it); }, r);
  CHECK(stopped == 21);  // the reference is set at sweep 1, the window ends 20 sweeps later
  CHECK(r.stalled);
  CHECK(r.status == SolverStatus::MaxIterations);
  CHECK_FALSE(r.converged());
}

TEST_CASE("sweep monitor: far above the tolerance the whole budget is used", "[solvers]") {
  SolverResult r;
  const Index stopped = run(SweepMonitor(1e-6, 20), 1000, [](Index) { return 1e-3; }, r);
  CHECK(stopped == 0);
  CHECK_FALSE(r.stalled);
  CHECK(r.iterations == 1000);
  CHECK(r.status == SolverStatus::MaxIterations);
}

TEST_CASE("sweep monitor: steady progress near the tolerance is not cut", "[solvers]") {
  SolverResult r;
  // 1 % per sweep (a factor 0.82 per window of 20): reaches 1e-6 from 9e-6 after ~219 sweeps
  const Index stopped = run(SweepMonitor(1e-6, 20), 1000, [](Index it) { return 9e-6 * std::pow(0.99, it); }, r);
  CHECK(stopped == 219);
  CHECK(r.converged());
  CHECK_FALSE(r.stalled);
}

TEST_CASE("sweep monitor: window 0 disables the guard; non-finite errors stop at once", "[solvers]") {
  SolverResult r;
  CHECK(run(SweepMonitor(1e-6, 0), 500, [](Index) { return 2e-6; }, r) == 0);
  CHECK_FALSE(r.stalled);
  SolverResult bad;
  CHECK(run(SweepMonitor(1e-6, 20), 500, [](Index it) { return it == 3 ? std::nan("") : 1.0; }, bad) == 3);
  CHECK(bad.status == SolverStatus::NumericalIssue);
}
