// STL (ASCII and binary) and Wavefront OBJ readers; other formats (COLLADA) go to assimp
// (mesh_assimp.cpp).
#include "impulse/collision/mesh.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "impulse/core/file.hpp"

#include "impulse/core/check.hpp"
#include "mesh_assimp.hpp"

namespace impulse {

#define MESH_CHECK(cond, ...) IMPULSE_CHECK_AS(::impulse::ModelError, cond, __VA_ARGS__)

namespace {

// Builds indexed triangles from a triangle soup, merging bit-identical vertices.
struct Welder {
  TriangleMesh mesh;
  std::map<std::array<double, 3>, int> index;

  int vertex(const Vec3& v) {
    const std::array<double, 3> key{v.x(), v.y(), v.z()};
    const auto it = index.find(key);
    if (it != index.end()) return it->second;
    const int k = static_cast<int>(mesh.vertices.size());
    mesh.vertices.push_back(v);
    index.emplace(key, k);
    return k;
  }
  void triangle(const Vec3& a, const Vec3& b, const Vec3& c) {
    const int ia = vertex(a), ib = vertex(b), ic = vertex(c);
    if (ia != ib && ib != ic && ia != ic) mesh.triangles.push_back({ia, ib, ic});
  }
};

std::string lower_extension(const std::string& path) {
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos) return "";
  std::string ext = path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return ext;
}

TriangleMesh read_stl(const std::string& path, const std::string& bytes) {
  Welder w;
  // binary: 80-byte header, uint32 count, then 50 bytes per triangle; the size must match exactly
  if (bytes.size() >= 84) {
    std::uint32_t n = 0;
    std::memcpy(&n, bytes.data() + 80, 4);
    if (bytes.size() == 84 + 50 * static_cast<std::size_t>(n)) {
      for (std::uint32_t t = 0; t < n; ++t) {
        const char* rec = bytes.data() + 84 + 50 * static_cast<std::size_t>(t) + 12;  // skip the normal
        Vec3 v[3];
        for (int k = 0; k < 3; ++k) {
          float xyz[3];
          std::memcpy(xyz, rec + 12 * k, 12);
          v[k] = Vec3(xyz[0], xyz[1], xyz[2]);
        }
        w.triangle(v[0], v[1], v[2]);
      }
      return std::move(w.mesh);
    }
  }
  // ASCII: "solid ... facet normal ... outer loop vertex x y z (x3) endloop endfacet ... endsolid"
  MESH_CHECK(bytes.compare(0, 5, "solid") == 0 || bytes.find("facet") != std::string::npos, "mesh file '", path,
             "' is neither a binary STL (size does not match its triangle count) nor an ASCII STL");
  std::istringstream in(bytes);
  std::string word;
  Vec3 v[3];
  int nv = 0;
  while (in >> word) {
    if (word != "vertex") continue;
    double x, y, z;
    MESH_CHECK(static_cast<bool>(in >> x >> y >> z), "mesh file '", path, "': malformed 'vertex' line");
    v[nv++] = Vec3(x, y, z);
    if (nv == 3) {
      w.triangle(v[0], v[1], v[2]);
      nv = 0;
    }
  }
  MESH_CHECK(nv == 0, "mesh file '", path, "': vertex count is not a multiple of 3");
  return std::move(w.mesh);
}

TriangleMesh read_obj(const std::string& path, const std::string& bytes) {
  TriangleMesh mesh;
  std::istringstream in(bytes);
  std::string line;
  int line_no = 0;
  std::vector<int> face;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream ls(line);
    std::string tag;
    if (!(ls >> tag)) continue;
    if (tag == "v") {
      double x, y, z;
      MESH_CHECK(static_cast<bool>(ls >> x >> y >> z), "mesh file '", path, "' line ", line_no,
                 ": malformed vertex");
      mesh.vertices.emplace_back(x, y, z);
    } else if (tag == "f") {
      // "f a b c ...", each entry "v", "v/vt", "v//vn" or "v/vt/vn"; negative = relative; fan-triangulated
      face.clear();
      std::string item;
      while (ls >> item) {
        int idx = 0;
        try {
          idx = std::stoi(item.substr(0, item.find('/')));
        } catch (const std::exception&) {
          MESH_CHECK(false, "mesh file '", path, "' line ", line_no, ": malformed face entry '", item, "'");
        }
        const int nv = static_cast<int>(mesh.vertices.size());
        idx = idx < 0 ? nv + idx : idx - 1;
        MESH_CHECK(idx >= 0 && idx < nv, "mesh file '", path, "' line ", line_no, ": face index '", item,
                   "' out of range");
        face.push_back(idx);
      }
      MESH_CHECK(face.size() >= 3, "mesh file '", path, "' line ", line_no, ": face has fewer than 3 vertices");
      for (std::size_t k = 1; k + 1 < face.size(); ++k) mesh.triangles.push_back({face[0], face[k], face[k + 1]});
    }
  }
  return mesh;
}

}  // namespace

TriangleMesh load_mesh(const std::string& path, const Vec3& scale) {
  MESH_CHECK(scale.allFinite() && (scale.array() != 0).all(), "mesh file '", path, "': scale ", scale.transpose(),
             " has a zero or non-finite entry");
  const std::string bytes = read_regular_file<ModelError>(path, kMaxMeshBytes, "mesh file");
  MESH_CHECK(!bytes.empty(), "mesh file '", path, "' is empty");
  const std::string ext = lower_extension(path);
  TriangleMesh mesh;
  if (ext == "stl") {
    mesh = read_stl(path, bytes);
  } else if (ext == "obj") {
    mesh = read_obj(path, bytes);
  } else if (ext == "dae" || ext == "ply" || ext == "off" || ext == "3ds" || ext == "fbx" || ext == "gltf" ||
             ext == "glb") {
    mesh = read_mesh_assimp(path, ext, bytes);
  } else {
    MESH_CHECK(false, "mesh file '", path, "': unsupported type '.", ext,
               "' (supported: .stl, .obj, and through assimp .dae, .ply, .off, .3ds, .fbx, .gltf, .glb)");
  }
  MESH_CHECK(!mesh.triangles.empty(), "mesh file '", path, "' contains no triangles");
  for (const Vec3& v : mesh.vertices) {
    MESH_CHECK(v.allFinite(), "mesh file '", path, "' has a non-finite vertex");
  }
  for (Vec3& v : mesh.vertices) v = v.cwiseProduct(scale);
  return mesh;
}

}  // namespace impulse
