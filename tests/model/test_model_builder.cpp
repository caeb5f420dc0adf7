#include <functional>
#include <limits>
#include <random>

#include "impulse/core/error.hpp"
#include "impulse/model/model_builder.hpp"
#include "support/matchers.hpp"
#include "support/test_models.hpp"

using namespace impulse;

namespace {
const Inertia kBox(1.0, Vec3(0, 0, -0.5), Vec3(0.1, 0.1, 0.02).asDiagonal());
}

TEST_CASE("ModelBuilder: layout of q and u, dof parents and subtrees", "[model]") {
  ModelBuilder b("quad");
  const Index base = b.add_body(-1, "root", JointType::Floating, SE3(), Vec3::Zero(), {}, "base", kBox);
  const Index l1 = b.add_body(base, "hip1", JointType::Revolute, SE3(), Vec3::UnitX(), {}, "leg1", kBox);
  const Index l1b = b.add_body(l1, "knee1", JointType::Prismatic, SE3(), Vec3::UnitZ(), {}, "shin1", kBox);
  const Index l2 = b.add_body(base, "ball2", JointType::Spherical, SE3(), Vec3::Zero(), {}, "leg2", kBox);
  const Model m = b.finalize();
  CHECK(m.nb == 4);
  CHECK(m.nq == 7 + 1 + 1 + 4);
  CHECK(m.nv == 6 + 1 + 1 + 3);
  CHECK(m.floating_base);
  CHECK(m.idx_q[l2] == 9);
  CHECK(m.idx_v[l2] == 8);
  // lambda(k): the first dof of a joint points to the last dof of its nearest moving ancestor.
  CHECK(m.dof_parent[0] == -1);
  CHECK(m.dof_parent[5] == 4);
  CHECK(m.dof_parent[m.idx_v[l1]] == 5);
  CHECK(m.dof_parent[m.idx_v[l1b]] == m.idx_v[l1]);
  CHECK(m.dof_parent[m.idx_v[l2]] == 5);
  CHECK(m.dof_parent[m.idx_v[l2] + 2] == m.idx_v[l2] + 1);
  CHECK(m.subtree_end[base] == 4);
  CHECK(m.subtree_end[l1] == 3);
  CHECK(m.body_id("shin1") == l1b);
  CHECK(m.joint_id("ball2") == l2);
  CHECK(m.find_frame("knee1") >= 0);
  CHECK(m.find_body("nope") == -1);
  CHECK_THROWS_WITH(m.body_id("nope"), Catch::Contains("no body named 'nope'"));
  CHECK(m.total_mass() == Approx(4.0));
  const VecX q0 = m.neutral_configuration();
  CHECK(q0[3] == 1.0);
  CHECK(q0[9] == 1.0);
}

TEST_CASE("Model::integrate: floating base uses world-frame velocities", "[model]") {
  ModelBuilder b;
  b.add_body(-1, "root", JointType::Floating, SE3(), Vec3::Zero(), {}, "base", kBox);
  const Model m = b.finalize();
  VecX q = m.neutral_configuration();
  // Base yawed by 90 degrees; a world-frame x velocity must move it along world x.
  const Quat r(Eigen::AngleAxis<double>(M_PI / 2, Vec3::UnitZ()));
  q.segment<4>(3) << r.w(), r.x(), r.y(), r.z();
  VecX u = VecX::Zero(6);
  u << 1, 0, 0, 0, 0, 2;
  VecX q1(m.nq);
  m.integrate(q, u, 0.5, q1);
  CHECK_ALL_CLOSE(q1.head<3>(), Vec3(0.5, 0, 0), 1e-15, 0);
  const Quat r1(q1[3], q1[4], q1[5], q1[6]);
  CHECK(r1.angularDistance(Quat(Eigen::AngleAxis<double>(M_PI / 2 + 1.0, Vec3::UnitZ()))) < 1e-12);
}

