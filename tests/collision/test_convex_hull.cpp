// Convex hulls of collision meshes (convex_hull.hpp) and their contacts: the hull of known point
// sets, the hull-plane manifold against closed forms, a hull against a box, a mesh body resting
// on the ground, the triangle-mesh option, and flat meshes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "impulse/collision/collision_world.hpp"
#include "impulse/collision/convex_hull.hpp"
#include "impulse/collision/manifold.hpp"
#include "impulse/core/error.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"
#include "support/temp_dir.hpp"

using namespace impulse;
using impulse_test::TempDir;

namespace {

// The cube [-h, h]^3 (8 corners) with `inner` extra points strictly inside it.
std::vector<Vec3> cube_points(Scalar h, int inner) {
  std::vector<Vec3> p;
  for (int c = 0; c < 8; ++c) p.emplace_back((c & 1) ? h : -h, (c & 2) ? h : -h, (c & 4) ? h : -h);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.9 * h, 0.9 * h);
  for (int k = 0; k < inner; ++k) p.emplace_back(u(rng), u(rng), u(rng));
  return p;
}

// A UV sphere of radius r: `rings` latitudes (poles excluded) of `segments` points, plus the poles.
std::vector<Vec3> sphere_points(Scalar r, int rings, int segments) {
  std::vector<Vec3> p = {Vec3(0, 0, r), Vec3(0, 0, -r)};
  for (int i = 1; i <= rings; ++i) {
    const Scalar th = M_PI * i / (rings + 1);
    for (int j = 0; j < segments; ++j) {
      const Scalar ph = 2 * M_PI * j / segments;
      p.emplace_back(r * std::sin(th) * std::cos(ph), r * std::sin(th) * std::sin(ph), r * std::cos(th));
    }
  }
  return p;
}

// An OBJ file of the given points (as vertices) and triangles.
std::string obj(const std::vector<Vec3>& v, const std::vector<std::array<int, 3>>& f) {
  std::ostringstream s;
  s.precision(17);
  for (const Vec3& x : v) s << "v " << x.x() << ' ' << x.y() << ' ' << x.z() << "\n";
  for (const auto& t : f) s << "f " << t[0] + 1 << ' ' << t[1] + 1 << ' ' << t[2] + 1 << "\n";
  return s.str();
}

// The cube [-h, h]^3 as 12 triangles.
std::string cube_obj(Scalar h) {
  return obj(cube_points(h, 0), {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                                 {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}});
}

