// Internal: assimp-based reader for mesh formats other than STL and OBJ (see mesh_assimp.cpp).
#pragma once

#include <string>

#include "impulse/collision/mesh.hpp"

namespace impulse {

// Triangles of the mesh in `bytes` (the content of `path`; `extension` is the format hint,
// e.g. "dae"). Throws ModelError naming the file when assimp cannot read it.
TriangleMesh read_mesh_assimp(const std::string& path, const std::string& extension, const std::string& bytes);

}  // namespace impulse
