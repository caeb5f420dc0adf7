// Heightfield terrain: exact piecewise-linear heights and normals, ray casts against brute force,
// generators, shape manifolds against the closed-form plane manifolds on flat and tilted terrain,
// valleys and stair edges, and a box coming to rest on a heightfield where it rests on a plane.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <memory>
#include <limits>
#include <random>
#include <vector>

#include "impulse/collision/collision_world.hpp"
#include "impulse/collision/heightfield.hpp"
#include "impulse/collision/manifold.hpp"
#include "impulse/core/error.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"
#include "support/matchers.hpp"
#include "support/draw.hpp"

using namespace impulse;

namespace {

// A planar heightfield z = a x + b y + c on a grid of 21 x 31 points.
Heightfield planar(Scalar a, Scalar b, Scalar c, Scalar cell = 0.1) {
  const Heightfield g(MatX::Zero(21, 31), cell, cell);
  MatX h(21, 31);
  for (Index i = 0; i < 21; ++i) {
    for (Index j = 0; j < 31; ++j) {
      const Vec3 v = g.vertex(i, j);
      h(i, j) = a * v.x() + b * v.y() + c;
    }
  }
  return Heightfield(h, cell, cell);
}

TerrainShape box_shape(const Mat3& R, const Vec3& p, const Vec3& h) {
  TerrainShape s;
  s.type = ShapeType::Box;
  s.R = R;
  s.p = p;
  s.h = h;
  return s;
}

}  // namespace

TEST_CASE("Heightfield: heights and normals are exact on planar terrain; outside the grid there is none",
          "[collision][heightfield]") {
  const Heightfield hf = planar(0.3, -0.2, 0.5);
  CHECK(hf.x0() == Approx(-1.0));
  CHECK(hf.y0() == Approx(-1.5));
  std::mt19937 rng(3);
  std::uniform_real_distribution<Scalar> ux(-1.0, 1.0), uy(-1.5, 1.5);
  const Vec3 n_exact = Vec3(-0.3, 0.2, 1).normalized();
  for (int k = 0; k < 200; ++k) {
    const Scalar x = ux(rng), y = uy(rng);
    Scalar z;
    Vec3 n;
    REQUIRE(hf.height_normal(x, y, z, n));
    CHECK(z == Approx(0.3 * x - 0.2 * y + 0.5).margin(1e-12));
    CHECK((n - n_exact).norm() < 1e-12);
  }
  Scalar z = 7;
  CHECK_FALSE(hf.height(1.01, 0, z));
  CHECK_FALSE(hf.height(0, -1.51, z));
  CHECK(z == 7);
  // one triangle per half cell: the diagonal splits the cell (i, j)-(i+1, j+1)
  MatX bump = MatX::Zero(2, 2);
  bump(1, 0) = 1;  // only corner b is raised: the lower triangle tilts, the upper stays flat
  const Heightfield tri(bump, 1, 1, 0, 0);
  REQUIRE(tri.height(0.75, 0.25, z));
  CHECK(z == Approx(0.5));  // u - v on the lower triangle
  REQUIRE(tri.height(0.25, 0.75, z));
  CHECK(z == 0);
}

TEST_CASE("Heightfield: bad grids are rejected with a named error", "[collision][heightfield]") {
  CHECK_THROWS_WITH(Heightfield(MatX::Zero(1, 5), 0.1, 0.1), Catch::Contains("at least 2 x 2"));
  MatX h = MatX::Zero(3, 3);
  h(1, 1) = std::nan("");
  CHECK_THROWS_WITH(Heightfield(h, 0.1, 0.1), Catch::Contains("not finite"));
  CHECK_THROWS_WITH(Heightfield(MatX::Zero(3, 3), 0, 0.1), Catch::Contains("spacing"));
  CHECK_THROWS_WITH(Heightfield::random_rough(-1, 1, 0.1, 0.05, 1), Catch::Contains("random_rough"));
  CHECK_THROWS_AS(Heightfield::from_pgm("/dev/null", 1, 1, 1), ModelError);
}

