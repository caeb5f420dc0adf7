// Closed-form narrow phase and multi-point contact manifolds, for the pairs where FCL returns a
// single point but a resting body needs several (a box flat on the ground needs 4 contacts).
//
// Every function takes world poses (R, p) and returns the number of points written to `out`
// (at most the stated maximum). A point is reported when its depth is >= -margin. Conventions:
//   - out[k].normal points from the second shape (B) into the first (A);
//   - out[k].depth > 0 is penetration along the normal, < 0 a gap within the margin;
//   - out[k].position is the midpoint between A's deepest point and B's surface point.
// Planes are n . x = offset (n unit; the solid half-space is n . x <= offset); they are always B.
// Sizes are as in CollisionShape: sphere radius r; box half extents h; capsule and cylinder radius
// r and half-length hl along the local z axis (capsule: distance between cap centres is 2 hl).
#pragma once

#include "impulse/collision/convex_hull.hpp"
#include "impulse/core/types.hpp"

namespace impulse {

struct ManifoldPoint {
  Vec3 position = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();
  Scalar depth = 0;
};

constexpr int kMaxManifoldPoints = 8;

// Shape (A) against a plane (B).
int sphere_plane(const Vec3& c, Scalar r, const Vec3& n, Scalar offset, Scalar margin, ManifoldPoint* out);
// Every box corner within the margin: 4 when flat, 2 on an edge, 1 on a corner (max 8).
int box_plane(const Mat3& R, const Vec3& p, const Vec3& h, const Vec3& n, Scalar offset, Scalar margin,
              ManifoldPoint* out);
// The two cap spheres (max 2): 2 when lying flat, 1 when upright.
int capsule_plane(const Mat3& R, const Vec3& p, Scalar r, Scalar hl, const Vec3& n, Scalar offset, Scalar margin,
                  ManifoldPoint* out);
// Four rim points (90 degrees apart, starting at the deepest) on each end disc (max 8): 4 on the
// bottom rim when standing upright, 2 (one per end) when lying on its side.
int cylinder_plane(const Mat3& R, const Vec3& p, Scalar r, Scalar hl, const Vec3& n, Scalar offset,
                   Scalar margin, ManifoldPoint* out);
// Vertices (mesh frame, `count` of them) of a mesh at (R, p) against a plane. More than 4 points
// in the margin are reduced to at most 4: of the vertices within 5 % of the margin of the deepest
// (the support), the extremes along two fixed tangent directions of the mesh and their opposites.
int vertices_plane(const Mat3& R, const Vec3& p, const Vec3* vertices, int count, const Vec3& n, Scalar offset,
                   Scalar margin, ManifoldPoint* out);

// A convex hull (mesh frame) at (R, p) against a plane: the same points as vertices_plane over
// the hull's vertices (max 4), found without visiting them all: the deepest vertex by hill
// climbing (ConvexHull::support), then walks over the hull's edges from it to the vertices in the
// margin (stopping at 5) and, when more than 4, to those in the band below the deepest (on a
// convex polytope the vertices above any plane are connected by its edges). A rounded part's
// patch (every two points closer than half the hull's thickness, ConvexHull::thickness, and no
// face of the deepest vertex within 3 degrees of the plane) becomes one point: at the points'
// centroid, as deep as the deepest.
int convex_plane(const Mat3& R, const Vec3& p, const ConvexHull& hull, const Vec3& n, Scalar offset, Scalar margin,
                 ManifoldPoint* out);

// Sphere A against sphere B (max 1).
int sphere_sphere(const Vec3& ca, Scalar ra, const Vec3& cb, Scalar rb, Scalar margin, ManifoldPoint* out);
// Sphere A against box B (max 1).
int sphere_box(const Vec3& c, Scalar r, const Mat3& R, const Vec3& p, const Vec3& h, Scalar margin,
               ManifoldPoint* out);
// Sphere A against capsule B (max 1), and capsule A against capsule B (max 2): closed forms on
// the closest points of the axes (Ericson 2005, 5.1.9), exact where MPR's direction is not; two
// capsules parallel side by side touch on the two ends of their overlap (face_manifold).
int sphere_capsule(const Vec3& c, Scalar r, const Mat3& R, const Vec3& p, Scalar rc, Scalar hl, Scalar margin,
                   ManifoldPoint* out);
int capsule_capsule(const Mat3& Ra, const Vec3& pa, Scalar ra, Scalar hla, const Mat3& Rb, const Vec3& pb, Scalar rb,
                    Scalar hlb, Scalar margin, ManifoldPoint* out);
// Box A against box B (max 4): separating-axis test over the 15 axes, then for a face axis the
// incident face is clipped against the side planes of the reference face (Sutherland-Hodgman)
// and more than 4 points are reduced to 4 (a tilted patch by reduce_manifold, a flat one by its
// extremes along two fixed directions of the face: docs/collision.md, "Reduction of a face
// patch"); for an edge-edge axis one point between the closest points of the two edges.
int box_box(const Mat3& Ra, const Vec3& pa, const Vec3& ha, const Mat3& Rb, const Vec3& pb, const Vec3& hb,
            Scalar margin, ManifoldPoint* out);

// A convex shape for face_manifold, at the world pose (R, p): a box of half extents h, a convex
// hull (mesh frame), or a cylinder or capsule of radius r and half-length hl along its local z.
struct ConvexShape {
  enum class Kind { Box, Hull, Cylinder, Capsule };
  Kind kind = Kind::Box;
  const ConvexHull* hull = nullptr;  // Kind::Hull
  Vec3 h = Vec3::Zero();             // Kind::Box
  Scalar r = 0, hl = 0;              // Kind::Cylinder, Kind::Capsule
  Mat3 R = Mat3::Identity();
  Vec3 p = Vec3::Zero();
};

// Two convex shapes (A, B) touching along the unit normal n (B -> A), as MPR or GJK give it for
// the deepest point (max 4). Each shape's supporting feature along the normal (-n for A, n for B)
// is a face (a box's or hull's face of its support vertex; a cylinder's end disc, as a regular
// polygon of kCylinderDiscSides corners fixed in the body) or a segment (a cylinder's side line,
// a capsule's two cap points along the normal). When a face is within about 11 degrees of n (a
// face contact), the other's feature (an incident cylinder's disc only while within 2.5 degrees
// of parallel to that face, else its side line, whose end is the rim point) is clipped against
// the side planes of that reference face
// (Sutherland-Hodgman, as in box_box) and its points within the margin of the reference plane are
// kept, reduced to 4 as box_box's; the normal is the reference face's. A feature tilted against
// the reference face by more than 2.5 degrees whose deepest point lies on the face's side plane
// touches the face's edge (a can's rim across a lying can's side line): no face contact then.
// Two cylinders or capsules
// without such a face, lying side by side with axes parallel to within 5 % of the margin over the
// overlap of their projections, touch on its two ends (the normal and depth between the axes
// there). Returns 0 otherwise (edge on edge, a point on a face, crossed axes) or when a face has
// more than kMaxFaceVertices vertices: the caller keeps its single point then.
constexpr int kMaxFaceVertices = 32;
constexpr int kCylinderDiscSides = 16;
int face_manifold(const ConvexShape& a, const ConvexShape& b, const Vec3& n, Scalar margin, ManifoldPoint* out);

// Keeps at most 4 of `count` points: the deepest, the one farthest from it, then the two that
// enlarge the spanned area most. Returns the new count (points are reordered in place).
int reduce_manifold(ManifoldPoint* points, int count);

}  // namespace impulse
