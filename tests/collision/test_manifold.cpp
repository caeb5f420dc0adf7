// Closed-form manifolds against hand-computed contacts (counts, positions, normals, depths).
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "impulse/collision/manifold.hpp"

using namespace impulse;

namespace {

constexpr Scalar kTol = 1e-9;  // closed forms: only round-off
constexpr Scalar kMargin = 0.005;
const Vec3 kUp = Vec3::UnitZ();

Mat3 rot(const Vec3& axis, Scalar angle) { return Eigen::AngleAxis<Scalar>(angle, axis.normalized()).toRotationMatrix(); }

// True when some point of pts has this position, normal and depth.
bool has_point(const ManifoldPoint* pts, int n, const Vec3& x, const Vec3& normal, Scalar depth, Scalar tol = 1e-9) {
  for (int k = 0; k < n; ++k) {
    if ((pts[k].position - x).norm() < tol && (pts[k].normal - normal).norm() < tol &&
        std::abs(pts[k].depth - depth) < tol)
      return true;
  }
  return false;
}

}  // namespace

TEST_CASE("sphere on plane: one point at the midpoint, depth r - height", "[collision]") {
  ManifoldPoint pts[kMaxManifoldPoints];
  // r = 0.5 centred 0.49 above the plane z = 0: 1 cm deep; deepest point z = -0.01, surface z = 0
  REQUIRE(sphere_plane(Vec3(1, 2, 0.49), 0.5, kUp, 0, kMargin, pts) == 1);
  CHECK(has_point(pts, 1, Vec3(1, 2, -0.005), kUp, 0.01));
  // 3 mm above: within the 5 mm margin, negative depth; 6 mm above: nothing
  REQUIRE(sphere_plane(Vec3(0, 0, 0.503), 0.5, kUp, 0, kMargin, pts) == 1);
  CHECK(pts[0].depth == Approx(-0.003).margin(kTol));
  CHECK(sphere_plane(Vec3(0, 0, 0.506), 0.5, kUp, 0, kMargin, pts) == 0);
  // a plane at height 1 (offset)
  REQUIRE(sphere_plane(Vec3(0, 0, 1.49), 0.5, kUp, 1.0, kMargin, pts) == 1);
  CHECK(pts[0].depth == Approx(0.01).margin(kTol));
}

TEST_CASE("box on plane: flat 4, on an edge 2, on a corner 1", "[collision]") {
  ManifoldPoint pts[kMaxManifoldPoints];
  SECTION("flat") {
    // 1 x 2 x 0.5 box, bottom face at z = -0.01
    const Vec3 h(0.5, 1.0, 0.25);
    REQUIRE(box_plane(Mat3::Identity(), Vec3(3, 0, 0.24), h, kUp, 0, kMargin, pts) == 4);
    for (Scalar sx : {-1.0, 1.0})
      for (Scalar sy : {-1.0, 1.0}) CHECK(has_point(pts, 4, Vec3(3 + 0.5 * sx, sy, -0.005), kUp, 0.01));
  }
  SECTION("tilted 45 degrees onto an edge") {
    // unit cube rotated about x: the lowest edge (x = +-0.5, y = 0) is 0.5 sqrt(2) below the centre
    const Scalar reach = 0.5 * std::sqrt(2.0);
    REQUIRE(box_plane(rot(Vec3::UnitX(), M_PI / 4), Vec3(0, 0, reach - 0.002), Vec3::Constant(0.5), kUp, 0, kMargin,
                      pts) == 2);
    CHECK(has_point(pts, 2, Vec3(0.5, 0, -0.001), kUp, 0.002));
    CHECK(has_point(pts, 2, Vec3(-0.5, 0, -0.001), kUp, 0.002));
  }
  SECTION("balanced on a corner") {
    // the body diagonal (1, 1, 1) pointing straight down: corner 0.5 sqrt(3) below the centre
    const Mat3 R = Quat::FromTwoVectors(Vec3(1, 1, 1).normalized(), -kUp).toRotationMatrix();
    const Scalar reach = 0.5 * std::sqrt(3.0);
    REQUIRE(box_plane(R, Vec3(0, 0, reach - 0.004), Vec3::Constant(0.5), kUp, 0, kMargin, pts) == 1);
    CHECK(has_point(pts, 1, Vec3(0, 0, -0.002), kUp, 0.004));
  }
  SECTION("resting exactly, and lifted beyond the margin") {
    CHECK(box_plane(Mat3::Identity(), Vec3(0, 0, 0.5), Vec3::Constant(0.5), kUp, 0, kMargin, pts) == 4);
    CHECK(box_plane(Mat3::Identity(), Vec3(0, 0, 0.506), Vec3::Constant(0.5), kUp, 0, kMargin, pts) == 0);
  }
}