TEST_CASE("Heightfield: ray casts hit the surface first (against a brute-force march)", "[collision][heightfield]") {
  const Heightfield hf = Heightfield::random_rough(4, 3, 0.05, 0.2, 11, 1);
  std::mt19937 rng(5);
  std::uniform_real_distribution<Scalar> u(-1.0, 1.0);
  int hits = 0;
  for (int k = 0; k < 300; ++k) {
    const Vec3 r = test::draw3(u, rng);
    const Vec3 from(1.8 * r.x(), 1.3 * r.y(), 0.5 + 0.2 * r.z());
    // vertical rays and slanted ones (height scans look down and ahead)
    Vec3 dir(0, 0, -1);
    if (k % 3 != 0) {
      const Scalar dy = u(rng), dx = u(rng);  // g++'s order of the arguments
      dir = Vec3(0.7 * dx, 0.7 * dy, -1).normalized();
    }
    Scalar t;
    Vec3 n;
    const bool hit = hf.raycast(from, dir, 3.0, t, n);
    // brute force: march in 0.2 mm steps until the ray is below the surface
    Scalar t_brute = -1;
    for (Scalar s = 0; s <= 3.0; s += 2e-4) {
      const Vec3 x = from + s * dir;
      Scalar z;
      if (hf.height(x.x(), x.y(), z) && x.z() <= z) {
        t_brute = s;
        break;
      }
    }
    INFO("ray " << k << " from " << from.transpose() << " dir " << dir.transpose());
    CHECK(hit == (t_brute >= 0));
    if (hit && t_brute >= 0) {
      ++hits;
      CHECK(std::abs(t - t_brute) < 3e-4);
      const Vec3 x = from + t * dir;
      Scalar z;
      REQUIRE(hf.height(x.x(), x.y(), z));
      CHECK(x.z() == Approx(z).margin(1e-9));
      CHECK(n.z() > 0);
      CHECK(n.norm() == Approx(1));
    }
  }
  CHECK(hits > 200);
  Scalar t;
  Vec3 n;
  CHECK_FALSE(hf.raycast(Vec3(0, 0, 1), Vec3(0, 0, 1), 10, t, n));   // looking up
  CHECK_FALSE(hf.raycast(Vec3(0, 0, 1), Vec3(0, 0, -1), 0.1, t, n));  // too short
  CHECK_FALSE(hf.raycast(Vec3(5, 0, 1), Vec3(0, 0, -1), 10, t, n));   // outside
}

TEST_CASE("CollisionWorld: the batch of vertical rays equals the rays cast one by one, with or without the normal",
          "[collision][heightfield]") {
  // two overlapping terrains, a tilted half-space and the ground: the first hit is the highest
  // surface under each point, whichever kind it is; some rays start below a surface or miss all
  CollisionWorld cw;
  cw.add_heightfield("rough", std::make_shared<Heightfield>(Heightfield::random_rough(4, 3, 0.05, 0.2, 11, 1)));
  cw.add_heightfield("stairs", std::make_shared<Heightfield>(Heightfield::stairs(2, 2, 0.05, 0.3, 0.1)));
  cw.add_plane("wall", Vec3(0.3, 0, 1), -0.05);
  cw.add_ground(-0.1);
  // a static box (a step of an arena) beside the stairs, turned about z: top face at z = 0.3
  const SE3 X_box(Eigen::AngleAxis<Scalar>(0.3, Vec3::UnitZ()).toRotationMatrix(), Vec3(1.5, 1.2, 0.05));
  cw.add_static_box("step", X_box, Vec3(0.6, 0.4, 0.5));
  std::mt19937 rng(3);
  std::uniform_real_distribution<Scalar> u(-1.0, 1.0);
  std::vector<Vec3> from(500);
  for (Vec3& f : from) {
    const Vec3 r = test::draw3(u, rng);
    f = Vec3(3 * r.x(), 3 * r.y(), 0.3 + 0.5 * r.z());
  }
  const Scalar max_t = 0.6;
  std::vector<Scalar> t(from.size());
  cw.raycast_static_down(from.data(), from.size(), max_t, t.data());
  int hits = 0, misses = 0;
  for (std::size_t k = 0; k < from.size(); ++k) {
    Scalar t1 = -1, t2 = -1;
    Vec3 n;
    const bool hit = cw.raycast_static(from[k], Vec3(0, 0, -1), max_t, t1, n);
    CHECK(hit == cw.raycast_static(from[k], Vec3(0, 0, -1), max_t, t2));
    INFO("ray " << k << " from " << from[k].transpose());
    if (hit) {
      ++hits;
      CHECK(t[k] == t1);  // bit for bit
      CHECK(t2 == t1);
      CHECK(n.norm() == Approx(1));
    } else {
      ++misses;
      CHECK(t[k] == std::numeric_limits<Scalar>::infinity());
    }
  }
  CHECK(hits > 100);
  CHECK(misses > 20);
  // over the box: its top face, 0.5 below a ray from z = 0.8, normal up (the rough terrain under
  // it is at most 0.2 high); from inside the box: the surface under it, not the box
  Scalar t1;
  Vec3 n;
  REQUIRE(cw.raycast_static(Vec3(1.5, 1.2, 0.8), Vec3(0, 0, -1), 2.0, t1, n));
  CHECK(t1 == Approx(0.5));
  CHECK(n.isApprox(Vec3::UnitZ()));
  REQUIRE(cw.raycast_static(Vec3(1.5, 1.2, 0.1), Vec3(0, 0, -1), 2.0, t1, n));
  CHECK(t1 <= 0.2 + 1e-12);
  // sideways, above the rough terrain, into the box's +x face (turned by 0.3 rad): its normal
  REQUIRE(cw.raycast_static(Vec3(3.0, 1.2, 0.25), Vec3(-1, 0, 0), 5.0, t1, n));
  CHECK(n.isApprox(Vec3(std::cos(0.3), std::sin(0.3), 0)));
}

