// Mesh and heightfield files whatever their content: the files a mesh refers to (a glTF's
// buffers) are regular files in the mesh's folder, and counts declared in headers are checked
// before they size anything. Every failure is a one-line ModelError naming the file.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "impulse/collision/heightfield.hpp"
#include "impulse/collision/mesh.hpp"
#include "impulse/core/error.hpp"
#include "support/temp_dir.hpp"

using namespace impulse;
using impulse_test::TempDir;
namespace fs = std::filesystem;

namespace {

// The cube [-0.5, 0.5]^3 as a glTF buffer: 8 float32 positions, then 36 uint16 indices.
std::string cube_buffer() {
  std::string b;
  for (int c = 0; c < 8; ++c) {
    const float xyz[3] = {(c & 1) ? 0.5f : -0.5f, (c & 2) ? 0.5f : -0.5f, (c & 4) ? 0.5f : -0.5f};
    b.append(reinterpret_cast<const char*>(xyz), sizeof xyz);
  }
  const std::uint16_t idx[36] = {0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                                 2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5};
  b.append(reinterpret_cast<const char*>(idx), sizeof idx);
  return b;
}

// A glTF 2.0 file whose one buffer (168 bytes, cube_buffer) is the file `uri`.
std::string cube_gltf(const std::string& uri) {
  return R"({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
  "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
  "buffers": [{"uri": ")" + uri + R"(", "byteLength": 168}],
  "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 96}, {"buffer": 0, "byteOffset": 96, "byteLength": 72}],
  "accessors": [
    {"bufferView": 0, "componentType": 5126, "count": 8, "type": "VEC3", "min": [-0.5, -0.5, -0.5], "max": [0.5, 0.5, 0.5]},
    {"bufferView": 1, "componentType": 5123, "count": 36, "type": "SCALAR"}]})";
}

// The message of the ModelError `f` throws ("" when it throws nothing).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

void check_one_line(const std::string& what) {
  INFO(what);
  CHECK(what.find('\n') == std::string::npos);
}

}  // namespace

TEST_CASE("mesh files: a glTF's buffers are read from the mesh's folder, whatever the working directory",
          "[collision][mesh_files]") {
  TempDir tmp;
  tmp.write("robot/meshes/cube.bin", cube_buffer());
  const std::string gltf = tmp.write("robot/meshes/cube.gltf", cube_gltf("cube.bin"));
  tmp.write("robot/meshes/sub.gltf", cube_gltf("parts/../cube.bin"));
  const TriangleMesh m = load_mesh(gltf, Vec3(2, 2, 2));
  CHECK(m.vertices.size() == 8);
  CHECK(m.triangles.size() == 12);
  for (const Vec3& v : m.vertices) CHECK(v.cwiseAbs().maxCoeff() == Approx(1.0));
  // ".." that stays inside the folder is fine
  CHECK(load_mesh((tmp.path / "robot/meshes/sub.gltf").string()).triangles.size() == 12);
  // a relative mesh path from another working directory: the buffer is still next to the mesh
  const fs::path cwd = fs::current_path();
  fs::current_path(tmp.path / "robot");
  const std::string what = error_of([] { load_mesh("meshes/cube.gltf"); });
  fs::current_path(cwd);
  CHECK(what == "");
}

TEST_CASE("mesh files: a glTF buffer that is absolute, leaves the folder, is a FIFO or is missing is refused",
          "[collision][mesh_files]") {
  TempDir tmp;
  tmp.write("secret.bin", cube_buffer());  // outside the mesh's folder
  tmp.write("meshes/cube.bin", cube_buffer());
  REQUIRE(::mkfifo((tmp.path / "meshes/pipe.bin").c_str(), 0600) == 0);
  struct Case {
    std::string uri;
    std::string expected;
  };
  const Case cases[] = {
      {"/dev/zero", "is an absolute path"},
      {(tmp.path / "meshes/cube.bin").string(), "is an absolute path"},
      {"../../../../etc/passwd", "leads out of the mesh's folder"},
      {"../secret.bin", "leads out of the mesh's folder"},
      {"sub/../../secret.bin", "leads out of the mesh's folder"},
      {"pipe.bin", "is not a regular file"},  // would block a plain open until a writer comes
      {"missing.bin", "file not found"},
      {".", "is a directory"},
  };
  for (const Case& c : cases) {
    const std::string gltf = tmp.write("meshes/m.gltf", cube_gltf(c.uri));
    const std::string what = error_of([&] { load_mesh(gltf); });
    INFO("uri " << c.uri << ": " << what);
    CHECK_THAT(what, Catch::StartsWith("mesh file '" + gltf + "'"));
    CHECK_THAT(what, Catch::Contains("'" + c.uri + "'") && Catch::Contains(c.expected));
    check_one_line(what);
  }
}

