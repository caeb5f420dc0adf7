// Closed-form contact manifolds (see manifold.hpp for the conventions).
//
// Box-box follows the separating-axis test of Gottschalk, Lin, Manocha, "OBBTree" (SIGGRAPH 1996,
// 15 axes) and the reference/incident face clipping of Box2D / Bullet (Sutherland-Hodgman,
// "Reentrant polygon clipping", CACM 1974).
#include "impulse/collision/manifold.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace impulse {

namespace {

// A point of shape A at depth `depth` below the surface of B (plane or face) with normal n (B -> A):
// the midpoint between it and its projection on B's surface.
inline void emit(ManifoldPoint& out, const Vec3& point_a, const Vec3& n, Scalar depth) {
  out.position = point_a + 0.5 * depth * n;
  out.normal = n;
  out.depth = depth;
}

// The points of a support of more than 4 vertices in the margin (see vertices_plane): of the
// vertices within `band` of the deepest, the extremes along two fixed tangent directions of the
// mesh and their opposites. The vertices are vertices[index[k]] for k < count, all within the
// band, or, when index is null, those of vertices[0, count) within the band; `deepest` indexes
// `vertices`.
int band_extremes(const Mat3& R, const Vec3& p, const Vec3* vertices, const int* index, int count, const Vec3& n,
                  const Vec3& n_l, Scalar offset_l, int deepest, Scalar max_depth, Scalar band, ManifoldPoint* out) {
  auto put = [&](int slot, int i) {
    const Scalar depth = offset_l - n_l.dot(vertices[i]);
    emit(out[slot], R * vertices[i] + p, n, depth);
  };
  Vec3 t1 = Vec3(0.8507, 0.4472, 0.2764) - n_l * n_l.dot(Vec3(0.8507, 0.4472, 0.2764));  // not along an axis
  if (t1.squaredNorm() < 1e-6) t1 = Vec3(0.2764, 0.8507, -0.4472) - n_l * n_l.dot(Vec3(0.2764, 0.8507, -0.4472));
  t1.normalize();
  const Vec3 t2 = n_l.cross(t1);
  // the extremes along t1, t2, -t1, -t2 (a dot product with -t is exactly minus that with t)
  int pick[4] = {deepest, deepest, deepest, deepest};
  Scalar best[4];
  best[0] = t1.dot(vertices[deepest]);
  best[1] = t2.dot(vertices[deepest]);
  best[2] = -best[0];
  best[3] = -best[1];
  for (int k = 0; k < count; ++k) {
    const int i = index ? index[k] : k;
    if (!index && offset_l - n_l.dot(vertices[i]) < max_depth - band) continue;
    const Scalar s1 = t1.dot(vertices[i]), s2 = t2.dot(vertices[i]);
    if (s1 > best[0]) best[0] = s1, pick[0] = i;
    if (s2 > best[1]) best[1] = s2, pick[1] = i;
    if (-s1 > best[2]) best[2] = -s1, pick[2] = i;
    if (-s2 > best[3]) best[3] = -s2, pick[3] = i;
  }
  int k = 0;
  for (int d = 0; d < 4; ++d) {
    bool seen = false;
    for (int e = 0; e < d; ++e) seen = seen || pick[e] == pick[d];
    if (!seen) put(k++, pick[d]);
  }
  return k;
}

}  // namespace

int sphere_plane(const Vec3& c, Scalar r, const Vec3& n, Scalar offset, Scalar margin, ManifoldPoint* out) {
  const Scalar depth = r - (n.dot(c) - offset);
  if (depth < -margin) return 0;
  emit(out[0], c - r * n, n, depth);
  return 1;
}

int box_plane(const Mat3& R, const Vec3& p, const Vec3& h, const Vec3& n, Scalar offset, Scalar margin,
              ManifoldPoint* out) {
  // corners p + sum_i s_i h_i R_i; n . corner = n . p + sum_i s_i h_i (n . R_i)
  const Vec3 e = R.transpose() * n;  // plane normal in the box frame
  const Scalar centre_gap = n.dot(p) - offset;
  const Scalar reach = h.x() * std::abs(e.x()) + h.y() * std::abs(e.y()) + h.z() * std::abs(e.z());
  if (centre_gap - reach > margin) return 0;  // the lowest corner is beyond the margin
  int k = 0;
  for (int c = 0; c < 8; ++c) {
    const Vec3 s((c & 1) ? 1.0 : -1.0, (c & 2) ? 1.0 : -1.0, (c & 4) ? 1.0 : -1.0);
    const Vec3 hs = s.cwiseProduct(h);
    const Scalar depth = -(centre_gap + hs.dot(e));
    if (depth < -margin) continue;
    emit(out[k++], p + R * hs, n, depth);
  }
  return k;
}

int capsule_plane(const Mat3& R, const Vec3& p, Scalar r, Scalar hl, const Vec3& n, Scalar offset, Scalar margin,
                  ManifoldPoint* out) {
  const Vec3 a = R.col(2);
  int k = 0;
  k += sphere_plane(p + hl * a, r, n, offset, margin, out + k);
  k += sphere_plane(p - hl * a, r, n, offset, margin, out + k);
  return k;
}

int cylinder_plane(const Mat3& R, const Vec3& p, Scalar r, Scalar hl, const Vec3& n, Scalar offset,
                   Scalar margin, ManifoldPoint* out) {
  const Vec3 a = R.col(2);
  const Scalar na = n.dot(a);
  // quick reject: the lowest point is at n.p - hl |n.a| - r sqrt(1 - (n.a)^2)
  const Scalar sin_t = std::sqrt(std::max(Scalar(0), 1 - na * na));
  if (n.dot(p) - offset - hl * std::abs(na) - r * sin_t > margin) return 0;
  // u: unit direction in the disc plane pointing down the plane normal (deepest rim point);
  // any in-plane direction when the discs are parallel to the plane.
  Vec3 u = -(n - na * a);
  const Scalar un = u.norm();
  u = un > 1e-9 ? Vec3(u / un) : Vec3(R.col(0));
  const Vec3 v = a.cross(u);
  const Vec3 dirs[4] = {u, v, -u, -v};
  int k = 0;
  for (int end = 0; end < 2; ++end) {
    const Vec3 centre = p + (end == 0 ? -hl : hl) * a;
    for (const Vec3& d : dirs) {
      const Vec3 x = centre + r * d;
      const Scalar depth = offset - n.dot(x);
      if (depth < -margin) continue;
      emit(out[k++], x, n, depth);
    }
  }
  return k;
}