TEST_CASE("Heightfield: generators are deterministic and shaped as described", "[collision][heightfield]") {
  const Heightfield a = Heightfield::random_rough(2, 2, 0.05, 0.05, 7), b = Heightfield::random_rough(2, 2, 0.05, 0.05, 7);
  const Heightfield c = Heightfield::random_rough(2, 2, 0.05, 0.05, 8);
  CHECK(a.nx() == 41);
  CHECK(a.heights() == b.heights());
  CHECK(a.heights() != c.heights());
  CHECK(a.min_height() == 0);
  CHECK(a.max_height() == Approx(0.05));

  const Heightfield st = Heightfield::stairs(4, 1, 0.02, 0.3, 0.15, 0.0);
  Scalar z;
  REQUIRE(st.height(-1.0, 0, z));
  CHECK(z == 0);
  REQUIRE(st.height(0.15, 0, z));
  CHECK(z == Approx(0.15));
  REQUIRE(st.height(0.75, 0.2, z));
  CHECK(z == Approx(0.45));

  const Heightfield sl = Heightfield::slope(4, 1, 0.1, 0.25, 0.0);
  REQUIRE(sl.height(1.0, 0.3, z));
  CHECK(z == Approx(0.25));

  const Heightfield ss = Heightfield::stepping_stones(2, 2, 0.01, 0.2, 0.3, 0.5, 0.0, 1);
  CHECK(ss.max_height() == 0);
  CHECK(ss.min_height() == -0.5);

  // a PGM image: 3 x 2 pixels, P2
  const std::string path = "impulse_test_terrain.pgm";
  std::ofstream(path) << "P2\n# comment\n3 2\n255\n0 255 0\n0 0 51\n";
  const Heightfield img = Heightfield::from_pgm(path, 2.0, 1.0, 1.0);
  std::remove(path.c_str());
  CHECK(img.nx() == 3);
  CHECK(img.ny() == 2);
  CHECK(img.heights()(1, 1) == 1.0);           // top row, middle column
  CHECK(img.heights()(2, 0) == Approx(0.2));   // bottom row, last column
}