TEST_CASE("capsule and cylinder on plane", "[collision]") {
  ManifoldPoint pts[kMaxManifoldPoints];
  const Scalar r = 0.1, hl = 0.2;  // length 0.4
  SECTION("capsule lying flat: both caps") {
    const Mat3 R = rot(Vec3::UnitY(), M_PI / 2);  // axis along x
    REQUIRE(capsule_plane(R, Vec3(0, 0, 0.09), r, hl, kUp, 0, kMargin, pts) == 2);
    CHECK(has_point(pts, 2, Vec3(0.2, 0, -0.005), kUp, 0.01, 1e-12 + 1e-9));
    CHECK(has_point(pts, 2, Vec3(-0.2, 0, -0.005), kUp, 0.01));
  }
  SECTION("capsule upright: the lower cap") {
    REQUIRE(capsule_plane(Mat3::Identity(), Vec3(0, 0, 0.29), r, hl, kUp, 0, kMargin, pts) == 1);
    CHECK(has_point(pts, 1, Vec3(0, 0, -0.005), kUp, 0.01));
  }
  SECTION("cylinder upright: 4 rim points") {
    REQUIRE(cylinder_plane(Mat3::Identity(), Vec3(0, 0, 0.19), r, hl, kUp, 0, kMargin, pts) == 4);
    for (const Vec3& d : {Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(-1, 0, 0), Vec3(0, -1, 0)})
      CHECK(has_point(pts, 4, r * d + Vec3(0, 0, -0.005), kUp, 0.01));
  }
  SECTION("cylinder on its side: one line of 2 points") {
    const Mat3 R = rot(Vec3::UnitX(), M_PI / 2);  // axis along -y
    REQUIRE(cylinder_plane(R, Vec3(0, 0, 0.09), r, hl, kUp, 0, kMargin, pts) == 2);
    CHECK(has_point(pts, 2, Vec3(0, 0.2, -0.005), kUp, 0.01));
    CHECK(has_point(pts, 2, Vec3(0, -0.2, -0.005), kUp, 0.01));
  }
  SECTION("cylinder tilted 30 degrees: the deepest rim point of the lower disc") {
    const Scalar t = M_PI / 6;
    const Mat3 R = rot(Vec3::UnitX(), t);
    const Scalar reach = hl * std::cos(t) + r * std::sin(t);
    REQUIRE(cylinder_plane(R, Vec3(0, 0, reach - 0.003), r, hl, kUp, 0, kMargin, pts) == 1);
    CHECK(pts[0].depth == Approx(0.003).margin(kTol));
    CHECK(pts[0].position.z() == Approx(-0.0015).margin(kTol));
  }
}

TEST_CASE("box on box: stacked gives 4 face points, rotated 45 degrees gives the octagon", "[collision]") {
  ManifoldPoint pts[kMaxManifoldPoints];
  SECTION("unit cube on a 2 x 2 x 1 slab, 1 cm deep") {
    const int n = box_box(Mat3::Identity(), Vec3(0, 0, 1.49), Vec3::Constant(0.5), Mat3::Identity(), Vec3(0, 0, 0.5),
                          Vec3(1, 1, 0.5), kMargin, pts);
    REQUIRE(n == 4);
    for (Scalar sx : {-1.0, 1.0})
      for (Scalar sy : {-1.0, 1.0}) CHECK(has_point(pts, 4, Vec3(0.5 * sx, 0.5 * sy, 0.995), kUp, 0.01));
  }
  SECTION("A below B: the normal still points from B into A") {
    const int n = box_box(Mat3::Identity(), Vec3(0, 0, 0.5), Vec3(1, 1, 0.5), Mat3::Identity(), Vec3(0, 0, 1.49),
                          Vec3::Constant(0.5), kMargin, pts);
    REQUIRE(n == 4);
    for (int k = 0; k < n; ++k) {
      CHECK((pts[k].normal + kUp).norm() < kTol);
      CHECK(pts[k].depth == Approx(0.01).margin(kTol));
      CHECK(pts[k].position.z() == Approx(0.995).margin(kTol));
    }
  }
  SECTION("equal cubes, the upper one turned 45 degrees about z: 4 of the octagon's corners") {
    // intersection of the two squares: the octagon (+-0.5, +-(sqrt(2)/2 - 0.5)) and swapped; a
    // flat patch keeps 4 of its corners, spread over both axes
    const Mat3 Ra = rot(kUp, M_PI / 4);
    const int n = box_box(Ra, Vec3(0, 0, 1.49), Vec3::Constant(0.5), Mat3::Identity(), Vec3(0, 0, 0.5),
                          Vec3::Constant(0.5), kMargin, pts);
    REQUIRE(n == 4);
    const Scalar a = 0.5, b = std::sqrt(0.5) - 0.5;
    Vec3 lo = pts[0].position, hi = pts[0].position;
    for (int k = 0; k < n; ++k) {
      bool corner = false;
      for (Scalar s1 : {-1.0, 1.0})
        for (Scalar s2 : {-1.0, 1.0})
          corner = corner || (pts[k].position - Vec3(s1 * a, s2 * b, 0.995)).norm() < 1e-9 ||
                   (pts[k].position - Vec3(s1 * b, s2 * a, 0.995)).norm() < 1e-9;
      CHECK(corner);
      CHECK(pts[k].depth == Approx(0.01).margin(kTol));
      lo = lo.cwiseMin(pts[k].position), hi = hi.cwiseMax(pts[k].position);
    }
    CHECK((hi - lo).head<2>().minCoeff() > 0.5);  // spread over the patch, not on one side
  }
  SECTION("side by side along x, gap 3 mm: within the margin, negative depth") {
    const int n = box_box(Mat3::Identity(), Vec3(1.003, 0, 0), Vec3::Constant(0.5), Mat3::Identity(), Vec3::Zero(),
                          Vec3::Constant(0.5), kMargin, pts);
    REQUIRE(n == 4);
    for (int k = 0; k < n; ++k) {
      CHECK((pts[k].normal - Vec3::UnitX()).norm() < kTol);
      CHECK(pts[k].depth == Approx(-0.003).margin(kTol));
      CHECK(pts[k].position.x() == Approx(0.5015).margin(kTol));
    }
    CHECK(box_box(Mat3::Identity(), Vec3(1.006, 0, 0), Vec3::Constant(0.5), Mat3::Identity(), Vec3::Zero(),
                  Vec3::Constant(0.5), kMargin, pts) == 0);
  }
  SECTION("crossed edges: one edge-edge point") {
    // A: a unit cube turned 45 deg about x (lowest edge along x at z = pa - sqrt(2)/2);
    // B: a unit cube turned 45 deg about y (highest edge along y at z = sqrt(2)/2); they cross at the origin line
    const Scalar e = std::sqrt(0.5);
    const int n = box_box(rot(Vec3::UnitX(), M_PI / 4), Vec3(0, 0, 2 * e - 0.002), Vec3::Constant(0.5),
                          rot(Vec3::UnitY(), M_PI / 4), Vec3::Zero(), Vec3::Constant(0.5), kMargin, pts);
    REQUIRE(n == 1);
    CHECK((pts[0].normal - kUp).norm() < 1e-9);
    CHECK(pts[0].depth == Approx(0.002).margin(1e-9));
    CHECK((pts[0].position - Vec3(0, 0, e - 0.001)).norm() < 1e-9);
  }
}