int vertices_plane(const Mat3& R, const Vec3& p, const Vec3* vertices, int count, const Vec3& n, Scalar offset,
                   Scalar margin, ManifoldPoint* out) {
  // the plane in the mesh frame: depth(v) = offset_l - n_l . v
  const Vec3 n_l = R.transpose() * n;
  const Scalar offset_l = offset - n.dot(p);
  int in_margin = 0, deepest = -1;
  Scalar max_depth = -margin;
  for (int i = 0; i < count; ++i) {
    const Scalar depth = offset_l - n_l.dot(vertices[i]);
    if (depth < -margin) continue;
    ++in_margin;
    if (deepest < 0 || depth > max_depth) {
      deepest = i;
      max_depth = depth;
    }
  }
  if (in_margin == 0) return 0;
  auto put = [&](int slot, int i) {
    const Scalar depth = offset_l - n_l.dot(vertices[i]);
    emit(out[slot], R * vertices[i] + p, n, depth);
  };
  if (in_margin <= 4) {
    int k = 0;
    for (int i = 0; i < count; ++i) {
      if (offset_l - n_l.dot(vertices[i]) >= -margin) put(k++, i);
    }
    return k;
  }
  // More than 4: the support is the vertices within `band` of the deepest (the others in the
  // margin are near, not touching), and its 4 points are the support's extreme vertices along
  // two fixed tangent directions of the mesh and their opposites. Both choices are continuous in
  // the pose: a vertex enters or leaves the support only at the band's edge (0.25 mm above the
  // deepest, where it carries no load), and the extremes along fixed directions do not depend on
  // which of two vertices of nearly equal depth is the deeper. Picking the deepest vertex and the
  // points spanning the largest area was not: on a resting Talos sole the deepest vertex flipped
  // between two neighbours every step, the area-spanning points lay 1 mm above the ground, and
  // the ankles chattered at 0.08 rad/s (docs/fidelity.md); with this rule both soles rest
  // (1e-5 rad/s). On a curved surface the deepest vertex may lie inside the 4 points, at most
  // `band` below their plane.
  return band_extremes(R, p, vertices, nullptr, count, n, n_l, offset_l, deepest, max_depth, 0.05 * margin, out);
}

namespace {

// A patch smaller than `merge` (every two of its points closer than that) becomes one point: at
// the points' centroid, as deep as the deepest of them; a larger patch keeps its points. The
// centroid and the largest depth move continuously with the pose, where the deepest point of a
// nearly flat patch jumps from corner to corner as the body rocks. Returns the new count.
int merge_points(ManifoldPoint* pts, int count, Scalar merge) {
  if (count <= 1) return count;
  for (int i = 0; i < count; ++i) {
    for (int k = i + 1; k < count; ++k) {
      if ((pts[i].position - pts[k].position).squaredNorm() >= merge * merge) return count;
    }
  }
  Vec3 centroid = pts[0].position;
  Scalar depth = pts[0].depth;
  for (int i = 1; i < count; ++i) {
    centroid += pts[i].position;
    depth = std::max(depth, pts[i].depth);
  }
  pts[0].position = centroid / static_cast<Scalar>(count);
  pts[0].depth = depth;
  return 1;
}

// Breadth-first walk over a hull's edges from its deepest vertex below a plane (depth(v) =
// offset_l - n_l . v, mesh frame) to the vertices at depth >= a floor: on a convex polytope the
// vertices above any plane are connected by its edges. The order of the vertices found is that of
// the breadth-first search (the neighbours in the hull's order).
class HullWalk {
 public:
  static constexpr int kMaxFound = 128;

  HullWalk(const ConvexHull& hull, const Vec3& n_l, Scalar offset_l, int deepest)
      : hull_(hull),
        n_l_(n_l),
        offset_l_(offset_l),
        deepest_(deepest),
        words_(hull.vertices.size() / 64 + 1),
        seen_(seen_bits(words_)) {}

  Scalar depth(int i) const { return offset_l_ - n_l_.dot(hull_.vertices[static_cast<std::size_t>(i)]); }

  // The vertices at depth >= floor into found[0, count), the deepest first; stops at `limit`
  // (<= kMaxFound) of them and returns limit + 1 then, else their number. Every vertex is
  // looked at once: a vertex below the floor stays below it for the whole walk.
  int walk(Scalar floor, int limit, int* found) {
    int count = 0, result = -1;
    found[count++] = deepest_;
    test_and_mark(deepest_);
    for (int head = 0; head < count && result < 0; ++head) {
      for (const int w : neighbours(found[head])) {
        if (test_and_mark(w) || depth(w) < floor) continue;
        if (count == limit) {
          result = limit + 1;
          break;
        }
        found[count++] = w;
      }
    }
    // unmark: the whole bitmap when small, else the words of the vertices seen (each one found
    // or a neighbour of one)
    if (words_ <= 64) {
      std::fill(seen_, seen_ + words_, 0);
    } else {
      for (int k = 0; k < count; ++k) {
        seen_[static_cast<unsigned>(found[k]) >> 6] = 0;
        for (const int w : neighbours(found[k])) seen_[static_cast<unsigned>(w) >> 6] = 0;
      }
    }
    return result < 0 ? count : result;
  }