TEST_CASE("ModelBuilder rejects unphysical descriptions with named errors", "[model]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SECTION("negative mass") {
    ModelBuilder b;
    CHECK_THROWS_AS(b.add_body(-1, "j", JointType::Floating, SE3(), Vec3::Zero(), {}, "heavy",
                               Inertia(-1, Vec3::Zero(), Mat3::Identity())),
                    ModelError);
  }
  SECTION("triangle inequality") {
    ModelBuilder b;
    CHECK_THROWS_WITH(b.add_body(-1, "j", JointType::Floating, SE3(), Vec3::Zero(), {}, "rod",
                                 Inertia(1, Vec3::Zero(), Vec3(0.1, 0.1, 1.0).asDiagonal())),
                      Catch::Contains("body 'rod'") && Catch::Contains("triangle inequality"));
  }
  SECTION("NaN axis") {
    ModelBuilder b;
    const Index r = b.add_body(-1, "j", JointType::Floating, SE3(), Vec3::Zero(), {}, "base", kBox);
    CHECK_THROWS_WITH(b.add_body(r, "hinge", JointType::Revolute, SE3(), Vec3(nan, 0, 0), {}, "l", kBox),
                      Catch::Contains("joint 'hinge'"));
  }
  SECTION("massless body on a moving joint") {
    ModelBuilder b;
    const Index r = b.add_body(-1, "j", JointType::Floating, SE3(), Vec3::Zero(), {}, "base", kBox);
    b.add_body(r, "spin", JointType::Revolute, SE3(), Vec3::UnitZ(), {}, "ghost", Inertia::Zero());
    CHECK_THROWS_WITH(b.finalize(), Catch::Contains("joint 'spin'") && Catch::Contains("undetermined"));
  }
  SECTION("point mass on its own rotation axis") {
    ModelBuilder b;
    const Index r = b.add_body(-1, "j", JointType::Floating, SE3(), Vec3::Zero(), {}, "base", kBox);
    b.add_body(r, "spin", JointType::Revolute, SE3(), Vec3::UnitZ(), {}, "bead",
               Inertia(1.0, Vec3(0, 0, 0.3), Mat3::Zero()));
    CHECK_THROWS_AS(b.finalize(), ModelError);
  }
  SECTION("lower limit above upper") {
    ModelBuilder b;
    JointLimits lim;
    lim.lower = 1;
    lim.upper = -1;
    CHECK_THROWS_WITH(b.add_body(-1, "bad", JointType::Revolute, SE3(), Vec3::UnitZ(), lim, "l", kBox),
                      Catch::Contains("joint 'bad'") && Catch::Contains("lower limit"));
  }
  SECTION("duplicate names and the builder stays usable") {
    ModelBuilder b;
    b.add_body(-1, "j", JointType::Floating, SE3(), Vec3::Zero(), {}, "base", kBox);
    CHECK_THROWS_WITH(b.add_body(0, "k", JointType::Revolute, SE3(), Vec3::UnitZ(), {}, "base", kBox),
                      Catch::Contains("duplicate body name 'base'"));
    CHECK(b.num_bodies() == 1);
    CHECK_NOTHROW(b.finalize());
  }
}