// A "U": two 2 x 2 x 10 cm posts 6 cm apart (inner faces at x = +-3 cm) joined at the bottom by a
// 10 x 2 x 2 cm bar, as one non-convex triangle mesh (three boxes' triangles).
std::string u_obj() {
  std::vector<Vec3> v;
  std::vector<std::array<int, 3>> f;
  auto box = [&](const Vec3& lo, const Vec3& hi) {
    const int o = static_cast<int>(v.size());
    for (int c = 0; c < 8; ++c) v.emplace_back((c & 1) ? hi.x() : lo.x(), (c & 2) ? hi.y() : lo.y(), (c & 4) ? hi.z() : lo.z());
    const int t[12][3] = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                          {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    for (const auto& k : t) f.push_back({o + k[0], o + k[1], o + k[2]});
  };
  box(Vec3(-0.05, -0.01, 0.0), Vec3(-0.03, 0.01, 0.10));
  box(Vec3(0.03, -0.01, 0.0), Vec3(0.05, 0.01, 0.10));
  box(Vec3(-0.05, -0.01, 0.0), Vec3(0.05, 0.01, 0.02));
  return obj(v, f);
}

// The triangles of the convex hull of `points` as an OBJ file (a convex mesh).
std::string hull_obj(const std::vector<Vec3>& points) {
  const ConvexHull h = convex_hull(points, "points");
  std::vector<std::array<int, 3>> tris;
  for (const auto& f : h.faces)
    for (std::size_t i = 1; i + 1 < f.size(); ++i) tris.push_back({f[0], f[i], f[i + 1]});
  return obj(h.vertices, tris);
}

// A frustum of a square pyramid standing on its small face: the 6 x 6 cm base at z = 0, the
// 20 x 20 cm top at z = 0.2 (a bounding box 20 cm thick, so the base is smaller than the box).
std::vector<Vec3> frustum_points() {
  std::vector<Vec3> p;
  for (int c = 0; c < 4; ++c) p.emplace_back((c & 1) ? 0.03 : -0.03, (c & 2) ? 0.03 : -0.03, 0.0);
  for (int c = 0; c < 4; ++c) p.emplace_back((c & 1) ? 0.1 : -0.1, (c & 2) ? 0.1 : -0.1, 0.2);
  return p;
}

// A one-link floating URDF whose collision is the mesh file `mesh` (1 kg, 10 cm cube inertia).
std::string mesh_urdf(const std::string& mesh) {
  return "<robot name=\"m\"><link name=\"body\"><inertial><mass value=\"1\"/><inertia ixx=\"0.0017\" ixy=\"0\" "
         "ixz=\"0\" iyy=\"0.0017\" iyz=\"0\" izz=\"0.0017\"/></inertial><collision><geometry><mesh filename=\"" +
         mesh + "\"/></geometry></collision></link></robot>";
}

// The message of the impulse::Error (ModelError, WorldFileError) `f` throws ("" when it throws
// nothing).
template <typename F>
std::string model_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Model mesh_model(const std::string& mesh, MeshCollision mc) {
  UrdfOptions o;
  o.floating_base = true;
  o.mesh_collision = mc;
  return load_urdf_string(mesh_urdf(mesh), o, "mesh.urdf");
}

// Largest speed of `r` over `steps` steps after `settle` steps, and the fewest and most contacts
// between two moving bodies (both sides with a body: not the ground, not a static box) or, when
// `moving_pairs` is false, of every contact, over those steps.
struct Rest {
  Scalar speed = 0;
  Index fewest = 1 << 30, most = 0;
};
Rest run_to_rest(World& world, ArticulatedSystem& r, int settle, int steps, bool moving_pairs = false) {
  Rest out;
  for (int k = 0; k < settle + steps; ++k) {
    world.integrate();
    if (k < settle) continue;
    out.speed = std::max(out.speed, r.u().cwiseAbs().maxCoeff());
    Index n = 0;
    for (const Contact& c : world.contacts()) n += !moving_pairs || c.body_b >= 0;
    out.fewest = std::min(out.fewest, n);
    out.most = std::max(out.most, n);
  }  return out;
}

}  // namespace

TEST_CASE("convex hull of a cube with interior points: its 8 corners, 6 square faces, volume 1") {
  const ConvexHull hull = convex_hull(cube_points(0.5, 200), "cube");
  REQUIRE(hull.vertices.size() == 8);
  for (const Vec3& v : hull.vertices) CHECK(v.cwiseAbs().isApprox(Vec3::Constant(0.5)));
  REQUIRE(hull.faces.size() == 6);  // coplanar facets merged into squares
  for (std::size_t f = 0; f < hull.faces.size(); ++f) {
    CHECK(hull.faces[f].size() == 4);
    CHECK(hull.normals[f].cwiseAbs().maxCoeff() == Approx(1.0));
    // every vertex of the face on its plane, the loop counter-clockwise seen from outside
    const Vec3& a = hull.vertices[static_cast<std::size_t>(hull.faces[f][0])];
    const Vec3& b = hull.vertices[static_cast<std::size_t>(hull.faces[f][1])];
    const Vec3& c = hull.vertices[static_cast<std::size_t>(hull.faces[f][2])];
    CHECK((b - a).cross(c - b).dot(hull.normals[f]) > 0);
    for (int i : hull.faces[f]) CHECK(hull.normals[f].dot(hull.vertices[static_cast<std::size_t>(i)]) == Approx(0.5));
  }
  CHECK(hull.volume == Approx(1.0).epsilon(1e-12));
  for (const auto& n : hull.neighbours) CHECK(n.size() == 3);  // a cube's corner has 3 edges
}