 private:
  // One bit per vertex of the hull, all clear between walks: a buffer per thread, grown to the
  // largest hull it met (no allocation once that size was seen).
  static std::uint64_t* seen_bits(std::size_t words) {
    thread_local std::vector<std::uint64_t> bits;
    if (bits.size() < words) bits.resize(words, 0);
    return bits.data();
  }
  bool test_and_mark(int w) {  // whether w was seen before
    std::uint64_t& word = seen_[static_cast<unsigned>(w) >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (static_cast<unsigned>(w) & 63);
    const bool was = (word & bit) != 0;
    word |= bit;
    return was;
  }
  const std::vector<int>& neighbours(int v) const { return hull_.neighbours[static_cast<std::size_t>(v)]; }

  const ConvexHull& hull_;
  const Vec3 n_l_;
  const Scalar offset_l_;
  const int deepest_;
  const std::size_t words_;  // of the bitmap (one bit per vertex)
  std::uint64_t* const seen_;
};

}  // namespace

int convex_plane(const Mat3& R, const Vec3& p, const ConvexHull& hull, const Vec3& n, Scalar offset, Scalar margin,
                 ManifoldPoint* out) {
  const Vec3 n_l = R.transpose() * n;
  const Scalar offset_l = offset - n.dot(p);
  const int deepest = hull.support(-n_l);
  const std::vector<Vec3>& v = hull.vertices;
  const Scalar max_depth = offset_l - n_l.dot(v[static_cast<std::size_t>(deepest)]);
  if (max_depth < -margin) return 0;
  HullWalk walker(hull, n_l, offset_l, deepest);
  // A rounded part (a foot) touches the plane on a small cap: its points lie within a few
  // millimetres and give the solver no lever arm worth a contact, so a patch smaller than half
  // the hull's thickness becomes one point. A face of the hull lying on the plane is no cap: when
  // the vertices of the patch (found[0, count)) all belong to one face of the deepest vertex
  // within 3 degrees of the plane, they keep their points however close, else a body standing
  // on a small flat face would stand on one point. (A cap's vertices span several small faces.)
  const auto merge_distance = [&](const int* found, int count) {
    constexpr Scalar kFlatCos = 0.99863;  // cos(3 degrees)
    for (const int f : hull.vertex_faces[static_cast<std::size_t>(deepest)]) {
      const std::vector<int>& face = hull.faces[static_cast<std::size_t>(f)];
      if (-hull.normals[static_cast<std::size_t>(f)].dot(n_l) < kFlatCos) continue;
      bool all = true;
      for (int k = 0; k < count && all; ++k) all = std::find(face.begin(), face.end(), found[k]) != face.end();
      if (all) return Scalar(0);
    }
    return 0.5 * hull.thickness;
  };
  // At most 4 vertices in the margin: all of them (vertices_plane's first case). More: the
  // extremes of the vertices within the band below the deepest (band_extremes). The band is
  // walked first when it lies inside the margin (a resting body): more than 4 vertices in it
  // are more than 4 in the margin, and the margin's vertices need no walk.
  const Scalar band = 0.05 * margin;
  const Scalar band_floor = max_depth - band;
  int in_band_found[HullWalk::kMaxFound];
  int in_band = -1;  // not walked yet
  if (band_floor >= -margin) in_band = walker.walk(band_floor, HullWalk::kMaxFound, in_band_found);
  if (in_band <= 4) {
    int found[5];
    const int in_margin = walker.walk(-margin, 4, found);
    if (in_margin <= 4) {
      Vec3 points[4];
      for (int k = 0; k < in_margin; ++k) points[k] = v[static_cast<std::size_t>(found[k])];
      return merge_points(out, vertices_plane(R, p, points, in_margin, n, offset, margin, out),
                          merge_distance(found, in_margin));
    }
    if (in_band < 0) in_band = walker.walk(band_floor, HullWalk::kMaxFound, in_band_found);
  }
  if (in_band > HullWalk::kMaxFound) {  // a wide flat face on the plane: every vertex (no cap)
    return band_extremes(R, p, v.data(), nullptr, static_cast<int>(v.size()), n, n_l, offset_l, deepest, max_depth,
                         band, out);
  }
  return merge_points(
      out, band_extremes(R, p, v.data(), in_band_found, in_band, n, n_l, offset_l, deepest, max_depth, band, out),
      merge_distance(in_band_found, in_band));
}

int sphere_sphere(const Vec3& ca, Scalar ra, const Vec3& cb, Scalar rb, Scalar margin, ManifoldPoint* out) {
  const Vec3 d = ca - cb;
  const Scalar dist = d.norm();
  const Scalar depth = ra + rb - dist;
  if (depth < -margin) return 0;
  const Vec3 n = dist > 1e-12 ? Vec3(d / dist) : Vec3(Vec3::UnitZ());
  const Vec3 pa = ca - ra * n, pb = cb + rb * n;
  out[0].position = 0.5 * (pa + pb);
  out[0].normal = n;
  out[0].depth = depth;
  return 1;
}

int sphere_box(const Vec3& c, Scalar r, const Mat3& R, const Vec3& p, const Vec3& h, Scalar margin,
               ManifoldPoint* out) {
  const Vec3 cl = R.transpose() * (c - p);
  const Vec3 q = cl.cwiseMax(-h).cwiseMin(h);
  Vec3 n_l;
  Scalar depth, to_surface;  // to_surface: distance from the centre to the box surface along -n
  const Vec3 diff = cl - q;
  const Scalar dist = diff.norm();
  if (dist > 1e-12) {
    // centre outside the box: normal from the closest box point to the centre
    depth = r - dist;
    if (depth < -margin) return 0;
    n_l = diff / dist;
    to_surface = dist;
  } else {
    // centre inside: push out through the nearest face
    int k = 0;
    Scalar gap = h[0] - std::abs(cl[0]);
    for (int i = 1; i < 3; ++i) {
      const Scalar g = h[i] - std::abs(cl[i]);
      if (g < gap) gap = g, k = i;
    }
    n_l = Vec3::Zero();
    n_l[k] = cl[k] >= 0 ? 1.0 : -1.0;
    depth = r + gap;
    to_surface = -gap;
  }
  const Vec3 n = R * n_l;
  const Vec3 pa = c - r * n, pb = c - to_surface * n;
  out[0].position = 0.5 * (pa + pb);
  out[0].normal = n;
  out[0].depth = depth;
  return 1;
}

namespace {

// The closest points of the segments p1 + s d1 and p2 + t d2 (s, t in [0, 1]): Ericson, "Real-
// Time Collision Detection" (2005), section 5.1.9. Parallel segments take s = 0 and the closest t.
void closest_segment_segment(const Vec3& p1, const Vec3& d1, const Vec3& p2, const Vec3& d2, Scalar& s, Scalar& t) {
  const Vec3 r = p1 - p2;
  const Scalar a = d1.squaredNorm(), e = d2.squaredNorm(), f = d2.dot(r);
  const auto clamp01 = [](Scalar x) { return std::min(std::max(x, Scalar(0)), Scalar(1)); };
  if (a <= 1e-24 && e <= 1e-24) {
    s = t = 0;
    return;
  }
  if (a <= 1e-24) {
    s = 0;
    t = clamp01(f / e);
    return;
  }
  const Scalar c = d1.dot(r);
  if (e <= 1e-24) {
    t = 0;
    s = clamp01(-c / a);
    return;
  }
  const Scalar b = d1.dot(d2), denom = a * e - b * b;
  s = denom > 1e-12 * a * e ? clamp01((b * f - c * e) / denom) : Scalar(0);
  t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = clamp01(-c / a);
  } else if (t > 1) {
    t = 1;
    s = clamp01((b - c) / a);
  }
}

// One contact between the spheres (ca, ra) and (cb, rb) at the closest points of two capsules'
// axes (or at a sphere's centre): the normal along the line between them, B -> A; where the
// axes meet, `fallback` (unit, B -> A).
int swept_spheres(const Vec3& ca, Scalar ra, const Vec3& cb, Scalar rb, const Vec3& fallback, Scalar margin,
                  ManifoldPoint* out) {
  const Vec3 d = ca - cb;
  const Scalar dist = d.norm();
  if (dist - ra - rb > margin) return 0;
  const Vec3 n = dist > 1e-12 ? Vec3(d / dist) : fallback;
  out[0].position = 0.5 * ((ca - ra * n) + (cb + rb * n));
  out[0].normal = n;
  out[0].depth = ra + rb - dist;
  return 1;
}

// A unit vector across the unit vector u.
Vec3 across_of(const Vec3& u) {
  return (std::abs(u.x()) < 0.9 ? u.cross(Vec3::UnitX()) : u.cross(Vec3::UnitY())).normalized();
}

}  // namespace

