// Triangle meshes for URDF <mesh> collision elements: readers for STL (ASCII and binary) and
// Wavefront OBJ, COLLADA and more through assimp. The collision world turns a TriangleMesh into an FCL BVH (OBBRSS).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "impulse/core/types.hpp"

namespace impulse {

struct TriangleMesh {
  std::vector<Vec3> vertices;                 // unique vertices, mesh frame
  std::vector<std::array<int, 3>> triangles;  // indices into vertices
};

// Reads an .stl (ASCII or binary) or .obj file, or through assimp a .dae (COLLADA: unit applied,
// up axis ignored, node transforms baked), .ply, .off, .3ds, .fbx, .gltf or .glb file (by
// extension, case-insensitive), merges equal vertices (STL) and multiplies every vertex by `scale` component-wise. Throws ModelError naming the file
// when it is missing, unreadable, malformed, empty, or of an unknown type.
TriangleMesh load_mesh(const std::string& path, const Vec3& scale = Vec3::Ones());

}  // namespace impulse