TEST_CASE("convex hull of a tessellated sphere: every point, the polyhedron's volume, exact supports") {
  const std::vector<Vec3> pts = sphere_points(0.02, 15, 32);
  const ConvexHull hull = convex_hull(pts, "sphere");
  CHECK(hull.vertices.size() == pts.size());
  // the inscribed polyhedron: a little less than the ball, and more than 95 % of it
  const Scalar ball = 4.0 / 3.0 * M_PI * std::pow(0.02, 3);
  CHECK(hull.volume < ball);
  CHECK(hull.volume > 0.95 * ball);
  // hill climbing finds the true maximum in every direction
  std::mt19937 rng(5);
  std::normal_distribution<double> n(0, 1);
  for (int k = 0; k < 500; ++k) {
    const Vec3 d(n(rng), n(rng), n(rng));
    Scalar best = -1e9;
    for (const Vec3& v : hull.vertices) best = std::max(best, d.dot(v));
    CHECK(d.dot(hull.vertices[static_cast<std::size_t>(hull.support(d))]) == Approx(best).epsilon(1e-14));
  }
}

TEST_CASE("support from the cube-map start: the true maximum of an irregular hull in every direction") {
  // an irregular hull (random points in an ellipsoid) and directions of every kind: random, along
  // the axes and the cube's diagonals (cell borders), near cell borders, and degenerate ones
  std::mt19937 rng(11);
  std::normal_distribution<double> n(0, 1);
  std::vector<Vec3> pts;
  for (int k = 0; k < 400; ++k) pts.emplace_back(Vec3(0.05 * n(rng), 0.02 * n(rng), 0.08 * n(rng)));
  const ConvexHull hull = convex_hull(pts, "blob");
  REQUIRE(hull.support_starts.size() == 6u * ConvexHull::kSupportGrid * ConvexHull::kSupportGrid);
  std::vector<Vec3> dirs;
  for (int k = 0; k < 2000; ++k) dirs.emplace_back(n(rng), n(rng), n(rng));
  for (int x = -1; x <= 1; ++x)
    for (int y = -1; y <= 1; ++y)
      for (int z = -1; z <= 1; ++z) {
        if (x == 0 && y == 0 && z == 0) continue;
        dirs.emplace_back(x, y, z);
        dirs.emplace_back(x + 1e-12, y - 1e-12, z);
        dirs.emplace_back(1e-300 * x, 1e-300 * y, 1e-300 * z);
      }
  for (const Vec3& d : dirs) {
    INFO("direction " << d.transpose());
    Scalar best = -1e300;
    for (const Vec3& v : hull.vertices) best = std::max(best, d.dot(v));
    const int s = hull.support(d);
    REQUIRE(s >= 0);
    REQUIRE(s < static_cast<int>(hull.vertices.size()));
    CHECK(d.dot(hull.vertices[static_cast<std::size_t>(s)]) == best);
    CHECK(hull.support(d) == s);  // deterministic
  }
  // no direction: some vertex, no crash
  for (const Vec3& d : {Vec3(0, 0, 0), Vec3(std::nan(""), 1, 0), Vec3(1, std::numeric_limits<double>::infinity(), 0)}) {
    const int s = hull.support(d);
    CHECK(s >= 0);
    CHECK(s < static_cast<int>(hull.vertices.size()));
  }
}

