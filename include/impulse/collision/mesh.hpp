// Triangle meshes for URDF <mesh> collision elements: readers for STL (ASCII and binary) and
// Wavefront OBJ, COLLADA and more through assimp. The collision world turns a TriangleMesh into an FCL BVH (OBBRSS).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "impulse/core/types.hpp"

namespace impulse {

struct TriangleMesh {
  std::vector<Vec3> vertices;                 // unique vertices, mesh frame
  std::vector<std::array<int, 3>> triangles;  // indices into vertices
};

// Most vertices, and most triangles, a mesh file may give (2^24, about 16.8 million): a larger
// count, declared in a header or read, is an error before it sizes anything.
inline constexpr std::size_t kMaxMeshElements = std::size_t(1) << 24;

// Reads an .stl (ASCII or binary), .obj or .off file, or through assimp a .dae (COLLADA: unit
// applied, up axis ignored, node transforms baked), .ply, .3ds, .fbx, .gltf or .glb file (by
// extension, case-insensitive), merges equal vertices (STL) and multiplies every vertex by
// `scale` component-wise. Throws ModelError naming the file when it is missing, unreadable,
// malformed, empty, too large (kMaxMeshBytes, kMaxMeshElements), or of an unknown type.
// Files a mesh refers to (a glTF's buffers) are read through read_regular_file too, and only
// when they lie in the mesh's folder: relative paths without a way out through "..".
TriangleMesh load_mesh(const std::string& path, const Vec3& scale = Vec3::Ones());

// The same from the content of the mesh file `path` (which gives the type by its extension, the
// folder of the files it refers to, and the name in errors).
TriangleMesh load_mesh_data(const std::string& bytes, const std::string& path, const Vec3& scale = Vec3::Ones());

}  // namespace impulse