TEST_CASE("Heightfield contacts: flat and tilted terrain agree with the closed-form plane manifolds",
          "[collision][heightfield]") {
  const Scalar margin = 0.005;
  for (const Vec3& slope : {Vec3(0, 0, 0.1), Vec3(0.2, -0.1, 0.1)}) {
    const Heightfield hf = planar(slope.x(), slope.y(), slope.z(), 0.05);
    const Vec3 n = Vec3(-slope.x(), -slope.y(), 1).normalized();
    const Scalar offset = n.z() * slope.z();  // plane n . x = offset through (0, 0, c)
    ManifoldPoint got[kMaxManifoldPoints], want[kMaxManifoldPoints];

    // sphere slightly penetrating
    TerrainShape sphere;
    sphere.type = ShapeType::Sphere;
    sphere.r = 0.1;
    // centre 0.098 above the plane point under (0.1, 0.2)
    const Vec3 xs(0.1, 0.2, 0);
    sphere.p = xs + (offset - n.dot(xs) + 0.1 - 0.002) * n;
    const int k = heightfield_contacts(hf, sphere, margin, got);
    REQUIRE(k == 1);
    REQUIRE(sphere_plane(sphere.p, sphere.r, n, offset, margin, want) == 1);
    CHECK(got[0].depth == Approx(want[0].depth).margin(1e-12));
    CHECK((got[0].normal - want[0].normal).norm() < 1e-12);
    CHECK((got[0].position - want[0].position).norm() < 1e-12);

    // box resting flat (tilted with the terrain): the 4 bottom corners
    Mat3 R;
    R.col(2) = n;
    R.col(0) = Vec3::UnitY().cross(n).normalized();
    R.col(1) = n.cross(R.col(0));
    const Vec3 h(0.2, 0.1, 0.05);
    const Vec3 xb(-0.2, 0.1, 0);
    const Vec3 p = xb + (offset - n.dot(xb) + 0.05 - 0.001) * n;
    const int kb = heightfield_contacts(hf, box_shape(R, p, h), margin, got);
    const int kw = box_plane(R, p, h, n, offset, margin, want);
    REQUIRE(kw == 4);
    REQUIRE(kb == 4);
    for (int i = 0; i < kb; ++i) {
      CHECK(got[i].depth == Approx(0.001).margin(1e-9));
      CHECK((got[i].normal - n).norm() < 1e-9);
    }
    // the four points span the bottom face (area of the hull of the 4 points = 0.4 x 0.2)
    Vec3 lo = Vec3::Constant(1e9), hi = Vec3::Constant(-1e9);
    for (int i = 0; i < kb; ++i) {
      const Vec3 l = R.transpose() * (got[i].position - p);
      lo = lo.cwiseMin(l);
      hi = hi.cwiseMax(l);
    }
    CHECK(hi.x() - lo.x() == Approx(0.4).margin(1e-6));
    CHECK(hi.y() - lo.y() == Approx(0.2).margin(1e-6));

    // above the margin: nothing
    sphere.p += 0.01 * n;
    CHECK(heightfield_contacts(hf, sphere, margin, got) == 0);
  }
}

TEST_CASE("Heightfield contacts: a sphere in a valley touches both faces; a box on a stair edge feels it",
          "[collision][heightfield]") {
  // V valley along y: z = |x|
  MatX v(3, 3);
  v << 1, 1, 1, 0, 0, 0, 1, 1, 1;
  const Heightfield valley(v, 1, 1);
  TerrainShape s;
  s.type = ShapeType::Sphere;
  s.r = 0.5;
  s.p = Vec3(0, 0, 0.5 * std::sqrt(2.0) - 0.01);  // touches both 45-degree faces, 0.01 deep vertically
  ManifoldPoint pts[kMaxManifoldPoints];
  const int k = heightfield_contacts(valley, s, 0.005, pts);
  REQUIRE(k == 2);
  CHECK(std::abs(pts[0].normal.x()) == Approx(std::sqrt(0.5)));
  CHECK(pts[0].normal.x() * pts[1].normal.x() < 0);
  for (int i = 0; i < 2; ++i) CHECK(pts[i].depth == Approx(0.01 * std::sqrt(0.5)).margin(1e-9));

  // a box larger than a stepping stone, centred on it: every corner is over a gap, only the
  // stone's vertices inside the box hold it (stone [-0.4, -0.2]^2, top at 0, gaps 0.5 deep)
  const Heightfield stones = Heightfield::stepping_stones(2, 2, 0.01, 0.2, 0.6, 0.5, 0.0, 1);
  Scalar z;
  REQUIRE(stones.height(-0.3, -0.3, z));
  REQUIRE(z == 0);
  REQUIRE(stones.height(-0.45, -0.3, z));
  REQUIRE(z == -0.5);
  const Vec3 h(0.2, 0.2, 0.05), p(-0.3, -0.3, 0.05 - 0.002);
  const int kb = heightfield_contacts(stones, box_shape(Mat3::Identity(), p, h), 0.005, pts);
  REQUIRE(kb == 4);
  Vec3 lo = Vec3::Constant(1e9), hi = Vec3::Constant(-1e9);
  for (int i = 0; i < kb; ++i) {
    CHECK(pts[i].normal.z() == Approx(1).margin(1e-9));
    CHECK(pts[i].depth == Approx(0.002).margin(1e-9));
    lo = lo.cwiseMin(pts[i].position);
    hi = hi.cwiseMax(pts[i].position);
  }
  // the manifold spans the stone's top
  CHECK(lo.x() == Approx(-0.4).margin(1e-9));
  CHECK(hi.x() == Approx(-0.2).margin(1e-9));
  CHECK(lo.y() == Approx(-0.4).margin(1e-9));
  CHECK(hi.y() == Approx(-0.2).margin(1e-9));
}