TEST_CASE("hull-plane manifold: a contact exactly when a vertex is in the margin, at hull vertices") {
  // random poses of irregular hulls (a blob, a rounded wheel, a box-like one) with their deepest
  // vertex from 6 mm above the plane to 3 mm below: convex_plane (support from the cube map,
  // walks over the hull's edges) reports a contact exactly when the deepest vertex found by
  // visiting every vertex is within the margin (the walks never drop a contact), at
  // most 4 points, within the margin, no deeper than the deepest vertex and at most the band
  // (0.25 mm) less deep
  std::mt19937 rng(13);
  std::normal_distribution<double> n(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<Vec3>> clouds(3);
  for (int k = 0; k < 300; ++k) clouds[0].emplace_back(0.03 * n(rng), 0.05 * n(rng), 0.02 * n(rng));
  for (int i = 0; i < 48; ++i)
    for (int j = 0; j < 5; ++j) {
      const Scalar a = 2 * M_PI * i / 48;
      clouds[1].emplace_back(0.016 * std::cos(a) * (1 - 0.1 * (j - 2) * (j - 2) / 4), -0.008 + 0.004 * j,
                             0.016 * std::sin(a) * (1 - 0.1 * (j - 2) * (j - 2) / 4));
    }
  clouds[2] = cube_points(0.05, 30);
  const Scalar margin = 0.005;
  int touching = 0;
  for (const auto& cloud : clouds) {
    const ConvexHull hull = convex_hull(cloud, "cloud");
    for (int k = 0; k < 3000; ++k) {
      Mat3 R = Eigen::Quaterniond(n(rng), n(rng), n(rng), n(rng)).normalized().toRotationMatrix();
      if (k % 5 == 0) R = Mat3(Eigen::AngleAxisd(M_PI / 2 * (k % 4), Vec3::UnitX()));  // exact ties
      const Vec3 nrm = k % 3 == 0 ? Vec3(n(rng), n(rng), n(rng)).normalized() : Vec3(Vec3::UnitZ());
      const Vec3 p(u(rng), u(rng), u(rng));
      Scalar top = -1e9;
      for (const Vec3& v : hull.vertices) top = std::max(top, -nrm.dot(R * v + p));
      const Scalar offset = -top + (u(rng) * 0.009 - 0.006);  // deepest vertex at depth in [-6, 3] mm
      const Scalar max_depth = offset + top;
      ManifoldPoint pts[kMaxManifoldPoints];
      const int c = convex_plane(R, p, hull, nrm, offset, margin, pts);
      INFO("pose " << k << " max depth " << max_depth);
      REQUIRE(c == (max_depth >= -margin ? std::max(c, 1) : 0));
      REQUIRE(c <= 4);
      touching += c > 0;
      Scalar deepest = -1e9;
      for (int i = 0; i < c; ++i) {
        deepest = std::max(deepest, pts[i].depth);
        CHECK(pts[i].depth >= -margin - 0.05 * margin);  // (the band of a deepest vertex near -margin)
        CHECK(pts[i].depth <= max_depth + 1e-12);
        CHECK(pts[i].normal.isApprox(nrm));
      }
      // the deepest point is the deepest vertex, or (extremes of the band) within the band of it
      if (c > 0) CHECK(deepest >= max_depth - 0.05 * margin - 1e-12);
    }
  }
  CHECK(touching > 3000);
}

TEST_CASE("convex hull of flat or too few points: a ModelError naming the mesh") {
  std::vector<Vec3> flat;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) flat.emplace_back(0.01 * i, 0.01 * j, 0.3);
  const std::string flat_msg = model_error([&] { convex_hull(flat, "mesh file 'plate.stl'"); });
  CHECK_THAT(flat_msg, Catch::Matchers::StartsWith("mesh file 'plate.stl': no convex hull") &&
                           Catch::Matchers::Contains("plane"));
  CHECK(flat_msg.find('\n') == std::string::npos);  // one line
  CHECK_THAT(model_error([] { convex_hull({Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0)}, "mesh file 'tri.stl'"); }),
             Catch::Matchers::StartsWith("mesh file 'tri.stl': no convex hull: 3"));
  std::vector<Vec3> bad = cube_points(0.5, 0);
  bad[3].x() = std::nan("");
  CHECK_THROWS_AS(convex_hull(bad, "mesh file 'nan.stl'"), ModelError);
}

