#include "impulse/model/geometry.hpp"

namespace impulse {

const char* shape_type_name(ShapeType t) {
  switch (t) {
    case ShapeType::Sphere: return "sphere";
    case ShapeType::Box: return "box";
    case ShapeType::Cylinder: return "cylinder";
    case ShapeType::Capsule: return "capsule";
    case ShapeType::Mesh: return "mesh";
  }
  return "unknown";
}

}  // namespace impulse
