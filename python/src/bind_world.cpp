// World: settings, objects, stepping (GIL released), step reports and warnings, contacts and
// stats, and the state (WorldState: save/restore/reset/clone, bytes and files).
#include <fstream>

#include "bind_fields.hpp"
#include "bindings.hpp"
#include "impulse/collision/heightfield.hpp"
#include "impulse/contact/delassus_fields.hpp"
#include "impulse/core/file.hpp"
#include "impulse/record/recording.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/world/transition_differentiator.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"
#include "impulse/world/world_state.hpp"

namespace impulse::python {

namespace {

SystemOptions system_options(const std::string& name, bool fixed_base, bool self_collision) {
  SystemOptions o;
  o.name = name;
  o.urdf.fixed_base = fixed_base;
  o.self_collision = self_collision;
  return o;
}

// A solver of the registry with the given settings of one type: validated like the world file's
// <solver> element (InvalidArgument naming the setting), and cloneable.
template <class T>
void set_solver(World& w, const char* name, T SolverSettings::*member, const T& settings) {
  SolverSettings s;
  s.name = name;
  s.*member = settings;
  w.set_contact_solver(make_contact_solver(s));
}

// State files are binary serialize_state output; 1 GiB bounds a corrupt or wrong path.
constexpr std::size_t kMaxStateBytes = std::size_t(1) << 30;

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw Error("WorldState.save: cannot write '" + path + "'");
}

const SystemState& system_state(py::handle self, Index i) {
  const WorldState& s = self.cast<const WorldState&>();
  if (i < 0 || i >= static_cast<Index>(s.systems.size()))
    throw InvalidArgument("WorldState: system index " + std::to_string(i) + " out of range (" +
                          std::to_string(s.systems.size()) + " systems)");
  return s.systems[static_cast<std::size_t>(i)];
}

py::bytes state_bytes(const WorldState& s) { return py::bytes(serialize_state(s)); }
WorldState state_from_bytes(const py::bytes& b) { return deserialize_state(std::string(b)); }

}  // namespace

