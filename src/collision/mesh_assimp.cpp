// Mesh formats other than STL, OBJ and OFF (COLLADA .dae above all, as ROS descriptions ship
// them) through assimp (Debian libassimp-dev). The mesh's bytes come from read_regular_file (no
// devices, size limit) and assimp parses them from memory. Files the mesh refers to (a glTF's
// .bin buffers) go through MeshFolderIO below, never through assimp's own file access:
//   - the reference must be a relative path that stays inside the mesh's folder once ".." is
//     applied to its text (as MuJoCo reads assets only from the model's folders): absolute paths
//     and ways out of the folder are refused; symbolic links inside the folder are followed;
//   - it is resolved against the mesh's folder (never the working directory);
//   - it is read by read_regular_file: a regular file, never a device or a FIFO, and all the
//     files of one mesh together are at most kMaxMeshBytes.
// A refused or unreadable reference fails the load (even when the importer would go on without
// it) with an error naming the mesh and the reference.
//
// Counts: a PLY header's element counts are checked against the bytes that follow it and against
// kMaxMeshElements before assimp sees the file (assimp allocates what the header declares); the
// scene assimp returns is checked against kMaxMeshElements before it is copied.
//
// Conventions: URDF meshes are in the link frame, z up, metres. COLLADA files declare an up axis
// and a unit: the unit is applied (assimp scales the root node), the up axis is ignored (assimp
// would rotate Z_UP files into its own y-up convention, which rviz and Gazebo do not do for
// URDF meshes either). Every node's transform is baked into the vertices.
#include "mesh_assimp.hpp"

#include <assimp/IOStream.hpp>
#include <assimp/IOSystem.hpp>
#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <vector>

#include "impulse/core/check.hpp"
#include "impulse/core/file.hpp"

namespace impulse {

#define MESH_CHECK(cond, ...) IMPULSE_CHECK_AS(::impulse::ModelError, cond, __VA_ARGS__)

namespace {

namespace fs = std::filesystem;

// A read-only stream over bytes it owns. Importers delete their streams themselves, except when
// they throw in between (assimp's glTF reader, given a buffer shorter than its byteLength): the
// streams still open when the IO system goes are deleted with it (`open` lists them).
class BytesStream : public Assimp::IOStream {
 public:
  BytesStream(std::string bytes, std::set<BytesStream*>* open) : bytes_(std::move(bytes)), open_(open) {
    open_->insert(this);
  }
  ~BytesStream() override {
    if (open_) open_->erase(this);
  }
  void forget() { open_ = nullptr; }
  size_t Read(void* buffer, size_t size, size_t count) override {
    if (size == 0 || count == 0 || pos_ >= bytes_.size()) return 0;
    const size_t n = std::min(count, (bytes_.size() - pos_) / size);
    std::memcpy(buffer, bytes_.data() + pos_, n * size);
    pos_ += n * size;
    return n;
  }
  size_t Write(const void*, size_t, size_t) override { return 0; }
  aiReturn Seek(size_t offset, aiOrigin origin) override {
    size_t target = 0;
    switch (origin) {
      case aiOrigin_SET: target = offset; break;
      case aiOrigin_CUR: target = pos_ + offset; break;
      case aiOrigin_END: target = bytes_.size() - offset; break;
      default: return aiReturn_FAILURE;
    }
    if (target > bytes_.size() || (origin == aiOrigin_END && offset > bytes_.size())) return aiReturn_FAILURE;
    pos_ = target;
    return aiReturn_SUCCESS;
  }
  size_t Tell() const override { return pos_; }
  size_t FileSize() const override { return bytes_.size(); }
  void Flush() override {}

 private:
  std::string bytes_;
  size_t pos_ = 0;
  std::set<BytesStream*>* open_;
};

// The files a mesh refers to, under the rules at the top of this file. The first refusal is kept
// for the error message (assimp's own message names only the reference).
class MeshFolderIO : public Assimp::IOSystem {
 public:
  explicit MeshFolderIO(const std::string& mesh_path) : folder_(fs::path(mesh_path).parent_path()) {}
  ~MeshFolderIO() override {
    const std::set<BytesStream*> leaked = std::move(open_);
    for (BytesStream* stream : leaked) {
      stream->forget();
      delete stream;
    }
  }
  MeshFolderIO(const MeshFolderIO&) = delete;
  MeshFolderIO& operator=(const MeshFolderIO&) = delete;

