// Mesh formats other than STL and OBJ (COLLADA .dae above all, as ROS descriptions ship them)
// through assimp (Debian libassimp-dev). The bytes come from read_regular_file (no devices, size
// limit), so assimp parses from memory and never opens a file itself.
//
// Conventions: URDF meshes are in the link frame, z up, metres. COLLADA files declare an up axis
// and a unit: the unit is applied (assimp scales the root node), the up axis is ignored (assimp
// would rotate Z_UP files into its own y-up convention, which rviz and Gazebo do not do for
// URDF meshes either). Every node's transform is baked into the vertices.
#include "mesh_assimp.hpp"

#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "impulse/core/check.hpp"

namespace impulse {

TriangleMesh read_mesh_assimp(const std::string& path, const std::string& extension, const std::string& bytes) {
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  // drop everything the physics does not need before post-processing it
  importer.SetPropertyInteger(AI_CONFIG_PP_RVC_FLAGS, aiComponent_NORMALS | aiComponent_TANGENTS_AND_BITANGENTS |
                                                          aiComponent_COLORS | aiComponent_TEXCOORDS |
                                                          aiComponent_BONEWEIGHTS | aiComponent_ANIMATIONS |
                                                          aiComponent_TEXTURES | aiComponent_LIGHTS |
                                                          aiComponent_CAMERAS | aiComponent_MATERIALS);
  const unsigned flags = aiProcess_RemoveComponent | aiProcess_Triangulate | aiProcess_JoinIdenticalVertices |
                         aiProcess_PreTransformVertices | aiProcess_SortByPType;
  const aiScene* scene = importer.ReadFileFromMemory(bytes.data(), bytes.size(), flags, extension.c_str());
  IMPULSE_CHECK_AS(ModelError, scene != nullptr, "mesh file '", path, "': ", importer.GetErrorString());
  TriangleMesh mesh;
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
      mesh.triangles.push_back({base + static_cast<int>(face.mIndices[0]), base + static_cast<int>(face.mIndices[1]),
                                base + static_cast<int>(face.mIndices[2])});
    }
  }
  return mesh;
}

}  // namespace impulse
