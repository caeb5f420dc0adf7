// World: settings, objects, stepping (GIL released), contacts and stats.
#include "bindings.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/pgs.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"

namespace impulse::python {

namespace {

SystemOptions system_options(const std::string& name, bool fixed_base, bool self_collision) {
  SystemOptions o;
  o.name = name;
  o.urdf.fixed_base = fixed_base;
  o.self_collision = self_collision;
  return o;
}

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
  py::enum_<RestitutionLaw>(m, "RestitutionLaw").value("Newton", RestitutionLaw::Newton).value("Poisson", RestitutionLaw::Poisson);
  py::enum_<PositionCorrection>(m, "PositionCorrection")
      .value("Velocity", PositionCorrection::Velocity)
      .value("Split", PositionCorrection::Split);
  py::class_<DelassusSettings>(m, "ContactSettings", "Contact model settings (World.set_contact_settings).")
      .def(py::init<>())
      .def_readwrite("restitution_law", &DelassusSettings::restitution_law)
      .def_readwrite("position_correction", &DelassusSettings::position_correction)
      .def_readwrite("restitution_threshold", &DelassusSettings::restitution_threshold)
      .def_readwrite("erp", &DelassusSettings::erp)
      .def_readwrite("slop", &DelassusSettings::slop)
      .def_readwrite("limit_margin", &DelassusSettings::limit_margin)
      .def_readwrite("joint_limits", &DelassusSettings::joint_limits);

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
      // settings
      .def_property("time_step", &World::time_step, &World::set_time_step, "Seconds per step (validated).")
      .def_property("gravity", &World::gravity, &World::set_gravity)
      .def_property("time", &World::time, &World::set_time)
      .def("set_contact_margin", &World::set_contact_margin, py::arg("margin"))
      .def("set_contact_settings", &World::set_contact_settings, py::arg("settings"))
      .def_property_readonly("contact_settings", [](const World& w) { return w.settings().contact; })
      .def("set_max_contacts", &World::set_max_contacts, py::arg("n"))
      .def("set_contact_solver", py::overload_cast<const std::string&>(&World::set_contact_solver), py::arg("name"),
           "Chooses a solver by name with its default settings: 'bisection', 'pgs', 'lm', 'noslip'.")
      .def("set_contact_solver",
           [](World& w, const BisectionSettings& s) { w.set_contact_solver(std::make_unique<BisectionSolver>(s)); },
           py::arg("settings"))
      .def("set_contact_solver", [](World& w, const PgsSettings& s) { w.set_contact_solver(std::make_unique<PgsSolver>(s)); },
           py::arg("settings"))
      .def("set_contact_solver", [](World& w, const LmSettings& s) { w.set_contact_solver(std::make_unique<LmSolver>(s)); },
           py::arg("settings"))
      .def("set_contact_solver",
           [](World& w, const NoSlipSettings& s) { w.set_contact_solver(std::make_unique<NoSlipSolver>(s)); },
           py::arg("settings"), "Chooses a solver with the given settings object (BisectionSettings, ...).")
      .def_property_readonly("contact_solver", [](const World& w) { return std::string(w.contact_solver().name()); },
                             "Name of the current contact solver.")
      .def("set_material_pair", &World::set_material_pair, py::arg("a"), py::arg("b"), py::arg("friction"),
           py::arg("restitution"))
      .def("set_default_material", &World::set_default_material, py::arg("friction"), py::arg("restitution"))
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
      // dynamic objects (owned by the World: the returned reference keeps the World alive)
      .def(
          "add_articulated_system",
          [](World& w, const std::string& urdf, const std::string& name, bool fixed_base, bool self_collision)
              -> ArticulatedSystem& { return w.add_articulated_system(urdf, system_options(name, fixed_base, self_collision)); },
          py::arg("urdf"), py::arg("name") = "", py::arg("fixed_base") = false, py::arg("self_collision") = false,
          py::return_value_policy::reference_internal, "Adds a robot from a URDF file.")
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
            StepStatus worst = StepStatus::Ok;
            py::gil_scoped_release release;
            for (int k = 0; k < steps; ++k) {
              const StepStatus s = w.integrate();
              if (s != StepStatus::Ok && worst == StepStatus::Ok) worst = s;
            }
            return worst;
          },
          py::arg("steps") = 1,
          "Advances `steps` time steps with the GIL released. Returns the first non-Ok status (Ok if none); "
          "never raises for numerical trouble.")
      .def("integrate1", &World::integrate1, py::call_guard<py::gil_scoped_release>(),
           "First half of a step: kinematics, dynamics, collision, Delassus assembly.")
      .def("integrate2", &World::integrate2, py::call_guard<py::gil_scoped_release>(),
           "Second half: solve and integrate.")
      .def("stats", &World::stats, "StepStats of the last step (a copy).")
      .def(
          "contacts",
          [](const World& w) { return std::vector<Contact>(w.contacts().begin(), w.contacts().end()); },
          "Contacts of the last step (copies).")
      .def("contact_reports", &World::contact_reports, "Contacts of the last step with their impulses.")
      .def("object_name", &World::object_name, py::arg("collision_object"));

  m.def("load_world", [](const std::string& path) { return load_world(path); }, py::arg("path"),
        "Same as World.from_file.");
}

}  // namespace impulse::python
