// CollisionWorld: shapes against the ground and each other through the full stage (closed forms
// and FCL), filtering, materials, margin, meshes and bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

#include "impulse/collision/collision_world.hpp"
#include "impulse/core/error.hpp"
#include "impulse/model/model_builder.hpp"

using namespace impulse;

namespace {

constexpr Scalar kCwTol = 1e-9;
const Vec3 kCwUp = Vec3::UnitZ();

CollisionShape shape(ShapeType t, const Vec3& size, const SE3& X_BS = SE3(), const std::string& material = "default") {
  CollisionShape s;
  s.name = shape_type_name(t);
  s.type = t;
  s.size = size;
  s.X_BS = X_BS;
  s.material = material;
  return s;
}

SE3 at(Scalar x, Scalar y, Scalar z, const Mat3& R = Mat3::Identity()) { return SE3(R, Vec3(x, y, z)); }

Inertia unit_inertia() { return Inertia(1.0, Vec3::Zero(), 0.01 * Mat3::Identity()); }

// A floating base with a two-link chain: bodies 0 - 1 - 2, one sphere of radius 0.1 on each, all at
// the body origins; at the identity poses every pair of spheres overlaps.
Model chain_model() {
  ModelBuilder b("chain");
  const Index b0 = b.add_body(-1, "root", JointType::Floating, SE3(), Vec3::Zero(), {}, "base", unit_inertia());
  const Index b1 = b.add_body(b0, "j1", JointType::Revolute, SE3(), Vec3::UnitY(), {}, "link1", unit_inertia());
  const Index b2 = b.add_body(b1, "j2", JointType::Revolute, SE3(), Vec3::UnitY(), {}, "link2", unit_inertia());
  for (Index body : {b0, b1, b2}) {
    CollisionShape s = shape(ShapeType::Sphere, Vec3(0.1, 0, 0));
    s.body = body;
    s.link = b.body_name(body);
    s.name = s.link + "/0";
    b.add_collision(s);
  }
  return b.finalize();
}

std::string cw_temp_path(const std::string& name) { return std::string("/tmp/impulse_col_test_") + name; }

// The 8 corners and 12 triangles of the cube [-0.5, 0.5]^3.
void cube(std::vector<Vec3>& v, std::vector<std::array<int, 3>>& t) {
  v.clear();
  for (int c = 0; c < 8; ++c) v.emplace_back((c & 1) ? 0.5 : -0.5, (c & 2) ? 0.5 : -0.5, (c & 4) ? 0.5 : -0.5);
  t = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
       {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
}

void write_obj(const std::string& path) {
  std::vector<Vec3> v;
  std::vector<std::array<int, 3>> t;
  cube(v, t);
  std::ofstream f(path);
  for (const Vec3& x : v) f << "v " << x.x() << ' ' << x.y() << ' ' << x.z() << '\n';
  for (const auto& tr : t) f << "f " << tr[0] + 1 << "//1 " << tr[1] + 1 << "//1 " << tr[2] + 1 << "//1\n";
}

void write_stl(const std::string& path, bool binary) {
  std::vector<Vec3> v;
  std::vector<std::array<int, 3>> t;
  cube(v, t);
  if (binary) {
    std::ofstream f(path, std::ios::binary);
    char header[80] = {};
    f.write(header, 80);
    const std::uint32_t n = static_cast<std::uint32_t>(t.size());
    f.write(reinterpret_cast<const char*>(&n), 4);
    for (const auto& tr : t) {
      float rec[12] = {};
      for (int k = 0; k < 3; ++k)
        for (int c = 0; c < 3; ++c) rec[3 + 3 * k + c] = static_cast<float>(v[tr[k]][c]);
      f.write(reinterpret_cast<const char*>(rec), 48);
      const std::uint16_t attr = 0;
      f.write(reinterpret_cast<const char*>(&attr), 2);
    }
  } else {
    std::ofstream f(path);
    f << "solid cube\n";
    for (const auto& tr : t) {
      f << " facet normal 0 0 0\n  outer loop\n";
      for (int k = 0; k < 3; ++k) f << "   vertex " << v[tr[k]].x() << ' ' << v[tr[k]].y() << ' ' << v[tr[k]].z() << '\n';
      f << "  endloop\n endfacet\n";
    }
    f << "endsolid cube\n";
  }
}

}  // namespace

TEST_CASE("world: a box resting flat on the ground gives 4 contacts from B (ground) into A", "[collision]") {
  CollisionWorld world;
  const Index ground = world.add_ground();
  const Index box = world.add_free_body("box", {shape(ShapeType::Box, Vec3(1, 1, 1))});
  world.update(box, at(2, 0, 0.499));
  ContactSet contacts(16);
  world.detect(contacts);
  REQUIRE(contacts.size() == 4);
  for (const Contact& c : contacts) {
    CHECK(c.object_a == box);
    CHECK(c.body_a == 0);
    CHECK(c.shape_a == 0);
    CHECK(c.object_b == ground);
    CHECK(c.body_b == -1);
    CHECK((c.normal - kCwUp).norm() < kCwTol);
    CHECK(c.depth == Approx(0.001).margin(kCwTol));
    CHECK(c.position.z() == Approx(-0.0005).margin(kCwTol));
    CHECK(std::abs(std::abs(c.position.x() - 2) - 0.5) < kCwTol);
    CHECK(c.mu == Approx(0.8));
    CHECK(c.restitution == 0);
  }
  // lifted 1 cm: beyond the 5 mm default margin
  world.update(box, at(2, 0, 0.51));
  world.detect(contacts);
  CHECK(contacts.size() == 0);
  // the margin is configurable
  world.set_margin(0.02);
  world.detect(contacts);
  CHECK(contacts.size() == 4);
  CHECK(contacts[0].depth == Approx(-0.01).margin(kCwTol));
}

TEST_CASE("world: sphere, capsule, cylinder on the ground through the stage", "[collision]") {
  CollisionWorld world;
  world.add_ground(0.5);  // the plane z = 0.5
  const Index s = world.add_free_body("sphere", {shape(ShapeType::Sphere, Vec3(0.2, 0, 0))});
  const Index cap = world.add_free_body("capsule", {shape(ShapeType::Capsule, Vec3(0.1, 0.4, 0))});
  const Index cyl = world.add_free_body("cylinder", {shape(ShapeType::Cylinder, Vec3(0.1, 0.4, 0))});
  world.update(s, at(0, 0, 0.69));
  world.update(cap, at(5, 0, 0.59, Eigen::AngleAxisd(M_PI / 2, Vec3::UnitY()).toRotationMatrix()));
  world.update(cyl, at(-5, 0, 0.69));
  ContactSet contacts;
  world.detect(contacts);
  int n_sphere = 0, n_cap = 0, n_cyl = 0;
  for (const Contact& c : contacts) {
    CHECK(c.depth == Approx(0.01).margin(kCwTol));
    CHECK(c.position.z() == Approx(0.495).margin(kCwTol));
    CHECK((c.normal - kCwUp).norm() < kCwTol);
    n_sphere += c.object_a == s;
    n_cap += c.object_a == cap;
    n_cyl += c.object_a == cyl;
  }
  CHECK(n_sphere == 1);
  CHECK(n_cap == 2);
  CHECK(n_cyl == 4);
}

TEST_CASE("world: box on a static box, and shape pairs through FCL", "[collision]") {
  CollisionWorld world;
  const Index table = world.add_static_box("table", at(0, 0, 0.5), Vec3(2, 2, 1));
  const Index box = world.add_free_body("box", {shape(ShapeType::Box, Vec3(1, 1, 1))});
  world.update(box, at(0, 0, 1.49, Eigen::AngleAxisd(0.3, kCwUp).toRotationMatrix()));
  ContactSet contacts;
  world.detect(contacts);
  REQUIRE(contacts.size() == 4);
  for (const Contact& c : contacts) {
    CHECK(c.object_a == box);
    CHECK(c.object_b == table);
    CHECK((c.normal - kCwUp).norm() < kCwTol);
    CHECK(c.depth == Approx(0.01).margin(kCwTol));
  }

  // capsule (A) lying on the table (B): FCL's normal, then the capsule's side line on the face:
  // its two cap points (length 0.4)
  CollisionWorld w2;
  const Index t2 = w2.add_static_box("table", at(0, 0, 0.5), Vec3(2, 2, 1));
  const Index cap = w2.add_free_body("capsule", {shape(ShapeType::Capsule, Vec3(0.1, 0.4, 0))});
  w2.update(cap, at(0, 0, 1.09, Eigen::AngleAxisd(M_PI / 2, Vec3::UnitY()).toRotationMatrix()));
  w2.detect(contacts);
  REQUIRE(contacts.size() == 2);
  for (const Contact& c : contacts) {
    CHECK(c.object_b == t2);
    CHECK((c.normal - kCwUp).norm() < kCwTol);
    CHECK(c.depth == Approx(0.01).margin(1e-9));
    CHECK(std::abs(c.position.x()) == Approx(0.2).margin(1e-9));
  }
  CHECK(contacts[0].position.x() * contacts[1].position.x() < 0);
  // separated by 3 mm: fcl::distance gives the margin contact's normal, the same two points
  w2.update(cap, at(0, 0, 1.103, Eigen::AngleAxisd(M_PI / 2, Vec3::UnitY()).toRotationMatrix()));
  w2.detect(contacts);
  REQUIRE(contacts.size() == 2);
  for (const Contact& c : contacts) {
    CHECK((c.normal - kCwUp).norm() < kCwTol);
    CHECK(c.depth == Approx(-0.003).margin(1e-9));
    CHECK(c.position.z() == Approx(1.0015).margin(1e-9));
  }

  // a can placed exactly on a can (faces touching: MPR reports a contact without a normal): the
  // 4 rim points of the touching discs, at depth 0
  CollisionWorld w4;
  const Index can_a = w4.add_free_body("upper", {shape(ShapeType::Cylinder, Vec3(0.05, 0.1, 0))});
  const Index can_b = w4.add_free_body("lower", {shape(ShapeType::Cylinder, Vec3(0.05, 0.1, 0))});
  for (const Scalar dx : {0.0, 0.01}) {
    INFO("offset " << dx);
    w4.update(can_a, at(dx, 0, 0.15));
    w4.update(can_b, at(0, 0, 0.05));
    w4.detect(contacts);
    REQUIRE(contacts.size() == 4);
    for (const Contact& c : contacts) {
      CHECK(c.object_a == can_a);
      CHECK((c.normal - kCwUp).norm() < kCwTol);
      CHECK(std::abs(c.depth) < 1e-12);
      CHECK(c.position.z() == Approx(0.1).margin(1e-12));
    }
  }

  // two free spheres: A is the one added first; the normal points from B into A
  CollisionWorld w3;
  const Index a = w3.add_free_body("a", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0))});
  const Index b = w3.add_free_body("b", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0))});
  w3.update(a, at(0.95, 0, 0));
  w3.update(b, at(0, 0, 0));
  w3.detect(contacts);
  REQUIRE(contacts.size() == 1);
  CHECK(contacts[0].object_a == a);
  CHECK(contacts[0].object_b == b);
  CHECK((contacts[0].normal - Vec3::UnitX()).norm() < kCwTol);
  CHECK(contacts[0].depth == Approx(0.05).margin(kCwTol));
  CHECK((contacts[0].position - Vec3(0.475, 0, 0)).norm() < kCwTol);
}