TEST_CASE("box on box of the same width: 4 corners whatever the round-off of the coplanar sides", "[collision]") {
  // Equal cubes stacked, the upper one moved by sub-micrometre amounts and turned by nanoradians:
  // its side faces are coplanar with the lower one's up to that, and each corner lies on, just
  // inside or just outside a side plane of the reference face. The manifold keeps the 4 corners
  // (no near-duplicate cut points), each within the offset of the lower cube's top corners.
  ManifoldPoint pts[kMaxManifoldPoints];
  const Vec3 h = Vec3::Constant(0.05);
  for (const Scalar dx : {0.0, 1e-15, -1e-15, 3e-9, -3e-9, 2e-8})
    for (const Scalar dy : {0.0, 1e-15, -2e-9, 4e-8})
      for (const Scalar yaw : {0.0, 1e-12, -5e-9}) {
        INFO("dx " << dx << " dy " << dy << " yaw " << yaw);
        const Vec3 pa(dx, dy, 0.15 - 1e-6);
        const int n = box_box(rot(kUp, yaw), pa, h, Mat3::Identity(), Vec3(0, 0, 0.05), h, kMargin, pts);
        REQUIRE(n == 4);
        for (Scalar sx : {-1.0, 1.0})
          for (Scalar sy : {-1.0, 1.0}) CHECK(has_point(pts, 4, Vec3(0.05 * sx, 0.05 * sy, 0.1 - 0.5e-6), kUp, 1e-6, 1e-7));
      }
}

TEST_CASE("box on a turned box: the same 4 points whatever the round-off of a flat patch", "[collision]") {
  // Equal cubes stacked, the upper one turned by 0.3 rad: an octagonal patch whose 8 corners
  // are equally deep up to round-off. Tilts of 1e-12 rad about several axes (depth differences
  // of 1e-13 m) must not change which corners are kept.
  ManifoldPoint ref[kMaxManifoldPoints], pts[kMaxManifoldPoints];
  const Vec3 h = Vec3::Constant(0.05);
  const Mat3 Ra = rot(kUp, 0.3);
  const int n0 = box_box(Ra, Vec3(0, 0, 0.15 - 1e-6), h, Mat3::Identity(), Vec3(0, 0, 0.05), h, kMargin, ref);
  REQUIRE(n0 == 4);
  for (const Vec3& axis : {Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(1, 1, 0), Vec3(1, -2, 0), Vec3(-3, 1, 0)})
    for (const Scalar tilt : {1e-12, -1e-12}) {
      INFO("axis " << axis.transpose() << " tilt " << tilt);
      const int n = box_box(rot(axis, tilt) * Ra, Vec3(0, 0, 0.15 - 1e-6), h, Mat3::Identity(), Vec3(0, 0, 0.05), h,
                            kMargin, pts);
      REQUIRE(n == 4);
      for (int k = 0; k < 4; ++k) CHECK(has_point(pts, 4, ref[k].position, kUp, ref[k].depth, 1e-9));
    }
}