TEST_CASE("hull-plane manifold equals the closed-form box-plane one") {
  const ConvexHull hull = convex_hull(cube_points(0.05, 50), "cube");
  const Vec3 h = Vec3::Constant(0.05);
  const Vec3 n = Vec3::UnitZ();
  ManifoldPoint a[kMaxManifoldPoints], b[kMaxManifoldPoints];
  // flat, 1 mm deep: 4 corners at depth 1 mm, normal +z
  {
    const Mat3 R = Mat3::Identity();
    const Vec3 p(0.3, -0.2, 0.049);
    const int ka = convex_plane(R, p, hull, n, 0.0, 0.005, a);
    REQUIRE(ka == 4);
    REQUIRE(box_plane(R, p, h, n, 0.0, 0.005, b) == 4);
    for (int k = 0; k < ka; ++k) {
      CHECK(a[k].depth == Approx(0.001));
      CHECK(a[k].normal == n);
      bool match = false;
      for (int j = 0; j < 4; ++j) match = match || (a[k].position - b[j].position).norm() < 1e-12;
      CHECK(match);
    }
  }
  // on an edge (45 degrees about x), 2 mm deep: the 2 corners of the edge
  {
    const Mat3 R = Eigen::AngleAxisd(M_PI / 4, Vec3::UnitX()).toRotationMatrix();
    const Vec3 p(0, 0, 0.05 * std::sqrt(2.0) - 0.002);
    REQUIRE(convex_plane(R, p, hull, n, 0.0, 0.005, a) == 2);
    for (int k = 0; k < 2; ++k) CHECK(a[k].depth == Approx(0.002));
  }
  // on a corner (tilted about two axes), 3 mm above the ground: one point at depth -3 mm; 6 mm
  // above: none
  {
    const Mat3 R = (Eigen::AngleAxisd(0.6, Vec3::UnitX()) * Eigen::AngleAxisd(0.5, Vec3::UnitY())).toRotationMatrix();
    const Scalar lowest = (R * Vec3(0, 0, 0)).z() - (R.transpose() * n).cwiseAbs().dot(h);
    REQUIRE(convex_plane(R, Vec3(0, 0, 0.003 - lowest), hull, n, 0.0, 0.005, a) == 1);
    CHECK(a[0].depth == Approx(-0.003));
    CHECK(convex_plane(R, Vec3(0, 0, 0.006 - lowest), hull, n, 0.0, 0.005, a) == 0);
  }
}

TEST_CASE("a mesh cube's hull against a static box: depth and normal of the overlap") {
  TempDir dir;
  const std::string cube = dir.write("cube.obj", cube_obj(0.05));
  CollisionWorld world;
  world.add_static_box("table", SE3(Mat3::Identity(), Vec3(0, 0, -0.5)), Vec3(1, 1, 1));  // top at z = 0
  CollisionShape s;
  s.name = "cube";
  s.type = ShapeType::Mesh;
  s.size = Vec3::Ones();
  s.mesh_path = cube;
  const Index body = world.add_free_body("cube", {s});
  world.update(body, SE3(Mat3::Identity(), Vec3(0.1, 0.2, 0.048)));  // 2 mm into the table
  ContactSet contacts(16);
  world.detect(contacts);
  REQUIRE(contacts.size() >= 1);
  for (const Contact& c : contacts) {
    CHECK(c.object_a == body);
    CHECK(c.normal.isApprox(Vec3::UnitZ(), 1e-6));  // from the table (B) into the cube (A)
    CHECK(c.depth == Approx(0.002).margin(1e-6));
  }
}

TEST_CASE("a mesh body resting on the ground: at most 4 contacts, stays at rest") {
  TempDir dir;
  // a tessellated sphere (a curved foot) and a cube, as triangle meshes
  const std::vector<Vec3> sp = sphere_points(0.03, 9, 16);
  std::vector<std::array<int, 3>> tris;
  const ConvexHull h = convex_hull(sp, "sphere");
  for (const auto& f : h.faces)
    for (std::size_t i = 1; i + 1 < f.size(); ++i) tris.push_back({f[0], f[i], f[i + 1]});
  std::vector<Vec3> hv = h.vertices;
  for (const std::string& mesh : {dir.write("cube.obj", cube_obj(0.05)), dir.write("ball.obj", obj(hv, tris))}) {
    World world;
    world.add_ground();
    ArticulatedSystem& r = world.add_articulated_system(mesh_model(mesh, MeshCollision::ConvexHull));
    VecX q = r.q();
    q[2] = 0.06;
    r.set_q(q);
    Index most = 0;
    for (int k = 0; k < 1500; ++k) {
      world.integrate();
      most = std::max(most, static_cast<Index>(world.contacts().size()));
    }
    INFO(mesh);
    CHECK(most >= 1);
    CHECK(most <= 4);
    CHECK(r.u().norm() < 1e-3);  // at rest
    CHECK(r.q()[2] > 0.0);       // on the ground, not through it
  }
}

