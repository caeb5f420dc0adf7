// compute_free_body_dynamics (closed form for one body on a floating joint) against the general
// recursions (compute_step_dynamics: RNEA + CRBA) and against the body's energy.
#include <catch2/catch.hpp>

#include "impulse/dynamics/free_body.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "impulse/model/model_builder.hpp"
#include "support/matchers.hpp"
#include "support/random_model.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

namespace {

// One random body (centre of mass off its origin, random principal axes) on a floating joint
// placed at `X_root`, with armature on its six dofs when asked.
Model random_free_body(std::mt19937& rng, const SE3& X_root, bool armature) {
  ModelBuilder mb("free body");
  mb.add_body(-1, "root", JointType::Floating, X_root, Vec3::UnitZ(), JointLimits(), "body", random_inertia(rng));
  Model m = mb.finalize();
  if (armature) m.armature = random_vector(6, rng).cwiseAbs() * 0.1;
  return m;
}

}  // namespace

TEST_CASE("free body: the closed form equals RNEA and CRBA to round-off", "[dynamics][free_body]") {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 24; ++trial) {
    const SE3 X_root = trial % 3 == 0 ? SE3() : random_placement(rng, 2.0);
    const Model model = random_free_body(rng, X_root, trial % 2 == 1);
    REQUIRE(model.is_free_body());
    Data closed(model), general(model);
    if (trial % 4 == 3) closed.gravity = general.gravity = random_vector(3, rng) * 5;
    VecX q, u;
    random_state(model, rng, q, u, 3.0);
    q.head<3>() = random_vector(3, rng) * 10;  // far from the world origin, where CRBA's moments are large
    INFO("trial " << trial);
    for (int with_f = 0; with_f < 2; ++with_f) {
      Vec6Vector f_ext(1, random_vector(6, rng) * 20);
      const Vec6Vector* f = with_f ? &f_ext : nullptr;
      compute_free_body_dynamics(model, closed, q, u, f);
      compute_step_dynamics(model, general, q, u, f);
      // the pose and J come from the same code; M and h from different arithmetic
      CHECK((closed.oMi[0].R - general.oMi[0].R).cwiseAbs().maxCoeff() == 0.0);
      CHECK((closed.oMi[0].p - general.oMi[0].p).cwiseAbs().maxCoeff() == 0.0);
      CHECK((closed.J - general.J).cwiseAbs().maxCoeff() == 0.0);
      CHECK_ALL_CLOSE(closed.M, general.M, 1e-12, 1e-12);
      CHECK_ALL_CLOSE(closed.h, general.h, 1e-11, 1e-12);
      CHECK((closed.M - closed.M.transpose()).cwiseAbs().maxCoeff() == 0.0);
    }
  }
}

TEST_CASE("free body: M gives the kinetic energy and h the gravity wrench of the body", "[dynamics][free_body]") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 8; ++trial) {
    const Model model = random_free_body(rng, SE3(), false);
    Data d(model);
    VecX q, u;
    random_state(model, rng, q, u, 2.0);
    compute_free_body_dynamics(model, d, q, u);
    // T = m |v_c|^2 / 2 + w^T I_c w / 2 with v_c = v_O + w x c, from the body's own inertia
    const Mat3& R = d.oMi[0].R;
    const Inertia& I = model.inertia[0];
    const Vec3 v(u[0], u[1], u[2]), w(u[3], u[4], u[5]);
    const Vec3 c = R * I.c;
    const Vec3 vc = v + w.cross(c);
    const Scalar T = 0.5 * I.m * vc.squaredNorm() + 0.5 * w.dot(R * I.Ic * R.transpose() * w);
    CHECK(std::abs(0.5 * u.dot(d.M * u) - T) <= 1e-12 * (1 + T));
    // at rest h is the weight: force -m g at the centre of mass, moment c x (-m g) about O
    compute_free_body_dynamics(model, d, q, VecX::Zero(6));
    const Vec3 weight = -I.m * d.gravity;
    CHECK_ALL_CLOSE(Vec3(d.h.head<3>()), weight, 1e-13, 1e-13);
    CHECK_ALL_CLOSE(Vec3(d.h.tail<3>()), Vec3(c.cross(weight)), 1e-13, 1e-13);
  }
}

TEST_CASE("free body: the closed form leaves what add_external_generalized_force reads", "[dynamics][free_body]") {
  // J^T f_ext from the closed form's poses and subspace equals its own h without and with f_ext
  std::mt19937 rng(29);
  for (int trial = 0; trial < 6; ++trial) {
    const Model model = random_free_body(rng, trial % 2 ? random_placement(rng, 2.0) : SE3(), false);
    Data d(model);
    VecX q, u;
    random_state(model, rng, q, u, 3.0);
    q.head<3>() = random_vector(3, rng) * 10;
    const Vec6Vector f_ext(1, random_vector(6, rng));
    const VecX hf = compute_free_body_dynamics(model, d, q, u, &f_ext);
    const VecX h0 = compute_free_body_dynamics(model, d, q, u);
    VecX g = VecX::Zero(6);
    add_external_generalized_force(model, d, f_ext, g);
    INFO("trial " << trial);
    CHECK((g - (h0 - hf)).cwiseAbs().maxCoeff() <= 1e-12 * (1 + (h0 - hf).cwiseAbs().maxCoeff()));
  }
}
