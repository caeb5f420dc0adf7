// libFuzzer target: Impulse's own mesh readers (load_mesh_data) on arbitrary bytes. The first
// byte picks the format (STL, OBJ, OFF); the rest is the file. Any input must either give a mesh
// whose triangles index its vertices or throw impulse::Error: never crash, hang, exhaust memory
// or trip a sanitizer. The formats read through assimp (PLY, COLLADA, glTF, ...) are left out:
// assimp 5.2's PLY parser leaks memory on malformed files within a second of fuzzing, a finding
// in assimp, not here. Their references to other files and the PLY header counts are covered by
// tests/collision/test_mesh_files.cpp.
#include <cstddef>
#include <cstdint>
#include <string>

#include "impulse/collision/mesh.hpp"
#include "impulse/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"fuzz/mesh.stl", "fuzz/mesh.obj", "fuzz/mesh.off"};
  const char* name = kNames[data[0] % 3];
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