int sphere_capsule(const Vec3& c, Scalar r, const Mat3& R, const Vec3& p, Scalar rc, Scalar hl, Scalar margin,
                   ManifoldPoint* out) {
  const Vec3 axis = R.col(2);
  const Scalar t = std::min(std::max(axis.dot(c - p), -hl), hl);
  // (a centre on the axis: out across it, any direction across being as close)
  return swept_spheres(c, r, p + t * axis, rc, across_of(axis), margin, out);
}

namespace {

// Clips the convex polygon (in, n_in) to dir . x <= limit; returns the new count. A vertex within
// `band` of the plane (|dir . x - limit| <= band, in the units of dir . x) lies on it: it is kept
// and no edge through it is cut. Without the band, an incident edge that coincides with a side of
// the reference face (boxes of one width stacked or in a row: their side faces are coplanar) is
// kept, cut or dropped by the round-off and the nanometre drift of a resting body, so the
// manifold gains and loses near-duplicate corners from step to step, the warm start does not
// carry over and the island's solve starts afresh (a 15-box pyramid: 4.3 points per pair, 26
// sweeps a step).
int clip_polygon(const Vec3* in, int n_in, const Vec3& dir, Scalar limit, Scalar band, Vec3* out) {
  int n_out = 0;
  for (int i = 0; i < n_in; ++i) {
    const Vec3& a = in[i];
    const Vec3& b = in[(i + 1) % n_in];
    const Scalar da = dir.dot(a) - limit, db = dir.dot(b) - limit;
    if (da <= band) out[n_out++] = a;
    if ((da < -band && db > band) || (da > band && db < -band)) out[n_out++] = a + (da / (da - db)) * (b - a);
  }
  return n_out;
}

// The band of clip_polygon as a fraction of the reference face's size: a corner that far outside
// a side plane counts as on it (1e-6 of a 0.1 m box: 0.1 um, far above the round-off and below
// any length a contact's position matters at).
constexpr Scalar kClipBand = 1e-6;

// A face patch whose points' depths spread less than this fraction of the margin is flat
// (reduce_face_points; the mesh-plane reduction's 0.25 mm at the default 5 mm margin).
constexpr Scalar kFlatBand = 0.05;

// The points of a clipped incident polygon below (or within the margin above) the reference face
// nr . x = face_offset, at most max_out, each halfway between the polygon and the face, with the
// reported normal; returns their number.
int points_below_face(const Vec3* poly, int count, const Vec3& nr, Scalar face_offset, const Vec3& normal,
                      Scalar margin, int max_out, ManifoldPoint* out) {
  int n_out = 0;
  for (int i = 0; i < count && n_out < max_out; ++i) {
    const Scalar sep = nr.dot(poly[i]) - face_offset;
    if (sep > margin) continue;
    out[n_out].position = poly[i] - 0.5 * sep * nr;
    out[n_out].normal = normal;
    out[n_out].depth = -sep;
    ++n_out;
  }
  return n_out;
}

// More than 4 points of a face contact become 4. A tilted patch (depths spread over more than
// `band`) keeps reduce_manifold's choice, led by its deepest point. On a flat one the depths are
// equal up to round-off, and a choice led by the deepest point would jump between corners from
// step to step (a resting pair would change its contacts, and lose their warm start, every
// step): it keeps the extremes along two directions of the face instead, which move
// continuously with the pose and span the patch along both directions. An elongated patch (the
// second moments of its points about their centroid differ by more than kElongated: a can
// offset on a can, a disc over a table's edge) takes its principal axes, so that its two ends
// are kept: along fixed directions a lens can lose them and, with them, the support under a
// centre of mass near its end. Any other patch (a square, a turned box's octagon, a disc on a
// disc: their moments are equal by symmetry, and its principal axes would follow round-off)
// takes directions a fixed angle off the face's axes (so that neither an aligned nor a
// 45-degree turn ties two corners).
int reduce_face_points(ManifoldPoint* pts, int count, const Vec3& a, const Vec3& b, Scalar band) {
  if (count <= 4) return count;
  Scalar lo = pts[0].depth, hi = pts[0].depth;
  for (int i = 1; i < count; ++i) lo = std::min(lo, pts[i].depth), hi = std::max(hi, pts[i].depth);
  if (hi - lo > band) return reduce_manifold(pts, count);
  constexpr Scalar kAngle = 0.4;  // rad
  Scalar angle = kAngle;
  {
    Scalar ca = 0, cb = 0;
    for (int i = 0; i < count; ++i) ca += a.dot(pts[i].position), cb += b.dot(pts[i].position);
    ca /= count, cb /= count;
    Scalar saa = 0, sbb = 0, sab = 0;
    for (int i = 0; i < count; ++i) {
      const Scalar x = a.dot(pts[i].position) - ca, y = b.dot(pts[i].position) - cb;
      saa += x * x, sbb += y * y, sab += x * y;
    }
    const Scalar mean = (saa + sbb) / 2, dev = std::hypot((saa - sbb) / 2, sab);
    constexpr Scalar kElongated = 2;  // ratio of the larger second moment to the smaller
    if (mean + dev > kElongated * (mean - dev)) angle = std::atan2(2 * sab, saa - sbb) / 2;
  }
  const Vec3 t1 = std::cos(angle) * a + std::sin(angle) * b, t2 = -std::sin(angle) * a + std::cos(angle) * b;
  // pick: the largest t1 . p, t2 . p, then the smallest (the first point on ties)
  int pick[4] = {0, 0, 0, 0};
  const Scalar x0 = t1.dot(pts[0].position), y0 = t2.dot(pts[0].position);
  Scalar best[4] = {x0, y0, x0, y0};
  for (int i = 1; i < count; ++i) {
    const Scalar x = t1.dot(pts[i].position), y = t2.dot(pts[i].position);
    if (x > best[0]) best[0] = x, pick[0] = i;
    if (y > best[1]) best[1] = y, pick[1] = i;
    if (x < best[2]) best[2] = x, pick[2] = i;
    if (y < best[3]) best[3] = y, pick[3] = i;
  }
  ManifoldPoint kept[4];
  int n = 0;
  for (int k = 0; k < 4; ++k) {
    bool seen = false;
    for (int j = 0; j < k; ++j) seen = seen || pick[j] == pick[k];
    if (!seen) kept[n++] = pts[pick[k]];
  }
  std::copy(kept, kept + n, pts);
  return n;
}

// Face contact: reference face k of box (Rr, pr, hr) with outward normal nr (pointing at the
// incident box); the incident face is the face of (Ri, pi, hi) most anti-parallel to nr.
// Reported normals are `normal_sign * nr`.
int face_contact(const Mat3& Rr, const Vec3& pr, const Vec3& hr, int k, const Vec3& nr, const Mat3& Ri,
                 const Vec3& pi, const Vec3& hi, Scalar normal_sign, Scalar margin, ManifoldPoint* out) {
  // incident face
  int m = 0;
  Scalar best = -1;
  for (int j = 0; j < 3; ++j) {
    const Scalar c = std::abs(Ri.col(j).dot(nr));
    if (c > best) best = c, m = j;
  }
  const Vec3 ni = Ri.col(m).dot(nr) > 0 ? Vec3(-Ri.col(m)) : Vec3(Ri.col(m));
  const int m1 = (m + 1) % 3, m2 = (m + 2) % 3;
  const Vec3 fc = pi + hi[m] * ni;
  const Vec3 u = hi[m1] * Ri.col(m1), v = hi[m2] * Ri.col(m2);
  Vec3 poly_a[kMaxManifoldPoints], poly_b[kMaxManifoldPoints];
  poly_a[0] = fc + u + v;
  poly_a[1] = fc - u + v;
  poly_a[2] = fc - u - v;
  poly_a[3] = fc + u - v;
  int count = 4;
  // side planes of the reference face
  const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
  const Vec3 s1 = Rr.col(k1), s2 = Rr.col(k2);
  const Scalar band = kClipBand * std::max(hr[k1], hr[k2]);
  count = clip_polygon(poly_a, count, s1, s1.dot(pr) + hr[k1], band, poly_b);
  count = clip_polygon(poly_b, count, -s1, -s1.dot(pr) + hr[k1], band, poly_a);
  count = clip_polygon(poly_a, count, s2, s2.dot(pr) + hr[k2], band, poly_b);
  count = clip_polygon(poly_b, count, -s2, -s2.dot(pr) + hr[k2], band, poly_a);
  // keep the points below (or within the margin above) the reference face, at most 4
  const int n = points_below_face(poly_a, count, nr, nr.dot(pr) + hr[k], normal_sign * nr, margin, kMaxManifoldPoints, out);
  return reduce_face_points(out, n, s1, s2, kFlatBand * margin);
}

}  // namespace