TEST_CASE("Model equality: equal builds are equal, and every kind of member tells them apart", "[model]") {
  // a small robot with something in every member: limits, dynamics, frames, shapes, visuals, mimic
  auto build = [](const std::function<void(ModelBuilder&, JointLimits&, CollisionShape&, VisualShape&)>& edit) {
    ModelBuilder b("arm");
    JointLimits lim;
    lim.lower = -1.0;
    lim.upper = 1.0;
    lim.effort = 10.0;
    lim.velocity = 3.0;
    lim.damping = 0.1;
    lim.friction = 0.2;
    lim.armature = 0.01;
    CollisionShape c;
    c.type = ShapeType::Box;
    c.size = Vec3(0.1, 0.2, 0.3);
    c.body = 1;
    c.name = "link1/0";
    c.link = "link1";
    VisualShape v;
    v.type = ShapeType::Sphere;
    v.size = Vec3(0.05, 0, 0);
    v.body = 2;
    v.name = "link2/visual/0";
    v.link = "link2";
    edit(b, lim, c, v);
    const Index base = b.add_body(-1, "root", JointType::Fixed, SE3(), Vec3::Zero(), {}, "base", kBox);
    const Index l1 = b.add_body(base, "j1", JointType::Revolute, SE3(Mat3::Identity(), Vec3(0, 0, 0.1)),
                                Vec3::UnitZ(), lim, "link1", kBox);
    const Index l2 = b.add_body(l1, "j2", JointType::Revolute, SE3(), Vec3::UnitY(), lim, "link2", kBox);
    b.add_frame("tool", FrameType::User, l2, SE3(Mat3::Identity(), Vec3(0, 0, 0.2)));
    b.add_collision(c);
    b.add_visual(v);
    MimicJoint m;
    m.joint = l2;
    m.master = l1;
    m.multiplier = 0.5;
    b.add_mimic(m);
    return b.finalize();
  };
  const auto same = [](ModelBuilder&, JointLimits&, CollisionShape&, VisualShape&) {};
  const Model a = build(same);
  CHECK(a == build(same));
  CHECK(a == Model(a));
  CHECK_FALSE(a != build(same));
  const std::vector<std::function<void(ModelBuilder&, JointLimits&, CollisionShape&, VisualShape&)>> edits = {
      [](ModelBuilder& b, JointLimits&, CollisionShape&, VisualShape&) { b.set_gravity(Vec3(0, 0, -9.8)); },
      [](ModelBuilder&, JointLimits& l, CollisionShape&, VisualShape&) { l.upper = 1.0 + 1e-15; },
      [](ModelBuilder&, JointLimits& l, CollisionShape&, VisualShape&) { l.effort = 11.0; },
      [](ModelBuilder&, JointLimits& l, CollisionShape&, VisualShape&) { l.velocity = 4.0; },
      [](ModelBuilder&, JointLimits& l, CollisionShape&, VisualShape&) { l.damping = 0.0; },
      [](ModelBuilder&, JointLimits& l, CollisionShape&, VisualShape&) { l.friction = 0.0; },
      [](ModelBuilder&, JointLimits& l, CollisionShape&, VisualShape&) { l.armature = 0.0; },
      [](ModelBuilder&, JointLimits&, CollisionShape& c, VisualShape&) { c.material = "rubber"; },
      [](ModelBuilder&, JointLimits&, CollisionShape& c, VisualShape&) { c.size.z() = 0.31; },
      [](ModelBuilder&, JointLimits&, CollisionShape& c, VisualShape&) { c.X_BS.p.x() = 1e-9; },
      [](ModelBuilder&, JointLimits&, CollisionShape& c, VisualShape&) { c.name = "other"; },
      [](ModelBuilder&, JointLimits&, CollisionShape&, VisualShape& v) { v.rgba.w() = 0.5; },
      [](ModelBuilder&, JointLimits&, CollisionShape&, VisualShape& v) { v.material = "red"; },
      [](ModelBuilder&, JointLimits&, CollisionShape&, VisualShape& v) { v.mesh_uri = "package://x/y.stl"; },
  };
  for (std::size_t k = 0; k < edits.size(); ++k) {
    INFO("edit " << k);
    CHECK(a != build(edits[k]));
  }
  // members set after the build: name, inertia, placement, frames, mimic
  Model b = a;
  b.name = "arm2";
  CHECK(a != b);
  b = a;
  b.inertia[1].Ic(0, 1) = 1e-12;
  CHECK(a != b);
  b = a;
  b.joint_placement[2].R = Eigen::AngleAxisd(1e-9, Vec3::UnitX()).toRotationMatrix();
  CHECK(a != b);
  b = a;
  b.frames.back().X_BF.p.y() = 0.1;
  CHECK(a != b);
  b = a;
  b.mimic[0].offset = 0.1;
  CHECK(a != b);
  b = a;
  b.joint_axis[1] = -b.joint_axis[1];
  CHECK(a != b);
  b = a;
  b.visuals.clear();
  CHECK(a != b);
}

TEST_CASE("Model::difference inverts Model::integrate", "[model]") {
  for (const test::NamedModel& nm : test::dynamics_test_models()) {
    INFO(nm.name);
    const Model& model = nm.model;
    std::mt19937 rng(31);
    const VecX q0 = model.random_configuration(rng);
    const VecX u = test::random_vector(model.nv, rng, 1.0);  // rotations below pi
    VecX q1(model.nq), d(model.nv);
    model.integrate(q0, u, 1.0, q1);
    model.difference(q0, q1, d);
    CHECK(test::rel_err(d, u) < 1e-12);
    model.difference(q1, q1, d);
    CHECK(d.cwiseAbs().maxCoeff() < 1e-15);
  }
  const Model model = test::quadruped();
  VecX d(model.nv);
  CHECK_THROWS_WITH(model.difference(VecX::Zero(3), model.neutral_configuration(), d),
                    "q0 has size 3, the model needs nq = 19");
}
