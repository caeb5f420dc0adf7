// impulse._impulse: the compiled part of the `impulse` Python package (python/impulse/).
// The pure-Python package re-exports everything from here; see python/impulse/__init__.py.
#include "bindings.hpp"

PYBIND11_MODULE(_impulse, m) {
  m.doc() = "Impulse rigid-body physics engine (C++ core). Use the `impulse` package.";
  m.attr("__version__") = IMPULSE_VERSION;
  impulse::python::bind_errors(m);
  impulse::python::bind_model(m);
  impulse::python::bind_solvers(m);
  impulse::python::bind_system(m);
  impulse::python::bind_world(m);
  impulse::python::bind_sensors(m);
  impulse::python::bind_batch(m);
  impulse::python::bind_tasks(m);
  impulse::python::bind_algorithms(m);
}