TEST_CASE("sphere on sphere and on box", "[collision]") {
  ManifoldPoint pts[kMaxManifoldPoints];
  REQUIRE(sphere_sphere(Vec3(0, 0, 1.9), 1.0, Vec3::Zero(), 1.0, kMargin, pts) == 1);
  CHECK(has_point(pts, 1, Vec3(0, 0, 0.95), kUp, 0.1));
  // sphere r = 0.2 above a unit cube's top face, 1 cm deep
  REQUIRE(sphere_box(Vec3(0.1, 0.1, 0.69), 0.2, Mat3::Identity(), Vec3::Zero(), Vec3::Constant(0.5), kMargin, pts) == 1);
  CHECK(has_point(pts, 1, Vec3(0.1, 0.1, 0.495), kUp, 0.01));
  // sphere centre inside the box near the +x face: pushed out through +x
  REQUIRE(sphere_box(Vec3(0.45, 0, 0), 0.1, Mat3::Identity(), Vec3::Zero(), Vec3::Constant(0.5), kMargin, pts) == 1);
  CHECK((pts[0].normal - Vec3::UnitX()).norm() < kTol);
  CHECK(pts[0].depth == Approx(0.15).margin(kTol));
  // near a vertical edge, outside: the normal points from the edge to the centre
  REQUIRE(sphere_box(Vec3(0.6, 0.6, 0), 0.15, Mat3::Identity(), Vec3::Zero(), Vec3::Constant(0.5), kMargin, pts) == 1);
  CHECK((pts[0].normal - Vec3(1, 1, 0).normalized()).norm() < kTol);
  CHECK(pts[0].depth == Approx(0.15 - 0.1 * std::sqrt(2.0)).margin(kTol));
}

TEST_CASE("vertices on plane reduce a flat face to 4 spanning points", "[collision]") {
  // a 5 x 5 grid of vertices lying on the plane: the 4 corners span the largest area
  std::vector<Vec3> v;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) v.emplace_back(i * 0.25 - 0.5, j * 0.25 - 0.5, 0);
  ManifoldPoint pts[kMaxManifoldPoints];
  const int n = vertices_plane(Mat3::Identity(), Vec3(0, 0, -0.001), v.data(), static_cast<int>(v.size()), kUp, 0,
                               kMargin, pts);
  REQUIRE(n == 4);
  for (Scalar sx : {-0.5, 0.5})
    for (Scalar sy : {-0.5, 0.5}) CHECK(has_point(pts, 4, Vec3(sx, sy, -0.0005), kUp, 0.001));
}

TEST_CASE("vertices on plane: a face lying flat gets the same 4 points whatever its sub-micrometre tilt", "[collision]") {
  // A sole-like flat face (an octagon, 0.2 x 0.1 m, with interior vertices) resting on the plane
  // and rocking by 1e-6 rad about random axes: the deepest vertex changes from tilt to tilt, the
  // chosen 4 points must not (they carry the warm starts; a resting humanoid chattered when they
  // jumped between steps).
  std::vector<Vec3> v;
  for (int k = 0; k < 8; ++k) {
    const Scalar a = (k + 0.5) * 3.14159265358979 / 4;
    v.emplace_back(0.1 * std::cos(a), 0.05 * std::sin(a), 0);
  }
  for (int i = -2; i <= 2; ++i) v.emplace_back(0.02 * i, 0.01 * (i % 2), 0);
  std::mt19937 rng(3);
  std::uniform_real_distribution<Scalar> U(-1, 1);
  std::vector<Vec3> first;
  for (int trial = 0; trial < 40; ++trial) {
    const Scalar ay = U(rng), ax = U(rng);  // g++'s order of the arguments
    const Vec3 axis = Vec3(ax, ay, 0).normalized();
    const Mat3 R = Eigen::AngleAxisd(1e-6, axis).toRotationMatrix();
    ManifoldPoint pts[kMaxManifoldPoints];
    const int n = vertices_plane(R, Vec3(0, 0, -1e-5), v.data(), static_cast<int>(v.size()), kUp, 0, kMargin, pts);
    REQUIRE(n == 4);
    std::vector<Vec3> got;
    for (int k = 0; k < n; ++k) got.push_back(R.transpose() * (pts[k].position - Vec3(0, 0, -1e-5)));
    if (first.empty()) first = got;
    // the same vertices, in the same order (others are >= 1 cm away; the points sit half their
    // depth off the vertex)
    for (int k = 0; k < n; ++k) CHECK((got[k] - first[k]).norm() < 1e-6);
  }
  // the 4 extremes of the face: the vertices nearest the ends of its two axes (+-x, +-y)
  for (const Vec3& x : first) CHECK(std::abs(x.x()) > 0.09);
  // a clearly tilted face (2 degrees) keeps its deepest vertex
  const Mat3 R = Eigen::AngleAxisd(0.035, Vec3::UnitY()).toRotationMatrix();
  ManifoldPoint pts[kMaxManifoldPoints];
  const int n = vertices_plane(R, Vec3(0, 0, 0.001), v.data(), static_cast<int>(v.size()), kUp, 0, kMargin, pts);
  REQUIRE(n >= 1);
  Scalar deepest = -1e300, kept = -1e300;
  for (const Vec3& x : v) deepest = std::max(deepest, -(R * x + Vec3(0, 0, 0.001)).z());
  for (int k = 0; k < n; ++k) kept = std::max(kept, pts[k].depth);
  CHECK(kept == Approx(deepest).margin(1e-12));
}