TEST_CASE("mesh collision: the hull fills a U's notch, the triangle mesh does not") {
  TempDir dir;
  const std::string u = dir.write("u.obj", u_obj());
  // a 1 cm ball in the notch of the U, 2 cm above the bar, 2 cm from each post
  for (const MeshCollision mc : {MeshCollision::ConvexHull, MeshCollision::Triangles}) {
    CollisionWorld world;
    const Index shape_u = world.add_object(mesh_model(u, mc));
    CollisionShape ball;
    ball.name = "ball";
    ball.type = ShapeType::Sphere;
    ball.size = Vec3(0.01, 0, 0);
    const Index b = world.add_free_body("ball", {ball});
    world.update(shape_u, SE3());
    world.update(b, SE3(Mat3::Identity(), Vec3(0, 0, 0.05)));
    ContactSet contacts(16);
    world.detect(contacts);
    INFO((mc == MeshCollision::ConvexHull ? "convex_hull" : "triangles"));
    CHECK(contacts.size() == (mc == MeshCollision::ConvexHull ? 1 : 0));
  }
}

TEST_CASE("a flat mesh has no hull: it collides as its triangles") {
  TempDir dir;
  const std::string plate = dir.write("plate.obj", obj({Vec3(-0.1, -0.1, 0), Vec3(0.1, -0.1, 0), Vec3(0.1, 0.1, 0),
                                                         Vec3(-0.1, 0.1, 0)},
                                                        {{0, 1, 2}, {0, 2, 3}}));
  CollisionWorld world;
  world.add_ground();
  const Index o = world.add_object(mesh_model(plate, MeshCollision::ConvexHull));
  world.update(o, SE3(Mat3::Identity(), Vec3(0, 0, -0.001)));
  ContactSet contacts(16);
  world.detect(contacts);
  CHECK(contacts.size() == 4);  // its 4 corners, 1 mm deep
  for (const Contact& c : contacts) CHECK(c.depth == Approx(0.001));
}