int box_box(const Mat3& Ra, const Vec3& pa, const Vec3& ha, const Mat3& Rb, const Vec3& pb, const Vec3& hb,
            Scalar margin, ManifoldPoint* out) {
  const Vec3 d = pa - pb;                 // from B's centre to A's centre
  const Mat3 C = Ra.transpose() * Rb;     // C(i, j) = a_i . b_j
  const Mat3 absC = C.cwiseAbs();
  const Vec3 d_a = Ra.transpose() * d, d_b = Rb.transpose() * d;
  // face axes of A and of B: separation s = |d . L| - rA - rB (the largest s is the best axis)
  Scalar sa = -1e300, sb = -1e300;
  int ka = 0, kb = 0;
  for (int i = 0; i < 3; ++i) {
    const Scalar s = std::abs(d_a[i]) - ha[i] - hb.dot(absC.row(i));
    if (s > margin) return 0;
    if (s > sa) sa = s, ka = i;
  }
  for (int j = 0; j < 3; ++j) {
    const Scalar s = std::abs(d_b[j]) - hb[j] - ha.dot(absC.col(j));
    if (s > margin) return 0;
    if (s > sb) sb = s, kb = j;
  }
  // edge axes a_i x b_j
  Scalar se = -1e300;
  int ei = -1, ej = -1;
  Vec3 le = Vec3::Zero();
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      Vec3 L = Ra.col(i).cross(Rb.col(j));
      const Scalar len = L.norm();
      if (len < 1e-6) continue;  // parallel edges: covered by the face axes
      L /= len;
      const Scalar ra = ha.dot((Ra.transpose() * L).cwiseAbs());
      const Scalar rb = hb.dot((Rb.transpose() * L).cwiseAbs());
      const Scalar s = std::abs(d.dot(L)) - ra - rb;
      if (s > margin) return 0;
      if (s > se) se = s, ei = i, ej = j, le = L;
    }
  }
  // prefer face contacts (stable manifolds) unless an edge axis is clearly better; prefer B's face
  constexpr Scalar kFaceTol = 1e-5, kEdgeTol = 1e-4;
  const Scalar s_face = std::max(sa, sb);
  if (ei >= 0 && se > s_face + kEdgeTol) {
    // edge-edge: one point between the closest points of the two supporting edges
    const Vec3 L = d.dot(le) >= 0 ? le : Vec3(-le);  // from B into A
    Vec3 ca = pa, cb = pb;
    for (int k = 0; k < 3; ++k) {
      if (k != ei) ca -= (Ra.col(k).dot(L) > 0 ? 1.0 : -1.0) * ha[k] * Ra.col(k);
      if (k != ej) cb += (Rb.col(k).dot(L) > 0 ? 1.0 : -1.0) * hb[k] * Rb.col(k);
    }
    const Vec3 u = Ra.col(ei), v = Rb.col(ej);
    const Vec3 r = ca - cb;
    const Scalar b = u.dot(v), c = u.dot(r), f = v.dot(r);
    const Scalar denom = std::max(Scalar(1e-12), 1 - b * b);
    Scalar s = (b * f - c) / denom;
    s = std::max(-ha[ei], std::min(ha[ei], s));
    Scalar t = f + s * b;
    t = std::max(-hb[ej], std::min(hb[ej], t));
    out[0].position = 0.5 * (ca + s * u + cb + t * v);
    out[0].normal = L;
    out[0].depth = -se;
    return 1;
  }
  if (sb >= sa - kFaceTol) {
    const Vec3 nr = d_b[kb] >= 0 ? Vec3(Rb.col(kb)) : Vec3(-Rb.col(kb));  // B's face towards A
    return face_contact(Rb, pb, hb, kb, nr, Ra, pa, ha, 1.0, margin, out);
  }
  const Vec3 nr = d_a[ka] >= 0 ? Vec3(-Ra.col(ka)) : Vec3(Ra.col(ka));  // A's face towards B
  return face_contact(Ra, pa, ha, ka, nr, Rb, pb, hb, -1.0, margin, out);
}

