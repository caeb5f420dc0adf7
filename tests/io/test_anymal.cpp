// The project's ANYmal (models/anymal/anymal.urdf): layout, names, mass and collision geometry;
// and, where ../shared/models/anymal_c/anymal.urdf exists, agreement with the upstream ANYbotics
// description it was generated from (total mass, joint order, foot positions, M(q)).
#include <fstream>
#include <random>

#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/io/urdf.hpp"
#include "support/matchers.hpp"

using namespace impulse;
using impulse_test::shared_path;
using impulse_test::source_path;

namespace {

const std::vector<std::string> kLegs = {"LF", "RF", "LH", "RH"};

// Total mass of ANYmal C: the sum of the upstream file's 59 <inertial> masses.
constexpr Scalar kAnymalMass = 52.13485;

std::string upstream_path() { return shared_path("models/anymal_c/anymal.urdf"); }
bool have_upstream() { return std::ifstream(upstream_path()).good(); }

// Pose of every body in the world (X_WB), computed here from the Model fields alone.
std::vector<SE3> body_poses(const Model& m, const VecX& q) {
  std::vector<SE3> X_WB(m.nb);
  for (Index i = 0; i < m.nb; ++i) {
    const SE3 X_PB = m.joint_placement[i] * joint_transform(m.joint_type[i], m.joint_axis[i], q.data() + m.idx_q[i]);
    X_WB[i] = m.parent[i] < 0 ? X_PB : X_WB[m.parent[i]] * X_PB;
  }
  return X_WB;
}

Vec3 frame_position(const Model& m, const std::vector<SE3>& X_WB, const std::string& frame) {
  const Frame& f = m.frames[m.frame_id(frame)];
  return X_WB[f.body].act_point(f.X_BF.p);
}

const CollisionShape* foot_sphere(const Model& m, const std::string& foot) {
  for (const CollisionShape& s : m.collision) {
    if (s.link == foot && s.type == ShapeType::Sphere) return &s;
  }
  return nullptr;
}

// A few configurations: neutral, a standing pose, and random ones (base pose and joints).
std::vector<VecX> test_configurations(const Model& m) {
  std::vector<VecX> qs;
  qs.push_back(m.neutral_configuration());
  VecX stand = m.neutral_configuration();
  stand[2] = 0.5;
  for (int leg = 0; leg < 4; ++leg) {
    const Scalar front = leg < 2 ? 1.0 : -1.0;
    stand[7 + 3 * leg + 1] = 0.6 * front;
    stand[7 + 3 * leg + 2] = -0.9 * front;
  }
  qs.push_back(stand);
  std::mt19937 rng(42);
  for (int k = 0; k < 4; ++k) qs.push_back(m.random_configuration(rng));
  return qs;
}

}  // namespace

