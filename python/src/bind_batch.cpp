// Batched worlds (VecWorld). Arrays are passed as numpy arrays without copies: they must be
// float64, C-contiguous and of the documented shape. Stepping releases the GIL.
#include "bindings.hpp"
#include "impulse/batch/vec_world.hpp"

namespace impulse::python {

using batch::RowMatX;
using batch::VecWorld;

void bind_batch(py::module_& m) {
  using Rref = Eigen::Ref<RowMatX>;
  using Rcref = Eigen::Ref<const RowMatX>;
  py::class_<VecWorld>(m, "VecWorld",
                       "N independent copies of a world stepped in parallel by a C++ thread pool. Results do not "
                       "depend on the number of threads (bit-identical).")
      .def(py::init([](const std::string& path, Index n, int threads) { return VecWorld::from_file(path, n, threads); }),
           py::arg("path"), py::arg("num_worlds"), py::arg("num_threads") = 0,
           "num_worlds copies of the world file at `path`; num_threads=0: one per hardware thread.")
      .def_property_readonly("size", &VecWorld::size)
      .def("__len__", &VecWorld::size)
      .def_property_readonly("num_threads", &VecWorld::num_threads)
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
           py::arg("system"), py::arg("tau"));
}

}  // namespace impulse::python
