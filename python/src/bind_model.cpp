// Model: the immutable description of one articulated system, read-only from Python.
#include <memory>

#include "bindings.hpp"
#include "impulse/core/check.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/model/model.hpp"

namespace impulse::python {

void bind_model(py::module_& m) {
  py::class_<Model, std::shared_ptr<Model>>(m, "Model",
                                            "Immutable description of an articulated system (a kinematic tree).\n"
                                            "Bodies in depth-first order; q = [x y z qw qx qy qz joints...] for a "
                                            "floating base, u = [v w joints...] (world frame).")
      .def_readonly("name", &Model::name)
      .def_readonly("nq", &Model::nq, "Size of q.")
      .def_readonly("nv", &Model::nv, "Size of u and of tau.")
      .def_readonly("nb", &Model::nb, "Number of bodies (= joints, fixed root included).")
      .def_readonly("floating_base", &Model::floating_base)
      .def_readonly("body_names", &Model::body_names)
      .def_readonly("joint_names", &Model::joint_names)
      .def_property_readonly(
          "frame_names",
          [](const Model& mo) {
            std::vector<std::string> n;
            for (const Frame& f : mo.frames) n.push_back(f.name);
            return n;
          },
          "Every named frame: URDF links (merged or not) and joints.")
      .def_readonly("parent", &Model::parent, "Parent body of each body (-1: the world).")
      .def_readonly("idx_q", &Model::idx_q, "First coordinate of each joint in q.")
      .def_readonly("idx_v", &Model::idx_v, "First coordinate of each joint in u.")
      .def_readonly("lower_position", &Model::lower_position, "Lower position limits (size nq, -inf: none).")
      .def_readonly("upper_position", &Model::upper_position, "Upper position limits (size nq, +inf: none).")
      .def_readonly("velocity_limit", &Model::velocity_limit, "Velocity limits (size nv, +inf: none).")
      .def_readonly("effort_limit", &Model::effort_limit, "Effort limits (size nv, +inf: none).")
      .def_readonly("damping", &Model::damping)
      .def_readonly("friction", &Model::friction)
      .def_readonly("armature", &Model::armature)
      .def_property_readonly(
          "mimic",
          [](const Model& mo) {
            py::list out;
            for (const MimicJoint& mj : mo.mimic) {
              out.append(py::make_tuple(mo.joint_names[static_cast<std::size_t>(mj.joint)],
                                        mo.joint_names[static_cast<std::size_t>(mj.master)], mj.multiplier, mj.offset));
            }
            return out;
          },
          "Mimic couplings as (joint, master, multiplier, offset): q_joint = multiplier q_master + offset, "
          "enforced by the stepper (ContactSettings.mimic_joints).")
      .def("body_id", &Model::body_id, py::arg("name"), "Index of a body; raises InvalidArgument if absent.")
      .def("joint_id", &Model::joint_id, py::arg("name"), "Index of a joint; raises InvalidArgument if absent.")
      .def("frame_id", &Model::frame_id, py::arg("name"), "Index of a frame; raises InvalidArgument if absent.")
      .def("total_mass", &Model::total_mass)
      .def(
          "body_inertia",
          [](const Model& m, const py::object& body) {
            const Index b = py::isinstance<py::str>(body) ? m.body_id(body.cast<std::string>()) : body.cast<Index>();
            if (b < 0 || b >= m.nb)
              throw InvalidArgument("body_inertia: body index " + std::to_string(b) + " out of range (" +
                                    std::to_string(m.nb) + " bodies)");
            const Inertia& I = m.inertia[static_cast<std::size_t>(b)];
            return py::make_tuple(I.m, Vec3(I.c), Mat3(I.Ic));
          },
          py::arg("body"),
          "(mass, centre of mass (body frame), rotational inertia about it) of a body (name or index), fixed "
          "children merged.")
      .def("neutral_configuration", &Model::neutral_configuration,
           "Zero joints, identity base orientation, origin position.")
      .def(
          "__eq__", [](const Model& a, const Model& b) { return a == b; }, py::is_operator(),
          "Equal descriptions (every member, value for value). A World shares one Model between the "
          "systems whose descriptions are equal.")
      .def(
          "__ne__", [](const Model& a, const Model& b) { return a != b; }, py::is_operator())
      .def("__repr__", [](const Model& mo) {
        return "<impulse.Model '" + mo.name + "' nq=" + std::to_string(mo.nq) + " nv=" + std::to_string(mo.nv) +
               " bodies=" + std::to_string(mo.nb) + ">";
      });

  m.def(
      "load_urdf",
      [](const std::string& path, bool fixed_base, const std::vector<std::string>& package_paths,
         const std::string& mesh_collision) {
        IMPULSE_CHECK(mesh_collision == "convex_hull" || mesh_collision == "triangles", "load_urdf: mesh_collision '",
                      mesh_collision, "' is not one of convex_hull, triangles");
        UrdfOptions o;
        o.fixed_base = fixed_base;
        o.package_paths = package_paths;
        o.mesh_collision = mesh_collision == "triangles" ? MeshCollision::Triangles : MeshCollision::ConvexHull;
        // package:// and file:// URIs as the world files take them (relative paths stay relative)
        const bool uri = path.rfind("package://", 0) == 0 || path.rfind("file://", 0) == 0;
        return load_urdf(uri ? resolve_resource_uri(path, ".", package_paths) : path, o);
      },
      py::arg("path"), py::arg("fixed_base") = false, py::arg("package_paths") = std::vector<std::string>{},
      py::arg("mesh_collision") = "convex_hull",
      "Loads a URDF file (a path, or a package:// or file:// URI searched in package_paths, then "
      "IMPULSE_PACKAGE_PATH, ROS_PACKAGE_PATH and AMENT_PREFIX_PATH) into a Model (raises ModelError naming the "
      "file and the problem). Collision meshes collide as their convex hulls (mesh_collision='convex_hull', the "
      "default) or as their triangles ('triangles'; docs/collision.md).");
}

}  // namespace impulse::python
