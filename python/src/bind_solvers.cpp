// Contact-solver settings, the solver registry, solver results and the per-step statistics of
// World.stats().
#include "bindings.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/pgs.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/stepper/stepper.hpp"

namespace impulse::python {

namespace {

// Field-by-field repr of a settings object: "PgsSettings(max_iterations=10000, ...)".
template <class T>
std::string settings_repr(const char* type, py::handle self, std::initializer_list<const char*> fields) {
  std::string out = std::string(type) + "(";
  bool first = true;
  for (const char* f : fields) {
    out += (first ? "" : ", ") + std::string(f) + "=" + py::repr(self.attr(f)).cast<std::string>();
    first = false;
  }
  return out + ")";
}

}  // namespace

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

  py::class_<SolverResult>(m, "SolverResult", "Result of the last contact solve (worst over the islands).")
      .def_readonly("status", &SolverResult::status)
      .def_readonly("iterations", &SolverResult::iterations,
                    "Sweeps (bisection, pgs), linear solves (lm) or pivots (noslip).")
      .def_readonly("residual", &SolverResult::residual, "The solver's own termination measure at exit.")
      .def_readonly("stalled", &SolverResult::stalled,
                    "Sweeping solvers: stopped early on a plateau just above the tolerance (status MaxIterations).")
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
      .def_readonly("speculative_impacts", &StepStats::speculative_impacts,
                    "Elastic speculative contacts that stopped an approach and were re-solved as impacts.");

  py::enum_<SlipModel>(m, "SlipModel", "Friction law of the bisection solver.")
      .value("Coulomb", SlipModel::Coulomb)
      .value("MinimumEnergy", SlipModel::MinimumEnergy);
  using B = BisectionSettings;
  py::class_<B>(m, "BisectionSettings", "Hwangbo 2018 per-contact bisection (Alg. 1, 2). Validated when applied.")
      .def(py::init<>())
      .def_readwrite("slip_model", &B::slip_model)
      .def_readwrite("max_iterations", &B::max_iterations)
      .def_readwrite("tolerance", &B::tolerance)
      .def_readwrite("alpha", &B::alpha)
      .def_readwrite("gamma", &B::gamma)
      .def_readwrite("alpha_min", &B::alpha_min)
      .def_readwrite("anderson_memory", &B::anderson_memory,
                     "Sweeps mixed by Anderson acceleration (5, the default; 0: off, the paper's Algorithm 2; at most 8).")
      .def_readwrite("anderson_start", &B::anderson_start, "Plain sweeps before Anderson mixing starts.")
      .def_readwrite("qp_start", &B::qp_start, "Frictionless problems (every mu = 0): sweeps before they are "
                     "solved as a QP with bounds (exactly by an active set up to 256 rows, else MPRGP); 0: never.")
      .def_readwrite("stall_window", &B::stall_window, "Sweeps without progress on a plateau near the tolerance "
                     "before stopping; 0: never.")
      .def_readwrite("beta1", &B::beta1)
      .def_readwrite("beta2", &B::beta2)
      .def_readwrite("beta3", &B::beta3)
      .def_readwrite("bisection_tolerance", &B::bisection_tolerance)
      .def_readwrite("max_bisection_steps", &B::max_bisection_steps)
      .def_readwrite("illinois", &B::illinois)
      .def_readwrite("regularization", &B::regularization)
      .def("__repr__", [](py::handle s) {
        return settings_repr<B>("BisectionSettings", s,
                                {"slip_model", "max_iterations", "tolerance", "alpha", "gamma", "alpha_min", "anderson_memory",
                                 "anderson_start", "qp_start", "stall_window", "beta1",
                                 "beta2", "beta3", "bisection_tolerance", "max_bisection_steps", "illinois",
                                 "regularization"});
      });
  py::class_<PgsSettings>(m, "PgsSettings", "Projected Gauss-Seidel. Validated when applied.")
      .def(py::init<>())
      .def_readwrite("max_iterations", &PgsSettings::max_iterations)
      .def_readwrite("tolerance", &PgsSettings::tolerance)
      .def_readwrite("alpha", &PgsSettings::alpha)
      .def_readwrite("stall_window", &PgsSettings::stall_window, "As BisectionSettings.stall_window.")
      .def_readwrite("anderson_memory", &PgsSettings::anderson_memory, "As BisectionSettings.anderson_memory.")
      .def_readwrite("anderson_start", &PgsSettings::anderson_start, "As BisectionSettings.anderson_start.")
      .def("__repr__", [](py::handle s) {
        return settings_repr<PgsSettings>("PgsSettings", s, {"max_iterations", "tolerance", "alpha", "stall_window",
                                                             "anderson_memory", "anderson_start"});
      });
  py::enum_<LmVariant>(m, "LmVariant").value("Regular", LmVariant::Regular).value("Projected", LmVariant::Projected);
  using L = LmSettings;
  py::class_<L>(m, "LmSettings", "Levenberg-Marquardt on Todorov's implicit complementarity. Validated when applied.")
      .def(py::init<>())
      .def_readwrite("variant", &L::variant)
      .def_readwrite("scale", &L::scale)
      .def_readwrite("proximal", &L::proximal)
      .def_readwrite("max_iterations", &L::max_iterations)
      .def_readwrite("tolerance", &L::tolerance)
      .def_readwrite("roundoff", &L::roundoff)
      .def_readwrite("damping", &L::damping)
      .def_readwrite("damping_step", &L::damping_step)
      .def_readwrite("damping_min", &L::damping_min)
      .def_readwrite("damping_max", &L::damping_max)
      .def_readwrite("r_min", &L::r_min)
      .def_readwrite("r_max", &L::r_max)
      .def_readwrite("sticking_start", &L::sticking_start)
      .def_readwrite("sticking_regularization", &L::sticking_regularization)
      .def_readwrite("kink_search", &L::kink_search)
      .def_readwrite("watchdog", &L::watchdog)
      .def_readwrite("restart_sweeps", &L::restart_sweeps)
      .def_readwrite("max_restarts", &L::max_restarts)
      .def_readwrite("plm_damping", &L::plm_damping)
      .def_readwrite("armijo", &L::armijo)
      .def_readwrite("backtrack", &L::backtrack)
      .def_readwrite("max_line_search", &L::max_line_search)
      .def("__repr__", [](py::handle s) {
        return settings_repr<L>("LmSettings", s,
                                {"variant", "scale", "proximal", "max_iterations", "tolerance", "roundoff", "damping",
                                 "damping_step", "damping_min", "damping_max", "r_min", "r_max", "sticking_start",
                                 "sticking_regularization", "kink_search", "watchdog", "restart_sweeps",
                                 "max_restarts", "plm_damping", "armijo", "backtrack", "max_line_search"});
      });
  py::class_<NoSlipSettings>(m, "NoSlipSettings", "Drumwright's no-slip principal pivoting. Validated when applied.")
      .def(py::init<>())
      .def_readwrite("rank_tolerance", &NoSlipSettings::rank_tolerance)
      .def_readwrite("tolerance", &NoSlipSettings::tolerance)
      .def_readwrite("max_pivots", &NoSlipSettings::max_pivots)
      .def_readwrite("verify_tolerance", &NoSlipSettings::verify_tolerance)
      .def("__repr__", [](py::handle s) {
        return settings_repr<NoSlipSettings>("NoSlipSettings", s,
                                             {"rank_tolerance", "tolerance", "max_pivots", "verify_tolerance"});
      });

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

  m.def("contact_solver_names", &contact_solver_names, "Names accepted by World.set_contact_solver.");
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
