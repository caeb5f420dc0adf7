// Convex hulls through qhull's reentrant library (libqhull_r): Quickhull of Barber, Dobkin and
// Huhdanpaa, "The Quickhull algorithm for convex hulls", ACM TOMS 22(4):469-483, 1996. qhull
// merges coplanar facets (its default 'C-0'), so a flat side of a mesh is one polygonal face, which
// the face-based manifolds (manifold.cpp, convex_plane) need. See convex_hull.hpp.
#include "impulse/collision/convex_hull.hpp"

extern "C" {
#include <libqhull_r/qhull_ra.h>
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "impulse/core/check.hpp"

namespace impulse {

namespace {

// The direction of the centre of cube-map cell (face, i, j) (see ConvexHull::support_starts).
Vec3 cell_direction(int face, int i, int j) {
  constexpr int g = ConvexHull::kSupportGrid;
  const int a = face / 2;
  Vec3 d;
  d[a] = face % 2 == 0 ? 1.0 : -1.0;
  d[(a + 1) % 3] = (2.0 * i + 1) / g - 1;
  d[(a + 2) % 3] = (2.0 * j + 1) / g - 1;
  return d.normalized();
}

// The first line of qhull's report that says what went wrong ("QH6154 Qhull precision error:
// initial simplex is flat ..."), or a generic text.
std::string qhull_reason(const std::string& report, int code) {
  std::size_t at = report.find("QH");
  if (at == std::string::npos) return "qhull failed with code " + std::to_string(code);
  std::size_t end = report.find('\n', at);
  std::string line = report.substr(at, end == std::string::npos ? std::string::npos : end - at);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

}  // namespace

int ConvexHull::support(const Vec3& dir) const {
  // the cube-map cell of dir: its largest component's axis and sign, then the other two
  // components over it, in [-1, 1], scaled to the grid
  constexpr int g = kSupportGrid;
  const Vec3 m = dir.cwiseAbs();
  const int a = m.x() >= m.y() ? (m.x() >= m.z() ? 0 : 2) : (m.y() >= m.z() ? 1 : 2);
  int v = support_starts[0];
  if (m[a] > 0 && dir.allFinite()) {
    const Scalar scale = 0.5 * g / m[a];
    const int i = std::min(g - 1, static_cast<int>((dir[(a + 1) % 3] + m[a]) * scale));
    const int j = std::min(g - 1, static_cast<int>((dir[(a + 2) % 3] + m[a]) * scale));
    v = support_starts[static_cast<std::size_t>(((2 * a + (dir[a] < 0 ? 1 : 0)) * g + i) * g + j)];
  }
  Scalar h = dir.dot(vertices[static_cast<std::size_t>(v)]);
  for (;;) {
    int next = -1;
    for (const int n : neighbours[static_cast<std::size_t>(v)]) {
      const Scalar d = dir.dot(vertices[static_cast<std::size_t>(n)]);
      if (d > h) h = d, next = n;
    }
    if (next < 0) return v;
    v = next;
  }
}

ConvexHull convex_hull(const std::vector<Vec3>& points, const std::string& what) {
  IMPULSE_CHECK_AS(ModelError, points.size() >= 4, what, ": no convex hull: ", points.size(),
                   " vertices (at least 4 not in one plane are needed)");
  IMPULSE_CHECK_AS(ModelError, points.size() <= static_cast<std::size_t>(1) << 24, what, ": no convex hull: ",
                   points.size(), " vertices is too many");
  std::vector<coordT> coords(3 * points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    IMPULSE_CHECK_AS(ModelError, points[i].allFinite(), what, ": no convex hull: vertex ", i, " is not finite");
    for (int k = 0; k < 3; ++k) coords[3 * i + static_cast<std::size_t>(k)] = points[i][k];
  }

  // qhull reports errors to a FILE: keep its text for the message instead of printing it
  char* report_buf = nullptr;
  std::size_t report_size = 0;
  FILE* report = open_memstream(&report_buf, &report_size);
  qhT qh_storage;
  qhT* qh = &qh_storage;
  qh_zero(qh, report);
  char cmd[] = "qhull";  // Quickhull with qhull's default merging of coplanar facets (C-0)
  const int code = qh_new_qhull(qh, 3, static_cast<int>(points.size()), coords.data(), False, cmd, nullptr, report);

  ConvexHull hull;
  std::string error;
  if (code != 0) {
    std::fflush(report);
    error = qhull_reason(report_buf ? std::string(report_buf, report_size) : std::string(), code);
  } else {
    // vertices in the order of the input points (deterministic), indexed by qhull's point id
    std::map<int, int> index;
    vertexT* vertex;
    FORALLvertices { index.emplace(qh_pointid(qh, vertex->point), 0); }
    for (auto& [id, k] : index) {
      k = static_cast<int>(hull.vertices.size());
      hull.vertices.push_back(points[static_cast<std::size_t>(id)]);
    }
    facetT* facet;
    FORALLfacets {
      setT* loop = qh_facet3vertex(qh, facet);  // the facet's vertices in order around it
      std::vector<int> face;
      vertexT** vertexp;
      FOREACHvertex_(loop) face.push_back(index.at(qh_pointid(qh, vertex->point)));
      qh_settempfree(qh, &loop);
      const Vec3 n(facet->normal[0], facet->normal[1], facet->normal[2]);
      // counter-clockwise seen from outside: the polygon's (Newell) normal along the facet's
      Vec3 newell = Vec3::Zero();
      for (std::size_t i = 0; i < face.size(); ++i) {
        newell += hull.vertices[static_cast<std::size_t>(face[i])].cross(
            hull.vertices[static_cast<std::size_t>(face[(i + 1) % face.size()])]);
      }
      if (newell.dot(n) < 0) std::reverse(face.begin(), face.end());
      hull.faces.push_back(std::move(face));
      hull.normals.push_back(n.normalized());
    }
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong = 0, totlong = 0;
  qh_memfreeshort(qh, &curlong, &totlong);
  std::fclose(report);
  std::free(report_buf);
  IMPULSE_CHECK_AS(ModelError, error.empty(), what, ": no convex hull (are the vertices all in one plane?): ", error);

  // edges (vertex graph), faces per vertex, volume (sum of the tetrahedra from the first vertex)
  const std::size_t nv = hull.vertices.size();
  hull.neighbours.assign(nv, {});
  hull.vertex_faces.assign(nv, {});
  const Vec3 o = hull.vertices[0];
  for (std::size_t f = 0; f < hull.faces.size(); ++f) {
    const std::vector<int>& face = hull.faces[f];
    for (std::size_t i = 0; i < face.size(); ++i) {
      const int a = face[i], b = face[(i + 1) % face.size()];
      hull.neighbours[static_cast<std::size_t>(a)].push_back(b);
      hull.neighbours[static_cast<std::size_t>(b)].push_back(a);
      hull.vertex_faces[static_cast<std::size_t>(a)].push_back(static_cast<int>(f));
    }
    for (std::size_t i = 1; i + 1 < face.size(); ++i) {
      const Vec3 a = hull.vertices[static_cast<std::size_t>(face[0])] - o;
      const Vec3 b = hull.vertices[static_cast<std::size_t>(face[i])] - o;
      const Vec3 c = hull.vertices[static_cast<std::size_t>(face[i + 1])] - o;
      hull.volume += a.dot(b.cross(c)) / 6;
    }
  }
  for (auto& n : hull.neighbours) {
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
  }
  Vec3 lo = hull.vertices[0], hi = lo;
  for (const Vec3& v : hull.vertices) {
    lo = lo.cwiseMin(v);
    hi = hi.cwiseMax(v);
  }
  hull.thickness = (hi - lo).minCoeff();
  constexpr int g = ConvexHull::kSupportGrid;
  hull.support_starts.resize(6 * g * g);
  for (int face = 0; face < 6; ++face)
    for (int i = 0; i < g; ++i)
      for (int j = 0; j < g; ++j) {
        const Vec3 d = cell_direction(face, i, j);
        int best = 0;
        for (std::size_t v = 1; v < nv; ++v) {
          if (d.dot(hull.vertices[v]) > d.dot(hull.vertices[static_cast<std::size_t>(best)])) best = static_cast<int>(v);
        }
        hull.support_starts[static_cast<std::size_t>((face * g + i) * g + j)] = best;
      }
  return hull;
}

}  // namespace impulse