TEST_CASE("world: a non-finite entry anywhere in the body poses is an error naming its body", "[collision]") {
  // update() scans the poses as one array of 12 scalars a body (R, then p): every entry of
  // every body must be covered, and the error names the body that holds it
  const Model model = chain_model();
  CollisionWorld world;
  const Index o = world.add_object(model);
  const std::vector<SE3> good = {at(0, 0, 0), at(0, 0, 1), at(0, 0, 2)};
  world.update(o, good);
  for (Index b = 0; b < 3; ++b) {
    for (int e = 0; e < 12; ++e) {
      for (const Scalar bad : {std::numeric_limits<Scalar>::quiet_NaN(), std::numeric_limits<Scalar>::infinity()}) {
        std::vector<SE3> poses = good;
        SE3& X = poses[static_cast<std::size_t>(b)];
        (e < 9 ? X.R.data()[e] : X.p[e - 9]) = bad;
        const std::string body = model.body_names[static_cast<std::size_t>(b)];
        CHECK_THROWS_WITH(world.update(o, poses), Catch::Contains("pose of body '" + body + "'"));
      }
    }
  }
  world.update(o, good);  // (a good update after the rejected ones)
}

TEST_CASE("world: parent-child never collide; self-collision switch; group and mask", "[collision]") {
  const Model model = chain_model();
  ContactSet contacts;
  SECTION("self-collision off (default): no contact inside the object") {
    CollisionWorld world;
    const Index o = world.add_object(model);
    world.update(o, std::vector<SE3>(3, SE3()));
    world.detect(contacts);
    CHECK(contacts.size() == 0);
  }
  SECTION("self-collision on: only the non-adjacent pair (base, link2)") {
    CollisionWorld world;
    CollisionObjectOptions opt;
    opt.self_collision = true;
    const Index o = world.add_object(model, opt);
    world.update(o, {at(0, 0, 0), at(0, 0, 0.05), at(0, 0, 0.15)});
    world.detect(contacts);
    REQUIRE(contacts.size() == 1);
    CHECK(contacts[0].object_a == o);
    CHECK(contacts[0].object_b == o);
    CHECK(contacts[0].body_a == 0);
    CHECK(contacts[0].body_b == 2);
    CHECK((contacts[0].normal + kCwUp).norm() < kCwTol);  // from link2 (above) into the base
    CHECK(contacts[0].depth == Approx(0.05).margin(kCwTol));
    world.set_self_collision(o, false);
    world.detect(contacts);
    CHECK(contacts.size() == 0);
  }
  SECTION("group and mask: only the feet touch the ground") {
    CollisionWorld world;
    CollisionFilter ground_filter;
    ground_filter.group = 2;
    world.add_ground(0, "default", ground_filter);
    const Index o = world.add_object(model);
    world.update(o, {at(0, 0, 0.05), at(1, 0, 0.05), at(2, 0, 0.05)});
    world.detect(contacts);
    CHECK(contacts.size() == 3);
    // bodies 0 and 1 ("torso" and "thigh") do not collide with group 2
    CollisionFilter no_ground;
    no_ground.mask = ~2u;
    world.set_body_filter(o, 0, no_ground);
    world.set_body_filter(o, 1, no_ground);
    world.detect(contacts);
    REQUIRE(contacts.size() == 1);
    CHECK(contacts[0].body_a == 2);
    // the rule is symmetric: a ground whose mask excludes the foot's group also drops it
    CollisionFilter picky = ground_filter;
    picky.mask = ~1u;
    world.set_object_filter(0, picky);
    world.detect(contacts);
    CHECK(contacts.size() == 0);
  }
  SECTION("group and mask between two free bodies") {
    CollisionWorld world;
    const Index a = world.add_free_body("a", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0))});
    const Index b = world.add_free_body("b", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0))});
    world.update(a, at(0.9, 0, 0));
    world.detect(contacts);
    CHECK(contacts.size() == 1);
    CollisionFilter f;
    f.group = 4;
    f.mask = ~1u;  // does not collide with group 1, where b is
    world.set_shape_filter(a, 0, f);
    world.detect(contacts);
    CHECK(contacts.size() == 0);
    // allowed again: the pair comes back (the recorded pairs are dropped with every filter change)
    world.set_shape_filter(a, 0, CollisionFilter());
    world.detect(contacts);
    CHECK(contacts.size() == 1);
    (void)b;
  }
  SECTION("the broadphase pairs recorded while shapes stay in their fat AABBs follow the motion") {
    // Pairs are recorded by a tree traversal and reused until a shape leaves its fat AABB: a step
    // inside the slack must still see contacts appear and disappear, and repeated detections of an
    // unchanged scene give the same contacts.
    CollisionWorld world;
    const Index a = world.add_free_body("a", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0))});
    const Index b = world.add_free_body("b", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0))});
    world.update(b, at(0, 0, 0));
    const Scalar far = 1.0 + world.margin() + 1e-3;  // just out of the margin
    world.update(a, at(far, 0, 0));
    world.detect(contacts);
    CHECK(contacts.size() == 0);
    for (int k = 0; k < 3; ++k) {
      world.update(a, at(0.99, 0, 0));  // 1 cm into b (within the fat AABB's slack of 5 cm)
      world.detect(contacts);
      REQUIRE(contacts.size() == 1);
      CHECK(contacts[0].depth == Approx(0.01).margin(kCwTol));
      world.detect(contacts);  // unchanged scene: the same contact
      REQUIRE(contacts.size() == 1);
      CHECK(contacts[0].depth == Approx(0.01).margin(kCwTol));
      world.update(a, at(far, 0, 0));
      world.detect(contacts);
      CHECK(contacts.size() == 0);
    }
  }
  SECTION("a pair that did not exist when the pairs were recorded is found after a reinsertion") {
    // a starts 5 m from b (no fat overlap: nothing recorded), then jumps into b, out of its fat
    // AABB: it is reinserted and the pairs must be recorded again, or the contact is missed
    CollisionWorld world;
    const Index a = world.add_free_body("a", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0))});
    const Index b = world.add_free_body("b", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0))});
    world.update(b, at(0, 0, 0));
    world.update(a, at(5, 0, 0));
    world.detect(contacts);
    CHECK(contacts.size() == 0);
    world.detect(contacts);
    CHECK(contacts.size() == 0);
    world.update(a, at(0.99, 0, 0));
    world.detect(contacts);
    REQUIRE(contacts.size() == 1);
    CHECK(contacts[0].depth == Approx(0.01).margin(kCwTol));
  }
}