namespace {

// The face of a box or hull whose outward normal is closest to the world direction d, among the
// faces of its support vertex along d (a box: the face of the axis most aligned with d); its
// vertices (world frame, counter-clockwise seen from outside) go to `out`. Returns their number,
// 0 when more than kMaxFaceVertices.
int polytope_face(const ConvexShape& poly, const Vec3& d, Vec3* out, Vec3& normal) {
  if (poly.kind == ConvexShape::Kind::Box) {
    int k = 0;
    Scalar best = -1;
    for (int j = 0; j < 3; ++j) {
      const Scalar c = std::abs(poly.R.col(j).dot(d));
      if (c > best) best = c, k = j;
    }
    const Scalar s = poly.R.col(k).dot(d) >= 0 ? 1.0 : -1.0;
    normal = s * poly.R.col(k);
    const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    const Vec3 c = poly.p + poly.h[k] * normal;
    // (k1, k2, normal) is right-handed for s = 1: counter-clockwise seen from outside
    const Vec3 u = poly.h[k1] * poly.R.col(k1), v = s * poly.h[k2] * poly.R.col(k2);
    out[0] = c + u + v;
    out[1] = c - u + v;
    out[2] = c - u - v;
    out[3] = c + u - v;
    return 4;
  }
  const ConvexHull& hull = *poly.hull;
  const Vec3 d_l = poly.R.transpose() * d;
  const int v = hull.support(d_l);
  int best = -1;
  Scalar best_dot = -2;
  for (const int f : hull.vertex_faces[static_cast<std::size_t>(v)]) {
    const Scalar c = hull.normals[static_cast<std::size_t>(f)].dot(d_l);
    if (c > best_dot) best_dot = c, best = f;
  }
  const std::vector<int>& face = hull.faces[static_cast<std::size_t>(best)];
  if (face.size() > static_cast<std::size_t>(kMaxFaceVertices)) return 0;
  normal = poly.R * hull.normals[static_cast<std::size_t>(best)];
  int k = 0;
  for (const int i : face) out[k++] = poly.R * hull.vertices[static_cast<std::size_t>(i)] + poly.p;
  return k;
}

// A face within this cosine (about 11 degrees) of the contact normal is a reference face.
constexpr Scalar kFaceCos = 0.98;

// A cylinder's end disc is its supporting face, as a reference face, while its axis is within
// kFaceCos of the contact normal, and, as the incident face, while its axis is within this
// cosine (2.5 degrees) of the reference face's normal. The disc is a polygon whose corners are
// fixed in the body, so an upright cylinder keeps the same contact points from step to step
// (its warm start carries over); on a tilted disc the deepest corner lies above the true rim
// point by up to r (1 - cos(pi / kCylinderDiscSides)) sin(tilt), 0.08 % of r at this bound.
// Beyond it the cylinder rests on its rim, whose lowest point is the end of the side segment.
constexpr Scalar kDiscCos = 0.999;
// sin(acos(kDiscCos)): a segment within kDiscCos of parallel to a face
const Scalar kTiltSin = std::sqrt(1 - kDiscCos * kDiscCos);

// The supporting feature of `s` along the world direction d (unit): a face (3 or more vertices,
// counter-clockwise seen from outside, with its outward normal), a segment (2 points) or a
// single point; world frame. A cylinder's disc is its feature while its axis is within
// `disc_cos` of d. Returns the number of points, 0 when a face has more than kMaxFaceVertices.
int support_feature(const ConvexShape& s, const Vec3& d, Scalar disc_cos, Vec3* out, Vec3& normal) {
  switch (s.kind) {
    case ConvexShape::Kind::Box:
    case ConvexShape::Kind::Hull: return polytope_face(s, d, out, normal);
    case ConvexShape::Kind::Cylinder: {
      const Vec3 axis = s.R.col(2);
      const Scalar c = axis.dot(d);
      if (std::abs(c) >= disc_cos) {  // the end disc towards d
        const Scalar sign = c >= 0 ? 1.0 : -1.0;
        normal = sign * axis;
        const Vec3 centre = s.p + sign * s.hl * axis, x = s.R.col(0), y = sign * s.R.col(1);
        // (x, y, sign axis) right-handed: counter-clockwise seen from outside
        // the corners' (cos, sin), computed once
        static const struct Circle {
          Scalar c[kCylinderDiscSides], s[kCylinderDiscSides];
          Circle() {
            for (int k = 0; k < kCylinderDiscSides; ++k) {
              c[k] = std::cos(2 * M_PI * k / kCylinderDiscSides), s[k] = std::sin(2 * M_PI * k / kCylinderDiscSides);
            }
          }
        } circle;
        for (int k = 0; k < kCylinderDiscSides; ++k) out[k] = centre + s.r * (circle.c[k] * x + circle.s[k] * y);
        return kCylinderDiscSides;
      }
      // the side line at the rim point along d's part across the axis: both ends (the one
      // towards d is the support point of a tilted cylinder)
      const Vec3 radial = (d - c * axis).normalized();
      out[0] = s.p + s.hl * axis + s.r * radial;
      out[1] = s.p - s.hl * axis + s.r * radial;
      return 2;
    }
    case ConvexShape::Kind::Capsule: {
      // the two cap spheres' points along d (a lying capsule's side line)
      const Vec3 axis = s.R.col(2);
      out[0] = s.p + s.hl * axis + s.r * d;
      out[1] = s.p - s.hl * axis + s.r * d;
      return 2;
    }
  }
  return 0;
}

// Clips the segment (in[0], in[1]) to dir . x <= limit with clip_polygon's band; returns the
// number of points left (0 or 2).
int clip_segment(Vec3* seg, const Vec3& dir, Scalar limit, Scalar band) {
  const Scalar d0 = dir.dot(seg[0]) - limit, d1 = dir.dot(seg[1]) - limit;
  if (d0 > band && d1 > band) return 0;
  if (d0 < -band && d1 > band) seg[1] = seg[0] + (d0 / (d0 - d1)) * (seg[1] - seg[0]);
  if (d1 < -band && d0 > band) seg[0] = seg[1] + (d1 / (d1 - d0)) * (seg[0] - seg[1]);
  return 2;
}

// Two round shapes (cylinders or capsules) lying side by side with their axes parallel to within
// the flat band (kFlatBand of the margin) over their overlap: the two ends of the overlap of their axes' projections
// on B's axis, each with A's closest axis point, the normal between the axes there and the depth
// ra + rb - distance (exact for capsules, and for cylinders whose side lines face each other).
// Returns 2, or 0 when the axes are more than kDiscCos (2.5 degrees) apart, do not overlap by
// more than the band or an end is farther than the flat band from the axes' closest distance
// (crossed axes touch at one point, the crossing: the caller keeps it; the ends of their overlap,
// a few millimetres apart, would let the bodies sink into each other there). The angle is tested
// first: axes nearly across each other overlap in projection by a few millimetres, whose ends
// can lie within the flat band of a margin that the bodies' speeds widen, and at a cylinder's
// end ra + rb - distance is a sphere's depth, not the cylinder's (two crossed cans 3 um apart
// were given two points 12 mm deep).
int parallel_axes(const ConvexShape& a, const ConvexShape& b, Scalar margin, ManifoldPoint* out) {
  const Vec3 ua = a.R.col(2), ub = b.R.col(2);
  if (std::abs(ua.dot(ub)) < kDiscCos) return 0;
  const Vec3 a0 = a.p - a.hl * ua, a1 = a.p + a.hl * ua, b0 = b.p - b.hl * ub;
  const Scalar lb = 2 * b.hl;
  if (lb < 1e-12 || a.hl < 1e-12) return 0;
  Scalar t0 = ub.dot(a0 - b0), t1 = ub.dot(a1 - b0);
  if (t0 > t1) std::swap(t0, t1);
  const Scalar lo = std::max(t0, Scalar(0)), hi = std::min(t1, lb);
  if (hi - lo <= kClipBand * lb) return 0;
  // the axes' closest distance: both ends within the flat band of it (crossed axes, whose ends
  // lie farther apart than their crossing, touch at the crossing only)
  Scalar s_min, t_min;
  closest_segment_segment(a0, a1 - a0, b0, 2 * b.hl * ub, s_min, t_min);
  const Scalar closest = (a0 + s_min * (a1 - a0) - (b0 + t_min * 2 * b.hl * ub)).norm();
  ManifoldPoint pts[2];
  int k = 0;
  for (const Scalar t : {lo, hi}) {
    const Vec3 pb = b0 + t * ub;
    const Scalar s = std::min(std::max(ua.dot(pb - a.p), -a.hl), a.hl);
    const Vec3 pa = a.p + s * ua, d = pa - pb;
    const Scalar dist = d.norm();
    if (dist < 1e-12 || dist - a.r - b.r > margin || dist - closest > kFlatBand * margin) return 0;
    const Vec3 n = d / dist;
    pts[k].position = 0.5 * ((pa - a.r * n) + (pb + b.r * n));
    pts[k].normal = n;
    pts[k].depth = a.r + b.r - dist;
    ++k;
  }
  std::copy(pts, pts + 2, out);
  return 2;
}

}  // namespace