TEST_CASE("vertices on plane: a tilted sole keeps 4 points on its support, whichever vertex is deepest", "[collision]") {
  // A flat sole (a 11 x 5 grid, 0.2 x 0.08 m) tilted by 5 mrad about y rests on its low edge; its
  // far end is 1 mm up, inside the 5 mm margin. A Talos sole stands like this. The 4 points must
  // be on the support (within 0.25 mm of the deepest vertex; the area-spanning rule took points
  // 1 mm up and left the loaded edge to one vertex), and must not move as the sole rocks by a
  // micro-radian about x, which flips the deepest vertex between the ends of the low edge.
  std::vector<Vec3> v;
  for (int i = 0; i <= 10; ++i)
    for (int j = 0; j <= 4; ++j) v.emplace_back(-0.1 + 0.02 * i, -0.04 + 0.02 * j, 0);
  std::vector<Vec3> first;
  int flips = 0, last = -1;
  for (int trial = 0; trial < 20; ++trial) {
    const Mat3 R = (Eigen::AngleAxisd((trial % 2 ? 1 : -1) * 1e-6, Vec3::UnitX()) *
                    Eigen::AngleAxisd(5e-3, Vec3::UnitY())).toRotationMatrix();
    int deepest = 0;
    for (int i = 1; i < static_cast<int>(v.size()); ++i)
      if ((R * v[static_cast<std::size_t>(i)]).z() < (R * v[static_cast<std::size_t>(deepest)]).z()) deepest = i;
    flips += last >= 0 && deepest != last;
    last = deepest;
    ManifoldPoint pts[kMaxManifoldPoints];
    const int n = vertices_plane(R, Vec3(0, 0, -1e-5 + 5e-3 * 0.1), v.data(), static_cast<int>(v.size()), kUp, 0,
                                 kMargin, pts);
    REQUIRE(n == 4);
    Scalar max_depth = -1e300;
    for (const Vec3& x : v) max_depth = std::max(max_depth, -(R * x + Vec3(0, 0, -1e-5 + 5e-3 * 0.1)).z());
    std::vector<Vec3> got;
    for (int k = 0; k < n; ++k) {
      CHECK(pts[k].depth >= max_depth - 0.05 * kMargin - 1e-12);
      got.push_back(R.transpose() * (pts[k].position - Vec3(0, 0, -1e-5 + 5e-3 * 0.1)));
    }
    if (first.empty()) first = got;
    for (int k = 0; k < n; ++k) CHECK((got[k] - first[k]).norm() < 1e-5);
  }
  CHECK(flips >= 10);  // the deepest vertex did flip
}

namespace {

ConvexShape round_shape(ConvexShape::Kind kind, Scalar r, Scalar hl, const Mat3& R, const Vec3& p) {
  ConvexShape s;
  s.kind = kind;
  s.r = r;
  s.hl = hl;
  s.R = R;
  s.p = p;
  return s;
}

ConvexShape table_box() {  // top face at z = 0
  ConvexShape s;
  s.h = Vec3(0.5, 0.5, 0.1);
  s.p = Vec3(0, 0, -0.1);
  return s;
}

}  // namespace

