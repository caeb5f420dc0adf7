// Batched worlds (VecWorld). Arrays are passed as numpy arrays without copies: they must be
// float64, C-contiguous and of the documented shape. Stepping releases the GIL.
#include "bindings.hpp"
#include "impulse/batch/vec_world.hpp"

namespace impulse::python {

using batch::RowMatX;
using batch::VecWorld;

namespace {

// frame (or body) names or indices of system s -> indices
std::vector<Index> ids_of(VecWorld& v, Index s, const py::iterable& names, bool bodies) {
  const World& w = v.world(0);
  if (s < 0 || s >= w.num_systems()) throw InvalidArgument("VecWorld: system index " + std::to_string(s) + " out of range");
  const Model& m = w.systems()[static_cast<std::size_t>(s)]->model();
  std::vector<Index> out;
  for (const py::handle& h : names) {
    if (py::isinstance<py::str>(h))
      out.push_back(bodies ? m.body_id(h.cast<std::string>()) : m.frame_id(h.cast<std::string>()));
    else
      out.push_back(h.cast<Index>());
  }
  return out;
}

}  // namespace

void bind_batch(py::module_& m) {
  using Rref = Eigen::Ref<RowMatX>;
  using Rcref = Eigen::Ref<const RowMatX>;
  py::class_<VecWorld>(m, "VecWorld",
                       "N independent copies of a world stepped in parallel by a C++ thread pool. Results do not "
                       "depend on the number of threads (bit-identical).")
      .def(py::init([](const std::string& path, Index n, int threads) { return VecWorld::from_file(path, n, threads); }),
           py::arg("path"), py::arg("num_worlds"), py::arg("num_threads") = 0,
           "num_worlds copies of the world file at `path`; num_threads=0: one per hardware thread.")
      .def(py::init([](const World& prototype, Index n, int threads) {
             return std::make_unique<VecWorld>(prototype, n, threads);
           }),
           py::arg("prototype"), py::arg("num_worlds"), py::arg("num_threads") = 0,
           "num_worlds copies of a World (World.clone(): objects, settings and state).")
      .def_property_readonly("size", &VecWorld::size)
      .def("__len__", &VecWorld::size)
      .def_property_readonly("num_threads", &VecWorld::num_threads)
      .def_property("lanes", &VecWorld::lanes, &VecWorld::set_lanes,
                    "Worlds stepped together in SIMD lanes (1: one by one; 2, 4, 8 as the CPU allows; default "
                    "IMPULSE_LANES or the widest). The same bits at every width.")
      .def("world", &VecWorld::world, py::arg("index"), py::return_value_policy::reference_internal)
      .def(
          "integrate",
          [](VecWorld& v, Index steps) { without_gil(v, "VecWorld", "integrate", [&] { v.integrate(steps); }); },
          py::arg("steps") = 1, "Steps every world `steps` times (GIL released).")
      .def_property_readonly(
          "status",
          idle_copy(&VecWorld::status, "VecWorld", "status"),
          "Per world, the first non-Ok StepStatus (as int) of the last integrate call.")
      .def("get_q", [](const VecWorld& v, Index s, Rref out) { v.get_q(s, out); }, py::arg("system"), py::arg("out"),
           "Writes q of system `system` of every world into out (float64, C order, N x nq).")
      .def("get_u", [](const VecWorld& v, Index s, Rref out) { v.get_u(s, out); }, py::arg("system"), py::arg("out"))
      .def("set_state", [](VecWorld& v, Index s, Rcref q, Rcref u) { v.set_state(s, q, u); }, py::arg("system"),
           py::arg("q"), py::arg("u"))
      .def("set_pd_targets", [](VecWorld& v, Index s, Rcref q, Rcref u) { v.set_pd_targets(s, q, u); },
           py::arg("system"), py::arg("q_target"), py::arg("u_target"))
      .def("set_generalized_force", [](VecWorld& v, Index s, Rcref tau) { v.set_generalized_force(s, tau); },
           py::arg("system"), py::arg("tau"))
      .def(
          "reset",
          [](VecWorld& v, Eigen::Ref<const Eigen::Matrix<bool, Eigen::Dynamic, 1>> mask, Index s, Rcref q, Rcref u) {
            without_gil(v, "VecWorld", "reset", [&] { v.reset(mask, s, q, u); });
          },
          py::arg("mask"), py::arg("system"), py::arg("q"), py::arg("u"),
          "Worlds with mask[i] go back to their initial state, then take row i of q and u as system's state.")
      .def(
          "frame_ids", [](VecWorld& v, Index s, const py::iterable& names) { return ids_of(v, s, names, false); },
          py::arg("system"), py::arg("frames"), "Model frame indices of frame names (or indices) of a system.")
      .def(
          "body_ids", [](VecWorld& v, Index s, const py::iterable& names) { return ids_of(v, s, names, true); },
          py::arg("system"), py::arg("bodies"), "Body indices of link names (or indices) of a system.")
      .def(
          "get_frame_poses",
          [](const VecWorld& v, Index s, const std::vector<Index>& frames, Rref out) {
            without_gil(v, "VecWorld", "get_frame_poses", [&] { v.get_frame_poses(s, frames, out); });
          },
          py::arg("system"), py::arg("frames"), py::arg("out"),
          "Poses of frames (indices: frame_ids) in every world into out (N x 7F): x y z qw qx qy qz per frame.")
      .def(
          "get_frame_velocities",
          [](const VecWorld& v, Index s, const std::vector<Index>& frames, Rref out) {
            without_gil(v, "VecWorld", "get_frame_velocities", [&] { v.get_frame_velocities(s, frames, out); });
          },
          py::arg("system"), py::arg("frames"), py::arg("out"),
          "Linear and angular velocity (world frame) of the frames' origins into out (N x 6F).")
      .def("get_contact_forces",
           [](const VecWorld& v, Index s, const std::vector<Index>& bodies, Rref out) {
             v.get_contact_forces(s, bodies, out);
           },
           py::arg("system"), py::arg("bodies"), py::arg("out"),
           "Contact force of the last step on bodies (indices: body_ids) into out (N x 3B), world frame.")
      .def("set_gravity", [](VecWorld& v, Rcref g) { v.set_gravity(g); }, py::arg("gravity"),
           "Gravity per world (N x 3).")
      .def("set_friction", [](VecWorld& v, Eigen::Ref<const VecX> mu) { v.set_friction(mu); }, py::arg("friction"),
           "Friction coefficient of the default material pair per world (N).")
      .def("set_pd_gains", [](VecWorld& v, Index s, Rcref kp, Rcref kd) { v.set_pd_gains(s, kp, kd); },
           py::arg("system"), py::arg("kp"), py::arg("kd"), "PD gains of a system per world (N x nv each).")
      .def("get_applied_torques", [](const VecWorld& v, Index s, Rref out) { v.get_applied_torques(s, out); },
           py::arg("system"), py::arg("out"),
           "Actuator torque of the last step (explicit + PD within the effort limits) into out (N x nv).")
      .def(
          "get_height_scan",
          [](const VecWorld& v, Index s, Index frame, Rcref pattern, Rref out, Scalar ray_start, Scalar max_distance) {
            without_gil(v, "VecWorld", "get_height_scan",
                        [&] { v.get_height_scan(s, frame, pattern, out, ray_start, max_distance); });
          },
          py::arg("system"), py::arg("frame"), py::arg("pattern"), py::arg("out"), py::arg("ray_start") = 1.0,
          py::arg("max_distance") = 10.0,
          "Terrain height (world z; NaN: no terrain) under the points of pattern (P x 2, the frame's yaw-aligned "
          "horizontal frame) around a frame (index: frame_ids) into out (N x P).")
      .def(
          "set_material_friction",
          [](VecWorld& v, const std::string& a, const std::string& b, Eigen::Ref<const VecX> mu) {
            v.set_material_friction(a, b, mu);
          },
          py::arg("a"), py::arg("b"), py::arg("friction"), "Friction of the material pair (a, b) per world (N).")
      .def(
          "set_body_mass",
          [](VecWorld& v, Index s, Index body, Eigen::Ref<const VecX> mass, Rcref com) {
            without_gil(v, "VecWorld", "set_body_mass", [&] { v.set_body_mass(s, body, mass, com); });
          },
          py::arg("system"), py::arg("body"), py::arg("mass"), py::arg("com"),
          "Mass (N) and centre of mass (N x 3, body frame) of a body (index: body_ids) per world; its rotational "
          "inertia is kept.")
      .def(
          "set_joint_damping",
          [](VecWorld& v, Index s, Rcref damping) {
            without_gil(v, "VecWorld", "set_joint_damping", [&] { v.set_joint_damping(s, damping); });
          },
          py::arg("system"), py::arg("damping"),
          "Joint viscous damping (N x nv, >= 0; N m s/rad or N s/m) of a system per world.")
      .def(
          "set_joint_friction",
          [](VecWorld& v, Index s, Rcref friction) {
            without_gil(v, "VecWorld", "set_joint_friction", [&] { v.set_joint_friction(s, friction); });
          },
          py::arg("system"), py::arg("friction"),
          "Joint dry friction (N x nv, >= 0; N m or N; acts on one-dof joints) of a system per world.")
      .def(
          "set_external_wrenches",
          [](VecWorld& v, Index s, const std::vector<Index>& bodies, Rcref wrenches) {
            without_gil(v, "VecWorld", "set_external_wrenches", [&] { v.set_external_wrenches(s, bodies, wrenches); });
          },
          py::arg("system"), py::arg("bodies"), py::arg("wrenches"),
          "Wrenches [f; tau] (world frame, force at the body origin) on bodies for the next step (N x 6B).");
}

}  // namespace impulse::python