  bool Exists(const char* name) const override {
    std::string path, why;
    if (!resolve(name, path, why)) return false;
    std::error_code ec;
    return fs::is_regular_file(path, ec);
  }
  char getOsSeparator() const override { return '/'; }

  Assimp::IOStream* Open(const char* name, const char* mode) override {
    const std::string ref = name ? name : "";
    if (mode && std::strpbrk(mode, "wa+")) return refuse(ref, ", which is opened for writing");
    std::string path, why;
    if (!resolve(ref, path, why)) return refuse(ref, ", which " + why);
    try {
      std::string bytes = read_regular_file<ModelError>(path, kMaxMeshBytes - std::min(used_, kMaxMeshBytes), "file");
      used_ += bytes.size();
      return new BytesStream(std::move(bytes), &open_);
    } catch (const ModelError& e) {
      // "file '<path>': <problem>" without its head
      std::string what = e.what();
      const std::string head = "file '" + path + "': ";
      if (what.compare(0, head.size(), head) == 0) what.erase(0, head.size());
      return refuse(ref, " (" + path + "): " + what + (used_ > 0 ? " (the limit counts every file of the mesh)" : ""));
    }
  }
  void Close(Assimp::IOStream* stream) override { delete stream; }

  const std::string& refusal() const { return refusal_; }

 private:
  bool resolve(const std::string& ref, std::string& path, std::string& why) const {
    if (ref.empty()) {
      why = "is empty";
      return false;
    }
    const fs::path p(ref);
    if (p.is_absolute()) {
      why = "is an absolute path (a mesh may refer only to files in its folder, by relative paths)";
      return false;
    }
    const fs::path normal = p.lexically_normal();
    if (!normal.empty() && *normal.begin() == "..") {
      why = "leads out of the mesh's folder (a mesh may refer only to files in its folder)";
      return false;
    }
    path = (folder_ / normal).string();
    return true;
  }
  // `tail` follows the reference in the message
  Assimp::IOStream* refuse(const std::string& ref, const std::string& tail) {
    if (refusal_.empty()) refusal_ = "refers to '" + ref + "'" + tail;
    return nullptr;
  }