TEST_CASE("Heightfield contacts: a sphere in a shallow crease gets one contact, in a sharp one two",
          "[collision][heightfield]") {
  // a crease along y: z = |x| tan(a / 2), faces whose normals are a apart; the sphere sits a
  // little off-centre (x = 2 mm) so that one face is deeper, inside a cell (y = 0.3)
  auto contacts = [](Scalar a_deg, ManifoldPoint* pts) {
    const Scalar half = 0.5 * a_deg * M_PI / 180, slope = std::tan(half);
    MatX v(3, 3);
    v << slope, slope, slope, 0, 0, 0, slope, slope, slope;
    const Heightfield crease(v, 1, 1);
    TerrainShape s;
    s.type = ShapeType::Sphere;
    s.r = 0.03;
    s.p = Vec3(0.002, 0.3, s.r / std::cos(half) - 0.001);  // 1 mm into the crease
    return heightfield_contacts(crease, s, 0.005, pts);
  };
  ManifoldPoint pts[kMaxManifoldPoints];
  for (const Scalar a : {4.0, 8.0, 14.0}) {  // within the 15-degree merge angle: the deepest face only
    INFO("crease of " << a << " degrees");
    REQUIRE(contacts(a, pts) == 1);
    CHECK(pts[0].normal.x() < 0);  // the face on the sphere's side (x > 0) is the deeper one
    CHECK(std::abs(pts[0].normal.x()) == Approx(std::sin(0.5 * a * M_PI / 180)));
  }
  for (const Scalar a : {16.0, 30.0, 90.0}) {  // sharper: one contact per face
    INFO("crease of " << a << " degrees");
    REQUIRE(contacts(a, pts) == 2);
    CHECK(pts[0].normal.x() * pts[1].normal.x() < 0);
  }
}

TEST_CASE("Heightfield: a box settles on a flat heightfield where it settles on a plane", "[collision][heightfield]") {
  auto settle = [](bool terrain) {
    World world;
    if (terrain) {
      world.add_heightfield("terrain", std::make_shared<Heightfield>(MatX::Zero(41, 41), 0.05, 0.05));
    } else {
      world.add_ground();
    }
    ArticulatedSystem& box = world.add_box("box", Vec3(0.3, 0.2, 0.1), 2.0);
    VecX q = box.q();
    q[2] = 0.1;
    box.set_q(q);
    for (int k = 0; k < 600; ++k) REQUIRE(world.integrate() != StepStatus::NonFinite);
    return box.q();
  };
  const VecX on_plane = settle(false), on_terrain = settle(true);
  INFO("plane " << on_plane.transpose() << "\nterrain " << on_terrain.transpose());
  CHECK(on_terrain[2] == Approx(on_plane[2]).margin(1e-4));
  CHECK(on_terrain[2] == Approx(0.05).margin(2e-3));
  CHECK(std::abs(on_terrain[0]) < 1e-6);
  CHECK(std::abs(on_terrain[1]) < 1e-6);
}

TEST_CASE("Heightfield: world files build generator terrains and name bad ones", "[collision][heightfield]") {
  const WorldDescription d = parse_world_string(
      "<world><heightfield name=\"steps\" type=\"stairs\" size=\"4 2\" cell=\"0.02\" run=\"0.5\" rise=\"0.1\"/>"
      "<sphere name=\"ball\" radius=\"0.1\" mass=\"1\" pos=\"0.25 0 0.5\"/></world>",
      "w.xml");
  REQUIRE(d.heightfields.size() == 1);
  Scalar z;
  REQUIRE(d.heightfields[0].field->height(0.25, 0, z));
  CHECK(z == Approx(0.1));
  World world;
  build_world(d, world);
  for (int k = 0; k < 1000; ++k) world.integrate();
  // the ball rests on the first step
  CHECK(world.system("ball").q()[2] == Approx(0.2).margin(1e-3));
  CHECK_THROWS_WITH(parse_world_string("<world><heightfield type=\"waves\" size=\"1 1\"/></world>", "w.xml"),
                    Catch::Contains("w.xml:1") && Catch::Contains("'waves' is not a heightfield type"));
  CHECK_THROWS_WITH(parse_world_string("<world><heightfield type=\"random\" size=\"1\"/></world>", "w.xml"),
                    Catch::Contains("size"));
}
