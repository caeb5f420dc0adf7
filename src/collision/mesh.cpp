// STL (ASCII and binary), Wavefront OBJ and OFF readers; other formats (COLLADA) go to assimp
// (mesh_assimp.cpp). Every count a file declares or accumulates is bounded by the file's size
// and by kMaxMeshElements before it sizes anything.
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
  const std::string& path;
  TriangleMesh mesh;
  std::map<std::array<double, 3>, int> index;

  int vertex(const Vec3& v) {
    const std::array<double, 3> key{v.x(), v.y(), v.z()};
    const auto it = index.find(key);
    if (it != index.end()) return it->second;
    MESH_CHECK(mesh.vertices.size() < kMaxMeshElements, "mesh file '", path, "': more than ", kMaxMeshElements,
               " vertices");
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
  Welder w{path, {}, {}};
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
      MESH_CHECK(w.mesh.triangles.size() < kMaxMeshElements, "mesh file '", path, "': more than ",
                 kMaxMeshElements, " triangles");
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
      MESH_CHECK(mesh.vertices.size() < kMaxMeshElements, "mesh file '", path, "' line ", line_no, ": more than ",
                 kMaxMeshElements, " vertices");
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
      MESH_CHECK(mesh.triangles.size() + face.size() - 2 <= kMaxMeshElements, "mesh file '", path, "' line ",
                 line_no, ": more than ", kMaxMeshElements, " triangles");
      for (std::size_t k = 1; k + 1 < face.size(); ++k) mesh.triangles.push_back({face[0], face[k], face[k + 1]});
    }
  }
  return mesh;
}

// Object File Format (Geomview): an optional keyword [ST][C][N][4][n]OFF, the dimension when it
// has the n, the counts "vertices faces edges", then one vertex per line (x y z, then w with the
// 4, then normals, colours, texture coordinates, which are ignored) and one face per line
// ("k i1 .. ik", then an optional colour). Faces are fan-triangulated. '#' starts a comment.
// The declared counts are checked against the lines the file holds before anything is kept,
// so a header declaring a billion vertices is a one-line error, not an allocation.
// The lines of an OFF file that hold something once '#' comments are cut, one at a time (no
// copy of the file: memory stays that of the mesh).
struct ContentLines {
  const std::string& bytes;
  std::size_t pos = 0;
  bool next(std::string& line) {
    while (pos < bytes.size()) {
      std::size_t end = bytes.find_first_of("\n\r", pos);
      if (end == std::string::npos) end = bytes.size();
      const void* hash = std::memchr(bytes.data() + pos, '#', end - pos);
      const std::size_t stop = hash ? static_cast<std::size_t>(static_cast<const char*>(hash) - bytes.data()) : end;
      line.assign(bytes, pos, stop - pos);
      pos = end + 1;
      if (line.find_first_not_of(" \t\f\v") != std::string::npos) return true;
    }
    return false;
  }
  std::size_t remaining() const {
    ContentLines rest{bytes, pos};
    std::string line;
    std::size_t n = 0;
    while (rest.next(line)) ++n;
    return n;
  }
};

