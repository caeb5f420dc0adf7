// libFuzzer target: the mesh readers (load_mesh_data) on arbitrary bytes. The first byte picks
// the format (STL, OBJ, OFF, PLY); the rest is the file. Any input must either give a mesh or
// throw impulse::Error: never crash, hang, exhaust memory or trip a sanitizer. (The other
// assimp formats are assimp's own parsers, fuzzed by its project; their references to other
// files are covered by tests/collision/test_mesh_files.cpp.)
#include <cstddef>
#include <cstdint>
#include <string>

#include "impulse/collision/mesh.hpp"
#include "impulse/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"fuzz/mesh.stl", "fuzz/mesh.obj", "fuzz/mesh.off", "fuzz/mesh.ply"};
  const char* name = kNames[data[0] % 4];
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const impulse::TriangleMesh m = impulse::load_mesh_data(bytes, name);
    for (const auto& t : m.triangles) {
      for (int k : t) {
        if (k < 0 || k >= static_cast<int>(m.vertices.size())) __builtin_trap();  // an index out of range
      }
    }
  } catch (const impulse::Error&) {
  }
  return 0;
}