int capsule_capsule(const Mat3& Ra, const Vec3& pa, Scalar ra, Scalar hla, const Mat3& Rb, const Vec3& pb, Scalar rb,
                    Scalar hlb, Scalar margin, ManifoldPoint* out) {
  const Vec3 ua = Ra.col(2), ub = Rb.col(2);
  const Vec3 a0 = pa - hla * ua, b0 = pb - hlb * ub;
  Scalar s, t;
  closest_segment_segment(a0, 2 * hla * ua, b0, 2 * hlb * ub, s, t);
  // axes that meet: the normal across both, away from B's centre
  Vec3 across = ua.cross(ub);
  across = across.norm() > 1e-9 ? Vec3(across.normalized()) : across_of(ub);
  if (across.dot(pa - pb) < 0) across = -across;
  if (swept_spheres(a0 + 2 * s * hla * ua, ra, b0 + 2 * t * hlb * ub, rb, across, margin, out) == 0) return 0;
  // parallel axes side by side touch along their overlap: its two ends
  ConvexShape sa, sb;
  sa.kind = sb.kind = ConvexShape::Kind::Capsule;
  sa.r = ra, sa.hl = hla, sa.R = Ra, sa.p = pa;
  sb.r = rb, sb.hl = hlb, sb.R = Rb, sb.p = pb;
  ManifoldPoint line[2];
  if (parallel_axes(sa, sb, margin, line) == 2) {
    std::copy(line, line + 2, out);
    return 2;
  }
  return 1;
}