  fs::path folder_;
  std::set<BytesStream*> open_;  // streams not deleted yet
  std::size_t used_ = 0;
  std::string refusal_;
};

// The element counts of a PLY header against the bytes after it: each element instance takes at
// least one byte (binary: its fixed-size properties, a list at least its count; ASCII: two
// characters per property), so a header cannot declare more instances than the data holds.
void check_ply_header(const std::string& path, const std::string& bytes) {
  std::size_t pos = 0, line_no = 0;
  bool binary = false;
  struct Element {
    std::string name;
    unsigned long long count = 0;
    std::size_t min_bytes = 0;
    std::size_t properties = 0;
  };
  std::vector<Element> elements;
  auto type_size = [](const std::string& t) -> std::size_t {
    if (t == "char" || t == "uchar" || t == "int8" || t == "uint8") return 1;
    if (t == "short" || t == "ushort" || t == "int16" || t == "uint16") return 2;
    if (t == "int" || t == "uint" || t == "float" || t == "int32" || t == "uint32" || t == "float32") return 4;
    if (t == "double" || t == "float64") return 8;
    return 1;  // unknown: the parser rejects it; the smallest size keeps this bound a true minimum
  };
  bool ended = false;
  while (pos < bytes.size() && !ended) {
    std::size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) end = bytes.size();
    std::istringstream line(bytes.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    std::string word;
    if (!(line >> word)) continue;
    if (word == "format") {
      std::string f;
      line >> f;
      binary = f.compare(0, 7, "binary_") == 0;
    } else if (word == "element") {
      Element e;
      std::string count;
      line >> e.name >> count;
      // as many digits as the parser reads; more than 12 is beyond any limit anyway
      std::size_t digits = 0;
      while (digits < count.size() && std::isdigit(static_cast<unsigned char>(count[digits]))) ++digits;
      MESH_CHECK(digits > 0, "mesh file '", path, "': PLY header line ", line_no, ": element '", e.name,
                 "' has no count");
      e.count = digits > 12 ? ~0ull : std::stoull(count.substr(0, digits));
      MESH_CHECK(e.count <= kMaxMeshElements, "mesh file '", path, "': PLY header line ", line_no, ": element '",
                 e.name, "' count ", count, " is more than the limit of ", kMaxMeshElements);
      elements.push_back(e);
    } else if (word == "property" && !elements.empty()) {
      std::string type;
      line >> type;
      if (type == "list") line >> type;  // the count's type
      elements.back().min_bytes += type_size(type);
      ++elements.back().properties;
    } else if (word == "end_header") {
      ended = true;
    }
  }
  // the data after the header (or after the last line read when the header has no end: the
  // parser fails on it, but may size its elements first)
  const std::size_t have = pos < bytes.size() ? bytes.size() - pos : 0;
  double need = 0;
  for (const Element& e : elements) {
    const std::size_t per = binary ? e.min_bytes : 2 * e.properties;
    need += static_cast<double>(e.count) * static_cast<double>(std::max<std::size_t>(per, 1));
    MESH_CHECK(need <= static_cast<double>(have) + 1, "mesh file '", path, "': PLY header declares ", e.count,
               " '", e.name, "' elements (with those before it at least ", static_cast<unsigned long long>(need),
               " bytes), the file holds ", have, " bytes of data");
  }
}

}  // namespace

TriangleMesh read_mesh_assimp(const std::string& path, const std::string& extension, const std::string& bytes) {
  if (extension == "ply") check_ply_header(path, bytes);
  Assimp::Importer importer;
  auto* io = new MeshFolderIO(path);  // owned by the importer
  importer.SetIOHandler(io);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  // drop everything the physics does not need before post-processing it
  importer.SetPropertyInteger(AI_CONFIG_PP_RVC_FLAGS, aiComponent_NORMALS | aiComponent_TANGENTS_AND_BITANGENTS |
                                                          aiComponent_COLORS | aiComponent_TEXCOORDS |
                                                          aiComponent_BONEWEIGHTS | aiComponent_ANIMATIONS |
                                                          aiComponent_TEXTURES | aiComponent_LIGHTS |
                                                          aiComponent_CAMERAS | aiComponent_MATERIALS);
  const unsigned flags = aiProcess_RemoveComponent | aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                         aiProcess_PreTransformVertices | aiProcess_SortByPType;
  // From memory: the importer's file name is a placeholder without a folder, so the references
  // reach MeshFolderIO exactly as the file writes them.
  const aiScene* scene = importer.ReadFileFromMemory(bytes.data(), bytes.size(), flags, extension.c_str());
  // a refusal fails the load even when the importer went on: assimp's glTF reader, refused an
  // absolute path, retries with its file name in the mesh's folder, and a load must not depend
  // on which file such a fallback happens to find
  MESH_CHECK(io->refusal().empty(), "mesh file '", path, "' ", io->refusal());
  MESH_CHECK(scene != nullptr, "mesh file '", path, "': ", importer.GetErrorString());
  std::size_t vertices = 0, faces = 0;
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    vertices += scene->mMeshes[m]->mNumVertices;
    faces += scene->mMeshes[m]->mNumFaces;
  }
  MESH_CHECK(vertices <= kMaxMeshElements && faces <= kMaxMeshElements, "mesh file '", path, "' has ", vertices,
             " vertices and ", faces, " faces, more than the limit of ", kMaxMeshElements);
  TriangleMesh mesh;
  mesh.vertices.reserve(vertices);
  mesh.triangles.reserve(faces);
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    const aiMesh* am = scene->mMeshes[m];
    if (!(am->mPrimitiveTypes & aiPrimitiveType_TRIANGLE)) continue;  // points and lines carry no surface
    const int base = static_cast<int>(mesh.vertices.size());
    for (unsigned v = 0; v < am->mNumVertices; ++v) {
      mesh.vertices.emplace_back(am->mVertices[v].x, am->mVertices[v].y, am->mVertices[v].z);
    }
    for (unsigned f = 0; f < am->mNumFaces; ++f) {
      const aiFace& face = am->mFaces[f];
      if (face.mNumIndices != 3) continue;
      for (int k = 0; k < 3; ++k) {
        MESH_CHECK(face.mIndices[k] < am->mNumVertices, "mesh file '", path, "': a face refers to vertex ",
                   face.mIndices[k], " of a mesh of ", am->mNumVertices);
      }
      mesh.triangles.push_back({base + static_cast<int>(face.mIndices[0]), base + static_cast<int>(face.mIndices[1]),
                                base + static_cast<int>(face.mIndices[2])});
    }
  }
  return mesh;
}

}  // namespace impulse