TEST_CASE("world file: <robot mesh_collision> picks hulls or triangles; another value is an error naming it") {
  TempDir dir;
  const std::string cube = dir.write("cube.obj", cube_obj(0.05));
  dir.write("m.urdf", mesh_urdf(cube));
  const auto world_with = [&](const std::string& attr) {
    return dir.write("w.xml", "<world><robot urdf=\"m.urdf\" " + attr + "/></world>");
  };
  CHECK(parse_world_file(world_with("")).robots.at(0).model->collision.at(0).mesh_collision ==
        MeshCollision::ConvexHull);  // the default
  CHECK(parse_world_file(world_with("mesh_collision=\"convex_hull\"")).robots.at(0).model->collision.at(0).mesh_collision ==
        MeshCollision::ConvexHull);
  CHECK(parse_world_file(world_with("mesh_collision=\"triangles\"")).robots.at(0).model->collision.at(0).mesh_collision ==
        MeshCollision::Triangles);
  const std::string msg = model_error([&] { parse_world_file(world_with("mesh_collision=\"hull\"")); });
  CHECK_THAT(msg, Catch::Matchers::Contains("mesh_collision") &&
                      Catch::Matchers::Contains("'hull' is not one of convex_hull, triangles"));
  CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("mesh collision: convex hulls by default (UrdfOptions, CollisionShape), triangles on request") {
  CHECK(UrdfOptions().mesh_collision == MeshCollision::ConvexHull);
  CHECK(CollisionShape().mesh_collision == MeshCollision::ConvexHull);
  TempDir dir;
  const std::string cube = dir.write("cube.obj", cube_obj(0.05));
  CHECK(load_urdf_string(mesh_urdf(cube), UrdfOptions(), "m.urdf").collision.at(0).mesh_collision ==
        MeshCollision::ConvexHull);
}

TEST_CASE("hull on a plane: a face smaller than the hull's thickness keeps its 4 corners as the hull rocks") {
  // The frustum's 6 cm base is smaller than half its 20 cm thickness, the size under which the
  // points of a rounded cap merge into one: a flat face lying on the plane is not a cap, and
  // keeps its corners whichever of them is the deepest.
  const ConvexHull hull = convex_hull(frustum_points(), "frustum");
  const Vec3 n = Vec3::UnitZ();
  ManifoldPoint pts[kMaxManifoldPoints];
  const Vec3 tilts[] = {Vec3(0.01, 0, 0), Vec3(-0.01, 0, 0), Vec3(0, 0.01, 0), Vec3(0, -0.01, 0),
                        Vec3(0.006, -0.007, 0), Vec3(0, 0, 0)};
  for (const Vec3& tilt : tilts) {
    INFO("tilt " << tilt.transpose());
    const Mat3 R = tilt.norm() > 0 ? Mat3(Eigen::AngleAxisd(tilt.norm(), tilt.normalized())) : Mat3::Identity();
    Scalar lowest = 1e9;
    for (const Vec3& v : hull.vertices) lowest = std::min(lowest, (R * v).z());
    const Vec3 p(0.4, -0.3, 0.0001 - lowest);  // the deepest corner 0.1 mm deep
    REQUIRE(convex_plane(R, p, hull, n, 0.0, 0.005, pts) == 4);
    for (int k = 0; k < 4; ++k) {
      // each point is a corner of the base (up to the half-depth shift of the midpoint)
      const Vec3 local = R.transpose() * (pts[k].position - p);
      CHECK(std::abs(std::abs(local.x()) - 0.03) < 1e-3);
      CHECK(std::abs(std::abs(local.y()) - 0.03) < 1e-3);
      CHECK(std::abs(local.z()) < 1e-3);
      CHECK(pts[k].depth <= 0.0001 + 1e-12);
    }
  }
}

TEST_CASE("a frustum-shaped mesh standing on its small face comes to rest on its 4 corners") {
  TempDir dir;
  World world;
  world.add_ground();
  const std::string frustum = dir.write("frustum.obj", hull_obj(frustum_points()));
  ArticulatedSystem& r = world.add_articulated_system(mesh_model(frustum, MeshCollision::ConvexHull));
  VecX q = r.q();
  q[2] = 0.002;
  r.set_q(q);
  const Rest rest = run_to_rest(world, r, 1500, 500);
  CHECK(rest.fewest == 4);
  CHECK(rest.most == 4);
  CHECK(rest.speed < 1e-3);
  CHECK(std::abs(r.q()[2]) < 1e-3);  // still standing where it was put
}

TEST_CASE("face manifold: a hull cube on a box of the same width keeps its 4 corners under round-off") {
  // the hull cube's side faces coplanar with the box's up to sub-micrometre offsets: no
  // near-duplicate cut points beside the corners
  const ConvexHull hull = convex_hull(cube_points(0.05, 30), "cube");
  ConvexShape box;
  box.h = Vec3::Constant(0.05);
  box.p = Vec3(0, 0, -0.05);
  ConvexShape cube;
  cube.kind = ConvexShape::Kind::Hull;
  cube.hull = &hull;
  ManifoldPoint pts[kMaxManifoldPoints];
  for (const Scalar dx : {0.0, 1e-15, -3e-9, 2e-8})
    for (const Scalar dy : {0.0, -1e-15, 4e-9})
      for (const Scalar yaw : {0.0, 1e-12, -5e-9}) {
        INFO("dx " << dx << " dy " << dy << " yaw " << yaw);
        cube.R = Eigen::AngleAxisd(yaw, Vec3::UnitZ()).toRotationMatrix();
        cube.p = Vec3(dx, dy, 0.05 - 1e-6);
        const int n = face_manifold(cube, box, Vec3::UnitZ(), 0.005, pts);
        REQUIRE(n == 4);
        for (int k = 0; k < n; ++k) {
          CHECK(std::abs(std::abs(pts[k].position.x()) - 0.05) < 1e-7);
          CHECK(std::abs(std::abs(pts[k].position.y()) - 0.05) < 1e-7);
        }
      }
}

TEST_CASE("face manifold: a hull cube on a box face, flat or slightly tilted: 4 points; on an edge: 2") {
  const ConvexHull hull = convex_hull(cube_points(0.05, 30), "cube");
  ConvexShape table;  // a box, its top face at z = 0
  table.h = Vec3(0.5, 0.5, 0.1);
  table.p = Vec3(0, 0, -0.1);
  ConvexShape cube;
  cube.kind = ConvexShape::Kind::Hull;
  cube.hull = &hull;
  ManifoldPoint pts[kMaxManifoldPoints];
  for (const Scalar tilt : {0.0, 0.004, -0.004}) {
    INFO("tilt " << tilt);
    cube.R = Eigen::AngleAxisd(tilt, Vec3(1, 2, 0).normalized()).toRotationMatrix();
    Scalar lowest = 1e9;
    for (const Vec3& v : hull.vertices) lowest = std::min(lowest, (cube.R * v).z());
    cube.p = Vec3(0.1, 0.05, 0.001 - lowest);  // the deepest corner 1 mm above the table
    REQUIRE(face_manifold(cube, table, Vec3::UnitZ(), 0.005, pts) == 4);
    for (int k = 0; k < 4; ++k) {
      CHECK(pts[k].normal.isApprox(Vec3::UnitZ()));  // the table's face normal, from B into A
      CHECK(pts[k].depth <= -0.001 + 1e-9);
      CHECK(pts[k].depth >= -0.005);
      CHECK(std::abs(pts[k].position.z() + 0.5 * pts[k].depth) < 1e-9);  // midpoint: half the gap above
    }
    // the same with the roles swapped: the normal from the cube (B) into the table (A)
    REQUIRE(face_manifold(table, cube, -Vec3::UnitZ(), 0.005, pts) == 4);
    for (int k = 0; k < 4; ++k) CHECK(pts[k].normal.isApprox(-Vec3::UnitZ()));
  }
  // on an edge (45 degrees about x), 1 mm into the table: the edge's 2 corners
  cube.R = Eigen::AngleAxisd(M_PI / 4, Vec3::UnitX()).toRotationMatrix();
  cube.p = Vec3(0, 0, 0.05 * std::sqrt(2.0) - 0.001);
  REQUIRE(face_manifold(cube, table, Vec3::UnitZ(), 0.005, pts) == 2);
  for (int k = 0; k < 2; ++k) CHECK(pts[k].depth == Approx(0.001));
  // no face along the normal (a cube's corner pointing down the diagonal): no face contact
  cube.R = Eigen::AngleAxisd(std::atan(std::sqrt(2.0)), Vec3(1, -1, 0).normalized()).toRotationMatrix();
  CHECK(face_manifold(cube, cube, Vec3::UnitZ(), 0.005, pts) == 0);
}

TEST_CASE("a mesh cube resting on a box and on another hull: a 4-point manifold, at rest") {
  TempDir dir;
  const std::string cube = dir.write("cube.obj", cube_obj(0.05));
  const std::string slab = dir.write("slab.obj", cube_obj(0.2));  // a 40 cm cube
  for (const bool on_hull : {false, true}) {
    INFO((on_hull ? "on a hull resting on the ground" : "on a static box"));
    World world;
    if (on_hull) {
      world.add_ground();
      ArticulatedSystem& s = world.add_articulated_system(mesh_model(slab, MeshCollision::ConvexHull));
      VecX q = s.q();
      q[2] = 0.2;
      s.set_q(q);
    } else {
      world.add_static_box("table", SE3(), Vec3(0.4, 0.4, 0.4));  // top face at z = 0.2
    }
    const Scalar top = on_hull ? 0.4 : 0.2;  // the slab's top face, the box's
    ArticulatedSystem& r = world.add_articulated_system(mesh_model(cube, MeshCollision::ConvexHull));
    VecX q = r.q();
    q[0] = 0.03;
    q[2] = top + 0.05 + 0.002;  // 2 mm above the top face, off centre
    r.set_q(q);
    const Rest rest = run_to_rest(world, r, 1500, 500, on_hull);
    CHECK(rest.fewest >= 3);
    CHECK(rest.most <= 4);
    CHECK(rest.speed < 1e-3);
    CHECK(r.q()[2] == Approx(top + 0.05).margin(1e-3));  // resting on the top face
  }
}
