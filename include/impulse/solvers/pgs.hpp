// Projected Gauss-Seidel: Hwangbo, Lee, Hutter, RA-L 2018, sec. IV, eq. 17-18 (after Liu & Wang
// 2005 and Studer & Glocker 2007). See src/solvers/pgs.cpp.
#pragma once

#include "impulse/solvers/anderson.hpp"
#include "impulse/solvers/contact_solver.hpp"

namespace impulse {

struct PgsSettings {
  Index max_iterations = 10000;  // sweeps (the paper reports > 20,000 at hard impacts)
  Scalar tolerance = 1e-6;       // sum |delta lambda| + sum max(0, -v_z), N s and m/s (sec. V-C)
  Scalar alpha = 0.6;            // eq. 18 step factor, constant (sec. V-C)
  Index stall_window = 20;       // sweeps without progress on a plateau near the tolerance before
                                 // stopping (SweepMonitor, solver_result.hpp); 0: never
  Index anderson_memory = 0;     // Anderson acceleration of the sweeps, as BisectionSettings (off)
  Index anderson_start = 10;
};

class PgsSolver final : public ContactSolverWithSettings<PgsSettings> {
 public:
  explicit PgsSolver(const PgsSettings& settings = PgsSettings())
      : ContactSolverWithSettings(settings) {}
  const char* name() const override { return "pgs"; }
  bool supports_factored() const override { return true; }

 protected:
  void reserve_impl(Index max_rows) override { anderson_.reserve(max_rows, settings_.anderson_memory); }
  SolverResult solve_with_active(const ContactProblem& problem, VecXref lambda) override;

 private:
  AndersonAcceleration anderson_;  // workspace only when anderson_memory > 0
  DelassusProduct product_;        // G lambda through the sweeps
};

}  // namespace impulse