TEST_CASE("mesh files: a glTF buffer shorter than its byteLength is an error and leaks nothing",
          "[collision][mesh_files]") {
  // assimp throws between opening the buffer and deleting its stream; the leak sanitizer of the
  // sanitizer build checks that the stream and its bytes are freed all the same
  TempDir tmp;
  tmp.write("meshes/short.bin", cube_buffer().substr(0, 100));
  const std::string gltf = tmp.write("meshes/m.gltf", cube_gltf("short.bin"));
  const std::string what = error_of([&] { load_mesh(gltf); });
  CHECK_THAT(what, Catch::StartsWith("mesh file '" + gltf + "'") && Catch::Contains("byteLength"));
  check_one_line(what);
}

TEST_CASE("mesh files: PLY and OFF headers declaring more than the file holds are refused before allocating",
          "[collision][mesh_files]") {
  TempDir tmp;
  const std::string ply_cube =
      "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
      "element face 4\nproperty list uchar int vertex_indices\nend_header\n"
      "0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n";
  CHECK(load_mesh(tmp.write("tet.ply", ply_cube)).triangles.size() == 4);
  const std::string off_cube = "OFF\n# a tetrahedron\n4 4 6\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n3 0 2 1\n3 0 1 3\n"
                               "3 0 3 2\n4 1 2 3 3 255 0 0\n";
  CHECK(load_mesh(tmp.write("tet.off", off_cube)).triangles.size() == 5);  // the quad gives two
  CHECK(load_mesh(tmp.write("nokeyword.off", off_cube.substr(4))).triangles.size() == 5);
  struct Case {
    std::string name, bytes, expected;
  };
  const Case cases[] = {
      {"huge.ply",
       "ply\nformat binary_little_endian 1.0\nelement vertex 2000000000\nproperty float x\nproperty float y\n"
       "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n" +
           std::string(64, '\0'),
       "element 'vertex' count 2000000000 is more than the limit"},
      {"short.ply",
       "ply\nformat binary_little_endian 1.0\nelement vertex 1000\nproperty float x\nproperty float y\n"
       "property float z\nend_header\n" + std::string(64, '\0'),
       "declares 1000 'vertex' elements"},
      {"huge.off", "OFF\n1000000000 2000000000 0\n0 0 0\n", "declares 1000000000 vertices and 2000000000 faces"},
      {"short.off", "OFF\n100 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n", "the file holds 4 lines"},
      {"bad.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n", "out-of-range vertex index"},
  };
  for (const Case& c : cases) {
    const std::string path = tmp.write(c.name, c.bytes);
    const std::string what = error_of([&] { load_mesh(path); });
    INFO(what);
    CHECK_THAT(what, Catch::StartsWith("mesh file '" + path + "'") && Catch::Contains(c.expected));
    check_one_line(what);
  }
}

TEST_CASE("heightfield images: a declared size larger than the limit or than the pixel data is refused",
          "[collision][heightfield][mesh_files]") {
  TempDir tmp;
  const Heightfield ok = Heightfield::from_pgm(tmp.write("ok.pgm", "P2\n3 2\n255\n0 0 0\n255 255 255\n"), 2, 1, 0.5);
  CHECK(ok.nx() == 3);
  CHECK(ok.heights()(0, 1) == Approx(0.0));
  CHECK(ok.heights()(0, 0) == Approx(0.5));
  struct Case {
    std::string name, bytes, expected;
  };
  const Case cases[] = {
      {"huge.pgm", "P5\n100000 100000\n255\n" + std::string(100, '\0'), "width x height 100000 x 100000 is more than"},
      {"short5.pgm", "P5\n1000 1000\n65535\n" + std::string(1000, '\0'),
       "1000 x 1000 needs 2000000 bytes of pixel data, the file holds 1000"},
      {"short2.pgm", "P2\n1000 1000\n255\n0 0 0 0\n", "1000 x 1000 needs at least 1999999 bytes of pixel text"},
      // a binary pixel above the declared maximum (found by fuzz_heightfield)
      {"over.pgm", std::string("P5\n2 2\n100\n\x00\x00\x00\xff", 15),
       "pixel 255 at row 1, column 1 is above the maximum value 100"},
  };
  for (const Case& c : cases) {
    const std::string path = tmp.write(c.name, c.bytes);
    const std::string what = error_of([&] { Heightfield::from_pgm(path, 10, 10, 1); });
    INFO(what);
    CHECK_THAT(what, Catch::StartsWith("heightfield image '" + path + "'") && Catch::Contains(c.expected));
    check_one_line(what);
  }
  // generators (world files give their sizes) are bounded the same way
  CHECK_THROWS_WITH(Heightfield::random_rough(500, 500, 0.01, 0.1, 1),
                    Catch::Contains("50001 x 50001 grid points, more than the limit"));
  CHECK_THROWS_WITH(Heightfield::stairs(500, 500, 0.01, 0.5, 0.1), Catch::Contains("more than the limit"));
}