TEST_CASE("face manifold: a cylinder upright on a box or tilted on its rim agrees with the cylinder-plane manifold",
          "[collision]") {
  // The box's top face is the plane z = 0: the deepest point and depth of the cylinder against
  // the face must be those of the closed-form cylinder_plane, an independent computation.
  const Scalar r = 0.05, hl = 0.05;
  ManifoldPoint pts[kMaxManifoldPoints], ref[kMaxManifoldPoints];
  using K = ConvexShape::Kind;
  for (const Scalar tilt : {0.0, 1e-3, 0.2, 0.5}) {
    INFO("tilt " << tilt);
    const Mat3 R = rot(Vec3(1, 2, 0), tilt);
    const Scalar reach = hl * std::cos(tilt) + r * std::sin(tilt);
    const Vec3 p(0.1, -0.05, reach - 0.001);  // 1 mm into the table
    const int n = face_manifold(round_shape(K::Cylinder, r, hl, R, p), table_box(), kUp, kMargin, pts);
    const int m = cylinder_plane(R, p, r, hl, kUp, 0, kMargin, ref);
    REQUIRE(n >= 1);
    Scalar deepest = -1, ref_deepest = -1;
    for (int k = 0; k < n; ++k) {
      CHECK((pts[k].normal - kUp).norm() < kTol);
      CHECK(pts[k].position.z() == Approx(-0.5 * pts[k].depth).margin(kTol));  // halfway
      deepest = std::max(deepest, pts[k].depth);
    }
    for (int k = 0; k < m; ++k) ref_deepest = std::max(ref_deepest, ref[k].depth);
    if (tilt == 0) {
      REQUIRE(n == 4);  // 4 corners of the disc polygon, all on the rim
      for (int k = 0; k < n; ++k) CHECK(std::hypot(pts[k].position.x() - 0.1, pts[k].position.y() + 0.05) == Approx(r));
    }
    // the disc polygon's corners lie on the rim: on a tilted disc the deepest corner is at most
    // r (1 - cos(pi / 16)) sin(tilt) above the rim point; on the rim the side line's end is exact
    // (on a disc whose corners' depths differ by less than the flat band, 5 % of the margin, the
    // kept 4 are the patch's extremes along two fixed directions, not the deepest corner)
    const Scalar bound = tilt < 0.01 ? 2 * r * std::sin(tilt) + kTol : kTol;
    CHECK(deepest <= ref_deepest + kTol);
    CHECK(deepest >= ref_deepest - bound);
    if (tilt >= 0.2) CHECK(n == 1);  // on its rim: one point
    // the roles swapped (the box is A): as deep, the normal from the cylinder into the box (an
    // upright disc is then the reference face, so the 4 kept corners may differ)
    ManifoldPoint swapped[kMaxManifoldPoints];
    REQUIRE(face_manifold(table_box(), round_shape(K::Cylinder, r, hl, R, p), -kUp, kMargin, swapped) == n);
    Scalar swapped_deepest = -1;
    for (int k = 0; k < n; ++k) {
      CHECK((swapped[k].normal + kUp).norm() < kTol);
      swapped_deepest = std::max(swapped_deepest, swapped[k].depth);
    }
    CHECK(swapped_deepest == Approx(deepest).margin(tilt < 0.01 ? bound : kTol));
    if (tilt >= 0.2) CHECK(has_point(swapped, n, pts[0].position, -kUp, pts[0].depth));
  }
}

