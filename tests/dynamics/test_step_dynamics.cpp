// compute_step_dynamics (fused RNEA in world coordinates + CRBA + joint Jacobians from one
// kinematics pass) against the separate calls rnea / nonlinear_effects (the body-frame recursion:
// an independent computation of h), crba and compute_joint_jacobians.
#include <catch2/catch.hpp>

#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

TEST_CASE("step_dynamics: fused h, M, J equal the separate calls", "[dynamics]") {
  for (const NamedModel& nm : dynamics_test_models()) {
    const Model& model = nm.model;
    Data fused(model), sep(model);
    std::mt19937 rng(11);
    for (int trial = 0; trial < 4; ++trial) {
      INFO(nm.name << ", trial " << trial);
      VecX q, u;
      random_state(model, rng, q, u);
      // without external forces: M, J and the poses from the same code as the separate calls,
      // bit for bit; h from the world-frame recursion, equal to round-off
      compute_step_dynamics(model, fused, q, u);
      const VecX h = nonlinear_effects(model, sep, q, u);
      const MatX M = crba(model, sep, q);
      const Mat6X J = compute_joint_jacobians(model, sep, q);
      CHECK(rel_err(fused.h, h) <= 1e-13);
      CHECK((fused.M - M).cwiseAbs().maxCoeff() == 0.0);
      CHECK((fused.J - J).cwiseAbs().maxCoeff() == 0.0);
      for (Index i = 0; i < model.nb; ++i) {
        CHECK((fused.oMi[i].R - sep.oMi[i].R).cwiseAbs().maxCoeff() == 0.0);
        CHECK((fused.oMi[i].p - sep.oMi[i].p).cwiseAbs().maxCoeff() == 0.0);
      }
      // with external forces: h - sum J^T f_ext = rnea(q, u, 0, f_ext)
      Vec6Vector f_ext(model.nb);
      for (Vec6& f : f_ext) f = random_vector(6, rng);
      compute_step_dynamics(model, fused, q, u, &f_ext);
      const VecX tau = rnea(model, sep, q, u, VecX::Zero(model.nv), &f_ext);
      CHECK(rel_err(fused.h, tau) <= 1e-13);
      CHECK((fused.M - M).cwiseAbs().maxCoeff() == 0.0);
      CHECK((fused.J - J).cwiseAbs().maxCoeff() == 0.0);
    }
  }
}

TEST_CASE("step_dynamics: the external wrenches' generalized force alone, J^T f_ext", "[dynamics]") {
  // add_external_generalized_force from the poses and Jacobians of the last step-dynamics call
  // equals the difference of RNEA without and with the wrenches (h - (h - J^T f_ext)); a body
  // without a wrench adds nothing, and the free body's closed form leaves what it needs too
  for (const NamedModel& nm : dynamics_test_models()) {
    const Model& model = nm.model;
    Data d(model), sep(model);
    std::mt19937 rng(5);
    for (int trial = 0; trial < 3; ++trial) {
      INFO(nm.name << ", trial " << trial);
      VecX q, u;
      random_state(model, rng, q, u);
      Vec6Vector f_ext(model.nb, Vec6::Zero());
      for (Index b = trial; b < model.nb; b += 2) f_ext[b] = random_vector(6, rng);
      compute_step_dynamics(model, d, q, u);
      VecX g = VecX::Constant(model.nv, 0.5);
      add_external_generalized_force(model, d, f_ext, g);
      const VecX h0 = rnea(model, sep, q, u, VecX::Zero(model.nv));
      const VecX hf = rnea(model, sep, q, u, VecX::Zero(model.nv), &f_ext);
      const VecX want = VecX::Constant(model.nv, 0.5) + (h0 - hf);
      CHECK((g - want).cwiseAbs().maxCoeff() <= 1e-12 * (1 + want.cwiseAbs().maxCoeff()));
    }
  }
}
