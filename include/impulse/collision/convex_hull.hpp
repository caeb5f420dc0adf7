// Convex hulls of collision meshes. A moving link's mesh collides as the convex hull of its
// vertices by default (as in MuJoCo and Bullet): the hull is computed once when the mesh is
// loaded, with qhull (Quickhull: Barber, Dobkin, Huhdanpaa, "The Quickhull algorithm for convex
// hulls", ACM TOMS 22(4), 1996), and shared by every shape and World that uses the same file and
// scale. Contacts of a hull come from its support function (hill climbing on the hull's vertex
// graph) and its faces (manifold.hpp, convex_plane).
#pragma once

#include <string>
#include <vector>

#include "impulse/core/types.hpp"

namespace impulse {

struct ConvexHull {
  std::vector<Vec3> vertices;                // hull vertices, mesh frame
  std::vector<std::vector<int>> faces;       // per face: its vertices, counter-clockwise seen from outside
  std::vector<Vec3> normals;                 // per face: outward unit normal
  std::vector<std::vector<int>> neighbours;  // per vertex: the vertices joined to it by a hull edge
  std::vector<std::vector<int>> vertex_faces;  // per vertex: the faces it belongs to
  // Start vertices of the support search, a cube map of directions: the 6 faces of the cube
  // [-1, 1]^3, each cut into kSupportGrid x kSupportGrid cells; per cell, the vertex farthest
  // along the direction of the cell's centre. Face 2 a + (1 if the direction's component a is
  // negative), a the axis of its largest component; cells (i, j) along the axes a + 1, a + 2.
  static constexpr int kSupportGrid = 8;
  std::vector<int> support_starts;  // 6 kSupportGrid^2 vertices
  Scalar volume = 0;
  Scalar thickness = 0;  // smallest side of the vertices' bounding box (mesh frame)

  // Index of a vertex v maximising dir . v: hill climbing on the vertex graph (a linear function
  // has no other local maximum on a convex polytope) from the start vertex of the cube-map cell
  // of `dir`, which is the answer or a few edges from it (so a support costs about one vertex's
  // neighbours, not a pass over the vertices). Deterministic: the same dir gives the same vertex.
  // A zero or non-finite dir gives a vertex of the hull.
  int support(const Vec3& dir) const;
};

// The convex hull of `points` (at least 4, not all in one plane). Throws ModelError starting with
// `what` (e.g. "mesh file 'foot.stl'") when the points are too few, not finite, or flat (all in a
// plane or on a line: no volume), with qhull's reason.
ConvexHull convex_hull(const std::vector<Vec3>& points, const std::string& what);

}  // namespace impulse