TEST_CASE("world: materials give mu and restitution per pair, with a default pair", "[collision]") {
  CollisionWorld world;
  world.add_ground(0, "ice");
  const Index s = world.add_free_body("ball", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0), SE3(), "rubber")});
  const Index t = world.add_free_body("tile", {shape(ShapeType::Box, Vec3(1, 1, 1))});
  world.materials().set_pair("rubber", "ice", {0.3, 0.5});
  world.materials().set_default({0.6, 0.1});
  world.update(s, at(0, 0, 0.49));
  world.update(t, at(5, 0, 0.49));
  ContactSet contacts;
  world.detect(contacts);
  REQUIRE(contacts.size() == 5);
  for (const Contact& c : contacts) {
    if (c.object_a == s) {
      CHECK(c.mu == Approx(0.3));
      CHECK(c.restitution == Approx(0.5));
    } else {
      CHECK(c.mu == Approx(0.6));  // (default, ice) is not set: default pair
      CHECK(c.restitution == Approx(0.1));
    }
  }
  CHECK(world.materials().pair("ice", "rubber").mu == Approx(0.3));
  CHECK_THROWS_AS(world.materials().set_pair("a", "b", {-1, 0}), InvalidArgument);
  CHECK_THROWS_AS(world.materials().set_pair("a", "b", {0.5, 1.5}), InvalidArgument);
}

