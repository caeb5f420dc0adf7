// The project error type. Every error Impulse throws derives from impulse::Error, so a user can
// catch one type; the subclasses say which boundary rejected the input.
#pragma once

#include <stdexcept>
#include <string>

namespace impulse {

// Base of every exception thrown by Impulse.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A robot description (URDF, ModelBuilder call, mesh file) that cannot become a valid Model.
class ModelError : public Error {
 public:
  using Error::Error;
};

// A run-time argument that is out of range: wrong vector size, NaN, unknown name.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

}  // namespace impulse
