// World-frame Jacobians (RBDA sec. 4.1.5) against central finite differences of forward
// kinematics along u, with q advanced by Model::integrate (quaternions by the exponential map).
#include <catch2/catch.hpp>

#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/model/model_builder.hpp"
#include "support/matchers.hpp"
#include "support/random_model.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

TEST_CASE("jacobian: frame and point Jacobians equal finite differences of kinematics", "[dynamics]") {
  const Scalar eps = 1e-5;  // central differences: O(eps^2) = 1e-10 truncation, 1e-11 round-off
  Scalar worst = 0;
  for (const NamedModel& nm : dynamics_test_models()) {
    const Model& model = nm.model;
    Data data(model), data_fd(model);
    std::mt19937 rng(21);
    Mat6X J6(6, model.nv);
    Mat3X J3(3, model.nv);
    for (int trial = 0; trial < 3; ++trial) {
      VecX q, u;
      random_state(model, rng, q, u);
      VecX q_plus(model.nq), q_minus(model.nq);
      model.integrate(q, u, eps, q_plus);
      model.integrate(q, u, -eps, q_minus);
      compute_joint_jacobians(model, data, q);
      for (Index b = 0; b < model.nb; ++b) {
        INFO(nm.name << ", trial " << trial << ", body " << b);
        const Vec3 p_B = random_vector(3, rng, 0.3);
        frame_jacobian(model, data, b, p_B, J6);
        point_jacobian(model, data, b, p_B, J3);
        // finite differences of the point position and of the body orientation
        forward_kinematics(model, data_fd, q_plus);
        const Vec3 p_plus = point_position(data_fd, b, p_B);
        const Mat3 R_plus = data_fd.oMi[b].R;
        forward_kinematics(model, data_fd, q_minus);
        const Vec3 p_minus = point_position(data_fd, b, p_B);
        const Mat3 R_minus = data_fd.oMi[b].R;
        Vec6 V_fd;
        V_fd.head<3>() = (p_plus - p_minus) / (2 * eps);
        V_fd.tail<3>() = quat_log(Quat(R_plus * R_minus.transpose())) / (2 * eps);  // world-frame w
        const Vec6 V = J6 * u;
        const Scalar err = rel_err(V, V_fd);
        worst = std::max(worst, err);
        CHECK(err < 1e-8);
        CHECK(rel_err(Vec3(J3 * u), Vec3(V.head<3>())) < 1e-15);
        // velocity from forward_kinematics(q, u) agrees exactly
        forward_kinematics(model, data_fd, q, u);
        CHECK(rel_err(point_velocity(data_fd, b, p_B), Vec3(V.head<3>())) < 1e-12);
        CHECK(rel_err(body_angular_velocity(data_fd, b), Vec3(V.tail<3>())) < 1e-12);
        // the stand-alone variants agree with the joint-Jacobian path
        Data data_one(model);
        CHECK(rel_err(frame_jacobian(model, data_one, q, b, p_B), J6) < 1e-15);
        CHECK(rel_err(point_jacobian(model, data_one, q, b, p_B), J3) < 1e-15);
      }
    }
  }
  WARN("jacobian vs finite differences: worst relative error " << worst);
}

TEST_CASE("jacobian: model frames (ANYmal feet) through frame ids", "[dynamics]") {
  Model model;
  if (!load_anymal(model)) model = quadruped();
  Data data(model);
  std::mt19937 rng(4);
  VecX q, u;
  random_state(model, rng, q, u);
  compute_joint_jacobians(model, data, q);
  Mat6X J6(6, model.nv), J6_ref(6, model.nv);
  for (const char* foot : {"LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"}) {
    INFO(foot);
    const Index f = model.frame_id(foot);
    frame_jacobian(model, data, f, J6);
    const Frame& fr = model.frames[f];
    frame_jacobian(model, data, fr.body, fr.X_BF.p, J6_ref);
    CHECK(rel_err(J6, J6_ref) == 0.0);
    // a foot depends on the 6 base dofs and its own 3 leg dofs only
    Index nonzero_cols = 0;
    for (Index k = 0; k < model.nv; ++k) nonzero_cols += J6.col(k).squaredNorm() > 0;
    CHECK(nonzero_cols == 9);
    // frame_placement agrees with the point position
    forward_kinematics(model, data, q);
    CHECK(rel_err(frame_placement(model, data, f).p, point_position(data, fr.body, fr.X_BF.p)) < 1e-15);
  }
}

TEST_CASE("jacobian: the branch-compact point Jacobian equals R times the point Jacobian's columns",
          "[dynamics]") {
  // point_jacobian_branch (the Delassus assembler's input) against point_jacobian, on the test
  // trees and on free bodies, whose columns it writes out in closed form
  std::vector<NamedModel> models = dynamics_test_models();
  std::mt19937 rng(31);
  for (int k = 0; k < 4; ++k) {
    ModelBuilder mb("free body " + std::to_string(k));
    mb.add_body(-1, "root", JointType::Floating, SE3(), Vec3::UnitZ(), JointLimits(), "body", random_inertia(rng));
    models.push_back({"free body " + std::to_string(k), mb.finalize()});
  }
  for (const NamedModel& nm : models) {
    const Model& model = nm.model;
    Data data(model);
    VecX q, u;
    random_state(model, rng, q, u);
    q.head<3>() += random_vector(3, rng) * 5;  // (a floating root away from the origin)
    compute_joint_jacobians(model, data, q);
    std::vector<Index> dofs(static_cast<std::size_t>(model.nv));
    std::vector<Scalar> out(static_cast<std::size_t>(3 * model.nv));
    for (Index body = 0; body < model.nb; ++body) {
      INFO(nm.name << ", body " << body);
      const Vec3 p_B = random_vector(3, rng);
      const Vec3 p = data.oMi[body].act_point(p_B);
      std::normal_distribution<Scalar> n01(0, 1);
      const Mat3 R = draw_quat(n01, rng).normalized().toRotationMatrix();
      const Index n = point_jacobian_branch(model, data, body, p, R, dofs.data(), out.data());
      Mat3X J3 = Mat3X::Zero(3, model.nv);
      point_jacobian(model, data, body, p_B, J3);
      const Mat3X RJ = R * J3;
      Mat3X compact = Mat3X::Zero(3, model.nv);
      for (Index t = 0; t < n; ++t) compact.col(dofs[t]) = Eigen::Map<const Vec3>(out.data() + 3 * t);
      CHECK_ALL_CLOSE(compact, RJ, 1e-12, 1e-12);
      for (Index t = 1; t < n; ++t) CHECK(dofs[t] > dofs[t - 1]);  // root first
    }
  }
}