TEST_CASE("face manifold: cans stacked, offset, lying; capsules lying on a box and side by side", "[collision]") {
  using K = ConvexShape::Kind;
  const Scalar r = 0.05, hl = 0.05;
  ManifoldPoint pts[kMaxManifoldPoints];
  SECTION("a can on a can, coaxial and turned: 4 rim points, the lower can's top normal") {
    for (const Scalar yaw : {0.0, 0.3, 1e-9}) {
      const ConvexShape below = round_shape(K::Cylinder, r, hl, Mat3::Identity(), Vec3(0, 0, 0.05));
      const ConvexShape above = round_shape(K::Cylinder, r, hl, rot(kUp, yaw), Vec3(0, 0, 0.15 + 0.002));
      REQUIRE(face_manifold(above, below, kUp, kMargin, pts) == 4);
      for (int k = 0; k < 4; ++k) {
        CHECK(pts[k].depth == Approx(-0.002).margin(kTol));
        CHECK((pts[k].normal - kUp).norm() < kTol);
        CHECK(pts[k].position.head<2>().norm() <= r + 1e-9);
        CHECK(pts[k].position.head<2>().norm() >= r * std::cos(M_PI / kCylinderDiscSides) - 1e-9);
      }
    }
  }
  SECTION("a can on a can offset sideways: 4 points in both discs whose polygon holds the upper can's centre") {
    const ConvexShape below = round_shape(K::Cylinder, r, hl, Mat3::Identity(), Vec3(0, 0, 0.05));
    for (const Scalar dx : {0.03, 0.045}) {
      INFO("offset " << dx);
      const ConvexShape above = round_shape(K::Cylinder, r, hl, Mat3::Identity(), Vec3(dx, 0, 0.15));
      REQUIRE(face_manifold(above, below, kUp, kMargin, pts) == 4);
      Eigen::Vector2d c = Eigen::Vector2d::Zero();
      for (int k = 0; k < 4; ++k) {
        CHECK(pts[k].position.head<2>().norm() <= r + 1e-9);
        CHECK((pts[k].position.head<2>() - Eigen::Vector2d(dx, 0)).norm() <= r + 1e-9);
        c += pts[k].position.head<2>() / 4;
      }
      // the upper can's centre of mass above the supporting polygon (it stands): the corners in
      // angular order about their centroid, the centre on the inner side of every edge
      int order[4] = {0, 1, 2, 3};
      auto angle = [&](int k) { const Eigen::Vector2d d = pts[k].position.head<2>() - c; return std::atan2(d.y(), d.x()); };
      std::sort(order, order + 4, [&](int i, int j) { return angle(i) < angle(j); });
      for (int e = 0; e < 4; ++e) {
        const Eigen::Vector2d p0 = pts[order[e]].position.head<2>(), p1 = pts[order[(e + 1) % 4]].position.head<2>();
        const Eigen::Vector2d edge = p1 - p0, to = Eigen::Vector2d(dx, 0) - p0;
        CHECK(edge.x() * to.y() - edge.y() * to.x() > 0);
      }
    }
  }
  SECTION("a can lying on a box, and a capsule: the two ends of the side line") {
    const Mat3 R = rot(Vec3::UnitY(), M_PI / 2);  // axis along x
    for (const K kind : {K::Cylinder, K::Capsule}) {
      const ConvexShape s = round_shape(kind, r, 0.1, R, Vec3(0, 0.2, r - 0.001));
      REQUIRE(face_manifold(s, table_box(), kUp, kMargin, pts) == 2);
      CHECK(has_point(pts, 2, Vec3(0.1, 0.2, -0.0005), kUp, 0.001));
      CHECK(has_point(pts, 2, Vec3(-0.1, 0.2, -0.0005), kUp, 0.001));
      // the normal from MPR a little off the face's: the same lowest points (the side line is
      // taken along the face's normal), and the roles swapped
      const Vec3 off = Vec3(0.03, -0.05, 1).normalized();
      REQUIRE(face_manifold(s, table_box(), off, kMargin, pts) == 2);
      CHECK(has_point(pts, 2, Vec3(0.1, 0.2, -0.0005), kUp, 0.001));
      CHECK(has_point(pts, 2, Vec3(-0.1, 0.2, -0.0005), kUp, 0.001));
      REQUIRE(face_manifold(table_box(), s, -off, kMargin, pts) == 2);
      CHECK(has_point(pts, 2, Vec3(0.1, 0.2, -0.0005), -kUp, 0.001));
      CHECK(has_point(pts, 2, Vec3(-0.1, 0.2, -0.0005), -kUp, 0.001));
    }
    // hanging over the table's edge at x = 0.5: the line clipped at the edge
    const ConvexShape over = round_shape(K::Cylinder, r, 0.1, R, Vec3(0.45, 0, r - 0.001));
    REQUIRE(face_manifold(over, table_box(), kUp, kMargin, pts) == 2);
    CHECK(has_point(pts, 2, Vec3(0.35, 0, -0.0005), kUp, 0.001));
    CHECK(has_point(pts, 2, Vec3(0.5, 0, -0.0005), kUp, 0.001));
  }
  SECTION("capsules side by side: the ends of their overlap; crossed: no line contact") {
    const Mat3 R = rot(Vec3::UnitY(), M_PI / 2);  // axis along x
    const ConvexShape below = round_shape(K::Capsule, r, 0.1, R, Vec3(0, 0, 0));
    const ConvexShape above = round_shape(K::Capsule, r, 0.1, R, Vec3(0.05, 0, 2 * r - 0.001));
    REQUIRE(face_manifold(above, below, kUp, kMargin, pts) == 2);
    CHECK(has_point(pts, 2, Vec3(-0.05, 0, r - 0.0005), kUp, 0.001));
    CHECK(has_point(pts, 2, Vec3(0.1, 0, r - 0.0005), kUp, 0.001));
    // a normal a little off: the normal across the axes all the same
    REQUIRE(face_manifold(above, below, Vec3(0, 0.1, 1).normalized(), kMargin, pts) == 2);
    CHECK(has_point(pts, 2, Vec3(-0.05, 0, r - 0.0005), kUp, 0.001));
    CHECK(has_point(pts, 2, Vec3(0.1, 0, r - 0.0005), kUp, 0.001));
    const ConvexShape crossed = round_shape(K::Capsule, r, 0.1, rot(Vec3::UnitX(), M_PI / 2), Vec3(0, 0, 2 * r));
    CHECK(face_manifold(crossed, below, kUp, kMargin, pts) == 0);
  }
}

TEST_CASE("face manifold: cans crossing at 85 degrees, 3 um apart, get no line contact whatever the margin",
          "[collision]") {
  // Two cans (r 0.03 m, 0.08 m long) of a pile, A's side resting across B's near its end: their
  // axes 85 degrees apart overlap by 7 mm in projection, and a margin widened by the bodies'
  // speeds holds both ends of that overlap within its flat band. Their least overlap is 3 um
  // (a search over 200 000 directions); ra + rb - distance at the overlap's ends, a sphere's
  // depth at a cylinder's end, said 12 mm. No line contact: the caller keeps its single point.
  using K = ConvexShape::Kind;
  ManifoldPoint pts[kMaxManifoldPoints];
  const auto along = [](const Vec3& axis) {
    return Mat3(Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), axis.normalized()).toRotationMatrix());
  };
  const Vec3 pb(0, 0, 0.1), pa = pb + Vec3(-0.0253, -0.0863, -0.0022);
  const ConvexShape a = round_shape(K::Cylinder, 0.03, 0.04, along(Vec3(-0.482, -0.597, -0.641)), pa);
  const ConvexShape b = round_shape(K::Cylinder, 0.03, 0.04, along(Vec3(-0.647, 0.699, -0.303)), pb);
  const Vec3 n = Vec3(-0.597, -0.713, -0.369).normalized();
  for (const Scalar margin : {kMargin, 0.02, 0.05}) {
    INFO("margin " << margin);
    const int m = face_manifold(a, b, n, margin, pts);
    CHECK(m == 0);
    for (int k = 0; k < m; ++k) CHECK(pts[k].depth < 1e-4);
  }
}