int face_manifold(const ConvexShape& a, const ConvexShape& b, const Vec3& n, Scalar margin, ManifoldPoint* out) {
  Vec3 fa[kMaxFaceVertices], fb[kMaxFaceVertices];
  Vec3 na = Vec3::Zero(), nb = Vec3::Zero();
  int ca = support_feature(a, -n, kFaceCos, fa, na);
  int cb = support_feature(b, n, kFaceCos, fb, nb);
  if (ca == 0 || cb == 0) return 0;
  // a face within ~11 degrees of the contact normal is a reference face: the better aligned one,
  // B's when both are within a round-off of each other (as box_box)
  const Scalar al_a = ca >= 3 ? -na.dot(n) : Scalar(-2), al_b = cb >= 3 ? nb.dot(n) : Scalar(-2);
  if (std::max(al_a, al_b) < kFaceCos) {
    if (ca != 2 || cb != 2) return 0;
    // two side lines: round shapes lying side by side, from their axes (a normal from MPR a
    // little off theirs would move both points sideways)
    const bool both_round = a.kind != ConvexShape::Kind::Box && a.kind != ConvexShape::Kind::Hull &&
                            b.kind != ConvexShape::Kind::Box && b.kind != ConvexShape::Kind::Hull;
    return both_round ? parallel_axes(a, b, margin, out) : 0;
  }
  const bool ref_b = al_b >= al_a - 1e-9;
  const Vec3* ref = ref_b ? fb : fa;
  const int n_ref = ref_b ? cb : ca;
  const Vec3 nr = ref_b ? nb : na;  // outward normal of the reference face (towards the other)
  // an incident cylinder or capsule shows its feature along the reference face's normal, not
  // along n: a capsule's points and a cylinder's side line along a normal a little off the
  // face's would lie beside the lowest points (a lever arm that follows a roll and feeds it);
  // a cylinder shows its disc only when nearly parallel to the face, else the side line whose
  // end is its rim point (exact, where the disc's corners are not)
  const auto is_round = [](const ConvexShape& s) {
    return s.kind == ConvexShape::Kind::Cylinder || s.kind == ConvexShape::Kind::Capsule;
  };
  if (ref_b && is_round(a)) ca = support_feature(a, -nr, kDiscCos, fa, na);
  if (!ref_b && is_round(b)) cb = support_feature(b, -nr, kDiscCos, fb, nb);
  // the incident polygon, clipped against every side plane of the reference face (a plane adds
  // at most one vertex to a convex polygon, at most doubles a polygon that round-off made
  // slightly non-convex: beyond the buffers, no face contact); an incident segment stays a
  // segment, an incident point gives no face contact
  constexpr int kMaxClip = 4 * kMaxFaceVertices;
  Vec3 poly_a[kMaxClip], poly_b[kMaxClip];
  int count = ref_b ? ca : cb;
  if (count < 2) return 0;
  std::copy(ref_b ? fa : fb, (ref_b ? fa : fb) + count, poly_a);
  // the incident feature tilted against the reference face by more than kDiscCos (a segment
  // across the face's normal, or a face's normal)
  const Vec3 n_inc = ref_b ? na : nb;
  const bool tilted = count == 2 ? std::abs(nr.dot((poly_a[1] - poly_a[0]).normalized())) > kTiltSin
                                 : std::abs(n_inc.dot(nr)) < kDiscCos;
  Scalar ref_size = 0;  // the reference face's largest distance from its first vertex
  for (int i = 1; i < n_ref; ++i) ref_size = std::max(ref_size, (ref[i] - ref[0]).norm());
  const bool segment = count == 2;
  for (int i = 0; i < n_ref && count > 0; ++i) {
    if (2 * count > kMaxClip) return 0;
    const Vec3& r0 = ref[i];
    const Vec3& r1 = ref[(i + 1) % n_ref];
    const Vec3 side = (r1 - r0).cross(nr);  // outward for a counter-clockwise face
    // (side has the edge's length: the band in the units of side . x)
    const Scalar band = kClipBand * ref_size * side.norm();
    if (segment) {
      count = clip_segment(poly_a, side, side.dot(r0), band);
    } else {
      count = clip_polygon(poly_a, count, side, side.dot(r0), band, poly_b);
      std::copy(poly_b, poly_b + count, poly_a);
    }
  }
  // a segment clipped to less than the band is one point
  if (segment && count == 2 && (poly_a[1] - poly_a[0]).norm() <= kClipBand * ref_size) count = 1;
  ManifoldPoint pts[kMaxClip];
  const Vec3 normal = ref_b ? nr : Vec3(-nr);  // from B into A
  int k = points_below_face(poly_a, count, nr, nr.dot(ref[0]), normal, margin, kMaxClip, pts);
  if (tilted && k > 0) {
    // A tilted feature whose deepest point lies on a side plane of the reference face (it was
    // cut there, or its end is there) touches the face's edge, not its inside: an edge on an
    // edge (a can's rim across another's side line, a tilted disc over a table's edge). The
    // face's normal is not the contact's there (a rim point on a lying can's side was pushed
    // along the tilted can's axis, up to 11 degrees off): no face contact, the caller keeps its
    // point and normal.
    int deepest = 0;
    for (int i = 1; i < k; ++i)
      if (pts[i].depth > pts[deepest].depth) deepest = i;
    for (int i = 0; i < n_ref; ++i) {
      const Vec3& r0 = ref[i];
      const Vec3 side = (ref[(i + 1) % n_ref] - r0).cross(nr);
      if (side.dot(pts[deepest].position - r0) > -kClipBand * ref_size * side.norm()) return 0;
    }
  }
  const Vec3 e0 = (ref[1] - ref[0]).normalized();
  k = reduce_face_points(pts, k, e0, nr.cross(e0), kFlatBand * margin);
  std::copy(pts, pts + k, out);
  return k;
}

int reduce_manifold(ManifoldPoint* pts, int count) {
  if (count <= 4) return count;
  int i0 = 0;
  for (int i = 1; i < count; ++i) {
    if (pts[i].depth > pts[i0].depth) i0 = i;
  }
  std::swap(pts[0], pts[i0]);
  const Vec3 p0 = pts[0].position, n = pts[0].normal;
  int i1 = 1;
  for (int i = 2; i < count; ++i) {
    if ((pts[i].position - p0).squaredNorm() > (pts[i1].position - p0).squaredNorm()) i1 = i;
  }
  std::swap(pts[1], pts[i1]);
  const Vec3 e = pts[1].position - p0;
  auto area = [&](int i) { return e.cross(pts[i].position - p0).dot(n); };
  int i2 = 2;
  for (int i = 3; i < count; ++i) {
    if (std::abs(area(i)) > std::abs(area(i2))) i2 = i;
  }
  std::swap(pts[2], pts[i2]);
  const Scalar side = area(2) >= 0 ? -1.0 : 1.0;
  int i3 = 3;
  for (int i = 4; i < count; ++i) {
    if (side * area(i) > side * area(i3)) i3 = i;
  }
  std::swap(pts[3], pts[i3]);
  return 4;
}

}  // namespace impulse