void bind_world(py::module_& m) {
  py::class_<Contact>(m, "Contact", "A contact point of the last step (normal from B into A, world frame).")
      .def_readonly("object_a", &Contact::object_a)
      .def_readonly("body_a", &Contact::body_a)
      .def_readonly("object_b", &Contact::object_b)
      .def_readonly("body_b", &Contact::body_b)
      .def_readonly("position", &Contact::position)
      .def_readonly("normal", &Contact::normal)
      .def_readonly("depth", &Contact::depth, "> 0 overlapping, < 0 apart within the margin.")
      .def_readonly("mu", &Contact::mu)
      .def_readonly("restitution", &Contact::restitution);
  py::class_<ContactReport>(m, "ContactReport", "A contact of the last step with its impulse (acting on A).")
      .def_readonly("contact", &ContactReport::contact)
      .def_readonly("impulse", &ContactReport::impulse, "N s, world frame, acting on A (-impulse on B).");
  bind_enum<RestitutionLaw>(m);
  bind_enum<PositionCorrection>(m);
  bind_enum<PositionUpdate>(m, "How q moves in a step: Euler (q+ = q + dt u+), Midpoint (exact in free flight and "
                               "single impacts; islands with resting contacts stay on Euler; free flight without PD or "
                               "damping takes Heun's second-order velocity update) or Bodies, the default (Midpoint for "
                               "free rigid bodies; for articulated systems without PD or damping in free flight only; "
                               "Euler for the others).");
  // properties from the field table (contact/delassus_fields.hpp)
  py::class_<DelassusSettings> contact(m, "ContactSettings",
                                       "Contact model settings (World.set_contact_settings). Each field is "
                                       "range-checked when set.");
  contact.def(py::init<>());
  def_fields(m, contact, contact_fields());
  py::class_<StepSettings>(m, "StepSettings", "The World's step settings (read-only copy: World.settings).")
      .def_readonly("dt", &StepSettings::dt)
      .def_readonly("contact", &StepSettings::contact)
      .def_readonly("warm_start", &StepSettings::warm_start)
      .def_readonly("max_contacts", &StepSettings::max_contacts)
      .def_readonly("stage_timing", &StepSettings::stage_timing);

  py::enum_<WarningKind>(m, "WarningKind", "Kinds of warnings a step can raise (counted per World).")
      .value("ContactOverflow", WarningKind::ContactOverflow)
      .value("SolverNotConverged", WarningKind::SolverNotConverged)
      .value("SolverFailed", WarningKind::SolverFailed)
      .value("NonFinite", WarningKind::NonFinite)
      .value("MassMatrixNotPositiveDefinite", WarningKind::MassMatrixNotPositiveDefinite);
  py::class_<WarningCounter>(m, "WarningCounter", "Steps that raised one kind of warning.")
      .def_readonly("count", &WarningCounter::count, "Steps since construction, reset() or clear_warnings().")
      .def_readonly("last_time", &WarningCounter::last_time, "World time at the start of the last such step.")
      .def_readonly("last_info", &WarningCounter::last_info,
                    "Kind-specific: contacts found (overflow), iterations (solver), system index; -1 if none.")
      .def("__repr__", [](const WarningCounter& c) {
        return "<impulse.WarningCounter count=" + std::to_string(c.count) + ">";
      });
  py::class_<StepReport>(m, "StepReport",
                         "Everything that happened in one step (World.integrate, World.last_report).\n"
                         "report == StepStatus.X compares the worst condition (report.status).")
      .def_readonly("status", &StepReport::status, "The worst condition.")
      .def_readonly("stepped", &StepReport::stepped, "False: state and time were left unchanged.")
      .def_readonly("contact_overflow", &StepReport::contact_overflow)
      .def_readonly("solver_not_converged", &StepReport::solver_not_converged)
      .def_readonly("solver_failed", &StepReport::solver_failed)
      .def_readonly("non_finite", &StepReport::non_finite, "The new state was not finite (rejected).")
      .def_readonly("mass_matrix_not_positive_definite", &StepReport::mass_matrix_not_positive_definite)
      .def_readonly("system", &StepReport::system, "System of non_finite / mass matrix failure, -1 if none.")
      .def_readonly("dof", &StepReport::dof, "Mass matrix failure: the dof whose LTDL pivot failed.")
      .def_readonly("pivot", &StepReport::pivot)
      .def_readonly("contacts", &StepReport::contacts, "Contacts used (<= max_contacts).")
      .def_readonly("limits", &StepReport::limits, "Joint-limit rows.")
      .def_readonly("solver_iterations", &StepReport::solver_iterations)
      .def_readonly("residual", &StepReport::residual, "Worst solver residual of the step.")
      .def_readonly("restitution", &StepReport::restitution)
      .def_property_readonly("ok", &StepReport::ok, "status is Ok and the step was taken.")
      .def("__eq__", [](const StepReport& r, StepStatus s) { return r.status == s; }, py::is_operator())
      .def("__ne__", [](const StepReport& r, StepStatus s) { return r.status != s; }, py::is_operator())
      .def("__repr__", [](const StepReport& r) {
        return std::string("<impulse.StepReport ") + to_string(r.status) + (r.stepped ? "" : " (not stepped)") +
               " contacts=" + std::to_string(r.contacts) + ">";
      });

  // "fd" or "analytic" (TransitionMethod), else InvalidArgument naming the argument
  const auto transition_method = [](const std::string& method) {
    if (method == "fd") return TransitionMethod::FiniteDifference;
    if (method == "analytic") return TransitionMethod::Analytic;
    throw InvalidArgument("transition_derivatives: method must be 'fd' or 'analytic', got '" + method + "'");
  };
  py::class_<TransitionDifferentiator>(
      m, "TransitionDifferentiator",
      "World.transition_derivatives kept between calls (for a controller): holds one clone of the World "
      "per thread and a thread pool (one clone for method='analytic'). compute(world) returns (A, B) at "
      "world's current state, the same bits as World.transition_derivatives.")
      .def(py::init([transition_method](const World& w, double eps, bool centered, int num_threads,
                                        const std::string& method) {
             TransitionOptions o;
             o.eps = eps;
             o.centered = centered;
             o.num_threads = num_threads;
             o.method = transition_method(method);
             return std::make_unique<TransitionDifferentiator>(w, o);
           }),
           py::arg("world"), py::arg("eps") = 1e-6, py::arg("centered") = true, py::arg("num_threads") = 1,
           py::arg("method") = "fd")
      .def(
          "compute",
          [](TransitionDifferentiator& d, const World& w) {
            const TransitionJacobians J =
                without_gil(w, "World", "transition_derivatives", [&] { return d.compute(w); });
            return py::make_tuple(J.A, J.B);
          },
          py::arg("world"), "(A, B) at the world's current state; the world is not changed.");

  py::class_<WorldState>(m, "WorldState",
                         "Everything that determines the next steps of a World (World.save_state): per system q, "
                         "u, tau, PD gains and targets, pending external wrenches; the time and the solver's "
                         "warm-start memory. Restoring it and stepping reproduces the trajectory bit for bit.\n"
                         "Read-only. to_bytes()/from_bytes() and save()/load() use the binary format of "
                         "docs/state-format.md; pickle and copy.deepcopy work.")
      .def_readonly("time", &WorldState::time)
      .def_readonly("num_objects", &WorldState::num_objects, "Collision objects of the World it came from.")
      .def_property_readonly("system_names",
                             [](const WorldState& s) {
                               std::vector<std::string> n;
                               for (const SystemState& x : s.systems) n.push_back(x.name);
                               return n;
                             })
      .def(
          "q", [](py::object self, Index i) { return view(system_state(self, i).q, self); }, py::arg("system") = 0,
          "q of system i (read-only view).")
      .def(
          "u", [](py::object self, Index i) { return view(system_state(self, i).u, self); }, py::arg("system") = 0,
          "u of system i (read-only view).")
      .def("to_bytes", &state_bytes, "The binary form (docs/state-format.md).")
      .def_static("from_bytes", &state_from_bytes, py::arg("data"),
                  "Parses the binary form; raises StateFormatError naming the problem.")
      .def(
          "save", [](const WorldState& s, const std::string& path) { write_file(path, serialize_state(s)); },
          py::arg("path"), "Writes the binary form to a file.")
      .def_static(
          "load",
          [](const std::string& path) {
            return deserialize_state(read_regular_file<StateFormatError>(path, kMaxStateBytes, "state file"));
          },
          py::arg("path"), "Reads a file written by save(); raises StateFormatError naming the file or the problem.")
      .def("__copy__", [](const WorldState& s) { return s; })
      .def("__deepcopy__", [](const WorldState& s, py::dict) { return s; }, py::arg("memo"))
      .def(py::pickle([](const WorldState& s) { return py::make_tuple(state_bytes(s)); },
                      [](const py::tuple& t) {
                        if (t.size() != 1) throw StateFormatError("WorldState pickle: expected 1 item");
                        return state_from_bytes(t[0].cast<py::bytes>());
                      }))
      .def("__repr__", [](const WorldState& s) {
        return "<impulse.WorldState time=" + py::repr(py::float_(s.time)).cast<std::string>() + " systems=" +
               std::to_string(s.systems.size()) + ">";
      });

  py::class_<World>(m, "World",
                    "The engine: dynamic systems, static geometry, materials and a contact solver, stepped at a "
                    "fixed time step (default 1 ms).\nBuild one with World() and add_* calls, World.from_file(path) "
                    "for a world file, or World.from_urdf(path) for one robot on the ground.")
      .def(py::init<>())
      .def_static(
          "from_file", [](const std::string& path) { return load_world(path); }, py::arg("path"),
          "Loads a world file (XML, docs/world-format.md); raises WorldFileError 'path:line: problem'.")
      .def_static(
          "from_urdf",
          [](const std::string& path, bool ground, bool fixed_base, const std::string& solver) {
            auto w = std::make_unique<World>();
            if (ground) w->add_ground();
            w->add_articulated_system(path, system_options("", fixed_base, false));
            w->set_contact_solver(solver);
            return w;
          },
          py::arg("path"), py::arg("ground") = true, py::arg("fixed_base") = false, py::arg("solver") = "bisection",
          "A World with one robot from a URDF file (at the origin, neutral configuration) and a ground plane.")
      // state
      .def("save_state", &World::save_state, "The full state (WorldState, a copy).")
      .def("restore_state", &World::restore_state, py::arg("state"),
           "Restores a state saved from this World or one built from the same description; raises "
           "InvalidArgument naming the first mismatch and then changes nothing.")
      .def("mark_initial_state", &World::mark_initial_state,
           "Makes the current state the one reset() returns to (otherwise the first step captures it).")
      .def("reset", &World::reset, "Returns to the initial state and clears the warnings (no-op if never stepped).")
      .def_property_readonly("has_initial_state", &World::has_initial_state)
      .def("clone", &World::clone,
           "A copy: shares the description (models, collision geometry, settings), copies the state; InvalidArgument for a custom solver instance.")
      .def("__deepcopy__", [](const World& w, py::dict) { return w.clone(); }, py::arg("memo"))
      // settings
      .def_property("time_step", &World::time_step, &World::set_time_step, "Seconds per step (validated).")
      .def_property("gravity", &World::gravity, &World::set_gravity)
      .def_property(
          "time",
          idle_copy(&World::time, "World", "time"),
          &World::set_time)
      .def("set_contact_margin", &World::set_contact_margin, py::arg("margin"))
      .def("set_contact_settings", &World::set_contact_settings, py::arg("settings"))
      .def_property_readonly("contact_settings", [](const World& w) { return w.settings().contact; },
                             "A copy; change it and pass it to set_contact_settings (validated).")
      .def_property_readonly("settings", &World::settings, "StepSettings (a copy).")
      .def("set_max_contacts", &World::set_max_contacts, py::arg("n"))
      .def_property("max_contacts", [](const World& w) { return w.settings().max_contacts; }, &World::set_max_contacts)
      .def_property(
          "stage_timing", [](const World& w) { return w.settings().stage_timing; }, &World::set_stage_timing,
          "Measure each step's stage times (stats().times; off by default: on costs 7 clock reads per step).")
      .def("set_contact_solver", py::overload_cast<const std::string&>(&World::set_contact_solver), py::arg("name"),
           "Chooses a solver by name with its default settings: 'bisection', 'pgs', 'lm', 'noslip'.")
      .def("set_contact_solver",
           [](World& w, const SolverSettings& s) { w.set_contact_solver(make_contact_solver(s)); },
           py::arg("settings"), "Chooses the solver settings.name with its settings (validated first).")
      .def("set_contact_solver",
           [](World& w, const BisectionSettings& s) { set_solver(w, "bisection", &SolverSettings::bisection, s); },
           py::arg("settings"))
      .def("set_contact_solver", [](World& w, const PgsSettings& s) { set_solver(w, "pgs", &SolverSettings::pgs, s); },
           py::arg("settings"))
      .def("set_contact_solver", [](World& w, const LmSettings& s) { set_solver(w, "lm", &SolverSettings::lm, s); },
           py::arg("settings"))
      .def("set_contact_solver",
           [](World& w, const NoSlipSettings& s) { set_solver(w, "noslip", &SolverSettings::noslip, s); },
           py::arg("settings"),
           "Chooses a solver with the given settings object (BisectionSettings, ...), validated like the world "
           "file's <solver> element: InvalidArgument naming the setting out of range.")
      .def_property_readonly("solver_settings", [](const World& w) { return solver_settings_of(w.contact_solver()); },
                             "SolverSettings of the current solver (a copy; InvalidArgument for a custom instance).")
      .def_property_readonly("contact_solver", [](const World& w) { return std::string(w.contact_solver().name()); },
                             "Name of the current contact solver.")
      .def("set_material_pair", &World::set_material_pair, py::arg("a"), py::arg("b"), py::arg("friction"),
           py::arg("restitution"))
      .def("set_default_material", &World::set_default_material, py::arg("friction"), py::arg("restitution"))
      .def(
          "set_body_inertia",
          [](World& w, Index system, const py::object& body, Scalar mass, const Vec3& com, const Mat3& inertia) {
            const Index b = py::isinstance<py::str>(body) ? w.system(system).model().body_id(body.cast<std::string>())
                                                          : body.cast<Index>();
            w.set_body_inertia(system, b, Inertia(mass, com, inertia));
          },
          py::arg("system"), py::arg("body"), py::arg("mass"), py::arg("com"), py::arg("inertia"),
          "Replaces a body's inertia (body name or index): mass (kg), centre of mass (body frame, m) and rotational "
          "inertia about it (3 x 3, kg m^2). For per-environment randomization; warm start and contacts are cleared.")
      .def("set_joint_damping", &World::set_joint_damping, py::arg("system"), py::arg("damping"),
           "Replaces a system's joint viscous damping (nv values >= 0; N m s/rad or N s/m), as URDF <dynamics "
           "damping>. For per-environment randomization; warm start and contacts are cleared.")
      .def("set_joint_friction", &World::set_joint_friction, py::arg("system"), py::arg("friction"),
           "Replaces a system's joint dry friction (nv values >= 0; N m or N; acts on one-dof joints), as URDF "
           "<dynamics friction>. For per-environment randomization; warm start and contacts are cleared.")
      // static objects
      .def("add_ground", [](World& w, Scalar h, const std::string& mat) { return w.add_ground(h, mat); },
           py::arg("height") = 0.0, py::arg("material") = "default")
      .def(
          "add_static_box",
          [](World& w, const std::string& name, const Vec3& pos, const Vec3& size, const std::string& mat) {
            return w.add_static_box(name, SE3(Mat3::Identity(), pos), size, mat);
          },
          py::arg("name"), py::arg("position"), py::arg("size"), py::arg("material") = "default")
      .def("add_wall", [](World& w, const std::string& n, const Vec3& nrm, Scalar off,
                          const std::string& mat) { return w.add_wall(n, nrm, off, mat); },
           py::arg("name"), py::arg("normal"), py::arg("offset"), py::arg("material") = "default")
      .def(
          "add_heightfield",
          [](World& w, const std::string& name, std::shared_ptr<Heightfield> terrain, const std::string& mat) {
            return w.add_heightfield(name, std::move(terrain), mat);
          },
          py::arg("name"), py::arg("terrain"), py::arg("material") = "default",
          "Adds a static heightfield terrain (impulse.Heightfield; shared, not copied).")
      .def(
          "add_static_mesh",
          [](World& w, const std::string& name, const std::string& path, const Vec3& scale, const Vec3& pos,
             const Mat3& rotation, const std::string& mat) {
            return w.add_static_mesh(name, path, scale, SE3(rotation, pos), mat);
          },
          py::arg("name"), py::arg("mesh_path"), py::arg("scale") = Vec3::Ones().eval(),
          py::arg("position") = Vec3::Zero().eval(), py::arg("rotation") = Mat3::Identity().eval(),
          py::arg("material") = "default", "Adds a static triangle-mesh terrain (any mesh file the loader reads).")
      // dynamic objects (owned by the World: the returned reference keeps the World alive)
      .def(
          "add_articulated_system",
          [](World& w, const std::string& urdf, const std::string& name, bool fixed_base, bool self_collision)
              -> ArticulatedSystem& { return w.add_articulated_system(urdf, system_options(name, fixed_base, self_collision)); },
          py::arg("urdf"), py::arg("name") = "", py::arg("fixed_base") = false, py::arg("self_collision") = false,
          py::return_value_policy::reference_internal, "Adds a robot from a URDF file.")
      .def(
          "add_articulated_system",
          [](World& w, const Model& model, const std::string& name, bool self_collision) -> ArticulatedSystem& {
            return w.add_articulated_system(model, system_options(name, false, self_collision));
          },
          py::arg("model"), py::arg("name") = "", py::arg("self_collision") = false,
          py::return_value_policy::reference_internal,
          "Adds a robot from a Model (impulse.load_urdf: its fixed_base and package_paths options apply).")
      .def(
          "add_sphere",
          [](World& w, const std::string& n, Scalar r, Scalar mass, const std::string& mat) -> ArticulatedSystem& {
            return w.add_sphere(n, r, mass, mat);
          },
          py::arg("name"), py::arg("radius"), py::arg("mass"), py::arg("material") = "default",
          py::return_value_policy::reference_internal)
      .def(
          "add_box",
          [](World& w, const std::string& n, const Vec3& size, Scalar mass, const std::string& mat) -> ArticulatedSystem& {
            return w.add_box(n, size, mass, mat);
          },
          py::arg("name"), py::arg("size"), py::arg("mass"), py::arg("material") = "default",
          py::return_value_policy::reference_internal)
      .def_property_readonly("num_systems", &World::num_systems)
      .def("system", py::overload_cast<Index>(&World::system), py::arg("index"),
           py::return_value_policy::reference_internal)
      .def("system", py::overload_cast<const std::string&>(&World::system), py::arg("name"),
           py::return_value_policy::reference_internal, "A system by index or name (InvalidArgument if absent).")
      .def_property_readonly(
          "systems",
          [](py::object self) {
            py::list l;
            for (ArticulatedSystem* s : self.cast<World&>().systems())
              l.append(py::cast(s, py::return_value_policy::reference_internal, self));
            return l;
          },
          "All dynamic systems in insertion order.")
      // stepping
      .def(
          "integrate",
          [](World& w, int steps) {
            if (steps < 0) throw InvalidArgument("World.integrate: steps must be >= 0, got " + std::to_string(steps));
            return without_gil(w, "World", "integrate", [&] {
              StepReport first_bad;
              bool bad = false;
              for (int k = 0; k < steps; ++k) {
                const StepReport r = w.integrate();
                if (!bad && !r.ok()) {
                  first_bad = r;
                  bad = true;
                }
              }
              return bad ? first_bad : steps > 0 ? w.last_report() : StepReport();
            });
          },
          py::arg("steps") = 1,
          "Advances `steps` time steps with the GIL released (all of them, whatever happens). Returns the "
          "StepReport of the first step that was not ok, else that of the last step; never raises for numerical "
          "trouble (warnings() counts every step's conditions).")
      .def(
          "transition_derivatives",
          [transition_method](const World& w, double eps, bool centered, int num_threads, const std::string& method) {
            TransitionOptions o;
            o.eps = eps;
            o.centered = centered;
            o.num_threads = num_threads;
            o.method = transition_method(method);
            const TransitionJacobians J = without_gil(w, "World", "transition_derivatives",
                                                      [&] { return w.transition_derivatives(o); });
            return py::make_tuple(J.A, J.B);
          },
          py::arg("eps") = 1e-6, py::arg("centered") = true, py::arg("num_threads") = 1, py::arg("method") = "fd",
          "Step Jacobians (A, B), by finite differences (method='fd') or analytically through the solved contact "
          "problem's active set (method='analytic': eps, centered and num_threads unused; docs/dynamics.md): A = dx+/dx (2 NV x 2 NV), B = dx+/dtau (2 NV x NV), "
          "x = [dq of every system, u of every system] (dq the tangent of q), tau the systems' generalized "
          "forces. Every hidden input (warm start, PD targets, pending wrenches) is held fixed; columns run on "
          "num_threads threads (0: one per hardware thread), each with a clone of the World, with the same bits "
          "for any count. The World is not changed.")
      .def(
          "integrate1", [](World& w) { without_gil(w, "World", "integrate1", [&] { w.integrate1(); }); },
          "First half of a step: kinematics, dynamics, collision, Delassus assembly.")
      .def(
          "integrate2", [](World& w) { return without_gil(w, "World", "integrate2", [&] { return w.integrate2(); }); },
          "Second half: solve and integrate. Returns the StepReport.")
      .def_property_readonly(
          "last_report",
          idle_copy(&World::last_report, "World", "last_report"),
          "StepReport of the last step (a copy).")
      .def(
          "describe", [](const World& w, const StepReport* r) { return w.describe(r ? *r : w.last_report()); },
          py::arg("report") = nullptr, "One line describing a report's conditions (default: the last one): 'ok' or ...")
      .def(
          "warnings",
          [](const World& w) {
            idle(w, "World", "warnings");
            py::dict d;
            for (int k = 0; k < kNumWarningKinds; ++k) {
              const auto kind = static_cast<WarningKind>(k);
              d[py::cast(kind)] = w.warning(kind);
            }
            return d;
          },
          "Per-kind warning counters {WarningKind: WarningCounter} since construction, reset() or clear_warnings().")
      .def("warning", &World::warning, py::arg("kind"))
      .def("clear_warnings", &World::clear_warnings)
      .def(
          "stats",
          idle_copy(&World::stats, "World", "stats"),
          "StepStats of the last step (a copy).")
      .def(
          "contacts",
          [](const World& w) {
            idle(w, "World", "contacts");
            return std::vector<Contact>(w.contacts().begin(), w.contacts().end());
          },
          "Contacts of the last step (copies).")
      .def("contact_reports", &World::contact_reports,
           "Contacts of the last step with their impulses (zero until a solve answered them: after "
           "integrate1 alone, or a step skipped for its mass matrix).")
      .def("object_name", &World::object_name, py::arg("collision_object"));

  m.def("load_world", [](const std::string& path) { return load_world(path); }, py::arg("path"),
        "Same as World.from_file.");

  py::class_<Recorder>(m, "Recorder",
                       "Writes a recording (docs/recording.md) of a World for `impulse view` and `impulse plot`: "
                       "the scene when opened, then one frame per record() call.\nUse as a context manager, or "
                       "call close().")
      .def(py::init<const std::string&, World&, long>(), py::arg("path"), py::arg("world"), py::arg("every") = 1,
           "Opens `path` and writes the header and the World's scene; every >= 1 keeps one record() call in "
           "`every` (InvalidArgument otherwise). Raises impulse.Error naming the file when it cannot be written.")
      .def("record", &Recorder::record, py::arg("world"),
           "Appends a frame of the World's current state (the World the recording was opened with).")
      .def("close", &Recorder::close,
           "Flushes and closes the file (idempotent); raises impulse.Error on a failed write.")
      .def_property_readonly("frames", &Recorder::frames)
      .def_property_readonly("bytes", &Recorder::bytes)
      .def_property_readonly("path", &Recorder::path)
      .def("__enter__", [](Recorder& r) -> Recorder& { return r; }, py::return_value_policy::reference)
      .def("__exit__", [](Recorder& r, py::object, py::object, py::object) { r.close(); });
}

}  // namespace impulse::python