TEST_CASE("world: a unit cube mesh (OBJ, ASCII STL, binary STL) rests like the box", "[collision]") {
  const std::string obj = cw_temp_path("cube.obj"), stl = cw_temp_path("cube_ascii.stl"), stlb = cw_temp_path("cube_bin.stl");
  write_obj(obj);
  write_stl(stl, false);
  write_stl(stlb, true);
  for (const std::string& path : {obj, stl, stlb}) {
    INFO(path);
    CollisionWorld world;
    world.add_ground();
    CollisionShape m = shape(ShapeType::Mesh, Vec3::Ones());
    m.mesh_path = path;
    const Index o = world.add_free_body("mesh", {m});
    const Index b = world.add_free_body("box", {shape(ShapeType::Box, Vec3(1, 1, 1))});
    const Mat3 R = Eigen::AngleAxisd(0.4, kCwUp).toRotationMatrix();
    world.update(o, at(0, 0, 0.498, R));
    world.update(b, at(3, 0, 0.498, R));
    ContactSet contacts;
    world.detect(contacts);
    std::vector<Vec3> mesh_pts, box_pts;
    for (const Contact& c : contacts) {
      CHECK(c.depth == Approx(0.002).margin(1e-6));  // STL stores floats
      (c.object_a == o ? mesh_pts : box_pts).push_back(c.position - (c.object_a == o ? Vec3::Zero() : Vec3(3, 0, 0)));
    }
    REQUIRE(mesh_pts.size() == 4);
    REQUIRE(box_pts.size() == 4);
    for (const Vec3& x : box_pts) {
      bool found = false;
      for (const Vec3& y : mesh_pts) found = found || (x - y).norm() < 1e-6;
      CHECK(found);
    }
  }
  // the mesh against a static box goes through FCL's BVH
  CollisionWorld world;
  world.add_static_box("table", at(0, 0, -0.5), Vec3(4, 4, 1));
  CollisionShape m = shape(ShapeType::Mesh, Vec3::Ones());
  m.mesh_path = obj;
  const Index o = world.add_free_body("mesh", {m});
  world.update(o, at(0, 0, 0.49));
  ContactSet contacts;
  world.detect(contacts);
  REQUIRE(contacts.size() >= 1);
  for (const Contact& c : contacts) CHECK(c.normal.dot(kCwUp) > 0.99);
}