TEST_CASE("capsule on capsule and sphere on capsule: closed forms on the axes' closest points", "[collision]") {
  ManifoldPoint pts[kMaxManifoldPoints];
  const Mat3 along_x = rot(Vec3::UnitY(), M_PI / 2), along_y = rot(Vec3::UnitX(), M_PI / 2);
  SECTION("crossed: one point on the common perpendicular, as deep as the radii overlap") {
    // A along x, 1 mm into B along y, both offset along their axes (the closest points are not
    // the centres: MPR's line of centres would tilt the normal)
    REQUIRE(capsule_capsule(along_x, Vec3(0.05, 0.03, 0.059), 0.03, 0.1, along_y, Vec3(0.02, -0.04, 0), 0.03, 0.1,
                            kMargin, pts) == 1);
    CHECK((pts[0].normal - kUp).norm() < kTol);
    CHECK(pts[0].depth == Approx(0.001).margin(kTol));
    CHECK((pts[0].position - Vec3(0.02, 0.03, 0.0295)).norm() < kTol);
    // the roles swapped (A below, B above): the normal from B into A, down
    REQUIRE(capsule_capsule(along_y, Vec3(0.02, -0.04, 0), 0.03, 0.1, along_x, Vec3(0.05, 0.03, 0.059), 0.03, 0.1,
                            kMargin, pts) == 1);
    CHECK((pts[0].normal + kUp).norm() < kTol);
    // apart by 2 mm: within the margin, a gap; by 6 mm: nothing
    REQUIRE(capsule_capsule(along_x, Vec3(0, 0, 0.062), 0.03, 0.1, along_y, Vec3(0, 0, 0), 0.03, 0.1, kMargin, pts) == 1);
    CHECK(pts[0].depth == Approx(-0.002).margin(kTol));
    CHECK(capsule_capsule(along_x, Vec3(0, 0, 0.066), 0.03, 0.1, along_y, Vec3(0, 0, 0), 0.03, 0.1, kMargin, pts) == 0);
  }
  SECTION("end on: the caps' centres") {
    const Mat3 up = Mat3::Identity();
    REQUIRE(capsule_capsule(up, Vec3(0, 0, 0.259), 0.03, 0.1, up, Vec3(0, 0, 0), 0.03, 0.1, kMargin, pts) == 1);
    CHECK((pts[0].normal - kUp).norm() < kTol);
    CHECK(pts[0].depth == Approx(0.001).margin(kTol));
  }
  SECTION("parallel side by side: the two ends of the overlap") {
    REQUIRE(capsule_capsule(along_x, Vec3(0.05, 0, 0.059), 0.03, 0.1, along_x, Vec3(0, 0, 0), 0.03, 0.1, kMargin,
                            pts) == 2);
    CHECK(has_point(pts, 2, Vec3(-0.05, 0, 0.0295), kUp, 0.001));
    CHECK(has_point(pts, 2, Vec3(0.1, 0, 0.0295), kUp, 0.001));
  }
  SECTION("crossed at a small angle: the crossing only, not the overlap's ends") {
    // 11.5 degrees apart, touching at the crossing: the ends of the overlap are 3 mm apart,
    // within the margin, but the bodies touch at the crossing only
    const Mat3 turned = rot(kUp, 0.2) * along_x;
    REQUIRE(capsule_capsule(turned, Vec3(0.01, 0, 0.06), 0.03, 0.1, along_x, Vec3(0, 0, 0), 0.03, 0.1, kMargin, pts) ==
            1);
    CHECK((pts[0].normal - kUp).norm() < kTol);
    CHECK(std::abs(pts[0].depth) < kTol);
    // nearly parallel (1e-4 rad): both ends, at their own depths
    const Mat3 near = rot(kUp, 1e-4) * along_x;
    REQUIRE(capsule_capsule(near, Vec3(0, 0, 0.0599), 0.03, 0.1, along_x, Vec3(0, 0, 0), 0.03, 0.1, kMargin, pts) == 2);
    for (int k = 0; k < 2; ++k) CHECK(pts[k].depth == Approx(1e-4).margin(1e-8));
  }
  SECTION("sphere on a capsule's side and on its cap") {
    REQUIRE(sphere_capsule(Vec3(0.07, 0, 0.079), 0.05, along_x, Vec3(0, 0, 0), 0.03, 0.1, kMargin, pts) == 1);
    CHECK((pts[0].normal - kUp).norm() < kTol);
    CHECK(pts[0].depth == Approx(0.001).margin(kTol));
    CHECK((pts[0].position - Vec3(0.07, 0, 0.0295)).norm() < kTol);
    const Vec3 c(0.15, 0.03, 0.0);  // beyond the cap at x = 0.1: along the line from the cap's centre
    REQUIRE(sphere_capsule(c, 0.05, along_x, Vec3(0, 0, 0), 0.03, 0.1, kMargin, pts) == 1);
    const Vec3 d = c - Vec3(0.1, 0, 0);
    CHECK((pts[0].normal - d.normalized()).norm() < kTol);
    CHECK(pts[0].depth == Approx(0.08 - d.norm()).margin(kTol));
  }
}