TEST_CASE("ANYmal: the project's model has ANYmal C's layout, names, mass and collision shapes", "[io][anymal]") {
  const Model m = load_urdf(source_path("models/anymal/anymal.urdf"));
  CHECK(m.name == "anymal");
  CHECK(m.floating_base);
  CHECK(m.nq == 19);
  CHECK(m.nv == 18);
  CHECK(m.nb == 13);
  CHECK(m.total_mass() == Approx(kAnymalMass).epsilon(1e-12));

  std::vector<std::string> joints = {"root"}, bodies = {"base"};
  for (const std::string& leg : kLegs) {
    for (const char* j : {"_HAA", "_HFE", "_KFE"}) joints.push_back(leg + j);
    for (const char* b : {"_HIP", "_THIGH", "_SHANK"}) bodies.push_back(leg + b);
  }
  CHECK(m.joint_names == joints);
  CHECK(m.body_names == bodies);
  for (Index i = 1; i < m.nb; ++i) {
    CHECK(m.joint_type[i] == JointType::Revolute);
    CHECK(m.effort_limit[m.idx_v[i]] == 80);
    CHECK(m.velocity_limit[m.idx_v[i]] == 7.5);
  }
  CHECK(m.lower_position[m.idx_q[m.joint_id("LF_HAA")]] == -0.72);
  CHECK(m.upper_position[m.idx_q[m.joint_id("RF_HAA")]] == 0.72);
  CHECK(m.upper_position[m.idx_q[m.joint_id("LH_KFE")]] == 9.42477796077);

  // collision: the torso box and one sphere per foot, nothing else
  REQUIRE(m.collision.size() == 5);
  CHECK(m.collision[0].type == ShapeType::Box);
  CHECK(m.collision[0].body == 0);
  CHECK(m.collision[0].size.isApprox(Vec3(0.58, 0.14, 0.18)));
  for (const std::string& leg : kLegs) {
    const Index foot = m.frame_id(leg + "_FOOT");
    CHECK(m.frames[foot].type == FrameType::Link);
    CHECK(m.frames[foot].body == m.body_id(leg + "_SHANK"));
    const CollisionShape* s = foot_sphere(m, leg + "_FOOT");
    REQUIRE(s);
    CHECK(s->body == m.body_id(leg + "_SHANK"));
    CHECK(s->size.x() == 0.03);
  }

  // standing at q = 0 the feet are ~0.6 m below the base and the legs are symmetric
  const std::vector<SE3> X = body_poses(m, m.neutral_configuration());
  const Vec3 lf = frame_position(m, X, "LF_FOOT"), rh = frame_position(m, X, "RH_FOOT");
  CHECK(lf.z() == Approx(rh.z()).margin(1e-12));
  CHECK(lf.x() == Approx(-rh.x()).margin(1e-12));
  CHECK(lf.y() == Approx(-rh.y()).margin(1e-12));
  CHECK(lf.z() < -0.5);
}

TEST_CASE("ANYmal: the project's model matches the upstream ANYmal C description", "[io][anymal]") {
  if (!have_upstream()) {
    WARN("skipped: " << upstream_path() << " is absent");
    return;
  }
  const Model ours = load_urdf(source_path("models/anymal/anymal.urdf"));
  const Model upstream = load_urdf(upstream_path());  // 78 links, 65 fixed joints merged here

  CHECK(upstream.nq == ours.nq);
  CHECK(upstream.nv == ours.nv);
  CHECK(upstream.joint_names == ours.joint_names);
  CHECK(upstream.total_mass() == Approx(kAnymalMass).epsilon(1e-12));
  CHECK(ours.total_mass() == Approx(upstream.total_mass()).epsilon(1e-12));
  CHECK(ours.lower_position == upstream.lower_position);
  CHECK(ours.upper_position == upstream.upper_position);
  for (Index i = 0; i < ours.nb; ++i) {
    INFO("body " << ours.body_names[i]);
    CHECK(ours.joint_axis[i] == upstream.joint_axis[i]);
    CHECK(ours.inertia[i].m == Approx(upstream.inertia[i].m).epsilon(1e-14));
  }

  Data data_ours(ours), data_upstream(upstream);
  for (const VecX& q : test_configurations(ours)) {
    INFO("q = " << q.transpose());
    // feet and foot spheres at the same places: placements and axes were composed correctly
    const std::vector<SE3> Xo = body_poses(ours, q), Xu = body_poses(upstream, q);
    for (const std::string& leg : kLegs) {
      CHECK_ALL_CLOSE(frame_position(ours, Xo, leg + "_FOOT"), frame_position(upstream, Xu, leg + "_FOOT"), 1e-12, 0);
      const CollisionShape* so = foot_sphere(ours, leg + "_FOOT");
      const CollisionShape* su = foot_sphere(upstream, leg + "_FOOT");
      REQUIRE(so);
      REQUIRE(su);
      CHECK_ALL_CLOSE(Xo[so->body].act_point(so->X_BS.p), Xu[su->body].act_point(su->X_BS.p), 1e-12, 0);
    }
    // the joint-space inertia: M(q) of the 13-body model equals that of the 78-link original
    const MatX M_ours = crba(ours, data_ours, q);
    const MatX M_upstream = crba(upstream, data_upstream, q);
    CHECK_ALL_CLOSE(M_ours, M_upstream, 1e-12, 1e-9);
  }
}