TEST_CASE("world: bad input is a clear error and leaves the world unchanged", "[collision]") {
  CollisionWorld world;
  world.add_ground();
  SECTION("missing mesh file names the file and the link") {
    CollisionShape m = shape(ShapeType::Mesh, Vec3::Ones());
    m.mesh_path = "/nonexistent/foot.stl";
    m.link = "LF_FOOT";
    m.body = 0;
    ModelBuilder b("robot");
    b.add_body(-1, "root", JointType::Floating, SE3(), Vec3::Zero(), {}, "base", unit_inertia());
    b.add_collision(m);
    const Model model = b.finalize();
    try {
      world.add_object(model);
      FAIL("no exception");
    } catch (const ModelError& e) {
      const std::string what = e.what();
      CHECK(what.find("/nonexistent/foot.stl") != std::string::npos);
      CHECK(what.find("LF_FOOT") != std::string::npos);
    }
    CHECK(world.num_objects() == 1);
  }
  SECTION("unreadable mesh content") {
    const std::string bad = cw_temp_path("bad.obj");
    std::ofstream(bad) << "v 0 0 0\nf 1 2 3\n";
    CollisionShape m = shape(ShapeType::Mesh, Vec3::Ones());
    m.mesh_path = bad;
    CHECK_THROWS_WITH(world.add_free_body("x", {m}), Catch::Contains(bad));
  }
  SECTION("zero or negative sizes") {
    CHECK_THROWS_AS(world.add_free_body("s", {shape(ShapeType::Sphere, Vec3(0, 0, 0))}), ModelError);
    CHECK_THROWS_AS(world.add_free_body("b", {shape(ShapeType::Box, Vec3(1, -1, 1))}), ModelError);
    CHECK_THROWS_AS(world.add_free_body("c", {shape(ShapeType::Cylinder, Vec3(0.1, 0, 0))}), ModelError);
    CHECK_THROWS_AS(world.add_free_body("p", {shape(ShapeType::Capsule, Vec3(-0.1, 1, 0))}), ModelError);
    CHECK_THROWS_AS(world.add_static_box("t", SE3(), Vec3(0, 1, 1)), ModelError);
    CHECK_THROWS_WITH(world.add_free_body("ball", {shape(ShapeType::Sphere, Vec3(-1, 0, 0))}),
                      Catch::Contains("ball") && Catch::Contains("radius"));
    CHECK(world.num_objects() == 1);
  }
  SECTION("NaN pose names the object and body") {
    const Index s = world.add_free_body("ball", {shape(ShapeType::Sphere, Vec3(0.5, 0, 0))});
    world.update(s, at(0, 0, 0.49));
    SE3 bad = at(0, 0, std::nan(""));
    CHECK_THROWS_WITH(world.update(s, bad), Catch::Contains("ball") && Catch::Contains("not finite"));
    CHECK_THROWS_AS(world.update(s, std::vector<SE3>(2)), InvalidArgument);
    CHECK_THROWS_AS(world.update(0, SE3()), InvalidArgument);  // the ground is static
    ContactSet contacts;
    world.detect(contacts);  // the last good pose is kept
    CHECK(contacts.size() == 1);
  }
  SECTION("capacity overflow sets the flag, keeps the first contacts") {
    const Index b = world.add_free_body("box", {shape(ShapeType::Box, Vec3(1, 1, 1))});
    world.update(b, at(0, 0, 0.49));
    ContactSet small(3);
    world.detect(small);
    CHECK(small.size() == 3);
    CHECK(small.overflow());
  }
}

