// Shape records of the collision world: validation, FCL geometry, mesh loading and caching, the
// convex hulls of moving meshes (convex_hull.hpp).
#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/capsule.h>
#include <fcl/geometry/shape/cylinder.h>
#include <fcl/geometry/shape/sphere.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>

#include "world_types.hpp"
#include "impulse/core/check.hpp"

namespace impulse {
namespace detail {

#define COL_MODEL_CHECK(cond, ...) IMPULSE_CHECK_AS(::impulse::ModelError, cond, __VA_ARGS__)

bool finite(const SE3& X) { return X.R.allFinite() && X.p.allFinite(); }

namespace {

std::shared_ptr<MeshData> load_mesh_cached(const std::string& path, const Vec3& scale, const std::string& what,
                                         MeshCache& mesh_cache) {
  std::ostringstream key;
  key.precision(17);
  key << path << '|' << scale.x() << ',' << scale.y() << ',' << scale.z();
  auto it = mesh_cache.find(key.str());
  if (it != mesh_cache.end()) return it->second;
  auto md = std::make_shared<MeshData>();
  try {
    md->mesh = load_mesh(path, scale);
  } catch (const ModelError& e) {
    throw ModelError(what + ": " + e.what());
  }
  Vec3 lo = md->mesh.vertices[0], hi = lo;
  for (const Vec3& v : md->mesh.vertices) {
    lo = lo.cwiseMin(v);
    hi = hi.cwiseMax(v);
    md->bound = std::max(md->bound, v.norm());
  }
  md->centre = 0.5 * (lo + hi);
  md->half = 0.5 * (hi - lo);
  mesh_cache.emplace(key.str(), md);
  return md;
}

void ensure_bvh(MeshData& md) {
  if (md.bvh) return;
  std::vector<fcl::Vector3d> verts(md.mesh.vertices.begin(), md.mesh.vertices.end());
  std::vector<fcl::Triangle> tris;
  tris.reserve(md.mesh.triangles.size());
  for (const auto& t : md.mesh.triangles) tris.emplace_back(t[0], t[1], t[2]);
  md.bvh = std::make_shared<Bvh>();
  md.bvh->beginModel();
  md.bvh->addSubModel(verts, tris);
  md.bvh->endModel();
  md.bvh->computeLocalAABB();
}

// Hulls already computed in this process, by the mesh's vertices (path, scale and a hash of the
// vertex data): every World that loads the same mesh shares one hull (VecWorld clones, many
// robots of one description).
std::mutex g_hull_mutex;
std::map<std::string, std::weak_ptr<const HullData>> g_hulls;

std::string hull_key(const std::string& path, const TriangleMesh& mesh) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the vertex bytes
  for (const Vec3& v : mesh.vertices) {
    const auto* b = reinterpret_cast<const unsigned char*>(v.data());
    for (std::size_t k = 0; k < sizeof(Scalar) * 3; ++k) h = (h ^ b[k]) * 1099511628211ull;
  }
  return path + '|' + std::to_string(mesh.vertices.size()) + '|' + std::to_string(h);
}

// The hull of md (computed once); false when the mesh is flat (no hull: it collides as triangles).
bool ensure_hull(MeshData& md, const std::string& path) {
  if (md.hull) return true;
  if (md.flat) return false;
  const std::string key = hull_key(path, md.mesh);
  std::lock_guard<std::mutex> lock(g_hull_mutex);
  if (auto shared = g_hulls[key].lock()) {
    md.hull = std::move(shared);
    return true;
  }
  auto hd = std::make_shared<HullData>();
  try {
    hd->hull = convex_hull(md.mesh.vertices, "mesh file '" + path + "'");
  } catch (const ModelError&) {
    md.flat = true;  // a flat mesh (a plate, a single triangle) has no volume: keep its triangles
    return false;
  }
  auto verts = std::make_shared<std::vector<fcl::Vector3d>>(hd->hull.vertices.begin(), hd->hull.vertices.end());
  auto faces = std::make_shared<std::vector<int>>();
  for (const std::vector<int>& f : hd->hull.faces) {
    faces->push_back(static_cast<int>(f.size()));
    faces->insert(faces->end(), f.begin(), f.end());
  }
  hd->geometry = std::make_shared<fcl::Convexd>(verts, static_cast<int>(hd->hull.faces.size()), faces);
  hd->geometry->computeLocalAABB();
  g_hulls[key] = hd;
  md.hull = std::move(hd);
  return true;
}

}  // namespace

// Validates a shape description and builds its record (and FCL geometry); throws ModelError.
Shape make_shape(const CollisionShape& cs, const std::string& object_name, Index nb, MaterialTable& materials,
               MeshCache& mesh_cache, bool allow_hull) {
  const std::string what = "object '" + object_name + "', link '" + cs.link + "', collision shape '" + cs.name + "'";
  COL_MODEL_CHECK(cs.body >= 0 && cs.body < nb, what, ": body index ", cs.body, " out of range");
  COL_MODEL_CHECK(finite(cs.X_BS), what, ": pose is not finite");
  COL_MODEL_CHECK(cs.size.allFinite(), what, ": size ", cs.size.transpose(), " is not finite");
  Shape s;
  s.type = cs.type;
  s.body = cs.body;
  s.X_BS = cs.X_BS;
  s.name = cs.name;
  s.material = materials.id(cs.material.empty() ? std::string("default") : cs.material);
  std::shared_ptr<fcl::CollisionGeometryd> geom;
  switch (cs.type) {
    case ShapeType::Sphere:
      COL_MODEL_CHECK(cs.size.x() > 0, what, ": sphere radius ", cs.size.x(), " must be > 0");
      s.r = s.bound = cs.size.x();
      geom = std::make_shared<fcl::Sphered>(s.r);
      break;
    case ShapeType::Box:
      COL_MODEL_CHECK((cs.size.array() > 0).all(), what, ": box size ", cs.size.transpose(), " must be > 0");
      s.h = 0.5 * cs.size;
      s.bound = s.h.norm();
      geom = std::make_shared<fcl::Boxd>(cs.size.x(), cs.size.y(), cs.size.z());
      break;
    case ShapeType::Capsule:
      COL_MODEL_CHECK(cs.size.x() > 0 && cs.size.y() >= 0, what, ": capsule radius ", cs.size.x(), " and length ",
                      cs.size.y(), " must be > 0 and >= 0");
      s.r = cs.size.x();
      s.hl = 0.5 * cs.size.y();
      s.bound = s.hl + s.r;
      geom = std::make_shared<fcl::Capsuled>(s.r, cs.size.y());
      break;
    case ShapeType::Cylinder:
      COL_MODEL_CHECK(cs.size.x() > 0 && cs.size.y() > 0, what, ": cylinder radius ", cs.size.x(), " and length ",
                      cs.size.y(), " must be > 0");
      s.r = cs.size.x();
      s.hl = 0.5 * cs.size.y();
      s.bound = std::sqrt(s.hl * s.hl + s.r * s.r);
      geom = std::make_shared<fcl::Cylinderd>(s.r, cs.size.y());
      break;
    case ShapeType::Mesh: {
      COL_MODEL_CHECK(!cs.mesh_path.empty(), what, ": mesh has no file path");
      s.mesh = load_mesh_cached(cs.mesh_path, cs.size, what, mesh_cache);
      s.bound = s.mesh->bound;
      if (allow_hull && cs.mesh_collision == MeshCollision::ConvexHull && ensure_hull(*s.mesh, cs.mesh_path)) {
        s.hull = &s.mesh->hull->hull;
        geom = s.mesh->hull->geometry;
      } else {
        ensure_bvh(*s.mesh);
        geom = s.mesh->bvh;
      }
      break;
    }
  }
  s.fco = std::make_unique<MarginObject>(geom);
  return s;
}

}  // namespace detail
}  // namespace impulse
