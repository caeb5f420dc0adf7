// Contact-solver settings, the solver registry, solver results and the per-step statistics of
// World.stats().
#include "bind_fields.hpp"
#include "bindings.hpp"
#include "impulse/contact/delassus_fields.hpp"
#include "impulse/core/isa.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/pgs.hpp"
#include "impulse/solvers/solver_fields.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/stepper/stepper.hpp"

namespace impulse::python {

void bind_solvers(py::module_& m) {
  py::enum_<SolverStatus>(m, "SolverStatus")
      .value("Converged", SolverStatus::Converged)
      .value("MaxIterations", SolverStatus::MaxIterations)
      .value("NumericalIssue", SolverStatus::NumericalIssue);
  py::enum_<StepStatus>(m, "StepStatus", "Outcome of one World step (the worst condition of its StepReport).")
      .value("Ok", StepStatus::Ok)
      .value("SolverNotConverged", StepStatus::SolverNotConverged)
      .value("SolverFailed", StepStatus::SolverFailed)
      .value("NonFinite", StepStatus::NonFinite)
      .value("ContactOverflow", StepStatus::ContactOverflow);

  py::enum_<SolverMethod>(m, "SolverMethod", "What finished a solve: the solver's own iterations or an exact stage.")
      .value("Iteration", SolverMethod::Iteration)
      .value("BoundQp", SolverMethod::BoundQp)
      .value("ActiveSet", SolverMethod::ActiveSet)
      .value("SemismoothNewton", SolverMethod::SemismoothNewton);
  py::class_<SolverResult>(m, "SolverResult", "Result of the last contact solve (worst over the islands).")
      .def_readonly("status", &SolverResult::status)
      .def_readonly("iterations", &SolverResult::iterations,
                    "Sweeps (bisection, pgs), linear solves (lm) or pivots (noslip).")
      .def_readonly("residual", &SolverResult::residual, "The solver's own termination measure at exit.")
      .def_readonly("stalled", &SolverResult::stalled,
                    "Sweeping solvers: stopped early on a plateau just above the tolerance (status MaxIterations).")
      .def_readonly("method", &SolverResult::method,
                    "The exact stage that finished the solve (of one island in IslandResult; the last "
                    "such island's in StepStats.solver), else Iteration.")
      .def_property_readonly("converged", &SolverResult::converged);
  py::class_<StageTimes>(m, "StageTimes", "Microseconds spent in each stage of the last step.")
      .def_readonly("dynamics", &StageTimes::dynamics)
      .def_readonly("collision", &StageTimes::collision)
      .def_readonly("delassus", &StageTimes::delassus)
      .def_readonly("solve", &StageTimes::solve)
      .def_readonly("integrate", &StageTimes::integrate)
      .def_property_readonly("total", &StageTimes::total);
  py::class_<IslandResult>(m, "IslandResult", "One island's solve in the last step (StepStats.island_results).")
      .def_readonly("systems", &IslandResult::systems, "Dynamic systems of the island.")
      .def_readonly("contacts", &IslandResult::contacts)
      .def_readonly("rows", &IslandResult::rows, "Rows of the island's contact problem.")
      .def_readonly("solver", &IslandResult::solver,
                    "The solver's result for this island: status, iterations, residual, stalled and "
                    "the method that finished it.")
      .def_property_readonly("at_cap", &IslandResult::at_cap,
                             "The iteration budget ran out (not converged and not stopped on a plateau).");
  py::class_<StepStats>(m, "StepStats", "Statistics of the last step (World.stats()).")
      .def_readonly("status", &StepStats::status)
      .def_readonly("contacts", &StepStats::contacts)
      .def_readonly("limits", &StepStats::limits, "Joint-limit rows of the contact problem.")
      .def_readonly("contacts_dropped", &StepStats::contacts_dropped,
                    "Contacts refused by the max_contacts cap (at least this many).")
      .def_readonly("islands", &StepStats::islands, "Islands with constraint rows.")
      .def_readonly("largest_island", &StepStats::largest_island, "Dynamic systems in the largest island.")
      .def_readonly("largest_island_rows", &StepStats::largest_island_rows, "Rows of the largest island's problem.")
      .def_readonly("islands_not_converged", &StepStats::islands_not_converged)
      .def_readonly("friction_rows", &StepStats::friction_rows, "Joint Coulomb friction (box) rows of the contact problem.")
      .def_readonly("mimic_rows", &StepStats::mimic_rows, "Mimic-joint couplings (equality rows) of the contact problem.")
      .def_readonly("solver", &StepStats::solver)
      .def_readonly("times", &StepStats::times)
      .def_readonly("max_penetration", &StepStats::max_penetration, "m, largest contact depth.")
      .def_readonly("restitution", &StepStats::restitution)
      .def_readonly("restitution_scale", &StepStats::restitution_scale)
      .def_readonly("position_rows", &StepStats::position_rows)
      .def_readonly("position_sweeps", &StepStats::position_sweeps,
                    "Most Gauss-Seidel sweeps of an island's split position correction (plus the "
                    "free-set changes of its exact QP).")
      .def_readonly("position_exact", &StepStats::position_exact,
                    "Islands whose split position correction went to the exact active-set QP.")
      .def_readonly("position_not_converged", &StepStats::position_not_converged,
                    "Islands whose split position correction ended at its budget unconverged.")
      .def_readonly("island_results", &StepStats::island_results,
                    "One IslandResult per island, in the order of the solve (a list).")
      .def_readonly("speculative_impacts", &StepStats::speculative_impacts,
                    "Elastic speculative contacts that stopped an approach and were re-solved as impacts.");

  // the settings classes: properties from the field tables (solver_fields.hpp)
  bind_enum<SlipModel>(m, "Friction law of the bisection solver.");
  py::class_<BisectionSettings> bisection(
      m, "BisectionSettings",
      "Hwangbo 2018 per-contact bisection (Alg. 1, 2). Each field is range-checked when set; "
      "alpha_min <= alpha when applied.");
  bisection.def(py::init<>());
  def_fields(m, bisection, bisection_fields());
  py::class_<PgsSettings> pgs(m, "PgsSettings", "Projected Gauss-Seidel. Each field is range-checked when set.");
  pgs.def(py::init<>());
  def_fields(m, pgs, pgs_fields());
  bind_enum<LmVariant>(m);
  py::class_<LmSettings> lm(m, "LmSettings",
                            "Levenberg-Marquardt on Todorov's implicit complementarity. Each field is range-checked "
                            "when set.");
  lm.def(py::init<>());
  def_fields(m, lm, lm_fields());
  py::class_<NoSlipSettings> noslip(m, "NoSlipSettings",
                                    "Drumwright's no-slip principal pivoting. Each field is range-checked when set.");
  noslip.def(py::init<>());
  def_fields(m, noslip, noslip_fields());

  py::class_<SolverSettings>(m, "SolverSettings",
                             "A solver name of the registry and the settings of every registered solver (only "
                             "those of `name` are used). World.set_contact_solver(SolverSettings) validates them "
                             "all at once; World.solver_settings reads them back.")
      .def(py::init<>())
      .def(py::init([](const std::string& name) {
             SolverSettings s;
             s.name = name;
             return s;
           }),
           py::arg("name"))
      .def_readwrite("name", &SolverSettings::name)
      .def_readwrite("bisection", &SolverSettings::bisection)
      .def_readwrite("pgs", &SolverSettings::pgs)
      .def_readwrite("lm", &SolverSettings::lm)
      .def_readwrite("noslip", &SolverSettings::noslip)
      .def("validate", &validate_solver_settings,
           "Raises InvalidArgument naming an unknown name or the first setting out of range.")
      .def("__repr__", [](const SolverSettings& s) { return "<impulse.SolverSettings '" + s.name + "'>"; });

  m.def(
      "settings_fields",
      [] {
        py::dict d;
        d["BisectionSettings"] = fields_info(bisection_fields());
        d["PgsSettings"] = fields_info(pgs_fields());
        d["LmSettings"] = fields_info(lm_fields());
        d["NoSlipSettings"] = fields_info(noslip_fields());
        d["ContactSettings"] = fields_info(contact_fields());
        return d;
      },
      "The field tables of the settings classes: {class name: [{name, type, lo, hi, lo_closed, hi_closed, unit, "
      "doc, attribute}]} (attribute: the world-file name).");
  m.def("contact_solver_names", &contact_solver_names, "Names accepted by World.set_contact_solver.");
  m.def(
      "kernel_isa", [] { return std::string(to_string(kernel_isa())); },
      "The instruction set of the step's kernels in this process: 'baseline' (x86-64) or 'x86-64-v3' (AVX2: "
      "faster, the default where the CPU has it); both give the same bits. The environment variable "
      "IMPULSE_ISA sets it at start.");
  m.def(
      "set_kernel_isa", [](const std::string& name) { set_kernel_isa(parse_kernel_isa(name, "set_kernel_isa")); },
      py::arg("name"),
      "Selects 'baseline' or 'x86-64-v3' for every World of the process (between steps). Raises InvalidArgument "
      "for another name or a CPU without AVX2 and FMA.");
  m.def(
      "kernel_isa_supported",
      [](const std::string& name) { return kernel_isa_supported(parse_kernel_isa(name, "kernel_isa_supported")); },
      py::arg("name"), "Whether this CPU runs the kernels of 'baseline' or 'x86-64-v3'.");
  m.def(
      "solver_registry",
      [] {
        py::list l;
        for (const SolverEntry& e : solver_registry()) l.append(py::make_tuple(e.name, e.summary));
        return l;
      },
      "The registered contact solvers as (name, one-line summary) pairs, in documentation order.");
}

}  // namespace impulse::python