TEST_CASE("world: a tilted can's rim on a lying can's side pushes along the side's normal", "[collision]") {
  // Can B lies along x; can A, tilted by theta from upright towards the azimuth phi, rests its rim's
  // lowest point on B's top line, overlapping by `overlap`. The contact is a rim point on B's smooth
  // side: its normal is B's (+z) and its point the rim's. A's disc, within 11 degrees of that normal
  // for small tilts, is not the contact's face: its rim crosses B's side line.
  const Scalar r = 0.03, length = 0.08;
  for (const Scalar theta_deg : {10.0, 25.0, 40.0, 55.0}) {
    for (const Scalar phi_deg : {0.0, 30.0, 60.0}) {
      for (const Scalar overlap : {1e-4, 1e-5, 3e-6}) {
        INFO("tilt " << theta_deg << " deg towards " << phi_deg << " deg, overlap " << overlap << " m");
        CollisionWorld w;
        const Index A = w.add_free_body("tilted", {shape(ShapeType::Cylinder, Vec3(r, length, 0))});
        const Index B = w.add_free_body("lying", {shape(ShapeType::Cylinder, Vec3(r, length, 0))});
        w.update(B, at(0, 0, 0, Eigen::AngleAxisd(M_PI / 2, Vec3::UnitY()).toRotationMatrix()));
        const Scalar theta = theta_deg * M_PI / 180, phi = phi_deg * M_PI / 180;
        const Vec3 axis(std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta));
        const Vec3 down = (axis.z() * axis - kCwUp).normalized();  // in the disc's plane, downwards
        const Vec3 rim(0.01, 0, r - overlap);                       // the rim's lowest point
        const Vec3 centre = rim - r * down + 0.5 * length * axis;
        w.update(A, SE3(Eigen::Quaterniond::FromTwoVectors(kCwUp, axis).toRotationMatrix(), centre));
        ContactSet contacts;
        w.detect(contacts);
        REQUIRE(contacts.size() == 1);
        const Contact& c = contacts[0];
        CHECK(c.object_a == A);
        CHECK(c.normal.dot(kCwUp) > std::cos(M_PI / 180));  // within 1 degree
        CHECK((c.position - rim).norm() < 1e-4);
        CHECK(c.depth == Approx(overlap).margin(0.05 * overlap + 1e-6));  // (MPR's tolerance)
      }
    }
  }
}