TriangleMesh read_off(const std::string& path, const std::string& bytes) {
  ContentLines lines{bytes, 0};
  // the header's tokens (keyword, dimension, counts) may share lines or not
  std::istringstream head;
  std::string pending;  // a token read ahead and given back
  auto next_token = [&](std::string& t) {
    if (!pending.empty()) {
      t.swap(pending);
      pending.clear();
      return true;
    }
    std::string line;
    while (!(head >> t)) {
      if (!lines.next(line)) return false;
      head.clear();
      head.str(line);
    }
    return true;
  };
  auto count = [&](const char* what) {
    std::string t;
    MESH_CHECK(next_token(t), "mesh file '", path, "': OFF header ends before the ", what);
    MESH_CHECK(t.find_first_not_of("0123456789") == std::string::npos && t.size() <= 12, "mesh file '", path,
               "': OFF ", what, " '", t, "' is not a count");
    return std::stoull(t);
  };
  std::string t;
  MESH_CHECK(next_token(t), "mesh file '", path, "': no OFF header");
  bool homogeneous = false;
  if (t.size() >= 3 && t.compare(t.size() - 3, 3, "OFF") == 0) {
    std::string prefix = t.substr(0, t.size() - 3);
    auto take = [&](const char* p) {
      const std::size_t n = std::strlen(p);
      if (prefix.compare(0, n, p) != 0) return false;
      prefix.erase(0, n);
      return true;
    };
    take("ST");
    take("C");
    take("N");
    homogeneous = take("4");
    const bool dimension = take("n");
    MESH_CHECK(prefix.empty(), "mesh file '", path, "': unknown OFF keyword '", t, "'");
    if (dimension) {
      const unsigned long long d = count("dimension");
      MESH_CHECK(d == 3, "mesh file '", path, "': OFF dimension ", d, " (only 3 is supported)");
    }
  } else {
    pending = t;  // no keyword (the format allows it): the first token is the vertex count
  }
  const unsigned long long nv = count("vertex count"), nf = count("face count");
  count("edge count");
  std::string rest;
  MESH_CHECK(!(head >> rest), "mesh file '", path, "': unexpected '", rest, "' after the OFF counts");
  const std::size_t have = lines.remaining();
  MESH_CHECK(nv <= kMaxMeshElements && nf <= kMaxMeshElements, "mesh file '", path, "': OFF header declares ", nv,
             " vertices and ", nf, " faces, more than the limit of ", kMaxMeshElements);
  MESH_CHECK(nv + nf <= have, "mesh file '", path, "': OFF header declares ", nv, " vertices and ", nf,
             " faces, the file holds ", have, " lines after it");
  TriangleMesh mesh;
  mesh.vertices.reserve(static_cast<std::size_t>(nv));
  std::string line;
  for (unsigned long long k = 0; k < nv; ++k) {
    lines.next(line);  // there are enough (checked above)
    std::istringstream ls(line);
    double x, y, z, w = 1;
    MESH_CHECK(static_cast<bool>(ls >> x >> y >> z) && (!homogeneous || static_cast<bool>(ls >> w)), "mesh file '",
               path, "': malformed OFF vertex ", k);
    mesh.vertices.emplace_back(x / w, y / w, z / w);
  }
  for (unsigned long long k = 0; k < nf; ++k) {
    lines.next(line);
    std::istringstream ls(line);
    long long n = 0;
    MESH_CHECK(static_cast<bool>(ls >> n) && n >= 0 && n <= 1024, "mesh file '", path, "': OFF face ", k,
               " has a bad vertex count (0 .. 1024)");
    if (n < 3) continue;  // points and lines carry no surface
    int first = 0, prev = 0;
    for (long long j = 0; j < n; ++j) {
      long long idx = -1;
      MESH_CHECK(static_cast<bool>(ls >> idx) && idx >= 0 && static_cast<unsigned long long>(idx) < nv,
                 "mesh file '", path, "': OFF face ", k, " has a missing or out-of-range vertex index");
      if (j == 0) first = static_cast<int>(idx);
      if (j >= 2) {
        MESH_CHECK(mesh.triangles.size() < kMaxMeshElements, "mesh file '", path, "': more than ",
                   kMaxMeshElements, " triangles");
        mesh.triangles.push_back({first, prev, static_cast<int>(idx)});
      }
      prev = static_cast<int>(idx);
    }
  }
  return mesh;
}

}  // namespace

TriangleMesh load_mesh(const std::string& path, const Vec3& scale) {
  MESH_CHECK(scale.allFinite() && (scale.array() != 0).all(), "mesh file '", path, "': scale ", scale.transpose(),
             " has a zero or non-finite entry");
  return load_mesh_data(read_regular_file<ModelError>(path, kMaxMeshBytes, "mesh file"), path, scale);
}

TriangleMesh load_mesh_data(const std::string& bytes, const std::string& path, const Vec3& scale) {
  MESH_CHECK(scale.allFinite() && (scale.array() != 0).all(), "mesh file '", path, "': scale ", scale.transpose(),
             " has a zero or non-finite entry");
  MESH_CHECK(!bytes.empty(), "mesh file '", path, "' is empty");
  const std::string ext = lower_extension(path);
  TriangleMesh mesh;
  if (ext == "stl") {
    mesh = read_stl(path, bytes);
  } else if (ext == "obj") {
    mesh = read_obj(path, bytes);
  } else if (ext == "off") {
    mesh = read_off(path, bytes);
  } else if (ext == "dae" || ext == "ply" || ext == "3ds" || ext == "fbx" || ext == "gltf" || ext == "glb") {
    mesh = read_mesh_assimp(path, ext, bytes);
  } else {
    MESH_CHECK(false, "mesh file '", path, "': unsupported type '.", ext,
               "' (supported: .stl, .obj, .off, and through assimp .dae, .ply, .3ds, .fbx, .gltf, .glb)");
  }
  MESH_CHECK(!mesh.triangles.empty(), "mesh file '", path, "' contains no triangles");
  for (const Vec3& v : mesh.vertices) {
    MESH_CHECK(v.allFinite(), "mesh file '", path, "' has a non-finite vertex");
  }
  for (Vec3& v : mesh.vertices) v = v.cwiseProduct(scale);
  return mesh;
}

}  // namespace impulse
