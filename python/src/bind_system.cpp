// ArticulatedSystem: one robot or free body of a World. State arrays (q, u, tau, gains, targets)
// are read-only numpy views of the engine's memory (no copy); writes go through the setters, which
// validate like the C++ ones (size, NaN/Inf, unit quaternion) and raise InvalidArgument with the
// engine's message, changing nothing.
#include <memory>

#include "bindings.hpp"
#include "impulse/world/articulated_system.hpp"

namespace impulse::python {

namespace {

// A property getter: the read-only view of one of a system's state vectors, refused while another
// thread steps its World.
auto state_view(const VecX& (ArticulatedSystem::*get)() const, const char* name) {
  return [get, name](py::object self) {
    const ArticulatedSystem& s = self.cast<const ArticulatedSystem&>();
    idle(s, "ArticulatedSystem", name);
    return view((s.*get)(), self);
  };
}

}  // namespace

void bind_system(py::module_& m) {
  py::class_<BodyContactImpulse>(m, "BodyContactImpulse", "A contact impulse on one body in the last step (world frame).")
      .def_readonly("body", &BodyContactImpulse::body)
      .def_readonly("position", &BodyContactImpulse::position)
      .def_readonly("impulse", &BodyContactImpulse::impulse, "N s, acting on this body.")
      .def_readonly("contact", &BodyContactImpulse::contact, "Index in World.contacts().")
      .def_property_readonly("touching", &BodyContactImpulse::touching,
                             "Whether it carried an impulse (contacts within the margin that did not touch are "
                             "listed with a zero impulse).");

  using S = ArticulatedSystem;
  py::class_<S>(m, "ArticulatedSystem",
                "A robot (from URDF) or a free rigid body of a World, owned by the World.\n"
                "Array properties are read-only views of the engine's state; use the set_* methods to write.")
      .def_property_readonly("name", &S::name)
      // a Model shared with the system: World.set_body_inertia and set_joint_* replace the system's
      // Model, and the Python object must keep the one it was handed alive (read-only members)
      .def_property_readonly("model", [](const S& s) { return std::const_pointer_cast<Model>(s.shared_model()); })
      .def_property_readonly("nq", &S::nq)
      .def_property_readonly("nv", &S::nv)
      // state
      .def_property_readonly("q", state_view(&S::q, "q"),
                             "Generalized position (read-only view, size nq).")
      .def_property_readonly("u", state_view(&S::u, "u"),
                             "Generalized velocity (read-only view, size nv).")
      .def("set_q", &S::set_q, py::arg("q"), "Sets q (size nq, finite, unit base quaternion).")
      .def("set_u", &S::set_u, py::arg("u"), "Sets u (size nv, finite).")
      .def("set_state", &S::set_state, py::arg("q"), py::arg("u"), "Sets q and u together (all or nothing).")
      // inputs
      .def_property_readonly("generalized_force",
                             state_view(&S::generalized_force, "generalized_force"),
                             "Explicit generalized force tau (layout of u), held until changed.")
      .def("set_generalized_force", &S::set_generalized_force, py::arg("tau"))
      .def("set_pd_gains", &S::set_pd_gains, py::arg("kp"), py::arg("kd"),
           "Implicit joint PD gains (layout of u; zero on the floating base and spherical joints).")
      .def("set_pd_targets", &S::set_pd_targets, py::arg("q_target"), py::arg("u_target"),
           "PD targets: q_target in the layout of q, u_target in that of u.")
      .def_property_readonly("kp", state_view(&S::kp, "kp"))
      .def_property_readonly("kd", state_view(&S::kd, "kd"))
      .def_property_readonly("q_target", state_view(&S::q_target, "q_target"))
      .def_property_readonly("u_target", state_view(&S::u_target, "u_target"))
      .def_property_readonly("applied_torque",
                             state_view(&S::applied_torque, "applied_torque"),
                             "Actuator torque applied in the last step (layout of u, read-only view): the explicit "
                             "force plus the PD torque at the end of the step, within the URDF effort limit.")
      .def_property_readonly("joint_friction_torque",
                             state_view(&S::joint_friction_torque, "joint_friction_torque"),
                             "Joint Coulomb friction torque of the last step (layout of u, read-only view): the "
                             "friction row's impulse / dt, within the URDF <dynamics friction> bound.")
      .def("set_external_force", &S::set_external_force, py::arg("body"), py::arg("force"), py::arg("point"),
           "World-frame force at a world point on a body, for the next step only.")
      .def("set_external_torque", &S::set_external_torque, py::arg("body"), py::arg("torque"),
           "World-frame torque on a body, for the next step only.")
      .def("clear_external_forces", &S::clear_external_forces)
      // queries
      .def("mass_matrix", &S::mass_matrix, "Joint-space inertia M(q) (nv x nv copy, armature included).")
      .def("nonlinear_effects", &S::nonlinear_effects, "h(q, u): Coriolis, centrifugal and gravity forces.")
      .def("body_pose", [](const S& s, Index b) { return to_matrix(s.body_pose(b)); }, py::arg("body"),
           "World pose of a body as a 4x4 homogeneous transform.")
      .def("frame_pose", [](const S& s, const std::string& f) { return to_matrix(s.frame_pose(f)); },
           py::arg("frame"), "World pose of a named frame as a 4x4 homogeneous transform.")
      .def("frame_position", [](const S& s, const std::string& f) { return Vec3(s.frame_pose(f).p); },
           py::arg("frame"))
      .def("frame_rotation", [](const S& s, const std::string& f) { return Mat3(s.frame_pose(f).R); },
           py::arg("frame"))
      .def("frame_linear_velocity", &S::frame_linear_velocity, py::arg("frame"),
           "Velocity of the frame origin, world frame.")
      .def("frame_angular_velocity", &S::frame_angular_velocity, py::arg("frame"), "World frame.")
      .def("frame_jacobian", &S::frame_jacobian, py::arg("frame"),
           "6 x nv Jacobian of the frame, world frame, rows [linear; angular].")
      .def("point_jacobian", &S::point_jacobian, py::arg("body"), py::arg("point_in_body"),
           "3 x nv Jacobian of a point fixed in a body, world frame.")
      .def("kinetic_energy", &S::kinetic_energy)
      .def("potential_energy", &S::potential_energy)
      .def("center_of_mass", &S::center_of_mass)
      .def(
          "contact_impulses",
          idle_copy(&S::contact_impulses, "ArticulatedSystem", "contact_impulses"),
          "Contact impulses on this system's bodies in the last step.")
      // collision filtering
      .def("set_collision_filter", &S::set_collision_filter, py::arg("group"), py::arg("mask"))
      .def("set_body_collision_filter", &S::set_body_collision_filter, py::arg("body"), py::arg("group"),
           py::arg("mask"))
      .def("set_self_collision", &S::set_self_collision, py::arg("enabled"))
      .def("__repr__", [](const S& s) {
        return "<impulse.ArticulatedSystem '" + s.name() + "' nq=" + std::to_string(s.nq()) +
               " nv=" + std::to_string(s.nv()) + ">";
      });
}

}  // namespace impulse::python