TEST_CASE("world: a can's side touching another's disc gets that disc's normal, not the far disc's", "[collision]") {
  // Two cans (r 0.03 m, 0.08 m long) from a settling pile (bench scenes' cyl_bin), their axes
  // across each other, A's side on B's end disc to within 1e-11 m. MPR's normal of that zero
  // overlap points along B's axis the wrong way; the face contact along it took B's far disc and
  // A's far side, two points 0.14 m deep. The contact is A's side line on B's near disc: normal
  // along B's axis towards A, depth 0.
  CollisionWorld w;
  const Index a = w.add_free_body("a", {shape(ShapeType::Cylinder, Vec3(0.03, 0.08, 0))});
  const Index b = w.add_free_body("b", {shape(ShapeType::Cylinder, Vec3(0.03, 0.08, 0))});
  const Quat qa(0.41557717297002211, -0.094478111892066327, 0.62400753218148874, 0.65496877746982929);
  const Quat qb(-0.75975677368216021, -0.072431803750131141, -0.57917440068014925, 0.28649658330662059);
  const Vec3 pa(0.024518951460386715, 0.10367469750095573, 0.072569921137260199);
  const Vec3 pb(-0.035615921794485056, 0.12533491858575943, 0.041181230055108459);
  w.update(a, SE3(qa.normalized().toRotationMatrix(), pa));
  w.update(b, SE3(qb.normalized().toRotationMatrix(), pb));
  Vec3 axis_b = qb.normalized().toRotationMatrix().col(2);
  if (axis_b.dot(pa - pb) < 0) axis_b = -axis_b;
  ContactSet contacts;
  w.detect(contacts);
  REQUIRE(contacts.size() >= 1);
  for (const Contact& c : contacts) {
    CHECK(c.normal.dot(axis_b) > 0.999);
    CHECK(std::abs(c.depth) < 1e-6);
  }
}
