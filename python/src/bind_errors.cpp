// The engine's exception types as Python exceptions carrying the engine's message:
// impulse.Error (a RuntimeError) and its subclasses. InvalidArgument is also a ValueError, so
// generic code catching ValueError for a bad argument keeps working.
#include "bindings.hpp"
#include "impulse/core/error.hpp"
#include "impulse/core/exclusive_use.hpp"
#include "impulse/world/world_file.hpp"
#include "impulse/world/world_state.hpp"

namespace impulse::python {

void bind_errors(py::module_& m) {
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  error.doc() = "Base of every error the engine raises.";
  static py::exception<ModelError> model_error(m, "ModelError", error.ptr());
  model_error.doc() = "A robot description (URDF, mesh) that cannot become a valid model.";
  static py::exception<WorldFileError> world_file_error(m, "WorldFileError", error.ptr());
  world_file_error.doc() = "A world file that cannot be read or is invalid ('path:line: problem').";
  static py::exception<StateFormatError> state_format_error(m, "StateFormatError", error.ptr());
  state_format_error.doc() = "Bytes or a file that are not a valid serialized WorldState (magic, version, size, checksum).";
  static py::exception<ConcurrentUseError> concurrent_use_error(m, "ConcurrentUseError", error.ptr());
  concurrent_use_error.doc() =
      "A call on a World (or its systems, sensors, a batch) made while another thread steps or changes it "
      "(docs/threading.md).";
  // InvalidArgument(Error, ValueError): built with type() since it has two bases
  py::object invalid = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "impulse._impulse.InvalidArgument",
      "A run-time argument out of range: wrong array size, NaN, unknown name.",
      py::make_tuple(error, py::handle(PyExc_ValueError)).ptr(), nullptr));
  m.attr("InvalidArgument") = invalid;
  static PyObject* invalid_type = invalid.ptr();
  Py_INCREF(invalid_type);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      PyErr_SetString(invalid_type, e.what());
    } catch (const WorldFileError& e) {
      PyErr_SetString(world_file_error.ptr(), e.what());
    } catch (const StateFormatError& e) {
      PyErr_SetString(state_format_error.ptr(), e.what());
    } catch (const ConcurrentUseError& e) {
      PyErr_SetString(concurrent_use_error.ptr(), e.what());
    } catch (const ModelError& e) {
      PyErr_SetString(model_error.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
}

}  // namespace impulse::python
