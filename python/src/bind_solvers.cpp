// Contact-solver settings, solver results and the per-step statistics of World.stats().
#include "bindings.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/pgs.hpp"
#include "impulse/stepper/stepper.hpp"

namespace impulse::python {

void bind_solvers(py::module_& m) {
  py::enum_<SolverStatus>(m, "SolverStatus")
      .value("Converged", SolverStatus::Converged)
      .value("MaxIterations", SolverStatus::MaxIterations)
      .value("NumericalIssue", SolverStatus::NumericalIssue);
  py::enum_<StepStatus>(m, "StepStatus", "Outcome of one World step.")
      .value("Ok", StepStatus::Ok)
      .value("SolverNotConverged", StepStatus::SolverNotConverged)
      .value("SolverFailed", StepStatus::SolverFailed)
      .value("NonFinite", StepStatus::NonFinite)
      .value("ContactOverflow", StepStatus::ContactOverflow);

  py::class_<SolverResult>(m, "SolverResult", "Result of the last contact solve.")
      .def_readonly("status", &SolverResult::status)
      .def_readonly("iterations", &SolverResult::iterations,
                    "Sweeps (bisection, pgs), linear solves (lm) or pivots (noslip).")
      .def_readonly("residual", &SolverResult::residual, "The solver's own termination measure at exit.")
      .def_property_readonly("converged", &SolverResult::converged);
  py::class_<StageTimes>(m, "StageTimes", "Microseconds spent in each stage of the last step.")
      .def_readonly("dynamics", &StageTimes::dynamics)
      .def_readonly("collision", &StageTimes::collision)
      .def_readonly("delassus", &StageTimes::delassus)
      .def_readonly("solve", &StageTimes::solve)
      .def_readonly("integrate", &StageTimes::integrate)
      .def_property_readonly("total", &StageTimes::total);
  py::class_<StepStats>(m, "StepStats", "Statistics of the last step (World.stats()).")
      .def_readonly("status", &StepStats::status)
      .def_readonly("contacts", &StepStats::contacts)
      .def_readonly("limits", &StepStats::limits, "Joint-limit rows of the contact problem.")
      .def_readonly("solver", &StepStats::solver)
      .def_readonly("times", &StepStats::times)
      .def_readonly("max_penetration", &StepStats::max_penetration, "m, largest contact depth.")
      .def_readonly("restitution", &StepStats::restitution)
      .def_readonly("restitution_scale", &StepStats::restitution_scale)
      .def_readonly("position_rows", &StepStats::position_rows)
      .def_readonly("position_sweeps", &StepStats::position_sweeps);

  py::class_<BisectionSettings>(m, "BisectionSettings", "Hwangbo 2018 per-contact bisection (Alg. 1, 2).")
      .def(py::init<>())
      .def_readwrite("max_iterations", &BisectionSettings::max_iterations)
      .def_readwrite("tolerance", &BisectionSettings::tolerance)
      .def_readwrite("alpha", &BisectionSettings::alpha)
      .def_readwrite("gamma", &BisectionSettings::gamma)
      .def_readwrite("alpha_min", &BisectionSettings::alpha_min);
  py::class_<PgsSettings>(m, "PgsSettings", "Projected Gauss-Seidel.")
      .def(py::init<>())
      .def_readwrite("max_iterations", &PgsSettings::max_iterations)
      .def_readwrite("tolerance", &PgsSettings::tolerance)
      .def_readwrite("alpha", &PgsSettings::alpha);
  py::enum_<LmVariant>(m, "LmVariant").value("Regular", LmVariant::Regular).value("Projected", LmVariant::Projected);
  py::class_<LmSettings>(m, "LmSettings", "Levenberg-Marquardt on Todorov's implicit complementarity.")
      .def(py::init<>())
      .def_readwrite("variant", &LmSettings::variant)
      .def_readwrite("max_iterations", &LmSettings::max_iterations)
      .def_readwrite("tolerance", &LmSettings::tolerance);
  py::class_<NoSlipSettings>(m, "NoSlipSettings", "Drumwright's no-slip principal pivoting.")
      .def(py::init<>())
      .def_readwrite("max_pivots", &NoSlipSettings::max_pivots)
      .def_readwrite("tolerance", &NoSlipSettings::tolerance);

  m.def("contact_solver_names", &contact_solver_names, "Names accepted by World.set_contact_solver.");
}

}  // namespace impulse::python
