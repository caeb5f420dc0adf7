// Shared declarations of the pybind11 module impulse._impulse: one bind_* function per C++ class
// family, each in its own file, so a new C++ API (state save/restore, step report, ...) is a small
// local change in the file of its class.
#pragma once

#include <type_traits>

#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "impulse/core/exclusive_use.hpp"
#include "impulse/spatial/spatial.hpp"

namespace impulse::python {

namespace py = pybind11;

void bind_errors(py::module_& m);    // bind_errors.cpp: Error, ModelError, InvalidArgument, WorldFileError, StateFormatError
void bind_model(py::module_& m);     // bind_model.cpp: Model (read-only), load_urdf
void bind_solvers(py::module_& m);   // bind_solvers.cpp: solver settings, SolverResult, StepStats
void bind_system(py::module_& m);    // bind_system.cpp: ArticulatedSystem, BodyContactImpulse
void bind_world(py::module_& m);     // bind_world.cpp: World, Contact, ContactReport, load_world
void bind_batch(py::module_& m);     // bind_batch.cpp: VecWorld
void bind_tasks(py::module_& m);     // bind_tasks.cpp: LocomotionSettings, LocomotionTask
void bind_sensors(py::module_& m);   // bind_sensors.cpp: Heightfield, SensorNoise, Imu, JointSensor, ContactSensor,
                                     // ForceTorqueSensor, HeightScan
void bind_algorithms(py::module_& m); // bind_algorithms.cpp: Data, rnea, crba, aba, ..., rnea_derivatives,
                                     // aba_derivatives; Model.integrate / difference

// Raises ConcurrentUseError while another thread steps or changes `object` (a World, an
// ArticulatedSystem, a batch): calls that release the GIL hold the object's use marker for their
// whole duration, so a call of another Python thread that reads it meanwhile is refused instead
// of racing with the step (docs/threading.md).
template <class T>
void idle(const T& object, const char* name, const char* call) {
  object.use_marker().check(name, call);
}

// A getter that returns a copy of what `get` returns, refused while another thread steps or changes
// the object (idle above).
template <class T, class R>
auto idle_copy(R (T::*get)() const, const char* name, const char* call) {
  return [get, name, call](const T& object) {
    idle(object, name, call);
    return std::decay_t<R>((object.*get)());
  };
}

// Runs `f` with the GIL released and `object`'s use marker held: taken before the GIL is
// released, so that no other Python thread can slip in between (docs/threading.md).
template <class T, class F>
auto without_gil(const T& object, const char* name, const char* call, F&& f) {
  const UseMarker::Scope in_use(object.use_marker(), name, call);
  py::gil_scoped_release release;
  return f();
}

// An SE3 as a 4x4 homogeneous transform (numpy).
inline Eigen::Matrix4d to_matrix(const SE3& X) {
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  T.topLeftCorner<3, 3>() = X.R;
  T.topRightCorner<3, 1>() = X.p;
  return T;
}

// A read-only numpy view of a vector owned by `owner` (no copy; the view keeps owner alive).
inline py::array view(const VecX& v, py::handle owner) {
  py::array a(py::dtype::of<double>(), {v.size()}, {sizeof(double)}, v.data(), owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

}  // namespace impulse::python
